"""Reading what `Memory.to_dict` wrote: every field checked before anything is built."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .._turns.render import Turn
from .._turns.settings import Tuning
from .state import FORMAT, VERSION, Recorded, expect, read_key, read_stats, read_turns

CONFIG_KEYS = ("budget", "chunk", "stability", "external_margin", "external_share",
               "external_max", "resolve_time", "date_order", "ceiling", "language", "callables",
               "tuning")  # fmt: skip
_HOW = {
    "measure": "measure=your_length_function (the one the Memory was built with)",
    "retriever": "retriever=YourRetriever() (fitted again from the stored turns)",
    "boundaries": "boundaries=your_boundary_function",
    "external": "external=your_search_function",
}


# Callables a Memory is opened without, with a warning: they add candidates to what compose
# ranks, and the conversation's own words are still selected as before.  `measure` (the unit
# of every budget) and `boundaries` (where new stretches close) are asked for: without them a
# budget or the stored layout would silently mean something else.
_OPTIONAL = ("retriever", "external")


class MissingCallableWarning(UserWarning):
    """A conversation saved with a `retriever` or `external` callable was opened without it:
    compose selects from the conversation's own words alone until it is passed again."""


def _fail(what: str) -> ValueError:
    return ValueError(f"Memory.from_dict: {what}")


@dataclass
class Saved:
    config: dict[str, Any]
    turns: list[Turn]
    # The openings and cuts of the turns whose record is not plain (`state.read_turns`).
    layouts: dict[int, Recorded]
    growth: float | None
    stats: dict[str, int]
    context: dict[str, Any] | None
    context_readable: bool = True
    keys: dict[int, str] = field(default_factory=dict)  # turn index -> idempotency key

    def recorded(self, index: int) -> Recorded:
        """Turn `index`'s stretch openings and cut offsets, as its record holds them."""
        found = self.layouts.get(index)
        return ([self.turns[index].opens], []) if found is None else found


def parse(raw: object, settings: dict[str, Any]) -> Saved:
    """`raw` checked and read; `settings` override the saved configuration."""
    data: dict[str, Any] = expect(raw, dict, "data")
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
    config = _config(expect(data.get("config", {}), dict, "config"), settings)
    raw_turns: list[Any] = expect(data.get("turns"), list, "turns")
    with collector_paused():  # a turn each: many small objects, no cycles
        turns, layouts = read_turns(raw_turns)
    state = expect(data.get("state", {}), dict, "state")
    growth = expect(state.get("growth", 0.0), (int, float), "state.growth")
    context = state.get("context")
    if context is not None:
        expect(context, dict, "state.context")
    # Version 1 named turns, not entries: its context holds only if no turn is cut now.
    readable = version >= 2 or all(not cuts for _, cuts in layouts.values())
    saved = Saved(config, turns, layouts, float(growth) if "growth" in state else None,
                  read_stats(state.get("stats", {})), context, readable,
                  _keys(raw_turns))  # fmt: skip
    return saved


def _keys(raw_turns: list[Any]) -> dict[int, str]:
    """The turns' idempotency keys by index; a key on two turns means the data was edited."""
    keys: dict[int, str] = {}
    seen: dict[str, int] = {}
    # Only the records holding one are read (every record is a dict: `read_turns` checked).
    for index in [i for i, raw in enumerate(raw_turns) if "key" in raw]:
        key = read_key(raw_turns[index], index)
        if key is None:
            continue
        if key in seen:
            raise _fail(f"turns[{index}].key {key!r} is also turns[{seen[key]}]'s; keys are unique")
        keys[index], seen[key] = key, index
    return keys


def _config(config: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    unknown = set(config) - set(CONFIG_KEYS)
    if unknown:
        raise _fail(f"config has unknown keys {sorted(unknown)}")
    needed = expect(config.get("callables", []), list, "config.callables")
    missing = [n for n in needed if settings.get(n) is None]
    left = [n for n in missing if n in _OPTIONAL]
    if left:
        how = ", ".join(_HOW[str(n)] for n in left)
        warnings.warn(
            f"Memory.from_dict: the data was saved by a Memory built with {' and '.join(left)}, "
            f"which cannot be saved; opened without {'them' if len(left) > 1 else 'it'}, so "
            f"compose selects from the conversation's own words alone; to use "
            f"{'them' if len(left) > 1 else 'it'}, pass {how} again on every open "
            f"(store.open(id, ...) or Memory.from_dict(data, ...))",
            MissingCallableWarning,
            stacklevel=4,
        )
    missing = [n for n in missing if n not in _OPTIONAL]
    if missing:
        how = "; ".join(_HOW.get(str(n), f"{n}=...") for n in missing)
        raise _fail(
            f"the data was saved by a Memory built with {', '.join(map(str, missing))}, which "
            f"cannot be saved; pass them again: Memory.from_dict(data, {how})"
        )
    out = {k: v for k, v in config.items() if k not in ("callables", "tuning")}
    if "tuning" in config:
        try:
            out["tuning"] = Tuning(**expect(config["tuning"], dict, "config.tuning"))
        except TypeError as exc:
            raise _fail(f"config.tuning is not valid: {exc}") from None
    out.update(settings)
    return out


# Objects a pause must have left in the youngest generation for `collector_paused` to move
# them to the oldest: fewer cost a collection little, and the move promotes the application's
# young objects too (docs/benchmarks.md, "Speed").
BULK_OBJECTS = 50_000


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector during a bulk load: the millions of small objects
    reopening builds hold no cycles, and its passes over them cost time for nothing.

    A large load's objects are then put in the oldest generation at once (`gc.freeze` and
    `gc.unfreeze` move lists, walking nothing): left in the youngest, the first collection
    after the load walks every one of them, and a second walks them again on their way up,
    both in the reopening's first calls; they live as long as the Memory anyway. Not when the
    collector was off already, or when the application has frozen objects of its own (a
    server that froze them before forking keeps them frozen).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_count()[0] >= BULK_OBJECTS and gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
