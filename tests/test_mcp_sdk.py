"""The MCP server driven by the official `mcp` SDK as client, over stdio (skips without the SDK)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")
if not hasattr(mcp, "Client"):  # 1.x has no Client(mode=...) to choose the protocol era
    pytest.skip("needs the mcp SDK 2.x", allow_module_level=True)
from mcp.client.stdio import StdioServerParameters  # noqa: E402

ROOT = str(Path(__file__).resolve().parents[1])


def _params(store: Path) -> StdioServerParameters:
    env = {"PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "yait_byheart", "mcp", "--store", str(store)],
        env=env,
    )


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def _call(client: Any, name: str, **arguments: Any) -> Any:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, _text(result)
    return result


async def _session(store: Path, mode: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with mcp.Client(_params(store), mode=mode, read_timeout_seconds=60) as client:
        seen["version"] = client.protocol_version
        seen["server"] = client.server_info.name if client.server_info else None
        tools = await client.list_tools()
        seen["tools"] = sorted(t.name for t in tools.tools)
        seen["schemas"] = {t.name: t.input_schema for t in tools.tools}
        await _call(client, "remember", conversation="bakery", user="ana", when="8 May 2023",
                    text="We ordered the deck oven yesterday for 18,900 euro.")  # fmt: skip
        await _call(client, "remember", conversation="bakery", role="assistant",
                    when="8 May 2023", text="Noted: the deck oven, 18,900 euro.")  # fmt: skip
        await _call(client, "remember", conversation="garden", user="ben", when="9 May 2023",
                    text="The tomatoes go in the south bed next week.")  # fmt: skip
        recalled = await _call(
            client, "recall", conversation="bakery", query="what did the oven cost?"
        )
        seen["bakery"] = _text(recalled)
        seen["structured"] = recalled.structured_content
        seen["garden"] = _text(
            await _call(client, "recall", conversation="garden", query="tomatoes?")
        )
        seen["all"] = (await _call(client, "conversations")).structured_content["conversations"]
        seen["ana"] = (await _call(client, "conversations", user="ana")).structured_content
        await _call(client, "forget", conversation="bakery", turn=0)
        seen["redacted"] = _text(await _call(client, "recall", conversation="bakery", query="oven"))
        await _call(client, "forget", user="ben")
        seen["after_user"] = (await _call(client, "conversations")).structured_content
        await _call(client, "forget", conversation="bakery")
        seen["after_all"] = (await _call(client, "conversations")).structured_content
        missing = await client.call_tool("recall", {"conversation": "bakery", "query": "oven"})
        seen["missing"] = (missing.is_error, _text(missing))
        wrong = await client.call_tool("remember", {"conversation": "x", "text": 42})
        seen["wrong"] = (wrong.is_error, _text(wrong))
    return seen


# "legacy": the initialize handshake (2025-11-25); "auto": the SDK probes server/discover and
# then speaks the stateless 2026-07-28 revision, every request carrying its version in _meta.
@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_sdk_client_remembers_recalls_lists_and_forgets(
    tmp_path: Path, mode: str, version: str
) -> None:
    seen = asyncio.run(_session(tmp_path / "chats.db", mode))
    assert seen["version"] == version and seen["server"] == "byheart"
    assert seen["tools"] == ["conversations", "forget", "recall", "recall_across", "remember"]
    assert seen["schemas"]["remember"]["required"] == ["conversation", "text"]
    # Verbatim words, the date and the resolved relative date, and nothing of the other chat.
    assert "We ordered the deck oven yesterday [7 May 2023] for 18,900 euro." in seen["bakery"]
    assert "[8 May 2023]" in seen["bakery"] and "tomatoes" not in seen["bakery"]
    assert "Noted: the deck oven, 18,900 euro." in seen["bakery"]
    assert seen["structured"]["turns"] == 2 and seen["structured"]["included"] == [0, 1]
    assert "The tomatoes go in the south bed next week [15-21 May 2023]." in seen["garden"]
    assert "oven" not in seen["garden"]
    assert seen["all"] == ["bakery", "garden"]
    assert seen["ana"] == {"conversations": ["bakery"]}
    assert (
        "deck oven yesterday" not in seen["redacted"] and "Noted: the deck oven" in seen["redacted"]
    )
    assert seen["after_user"] == {"conversations": ["bakery"]}
    assert seen["after_all"] == {"conversations": []}
    assert seen["missing"][0] and "no conversation 'bakery'" in seen["missing"][1]
    assert seen["wrong"][0] and "'text' must be a string, got integer" in seen["wrong"][1]
