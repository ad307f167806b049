"""Where cache markers go: the minimum prefix a model caches, and placing markers on blocks.

Used by `yait_byheart.providers` (``min_cacheable_tokens`` is re-exported there).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from . import _cache_models
from ._neutral import Message, size_chars
from ._usage import chars_per_token

__all__ = ["MAX_BREAKPOINTS", "long_enough", "mark", "min_cacheable_tokens", "ttl_marker"]

MAX_BREAKPOINTS = 4
"""Anthropic accepts at most 4 ``cache_control`` breakpoints per request (prompt-caching docs);
OpenAI writes at most four explicit breakpoints per request (openai SDK's PromptCacheOptions)."""


def min_cacheable_tokens(model: str) -> int | None:
    """The shortest prompt prefix, in tokens, that ``model``'s provider caches; None if unknown.

    From the table in ``docs/prompt-cache.md`` (Anthropic's prompt-caching page and OpenAI's
    guide): below it nothing is cached, so a breakpoint there buys nothing.

    Args:
        model: A model name as the provider spells it (a date suffix or a "provider/" prefix
            is fine).

    Returns:
        The minimum in tokens, or None for a model the table does not know.

    Examples:
        >>> min_cacheable_tokens("claude-sonnet-4-5-20250929")
        1024
        >>> min_cacheable_tokens("claude-haiku-4-5")
        4096
        >>> min_cacheable_tokens("claude-3-5-haiku-20241022"), min_cacheable_tokens("gpt-5.6")
        (2048, 1024)
        >>> min_cacheable_tokens("my-local-model") is None
        True
    """
    if not isinstance(model, str):
        raise TypeError(f"min_cacheable_tokens(model): model must be a str, got {model!r}")
    name = _cache_models.VERSION_DOT.sub("-", model.strip().lower().rsplit("/", 1)[-1])
    if _cache_models.OPENAI_NAME.match(name):
        return _cache_models.OPENAI_MINIMUM
    new = _cache_models.CLAUDE_NEW.search(name)
    old = _cache_models.CLAUDE_OLD.search(name)
    if new:
        family, version = new[1], (int(new[2]), int(new[3] or 0))
    elif old:
        family, version = old[3], (int(old[1]), int(old[2] or 0))
    else:
        return None
    for fam, low, high, tokens in _cache_models.CLAUDE_MINIMUMS:
        if fam == family and low <= version <= high:
            return tokens
    return None


def long_enough(
    points: list[int], msgs: list[Message], system: str | None, model: str | None, call: str
) -> tuple[list[int], bool]:
    """The breakpoints whose prefix reaches ``model``'s minimum, and whether the system prompt
    alone does. Tokens are estimated as ``chars_per_token()`` does (4 characters a token)."""
    if model is None:
        return points, True
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"{call}: model must be a model name or None, got {model!r}")
    least = min_cacheable_tokens(model)
    if least is None:
        return points, True  # unknown model: keep every breakpoint rather than guess
    estimate = chars_per_token()
    ends = list(itertools.accumulate(size_chars(parts) for _, parts in msgs))
    head = len(system or "")
    return [p for p in points if estimate("x" * (head + ends[p])) >= least], estimate(
        "x" * head
    ) >= least


def _place(
    blocks: list[list[dict[str, Any]]],
    points: list[int],
    slots: int,
    marker: Callable[[], dict[str, str]],
    key: str,
) -> None:
    """Mark, for each breakpoint message, the last block at or before its end that can carry a
    marker (``blocks[i]``: message i's markable blocks); the latest ``slots`` marks are kept."""
    chosen: list[dict[str, Any]] = []
    for p in points:
        block = next((b[-1] for b in reversed(blocks[: p + 1]) if b), None)
        if block is not None and all(block is not c for c in chosen):
            chosen.append(block)
    for block in chosen[max(0, len(chosen) - slots) :] if slots > 0 else []:
        block[key] = marker()


def mark(
    blocks: list[list[dict[str, Any]]],
    points: list[int],
    head: dict[str, Any] | None,
    marker: Callable[[], dict[str, str]],
    key: str,
) -> None:
    """Mark ``head`` (the system prompt's block, when it is to be marked), then the
    breakpoints, within the four slots a request has."""
    slots = MAX_BREAKPOINTS
    if head is not None:
        head[key] = marker()
        slots -= 1
    _place(blocks, points, slots, marker, key)


def ttl_marker(ttl: str | None, base: dict[str, str]) -> Callable[[], dict[str, str]]:
    # A fresh dict per block: callers may edit one request without touching the other.
    return lambda: {**base, "ttl": ttl} if ttl else dict(base)
