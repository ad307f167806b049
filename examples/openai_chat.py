"""byheart with OpenAI Chat Completions: compose, convert, send, and watch the prompt cache.

    python examples/openai_chat.py

With OPENAI_API_KEY set it holds a three-turn conversation on top of a long seeded history and
prints, for each turn, what byheart composed and what the provider's cache did
(`cache_usage`). Without the key it prints the JSON request it would send. Only the standard
library is used (urllib). OPENAI_MODEL and OPENAI_BASE_URL override the defaults (any
OpenAI-compatible server works).

OpenAI caches automatically once a prompt reaches 1,024 tokens: nothing to mark. What earns
the discount is that byheart keeps `messages[:stable_upto + 1]` byte-identical between turns.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

from yait_byheart import Memory
from yait_byheart.providers import cache_usage, to_openai

MODEL = os.environ.get("OPENAI_MODEL", "gpt-4.1-mini")
BASE_URL = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
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
        f"{BASE_URL}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
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
    key = os.environ.get("OPENAI_API_KEY")
    if not key:
        result = mem.compose(QUESTIONS[0])
        request = {"model": MODEL, "messages": to_openai(result, system=SYSTEM)}
        print(json.dumps(request, indent=2, ensure_ascii=False))
        return 0
    for turn, question in enumerate(QUESTIONS, 1):
        result = mem.compose(question)
        body: dict[str, Any] = {
            "model": MODEL,
            "messages": to_openai(result, system=SYSTEM),
            "max_completion_tokens": 200,
        }
        response = post(body, key)
        reply = response["choices"][0]["message"]["content"] or ""
        print(
            f"turn {turn}: mode={result['mode']} reselected={result['reselected']} "
            f"stable_upto={result['stable_upto']} cache_usage={json.dumps(cache_usage(response))}"
        )
        print(f"  {question}\n  -> {reply.strip()}")
        mem.append("user", question)
        mem.append("assistant", reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
