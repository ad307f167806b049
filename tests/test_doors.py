"""Every door reads the same arguments the same way (issues 45 and 46): `Memory.compose` and
`store.recall` read a question and its `when` through one path, the CLI and the MCP server
take and refuse what the API takes and refuses.  SQLite always; PostgreSQL when
BYHEART_TEST_PG_DSN reaches a server (see tests/test_store.py)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
import warnings
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from yait_byheart import Memory, MissingCallableWarning
from yait_byheart.cli import main
from yait_byheart.mcp_server._tools import Tools
from yait_byheart.store import PostgresStore, SQLiteStore

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import test_store  # noqa: E402
from test_store import Backend  # noqa: E402
from test_store_faults import refuse_writes  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}

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


# -- the command line ---------------------------------------------------------------------------


def _usage_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The stderr of a command line that must stop as a usage error (exit 2, argparse's)."""
    with pytest.raises(SystemExit) as stopped:
        main(list(args))
    assert stopped.value.code == 2
    return capsys.readouterr().err


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "chats.db")
    with SQLiteStore(path) as store:
        mem = store.open("diary", user="u", budget=600)
        _dated_history(mem)
    return path


def test_cli_usage_errors_exit_2(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert "empty" in _usage_error(capsys, "recall", "tulips", "--user", "", "--store", db)
    for empty in (["delete-user", ""], ["show", ""], ["conversations", "--user", ""]):
        assert "empty" in _usage_error(capsys, *empty, "--store", db)
    err = _usage_error(capsys, "recall", "q", "--user", "u", "--when", "32 May 2023", "--store", db)
    assert "cannot read a date in '32 May 2023'" in err and "None" not in err
    err = _usage_error(
        capsys, "compose", "diary", "q", "--budget", "99999999999999999", "--store", db
    )
    assert "out of range" in err and "config" not in err
    assert "seconds" in _usage_error(capsys, "--timeout", "nan", "conversations", "--store", db)
    assert "seconds" in _usage_error(capsys, "conversations", "--store", db, "--timeout", "-1")


def test_cli_recall_and_compose_read_when_as_the_api(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    asked = ["what did I do last weekend?", "--when", "16 May 2023", "--store", db]
    assert main(["recall", asked[0], "--user", "u", "--budget", "600", *asked[1:]]) == 0
    assert "Mount Tamalpais" in capsys.readouterr().out
    assert main(["compose", "diary", *asked]) == 0
    assert "Mount Tamalpais" in capsys.readouterr().out


def test_cli_import_refuses_a_when_append_refuses(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mem = Memory()
    with pytest.raises(ValueError, match="cannot read a date"):
        mem.append("user", "the tulip bulbs", when="32 May 2023")
    mem.append("user", "the tulip bulbs", when="31 May 2023")
    data = mem.to_dict()
    data["turns"][0]["when"] = "32 May 2023"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    assert main(["import", "bad", str(path), "--store", db]) == 1
    assert "turn 0 has when='32 May 2023'" in capsys.readouterr().err
    with SQLiteStore(db) as store:
        assert store.conversations() == ["diary"]  # nothing stored
        free = Memory(resolve_time=False)
        free.append("user", "kept as given", when="sometime in spring")
        store.import_("free", free.to_dict())  # a free-form label is what such a Memory keeps


def test_cli_takes_a_lock_timeout(db: str) -> None:
    """`--timeout` reaches the store: a write blocked by another process's lock gives up
    after the seconds asked for (the default waits 5 s)."""
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's write transaction
    try:
        start = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "yait_byheart", "--timeout", "0.2", "delete", "diary",
             "--store", db],
            capture_output=True, text=True, env=ENV, timeout=60,
        )  # fmt: skip
        took = time.monotonic() - start
    finally:
        holder.rollback()
        holder.close()
    assert proc.returncode == 3, proc.stderr
    assert "lock" in proc.stderr.lower() or "busy" in proc.stderr.lower()
    assert took < 4.5  # 0.2 s of waiting, plus an interpreter's start on a busy machine
    with SQLiteStore(db) as store:
        assert store.conversations() == ["diary"]


# -- the MCP server ---------------------------------------------------------------------------


def _tools(store: SQLiteStore | PostgresStore, **kw: Any) -> Tools:
    return Tools(store, budget=600, max_text=10_000, clock=lambda: datetime(2023, 5, 16), **kw)


def test_mcp_conversations_quotes_an_id_with_a_line_break(backend: Backend) -> None:
    with backend.store() as store:
        store.open("one\ntwo").append("user", "x")
        store.open("three").append("user", "y")
        text, structured, is_error = _tools(store).call("conversations", {})
    assert not is_error and text.splitlines() == ["'one\\ntwo'", "three"]
    assert structured == {"conversations": ["one\ntwo", "three"]}


def test_mcp_recall_across_takes_when(backend: Backend) -> None:
    with backend.store() as store:
        _dated_history(store.open("diary", user="u", budget=600))
        tools = _tools(store)
        ask = {"user": "u", "query": "what did I do last weekend?", "budget": 600}
        text, _, is_error = tools.call("recall_across", {**ask, "when": "16 May 2023"})
        assert not is_error and "Mount Tamalpais" in text
        asked = {"conversation": "diary", "query": ask["query"], "when": "16 May 2023"}
        text, _, is_error = tools.call("recall", asked)
        assert not is_error and "Mount Tamalpais" in text
        text, _, is_error = tools.call("recall_across", {**ask, "when": "32 May 2023"})
        assert is_error and "cannot read a date" in text and "None" not in text
        for name, args in (("recall_across", {"user": "u"}), ("recall", {"conversation": "diary"})):
            text, _, is_error = tools.call(name, {**args, "query": "  "})
            assert is_error and "query is blank" in text and "Memory" not in text, name


def test_mcp_a_read_only_store_is_reported_once_cleanly(backend: Backend) -> None:
    logged: list[str] = []
    with backend.store() as store:
        _dated_history(store.open("diary", user="u", budget=600))
        tools = _tools(store, log=logged.append)
        refuse_writes(store)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # nothing may reach Python's warning machinery
            for k in range(3):
                text, _, is_error = tools.call(
                    "recall", {"conversation": "diary", "query": f"tax forms number {k}?"}
                )
                assert not is_error and "tax forms" in text
    assert len(logged) == 1 and "SelectionNotSavedWarning" in logged[0]
    assert "read-only" in logged[0] and ".py" not in logged[0]


async def _one_users_session(store: str) -> dict[str, Any]:
    """Through the MCP SDK's client, a server started with `--user ana`."""
    mcp = pytest.importorskip("mcp")
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "yait_byheart", "mcp", "--store", store, "--user", "ana", "--timeout", "10"],
        env={"PYTHONPATH": ENV["PYTHONPATH"]},
    )
    seen: dict[str, Any] = {}

    async def call(name: str, **arguments: Any) -> tuple[bool, str]:
        result = await client.call_tool(name, arguments)
        return result.is_error, "\n".join(block.text for block in result.content)

    async with mcp.Client(params, mode="legacy", read_timeout_seconds=60) as client:
        seen["remember"] = await call("remember", conversation="bakery", text="the oven is hot")
        seen["list"] = await call("conversations")
        seen["list_ben"] = await call("conversations", user="ben")
        seen["recall_ben"] = await call("recall", conversation="garden", query="tomatoes?")
        seen["across"] = await call("recall_across", query="tomatoes oven?")
        seen["across_ben"] = await call("recall_across", user="ben", query="tomatoes?")
        seen["as_ben"] = await call("remember", conversation="x", user="ben", text="hi")
        seen["taken"] = await call("remember", conversation="garden", text="mine now")
        seen["forget_ben"] = await call("forget", conversation="garden")
        seen["forget_user"] = await call("forget", user="ben")
        seen["redact_ben"] = await call("forget", conversation="garden", turn=0)
    return seen


def test_mcp_user_serves_one_users_conversations_only(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    path = str(tmp_path / "chats.db")
    with SQLiteStore(path) as store:
        store.open("garden", user="ben").append("user", "the tomatoes go in the south bed")
    seen = asyncio.run(_one_users_session(path))
    assert seen["remember"][0] is False
    assert seen["list"] == (False, "bakery")
    for name in ("list_ben", "across_ben", "as_ben", "forget_user"):
        is_error, text = seen[name]
        assert is_error and "serves user 'ana' only" in text, name
    for name in ("recall_ben", "forget_ben", "redact_ben"):
        is_error, text = seen[name]
        assert is_error and "no conversation 'garden'" in text and "tomatoes" not in text, name
    assert seen["across"][0] is False and "tomatoes" not in seen["across"][1]
    assert seen["taken"][0] and "taken" in seen["taken"][1] and "ben" not in seen["taken"][1]
    with SQLiteStore(path) as store:  # ben's conversation is as it was
        assert store.conversations(user="ben") == ["garden"]
        assert store.conversations(user="ana") == ["bakery"]
        assert store.export("garden")["turns"][0]["text"] == "the tomatoes go in the south bed"


# -- a conversation created with a callable reopens without it (issue 46) -----------------------


def test_a_conversation_made_with_callables_reopens_without_them(
    backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    with backend.store() as store:
        trip = store.open("trip", user="alice", external=store.recall_source(user="alice"))
        trip.append("user", "we booked the Hotel Alfama in Lisbon", when="2 May 2023")
        trip.compose("which hotel?")
    with backend.store() as store, pytest.warns(MissingCallableWarning) as warned:
        again = store.open("trip", user="alice")
        assert "Hotel Alfama" in str(again.compose("which hotel?")["messages"])
        again.append("assistant", "Noted.")
        logged: list[str] = []
        tools = _tools(store, log=logged.append)
        text, _, is_error = tools.call("recall", {"conversation": "trip", "query": "hotel?"})
        assert not is_error and "Hotel Alfama" in text
        text, _, is_error = tools.call("remember", {"conversation": "trip", "text": "and a car"})
        assert not is_error and "turn 2" in text
    message = str(warned[0].message)
    assert "external" in message and "pass external=" in message and "store.open" in message
    assert len(logged) == 1 and "MissingCallableWarning" in logged[0]
    if backend.kind == "sqlite":  # the command line on the same store
        assert main(["compose", "trip", "which hotel?", "--store", backend.location]) == 0
        out, err = capsys.readouterr()
        assert "Hotel Alfama" in out
        assert err.count("warning:") == 1 and "opened without it" in err and ".py" not in err


def test_a_conversation_made_with_a_measure_still_asks_for_it(backend: Backend) -> None:
    """A budget counted by `measure` would silently mean characters: refused, as before."""
    with backend.store() as store:
        store.open("tokens", budget=500, measure=lambda s: len(s) // 4).append("user", "x")
    with backend.store() as store, pytest.raises(ValueError, match="measure="):
        store.open("tokens")
