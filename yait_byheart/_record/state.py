"""Plain-data persistence: turn records, the sticky state, and reading them back.

Reading validates everything before anything is built, so a defect raises ValueError naming
the field and never half-loads. Version 1 data (before long turns were cut into pieces and
tool parts existed) reads as it did; its saved context is dropped if a turn is now cut.
Version 3 added a turn's `item` (the framework's own record of a message) and empty turns
(text "", no tools: stored, never sent).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._compose.context import ENTRY, STRETCH, SentContext
from .._turns.conversation import Conversation
from .._turns.render import KINDS, Part, Turn
from .._turns.tools import check_part

FORMAT = "yait_byheart.memory"
VERSION = 3


def _fail(what: str) -> ValueError:
    return ValueError(f"Memory.from_dict: {what}")


def expect(value: object, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        name = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise _fail(f"{where} should be {name}, found {type(value).__name__}")
    return value


# -- turns ---------------------------------------------------------------------------------


def turn_record(
    turn: Turn, opens: list[bool], cuts: list[int], key: str | None = None
) -> dict[str, Any]:
    """A turn as JSON-safe data, with its pieces' stretch openings and the caller's idempotency
    key (if it was appended with one); defaults left out."""
    record: dict[str, Any] = {"role": turn.role, "text": turn.text}
    if turn.shown != turn.text:
        record["shown"] = turn.shown
    if turn.kind != "said":
        record["kind"] = turn.kind
    if turn.source:
        record["source"] = turn.source
    if turn.when:
        record["when"] = turn.when
    if turn.tools:
        record["tools"] = [dict(p) for p in turn.tools]
    if turn.item is not None:
        record["item"] = turn.item
    if turn.redacted:
        record["redacted"] = True
    if cuts:
        record["cuts"], record["opens"] = cuts, opens
    elif opens[0]:
        record["opens"] = True
    if key is not None:
        record["key"] = key
    return record


def read_key(raw: object, where: int) -> str | None:
    """The idempotency key of a stored turn record, or None when it was appended without one."""
    key = raw.get("key") if type(raw) is dict else None
    if key is None:
        return None
    if type(key) is not str or not key:
        raise _fail(f"turns[{where}].key should be a non-empty str, found {key!r}")
    return key


def same_message(old: Turn, new: Turn) -> bool:
    """Whether `new` says what `old` said: role, words, kind, source and tool parts.

    The date is not compared: a retry stamped later (a server that dates turns on arrival)
    is still the same message.
    """
    return (old.role, old.text, old.kind, old.source, old.tools) == (
        new.role, new.text, new.kind, new.source, new.tools,
    )  # fmt: skip


def _plain_turn(raw: object) -> Turn | None:
    """A stored turn whose record is plain (words only: no tool parts, cuts or item), read
    without the checks that name a bad field; None for any other record. Reopening 100,000
    turns spends much of its time here."""
    if type(raw) is not dict:
        return None
    g = raw.get
    role, text, kind = g("role"), g("text"), g("kind", "said")
    shown, source, when = g("shown", text), g("source", ""), g("when", "")
    opens, redacted = g("opens", False), g("redacted", False)
    if (
        role in ("user", "assistant") and kind in KINDS and type(text) is str
        and type(shown) is str and type(source) is str and type(when) is str
        and type(opens) is bool and type(redacted) is bool and "tools" not in raw
        and "cuts" not in raw and "item" not in raw
    ):  # fmt: skip
        return Turn(role, text, shown, kind, source, when, opens, redacted)
    return None


def _cut_turn(raw: dict[str, Any]) -> tuple[Turn, list[bool], list[int]] | None:
    """A stored turn cut into pieces whose record is otherwise plain (a long reply), read as
    `_read_turn_checked` reads it, without its checks' calls; None for any other record."""
    cuts, opens = raw.get("cuts"), raw.get("opens")
    if (
        type(cuts) is not list or type(opens) is not list or not cuts
        or len(opens) != len(cuts) + 1
        or {*map(type, cuts)} != {int} or {*map(type, opens)} != {bool}  # exact types, in C
    ):  # fmt: skip
        return None
    whole = dict(raw)  # the record as a plain turn's: its first piece's opening, no cuts
    del whole["cuts"]
    whole["opens"] = opens[0]
    turn = _plain_turn(whole)
    return None if turn is None else (turn, opens, list(cuts))


def read_turn(raw: object, where: int) -> tuple[Turn, list[bool] | None, list[int]]:
    """A stored turn back as a Turn, its per-piece stretch openings and cut offsets."""
    turn = _plain_turn(raw)
    if turn is not None:
        return turn, [turn.opens], []
    return _read_turn_checked(raw, f"turns[{where}]")


Recorded = tuple[list[bool] | None, list[int]]  # a stored turn's openings and cut offsets


def read_turns(raws: list[Any]) -> tuple[list[Turn], dict[int, Recorded]]:
    """Stored turns back as Turns, with the openings and cuts of those whose record is not
    plain (cut into pieces, tool parts, an item...); a plain one has no cuts, and its opening
    is its `opens` (no tuple and lists per turn: they cost a third of reopening's reading)."""
    turns: list[Turn] = []
    layouts: dict[int, Recorded] = {}
    add = turns.append
    for where, raw in enumerate(raws):
        turn = _plain_turn(raw)
        if turn is None:
            cut = _cut_turn(raw) if type(raw) is dict else None
            turn, opens_list, cuts = cut or _read_turn_checked(raw, f"turns[{where}]")
            layouts[where] = (opens_list, cuts)
        add(turn)
    return turns, layouts


def _read_turn_checked(raw: object, where: str) -> tuple[Turn, list[bool] | None, list[int]]:
    record: dict[str, Any] = expect(raw, dict, where)
    role = record.get("role")
    if role not in ("user", "assistant"):
        raise _fail(f"{where}.role is {role!r}; expected 'user' or 'assistant'")
    text = expect(record.get("text"), str, f"{where}.text")
    kind = record.get("kind", "said")
    if kind not in KINDS:
        raise _fail(f"{where}.kind is {kind!r}; expected one of {', '.join(KINDS)}")
    tools = tuple(
        _read_tool(p, f"{where}.tools[{k}]")
        for k, p in enumerate(expect(record.get("tools", []), list, f"{where}.tools"))
    )
    cuts = [expect(c, int, f"{where}.cuts[]") for c in expect(record.get("cuts", []), list, where)]
    raw_opens = record.get("opens", False)
    opens = raw_opens if isinstance(raw_opens, list) else [raw_opens]
    for flag in opens:
        expect(flag, bool, f"{where}.opens")
    if cuts and len(opens) != len(cuts) + 1:
        raise _fail(f"{where}.opens should hold one flag per piece ({len(cuts) + 1})")
    redacted = expect(record.get("redacted", False), bool, f"{where}.redacted")
    item = record.get("item")
    if item is not None:
        if redacted:
            raise _fail(f"{where} is redacted yet holds an item; redaction blanks both")
        check_json(item, f"{where}.item")
    turn = Turn(
        role=role,
        text=text,
        shown=expect(record.get("shown", text), str, f"{where}.shown"),
        kind=kind,
        source=expect(record.get("source", ""), str, f"{where}.source"),
        when=expect(record.get("when", ""), str, f"{where}.when"),
        opens=opens[0],
        redacted=redacted,
        tools=tools,
        item=item,
    )
    return turn, opens, cuts


def _read_tool(raw: object, where: str) -> Part:
    try:
        return check_part(raw, where)
    except (TypeError, ValueError) as exc:
        raise _fail(str(exc)) from None


# -- the sticky state ------------------------------------------------------------------------


def memory_record(
    config: dict[str, Any], conv: Conversation, state: dict[str, Any], keys: Mapping[int, str]
) -> dict[str, Any]:
    """What `Memory.to_dict` returns: the settings, every turn with its cuts and key, the
    state."""
    turns = [turn_record(t, *conv.record_cuts(i), keys.get(i)) for i, t in enumerate(conv.turns)]
    return {"format": FORMAT, "version": VERSION, "config": config, "turns": turns, "state": state}


def state_record(
    ctx: SentContext | None,
    growth: float,
    stats: Mapping[str, int],
    fits: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The sticky selection and counters: what makes the next compose repeat the last one.

    `fits` (from `fits_record`) says which conversation layout and settings the context was
    chosen for, so that a reader with other settings discards it instead of trusting it.
    """
    state: dict[str, Any] = {"growth": growth, "stats": dict(stats)}
    if ctx is not None:
        state["context"] = {
            "start": ctx.start,
            "upto": ctx.upto,
            "items": [[item.kind, item.ref] for item in ctx.items],
            "block": ctx.block,
            "sent_items": ctx.sent_items,
        }
        if ctx.native_calls:
            state["context"]["native"] = sorted(ctx.native_calls)
        if fits is not None:
            state["context"]["fits"] = dict(fits)
    return state


def fits_record(conv: Conversation, settings: Mapping[str, Any]) -> dict[str, Any]:
    """What a saved context depends on: how many turns and entries the conversation had (the
    entries are the turns as this reader cut them) and the settings that chose it."""
    return {"turns": len(conv.turns), "entries": len(conv.entries), **settings}


def context_fits(conv: Conversation, fits: object, settings: Mapping[str, Any]) -> bool:
    """Whether a context saved with `fits` means the same entries and settings to this reader.

    Readers with another budget or chunk cut stored turns into other entries, so entry and
    stretch numbers would name other text; a context chosen under other settings is not
    this reader's to keep either. Data saved before `fits` existed is trusted as before.
    """
    if fits is None:
        return True
    if not isinstance(fits, dict):
        return False
    turns = fits.get("turns")
    if type(turns) is not int or not 0 <= turns <= len(conv.turns):
        return False
    entries = conv.first_entry[turns] if turns < len(conv.turns) else len(conv.entries)
    if fits.get("entries") != entries:
        return False
    return all(fits.get(name) == value for name, value in settings.items())


def read_context(conv: Conversation, raw: dict[str, Any]) -> SentContext | None:
    """A saved context rebuilt item by item (None if a redaction since made it unsendable)."""
    n_entries, n_units = len(conv.entries), len(conv.starts)
    start = expect(raw.get("start"), int, "state.context.start")
    upto = expect(raw.get("upto"), int, "state.context.upto")
    if not 0 <= start <= upto <= n_entries:
        raise _fail(f"state.context start={start}, upto={upto} do not fit {n_entries} entries")
    block = expect(raw.get("block", 0), int, "state.context.block")
    native = {str(c) for c in expect(raw.get("native", []), list, "state.context.native")}
    ctx = SentContext(start=start, upto=upto, block=block)
    for k, item in enumerate(expect(raw.get("items"), list, "state.context.items")):
        ok = (
            isinstance(item, list) and len(item) == 2 and item[0] in (STRETCH, ENTRY)
            and isinstance(item[1], int) and not isinstance(item[1], bool)
        )  # fmt: skip
        limit = n_units if ok and item[0] == STRETCH else n_entries
        if not ok or not 0 <= item[1] < limit:
            raise _fail(
                f"state.context.items[{k}] is {item!r}; expected ['u', stretch] or "
                "['t', entry] naming an existing stretch or entry"
            )
        if item[0] == ENTRY and conv.turns[conv.entries[item[1]].turn].redacted:
            return None  # saved before a redaction reached it: never render it again
        if item[0] == STRETCH:
            ctx.add_stretch(conv, item[1])
        else:
            ctx.add_entry(conv, item[1], upto, replay=native)
    ctx.sent_items = expect(raw.get("sent_items", 0), int, "state.context.sent_items")
    return ctx


def read_stats(raw: object) -> dict[str, int]:
    stats: dict[str, int] = dict(expect(raw, dict, "state.stats"))
    for key, value in stats.items():
        expect(value, int, f"state.stats[{key!r}]")
    if "appended" in stats:  # version 1 named composes that joined stretches "appended"
        stats["joined"] = stats.get("joined", 0) + stats.pop("appended")
    return stats


def check_json(value: object, where: str) -> None:
    """Raise ValueError if `value` is not plain JSON data."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise _fail(f"{where} is not JSON-safe ({exc})") from None
