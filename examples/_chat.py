"""What the provider examples share: the seeded conversation, the HTTP call and the turn loop.

Each example script (`openai_chat.py`, `openai_responses.py`, `anthropic_messages.py`,
`gemini.py`) keeps only what differs between providers: its model and base URL, how it turns a
composed result into a request body, its endpoint and auth header, and how it reads the reply.
The scripts import this module by name, which works because Python puts a script's own folder
first on `sys.path` when it is run as `python examples/<name>.py`.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from yait_byheart import Memory
from yait_byheart.providers import cache_usage

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


def post_json(
    url: str, body: dict[str, Any], headers: dict[str, str], *, base: str = ""
) -> dict[str, Any]:
    """POST `body` as JSON and return the decoded reply; an HTTP error ends the script with
    the status and the server's explanation, naming `base` (the configured base URL) or `url`."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={**headers, "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            data: dict[str, Any] = json.load(response)
            return data
    except urllib.error.HTTPError as err:
        sys.exit(f"HTTP {err.code} from {base or url}: {err.read().decode(errors='replace')}")


def count_key(value: Any, key: str) -> int:
    """How many dicts inside `value` (a decoded JSON body) hold `key`."""
    if isinstance(value, dict):
        return (key in value) + sum(count_key(v, key) for v in value.values())
    if isinstance(value, list):
        return sum(count_key(v, key) for v in value)
    return 0


def dry_run_summary(key_var: str, result: dict[str, Any], body: dict[str, Any]) -> str:
    """A few lines saying what the request for the first question holds, without sending it."""
    script = os.path.basename(sys.argv[0]) or "the example"
    listed = next((k for k in ("messages", "input", "contents") if k in body), "")
    items = body.get(listed, [])
    sizes = [len(json.dumps(m, ensure_ascii=False)) for m in items]
    lines = [
        f"dry run: no {key_var} set, so nothing is sent. This is the request byheart composed",
        f"for the first question ({QUESTIONS[0]!r}).",
        f"  model: {body.get('model', '(in the URL)')}",
        f"  {listed}: {len(items)} ({', '.join(f'{s:,}' for s in sizes)} bytes of JSON each)",
        f"  request body: {len(json.dumps(body, ensure_ascii=False)):,} bytes of JSON",
        f"  composed: mode={result['mode']}, {result['chars']:,} characters, stretches "
        f"{result['selected']} of {result['of_units']}",
        f"  cache breakpoints: stable_upto={result['stable_upto']}, "
        f"breakpoints={result['breakpoints']}, "
        f"cache_control marks in the body: {count_key(body, 'cache_control')}",
        f"Set {key_var} to hold three live turns with the provider;",
        f"`python examples/{script} --full` prints the whole JSON request.",
    ]
    return "\n".join(lines)


def run(
    key_var: str,
    base_url: str,
    build_body: Callable[[dict[str, Any], bool], dict[str, Any]],
    endpoint: Callable[[str], tuple[str, dict[str, str]]],
    reply_text: Callable[[dict[str, Any]], str],
    *,
    shown: str = "stable_upto",
) -> int:
    """Without the API key in `key_var`, print a dry-run summary of the request for the first
    question (the whole JSON with `--full` on the command line); with it, hold three live
    turns and print what byheart composed and what the cache did.

    `build_body(result, live)` makes the request body (`live` is False for the printed dump,
    which some scripts keep without the output-token limit); `endpoint(key)` gives the URL and
    auth headers; `reply_text(response)` reads the answer; `shown` names the result field
    printed next to mode and reselected (`stable_upto`, or `breakpoints` where they are marked).
    """
    mem = seeded_memory()
    key = os.environ.get(key_var)
    if not key:
        result = mem.compose(QUESTIONS[0])
        body = build_body(result, False)
        if "--full" in sys.argv[1:]:
            print(json.dumps(body, indent=2, ensure_ascii=False))
        else:
            print(dry_run_summary(key_var, result, body))
        return 0
    url, headers = endpoint(key)
    base_var = key_var.replace("API_KEY", "BASE_URL")
    for turn, question in enumerate(QUESTIONS, 1):
        result = mem.compose(question)
        try:
            response = post_json(url, build_body(result, True), headers, base=base_url)
        except (urllib.error.URLError, OSError) as err:
            # No network, a wrong host, a refused port: one line, not urllib's traceback.
            reason = getattr(err, "reason", err)
            print(
                f"cannot reach {base_url} ({reason}); check the network, or point {base_var} "
                f"at a server that answers",
                file=sys.stderr,
            )
            return 1
        reply = reply_text(response)
        print(
            f"turn {turn}: mode={result['mode']} reselected={result['reselected']} "
            f"{shown}={result[shown]} cache_usage={json.dumps(cache_usage(response))}"
        )
        print(f"  {question}\n  -> {reply.strip()}")
        mem.append("user", question)
        mem.append("assistant", reply)
    return 0
