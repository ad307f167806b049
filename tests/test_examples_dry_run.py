"""The provider examples without an API key: a dry run, said plainly, summarised (issue 15)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = {
    "openai_chat.py": ("OPENAI_API_KEY", "messages"),
    "openai_responses.py": ("OPENAI_API_KEY", "input"),
    "anthropic_messages.py": ("ANTHROPIC_API_KEY", "messages"),
    "gemini.py": ("GEMINI_API_KEY", "contents"),
}


def run_example(name: str, *args: str) -> str:
    keys = {v for v, _ in EXAMPLES.values()}
    env = {k: v for k, v in os.environ.items() if k not in keys}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_without_a_key_the_example_says_dry_run_and_stays_short(name: str) -> None:
    key_var, listed = EXAMPLES[name]
    out = run_example(name)
    assert out.startswith(f"dry run: no {key_var} set")
    assert f"  {listed}: " in out and "cache breakpoints: stable_upto=" in out
    assert "--full" in out
    assert len(out) < 2_000, "the summary should be a few lines, not the request"
    full = json.loads(run_example(name, "--full"))
    count = int(out.split(f"  {listed}: ")[1].split()[0])
    assert len(full[listed]) == count
    body_bytes = int(out.split("request body: ")[1].split()[0].replace(",", ""))
    assert body_bytes == len(json.dumps(full, ensure_ascii=False))
    if name == "anthropic_messages.py":
        marks = int(out.split("cache_control marks in the body: ")[1].split()[0])
        assert marks == json.dumps(full).count('"cache_control"') and marks >= 1


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_with_a_key_but_no_network_the_example_says_so_in_one_line(name: str) -> None:
    key_var, _ = EXAMPLES[name]
    with socket.socket() as s:  # a port nothing listens on: the connection is refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base_var = key_var.replace("API_KEY", "BASE_URL")
    env = {**os.environ, key_var: "test-key", base_var: f"http://127.0.0.1:{port}"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert f"cannot reach http://127.0.0.1:{port}" in proc.stderr and base_var in proc.stderr
