"""Regular expressions used outside date repair (which keeps its own in `_dates/patterns.py`)."""

from __future__ import annotations

import re

from .._text.lazy_re import lazy

# Where a long turn may be cut, coarsest first: after a blank line, after a line break, after
# a sentence's end, after a space. Each cut falls after the separator, so pieces join back
# to the text exactly.
PIECE_BOUNDARIES = (
    lazy(r"\n[ \t]*\n\s*"),
    lazy(r"\n"),
    # Ideographic full stop, ! and ? end a sentence with or without a space (CJK uses none);
    # a Latin one only before a space (`LATIN_STOPS`: "3.5" is no end). The pattern starts at
    # the stop, not after it: a look-behind would be tried at every character, 6x slower.
    lazy(r"[.!?\u3002\uff01\uff1f]\s*"),
    lazy(r"\s+"),
)
# A match of the sentence boundary that is only one of these did not end a sentence.
LATIN_STOPS = frozenset(".!?")

# A question: a question mark in any script (Latin, full-width, Arabic, Greek question mark).
ASKS = lazy("[?\uff1f\u061f\u037e]")

# A "when" question starts with "when".
WHEN_QUESTION = lazy(r"\s*when\b", re.IGNORECASE)

#: A question that speaks of the asker: the user's own words are its evidence.
# "I" only as a capital (Italian "i" is an article); the rest in any case. This pattern and
# the next first look ahead for a letter a match can start with, under the same case rule:
# most positions fail there, before word boundaries and look-behinds are tried (docs/
# benchmarks.md, "Speed"; a test compares them with the patterns without the look-aheads).
ASKS_OWN_WORDS = lazy(r"(?=I)\bI\b|(?i:(?=[im])\b(?:i'm|i've|i'd|i'll|me|my|mine|myself)\b)")
#: ... unless it asks what the assistant said, or to recall the talk itself, where either
#: speaker's words may hold it ("you told me", "did you suggest", "your advice", "remind me",
#: "our previous chat", "we discussed"). A request for new help ("can you recommend a show
#: for me?") asks nothing of the past: what the user said of their tastes is its evidence.
ASKS_REPLIES = lazy(
    r"(?=[yrwo])(?:"
    r"(?<!\bcan[ ])(?<!\bcould[ ])(?<!\bwould[ ])(?<!\bwill[ ])(?<!\bwon't[ ])"
    r"\byou(?:'d|'ve)?[ ]+(?:\w+[ ]+)?(?:tell|told|say|said|mention(?:ed)?|suggest(?:ed)?|"
    r"recommend(?:ed)?|give|gave|provided?|list(?:ed)?|shared?|explain(?:ed)?|write|wrote|"
    r"described?|named?|show(?:ed)?|offer(?:ed)?|proposed?|advised?|came[ ]up[ ]with)\b"
    r"|\byour[ ]+(?:suggestion|recommendation|advice|answer|reply|list|response|explanation)s?\b"
    r"|\bremind[ ]+me\b|\bwe[ ]+(?:talked|discussed|chatted|spoke)\b"
    r"|\bour[ ]+(?:\w+[ ]+)?(?:conversation|chat|discussion|talk)s?\b)",
    re.IGNORECASE,
)
