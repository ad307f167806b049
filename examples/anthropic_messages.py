"""byheart with the Anthropic Messages API: compose, mark the cache, send, and watch it work.

    python examples/anthropic_messages.py

With ANTHROPIC_API_KEY set it holds a three-turn conversation on top of a long seeded history
and prints, for each turn, what byheart composed and what the cache did (`cache_usage`: the
first turn writes the prefix, the next ones read it). Without the key it prints the JSON
request it would send. Only the standard library is used (urllib). ANTHROPIC_MODEL and
ANTHROPIC_BASE_URL override the defaults.

Anthropic caches only what is marked: `to_anthropic` puts `cache_control` on the system prompt
and on the messages in `result["breakpoints"]` (at most four in all). The default model needs
a prefix of 1,024 tokens; Haiku 4.5 and Opus 4.5 need 4,096 (see docs/prompt-cache.md).
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

from yait_byheart import Memory
from yait_byheart.providers import cache_usage, to_anthropic

MODEL = os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-5")
BASE_URL = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com").rstrip("/")
SYSTEM = "You are a helpful assistant. Answer from the conversation, briefly."
QUESTIONS = [
    "What monthly price did we settle on for the Pro plan?",
    "And how long is the free trial?",
    "Remind me: which day is the launch, and who writes the announcement?",
]


def seeded_memory() -> Memory:
    """A product-planning chat of ~24,000 characters: over the default 20,000 budget, so
    byheart selects, and long enough for the provider to cache (1,024 tokens and up)."""
    facts = [
        ("pricing", "the Pro plan at 55 euro a month, annual billing at a 15 % discount"),
        ("trial", "a 14-day free trial, no card required"),
        ("launch", "launch on Tuesday 12 March; Dana writes the announcement"),
        ("support", "support by email only in the first quarter, answered within a day"),
        ("design", "the dashboard keeps the dark theme; the logo stays green"),
        ("hiring", "one backend engineer in April, a designer after the summer"),
    ]
    mem = Memory()
    for week in range(9):
        for topic, fact in facts:
            mem.append(
                "user",
                f"Week {week + 1}, about {topic}: I have been thinking it over again and "
                f"I still believe we should go with {fact}. Does that still work for you, "
                "given everything else we planned this week?",
                when=f"{week + 1} March, 2024",
            )
            mem.append(
                "assistant",
                f"Yes. For {topic} we keep {fact}. I have noted it with the other "
                "decisions so we can come back to it before the launch review.",
            )
    return mem


def post(body: dict[str, Any], key: str) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{BASE_URL}/v1/messages",
        data=json.dumps(body).encode(),
        headers={
            "x-api-key": key,
            "anthropic-version": "2023-06-01",
            "Content-Type": "application/json",
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            data: dict[str, Any] = json.load(response)
            return data
    except urllib.error.HTTPError as err:
        sys.exit(f"HTTP {err.code} from {BASE_URL}: {err.read().decode(errors='replace')}")


def main() -> int:
    mem = seeded_memory()
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        result = mem.compose(QUESTIONS[0])
        body = {"model": MODEL, "max_tokens": 200, **to_anthropic(result, system=SYSTEM)}
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 0
    for turn, question in enumerate(QUESTIONS, 1):
        result = mem.compose(question)
        body = {"model": MODEL, "max_tokens": 200, **to_anthropic(result, system=SYSTEM)}
        response = post(body, key)
        reply = "".join(b.get("text", "") for b in response.get("content", []))
        print(
            f"turn {turn}: mode={result['mode']} reselected={result['reselected']} "
            f"breakpoints={result['breakpoints']} cache_usage={json.dumps(cache_usage(response))}"
        )
        print(f"  {question}\n  -> {reply.strip()}")
        mem.append("user", question)
        mem.append("assistant", reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
