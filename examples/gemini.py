"""byheart with the Gemini API (generateContent): compose, convert, send, and watch the cache.

    python examples/gemini.py

With GEMINI_API_KEY set it holds a three-turn conversation on top of a long seeded history and
prints, for each turn, what byheart composed and what Gemini's implicit cache did
(`cache_usage`). Without the key it prints the JSON request it would send. Only the standard
library is used (urllib). GEMINI_MODEL and GEMINI_BASE_URL override the defaults.

Gemini needs strictly alternating user/model turns; `to_gemini` merges consecutive same-role
messages (texts joined with a blank line). Implicit caching on 2.5 and later models needs no
marker, only a repeated prefix, which byheart keeps byte-identical between turns.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

from yait_byheart import Memory
from yait_byheart.providers import cache_usage, to_gemini

MODEL = os.environ.get("GEMINI_MODEL", "gemini-2.5-flash")
BASE_URL = os.environ.get("GEMINI_BASE_URL", "https://generativelanguage.googleapis.com").rstrip(
    "/"
)
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
        f"{BASE_URL}/v1beta/models/{MODEL}:generateContent",
        data=json.dumps(body).encode(),
        headers={"x-goog-api-key": key, "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            data: dict[str, Any] = json.load(response)
            return data
    except urllib.error.HTTPError as err:
        sys.exit(f"HTTP {err.code} from {BASE_URL}: {err.read().decode(errors='replace')}")


def reply_text(response: dict[str, Any]) -> str:
    candidates = response.get("candidates") or [{}]
    parts = candidates[0].get("content", {}).get("parts", [])
    return "".join(p.get("text", "") for p in parts if not p.get("thought"))


def main() -> int:
    mem = seeded_memory()
    key = os.environ.get("GEMINI_API_KEY")
    config = {"generationConfig": {"maxOutputTokens": 400}}
    if not key:
        result = mem.compose(QUESTIONS[0])
        body = {**to_gemini(result, system=SYSTEM), **config}
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 0
    for turn, question in enumerate(QUESTIONS, 1):
        result = mem.compose(question)
        body = {**to_gemini(result, system=SYSTEM), **config}
        response = post(body, key)
        reply = reply_text(response)
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
