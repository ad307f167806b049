"""Stored rows back to data, and what is wrong with a row that cannot be read.

Rows come as the dialect reads them (`bytes` from SQLite, so that junk bytes are a finding and
not a driver error; `str` from PostgreSQL).  The fast path parses all of a conversation's turn
rows as one JSON array; only when that fails is each row looked at on its own, to name it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from operator import itemgetter
from typing import Any, NamedTuple

from .._record.state import read_key, read_turn
from ._errors import DamagedRowError

Raw = bytes | str
_FROM_DICT = "Memory.from_dict: "


class Damage(NamedTuple):
    """One row that cannot be read: where it is and what is wrong with it."""

    conversation: str
    table: str  # "turns", "state" or "conversations" (the head: format and settings)
    row: int | None  # the turn index for "turns", else None
    problem: str

    def error(self, store: str) -> DamagedRowError:
        return DamagedRowError(store, self.conversation, self.table, self.row, self.problem)


def loads(raw: object) -> Any:
    """One row's JSON; ValueError (UnicodeDecodeError, JSONDecodeError) if it is not."""
    if isinstance(raw, bytes):
        return json.loads(raw.decode("utf-8"))
    if isinstance(raw, str):
        return json.loads(raw)
    raise ValueError(f"not text but {type(raw).__name__}")


def json_problem(raw: object) -> tuple[Any, str | None]:
    """The row's value and None, or None and what keeps it from being JSON text."""
    try:
        return loads(raw), None
    except UnicodeDecodeError as exc:
        return (
            None,
            f"not UTF-8 text: byte {exc.start} is {exc.object[exc.start : exc.start + 1]!r}",
        )
    except ValueError as exc:
        return None, f"not JSON: {exc}"


def _turn(raw: object, index: int) -> tuple[Any, str | None]:
    """The row's record and None, or None and what keeps it from being turn `index`."""
    value, problem = json_problem(raw)
    if problem is not None:
        return None, problem
    try:
        read_turn(value, index)
        read_key(value, index)
    except ValueError as exc:
        return None, f"not a turn: {str(exc).removeprefix(_FROM_DICT)}"
    return value, None


def turn_problem(raw: Raw, index: int) -> str | None:
    """What keeps a turn row from being read as turn `index`, or None."""
    return _turn(raw, index)[1]


def gap_problem(missing: int, found: int) -> str:
    return (
        f"missing: the conversation has no turn {missing} (the next row is turn {found}); the "
        f"store was modified outside yait_byheart"
    )


def turn_damage(name: str, rows: Sequence[tuple[int, Raw]], start: int = 0) -> list[Damage]:
    """Every damaged or missing row among `rows` (turns from `start` on, by index)."""
    found: list[Damage] = []
    expected = start
    for index, raw in rows:
        found += [Damage(name, "turns", k, gap_problem(k, index)) for k in range(expected, index)]
        problem = turn_problem(raw, index)
        if problem is not None:
            found.append(Damage(name, "turns", index, problem))
        expected = index + 1
    return found


def parse_turns(
    store: str, name: str, rows: Sequence[tuple[int, Raw]], start: int = 0
) -> list[Any]:
    """The turn rows' JSON values in order; DamagedRowError naming the first bad or missing
    row (a missing one means the store was edited: turns would shift, so nothing is read)."""
    # Compared in C first: a reopening reads 100,000 rows.
    if list(map(itemgetter(0), rows)) != list(range(start, start + len(rows))):
        for position, (index, _raw) in enumerate(rows, start):
            if index != position:
                raise Damage(name, "turns", position, gap_problem(position, index)).error(store)
    if not rows:
        return []
    try:
        if isinstance(rows[0][1], bytes):
            # One parse of one array is ~2x faster than 100,000 json.loads calls.
            value = json.loads(b"[" + b",".join(map(itemgetter(1), rows)) + b"]")
        else:
            value = json.loads("[" + ",".join(map(itemgetter(1), rows)) + "]")
    except (ValueError, TypeError):
        value = None
    if isinstance(value, list) and len(value) == len(rows):
        return value
    # Something did not parse (or two rows parsed as one): find the row and name it.
    for damage in turn_damage(name, rows, start):
        raise damage.error(store)
    raise Damage(name, "turns", start, "the rows do not parse together").error(store)


def joined_records(count: int, idxs: str, records: bytes) -> list[Any] | None:
    """The records of `count` turn rows read in one row (`Loaded.joined`): `idxs` and
    `records` joined by commas in the same order. None unless they are turns 0 to count - 1
    in that order, each one JSON value: then the rows are read one by one, a bad one named."""
    if count == 0:
        return []
    if idxs != ",".join(map(str, range(count))):
        return None
    try:
        value = json.loads(b"[" + records + b"]")
    except ValueError:
        return None
    return value if type(value) is list and len(value) == count else None


def turn_records(
    store: str, name: str, rows: Sequence[tuple[int, Raw]], start: int | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """Each row read as a turn record, one by one; DamagedRowError naming the first that is not
    one.  With `start`, the rows must be turns `start`, `start + 1`, ... with none missing."""
    out: list[tuple[int, dict[str, Any]]] = []
    for position, (index, raw) in enumerate(rows, start or 0):
        if start is not None and index != position:
            raise Damage(name, "turns", position, gap_problem(position, index)).error(store)
        value, problem = _turn(raw, index)
        if problem is not None:
            raise Damage(name, "turns", index, problem).error(store)
        out.append((index, value))
    return out


def head_problem(raw: Raw) -> str | None:
    """What keeps a conversation's head (format, version, settings) from being read."""
    value, problem = json_problem(raw)
    if problem is not None:
        return problem
    if not isinstance(value, dict) or value.get("format") != "yait_byheart.memory":
        return "not a saved Memory's head (format, version, config)"
    return None


def state_problem(raw: Raw) -> str | None:
    """What keeps a state row (the sticky selection, a cache) from being read."""
    value, problem = json_problem(raw)
    if problem is not None:
        return problem
    return None if isinstance(value, dict) else "not a JSON object"
