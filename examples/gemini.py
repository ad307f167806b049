"""byheart with the Gemini API (generateContent): compose, convert, send, and watch the cache.

    python examples/gemini.py

With GEMINI_API_KEY set it holds a three-turn conversation on top of a long seeded history and
prints, for each turn, what byheart composed and what Gemini's implicit cache did
(`cache_usage`). Without the key it is a dry run: it prints a short summary of the request
it would send (`--full`: the whole JSON). Only the standard
library is used (urllib). GEMINI_MODEL and GEMINI_BASE_URL override the defaults.

Gemini needs strictly alternating user/model turns; `to_gemini` merges consecutive same-role
messages (texts joined with a blank line). Implicit caching on 2.5 and later models needs no
marker, only a repeated prefix, which byheart keeps byte-identical between turns.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from _chat import SYSTEM, run

from yait_byheart.providers import to_gemini

MODEL = os.environ.get("GEMINI_MODEL", "gemini-2.5-flash")
BASE_URL = os.environ.get("GEMINI_BASE_URL", "https://generativelanguage.googleapis.com").rstrip(
    "/"
)


def build_body(result: dict[str, Any], live: bool) -> dict[str, Any]:
    return {**to_gemini(result, system=SYSTEM), "generationConfig": {"maxOutputTokens": 400}}


def endpoint(key: str) -> tuple[str, dict[str, str]]:
    return f"{BASE_URL}/v1beta/models/{MODEL}:generateContent", {"x-goog-api-key": key}


def reply_text(response: dict[str, Any]) -> str:
    candidates = response.get("candidates") or [{}]
    parts = candidates[0].get("content", {}).get("parts", [])
    return "".join(p.get("text", "") for p in parts if not p.get("thought"))


def main() -> int:
    return run("GEMINI_API_KEY", BASE_URL, build_body, endpoint, reply_text)


if __name__ == "__main__":
    sys.exit(main())
