"""Issue 24 through the MCP server and the command line: servers sharing a conversation never
fail, `remember` retries with a key are safe, a small-budget `recall` bricks nothing, and a
damaged row is one line and an exit code, never a traceback."""

from __future__ import annotations

import json
import sqlite3
import sys
from datetime import datetime
from pathlib import Path

import pytest

from yait_byheart.mcp_server._tools import Tools
from yait_byheart.store import SQLiteStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_cli import run
from test_mcp_raw import INIT, Raw

NOON = datetime(2026, 12, 3, 12, 0)


def tools(store: SQLiteStore, hour: int = 12) -> Tools:
    return Tools(store, budget=2_000, max_text=10_000, clock=lambda: NOON.replace(hour=hour))


def test_remember_with_a_key_is_safe_to_retry(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        t = tools(store)
        first = {"conversation": "c", "text": "the ferry leaves at 7:40", "key": "msg-1"}
        assert t.call("remember", first)[1]["turn"] == 0
        assert (
            t.call("remember", {"conversation": "c", "text": "noted", "role": "assistant"})[2]
            is False
        )
        # The client did not see the answer and sends it again, an hour later by the clock.
        _, structured, error = tools(store, hour=13).call("remember", first)
        assert not error and structured == {"conversation": "c", "turn": 0, "turns": 2}
        text, _, error = t.call("remember", {**first, "text": "the ferry leaves at 8"})
        assert error and "key 'msg-1' already names turn 0" in text
        assert [t["text"] for t in store.export("c")["turns"]] == [
            "the ferry leaves at 7:40",
            "noted",
        ]


def test_a_small_budget_recall_leaves_the_conversation_usable(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SQLiteStore(path) as store:
        t = tools(store)
        for k in range(10):
            t.call("remember", {"conversation": "c", "text": f"turn {k} " + "lantern " * 41})
        _, _, error = t.call("recall", {"conversation": "c", "query": "lantern", "budget": 100})
        assert not error
    with SQLiteStore(path) as store:  # another server, after a restart
        t = tools(store)
        for call, args in (("recall", {"query": "turn 3"}), ("remember", {"text": "more"}),
                           ("recall", {"query": "more", "budget": 100})):  # fmt: skip
            text, _, error = t.call(call, {"conversation": "c", **args})
            assert not error, text
    assert run("compose", "c", "lantern", "--store", str(path)).returncode == 0
    assert run("stats", "c", "--store", str(path)).returncode == 0


def test_two_server_processes_on_one_conversation_never_fail(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    servers = [Raw(path), Raw(path)]
    for server in servers:
        assert "result" in server.request("initialize", INIT)
    n = 40
    for k in range(n):  # every request at once, so the two servers work at the same time
        for s, server in enumerate(servers):
            server.next_id += 1
            if k % 2 == 0:
                name, arguments = "remember", {"conversation": "c", "text": f"s{s} turn {k}",
                                               "key": f"s{s}-{k}"}  # fmt: skip
            else:
                name, arguments = "recall", {"conversation": "c", "query": f"turn {k - 1}"}
            params = {"name": name, "arguments": arguments}
            server.send({"jsonrpc": "2.0", "id": server.next_id, "method": "tools/call",
                         "params": params})  # fmt: skip
    failures = []
    for server in servers:
        for _ in range(n):
            result = server.reply()["result"]
            if result["isError"]:
                failures.append(result["content"][0]["text"])
        assert server.close()[0] == 0
    assert failures == []
    with SQLiteStore(path) as store:
        stored = [t["text"] for t in store.export("c")["turns"]]
    expected = {f"s{s} turn {k}" for s in range(2) for k in range(0, n, 2)}
    assert sorted(stored) == sorted(expected)


@pytest.fixture
def damaged(tmp_path: Path) -> str:
    path = str(tmp_path / "chats.db")
    with SQLiteStore(path) as store:
        for name in ("a", "b"):
            mem = store.open(name)
            for k in range(4):
                mem.append("user", f"{name} turn {k} about the ferry")
            mem.compose("ferry")
    db = sqlite3.connect(path)
    conv = "(SELECT id FROM conversations WHERE name = 'a')"
    db.execute(f"UPDATE turns SET record = ? WHERE idx = 1 AND conv = {conv}", (b"\x00\xff junk",))
    db.execute(f"UPDATE turns SET record = '[1, 2]' WHERE idx = 2 AND conv = {conv}")
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize(
    "args", [["show", "a"], ["export", "a"], ["compose", "a", "ferry"], ["stats", "a"]]
)
def test_a_damaged_row_is_one_line_and_exit_1(damaged: str, args: list[str]) -> None:
    proc = run(*args, "--store", damaged)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "conversation 'a', turns row 1 is damaged (not UTF-8 text" in proc.stderr
    assert "byheart check" in proc.stderr and proc.stdout == ""
    assert run(*args[:1], "b", *args[2:], "--store", damaged).returncode == 0  # b is fine


def test_check_lists_damaged_rows_and_repair_sets_them_aside(damaged: str) -> None:
    proc = run("check", "--store", damaged)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[:2] == [
        "'a': turns row 1: not UTF-8 text: byte 1 is b'\\xff'",
        "'a': turns row 2: not a turn: turns[2] should be dict, found list",
    ]
    listed = json.loads(run("check", "--json", "--store", damaged).stdout)
    assert [(d["table"], d["row"]) for d in listed] == [("turns", 1), ("turns", 2)]
    assert {d["conversation"] for d in listed} == {"a"}
    proc = run("repair", "--store", damaged)
    assert proc.returncode == 0 and proc.stdout.count("set aside 'a': turns row") == 2
    assert run("check", "--store", damaged).stdout == "no damaged rows in 2 conversations\n"
    shown = run("show", "a", "--store", damaged)
    assert shown.returncode == 0 and "a turn 3 about the ferry" in shown.stdout
    with SQLiteStore(damaged) as store:  # kept, byte for byte
        assert [t for t, _, _ in store.quarantined("a")] == ["turns", "turns"]
    db = sqlite3.connect(damaged)
    assert db.execute("SELECT data FROM quarantine ORDER BY idx").fetchall() == [
        (b"\x00\xff junk",),
        (b"[1, 2]",),
    ]
    db.close()
    assert run("repair", "--store", damaged).stdout == "nothing to repair: no damaged rows\n"
