"""The MCP server in process: no line or tool argument makes it raise; servers share a store."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yait_byheart.mcp_server import Server
from yait_byheart.mcp_server._tools import Tools
from yait_byheart.store import SQLiteStore

NOON = datetime(2026, 12, 3, 12, 0)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)
KEYS = ["conversation", "text", "role", "when", "user", "query", "budget", "turn", "other"]
ARGUMENTS = JSON | st.dictionaries(
    st.sampled_from(KEYS),
    JSON | st.sampled_from(["c1", "c2", "user", "assistant", "8 May 2023", "", " ", "-1"]),
    max_size=6,
)
METHODS = ["initialize", "ping", "tools/list", "tools/call", "server/discover", "nope"]


def _tools(store: SQLiteStore) -> Tools:
    return Tools(store, budget=2_000, max_text=1_000, clock=lambda: NOON)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with tempfile.TemporaryDirectory() as tmp, SQLiteStore(Path(tmp) / "s.db") as store:
        yield Server(_tools(store), log=lambda message: None)


def _well_formed(reply: dict[str, Any] | None) -> None:
    if reply is None:
        return
    assert reply["jsonrpc"] == "2.0" and ("result" in reply) != ("error" in reply)
    json.dumps(reply, allow_nan=False)  # always serialisable as one line
    if "error" in reply:
        assert isinstance(reply["error"]["code"], int) and reply["error"]["message"]


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(line=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_any_bytes_get_an_answer_or_silence(server: Server, line: bytes) -> None:
    _well_formed(server.handle_line(line))


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    method=st.sampled_from(METHODS),
    name=st.sampled_from(["remember", "recall", "forget", "conversations", "nope"]) | JSON,
    arguments=ARGUMENTS,
    rid=st.integers() | st.text(),
)
def test_any_request_gets_a_well_formed_answer(
    server: Server, method: str, name: Any, arguments: Any, rid: Any
) -> None:
    params = {"name": name, "arguments": arguments, "protocolVersion": "2025-11-25"}
    reply = server.handle_line(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method,
                                           "params": params}).encode())  # fmt: skip
    _well_formed(reply)
    assert reply is not None and reply["id"] == rid
    if method == "tools/call" and "result" in reply:
        assert reply["result"]["content"][0]["text"]  # errors say what went wrong
    # ...and the server still answers a plain request afterwards.
    assert server.handle_line(b'{"jsonrpc":"2.0","id":0,"method":"ping"}') == {
        "jsonrpc": "2.0", "id": 0, "result": {},
    }  # fmt: skip


def test_two_servers_on_one_store_see_each_others_turns(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    with SQLiteStore(path) as a_store, SQLiteStore(path) as b_store:
        a, b = _tools(a_store), _tools(b_store)
        assert not a.call("remember", {"conversation": "c", "text": "first, from A"})[2]
        assert not b.call("remember", {"conversation": "c", "text": "second, from B"})[2]
        # A's open Memory catches up with B's turn before it appends: no conflict, no reopen.
        text, structured, error = a.call("remember", {"conversation": "c", "text": "third, A"})
        assert not error and structured["turn"] == 2
        recalled = b.call("recall", {"conversation": "c", "query": "first second third"})[0]
        assert recalled.index("first, from A") < recalled.index("second, from B")
        assert recalled.index("second, from B") < recalled.index("third, A")
        assert not a.call("forget", {"conversation": "c"})[2]
        text, _, error = b.call("remember", {"conversation": "c", "text": "after the delete"})
        assert not error and "turn 0" in text  # a fresh conversation, not the deleted one


def test_remember_without_when_dates_the_turn_with_the_clock(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        tools = _tools(store)
        tools.call("remember", {"conversation": "c", "text": "see you tomorrow"})
        tools.call("remember", {"conversation": "c", "text": "undated", "when": ""})
        turns = store.export("c")["turns"]
    assert turns[0]["when"] == "3 December 2026 12:00"
    assert "tomorrow [4 December 2026]" in turns[0]["shown"]
    assert "when" not in turns[1]


def test_a_blank_remember_is_named_once(tmp_path: Path) -> None:
    with SQLiteStore(str(tmp_path / "chats.db")) as store:
        text, _, error = _tools(store).call("remember", {"conversation": "c", "text": "  \n"})
    assert error and text == "remember: text is blank; pass the words to remember"
