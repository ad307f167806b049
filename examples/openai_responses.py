"""byheart with the OpenAI Responses API: compose, convert, send, and watch the prompt cache.

    python examples/openai_responses.py

With OPENAI_API_KEY set it holds a three-turn conversation on top of a long seeded history and
prints, for each turn, what byheart composed and what the provider's cache did
(`cache_usage`). Without the key it prints the JSON request it would send. Only the standard
library is used (urllib). OPENAI_MODEL and OPENAI_BASE_URL override the defaults.

The history goes in `input` as message items (user parts `input_text`, assistant parts
`output_text`); the system prompt goes in `instructions`. Each call is stateless
(`store: false`, no `previous_response_id`): byheart decides what the model sees, and OpenAI's
automatic cache (1,024 tokens and up) rewards the prefix byheart keeps byte-identical.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

from yait_byheart import Memory
from yait_byheart.providers import cache_usage, to_openai_responses

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
        f"{BASE_URL}/responses",
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


def reply_text(response: dict[str, Any]) -> str:
    return "".join(
        part.get("text", "")
        for item in response.get("output", [])
        if item.get("type") == "message"
        for part in item.get("content", [])
        if part.get("type") == "output_text"
    )


def main() -> int:
    mem = seeded_memory()
    key = os.environ.get("OPENAI_API_KEY")
    if not key:
        result = mem.compose(QUESTIONS[0])
        body = {"model": MODEL, "store": False, **to_openai_responses(result, system=SYSTEM)}
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 0
    for turn, question in enumerate(QUESTIONS, 1):
        result = mem.compose(question)
        body = {
            "model": MODEL,
            "store": False,
            "max_output_tokens": 200,
            **to_openai_responses(result, system=SYSTEM),
        }
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
