"""Neutral messages with tool parts: checking them and taking them apart into a turn.

A `tool_call` part (assistant messages) is {"type": "tool_call", "id", "name", "arguments"},
arguments a JSON string; a `tool_result` part (user messages, as Anthropic and Gemini carry
them) is {"type": "tool_result", "id", "output", "is_error"?}. A message may also carry an
`item`: the framework's own record of it (any JSON value), kept beside the parts.

>>> check_part({"type": "tool_call", "id": "c1", "name": "f", "arguments": "{}"}, "part")
{'type': 'tool_call', 'id': 'c1', 'name': 'f', 'arguments': '{}'}
"""

from __future__ import annotations

import json
from collections.abc import Container
from typing import Any

from .render import TURN_JOIN, Part

_FIELDS = {
    "tool_call": {"id": str, "name": str, "arguments": str},
    "tool_result": {"id": str, "output": str},
}


def check_part(raw: object, where: str) -> Part:
    """A copy of one tool part, checked; TypeError/ValueError naming `where` and the fix."""
    if not isinstance(raw, dict):
        raise TypeError(f"{where} must be a dict, got {type(raw).__name__}")
    kind = raw.get("type")
    fields = _FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        raise ValueError(f"{where} has type {kind!r}; use 'text', 'tool_call' or 'tool_result'")
    part: Part = {"type": kind}
    for name, cls in fields.items():
        value = raw.get(name)
        if not isinstance(value, cls):
            raise TypeError(f"{where}[{name!r}] must be a {cls.__name__}, got {value!r:.40}")
        part[name] = value
    if not part["id"]:
        raise ValueError(f"{where} has an empty id; tool calls and results pair by id")
    if kind == "tool_call":
        try:
            json.loads(part["arguments"])
        except ValueError:
            raise ValueError(
                f"{where}['arguments'] is not valid JSON; pass the arguments as a JSON string "
                'such as \'{"city": "Paris"}\''
            ) from None
    if "is_error" in raw:
        if not isinstance(raw["is_error"], bool):
            raise TypeError(f"{where}['is_error'] must be a bool")
        if raw["is_error"]:
            part["is_error"] = True
    return part


def split_message(message: object, call: str) -> tuple[str, str, tuple[Part, ...]]:
    """A neutral message as (role, text, tool parts); text parts are joined by a blank line."""
    if not isinstance(message, dict):
        raise TypeError(f"{call}: message must be a dict, got {type(message).__name__}")
    role = message.get("role")
    if role not in ("user", "assistant"):
        raise ValueError(f'{call}: message role={role!r}; use "user" or "assistant"')
    parts: Any = message.get("parts")
    if not isinstance(parts, list) or not (parts or message.get("item") is not None):
        raise ValueError(
            f"{call}: message needs a non-empty list of 'parts' (or an 'item' to keep, with "
            "'parts': [] when byheart can read no text from it)"
        )
    texts: list[str] = []
    tools: list[Part] = []
    allowed = "tool_call" if role == "assistant" else "tool_result"
    for k, raw in enumerate(parts):
        where = f"{call}: parts[{k}]"
        if isinstance(raw, dict) and raw.get("type") == "text":
            if not isinstance(raw.get("text"), str):
                raise TypeError(f"{where}['text'] must be a str")
            texts.append(raw["text"])
            continue
        part = check_part(raw, where)
        if part["type"] != allowed:
            raise ValueError(f"{where} is a {part['type']} in a {role} message; {allowed} only")
        tools.append(part)
    return role, TURN_JOIN.join(t for t in texts if t), tuple(tools)


def read_item(message: dict[str, Any], call: str) -> Any:
    """The message's `item` (None when absent), checked to be JSON data so every store can
    keep it; a copy, so the caller's later changes do not reach the Memory."""
    item = message.get("item")
    if item is None:
        return None
    try:
        return json.loads(json.dumps(item, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{call}: message['item'] must be JSON data (dicts, lists, str, numbers, bools, "
            f"None), got {type(item).__name__} holding something else ({exc}); convert it "
            "first, e.g. with the framework's own to-dict function"
        ) from None


def check_pairs(
    call: str, tools: tuple[Part, ...], calls: Container[str], answered: Container[str]
) -> None:
    """Refuse a call id used before, and a result that answers no open call."""
    seen: set[str] = set()
    for part in tools:
        tid = part["id"]
        if part["type"] == "tool_call" and (tid in calls or tid in seen):
            raise ValueError(f"{call}: tool_call id {tid!r} is used already; ids must be unique")
        if part["type"] == "tool_result" and (tid not in calls or tid in answered or tid in seen):
            raise ValueError(
                f"{call}: tool_result id {tid!r} answers no open tool_call; append the "
                "assistant message with that call first, and answer each call once"
            )
        seen.add(tid)
