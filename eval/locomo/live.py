"""Live replay: what a provider prompt cache would bill for a conversation composed turn by turn.

Each user turn is a model call: ``compose(turn text)``, then the turn is appended; replies are
appended without a call. A call's cacheable prefix is ``messages[0..stable_upto]``. It is a hit
when the previous call's prefix was non-empty and this prefix equals or extends it (the same
messages, in order, verbatim). Billing, relative to sending the same characters uncached:
1.25x for prefix characters written to the cache (the part beyond the previous prefix on a hit,
the whole prefix on a miss), 0.10x for prefix characters read from it, 1.0x after the prefix.

A second bill, ``longest_prefix``, is what an automatic cache charges (OpenAI, Gemini implicit):
no write premium and no markers, 0.10x on the longest common prefix of this call's messages and
the previous call's (whole messages, then the common start of the first that differs), 1.0x on
the rest. A result with ``stable_upto`` -1 (a baseline sent uncached) bills 1.0x Anthropic-style.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from eval.locomo.data import Conversation
from eval.locomo.systems import Byheart

WRITE, READ, PLAIN = 1.25, 0.10, 1.0

Prefix = tuple[tuple[str, str], ...]  # (role, text) of each prefix message


def sent_text(message: dict[str, Any]) -> str:
    """What a message sends, counted: its texts, and a tool call's name and arguments or a
    tool result's output (an agent's rounds travel as tool parts)."""
    out = []
    for p in message.get("parts", ()):
        kind = p.get("type")
        if kind == "text":
            out.append(str(p.get("text", "")))
        elif kind == "tool_call":
            out.append(f"{p.get('id', '')}{p.get('name', '')}{p.get('arguments', '')}")
        elif kind == "tool_result":
            out.append(f"{p.get('id', '')}{p.get('output', '')}")
    return "".join(out)


def prefix_of(result: dict[str, Any], upto: int | None = None) -> Prefix:
    """The (role, text) of the messages up to `upto` (default: the result's stable_upto)."""
    end = int(result["stable_upto"]) if upto is None else upto
    return tuple((str(m["role"]), sent_text(m)) for m in result["messages"][: end + 1])


def common_chars(a: Prefix, b: Prefix) -> int:
    """The characters of the longest common prefix of two message lists."""
    n = 0
    for (role_a, text_a), (role_b, text_b) in zip(a, b, strict=False):
        if role_a != role_b:
            break
        if text_a != text_b:
            k = 0
            for x, y in zip(text_a, text_b, strict=False):
                if x != y:
                    break
                k += 1
            return n + k
        n += len(text_a)
    return n


def _chars(prefix: Prefix) -> int:
    return sum(len(text) for _, text in prefix)


@dataclass
class Ledger:
    """Accumulates cache accounting over calls; ``reset()`` between conversations."""

    calls: int = 0
    hits: int = 0
    rebuilds: int = 0
    misses_off_rebuild: int = 0  # misses on calls that did not rebuild: should be 0 when sticky
    chars: int = 0
    max_chars: int = 0
    billed: float = 0.0
    longest_prefix: float = 0.0  # the automatic cache's bill (module docstring)
    _previous: Prefix | None = field(default=None, repr=False)
    _sent: Prefix = field(default=(), repr=False)  # every message of the previous call

    def reset(self) -> None:
        self._previous = None
        self._sent = ()

    def merge(self, other: Ledger) -> None:
        """Add another conversation's totals (prefixes never carry across conversations)."""
        self.calls += other.calls
        self.hits += other.hits
        self.rebuilds += other.rebuilds
        self.misses_off_rebuild += other.misses_off_rebuild
        self.chars += other.chars
        self.max_chars = max(self.max_chars, other.max_chars)
        self.billed += other.billed
        self.longest_prefix += other.longest_prefix

    def add(self, result: dict[str, Any]) -> bool:
        """Account for one compose result; returns whether it was a cache hit."""
        prefix = prefix_of(result)
        total = sum(len(sent_text(m)) for m in result["messages"])
        prefix_chars = _chars(prefix)
        after = total - prefix_chars
        prev = self._previous
        hit = bool(prev) and bool(prefix) and prefix[: len(prev or ())] == prev
        if hit:
            reused = _chars(prev or ())
            cost = WRITE * (prefix_chars - reused) + READ * reused + PLAIN * after
        else:
            cost = WRITE * prefix_chars + PLAIN * after
        self.calls += 1
        self.hits += hit
        reselected = bool(result.get("reselected"))
        self.rebuilds += reselected
        if not hit and not reselected and prev:  # a warm prefix lost without a rebuild
            self.misses_off_rebuild += 1
        self.chars += total
        self.max_chars = max(self.max_chars, total)
        self.billed += cost
        sent = prefix_of(result, len(result["messages"]) - 1)
        common = common_chars(sent, self._sent)
        self.longest_prefix += READ * common + PLAIN * (total - common)
        self._previous, self._sent = prefix, sent
        return hit

    def summary(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "hits": self.hits,
            "hit_rate": self.hits / self.calls if self.calls else None,
            "billed_ratio": self.billed / self.chars if self.chars else None,
            # in characters at full price: comparable across regimes that send different sizes
            "billed_per_call": self.billed / self.calls if self.calls else None,
            "longest_prefix_per_call": self.longest_prefix / self.calls if self.calls else None,
            "mean_chars": self.chars / self.calls if self.calls else None,
            "max_chars": self.max_chars,
            "rebuilds": self.rebuilds,
            "misses_off_rebuild": self.misses_off_rebuild,
        }


def replay(
    conv: Conversation, budget: int, regime: str, retriever: Callable[[], Any] | None = None,
    tuning: Any = None,
) -> tuple[Ledger, Ledger]:  # fmt: skip
    """Replay one conversation as a chat; ledgers of (assembled calls, all calls).

    `retriever` makes a custom fit/rank retriever for byheart (default: its own ranking);
    `tuning` (a `yait_byheart.Tuning`, for ablations) is passed to its Memory.
    """
    assembled, every = Ledger(), Ledger()
    system = Byheart(budget=budget, regime=regime, retriever=retriever, tuning=tuning)
    system.build(())
    for turn in conv.turns:
        if turn.role == "user":
            result = dict(system.memory.compose(turn.text))
            every.add(result)
            if result["mode"] == "assembled":
                assembled.add(result)
        system.append(turn)
    return assembled, every


def records(budget: int, regime: str, assembled: Ledger, every: Ledger) -> list[dict[str, Any]]:
    base = {"system": "byheart", "regime": regime, "budget": budget}
    return [
        {**base, "calls_counted": "assembled", **assembled.summary()},
        {**base, "calls_counted": "all", **every.summary()},
    ]
