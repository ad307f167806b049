"""byheart with the Anthropic Messages API: compose, mark the cache, send, and watch it work.

    python examples/anthropic_messages.py

With ANTHROPIC_API_KEY set it holds a three-turn conversation on top of a long seeded history
and prints, for each turn, what byheart composed and what the cache did (`cache_usage`: the
first turn writes the prefix, the next ones read it). Without the key it is a dry run: it
prints a short summary of the request it would send (`--full`: the whole JSON). Only the
standard library is used (urllib). ANTHROPIC_MODEL and ANTHROPIC_BASE_URL override the
defaults.

Anthropic caches only what is marked: `to_anthropic` puts `cache_control` on the system prompt
and on the messages in `result["breakpoints"]` (at most four in all). The default model needs
a prefix of 1,024 tokens; Haiku 4.5 and Opus 4.5 need 4,096 (see docs/prompt-cache.md).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from _chat import SYSTEM, run

from yait_byheart.providers import to_anthropic

MODEL = os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-5")
BASE_URL = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com").rstrip("/")


def build_body(result: dict[str, Any], live: bool) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 200, **to_anthropic(result, system=SYSTEM)}


def endpoint(key: str) -> tuple[str, dict[str, str]]:
    return f"{BASE_URL}/v1/messages", {"x-api-key": key, "anthropic-version": "2023-06-01"}


def reply_text(response: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in response.get("content", []))


def main() -> int:
    # Anthropic caches only at marked breakpoints, so those are what each turn reports.
    return run("ANTHROPIC_API_KEY", BASE_URL, build_body, endpoint, reply_text, shown="breakpoints")


if __name__ == "__main__":
    sys.exit(main())
