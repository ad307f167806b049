"""A fresh clone has no benchmark data (issue 22): each command that reads some says in one
line where to get it and that `--data` takes it, and exits 2, with no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = "snap-research/locomo GitHub repository"
XQUAD = "google-deepmind/xquad GitHub repository"
LONGMEMEVAL = "xiaowu0162/LongMemEval"
# Every `python -m eval` command that reads a data set, and where that data comes from.
# (`longmemeval` says where LongMemEval comes from: tests/test_eval_longmemeval.py.)
READERS = {"locomo": LOCOMO, "ablate": LOCOMO, "minilm": LOCOMO, "query-cost": LOCOMO,
           "xquad": XQUAD, "embed-cache": LOCOMO, "bench-cold": LONGMEMEVAL,
           "bench-stateless": LONGMEMEVAL, "headroom": LOCOMO,
           "agent-replay": LONGMEMEVAL, "ab-revision": LONGMEMEVAL}  # fmt: skip
# Arguments a command needs before --data (embed-cache names the benchmark it embeds;
# ab-revision reads data only to compare stateless requests).
FIRST = {"embed-cache": ["locomo"], "ab-revision": ["HEAD", "--stateless", "user.db"]}


@pytest.mark.parametrize("command", sorted(READERS))
def test_without_data_one_line_says_where_to_get_it(command: str, tmp_path: Path) -> None:
    gone = tmp_path / "not-here" / ("xquad" if command == "xquad" else "locomo10.json")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "eval", command, *FIRST.get(command, []), "--data", str(gone)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert READERS[command] in proc.stderr and "--data" in proc.stderr
    assert str(gone) in proc.stderr and not proc.stdout


def test_every_command_that_reads_data_is_listed_here() -> None:
    from eval.__main__ import COMMANDS

    reads = {
        name
        for name, command in COMMANDS.items()
        if "DEFAULT_DATA" in (ROOT / (command.module.replace(".", "/") + ".py")).read_text()
    }
    assert reads - {"longmemeval"} == set(READERS)
