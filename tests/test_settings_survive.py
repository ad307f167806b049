"""Settings that survive a restart (issue 19): callables are recorded, asked for, and restored."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests._sizes import sent_size, tokenish
from yait_byheart import Memory, MissingCallableWarning
from yait_byheart.store import SQLiteStore


class FirstWords:
    """A tiny retriever: stretches sharing more words with the query first."""

    def fit(self, docs: list[str]) -> None:
        self.docs = [set(d.lower().split()) for d in docs]

    def rank(self, query: str) -> list[int]:
        words = set(query.lower().split())
        return sorted(range(len(self.docs)), key=lambda k: (-len(self.docs[k] & words), k))


def every_third(stretch: list[dict[str, str]]) -> bool:
    return len(stretch) >= 3


def outside(query: str) -> list[dict[str, str]]:
    return [{"text": f"reference note on {query} and the harbour ferry", "source": "notes.md"}]


CALLABLES: dict[str, Any] = {
    "measure": tokenish,
    "retriever": FirstWords(),
    "boundaries": every_third,
    "external": outside,
}
TOPICS = ["harbour ferry times", "garden tomatoes", "violin lessons", "train to Lisbon"]


def talk(mem: Memory, start: int, n: int) -> None:
    for k in range(start, start + n):
        topic = TOPICS[k % len(TOPICS)]
        mem.append("user", f"question {k} about the {topic}: what changed this week?")
        mem.append("assistant", f"answer {k}: the {topic} moved to a new day and time")


def saved(data: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(json.dumps(data))
    return loaded


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_a_callable_is_recorded_and_asked_for_again(name: str) -> None:
    mem = Memory(budget=300, chunk=60, **{name: CALLABLES[name]})
    talk(mem, 0, 12)
    mem.compose("when is the harbour ferry?")
    data = saved(mem.to_dict())
    assert data["config"]["callables"] == [name]
    if name in ("retriever", "external"):  # issue 46: opened without it, with a warning
        with pytest.warns(MissingCallableWarning, match=rf"built with {name},.* pass {name}="):
            assert Memory.from_dict(data).compose("when is the harbour ferry?")["messages"]
    else:  # the unit of the budget, the layout of new turns: never silently changed
        with pytest.raises(ValueError, match=rf"built with {name},.*from_dict\(data, {name}="):
            Memory.from_dict(data)
    copy = Memory.from_dict(data, **{name: CALLABLES[name]})
    assert copy.to_dict() == mem.to_dict()
    for k in range(3):
        query = f"what about the {TOPICS[k]}?"
        assert copy.compose(query) == mem.compose(query)
        talk(mem, 20 + k, 2)
        talk(copy, 20 + k, 2)
    assert copy.to_dict() == mem.to_dict()


def test_all_callables_at_once_are_named_together() -> None:
    mem = Memory(budget=300, chunk=60, **CALLABLES)
    talk(mem, 0, 12)
    data = saved(mem.to_dict())
    assert sorted(data["config"]["callables"]) == sorted(CALLABLES)
    with pytest.raises(ValueError) as err, pytest.warns(MissingCallableWarning) as warned:
        Memory.from_dict(data)
    assert "measure=" in str(err.value) and "boundaries=" in str(err.value)
    assert "retriever=" not in str(err.value) and "external=" not in str(err.value)
    assert "retriever and external" in str(warned[0].message)


def test_a_memory_budgeted_in_tokens_stays_in_tokens() -> None:
    """The issue's case: 500 tokens came back as 500 characters."""
    mem = Memory(budget=500, measure=tokenish)
    talk(mem, 0, 60)
    first = mem.compose("what about the violin lessons?")
    assert sent_size(first, tokenish) <= mem.ceiling * 500
    data = saved(mem.to_dict())
    with pytest.raises(ValueError, match="measure"):
        Memory.from_dict(data)
    copy = Memory.from_dict(data, measure=tokenish)
    for k in range(4):
        query = f"and the {TOPICS[k]}?"
        ours, theirs = copy.compose(query), mem.compose(query)
        assert ours == theirs
        assert sent_size(ours, tokenish) <= copy.ceiling * 500
        assert sent_size(ours, len) > 1_000, "a token budget sends about four times as many chars"


def test_a_store_asks_for_the_callables_on_open(tmp_path: Any) -> None:
    path = tmp_path / "chats.db"
    with SQLiteStore(path) as store:
        mem = store.open("c1", budget=500, measure=tokenish)
        talk(mem, 0, 20)
        expected = mem.compose("the garden tomatoes?")
    with SQLiteStore(path) as store:
        with pytest.raises(ValueError, match="measure="):
            store.open("c1")
        again = store.open("c1", measure=tokenish)
        assert again.compose("the garden tomatoes?")["messages"] == expected["messages"]
        assert len(again) == 40
