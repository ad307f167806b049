"""Provider adapters: a compose result in, a provider request out; provider usage back in.

``Memory.compose`` returns one universal shape (see ``docs/prompt-cache.md``). The functions
here turn it into the request body of each provider, place prompt-cache markers where the
provider needs them, and read each provider's usage block into one comparable shape. They make
no network call and import nothing outside the standard library.

Wherever two texts have to become one (parts of a message sent as a single string, or two
same-role messages merged for Gemini) they are joined with :data:`JOIN`, a blank line, so the
words are kept exactly and the boundary stays visible to the model.

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
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeGuard

__all__ = [
    "JOIN",
    "MAX_BREAKPOINTS",
    "cache_usage",
    "chars_per_token",
    "to_anthropic",
    "to_gemini",
    "to_openai",
    "to_openai_responses",
]

JOIN = "\n\n"
"""Separator used whenever two texts become one string (documented, so the join is reversible)."""

MAX_BREAKPOINTS = 4
"""Anthropic accepts at most 4 ``cache_control`` breakpoints per request (prompt-caching docs)."""

_TTLS = (None, "5m", "1h")
_FIX = "pass the dict returned by Memory.compose()"


# --------------------------------------------------------------------------- validation


def _where(call: str, path: str, problem: str) -> ValueError:
    return ValueError(f"{call}: result{path} {problem}; {_FIX}")


def _messages(result: object, call: str) -> list[tuple[str, list[str]]]:
    """Check the compose shape and return ``[(role, [text, ...]), ...]``.

    The checks are the contract's sendability promises (first and last message from the user,
    never two assistant messages in a row): a result that breaks them would be rejected by at
    least one provider (Gemini: HTTP 400), so failing here, with the place named, is kinder.
    """
    if not isinstance(result, Mapping):
        raise TypeError(
            f"{call}: result must be the dict returned by Memory.compose(), "
            f"got {type(result).__name__}"
        )
    if "messages" not in result:
        raise _where(call, "", "has no 'messages' key")
    messages = result["messages"]
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        raise _where(call, "['messages']", f"must be a list, got {type(messages).__name__}")
    if not messages:
        raise _where(call, "['messages']", "is empty (the query is always the last message)")
    out: list[tuple[str, list[str]]] = []
    for i, message in enumerate(messages):
        at = f"['messages'][{i}]"
        if not isinstance(message, Mapping):
            raise _where(call, at, f"must be a dict, got {type(message).__name__}")
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise _where(call, f"{at}['role']", f"must be 'user' or 'assistant', got {role!r}")
        parts = message.get("parts")
        if not isinstance(parts, Sequence) or isinstance(parts, (str, bytes)) or not parts:
            raise _where(call, f"{at}['parts']", "must be a non-empty list of text parts")
        texts: list[str] = []
        for j, part in enumerate(parts):
            pat = f"{at}['parts'][{j}]"
            if not isinstance(part, Mapping) or part.get("type") != "text":
                raise _where(call, pat, "must be {'type': 'text', 'text': str}")
            text = part.get("text")
            if not isinstance(text, str):
                raise _where(call, f"{pat}['text']", f"must be a str, got {type(text).__name__}")
            texts.append(text)
        if out and role == "assistant" and out[-1][0] == "assistant":
            raise _where(call, at, "is a second assistant message in a row")
        out.append((role, texts))
    if out[0][0] != "user":
        raise _where(call, "['messages'][0]", "must be a user message")
    if out[-1][0] != "user":
        raise _where(call, f"['messages'][{len(out) - 1}]", "must be the user's query")
    return out


def _int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _breakpoints(result: Mapping[str, object], call: str, n: int) -> list[int]:
    """Message indices to mark, ascending, ending at ``stable_upto`` (empty when -1)."""
    if "stable_upto" not in result:
        raise _where(call, "", "has no 'stable_upto' key")
    stable = result["stable_upto"]
    if not _int(stable) or not -1 <= stable < n:
        raise _where(call, "['stable_upto']", f"must be an int in [-1, {n - 1}], got {stable!r}")
    if "breakpoints" not in result:
        # Older or hand-built results: the one breakpoint the contract always defines.
        return [stable] if stable >= 0 else []
    points = result["breakpoints"]
    if not isinstance(points, Sequence) or isinstance(points, (str, bytes)):
        raise _where(call, "['breakpoints']", "must be a list of message indices")
    if not all(_int(p) and 0 <= p < n for p in points):
        raise _where(call, "['breakpoints']", f"must hold ints in [0, {n - 1}], got {points!r}")
    if any(a >= b for a, b in itertools.pairwise(points)):
        raise _where(call, "['breakpoints']", f"must be strictly ascending, got {points!r}")
    if stable == -1 and points:
        raise _where(call, "['breakpoints']", "must be empty when stable_upto is -1")
    if stable >= 0 and (not points or points[-1] != stable):
        raise _where(call, "['breakpoints']", f"must end with stable_upto ({stable})")
    return list(points)


def _system(system: object, call: str) -> str | None:
    if system is None:
        return None
    if not isinstance(system, str) or not system.strip():
        raise ValueError(f"{call}: system must be a non-empty str or None, got {system!r}")
    return system


def _no_blank(msgs: list[tuple[str, list[str]]], call: str, provider: str) -> None:
    """Reject empty and whitespace-only texts, naming the first (the API would answer 400)."""
    for i, (_, texts) in enumerate(msgs):
        for j, text in enumerate(texts):
            if not text.strip():
                raise ValueError(
                    f"{call}: result['messages'][{i}]['parts'][{j}]['text'] is empty or only "
                    f"whitespace, which {provider} rejects; do not compose an empty query or "
                    "append empty turns (redact one already stored)"
                )


# --------------------------------------------------------------------------- requests


def to_openai(
    result: Mapping[str, Any], *, system: str | None = None, parts: bool = False
) -> list[dict[str, Any]]:
    """Chat Completions ``messages`` for a compose result.

    ``content`` is one string (the message's parts joined with :data:`JOIN`) or, with
    ``parts=True``, a list of ``{"type": "text", "text": ...}`` parts, one per compose part.
    A system prompt becomes a leading ``system`` message. OpenAI caches automatically on an
    exact prefix of 1,024 tokens or more, so nothing is marked: keeping ``messages[:stable_upto+1]``
    byte-identical between calls is what earns the discount.

    >>> r = {"messages": [{"role": "user", "parts": [{"type": "text", "text": "a"},
    ...                                              {"type": "text", "text": "b"}]}],
    ...      "stable_upto": -1}
    >>> to_openai(r, system="Be brief.")
    [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'a\\n\\nb'}]
    >>> to_openai(r, parts=True)[0]["content"][1]
    {'type': 'text', 'text': 'b'}
    """
    call = "to_openai(result)"
    msgs = _messages(result, call)
    sys = _system(system, call)

    def content(texts: list[str]) -> str | list[dict[str, str]]:
        if parts:
            return [{"type": "text", "text": t} for t in texts]
        return JOIN.join(texts)

    out: list[dict[str, Any]] = []
    if sys is not None:
        out.append({"role": "system", "content": content([sys])})
    out.extend({"role": role, "content": content(texts)} for role, texts in msgs)
    return out


def to_openai_responses(result: Mapping[str, Any], *, system: str | None = None) -> dict[str, Any]:
    """Responses API ``input`` items (and ``instructions``) for a compose result.

    User parts are ``input_text``; assistant history parts are ``output_text``, the type the
    Responses API requires for assistant content (it rejects ``input_text`` there). Merge the
    returned dict into your request: ``{"model": ..., **to_openai_responses(result)}``.

    >>> r = {"messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
    ...      "stable_upto": -1}
    >>> req = to_openai_responses(r, system="Be brief.")
    >>> req["instructions"], req["input"][0]["type"], req["input"][0]["role"]
    ('Be brief.', 'message', 'user')
    >>> req["input"][0]["content"]
    [{'type': 'input_text', 'text': 'hi'}]
    """
    call = "to_openai_responses(result)"
    msgs = _messages(result, call)
    sys = _system(system, call)
    items = [
        {
            "type": "message",
            "role": role,
            "content": [
                {"type": "input_text" if role == "user" else "output_text", "text": t}
                for t in texts
            ],
        }
        for role, texts in msgs
    ]
    out: dict[str, Any] = {"input": items}
    if sys is not None:
        out["instructions"] = sys
    return out


def to_anthropic(
    result: Mapping[str, Any],
    *,
    system: str | None = None,
    cache: bool = True,
    ttl: str | None = None,
) -> dict[str, Any]:
    """Messages API ``messages`` (and ``system``) with ``cache_control`` breakpoints placed.

    Anthropic caches only what is marked. With ``cache=True`` the last content block of each
    message listed in ``result["breakpoints"]`` (or of ``stable_upto`` alone when the result has
    no ``breakpoints``) carries ``{"type": "ephemeral"}``, so the prefix up to it is written once
    and read at a tenth of the price on the next calls. A system prompt is identical on every
    call, so it is marked too, even when ``stable_upto`` is -1: it then stays cached across a
    rebuilt selection. Anthropic allows four breakpoints per request; when more are offered
    the system one and the latest message ones are kept (the latest covers the longest prefix).
    ``ttl="1h"`` asks for the one-hour cache (writes cost 2x instead of 1.25x); ``"5m"`` is the
    default and is sent as no ``ttl`` at all, so both spellings produce the same bytes.

    >>> r = {"messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]},
    ...                   {"role": "assistant", "parts": [{"type": "text", "text": "yo"}]},
    ...                   {"role": "user", "parts": [{"type": "text", "text": "and?"}]}],
    ...      "stable_upto": 1, "breakpoints": [1]}
    >>> req = to_anthropic(r, system="Be brief.", ttl="1h")
    >>> req["system"]
    [{'type': 'text', 'text': 'Be brief.', 'cache_control': {'type': 'ephemeral', 'ttl': '1h'}}]
    >>> [("cache_control" in m["content"][-1]) for m in req["messages"]]
    [False, True, False]
    """
    call = "to_anthropic(result)"
    if ttl not in _TTLS:
        raise ValueError(f"{call}: ttl must be None, '5m' or '1h', got {ttl!r}")
    if not isinstance(cache, bool):
        raise TypeError(f"{call}: cache must be True or False, got {cache!r}")
    msgs = _messages(result, call)
    _no_blank(msgs, call, "Anthropic")
    points = _breakpoints(result, call, len(msgs))
    sys = _system(system, call)

    def marker() -> dict[str, str]:
        # A fresh dict per block: callers may edit one request without touching the other.
        return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}

    slots = MAX_BREAKPOINTS
    out: dict[str, Any] = {}
    if sys is not None:
        block: dict[str, Any] = {"type": "text", "text": sys}
        if cache:
            block["cache_control"] = marker()
            slots -= 1
        out["system"] = [block]
    marked = set(points[-slots:]) if cache and points else set()
    messages: list[dict[str, Any]] = []
    for i, (role, texts) in enumerate(msgs):
        blocks: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
        if i in marked:
            blocks[-1]["cache_control"] = marker()
        messages.append({"role": role, "content": blocks})
    out["messages"] = messages
    return out


def to_gemini(result: Mapping[str, Any], *, system: str | None = None) -> dict[str, Any]:
    """``generateContent`` body fields (``contents``, ``systemInstruction``) for a compose result.

    Gemini requires strictly alternating ``user``/``model`` turns (HTTP 400 otherwise), while a
    compose result may hold two user messages in a row. Each content therefore carries one text
    part: the texts of a run of same-role messages (and of their parts) joined with
    :data:`JOIN`, so nothing is dropped and the boundary stays visible. Gemini's implicit cache
    needs no marker; the stable prefix is what it matches on.

    >>> u = lambda t: {"role": "user", "parts": [{"type": "text", "text": t}]}
    >>> r = {"messages": [u("earlier"), u("now?")], "stable_upto": 0}
    >>> req = to_gemini(r, system="Be brief.")
    >>> req["contents"]
    [{'role': 'user', 'parts': [{'text': 'earlier\\n\\nnow?'}]}]
    >>> req["systemInstruction"]
    {'parts': [{'text': 'Be brief.'}]}
    """
    call = "to_gemini(result)"
    msgs = _messages(result, call)
    sys = _system(system, call)
    contents: list[dict[str, Any]] = []
    for role, texts in msgs:
        g_role = "user" if role == "user" else "model"
        text = JOIN.join(texts)
        if contents and contents[-1]["role"] == g_role:
            contents[-1]["parts"][0]["text"] += JOIN + text
        else:
            contents.append({"role": g_role, "parts": [{"text": text}]})
    for k, content in enumerate(contents):
        if not content["parts"][0]["text"]:
            # Gemini answers HTTP 400 to an empty text part.
            raise ValueError(
                f"{call}: content {k} would be empty (its messages hold only empty text), "
                "which Gemini rejects; do not compose an empty query or append empty turns"
            )
    out: dict[str, Any] = {"contents": contents}
    if sys is not None:
        out["systemInstruction"] = {"parts": [{"text": sys}]}
    return out


# --------------------------------------------------------------------------- usage


def _field(obj: object, name: str) -> object:
    """``obj[name]`` for mappings, ``obj.name`` for SDK objects; None when absent."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _first(obj: object, *names: str) -> object:
    for name in names:
        value = _field(obj, name)
        if value is not None:
            return value
    return None


def _count(value: object, name: str) -> int:
    call = "cache_usage(response)"
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # some JSON decoders (and JavaScript-made logs) give 2006.0
    if not _int(value) or value < 0:
        raise ValueError(f"{call}: {name} must be a non-negative int, got {value!r}")
    return value


def _usage(inp: int, read: int, write: int) -> dict[str, int]:
    return {"input": inp, "cached_read": read, "cache_write": write}


def _gemini_usage(meta: object) -> dict[str, int]:
    # promptTokenCount already includes cachedContentTokenCount (API reference, UsageMetadata);
    # implicit caching reports no write count.
    total = _count(_first(meta, "promptTokenCount", "prompt_token_count"), "promptTokenCount")
    read = _count(
        _first(meta, "cachedContentTokenCount", "cached_content_token_count"),
        "cachedContentTokenCount",
    )
    return _usage(total, read, 0)


def cache_usage(response: object) -> dict[str, int]:
    """Read a response's prompt-cache usage into ``{"input", "cached_read", "cache_write"}``.

    ``input`` is the total input tokens, cached ones included, for every provider, so the hit
    rate is ``cached_read / input`` everywhere. Accepts the whole response or its usage block,
    as parsed JSON or as an SDK object (attribute access):

    - OpenAI Chat Completions: ``usage.prompt_tokens``, ``prompt_tokens_details.cached_tokens``
      (and ``cache_write_tokens`` where reported);
    - OpenAI Responses: ``usage.input_tokens``, ``input_tokens_details.cached_tokens`` (and
      ``cache_write_tokens``);
    - Anthropic: ``usage.input_tokens`` counts only the uncached tokens, so the total is
      ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens``;
    - Gemini: ``usageMetadata.promptTokenCount`` and ``cachedContentTokenCount`` (snake_case
      ``usage_metadata`` in the Python SDK).

    A missing count reads as 0; a response with none of these shapes raises ValueError.

    >>> cache_usage({"input_tokens": 21, "cache_read_input_tokens": 188086, "output_tokens": 393})
    {'input': 188107, 'cached_read': 188086, 'cache_write': 0}
    >>> cache_usage({"usageMetadata": {"promptTokenCount": 1200, "cachedContentTokenCount": 1000}})
    {'input': 1200, 'cached_read': 1000, 'cache_write': 0}
    """
    call = "cache_usage(response)"
    if response is None:
        raise ValueError(f"{call}: got None; pass the provider's response or its usage")
    meta = _first(response, "usageMetadata", "usage_metadata")
    if meta is not None:
        return _gemini_usage(meta)
    if _first(response, "promptTokenCount", "prompt_token_count") is not None:
        return _gemini_usage(response)
    usage = _field(response, "usage")
    u = response if usage is None else usage

    prompt = _field(u, "prompt_tokens")
    if prompt is not None:  # OpenAI Chat Completions (also most OpenAI-compatible servers)
        details = _field(u, "prompt_tokens_details")
        return _usage(
            _count(prompt, "prompt_tokens"),
            _count(_field(details, "cached_tokens"), "prompt_tokens_details.cached_tokens"),
            _count(
                _field(details, "cache_write_tokens"), "prompt_tokens_details.cache_write_tokens"
            ),
        )

    read_a = _field(u, "cache_read_input_tokens")
    write_a = _field(u, "cache_creation_input_tokens")
    creation = _field(u, "cache_creation")
    details = _field(u, "input_tokens_details")
    inp = _field(u, "input_tokens")
    if read_a is not None or write_a is not None or creation is not None:
        # Anthropic: the three counts are disjoint and add up to the prompt.
        uncached = _count(inp, "input_tokens")
        read = _count(read_a, "cache_read_input_tokens")
        if write_a is None:  # only the per-TTL breakdown was reported
            write = _count(
                _field(creation, "ephemeral_5m_input_tokens"),
                "cache_creation.ephemeral_5m_input_tokens",
            ) + _count(
                _field(creation, "ephemeral_1h_input_tokens"),
                "cache_creation.ephemeral_1h_input_tokens",
            )
        else:
            write = _count(write_a, "cache_creation_input_tokens")
        return _usage(uncached + read + write, read, write)
    if inp is not None:
        # OpenAI Responses (input_tokens includes the cached ones), or an Anthropic usage with
        # no cache fields at all, where input_tokens is then the whole prompt: same reading.
        return _usage(
            _count(inp, "input_tokens"),
            _count(_field(details, "cached_tokens"), "input_tokens_details.cached_tokens"),
            _count(
                _field(details, "cache_write_tokens"), "input_tokens_details.cache_write_tokens"
            ),
        )
    raise ValueError(
        f"{call}: no usage found in {type(response).__name__}; pass an OpenAI, Anthropic or "
        "Gemini response (or its usage / usageMetadata block)"
    )


# --------------------------------------------------------------------------- token estimate


def chars_per_token(n: float = 4.0) -> Callable[[str], int]:
    """A ``measure`` for ``Memory`` that estimates tokens as ``ceil(len(text) / n)``.

    English averages about 4 characters per token (code and JSON nearer 3, other languages
    fewer characters per token). It is an estimate: for exact OpenAI counts pass a tokenizer,
    e.g. ``Memory(measure=lambda s: len(enc.encode(s)))`` with tiktoken (docs/prompt-cache.md).

    >>> est = chars_per_token()
    >>> est("hello"), est(""), chars_per_token(3)("abcdefg")
    (2, 0, 3)
    """
    if isinstance(n, bool) or not isinstance(n, (int, float)) or not math.isfinite(n) or n <= 0:
        raise ValueError(f"chars_per_token(n): n must be a positive number, got {n!r}")
    per = float(n)

    def measure(text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"chars_per_token measure: expected a str, got {type(text).__name__}")
        return math.ceil(len(text) / per)

    return measure
