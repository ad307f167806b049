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

import copy
import threading
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from ..memory import Memory
from ..providers._neutral import Call, Result, Text, read_messages
from ._common import file_items, stored_items, stored_messages

__all__ = ["byheart_history", "byheart_messages"]

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


Originals = dict[tuple[str, str], Any]
"""The tool parts as Pydantic AI made them, by ("call" | "result", tool call id)."""


def _pydantic_part(pm: Any, role: str, p: Text | Call | Result, originals: Originals) -> Any:
    """A composed part as a Pydantic AI part: a tool call or result as it was filed (a
    retry keeps its outcome and retry details, so the model is asked again), text new."""
    if isinstance(p, Text):
        return pm.TextPart(content=p.text) if role == "assistant" else pm.UserPromptPart(p.text)
    kind = "call" if isinstance(p, Call) else "result"
    original = originals.get((kind, p.id))
    if original is not None:
        return copy.deepcopy(original)
    if isinstance(p, Call):
        return pm.ToolCallPart(tool_name=p.name, args=p.arguments, tool_call_id=p.id)
    outcome = "failed" if p.is_error else "success"
    return pm.ToolReturnPart(tool_name=p.name, content=p.output, tool_call_id=p.id, outcome=outcome)


def _to_pydantic(
    result: Any, head: list[Any], instructions: Any, originals: Originals
) -> list[Any]:
    """A compose result as ModelRequest / ModelResponse objects, one request per run of user
    messages (Pydantic AI would merge them into new objects); ``head`` (the agent's system
    prompt parts) opens the first request, ``instructions`` ride on the last."""
    from pydantic_ai import messages as pm

    out: list[Any] = []
    for role, parts in read_messages(result, "byheart_history", open_end=True).messages:
        converted = [_pydantic_part(pm, role, p, originals) for p in parts]
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
"""The ``metadata`` key (never sent to the model) marking messages filed or composed:
``{"history": token, "as": "filed" | "composed"}``, the token naming the Memory's
conversation (kept in its turns), so only that conversation skips them."""
TAG = "pydantic_ai"
"""The key of a turn's ``item`` under which the processor keeps the message it filed."""


def _dump(message: Any) -> Any:
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]


def _load(raw: Any) -> Any:
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return ModelMessagesTypeAdapter.validate_python([raw])[0]


def _from_parts(message: dict[str, Any]) -> list[Any]:
    """A turn filed without an item (plain ``append_message``) as a Pydantic AI message of
    its words (a result's tool name is not in the turn: it comes back empty)."""
    from pydantic_ai import messages as pm

    parts: list[Any] = []
    for p in message["parts"]:
        if p["type"] == "tool_call":
            parts.append(pm.ToolCallPart(p["name"], p["arguments"], p["id"]))
        elif p["type"] == "tool_result":
            failed = bool(p.get("is_error"))
            parts.append(
                pm.ToolReturnPart(
                    "", p["output"], p["id"], outcome="failed" if failed else "success"
                )
            )
        elif message["role"] == "assistant":
            parts.append(pm.TextPart(p["text"]))
        else:
            parts.append(pm.UserPromptPart(p["text"]))
    if message["role"] == "assistant":
        return [pm.ModelResponse(parts=parts)]
    return [pm.ModelRequest(parts=parts)]


def byheart_messages(memory: Memory) -> list[Any]:
    """The messages filed in ``memory`` by [`byheart_history`][], as Pydantic AI made them
    (equal, field for field, also from a store reopened): e.g. ``message_history=`` for a
    run after a restart. Turns filed otherwise come back as new messages of their words."""
    messages, _ = stored_items(memory, TAG, _load, _from_parts)
    return messages


def _tool_parts(message: Any) -> Originals:
    found: Originals = {}
    for part in getattr(message, "parts", ()):
        call_id = getattr(part, "tool_call_id", None)
        kind = getattr(part, "part_kind", "")
        if not call_id or kind.startswith("builtin"):
            continue
        if kind == "tool-call":
            found["call", call_id] = part
        elif kind == "tool-return" or (kind.startswith("retry") and part.tool_name):
            found["result", call_id] = part
    return found


class _Processor:
    """What ``byheart_history`` returns: file unseen messages, then compose."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.lock = threading.Lock()
        self.token: str | None = None  # read from the Memory's turns on first use
        self.originals: Originals = {}
        self.last_result: Any = None

    def _start(self) -> str:
        """This conversation's token and tool parts, from the turns filed before (a Memory
        reopened from a store), or a new token."""
        if self.token is None:
            token = None
            for message in stored_messages(self.memory):
                item = message.get("item") if message else None
                if isinstance(item, dict) and TAG in item:
                    token = item.get("history", token)
                    for raw in item[TAG]:
                        self.originals.update(_tool_parts(_load(raw)))
            self.token = token if isinstance(token, str) else uuid.uuid4().hex
        return self.token

    def _file(self, message: Any, token: str) -> None:
        kind = getattr(message, "kind", "")
        parts = _request_parts(message) if kind == "request" else _response_parts(message)
        role = "user" if kind == "request" else "assistant"
        _mark(message, token, "filed")
        file_items(self.memory, [message], lambda _: (role, parts), [_dump(message)], TAG,
                   "byheart_history", extra={"history": token})  # fmt: skip
        self.originals.update(_tool_parts(message))

    def __call__(self, messages: list[Any]) -> list[Any]:
        with self.lock:
            token = self._start()
            head: list[Any] = []
            instructions = None
            for message in messages:
                if getattr(message, "kind", "") == "request":
                    head = head or [p for p in message.parts if p.part_kind == "system-prompt"]
                    instructions = message.instructions
                if not _ours(message, token):
                    self._file(message, token)
            result = self.memory.compose()
            self.last_result = result
            out = _to_pydantic(result, head, instructions, self.originals)
            for m in out:
                _mark(m, token, "composed")
            return out


def _ours(message: Any, token: str) -> bool:
    mark = (getattr(message, "metadata", None) or {}).get(MARK)
    return isinstance(mark, dict) and mark.get("history") == token


def _mark(message: Any, token: str, how: str) -> None:
    message.metadata = {**(message.metadata or {}), MARK: {"history": token, "as": how}}


def byheart_history(memory: Memory) -> Processor:
    """A Pydantic AI history processor backed by ``memory``.

    Args:
        memory: The [`Memory`][yait_byheart.Memory] that files the conversation and composes
            what the model is sent (its ``budget`` bounds each request's history).

    Returns:
        ``processor(messages) -> messages``, for ``ProcessHistory(processor)`` or
        ``history_processors=[processor]``. ``processor.last_result`` holds the latest
        compose result (log its ``stable_upto`` and ``size``). Each message it files keeps
        the message itself in its turn ([`byheart_messages`][] gives them back), and each
        message it files or composes is marked in its ``metadata`` (``{"byheart": ...}``,
        which Pydantic AI never sends to the model) with a token of the Memory's
        conversation, so that no message is filed twice there; a history saved and handed
        to another Memory is filed in full there.
    """
    if not isinstance(memory, Memory):
        raise TypeError(
            f"byheart_history(memory): memory must be a yait_byheart.Memory, got "
            f"{type(memory).__name__}"
        )
    return _Processor(memory)
