"""Read and check the neutral message format that ``Memory.compose`` returns.

A message is ``{"role": "user" | "assistant", "parts": [part, ...]}``; a part is
``{"type": "text", "text": str}``, ``{"type": "tool_call", "id", "name", "arguments"}`` (in
assistant messages; ``arguments`` a JSON object as a string) or ``{"type": "tool_result",
"id", "output", "is_error"?}`` (in user messages, answering a call of the assistant message
before them; the results of one round may be spread over the user messages that follow it,
and are gathered into the first of them, ahead of its text). `read_messages` turns a
result into typed parts once, with every check every provider adapter needs, so each adapter
only maps shapes.

>>> r = {"messages": [
...     {"role": "user", "parts": [{"type": "text", "text": "weather?"}]},
...     {"role": "assistant", "parts": [
...         {"type": "tool_call", "id": "c1", "name": "wx", "arguments": '{"city": "Oslo"}'}]},
...     {"role": "user", "parts": [{"type": "tool_result", "id": "c1", "output": "4 C"}]}]}
>>> read = read_messages(r, "to_x(result)")
>>> [role for role, _ in read.messages], read.at
(['user', 'assistant', 'user'], [0, 1, 2])
>>> read.messages[2][1][0]
Result(id='c1', output='4 C', is_error=None, name='wx')
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeAlias

__all__ = ["Call", "Message", "Part", "Result", "Text", "read_messages"]

FIX = "pass the dict returned by Memory.compose()"
_PAIR_FIX = (
    "append the assistant's tool_call message and then one user message with a tool_result "
    "for each call (Memory.append_message), and compose after the results"
)


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    arguments: str  # the JSON text exactly as given (OpenAI sends it on as it is)
    args: dict[str, Any]  # the same, parsed (Anthropic's ``input``, Gemini's ``args``)


@dataclass(frozen=True)
class Result:
    id: str
    output: str
    is_error: bool | None
    name: str  # the answered call's name (Gemini pairs responses by name and order)


Part: TypeAlias = Text | Call | Result
Message: TypeAlias = tuple[str, list[Part]]


def where(call: str, path: str, problem: str, fix: str = FIX) -> ValueError:
    return ValueError(f"{call}: result{path} {problem}; {fix}")


def _str_field(part: Mapping[str, Any], key: str, call: str, at: str, empty: bool) -> str:
    value = part.get(key)
    if not isinstance(value, str) or (not empty and not value):
        need = "a str" if empty else "a non-empty str"
        raise where(call, f"{at}[{key!r}]", f"must be {need}, got {value!r}")
    return value


def _call(part: Mapping[str, Any], call: str, at: str) -> Call:
    ident = _str_field(part, "id", call, at, empty=False)
    name = _str_field(part, "name", call, at, empty=False)
    arguments = _str_field(part, "arguments", call, at, empty=True)
    try:
        args = json.loads(arguments)
    except ValueError as err:
        raise where(
            call,
            f"{at}['arguments']",
            f"is not valid JSON ({err})",
            "store the arguments as a JSON object string, e.g. '{\"city\": \"Oslo\"}' or '{}'",
        ) from None
    if not isinstance(args, dict):
        raise where(
            call,
            f"{at}['arguments']",
            f"is JSON {type(args).__name__}, not an object",
            "tool arguments are a JSON object string, e.g. '{}' for none",
        )
    return Call(ident, name, arguments, args)


def _result(part: Mapping[str, Any], call: str, at: str) -> Result:
    ident = _str_field(part, "id", call, at, empty=False)
    output = _str_field(part, "output", call, at, empty=True)
    is_error = part.get("is_error")
    if is_error is not None and not isinstance(is_error, bool):
        raise where(call, f"{at}['is_error']", f"must be True, False or absent, got {is_error!r}")
    return Result(ident, output, is_error, "")


def _part(part: object, role: str, call: str, at: str) -> Part:
    kind = part.get("type") if isinstance(part, Mapping) else None
    if not isinstance(part, Mapping) or kind not in ("text", "tool_call", "tool_result"):
        raise where(
            call,
            at,
            f"has type {kind!r}: must be {{'type': 'text', 'text': str}}, a 'tool_call' or a "
            "'tool_result' part",
        )
    if kind == "text":
        text = part.get("text")
        if not isinstance(text, str):
            raise where(call, f"{at}['text']", f"must be a str, got {type(text).__name__}")
        return Text(text)
    want = "assistant" if kind == "tool_call" else "user"
    if role != want:
        raise where(
            call, at, f"is a {kind} in a {role} message", f"put {kind} parts in {want} messages"
        )
    return _call(part, call, at) if kind == "tool_call" else _result(part, call, at)


def _message(message: object, call: str, at: str) -> Message:
    if not isinstance(message, Mapping):
        raise where(call, at, f"must be a dict, got {type(message).__name__}")
    role = message.get("role")
    if role not in ("user", "assistant"):
        raise where(call, f"{at}['role']", f"must be 'user' or 'assistant', got {role!r}")
    parts = message.get("parts")
    if not isinstance(parts, Sequence) or isinstance(parts, (str, bytes)) or not parts:
        raise where(call, f"{at}['parts']", "must be a non-empty list of text parts")
    out = [_part(p, role, call, f"{at}['parts'][{j}]") for j, p in enumerate(parts)]
    ids = [p.id for p in out if not isinstance(p, Text)]
    dup = next((i for i in ids if ids.count(i) > 1), None)
    if dup is not None:
        raise where(call, at, f"holds tool id {dup!r} twice", "give every tool call its own id")
    return role, out


def _run_end(msgs: list[Message], a: int) -> int:
    """One past the run of user messages that follows message ``a``."""
    b = a + 1
    while b < len(msgs) and msgs[b][0] == "user":
        b += 1
    return b


def _pair(msgs: list[Message], call: str) -> list[Message]:
    """Check every call is answered in the user messages right after it (before the next
    assistant message) and every result answers a call of the assistant message before it;
    return the messages with each result carrying its call's name."""
    out: list[Message] = []
    calls: dict[str, Call] = {}  # the calls of the latest assistant message
    seen: set[str] = set()
    for i, (role, parts) in enumerate(msgs):
        if role == "assistant":
            calls = {p.id: p for p in parts if isinstance(p, Call)}
            seen = set()
            end = _run_end(msgs, i)
            answered = {p.id for _, ps in msgs[i + 1 : end] for p in ps if isinstance(p, Result)}
            for j, p in enumerate(parts):
                if isinstance(p, Call) and p.id not in answered:
                    problem = f"is a tool_call (id {p.id!r}) with no tool_result in the user "
                    problem += f"messages after it (from message {i + 1})"
                    raise where(call, f"['messages'][{i}]['parts'][{j}]", problem, _PAIR_FIX)
        named: list[Part] = []
        for j, p in enumerate(parts):
            if isinstance(p, Result):
                if p.id not in calls or p.id in seen:
                    problem = f"is a tool_result for id {p.id!r} with no open tool_call of that id"
                    problem += " in the assistant message before it"
                    raise where(call, f"['messages'][{i}]['parts'][{j}]", problem, _PAIR_FIX)
                seen.add(p.id)
                p = Result(p.id, p.output, p.is_error, calls[p.id].name)
            named.append(p)
        out.append((role, named))
    return out


def _hoist(msgs: list[Message]) -> tuple[list[Message], list[int]]:
    """Move the results of a call round into the first user message after the call, ahead of
    any text (every provider wants them there); a message left empty is dropped. Returns the
    messages and, for each original message, the index of the message now holding it."""
    out: list[Message] = []
    at: list[int] = []
    head = -1  # the first user message after the latest assistant one, once there is one
    for role, parts in msgs:
        if role == "assistant":
            head = -1
        elif head >= 0:
            moved = [p for p in parts if isinstance(p, Result)]
            if moved:
                out[head] = ("user", _results_first([*out[head][1], *moved]))
                parts = [p for p in parts if not isinstance(p, Result)]
        elif out:
            head = len(out)
        if parts:
            out.append((role, _results_first(parts) if role == "user" else parts))
        at.append(len(out) - 1)
    return out, at


def _results_first(parts: list[Part]) -> list[Part]:
    return [p for p in parts if isinstance(p, Result)] + [
        p for p in parts if not isinstance(p, Result)
    ]


class Read(NamedTuple):
    """A checked result: its messages (tool results hoisted) and where each original went."""

    messages: list[Message]
    at: list[int]


def read_messages(result: object, call: str, *, open_end: bool = True) -> Read:
    """Check the compose shape and return ``[(role, [part, ...]), ...]``.

    The checks are the contract's sendability promises (first message from the user, never
    two assistant messages in a row, every tool call answered in the next message and every
    result right after its call): a result that breaks them would be rejected by at least one
    provider, so failing here, with the place named, is kinder. The last message may be the
    assistant's: ``compose()`` with no query after an assistant turn continues the
    conversation as appended, and every adapter sends that as it is. ``open_end=False``
    refuses it, for a caller that needs the user's turn last.
    """
    if not isinstance(result, Mapping):
        raise TypeError(
            f"{call}: result must be the dict returned by Memory.compose(), "
            f"got {type(result).__name__}"
        )
    if "messages" not in result:
        raise where(call, "", "has no 'messages' key")
    messages = result["messages"]
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        raise where(call, "['messages']", f"must be a list, got {type(messages).__name__}")
    if not messages:
        raise where(call, "['messages']", "is empty (the query is always the last message)")
    out: list[Message] = []
    for i, message in enumerate(messages):
        role, parts = _message(message, call, f"['messages'][{i}]")
        if out and role == "assistant" and out[-1][0] == "assistant":
            raise where(call, f"['messages'][{i}]", "is a second assistant message in a row")
        out.append((role, parts))
    if out[0][0] != "user":
        raise where(call, "['messages'][0]", "must be a user message")
    if out[-1][0] != "user" and not open_end:
        raise where(
            call,
            f"['messages'][{len(out) - 1}]",
            "must be the user's query (or the tool results the model is to read)",
        )
    messages, at = _hoist(_pair(out, call))
    return Read(messages, at)


def size_chars(parts: Sequence[Part]) -> int:
    """Characters a message's parts put in a request (texts, tool names, arguments, outputs)."""
    n = 0
    for p in parts:
        if isinstance(p, Text):
            n += len(p.text)
        elif isinstance(p, Call):
            n += len(p.name) + len(p.arguments)
        else:
            n += len(p.output)
    return n
