"""byheart as a Pydantic AI history processor: every message filed, the model sent a selection.

``byheart_history(memory)`` returns a processor for ``Agent(capabilities=[ProcessHistory(p)])``
(``pydantic_ai.capabilities``; older releases: ``Agent(history_processors=[p])``). Before each
model request it files the messages it has not seen (prompts, answers, tool calls and
returns) in the [`Memory`][yait_byheart.Memory], then returns ``Memory.compose()``: the
stretches the latest user text needs under the Memory's budget, then the open stretch as it
happened, tool call and return pairs native and together. Pass ``message_history=
result.all_messages()`` on the next run so the last answer of a run is filed too.

Pydantic AI is imported only when a processor runs (``pip install
'.[pydantic-ai]'``). See docs/agents.md.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from ..memory import Memory
from ..providers._neutral import Call, Result, Text, read_messages
from ._common import file_messages

__all__ = ["byheart_history"]

Processor = Callable[[list[Any]], list[Any]]


def _user_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Iterable):
        return "\n\n".join(c for c in content if isinstance(c, str))
    return ""


def _request_parts(message: Any) -> list[dict[str, Any]]:
    """A ModelRequest's user texts and tool results as neutral parts (system prompts are
    the agent's, not the conversation's: they are carried, not filed)."""
    parts: list[dict[str, Any]] = []
    for p in message.parts:
        kind = getattr(p, "part_kind", "")
        call_id = getattr(p, "tool_call_id", None)
        if kind == "user-prompt":
            text = _user_text(p.content)
            if text.strip():
                parts.append({"type": "text", "text": text})
        elif kind == "tool-return":
            out: dict[str, Any] = {"type": "tool_result", "id": call_id}
            out["output"] = p.model_response_str()
            if getattr(p, "outcome", "success") != "success":  # failed, denied, retried...
                out["is_error"] = True
            parts.append(out)
        elif kind.startswith("retry") and getattr(p, "tool_name", None) and call_id:
            parts.append(
                {
                    "type": "tool_result",
                    "id": call_id,
                    "output": p.model_response(),
                    "is_error": True,
                }
            )
        elif kind.startswith("retry"):
            parts.append({"type": "text", "text": p.model_response()})
    results = [p for p in parts if p["type"] == "tool_result"]
    return results + [p for p in parts if p["type"] != "tool_result"]


def _response_parts(message: Any) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for p in message.parts:
        kind = getattr(p, "part_kind", "")
        if kind == "text" and p.content.strip():
            parts.append({"type": "text", "text": p.content})
        elif kind == "tool-call":
            parts.append(
                {"type": "tool_call", "id": p.tool_call_id, "name": p.tool_name,
                 "arguments": p.args_as_json_str()}
            )  # fmt: skip
    return parts


def _pydantic_part(pm: Any, role: str, p: Text | Call | Result) -> Any:
    if isinstance(p, Text):
        return pm.TextPart(content=p.text) if role == "assistant" else pm.UserPromptPart(p.text)
    if isinstance(p, Call):
        return pm.ToolCallPart(tool_name=p.name, args=p.arguments, tool_call_id=p.id)
    return pm.ToolReturnPart(tool_name=p.name, content=p.output, tool_call_id=p.id)


def _to_pydantic(result: Any, head: list[Any], instructions: Any) -> list[Any]:
    """A compose result as ModelRequest / ModelResponse objects, one request per run of user
    messages (Pydantic AI would merge them into new objects); ``head`` (the agent's system
    prompt parts) opens the first request, ``instructions`` ride on the last."""
    from pydantic_ai import messages as pm

    out: list[Any] = []
    for role, parts in read_messages(result, "byheart_history", open_end=True).messages:
        converted = [_pydantic_part(pm, role, p) for p in parts]
        if role == "assistant":
            out.append(pm.ModelResponse(parts=converted))
        elif out and out[-1].kind == "request":
            out[-1].parts = [*out[-1].parts, *converted]
        else:
            out.append(pm.ModelRequest(parts=[*(head if not out else []), *converted]))
    if out and instructions is not None:
        out[-1].instructions = instructions
    return out


MARK = "byheart"
"""The ``metadata`` key (never sent to the model) marking messages filed or composed."""


def _marked(message: Any) -> bool:
    return MARK in (getattr(message, "metadata", None) or {})


def _mark(message: Any, how: str) -> None:
    message.metadata = {**(message.metadata or {}), MARK: how}


def byheart_history(memory: Memory) -> Processor:
    """A Pydantic AI history processor backed by ``memory``.

    Args:
        memory: The [`Memory`][yait_byheart.Memory] that files the conversation and composes
            what the model is sent (its ``budget`` bounds each request's history).

    Returns:
        ``processor(messages) -> messages``, for ``ProcessHistory(processor)`` or
        ``history_processors=[processor]``. ``processor.last_result`` holds the latest
        compose result (log its ``stable_upto`` and ``size``). Each message it files, and
        each it composes, is marked in its ``metadata`` (``{"byheart": ...}``, which Pydantic
        AI never sends to the model) so that no message is filed twice.
    """
    if not isinstance(memory, Memory):
        raise TypeError(
            f"byheart_history(memory): memory must be a yait_byheart.Memory, got "
            f"{type(memory).__name__}"
        )
    lock = threading.Lock()

    def processor(messages: list[Any]) -> list[Any]:
        with lock:
            head: list[Any] = []
            instructions = None
            for message in messages:
                kind = getattr(message, "kind", "")
                if kind == "request":
                    head = head or [p for p in message.parts if p.part_kind == "system-prompt"]
                    instructions = message.instructions
                if _marked(message):
                    continue
                _mark(message, "filed")
                parts = _request_parts(message) if kind == "request" else _response_parts(message)
                if parts:
                    role = "user" if kind == "request" else "assistant"
                    file_messages(memory, [{"role": role, "parts": parts}], "byheart_history")
            result = memory.compose()
            processor.last_result = result  # type: ignore[attr-defined]
            out = _to_pydantic(result, head, instructions)
            for m in out:
                _mark(m, "composed")
            return out

    processor.last_result = None  # type: ignore[attr-defined]
    return processor
