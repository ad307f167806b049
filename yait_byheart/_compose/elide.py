"""Fitting an open tool round larger than the hard limit, still native.

The model mid-turn waits for the result of its newest call: sent as text, the round reads as
history and the provider sees no pending call answered. So the round keeps its native call and
result, and the long strings in it (tool outputs, the entries' texts) keep a verbatim head and
tail around a marker that says how many characters were left out.

>>> elided("abcdefghij" * 10, 20)
'abcdefghij\\n[... 80 characters left out to stay within the size limit ...]\\nabcdefghij'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .._turns.render import Part, tool_line
from .context import Item


def elided(text: str, keep: int) -> str:
    """`text` with its middle left out: the first and last `keep` // 2 characters (about) kept
    verbatim, the marker between; `text` itself when that would not be shorter."""
    head = keep - keep // 2
    gone = len(text) - keep
    middle = f"\n[... {gone} characters left out to stay within the size limit ...]\n"
    if gone <= len(middle):
        return text
    return text[:head] + middle + text[len(text) - keep // 2 :]


def fit_round(
    items: list[Item], room: int, measure: Callable[[str], int]
) -> tuple[list[Item], set[int]] | None:
    """`items` (a native round) with their long strings elided so they measure at most `room`,
    keeping as much of each as fits (the longest are cut first); with the entries elided.
    None when even the bare markers do not fit."""
    longest = max((len(s) for item in items for s in _strings(item)), default=0)
    best = _cut(items, 0, measure)
    if _size(best[0]) > room:
        return None
    low, high = 0, longest
    while low < high:  # the largest share of characters per string that still fits
        keep = (low + high + 1) // 2
        trial = _cut(items, keep, measure)
        if _size(trial[0]) <= room:
            low, best = keep, trial
        else:
            high = keep - 1
    return best


def _strings(item: Item) -> list[str]:
    return [item.text, *(p["output"] for p in item.tools if p["type"] == "tool_result")]


def _size(items: list[Item]) -> int:
    return sum(item.size for item in items)


def _cut(
    items: list[Item], keep: int, measure: Callable[[str], int]
) -> tuple[list[Item], set[int]]:
    out: list[Item] = []
    refs: set[int] = set()
    for item in items:
        text = elided(item.text, keep)
        tools = tuple(_cut_part(p, keep) for p in item.tools)
        if text == item.text and tools == item.tools:
            out.append(item)
            continue
        # What the entry adds besides its text and tool lines (a join with the message before).
        extra = item.size - _measured(item.text, item.tools, measure)
        size = extra + _measured(text, tools, measure)
        out.append(replace(item, text=text, tools=tools, size=size))
        refs.add(item.ref)
    return out, refs


def _cut_part(part: Part, keep: int) -> Part:
    if part["type"] != "tool_result":
        return part
    output = elided(part["output"], keep)
    return part if output == part["output"] else {**part, "output": output}


def _measured(text: str, tools: tuple[Part, ...], measure: Callable[[str], int]) -> int:
    return (measure(text) if text else 0) + sum(measure(tool_line(p)) for p in tools)
