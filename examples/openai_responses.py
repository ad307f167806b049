"""byheart with the OpenAI Responses API: compose, convert, send, and watch the prompt cache.

    python examples/openai_responses.py

With OPENAI_API_KEY set it holds a three-turn conversation on top of a long seeded history and
prints, for each turn, what byheart composed and what the provider's cache did
(`cache_usage`). Without the key it is a dry run: it prints a short summary of the request
it would send (`--full`: the whole JSON). Only the standard
library is used (urllib). OPENAI_MODEL and OPENAI_BASE_URL override the defaults.

The history goes in `input` as message items (user parts `input_text`, assistant parts
`output_text`); the system prompt goes in `instructions`. Each call is stateless
(`store: false`, no `previous_response_id`): byheart decides what the model sees, and OpenAI's
automatic cache (1,024 tokens and up) rewards the prefix byheart keeps byte-identical.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from _chat import SYSTEM, run

from yait_byheart.providers import to_openai_responses

MODEL = os.environ.get("OPENAI_MODEL", "gpt-4.1-mini")
BASE_URL = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")


def build_body(result: dict[str, Any], live: bool) -> dict[str, Any]:
    # The printed request leaves out the token limit; key order is what gets printed.
    limit = {"max_output_tokens": 200} if live else {}
    return {"model": MODEL, "store": False, **limit, **to_openai_responses(result, system=SYSTEM)}


def endpoint(key: str) -> tuple[str, dict[str, str]]:
    return f"{BASE_URL}/responses", {"Authorization": f"Bearer {key}"}


def reply_text(response: dict[str, Any]) -> str:
    return "".join(
        part.get("text", "")
        for item in response.get("output", [])
        if item.get("type") == "message"
        for part in item.get("content", [])
        if part.get("type") == "output_text"
    )


def main() -> int:
    return run("OPENAI_API_KEY", BASE_URL, build_body, endpoint, reply_text)


if __name__ == "__main__":
    sys.exit(main())
