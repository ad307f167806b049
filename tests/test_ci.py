"""What CI does outside the tests (issue 37): it writes only inside the clone's ignored
folders, and `.ci/postgres.sh stop` stops only a server that the same run started.

Two runs share one BYHEART_PG_DIR: the first starts the server, the second reuses it.  The
second run's exit trap (`stop`) must leave the first run's server up; the first run's stops it.
Needs PostgreSQL's binaries and psycopg (the script installs neither here: skipped without).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".ci" / "postgres.sh"


def _ignored(path: str) -> bool:
    found = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT, timeout=30)
    return found.returncode == 0


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="no git")
def test_built_files_stay_in_ignored_folders() -> None:
    """`mkdocs build` (site/) and CI's own outputs leave `git status` clean, and CI writes
    nothing outside the clone (no /tmp files that another run on the machine shares)."""
    assert _ignored("site/index.html") and _ignored("build/ci/demo.txt")
    run = (ROOT / ".ci" / "run").read_text()
    commands = [line for line in run.splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in commands if "/tmp" in line]


def _exports(stdout: str) -> dict[str, str | None]:
    """What the script's `export` / `unset` lines do to the environment (None: unset)."""
    out: dict[str, str | None] = {}
    for line in stdout.splitlines():
        if line.startswith("export "):
            name, _, value = line.removeprefix("export ").partition("=")
            out[name] = value.strip("'")
        elif line.startswith("unset "):
            out[line.removeprefix("unset ").strip()] = None
    return out


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=180
    )


def _after(env: dict[str, str], changes: dict[str, str | None]) -> dict[str, str]:
    out = dict(env)
    for name, value in changes.items():
        if value is None:
            out.pop(name, None)
        else:
            out[name] = value
    return out


def _up(folder: str) -> bool:
    binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
    port = Path(folder, "port").read_text().strip()
    ready = [f"{binaries}/pg_isready", "-q", "-h", "127.0.0.1", "-p", port]
    return subprocess.run(ready, timeout=30).returncode == 0


@pytest.mark.skipif(not glob.glob("/usr/lib/postgresql/*/bin/initdb"), reason="no PostgreSQL")
def test_stop_leaves_a_reused_server_to_the_run_that_started_it() -> None:
    pytest.importorskip("psycopg")  # else the script would install it
    # In /tmp itself: the server's user must reach the folder (pytest's own is private).
    folder = f"/tmp/byheart-pg-{uuid.uuid4().hex[:10]}"
    base = {k: v for k, v in os.environ.items() if not k.startswith("BYHEART_PG")}
    base.update(BYHEART_PG_DIR=folder, PYTHON=sys.executable)
    first_env = base
    try:
        first = _run(base)
        assert first.returncode == 0, first.stderr
        first_env = _after(base, _exports(first.stdout))
        assert first_env.get("BYHEART_PG_STARTED")
        # The second run in the same shell: it reuses the server, and forgets the token.
        second = _run(first_env)
        assert second.returncode == 0 and "reusing" in second.stderr, second.stderr
        second_env = _after(first_env, _exports(second.stdout))
        assert "BYHEART_PG_STARTED" not in second_env
        assert _run(second_env, "stop").returncode == 0
        assert _up(folder), "the second run stopped a server it only reused"
        assert _run(first_env, "stop").returncode == 0
        assert not _up(folder), "the run that started the server did not stop it"
    finally:
        _run(first_env, "stop")  # a no-op unless the first run's server is still up
        shutil.rmtree(folder, ignore_errors=True)
