"""Regular expressions used outside date repair (which keeps its own in `_time_re`)."""

from __future__ import annotations

import re

# Where a long turn may be cut, coarsest first: after a blank line, after a line break, after
# a sentence's end, after a space. Each cut falls after the separator, so pieces join back
# to the text exactly.
PIECE_BOUNDARIES = (
    re.compile(r"\n[ \t]*\n\s*"),
    re.compile(r"\n"),
    # Ideographic full stop, ! and ? end a sentence with or without a space (CJK uses none).
    re.compile(r"(?<=[.!?])\s+|(?<=[\u3002\uff01\uff1f])\s*"),
    re.compile(r"\s+"),
)

# A "when" question starts with "when".
WHEN_QUESTION = re.compile(r"\s*when\b", re.IGNORECASE)
