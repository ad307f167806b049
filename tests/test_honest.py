"""Honest messages and counters (issue 19): a failed journal write changes nothing, counters
count what their names say, and non-finite numbers are refused by name."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest

from tests._sizes import sent_text
from yait_byheart import Memory, Tuning


class Failing:
    """A journal that fails the chosen writes, as a store does when another writer won."""

    def __init__(self, *failing: str) -> None:
        self.failing = set(failing)
        self.seen: list[str] = []

    def _write(self, what: str) -> None:
        self.seen.append(what)
        if what in self.failing:
            raise RuntimeError(f"journal: {what} failed")

    def turn_appended(self, index: int, record: dict[str, Any]) -> None:
        self._write("turn_appended")

    def turn_redacted(self, index: int, record: dict[str, Any]) -> None:
        self._write("turn_redacted")

    def state_changed(self, state: dict[str, Any]) -> None:
        self._write("state_changed")


def conversation(**settings: Any) -> Memory:
    mem = Memory(budget=400, chunk=90, **settings)
    for k in range(30):
        day = "8 May 2023"
        mem.append("user", f"question {k}: how is the ferry number {k % 5} running?", when=day)
        mem.append("assistant", f"answer {k}: ferry {k % 5} runs at {k} o'clock", when=day)
    return mem


def snapshot(mem: Memory) -> tuple[str, dict[str, int], int]:
    return json.dumps(mem.to_dict()), mem.stats, len(mem)


QUERIES = ["how is ferry 3 running?", "and ferry 1?", "what about ferry 3 again?"]


@pytest.mark.parametrize("done", [0, 1, 2])
def test_a_failed_write_during_compose_leaves_the_memory_as_it_was(done: int) -> None:
    mem, twin = conversation(), conversation()
    for query in QUERIES[:done]:
        mem.compose(query)
        twin.compose(query)
    before = snapshot(mem)
    mem.attach_journal(Failing("state_changed"))
    with pytest.raises(RuntimeError, match="state_changed failed"):
        mem.compose(QUERIES[done])
    assert snapshot(mem) == before
    mem.attach_journal(None)
    assert mem.compose(QUERIES[done]) == twin.compose(QUERIES[done])
    assert snapshot(mem) == snapshot(twin)


@pytest.mark.parametrize("failing", ["turn_redacted", "state_changed"])
def test_a_failed_write_during_redact_leaves_the_memory_as_it_was(failing: str) -> None:
    mem, twin = conversation(), conversation()
    mem.compose(QUERIES[0])
    twin.compose(QUERIES[0])
    before = snapshot(mem)
    mem.attach_journal(Failing(failing))
    with pytest.raises(RuntimeError):
        mem.redact(7)
    assert snapshot(mem) == before
    mem.attach_journal(None)
    assert mem.compose(QUERIES[1]) == twin.compose(QUERIES[1])


def test_a_failed_write_during_append_stores_nothing() -> None:
    mem = conversation()
    before = snapshot(mem)
    mem.attach_journal(Failing("turn_appended"))
    with pytest.raises(RuntimeError):
        mem.append("user", "this turn was never stored")
    with pytest.raises(RuntimeError):
        mem.append_message({"role": "user", "parts": [{"type": "text", "text": "nor this"}]})
    assert snapshot(mem) == before


def documented_stats() -> set[str]:
    doc = Memory.stats.__doc__ or ""
    return set(re.findall(r"`(\w+)`", doc))


def test_every_counter_is_documented_and_counts_what_it_says() -> None:
    documented = documented_stats()
    assert {"turns", "units", "composes", "redactions", "trimmed"} <= documented
    mem = Memory(budget=300, chunk=60)
    composes = 0
    for k in range(40):
        mem.append("user", f"note {k} about the harbour ferry and the timetable")
        mem.append("assistant", f"noted {k}")
        if k % 4 == 3:
            mem.compose(f"what was note {k - 2}?")
            composes += 1
    mem.redact(3)
    mem.redact(3)  # already blank: not counted again
    mem.redact(5)
    mem.compose()
    composes += 1
    stats = mem.stats
    assert set(stats) <= documented, set(stats) - documented
    assert stats["turns"] == 80 == len(mem)
    assert "appended" not in stats
    assert stats["units"] == mem.stretch_count
    assert stats["composes"] == composes
    assert stats["passthrough"] + stats["assembled"] == composes
    assert stats["kept"] + stats["joined"] + stats["reselects"] == composes
    assert stats["redactions"] == 2
    reopened = Memory.from_dict(json.loads(json.dumps(mem.to_dict())))
    assert reopened.stats == stats


BAD_NUMBERS = [math.inf, -math.inf, math.nan]


@pytest.mark.parametrize(
    "name", ["budget", "chunk", "stability", "ceiling", "external_margin", "external_share",
             "external_max"],
)  # fmt: skip
@pytest.mark.parametrize("value", BAD_NUMBERS)
def test_non_finite_settings_are_refused_by_name(name: str, value: float) -> None:
    with pytest.raises(ValueError, match=rf"Memory\(\): {name}=.*; use a number from"):
        Memory(**{name: value})


@pytest.mark.parametrize(("name", "value"), [("budget", -1), ("budget", 0), ("chunk", 0),
                                             ("stability", -0.1), ("stability", 1.5),
                                             ("ceiling", 0.5), ("budget", 10**13)])  # fmt: skip
def test_out_of_range_settings_are_refused_by_name(name: str, value: float) -> None:
    with pytest.raises(ValueError, match=rf"Memory\(\): {name}=.*; use a number from"):
        Memory(**{name: value})


@pytest.mark.parametrize("value", BAD_NUMBERS)
def test_non_finite_tuning_is_refused_by_name(value: float) -> None:
    with pytest.raises(ValueError, match="Tuning: strong_join=.*use a finite number"):
        Tuning(strong_join=value)


def test_saved_non_finite_settings_are_refused_by_from_dict() -> None:
    data = json.loads(json.dumps(conversation().to_dict()))
    data["config"]["budget"] = math.inf
    with pytest.raises(ValueError, match=r"Memory\.from_dict: config is not valid: .*budget"):
        Memory.from_dict(data)


def test_a_refused_compose_keeps_what_was_sent_before() -> None:
    mem = conversation()
    first = mem.compose(QUERIES[0])
    with pytest.raises(ValueError, match="blank"):
        mem.compose("   ")
    assert mem.compose(QUERIES[0])["messages"][:-1] == first["messages"][:-1]
    assert "ferry" in sent_text(first)
