"""Plain-data persistence for Memory, with validation that never half-loads."""

from __future__ import annotations

import gc
import struct
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ._render import KINDS, Turn
from .bm25 import Index, _u32_array, _u32_bytes

if TYPE_CHECKING:
    from .memory import Memory

FORMAT = "yait_byheart.memory"
VERSION = 1
CONFIG_KEYS = (
    "budget", "chunk", "stability", "external_margin", "external_share", "external_max",
    "resolve_time", "ceiling", "language",
)  # fmt: skip


def turn_record(turn: Turn) -> dict[str, Any]:
    """One turn as JSON-safe data; fields at their defaults are left out."""
    record: dict[str, Any] = {"role": turn.role, "text": turn.text}
    if turn.shown != turn.text:
        record["shown"] = turn.shown
    if turn.kind != "said":
        record["kind"] = turn.kind
    if turn.source:
        record["source"] = turn.source
    if turn.when:
        record["when"] = turn.when
    if turn.opens:
        record["opens"] = True
    if turn.redacted:
        record["redacted"] = True
    return record


def state_record(mem: Memory) -> dict[str, Any]:
    """The sticky selection and counters: what makes the next compose repeat the last one."""
    ctx = mem._ctx
    state: dict[str, Any] = {"growth": mem._growth, "stats": dict(mem._stats)}
    if ctx is not None:
        state["context"] = {
            "start": ctx.start,
            "upto": ctx.upto,
            "items": [[kind, i] for kind, i in ctx.items],
            "block": ctx.block,
            "sent_items": ctx.sent_items,
        }
    return state


def to_dict(mem: Memory) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "config": {key: getattr(mem, key) for key in CONFIG_KEYS},
        "turns": [turn_record(t) for t in mem._turns],
        "state": state_record(mem),
    }


# Index snapshots (see index_snapshot). Bump INDEX_VERSION whenever tokenizing, stemming, the
# stop list or how a stretch's text is indexed changes: an older snapshot is then ignored.
INDEX_VERSION = 2
# magic, INDEX_VERSION, turns covered, CRC-32 of the tokenizer's signature (version, forced
# language) and the texts, stretches, redacted turns
_SNAPSHOT_HEADER = struct.Struct("<4sIIIII")
_SNAPSHOT_MAGIC = b"BHSN"


def index_snapshot(mem: Memory) -> bytes:
    """The retrieval index of `mem`'s closed stretches, with what it was built from.

    A store keeps it beside the rows; `from_dict(..., index=)` then loads it instead of
    tokenizing and indexing every stretch again (1.2 million postings at 100,000 turns).
    It records the stretch boundaries, the redacted turns and a checksum of the texts it saw,
    so a snapshot that no longer matches the turns is ignored rather than trusted.
    """
    mem._index_closed()
    covered, starts = mem._open_start, mem._unit_starts
    redacted = [i for i in range(covered) if mem._turns[i].redacted]
    header = _SNAPSHOT_HEADER.pack(
        _SNAPSHOT_MAGIC, INDEX_VERSION, covered, _texts_crc(mem, covered), len(starts),
        len(redacted),
    )  # fmt: skip
    return header + _u32_bytes(starts) + _u32_bytes(redacted) + mem._index.dump()


def _texts_crc(mem: Memory, covered: int) -> int:
    # ~30 ms for 100,000 turns (zlib runs in C), against re-indexing them for ~2 s. The
    # tokenizer's signature comes first: a snapshot of another tokenizer is rebuilt, not read.
    seed = zlib.crc32(mem._tokenizer.signature.encode())
    return zlib.crc32("\x00".join(t.shown for t in mem._turns[:covered]).encode(), seed)


def _restore_index(mem: Memory, snapshot: bytes) -> int:
    """Adopt a snapshot's index if it was built from exactly these stretches: the number of
    stretches it holds, or 0 when it does not fit (and is left unused)."""
    try:
        magic, version, covered, crc, n_units, n_redacted = _SNAPSHOT_HEADER.unpack_from(snapshot)
        if magic != _SNAPSHOT_MAGIC or version != INDEX_VERSION:
            return 0
        at = _SNAPSHOT_HEADER.size
        starts = _u32_array(snapshot, n_units, at).tolist()
        at += 4 * n_units
        redacted = _u32_array(snapshot, n_redacted, at).tolist()
        at += 4 * n_redacted
    except (struct.error, ValueError):
        return 0
    turns, now = mem._turns, mem._unit_starts
    boundary = now[n_units] if n_units < len(now) else mem._open_start
    if (
        covered > len(turns)
        or n_units > len(now)
        or boundary != covered
        or starts != now[:n_units]
        or redacted != [i for i in range(covered) if turns[i].redacted]
        or crc != _texts_crc(mem, covered)
    ):
        return 0
    try:
        index = Index.load(memoryview(snapshot)[at:])
    except ValueError:
        return 0
    if len(index) != n_units or any(uid not in index for uid in range(n_units)):
        return 0
    mem._index = index
    return int(n_units)


def _fail(what: str) -> ValueError:
    return ValueError(f"Memory.from_dict: {what}")


def _expect(value: object, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        name = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise _fail(f"{where} should be {name}, found {type(value).__name__}")
    return value


def read_turn(raw: object, where: int | str) -> Turn:
    """A stored turn back as a Turn; any defect raises ValueError naming the field."""
    if type(raw) is dict:  # the fast path: reopening 100,000 turns spends most time here
        g = raw.get
        role, text, kind = g("role"), g("text"), g("kind", "said")
        shown, source, when = g("shown", text), g("source", ""), g("when", "")
        opens, redacted = g("opens", False), g("redacted", False)
        if (
            role in ("user", "assistant")
            and kind in KINDS
            and type(text) is str
            and type(shown) is str
            and type(source) is str
            and type(when) is str
            and type(opens) is bool
            and type(redacted) is bool
        ):
            return Turn(role, text, shown, kind, source, when, opens, redacted)
    return _read_turn_checked(raw, f"turns[{where}]" if isinstance(where, int) else where)


def _read_turn_checked(raw: object, where: str) -> Turn:
    record: dict[str, Any] = _expect(raw, dict, where)
    role = record.get("role")
    if role not in ("user", "assistant"):
        raise _fail(f"{where}.role is {role!r}; expected 'user' or 'assistant'")
    text = _expect(record.get("text"), str, f"{where}.text")
    kind = record.get("kind", "said")
    if kind not in KINDS:
        raise _fail(f"{where}.kind is {kind!r}; expected one of {', '.join(KINDS)}")
    return Turn(
        role=role,
        text=text,
        shown=_expect(record.get("shown", text), str, f"{where}.shown"),
        kind=kind,
        source=_expect(record.get("source", ""), str, f"{where}.source"),
        when=_expect(record.get("when", ""), str, f"{where}.when"),
        opens=_expect(record.get("opens", False), bool, f"{where}.opens"),
        redacted=_expect(record.get("redacted", False), bool, f"{where}.redacted"),
    )


def from_dict(cls: type[Memory], raw: object, overrides: dict[str, Any]) -> Memory:
    return load(cls, raw, overrides, None)[0]


def load(
    cls: type[Memory], raw: object, overrides: dict[str, Any], snapshot: bytes | None
) -> tuple[Memory, int]:
    """`from_dict`, taking the index from `snapshot` (`index_snapshot`) when it matches.

    Returns the Memory and how many stretches the snapshot supplied (0 if none or unusable).
    """
    data: dict[str, Any] = _expect(raw, dict, "data")
    if data.get("format") != FORMAT:
        raise _fail(
            f"data is not a saved Memory (format is {data.get('format')!r}, "
            f"expected {FORMAT!r}); pass what Memory.to_dict() returned"
        )
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _fail(f"version is {version!r}; expected a positive integer")
    if version > VERSION:
        raise _fail(
            f"data was saved by a newer yait_byheart (format version {version}, this one "
            f"reads up to {VERSION}); upgrade yait-byheart to load it"
        )
    config = _expect(data.get("config", {}), dict, "config")
    unknown = set(config) - set(CONFIG_KEYS)
    if unknown:
        raise _fail(f"config has unknown keys {sorted(unknown)}")
    raw_turns = _expect(data.get("turns"), list, "turns")
    try:
        mem = cls(**{**config, **overrides})
    except (TypeError, ValueError) as exc:
        raise _fail(f"config is not valid: {exc}") from exc
    with _collector_paused():
        turns = [read_turn(r, i) for i, r in enumerate(raw_turns)]
        for turn in turns:
            mem._add_turn(turn, journal=False, opens=turn.opens)
        restored = _restore_index(mem, snapshot) if snapshot is not None else 0
        mem._index_closed()  # reopened means ready: the first compose pays nothing extra
    restore_state(mem, _expect(data.get("state", {}), dict, "state"))
    return mem, restored


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector during a bulk load.

    Reopening builds millions of small dicts that hold no cycles; the collector's passes over
    them cost about 5-8 % of a 100,000-turn reopen, for nothing.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def restore_state(mem: Memory, state: dict[str, Any]) -> None:
    from .memory import _Context

    growth = _expect(state.get("growth", mem._growth), (int, float), "state.growth")
    stats = _expect(state.get("stats", {}), dict, "state.stats")
    for key, value in stats.items():
        _expect(value, int, f"state.stats[{key!r}]")
    ctx = None
    if state.get("context") is not None:
        raw: dict[str, Any] = _expect(state["context"], dict, "state.context")
        n_turns, n_units = len(mem._turns), len(mem._unit_starts)
        start = _expect(raw.get("start"), int, "state.context.start")
        upto = _expect(raw.get("upto"), int, "state.context.upto")
        if not 0 <= start <= upto <= n_turns:
            raise _fail(f"state.context start={start}, upto={upto} do not fit {n_turns} turns")
        # The block first: adjacent stretches inside it render as one message (_add_item).
        block = _expect(raw.get("block", 0), int, "state.context.block")
        ctx = _Context(start=start, upto=upto, block=block)
        for k, item in enumerate(_expect(raw.get("items"), list, "state.context.items")):
            ok = (
                isinstance(item, list)
                and len(item) == 2
                and item[0] in ("u", "t")
                and isinstance(item[1], int)
                and not isinstance(item[1], bool)
            )
            limit = n_units if ok and item[0] == "u" else n_turns
            if not ok or not 0 <= item[1] < limit:
                raise _fail(
                    f"state.context.items[{k}] is {item!r}; expected ['u', unit] or "
                    "['t', turn] naming an existing stretch or turn"
                )
            mem._add_item(ctx, item[0], item[1])
        ctx.sent_items = _expect(raw.get("sent_items", 0), int, "state.context.sent_items")
    if ctx is not None and any(mem._turns[i].redacted for kind, i in ctx.items if kind == "t"):
        ctx = None  # saved before a redaction reached it: never render it again
    mem._growth = float(growth)
    mem._stats.clear()
    mem._stats.update(stats)
    mem._ctx = ctx


def check_candidates(found: object) -> list[tuple[str, str]]:
    """Validate what an `external` callable returned: a list of {"text", "source"} dicts."""
    call = "Memory(external=...)"
    if isinstance(found, (str, bytes)) or not isinstance(found, Sequence):
        raise TypeError(
            f"{call}: external(query) must return a list of "
            f"{{'text': str, 'source': str}} dicts, got {type(found).__name__}"
        )
    out = []
    for i, item in enumerate(found):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise TypeError(
                f"{call}: item {i} of external(query) must be a dict with a str "
                "'text' (and optionally a str 'source')"
            )
        source = item.get("source", "")
        if not isinstance(source, str):
            raise TypeError(f"{call}: item {i}'s 'source' must be a str")
        if item["text"].strip():
            out.append((item["text"], source))
    return out
