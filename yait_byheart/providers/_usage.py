"""Reading each provider's prompt-cache usage into one shape, and estimating tokens.

Re-exported by `yait_byheart.providers`, where they are documented for users.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TypeGuard

__all__ = ["cache_usage", "chars_per_token", "is_int"]


def is_int(value: object) -> TypeGuard[int]:
    """An int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


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
    if not is_int(value) or value < 0:
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


def _openai_usage(total: object, details: object, name: str) -> dict[str, int]:
    """OpenAI's total (cached tokens included) and its ``{name}_details`` block."""
    return _usage(
        _count(total, name),
        _count(_field(details, "cached_tokens"), f"{name}_details.cached_tokens"),
        _count(_field(details, "cache_write_tokens"), f"{name}_details.cache_write_tokens"),
    )


def _anthropic_usage(
    inp: object, read_a: object, write_a: object, creation: object
) -> dict[str, int]:
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

    Args:
        response: A provider's response or its usage block: parsed JSON or an SDK object.

    Returns:
        Token counts: ``input`` (all input tokens, cached included), ``cached_read`` (read
        from the cache) and ``cache_write`` (written to it).

    Examples:
        >>> cache_usage(
        ...     {"input_tokens": 21, "cache_read_input_tokens": 188086, "output_tokens": 393}
        ... )
        {'input': 188107, 'cached_read': 188086, 'cache_write': 0}
        >>> cache_usage(
        ...     {"usageMetadata": {"promptTokenCount": 1200, "cachedContentTokenCount": 1000}}
        ... )
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
    found = _token_usage(response if usage is None else usage)
    if found is None:
        raise ValueError(
            f"{call}: no usage found in {type(response).__name__}; pass an OpenAI, Anthropic "
            "or Gemini response (or its usage / usageMetadata block)"
        )
    return found


def _token_usage(u: object) -> dict[str, int] | None:
    """An OpenAI or Anthropic usage block read, or None if it is neither."""
    prompt = _field(u, "prompt_tokens")
    if prompt is not None:  # OpenAI Chat Completions (also most OpenAI-compatible servers)
        return _openai_usage(prompt, _field(u, "prompt_tokens_details"), "prompt_tokens")
    read_a = _field(u, "cache_read_input_tokens")
    write_a = _field(u, "cache_creation_input_tokens")
    creation = _field(u, "cache_creation")
    inp = _field(u, "input_tokens")
    if read_a is not None or write_a is not None or creation is not None:
        return _anthropic_usage(inp, read_a, write_a, creation)
    if inp is not None:
        # OpenAI Responses (input_tokens includes the cached ones), or an Anthropic usage with
        # no cache fields at all, where input_tokens is then the whole prompt: same reading.
        return _openai_usage(inp, _field(u, "input_tokens_details"), "input_tokens")
    return None


def chars_per_token(n: float = 4.0) -> Callable[[str], int]:
    """A ``measure`` for ``Memory`` that estimates tokens as ``ceil(len(text) / n)``.

    English averages about 4 characters per token (code and JSON nearer 3, other languages
    fewer characters per token). It is an estimate: for exact OpenAI counts pass a tokenizer,
    e.g. ``Memory(measure=lambda s: len(enc.encode(s)))`` with tiktoken (docs/prompt-cache.md).

    Args:
        n: Characters per token (default 4.0); must be a positive number.

    Returns:
        ``measure(text) -> int``, the estimated token count of ``text``.

    Examples:
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
