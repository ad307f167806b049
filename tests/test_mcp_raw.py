"""The MCP server over raw JSON-RPC lines: bad input gets the protocol's error, never a crash."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from yait_byheart.mcp_server import MAX_LINE

ROOT = str(Path(__file__).resolve().parents[1])
CASES = json.loads((Path(__file__).parent / "data" / "mcp_bad_lines.json").read_text())["cases"]
ENV = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


class Raw:
    """A server process spoken to one line at a time."""

    def __init__(self, store: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "yait_byheart", "mcp", "--store", str(store), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
        )  # fmt: skip
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.next_id = 100

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        line = self.lines.get(timeout=60)
        assert line.endswith(b"\n") and line.count(b"\n") == 1  # one message per line
        msg: dict[str, Any] = json.loads(line)
        assert msg["jsonrpc"] == "2.0"
        return msg

    def ask(self, message: dict[str, Any] | bytes) -> dict[str, Any]:
        self.send(message)
        return self.reply()

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        self.next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        out = self.ask(msg)
        assert out["id"] == self.next_id
        return out

    def tool(self, name: str, **arguments: Any) -> tuple[str, bool, dict[str, Any]]:
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        text = "\n".join(block["text"] for block in result["content"])
        return text, result["isError"], result.get("structuredContent", {})

    def close(self) -> tuple[int, str]:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        return code, self.proc.stderr.read().decode()


@pytest.fixture
def server(tmp_path: Path) -> Any:
    raw = Raw(tmp_path / "chats.db")
    yield raw
    if raw.proc.poll() is None:
        raw.close()


def test_handshake_then_two_conversations(server: Raw) -> None:
    init = server.request("initialize", INIT)["result"]
    assert init["protocolVersion"] == "2025-11-25"
    assert init["capabilities"] == {"tools": {"listChanged": False}}
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})  # no reply
    assert server.request("ping")["result"] == {}
    tools = server.request("tools/list")["result"]["tools"]
    assert {t["name"]: t["inputSchema"]["type"] for t in tools} == {
        "remember": "object", "recall": "object", "forget": "object", "conversations": "object",
        "recall_across": "object",
    }  # fmt: skip
    server.tool("remember", conversation="a", text="the code word is marmalade", when="1 June 2024")
    server.tool(
        "remember", conversation="b", text="the code word is lighthouse", when="2 June 2024"
    )
    text, error, _ = server.tool("recall", conversation="a", query="code word?")
    assert not error and "the code word is marmalade" in text and "lighthouse" not in text
    assert "[1 June 2024]" in text
    assert server.tool("conversations")[2] == {"conversations": ["a", "b"]}
    assert not server.tool("forget", conversation="a")[1]
    assert server.tool("conversations")[2] == {"conversations": ["b"]}
    code, log = server.close()
    assert code == 0 and "serving" in log


def test_bad_input_is_answered_and_the_server_keeps_going(server: Raw) -> None:
    server.request("initialize", INIT)
    for case in CASES:
        reply = server.ask(case["line"].encode())
        assert reply["error"]["code"] == case["code"], case["why"]
        assert isinstance(reply["error"]["message"], str) and reply["error"]["message"]
    assert server.ask(b"\xff\xfe")["error"]["code"] == -32700  # not UTF-8
    # Wrong argument types and unknown conversations: tool errors the model can read.
    text, error, _ = server.tool("remember", conversation=["a"], text=5, role="bot")
    assert error and "'conversation' must be a string, got array" in text
    assert "'role' must be one of 'user', 'assistant', got 'bot'" in text
    text, error, _ = server.tool("recall", conversation="ghost", query="anything")
    assert error and "no conversation 'ghost'" in text
    text, error, _ = server.tool("forget", user="u", turn=3)
    assert error and "pass `conversation`" in text
    text, error, _ = server.tool("remember", conversation="a", text="   ")
    assert error and "blank" in text
    text, error, _ = server.tool("remember", conversation="a", text="x" * 100_001)
    assert error and "the limit is 100,000" in text
    assert server.tool("conversations")[2] == {"conversations": []}  # nothing half-stored
    # A line past the limit is skipped whole, and the next one is read normally.
    assert (
        server.ask(b'{"jsonrpc":"2.0","id":9,"x":"' + b"y" * MAX_LINE + b'"}')["error"]["code"]
        == -32600
    )
    text, error, _ = server.tool("remember", conversation="a", text="still here", when="")
    assert not error and "turn 0" in text
    code, log = server.close()
    assert code == 0 and "Traceback" not in log


def test_older_and_unknown_revisions(server: Raw) -> None:
    assert (
        server.request("initialize", {**INIT, "protocolVersion": "2024-11-05"})["result"][
            "protocolVersion"
        ]
        == "2024-11-05"
    )
    assert (
        server.request("initialize", {**INIT, "protocolVersion": "1999-01-01"})["result"][
            "protocolVersion"
        ]
        == "2025-11-25"
    )
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    found = server.request("server/discover", {"_meta": meta})["result"]
    assert "2026-07-28" in found["supportedVersions"] and found["resultType"] == "complete"
    listed = server.request("tools/list", {"_meta": meta})["result"]
    assert listed["resultType"] == "complete" and len(listed["tools"]) == 5
    wrong = server.request(
        "tools/list", {"_meta": {**meta, "io.modelcontextprotocol/protocolVersion": "2030-01-01"}}
    )
    assert wrong["error"]["code"] == -32022
    assert "2026-07-28" in wrong["error"]["data"]["supported"]


def test_a_file_that_is_not_a_store_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"my notes, not a database\n")
    proc = subprocess.run(
        [sys.executable, "-m", "yait_byheart", "mcp", "--store", str(path)],
        input=b"", capture_output=True, env=ENV, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 3 and proc.stdout == b""
    assert "not a SQLite database" in proc.stderr.decode()
    assert "Traceback" not in proc.stderr.decode()
    assert path.read_bytes() == b"my notes, not a database\n"
