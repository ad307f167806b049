"""Helpers shared by the limit tests: a message's size as the library measures it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from yait_byheart._turns.render import tool_line


def sent_size(result: dict[str, Any], measure: Callable[[str], int] = len) -> int:
    """Every part of every message, measured one by one (tool parts as their text form)."""
    return sum(
        measure(p["text"]) if p["type"] == "text" else measure(tool_line(p))
        for m in result["messages"]
        for p in m["parts"]
    )


def sent_text(result: dict[str, Any]) -> str:
    return "\n".join(
        p["text"] if p["type"] == "text" else tool_line(p)
        for m in result["messages"]
        for p in m["parts"]
    )


def tokenish(text: str) -> int:
    """A token-like counter: about four characters a token."""
    return (len(text) + 3) // 4
