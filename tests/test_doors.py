"""Every door reads the same arguments the same way (issues 45 and 46): `Memory.compose` and
`store.recall` read a question and its `when` through one path, the CLI and the MCP server
take and refuse what the API takes and refuses.  SQLite always; PostgreSQL when
BYHEART_TEST_PG_DSN reaches a server (see tests/test_store.py)."""

from __future__ import annotations

import sys
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from yait_byheart import Memory

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import test_store  # noqa: E402
from test_store import Backend  # noqa: E402

backend = test_store.backend  # the fixture, under the name the tests ask for

TOPICS = ["sourdough starter", "tax forms", "bike repair", "piano lessons", "tomato seedlings"]


def _dated_history(mem: Memory) -> None:
    """Five weeks of short exchanges, one a day; Saturday 13 May 2023's names no topic."""
    start = date(2023, 4, 10)
    for k in range(35):
        day = start + timedelta(days=k)
        words = (
            "I went hiking on Mount Tamalpais with Jo, great views"
            if day == date(2023, 5, 13)
            else f"notes about {TOPICS[k % 5]} number {k}: checked, sorted and written down"
        )
        mem.append("user", words, when=day)
        mem.append("assistant", f"Noted ({k}).", when=day)


def test_recall_finds_the_day_compose_finds(backend: Backend) -> None:
    question = "what did I do last weekend?"
    with backend.store() as store:
        mem = store.open("diary", user="u", budget=600)
        _dated_history(mem)
        sent = mem.compose(question, when="16 May 2023")
        found = store.recall(question, user="u", when="16 May 2023", budget=600)
    assert "Mount Tamalpais" in str(sent["messages"])
    assert found and "Mount Tamalpais" in found[0]["text"]
    assert found[0]["when"].startswith("13 May 2023")


def test_when_none_means_undated_at_every_door(backend: Backend) -> None:
    with backend.store() as store:
        mem = store.open("c", user="u")
        mem.append("user", "the tulip bulbs went in today", when=None)
        assert "when" not in mem.to_dict()["turns"][0]  # undated
        none, blank = mem.compose("tulip bulbs?", when=None), mem.compose("tulip bulbs?", when="")
        assert none["messages"] == blank["messages"]
        assert store.recall("tulip bulbs?", user="u", when="")[0]["turns"] == [0]
        assert store.recall("tulip bulbs?", user="u", when=None)[0]["turns"] == [0]


@pytest.mark.parametrize("query", ["", "   \n"])
def test_a_blank_query_is_refused_by_recall_as_by_compose(backend: Backend, query: str) -> None:
    with backend.store() as store:
        mem = store.open("c", user="u")
        mem.append("user", "the tulip bulbs")
        with pytest.raises(ValueError, match=r"Memory\.compose: query is blank"):
            mem.compose(query)
        with pytest.raises(ValueError, match=r"Store\.recall: query is blank"):
            store.recall(query, user="u")
        with pytest.raises(ValueError, match=r"Store\.recall: query is blank"):
            store.recall(query, user=None)  # refused before "no user, nothing to recall"


def test_a_lone_surrogate_is_refused_by_recall_as_by_compose(backend: Backend) -> None:
    with backend.store() as store:
        mem = store.open("c", user="u")
        mem.append("user", "the tulip bulbs")
        for call in (mem.compose, lambda q: store.recall(q, user="u")):
            with pytest.raises(ValueError, match="lone surrogate"):
                call("tulip \ud800 bulbs")


def test_an_aware_datetime_keeps_its_offset_as_an_iso_string_does() -> None:
    late = datetime(2023, 5, 16, 23, 30, tzinfo=timezone(timedelta(hours=2)))
    mem = Memory()
    mem.append("user", "we planted the tulip bulbs last Saturday", when=late)
    mem.append("user", "and the crocus bulbs", when="2023-05-16T23:30:00+02:00")
    first, second = mem.to_dict()["turns"]
    assert first["when"] == "16 May 2023 23:30 +02:00"
    assert "+02:00" in second["when"]
    assert "[13 May 2023]" in mem.compose("tulips?", when=late)["messages"][0]["parts"][0]["text"]
    naive = Memory()
    naive.append("user", "x", when=late.replace(tzinfo=None))
    assert naive.to_dict()["turns"][0]["when"] == "16 May 2023 23:30"
