"""An MCP server over stdio, standard library only: a byheart store as tools for MCP hosts.

``byheart mcp --store chats.db`` (or ``python -m yait_byheart mcp``) reads one JSON-RPC message
per line on stdin and writes one per line on stdout; logs go to stderr.  It speaks the
``initialize`` handshake (revision 2025-11-25, and the older revisions a client asks for) and
answers ``server/discover`` and per-request ``_meta`` versions for clients of the stateless
2026-07-28 revision.  Tools: see `yait_byheart.mcp_server._tools` and docs/mcp.md.

Nothing a client sends stops the server: malformed JSON, unknown methods, wrong parameters and
oversized lines each get the protocol's error, and tool failures come back as results with
``isError: true``.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from datetime import datetime
from typing import IO, Any, TextIO

from .. import __version__
from ._tools import Store, Tools

__all__ = ["HANDSHAKE_VERSIONS", "MODERN_VERSIONS", "Server", "serve"]

#: Revisions reached through ``initialize``, newest first.
HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
#: Stateless revisions: every request names its version in ``_meta``.
MODERN_VERSIONS = ("2026-07-28",)
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR, UNSUPPORTED_VERSION = -32603, -32022
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
#: Longest line read (bytes); a longer one is skipped and answered with -32600.
MAX_LINE = 16 << 20
INSTRUCTIONS = (
    "Verbatim conversation memory. Call `remember` with each turn worth keeping (user and "
    "assistant), and `recall` with the user's new message to get the earlier turns that matter, "
    "word for word with their dates. `forget` deletes a conversation, a user's conversations, "
    "or blanks one turn."
)
# Revisions without structuredContent in tool results (it arrived in 2025-06-18).
_BEFORE_STRUCTURED = ("2025-03-26", "2024-11-05")
# Tool lists and discovery never change while a server runs: clients may cache them an hour.
_TTL_MS = 3_600_000


def server_info() -> dict[str, str]:
    """The server's name and version, as ``initialize`` and ``_meta`` report them."""
    return {"name": "byheart", "title": "byheart conversation memory", "version": __version__}


class RpcError(Exception):
    """A JSON-RPC error response to send."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def _error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


class Server:
    """The protocol: parses lines, dispatches methods, shapes results for the client's revision."""

    def __init__(self, tools: Tools, log: Callable[[str], None]) -> None:
        self.tools = tools
        self.log = log
        self.version = HANDSHAKE_VERSIONS[0]  # until a client's initialize says otherwise

    def handle_line(self, line: bytes) -> dict[str, Any] | None:
        """The response to one line, or None (a notification, a response, a blank line)."""
        if not line.strip():
            return None
        try:
            msg = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return _error(None, PARSE_ERROR, f"Parse error: {exc}")
        if isinstance(msg, list):
            return _error(None, INVALID_REQUEST, "Invalid Request: batches are not supported")
        rid = msg.get("id") if isinstance(msg, dict) else None
        if not isinstance(rid, (str, int)) or isinstance(rid, bool):
            rid = None
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return _error(rid, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 object")
        if "method" not in msg and ("result" in msg or "error" in msg):
            return None  # a response: this server sends no requests, so nothing waits for one
        if not isinstance(msg.get("method"), str):
            return _error(rid, INVALID_REQUEST, "Invalid Request: 'method' must be a string")
        if "id" not in msg:
            return None  # notifications (initialized, cancelled, ...) need no answer
        if rid is None:
            return _error(None, INVALID_REQUEST, "Invalid Request: 'id' must be a string or number")
        try:
            return {"jsonrpc": "2.0", "id": rid, "result": self.dispatch(msg["method"], msg)}
        except RpcError as exc:
            return _error(rid, exc.code, exc.message, exc.data)
        except Exception:  # a bug must cost one request, never the session
            self.log(f"internal error in {msg['method']}:\n{traceback.format_exc()}")
            return _error(rid, INTERNAL_ERROR, f"Internal error in {msg['method']}; see the log")

    def dispatch(self, method: str, msg: dict[str, Any]) -> dict[str, Any]:
        """The result of request `method`, shaped for the revision the request uses."""
        params = msg.get("params", {})
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: 'params' must be an object")
        meta = params.get("_meta")
        modern = isinstance(meta, dict) and VERSION_KEY in meta
        if isinstance(meta, dict) and modern:
            self._check_modern(meta)
        handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "initialize": self._initialize,
            "server/discover": self._discover,
            "ping": lambda _params: {},
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
        }
        if method not in handlers:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        result = handlers[method](params)
        if modern or method == "server/discover":
            result["resultType"] = "complete"
            result["_meta"] = {SERVER_INFO_KEY: server_info()}
        return result

    @staticmethod
    def _check_modern(meta: dict[str, Any]) -> None:
        requested = meta[VERSION_KEY]
        if requested not in MODERN_VERSIONS:
            raise RpcError(
                UNSUPPORTED_VERSION,
                f"Unsupported protocol version: {requested!r}",
                {"requested": str(requested), "supported": [*MODERN_VERSIONS, *HANDSHAKE_VERSIONS]},
            )

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            raise RpcError(INVALID_PARAMS, "Invalid params: 'protocolVersion' must be a string")
        # A revision we speak is accepted as asked; anything else gets our newest (the spec's rule).
        self.version = asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[0]
        client = params.get("clientInfo")
        name = client.get("name") if isinstance(client, dict) else None
        self.log(f"initialize from {name or 'a client'}: protocol {self.version}")
        return {
            "protocolVersion": self.version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": server_info(),
            "instructions": INSTRUCTIONS,
        }

    def _discover(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "supportedVersions": [*MODERN_VERSIONS, *HANDSHAKE_VERSIONS],
            "capabilities": {"tools": {"listChanged": False}},
            "instructions": INSTRUCTIONS,
            "cacheScope": "public",
            "ttlMs": _TTL_MS,
        }

    def _tools_list(self, params: dict[str, Any]) -> dict[str, Any]:
        tools = list(self.tools.schemas.values())
        return {"tools": tools, "cacheScope": "public", "ttlMs": _TTL_MS}

    def _tools_call(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str) or name not in self.tools.schemas:
            known = ", ".join(self.tools.schemas)
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name!r}; the tools are {known}")
        text, structured, is_error = self.tools.call(name, params.get("arguments", {}))
        result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": is_error}
        if structured and self.version not in _BEFORE_STRUCTURED:
            result["structuredContent"] = structured
        return result


def _read_line(stdin: IO[bytes]) -> tuple[bytes, bool]:
    """The next line (b"" at end of input) and whether it was cut at MAX_LINE (rest skipped)."""
    line = stdin.readline(MAX_LINE + 1)
    if len(line) <= MAX_LINE or line.endswith(b"\n"):
        return line, False
    while (rest := stdin.readline(1 << 20)) and not rest.endswith(b"\n"):
        pass
    return b"", True


def serve(
    store: Store,
    *,
    budget: int = 20_000,
    max_text: int = 100_000,
    user: str | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Serve `store` until stdin ends; returns the exit code (0).

    Args:
        store: an open ``SQLiteStore`` or ``PostgresStore``; the caller closes it.
        budget: characters, the budget of conversations that ``remember`` creates (default
            20,000; existing conversations keep theirs).
        max_text: characters, the longest turn ``remember`` accepts (default 100,000).
        user: serve this user only (default None: every user): each tool sees their
            conversations alone, answers another user's as absent and refuses another user
            id; conversations ``remember`` creates are theirs.
        stdin: binary stream the requests are read from (default: the process's stdin).
        stdout: binary stream the replies are written to (default: the process's stdout).
        stderr: text stream for log lines (default: the process's stderr).
    """
    rd = stdin if stdin is not None else sys.stdin.buffer
    wr = stdout if stdout is not None else sys.stdout.buffer
    err = stderr if stderr is not None else sys.stderr

    def log(message: str) -> None:
        print(f"byheart mcp: {message}", file=err, flush=True)

    # `remember` without `when` dates the turn now: the clock is read here, at the edge.
    tools = Tools(store, budget=budget, max_text=max_text, clock=lambda: datetime.now(),
                  user=user, log=log)  # fmt: skip
    server = Server(tools, log)
    whose = "" if user is None else f", user {user!r} only,"
    log(f"serving {getattr(store, 'path', 'a PostgreSQL store')}{whose} over stdio")
    while True:
        line, cut = _read_line(rd)
        if cut:
            reply: dict[str, Any] | None = _error(
                None, INVALID_REQUEST, f"Invalid Request: message longer than {MAX_LINE:,} bytes"
            )
        elif not line:
            return 0
        else:
            reply = server.handle_line(line)
        if reply is not None:
            data = json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
            wr.write(data.encode("utf-8") + b"\n")
            wr.flush()
