"""Messages a newcomer meets in the second hour (issue 22): each says what is wrong in the
terms of whoever reads it (a Python caller, a shell user, a model calling MCP tools), and a
`~` in a store path means the home folder."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from yait_byheart import Memory
from yait_byheart.cli import main
from yait_byheart.cli._io import store_location
from yait_byheart.mcp_server._tools import Tools
from yait_byheart.store import SQLiteStore

ROOT = Path(__file__).resolve().parent.parent


def test_redact_on_an_empty_memory_says_there_are_no_turns() -> None:
    with pytest.raises(IndexError) as err:
        Memory().redact(5)
    assert "no turns yet" in str(err.value) and "-1" not in str(err.value)
    mem = Memory()
    mem.append("user", "hello")
    with pytest.raises(IndexError, match="valid indices are 0 to 0"):
        mem.redact(3)


@pytest.fixture
def store(tmp_path: Path) -> str:
    path = str(tmp_path / "chats.db")
    with SQLiteStore(path) as s:
        s.open("known").append("user", "the ferry leaves at nine")
    return path


@pytest.mark.parametrize(
    "command", [["show"], ["compose", "--", "q?"], ["export"], ["delete"], ["stats"]]
)
def test_an_unknown_conversation_names_the_command_that_lists_them(
    store: str, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    name, *rest = command
    args = [name, "--store", store, "nope", *[a for a in rest if a != "--"]]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"byheart conversations --store {store}" in err, err
    assert "store.conversations()" not in err and "SQLiteStore" not in err


def test_the_suggested_command_is_spelled_as_the_user_ran_the_program(store: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "yait_byheart", "show", "nope", "--store", store],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1
    assert f"`python -m yait_byheart conversations --store {store}`" in proc.stderr


def _tools(path: str) -> Tools:
    clock = lambda: datetime(2026, 1, 5)  # noqa: E731
    return Tools(SQLiteStore(path), budget=2_000, max_text=1_000, clock=clock)


def test_mcp_errors_name_the_conversations_tool_not_a_python_call(store: str) -> None:
    tools = _tools(store)
    for name, args in [
        ("recall", {"conversation": "nope", "query": "ferry?"}),
        ("forget", {"conversation": "nope"}),
        ("forget", {"conversation": "nope", "turn": 0}),
    ]:
        text, _, is_error = tools.call(name, args)
        assert is_error and "the `conversations` tool lists" in text, text
        assert "store.conversations()" not in text and "Store." not in text, text


def test_mcp_forget_names_the_turn_it_blanked_and_the_turns_there_are(store: str) -> None:
    tools = _tools(store)
    tools.call("remember", {"conversation": "known", "text": "and returns at six"})
    text, _, is_error = tools.call("forget", {"conversation": "known", "turn": -1})
    assert not is_error and text == "turn 1 of 'known' blanked", text
    text, _, is_error = tools.call("forget", {"conversation": "known", "turn": 7})
    assert is_error and "turns 0 to 1" in text and "Memory." not in text, text


def test_mcp_remember_with_an_unreadable_when_says_so_in_tool_terms(store: str) -> None:
    tools = _tools(store)
    text, _, is_error = tools.call(
        "remember", {"conversation": "fresh", "text": "hi", "when": "someday"}
    )
    assert is_error and "`when`='someday'" in text, text
    assert "Memory" not in text and "resolve_time" not in text, text
    assert tools.call("conversations", {})[1]["conversations"] == ["known"]  # nothing created


def test_a_tilde_in_the_store_path_is_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with SQLiteStore(str(tmp_path / "chats.db")) as s:
        s.open("in-home").append("user", "hello")
    assert main(["conversations", "--store", "~/chats.db"]) == 0
    assert capsys.readouterr().out == "in-home\n"
    monkeypatch.setenv("BYHEART_STORE", "~/chats.db")
    assert main(["conversations"]) == 0
    assert capsys.readouterr().out == "in-home\n"
    assert not (Path.cwd() / "~").exists()


def test_the_mcp_command_opens_a_store_under_home(tmp_path: Path) -> None:
    # An MCP host starts `byheart mcp --store ~/chats.db` with no shell to expand the `~`.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "yait_byheart", "mcp", "--store", "~/mcp.db"],
        input="", capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "mcp.db").exists() and not (tmp_path / "~").exists()


def test_a_postgres_dsn_is_left_as_written() -> None:
    class Args:
        store = "postgresql://~user@host/db"

    assert store_location(Args()) == "postgresql://~user@host/db"  # type: ignore[arg-type]


def test_the_mcp_host_examples_name_the_program_by_full_path() -> None:
    # A host's PATH rarely holds the environment, and its `python` is rarely the environment's.
    page = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", page, re.S)]
    servers = [s for b in blocks for s in (b.get("mcpServers") or b.get("servers")).values()]
    assert len(servers) >= 2
    assert all(s["command"].startswith("/") for s in servers), servers
    for form in ("-m yait_byheart mcp", "uvx --from", "pipx run --spec", "sys.executable"):
        assert form in page.replace('", "', " ").replace('"', ""), form
