"""From what `append` was given to a stored turn: checks, the date label, the date repair."""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

from .._dates.resolve import format_day, parse_when, resolve_time
from .render import KINDS, SAID, Part, Turn


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
    """How a turn's date is shown: a date as '8 May 2023', a string as given, None as ""
    (undated).  An aware datetime keeps its offset ('8 May 2023 14:05 +02:00'), as an ISO
    string that carries one does."""
    if when is None:
        return ""
    if isinstance(when, str):
        return when.strip()
    if isinstance(when, datetime):
        offset = when.strftime("%z")  # "+0200"; "" when naive
        zone = f" {offset[:3]}:{offset[3:5]}" if offset else ""
        return f"{format_day(when.date())} {when:%H:%M}{zone}"
    if isinstance(when, date):
        return format_day(when)
    raise TypeError(f"{call}: when must be a str, date or datetime, got {type(when).__name__}")


def read_when(call: str, when: object, order: str | None = None, *, memory: bool = True) -> date:
    """The day `when` (a str, date or datetime that is not blank) names, or the error every
    call taking a `when` gives (`memory`: the call belongs to a Memory, whose settings the
    advice may name)."""
    label = when_label(call, when)  # the TypeError for a when of another type
    anchor = parse_when(when, order) if label else None  # type: ignore[arg-type]
    if anchor is None:
        fix = (
            "; a numeric date whose day and month could swap (05/08/2023) needs "
            "Memory(date_order='dmy' or 'mdy'); or build the Memory with resolve_time=False "
            "to keep free-form labels"
            if memory
            else ", or None for no date"
        )
        raise ValueError(
            f"{call}: cannot read a date in when={when!r}; pass e.g. '8 May 2023', "
            f"'8. Mai 2023', '2023年5月8日', an ISO date or a date object{fix}"
        )
    return anchor


def question(
    call: str, query: object, when: object, *, resolve: bool = True, order: str | None = None,
    memory: bool = True,
) -> Turn:  # fmt: skip
    """A question as compose and recall both read it: a str that says something, its relative
    dates annotated against `when` (None or "": undated), refused as `append` refuses a turn
    (`memory`: as in `read_when`)."""
    if not isinstance(query, str):
        raise TypeError(f"{call}: query must be a str, got {type(query).__name__}")
    if not query.strip():
        raise ValueError(f"{call}: query is blank; pass the user's new message")
    if resolve and when_label(call, when):
        read_when(call, when, order, memory=memory)  # its advice, before make_turn's
    return make_turn(call, "user", query, kind=SAID, source="", when=when, resolve=resolve,
                     order=order)  # fmt: skip


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
        anchor = read_when(call, when, order)
        shown = text if text.isspace() else resolve_time(text, anchor)
    # Positional (opens and redacted False): keywords slow the call every append makes.
    return Turn(role, text, shown, kind, source, label, False, False, tools, item)
