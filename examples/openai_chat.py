"""byheart with OpenAI Chat Completions: compose, convert, send, and watch the prompt cache.

    python examples/openai_chat.py

With OPENAI_API_KEY set it holds a three-turn conversation on top of a long seeded history and
prints, for each turn, what byheart composed and what the provider's cache did
(`cache_usage`). Without the key it is a dry run: it prints a short summary of the request
it would send (`--full`: the whole JSON). Only the standard
library is used (urllib). OPENAI_MODEL and OPENAI_BASE_URL override the defaults (any
OpenAI-compatible server works).

OpenAI caches automatically once a prompt reaches 1,024 tokens: nothing to mark. What earns
the discount is that byheart keeps `messages[:stable_upto + 1]` byte-identical between turns.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from _chat import SYSTEM, run

from yait_byheart.providers import to_openai

MODEL = os.environ.get("OPENAI_MODEL", "gpt-4.1-mini")
BASE_URL = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")


def build_body(result: dict[str, Any], live: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": MODEL, "messages": to_openai(result, system=SYSTEM)}
    if live:
        body["max_completion_tokens"] = 200
    return body


def endpoint(key: str) -> tuple[str, dict[str, str]]:
    return f"{BASE_URL}/chat/completions", {"Authorization": f"Bearer {key}"}


def reply_text(response: dict[str, Any]) -> str:
    return response["choices"][0]["message"]["content"] or ""


def main() -> int:
    return run("OPENAI_API_KEY", BASE_URL, build_body, endpoint, reply_text)


if __name__ == "__main__":
    sys.exit(main())
