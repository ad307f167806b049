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


def turn_record(turn: Turn, opens: list[bool], cuts: list[int]) -> dict[str, Any]:
    """A turn as JSON-safe data, with its pieces' stretch openings; defaults left out."""
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
    return record


def read_turn(raw: object, where: int) -> tuple[Turn, list[bool] | None, list[int]]:
    """A stored turn back as a Turn, its per-piece stretch openings and cut offsets."""
    if type(raw) is dict:  # the fast path: reopening 100,000 turns spends most time here
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
            return Turn(role, text, shown, kind, source, when, opens, redacted), [opens], []
    return _read_turn_checked(raw, f"turns[{where}]")


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
    config: dict[str, Any], conv: Conversation, state: dict[str, Any]
) -> dict[str, Any]:
    """What `Memory.to_dict` returns: the settings, every turn with its cuts, the state."""
    turns = [turn_record(t, *conv.record_cuts(i)) for i, t in enumerate(conv.turns)]
    return {"format": FORMAT, "version": VERSION, "config": config, "turns": turns, "state": state}


def state_record(
    ctx: SentContext | None, growth: float, stats: Mapping[str, int]
) -> dict[str, Any]:
    """The sticky selection and counters: what makes the next compose repeat the last one."""
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
    return state


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
