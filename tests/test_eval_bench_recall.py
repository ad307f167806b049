"""eval/bench_recall.py at a small scale: it stores, reopens, recalls and reports each figure."""

from __future__ import annotations

import pytest

from eval import bench_recall


def test_a_small_run_reports_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_recall.main(["--conversations", "3", "--turns", "40", "--queries", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("python -m eval bench-recall --conversations 3 --turns 40")
    for figure in ("first recall after reopening", "warm, budget 6,000: median",
                   "warm, budget 20,000: p95", "append then recall", "index memory"):  # fmt: skip
        assert f"| {figure} |" in out
