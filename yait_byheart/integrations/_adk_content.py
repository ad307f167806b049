"""ADK's ``Content`` objects and byheart's neutral messages, both ways: what
``google_adk.ByheartPlugin`` files and sends, and what ``ByheartSessionService`` files for an
event. ADK (``google.genai``) is imported only inside the functions that build its objects."""

from __future__ import annotations

import json
from typing import Any

TAG = "google_adk"
"""The key of a turn's ``item`` under which the integration keeps what ADK made."""
Pending = list[tuple[str, str]]  # the open calls of the latest model content: (name, id)


def dump(obj: Any) -> Any:
    """An ADK (pydantic) object as JSON data, as it is kept in a turn's item."""
    return obj.model_dump(mode="json", exclude_none=True)


def neutral(content: Any, pending: Pending, prefix: str) -> tuple[str, list[dict[str, Any]]]:
    """A ``types.Content`` as a neutral role and parts. A call without an id (ADK strips its
    own ids before a model call) gets ``prefix`` and its place; a response without an id
    answers the first open call of its name, as Gemini pairs them."""
    role = "assistant" if content.role == "model" else "user"
    texts, tools = [], []
    calls: Pending = []
    for k, part in enumerate(content.parts or ()):
        if part.text is not None and not part.thought:
            texts.append(part.text)
        elif part.function_call is not None:
            call = part.function_call
            ident = call.id or f"{prefix}.{k}"
            calls.append((call.name or "", ident))
            arguments = json.dumps(call.args or {}, ensure_ascii=False)
            tools.append(
                {"type": "tool_call", "id": ident, "name": call.name or "", "arguments": arguments}
            )
        elif part.function_response is not None:
            got = part.function_response
            ident = got.id or next((i for n, i in pending if n == got.name), f"{prefix}.{k}")
            pending[:] = [(n, i) for n, i in pending if i != ident]
            output = json.dumps(got.response or {}, ensure_ascii=False, default=str)
            tools.append({"type": "tool_result", "id": ident, "output": output})
    if role == "assistant":
        pending[:] = calls
    text = "\n\n".join(t for t in texts if t)
    parts = [{"type": "text", "text": text}] if text.strip() else []
    return role, (parts + tools if role == "assistant" else tools + parts)


def tool_parts(content: Any, parts: list[dict[str, Any]]) -> dict[tuple[str, str], Any]:
    """The ``Part`` objects of ``content``'s calls and responses, by their neutral ids."""
    calls = [p for p in content.parts or () if p.function_call is not None]
    results = [p for p in content.parts or () if p.function_response is not None]
    ids = [p["id"] for p in parts if p["type"] == "tool_call"]
    done = [p["id"] for p in parts if p["type"] == "tool_result"]
    found = {("call", i): p for i, p in zip(ids, calls, strict=False)}
    found.update({("result", i): p for i, p in zip(done, results, strict=False)})
    return found


def part(neutral_part: dict[str, Any], names: dict[str, str]) -> Any:
    """A ``types.Part`` made from a neutral part (text, or a tool call or result whose ADK
    ``Part`` is not at hand); ``names`` gives each call id its function's name, which a
    ``FunctionResponse`` carries and a neutral result does not."""
    from google.genai import types

    kind = neutral_part["type"]
    if kind == "tool_call":
        call = types.FunctionCall(
            id=neutral_part["id"], name=neutral_part["name"],
            args=_json_object(neutral_part["arguments"], "args"),
        )  # fmt: skip
        return types.Part(function_call=call)
    if kind == "tool_result":
        ident = neutral_part["id"]
        got = types.FunctionResponse(
            id=ident, name=names.get(ident, ""),
            response=_json_object(neutral_part["output"], "result"),
        )  # fmt: skip
        return types.Part(function_response=got)
    return types.Part(text=neutral_part.get("text", ""))


def _json_object(text: str, key: str) -> dict[str, Any]:
    """A JSON object back from its text; anything else wrapped as ``{key: value}``, as ADK
    wraps a tool's plain return value."""
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    return value if isinstance(value, dict) else {key: value}
