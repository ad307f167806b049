"""What a bulk load does to the application's garbage collector: it pauses it, then puts a
large load's objects in the oldest generation, and leaves everything else as it found it."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from yait_byheart import Memory
from yait_byheart._record import load
from yait_byheart.store import SQLiteStore


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    """No automatic collection moves objects between generations during a test; the
    collector's settings are restored after it."""
    was_enabled, thresholds = gc.isenabled(), gc.get_threshold()
    gc.set_threshold(10**8, 10**8, 10**8)
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)
    if was_enabled:
        gc.enable()


@pytest.fixture
def small_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A few hundred turns count as a large load (the real threshold needs ~20,000)."""
    monkeypatch.setattr(load, "BULK_OBJECTS", 100)


def _saved(turns: int = 300) -> dict[str, object]:
    mem = Memory(budget=2_000)
    for i in range(turns):
        mem.append("user" if i % 2 == 0 else "assistant", f"turn {i} about the garden shed")
    return mem.to_dict()


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycle() -> weakref.ref[_Node]:
    """A reference cycle nothing else holds, and a weak reference to watch it go."""
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def _in_oldest_generation(obj: object) -> bool:
    return any(o is obj for o in gc.get_objects(generation=2))


def test_a_large_load_lands_in_the_oldest_generation(small_bulk: None) -> None:
    data = _saved()
    gc.collect()
    mem = Memory.from_dict(data)
    assert gc.isenabled()
    turn = mem._conv.turns[150]
    assert _in_oldest_generation(turn)
    assert mem.compose("garden shed")["messages"]


def test_a_small_load_is_left_to_the_collector() -> None:
    data = _saved(20)
    gc.collect()
    mem = Memory.from_dict(data)
    assert gc.isenabled()
    assert not _in_oldest_generation(mem._conv.turns[10])


def test_the_applications_garbage_is_still_collected(small_bulk: None) -> None:
    data = _saved()
    gc.collect()
    watched = _cycle()
    Memory.from_dict(data)
    gc.collect()
    assert watched() is None


def test_the_applications_frozen_objects_stay_frozen(small_bulk: None) -> None:
    data = _saved()
    gc.collect()
    kept = [_Node() for _ in range(10)]
    gc.freeze()
    frozen = gc.get_freeze_count()
    assert frozen >= len(kept)
    mem = Memory.from_dict(data)
    assert gc.get_freeze_count() == frozen
    assert not _in_oldest_generation(mem._conv.turns[150])  # left to the collector instead


def test_a_collector_the_application_turned_off_stays_off(small_bulk: None) -> None:
    data = _saved()
    gc.disable()
    mem = Memory.from_dict(data)
    assert not gc.isenabled()
    assert not _in_oldest_generation(mem._conv.turns[150])


def test_reopening_from_a_store_lands_in_the_oldest_generation(
    small_bulk: None, tmp_path: object
) -> None:
    path = f"{tmp_path}/c.db"
    with SQLiteStore(path) as store:
        mem = store.open("c")
        for i in range(300):
            mem.append("user" if i % 2 == 0 else "assistant", f"turn {i} about the shed")
    gc.collect()
    with SQLiteStore(path) as store:
        again = store.open("c")
        assert gc.isenabled()
        assert _in_oldest_generation(again._conv.turns[150])
        assert again.compose("shed")["messages"]


def test_a_dropped_memory_is_freed_at_once_without_the_collector() -> None:
    """No Memory is a reference cycle (its follower holds its method weakly), so dropping
    one frees it there and then: freed only by a full collection, it cost a later call the
    walk of every object in the process."""
    gc.disable()
    mem = Memory(budget=2_000)
    for i in range(40):
        mem.append("user" if i % 2 == 0 else "assistant", f"turn {i}: the shed, yesterday")
    mem.compose("the shed?")
    mem.redact(3)
    ref = weakref.ref(mem)
    del mem
    assert ref() is None


def test_a_first_compose_leaves_the_collector_as_it_found_it() -> None:
    """Indexing a batch pauses the collector, and turns it back on only if it was on."""
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        mem = Memory(budget=2_000)
        for i in range(60):
            mem.append("user" if i % 2 == 0 else "assistant", f"turn {i} about the shed " * 5)
        mem.compose("the shed?")
        assert gc.isenabled() is enabled
