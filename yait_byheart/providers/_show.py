"""Plain-text renderings of compose results and stored turns, for the command line and MCP.

>>> msgs = [{"role": "user", "parts": [{"type": "text", "text": "[8 May 2023]\\nhello"}]}]
>>> print(messages_text(msgs, stable_upto=0))
--- message 0, user ---
[8 May 2023]
hello
=== cache breakpoint (stable_upto=0): everything above repeats on the next call ===
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any


def shown_id(name: str) -> str:
    """An id as plain output prints it, one per line: as is when printable, else quoted and
    escaped as a Python string (a line break would print one id as two; JSON is exact)."""
    return name if name.isprintable() else repr(name)


def wrap(text: str, width: int) -> str:
    """`text` with each line wrapped at `width` characters (continuations indented); 0: as is."""
    if width <= 0:
        return text
    return "\n".join(
        textwrap.fill(line, width, subsequent_indent="    ") or line for line in text.splitlines()
    )


def summary_line(result: Mapping[str, Any]) -> str:
    """One line saying what a `Memory.compose` result sends."""
    return (
        f"mode={result['mode']}  sent {result['chars']:,} chars  "
        f"stretches {result['selected']} of {result['of_units']}  "
        f"reselected={result['reselected']}  turns included {result['included']}"
    )


def messages_text(
    messages: Sequence[Mapping[str, Any]], *, width: int = 0, stable_upto: int | None = None
) -> str:
    """The messages one after another under a header each; the cache breakpoint marked."""
    out = []
    for i, m in enumerate(messages):
        out.append(f"--- message {i}, {m['role']} ---\n{wrap(m['parts'][0]['text'], width)}")
        if i == stable_upto:
            out.append(
                f"=== cache breakpoint (stable_upto={i}): everything above repeats on the "
                "next call ==="
            )
    return "\n".join(out)


def turns_text(turns: Sequence[Mapping[str, Any]], *, width: int = 0) -> str:
    """Stored turn records (``Memory.to_dict()["turns"]``), numbered, with date and kind.

    >>> print(turns_text([{"role": "user", "text": "hi", "when": "8 May 2023"},
    ...                   {"role": "assistant", "text": "", "redacted": True}]))
    #0 user [8 May 2023]
    hi
    #1 assistant
    (redacted)
    """
    out = []
    for i, turn in enumerate(turns):
        head = f"#{i} {turn.get('role', '?')}"
        if turn.get("when"):
            head += f" [{turn['when']}]"
        if turn.get("kind", "said") != "said":
            head += f" ({turn['kind']}{', ' + turn['source'] if turn.get('source') else ''})"
        body = "(redacted)" if turn.get("redacted") else wrap(str(turn.get("text", "")), width)
        out.append(f"{head}\n{body}")
    return "\n".join(out)
