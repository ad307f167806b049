"""From what `append` was given to a stored turn: checks, the date label, the date repair."""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

from .._dates.resolve import format_day, parse_when, resolve_time
from .render import KINDS, Part, Turn


def check_date_order(call: str, order: object) -> str | None:
    """`order` if it is a valid `date_order` (None, "dmy" or "mdy")."""
    if order not in (None, "dmy", "mdy"):
        raise ValueError(
            f"{call}: date_order={order!r}; use 'dmy' (when='05/08/2023' is 5 August), "
            "'mdy' (May 8) or None (such a when is refused)"
        )
    return order


def check_encodable(call: str, what: str, text: str) -> None:
    """Refuse `text` holding a lone surrogate ("\\ud800"): a valid str, but not Unicode text,
    so no store can keep it and no provider accepts it.  Refused here, at the call, so that a
    Memory bound to a store and one that is not give the same error and store nothing."""
    if text.isascii():  # no surrogate, and CPython knows it without a pass (issue 34: append)
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{call}: {what} holds a lone surrogate ({text[exc.start]!r} at character "
            f"{exc.start}), which is not Unicode text and cannot be stored or sent; nothing was "
            f"stored; decode the input with errors='replace' (or fix it) and call again"
        ) from None


def when_label(call: str, when: object) -> str:
    """How a turn's date is shown: a date as '8 May 2023', a string as given."""
    if isinstance(when, str):
        return when.strip()
    if isinstance(when, datetime):
        return f"{format_day(when.date())} {when:%H:%M}"
    if isinstance(when, date):
        return format_day(when)
    raise TypeError(f"{call}: when must be a str, date or datetime, got {type(when).__name__}")


def make_turn(
    call: str, role: str, text: object, *, kind: str, source: object, when: object,
    resolve: bool, order: str | None = None, tools: tuple[Part, ...] = (), item: Any = None,
) -> Turn:  # fmt: skip
    """A checked turn; relative dates in `text` annotated when `resolve` and `when` is given
    (`order`: how to read a numeric `when` whose day and month could swap, see `parse_when`).
    A turn with nothing to send (an export's empty turn, a message carrying only an `item`)
    is stored as given and never indexed or sent (`Turn.silent`)."""
    if role not in ("user", "assistant"):
        raise ValueError(f'{call}: role={role!r}; use "user" or "assistant"')
    if not isinstance(text, str):
        raise TypeError(f"{call}: text must be a str, got {type(text).__name__}")
    if kind not in KINDS:
        raise ValueError(f"{call}: kind={kind!r}; use SAID, SUPPLIED or DERIVED")
    if not isinstance(source, str):
        raise TypeError(f"{call}: source must be a str, got {type(source).__name__}")
    label = when_label(call, when)
    if not (text.isascii() and source.isascii() and label.isascii()):  # else none can hold one
        check_encodable(call, "text", text)
        check_encodable(call, "source", source)
        check_encodable(call, "when", label)
    if tools or item is not None:  # rare: checked as the JSON they are stored as
        data = json.dumps([[dict(p) for p in tools], item], ensure_ascii=False, default=repr)
        check_encodable(call, "the message's tool parts or item", data)
    shown = text
    if resolve and label:
        anchor = parse_when(when, order)  # type: ignore[arg-type]
        if anchor is None:
            raise ValueError(
                f"{call}: cannot read a date in when={when!r}; pass e.g. '8 May 2023', "
                "'8. Mai 2023', '2023年5月8日', an ISO date or a date object; a numeric date "
                "whose day and month could swap (05/08/2023) needs Memory(date_order='dmy' or "
                "'mdy'); or build the Memory with resolve_time=False to keep free-form labels"
            )
        shown = text if text.isspace() else resolve_time(text, anchor)
    # Positional (opens and redacted False): keywords slow the call every append makes.
    return Turn(role, text, shown, kind, source, label, False, False, tools, item)
