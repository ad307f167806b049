"""Provider adapters: a compose result in, a provider request out; provider usage back in.

``Memory.compose`` returns one universal shape (see ``docs/prompt-cache.md``). The functions
here turn it into the request body of each provider, place prompt-cache markers where the
provider needs them, and read each provider's usage block into one comparable shape. They make
no network call and import nothing outside the standard library.

Wherever two texts have to become one (parts of a message sent as a single string, or two
same-role messages merged for Gemini) they are joined with [`JOIN`][], a blank line, so the
words are kept exactly and the boundary stays visible to the model.

Examples:
    >>> result = {
    ...     "messages": [
    ...         {"role": "user", "parts": [{"type": "text", "text": "we said 55 euro"}]},
    ...         {"role": "assistant", "parts": [{"type": "text", "text": "Noted."}]},
    ...         {"role": "user", "parts": [{"type": "text", "text": "what price?"}]},
    ...     ],
    ...     "stable_upto": 1,
    ...     "breakpoints": [1],
    ... }
    >>> to_openai(result)[0]
    {'role': 'user', 'content': 'we said 55 euro'}
    >>> to_anthropic(result)["messages"][1]["content"][-1]["cache_control"]
    {'type': 'ephemeral'}
    >>> [c["role"] for c in to_gemini(result)["contents"]]
    ['user', 'model', 'user']
    >>> usage = {"prompt_tokens": 2006, "prompt_tokens_details": {"cached_tokens": 1920}}
    >>> cache_usage({"usage": usage})
    {'input': 2006, 'cached_read': 1920, 'cache_write': 0}
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._cache_marks import MAX_BREAKPOINTS, long_enough, mark, min_cacheable_tokens, ttl_marker
from ._neutral import Call, Message, Part, Read, Result, Text, read_messages, where
from ._usage import cache_usage, chars_per_token, is_int

__all__ = [
    "JOIN",
    "MAX_BREAKPOINTS",
    "cache_usage",
    "chars_per_token",
    "min_cacheable_tokens",
    "to_anthropic",
    "to_gemini",
    "to_openai",
    "to_openai_responses",
]

JOIN = "\n\n"
"""Separator used whenever two texts become one string (documented, so the join is reversible)."""


_TTLS = (None, "5m", "1h")
_OPENAI_TTLS = (None, "30m", "12h")  # PromptCacheBreakpoint.ttl in the openai SDK's types
_OPENAI_KEY = "prompt_cache_breakpoint"


def _flag(value: object, call: str, name: str = "cache") -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{call}: {name} must be True or False, got {value!r}")


def _alternating(messages: list[dict[str, Any]], roles: tuple[str, ...]) -> list[dict[str, Any]]:
    """``messages`` with each run of one of ``roles`` merged into its first message, in
    order: content lists joined (each block, cache marker and all, stays as it was), strings
    with [`JOIN`][]. A compose's tool results follow their call's message, so they open
    their run and stay first in the merged message."""
    out: list[dict[str, Any]] = []
    for message in messages:
        last = out[-1] if out else None
        if last is None or message["role"] != last["role"] or message["role"] not in roles:
            out.append(message)
            continue
        before, more = last["content"], message["content"]
        last["content"] = before + more if isinstance(before, list) else JOIN.join([before, more])
    return out


def _openai_cache_args(cache: object, ttl: object, call: str) -> None:
    _flag(cache, call)
    if ttl not in _OPENAI_TTLS:
        raise ValueError(f"{call}: ttl must be None, '30m' or '12h', got {ttl!r}")


# --------------------------------------------------------------------------- validation


def _breakpoints(result: Mapping[str, object], call: str, n: int) -> list[int]:
    """Message indices to mark, ascending, ending at ``stable_upto`` (empty when -1)."""
    if "stable_upto" not in result:
        raise where(call, "", "has no 'stable_upto' key")
    stable = result["stable_upto"]
    if not is_int(stable) or not -1 <= stable < n:
        raise where(call, "['stable_upto']", f"must be an int in [-1, {n - 1}], got {stable!r}")
    if "breakpoints" not in result:
        # Older or hand-built results: the one breakpoint the contract always defines.
        return [stable] if stable >= 0 else []
    points = result["breakpoints"]
    if not isinstance(points, Sequence) or isinstance(points, (str, bytes)):
        raise where(call, "['breakpoints']", "must be a list of message indices")
    if not all(is_int(p) and 0 <= p < n for p in points):
        raise where(call, "['breakpoints']", f"must hold ints in [0, {n - 1}], got {points!r}")
    if any(a >= b for a, b in itertools.pairwise(points)):
        raise where(call, "['breakpoints']", f"must be strictly ascending, got {points!r}")
    if stable == -1 and points:
        raise where(call, "['breakpoints']", "must be empty when stable_upto is -1")
    if stable >= 0 and (not points or points[-1] != stable):
        raise where(call, "['breakpoints']", f"must end with stable_upto ({stable})")
    return list(points)


def _system(system: object, call: str) -> str | None:
    if system is None:
        return None
    if not isinstance(system, str) or not system.strip():
        raise ValueError(f"{call}: system must be a non-empty str or None, got {system!r}")
    return system


def _no_blank(result: Mapping[str, Any], call: str, provider: str) -> None:
    """Reject empty and whitespace-only texts, naming the first (the API would answer 400).
    Runs after `read_messages`, so the shape is known good."""
    for i, message in enumerate(result["messages"]):
        for j, part in enumerate(message["parts"]):
            if part["type"] == "text" and not part["text"].strip():
                raise ValueError(
                    f"{call}: result['messages'][{i}]['parts'][{j}]['text'] is empty or only "
                    f"whitespace, which {provider} rejects; do not compose an empty query or "
                    "append empty turns (redact one already stored)"
                )


def _points(result: Mapping[str, Any], call: str, read: Read) -> list[int]:
    """The breakpoints, checked against the result and moved to the hoisted messages."""
    points = _breakpoints(result, call, len(read.at))
    return sorted({read.at[p] for p in points})


def _texts(parts: Sequence[Part]) -> list[str]:
    return [p.text for p in parts if isinstance(p, Text)]


# --------------------------------------------------------------------------- requests


def _openai_message(
    role: str, parts: list[Part], content: Callable[[list[str]], Any]
) -> list[dict[str, Any]]:
    """One compose message as Chat Completions messages (tool results become ``tool``
    messages, then any text of the same message a user message)."""
    texts = _texts(parts)
    if role == "assistant":
        calls = [p for p in parts if isinstance(p, Call)]
        msg: dict[str, Any] = {"role": role, "content": content(texts) if texts else None}
        if calls:
            msg["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in calls
            ]
        return [msg]
    out = [
        {"role": "tool", "tool_call_id": r.id, "content": content([r.output])}
        for r in parts
        if isinstance(r, Result)
    ]
    if texts or not out:
        out.append({"role": role, "content": content(texts)})
    return out


def to_openai(
    result: Mapping[str, Any],
    *,
    system: str | None = None,
    parts: bool = False,
    cache: bool = False,
    ttl: str | None = None,
    model: str | None = None,
    alternate: bool = False,
) -> list[dict[str, Any]]:
    """Chat Completions ``messages`` for a compose result.

    ``content`` is one string (the message's texts joined with [`JOIN`][]) or, with
    ``parts=True``, a list of ``{"type": "text", "text": ...}`` parts, one per compose part.
    A system prompt becomes a leading ``system`` message. Tool calls become the assistant's
    ``tool_calls`` (``arguments`` sent as stored) and each tool result a ``role: "tool"``
    message right after it; ``is_error`` has no Chat field (let the output say so). OpenAI
    caches automatically on an exact prefix of 1,024 tokens or more, so by default nothing is
    marked: keeping the prefix byte-identical between calls is what earns the discount.

    Args:
        result: A `ComposeResult` (or any mapping with ``messages`` and ``stable_upto``).
        system: The system prompt, sent as a leading ``system`` message; None (default): none.
        parts: False (default): each message's content is one string; True: a parts list.
        cache: True (newer models only, e.g. gpt-5.6) adds explicit
            ``prompt_cache_breakpoint`` markers at ``result["breakpoints"]``, on the last text
            part at or before each; content is then always a parts list, so the bytes do not
            change when a marker moves (default False: the automatic cache needs none).
        ttl: With ``cache``, the marker's lifetime: None (default, the provider's), ``"30m"``
            or ``"12h"``.
        model: With ``cache``, the model name whose minimum cacheable prefix (in tokens,
            estimated at 4 characters each) drops shorter breakpoints; None keeps all.
        alternate: True merges each run of ``user`` messages into one (strings joined with
            [`JOIN`][], parts lists concatenated, markers kept on their parts), for servers
            whose chat template requires alternating roles (some models served through an
            OpenAI-compatible API); OpenAI's own API accepts runs (default False).

    Returns:
        The ``messages`` list of a Chat Completions request.

    Raises:
        ValueError: A malformed result or an unknown ``ttl``, named in the message.

    Examples:
        >>> r = {"messages": [{"role": "user", "parts": [{"type": "text", "text": "a"},
        ...                                              {"type": "text", "text": "b"}]}],
        ...      "stable_upto": -1}
        >>> to_openai(r, system="Be brief.")
        [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'a\\n\\nb'}]
        >>> to_openai(r, parts=True)[0]["content"][1]
        {'type': 'text', 'text': 'b'}
    """
    call = "to_openai(result)"
    read = read_messages(result, call)
    msgs = read.messages
    sys = _system(system, call)
    _openai_cache_args(cache, ttl, call)
    _flag(alternate, call, "alternate")
    as_parts = parts or cache

    def content(texts: list[str]) -> str | list[dict[str, str]]:
        if as_parts:
            return [{"type": "text", "text": t} for t in texts]
        return JOIN.join(texts)

    out: list[dict[str, Any]] = []
    if sys is not None:
        out.append({"role": "system", "content": content([sys])})
    blocks: list[list[dict[str, Any]]] = []
    for role, msg_parts in msgs:
        converted = _openai_message(role, msg_parts, content)
        blocks.append(
            [b for m in converted if isinstance(m["content"], list) for b in m["content"]]
        )
        out.extend(converted)
    if cache:
        points, sys_ok = long_enough(_points(result, call, read), msgs, sys, model, call)
        head = out[0]["content"][-1] if sys is not None and sys_ok else None
        mark(blocks, points, head, ttl_marker(ttl, {"mode": "explicit"}), _OPENAI_KEY)
    return _alternating(out, ("user",)) if alternate else out


def _responses_items(
    role: str, parts: list[Part], output: Callable[[str], Any]
) -> list[dict[str, Any]]:
    texts = _texts(parts)
    kind = "input_text" if role == "user" else "output_text"
    message = {
        "type": "message",
        "role": role,
        "content": [{"type": kind, "text": t} for t in texts],
    }
    if role == "assistant":
        calls = [
            {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments}
            for c in parts
            if isinstance(c, Call)
        ]
        return ([message] if texts or not calls else []) + calls
    results = [
        {"type": "function_call_output", "call_id": r.id, "output": output(r.output)}
        for r in parts
        if isinstance(r, Result)
    ]
    return results + ([message] if texts or not results else [])


def to_openai_responses(
    result: Mapping[str, Any],
    *,
    system: str | None = None,
    cache: bool = False,
    ttl: str | None = None,
    model: str | None = None,
) -> dict[str, Any]:
    """Responses API ``input`` items (and ``instructions``) for a compose result.

    User parts are ``input_text``; assistant history parts are ``output_text``, the type the
    Responses API requires for assistant content (it rejects ``input_text`` there). Tool calls
    are ``function_call`` items after the assistant's text, tool results
    ``function_call_output`` items before the user's text. ``cache``, ``ttl`` and ``model``
    place explicit ``prompt_cache_breakpoint`` markers as [`to_openai`][] does, on
    ``input_text`` blocks (tool outputs are then sent as one ``input_text`` block each), the
    only blocks that carry one. Merge the returned dict into your request:
    ``{"model": ..., **to_openai_responses(result)}``.

    Args:
        result: A `ComposeResult` (or any mapping with ``messages`` and ``stable_upto``).
        system: The system prompt, sent as ``instructions``; None (default): none.
        cache: True adds explicit ``prompt_cache_breakpoint`` markers (default False).
        ttl: With ``cache``: None (default), ``"30m"`` or ``"12h"``.
        model: With ``cache``, drops breakpoints below that model's minimum prefix.

    Returns:
        ``{"input": [...]}``, plus ``"instructions"`` when ``system`` is given.

    Examples:
        >>> r = {"messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
        ...      "stable_upto": -1}
        >>> req = to_openai_responses(r, system="Be brief.")
        >>> req["instructions"], req["input"][0]["type"], req["input"][0]["role"]
        ('Be brief.', 'message', 'user')
        >>> req["input"][0]["content"]
        [{'type': 'input_text', 'text': 'hi'}]
    """
    call = "to_openai_responses(result)"
    read = read_messages(result, call)
    msgs = read.messages
    sys = _system(system, call)
    _openai_cache_args(cache, ttl, call)

    def output(text: str) -> str | list[dict[str, str]]:
        return [{"type": "input_text", "text": text}] if cache else text

    items: list[dict[str, Any]] = []
    blocks: list[list[dict[str, Any]]] = []
    for role, parts in msgs:
        converted = _responses_items(role, parts, output)
        blocks.append(_input_texts(converted))
        items.extend(converted)
    out: dict[str, Any] = {"input": items}
    if sys is not None:
        out["instructions"] = sys
    if cache:
        points, _ = long_enough(_points(result, call, read), msgs, sys, model, call)
        mark(blocks, points, None, ttl_marker(ttl, {"mode": "explicit"}), _OPENAI_KEY)
    return out


def _input_texts(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``input_text`` blocks of some Responses items, in order (they carry breakpoints)."""
    out: list[dict[str, Any]] = []
    for item in items:
        body = item.get("content", item.get("output"))
        if isinstance(body, list):
            out.extend(b for b in body if b["type"] == "input_text")
    return out


def _anthropic_block(part: Part) -> dict[str, Any]:
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    if isinstance(part, Call):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": part.args}
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.id, "content": part.output}
    if part.is_error is not None:
        block["is_error"] = part.is_error
    return block


def _trim_prefill(messages: list[dict[str, Any]]) -> None:
    """A request ending with the assistant's message (``compose()`` with no query after an
    assistant turn) is a prefill to Anthropic, which refuses one whose last text ends in white
    space (HTTP 400): drop that white space, from the last text block only."""
    if messages[-1]["role"] != "assistant":
        return
    texts = [b for b in messages[-1]["content"] if b["type"] == "text"]
    if texts:
        texts[-1]["text"] = texts[-1]["text"].rstrip()


def to_anthropic(
    result: Mapping[str, Any],
    *,
    system: str | None = None,
    cache: bool = True,
    ttl: str | None = None,
    model: str | None = None,
    alternate: bool = False,
) -> dict[str, Any]:
    """Messages API ``messages`` (and ``system``) with ``cache_control`` breakpoints placed.

    Anthropic caches only what is marked. With ``cache=True`` the last content block of each
    message listed in ``result["breakpoints"]`` (or of ``stable_upto`` alone when the result has
    no ``breakpoints``) carries ``{"type": "ephemeral"}``, so the prefix up to it is written once
    and read at a tenth of the price on the next calls. A system prompt is identical on every
    call, so it is marked too, even when ``stable_upto`` is -1: it then stays cached across a
    rebuilt selection. Anthropic allows four breakpoints per request; when more are offered
    the system one and the latest message ones are kept (the latest covers the longest prefix).
    Tool calls are ``tool_use`` blocks (``input`` the parsed arguments), results
    ``tool_result`` blocks placed first in their user message, as the API requires. A result
    that ends with the assistant's message (``compose()`` with no query after an assistant
    turn) is sent as a prefill, which the model continues; its trailing white space is dropped,
    as the API requires. Models that refuse prefills (Claude 4.6 and later answer HTTP 400)
    need the user's new message: pass it to ``compose`` as the query.

    Args:
        result: A `ComposeResult` (or any mapping with ``messages``, ``stable_upto`` and
            optionally ``breakpoints``).
        system: The system prompt, sent (and marked) as ``system``; None (default): none.
        cache: True (default) places ``cache_control`` markers; False sends none.
        ttl: None or ``"5m"`` (default: the five-minute cache, sent as no ``ttl``, so both
            spellings give the same bytes), or ``"1h"`` (the one-hour cache, writes billed at
            2x instead of 1.25x).
        model: The model name whose minimum cacheable prefix ([`min_cacheable_tokens`][],
            tokens estimated at 4 characters each) drops shorter breakpoints; None (default)
            keeps all.
        alternate: True merges each run of one role into one message of all its blocks, in
            order, each ``cache_control`` marker on the block it was placed on, for a gateway
            or proxy that requires alternating roles. Anthropic's API merges consecutive
            same-role turns itself, so the default, False, sends them as composed.

    Returns:
        ``{"messages": [...]}``, plus ``"system"`` when ``system`` is given.

    Raises:
        ValueError: A malformed result or an unknown ``ttl``, named in the message.

    Examples:
        >>> r = {"messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]},
        ...                   {"role": "assistant", "parts": [{"type": "text", "text": "yo"}]},
        ...                   {"role": "user", "parts": [{"type": "text", "text": "and?"}]}],
        ...      "stable_upto": 1, "breakpoints": [1]}
        >>> req = to_anthropic(r, system="Be brief.", ttl="1h")
        >>> req["system"]
        [{'type': 'text', 'text': 'Be brief.', 'cache_control': {'type': 'ephemeral', 'ttl': '1h'}}]
        >>> [("cache_control" in m["content"][-1]) for m in req["messages"]]
        [False, True, False]
        >>> "cache_control" in str(to_anthropic(r, model="claude-sonnet-4-5"))  # far below 1,024
        False
    """
    call = "to_anthropic(result)"
    if ttl not in _TTLS:
        raise ValueError(f"{call}: ttl must be None, '5m' or '1h', got {ttl!r}")
    _flag(cache, call)
    _flag(alternate, call, "alternate")
    read = read_messages(result, call)
    msgs = read.messages
    _no_blank(result, call, "Anthropic")
    sys = _system(system, call)
    points, sys_ok = long_enough(_points(result, call, read), msgs, sys, model, call)
    marker = ttl_marker("1h" if ttl == "1h" else None, {"type": "ephemeral"})

    out: dict[str, Any] = {}
    if sys is not None:
        out["system"] = [{"type": "text", "text": sys}]
    messages: list[dict[str, Any]] = [
        {"role": role, "content": [_anthropic_block(p) for p in parts]} for role, parts in msgs
    ]
    _trim_prefill(messages)
    if cache:
        head = out["system"][0] if sys is not None and sys_ok else None
        mark([m["content"] for m in messages], points, head, marker, "cache_control")
    # Merged after marking: a marker stays on its block, so the cached prefix is unchanged.
    out["messages"] = _alternating(messages, ("user", "assistant")) if alternate else messages
    return out


def _gemini_parts(msgs: list[Message], i: int) -> list[dict[str, Any]]:
    """Message i as Gemini parts: results first, in the order of the calls they answer."""
    role, parts = msgs[i]
    if role == "assistant":
        return [
            {"text": p.text}
            if isinstance(p, Text)
            else {"functionCall": {"name": p.name, "args": p.args}}
            for p in parts
            if not isinstance(p, Result)
        ]
    order = [p.id for p in msgs[i - 1][1] if isinstance(p, Call)] if i else []
    results = sorted((p for p in parts if isinstance(p, Result)), key=lambda r: order.index(r.id))
    out: list[dict[str, Any]] = [
        {
            "functionResponse": {
                "name": r.name,
                "response": {"error" if r.is_error else "output": r.output},
            }
        }
        for r in results
    ]
    return out + [{"text": t} for t in _texts(parts)]


def to_gemini(result: Mapping[str, Any], *, system: str | None = None) -> dict[str, Any]:
    """``generateContent`` body fields (``contents``, ``systemInstruction``) for a compose result.

    Gemini requires strictly alternating ``user``/``model`` turns (HTTP 400 otherwise), while a
    compose result may hold two user messages in a row. A run of same-role messages therefore
    becomes one content, and neighbouring texts in it one text part, joined with
    [`JOIN`][], so nothing is dropped and the boundary stays visible. Tool calls are
    ``functionCall`` parts (``args`` the parsed arguments); results are ``functionResponse``
    parts named after their call, first in their content and in the calls' order (Gemini
    pairs them by name and order), with the output under ``"output"`` (``"error"`` when
    ``is_error``). Gemini's implicit cache needs no marker; the stable prefix is what it
    matches on.

    Args:
        result: A `ComposeResult` (or any mapping with ``messages``).
        system: The system prompt, sent as ``systemInstruction``; None (default): none.

    Returns:
        ``{"contents": [...]}``, plus ``"systemInstruction"`` when ``system`` is given.

    Examples:
        >>> u = lambda t: {"role": "user", "parts": [{"type": "text", "text": t}]}
        >>> r = {"messages": [u("earlier"), u("now?")], "stable_upto": 0}
        >>> req = to_gemini(r, system="Be brief.")
        >>> req["contents"]
        [{'role': 'user', 'parts': [{'text': 'earlier\\n\\nnow?'}]}]
        >>> req["systemInstruction"]
        {'parts': [{'text': 'Be brief.'}]}
    """
    call = "to_gemini(result)"
    read = read_messages(result, call)
    msgs = read.messages
    sys = _system(system, call)
    contents: list[dict[str, Any]] = []
    for i, (role, _) in enumerate(msgs):
        g_role = "user" if role == "user" else "model"
        if not contents or contents[-1]["role"] != g_role:
            contents.append({"role": g_role, "parts": []})
        for part in _gemini_parts(msgs, i):
            last = contents[-1]["parts"][-1] if contents[-1]["parts"] else {}
            if "text" in part and set(last) == {"text"}:
                last["text"] += JOIN + part["text"]
            else:
                contents[-1]["parts"].append(part)
    for k, content in enumerate(contents):
        if any(p.get("text") == "" for p in content["parts"]):
            # Gemini answers HTTP 400 to an empty text part.
            raise ValueError(
                f"{call}: content {k} would be empty (its messages hold only empty text), "
                "which Gemini rejects; do not compose an empty query or append empty turns"
            )
    out: dict[str, Any] = {"contents": contents}
    if sys is not None:
        out["systemInstruction"] = {"parts": [{"text": sys}]}
    return out
