"""`python -m eval bench-cold`: its plain BM25 is the textbook formula, and both parts run on
a tiny LongMemEval-shaped file (timings are printed, never asserted)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from eval import bench_cold
from eval.bench_cold import PlainBM25


def test_the_plain_bm25_ranks_by_okapi_with_k1_1_2_and_b_0_75() -> None:
    docs = ["The cat sat.", "A dog barked at the dog", "the cat and the dog", "nothing here"]
    index = PlainBM25()
    assert [index.append(d) for d in docs] == [0, 1, 2, 3]
    assert index.top("Dog?") == [docs[1], docs[2]]  # two "dog" in a short turn beat one
    lengths = [3, 6, 5, 2]
    avg = sum(lengths) / 4
    idf = math.log(1 + (4 - 2 + 0.5) / (2 + 0.5))

    def score(tf: int, length: int) -> float:
        return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))

    assert score(2, 6) > score(1, 5)
    assert index.top("cat", k=1) == [docs[0]]  # the shorter of the two holding "cat"
    assert index.top("zebra") == []


def tiny_longmemeval(path: Path, histories: int = 2, turns: int = 30) -> Path:
    items = []
    for h in range(histories):
        sessions = [
            [{"role": "user" if i % 2 == 0 else "assistant",
              "content": f"history {h} turn {i}: we talked about the garden and tomatoes " * 3}
             for i in range(s * 10, s * 10 + 10)]
            for s in range(turns // 10)
        ]  # fmt: skip
        dates = [f"2023/05/{10 + s:02d} (Wed) 10:00" for s in range(len(sessions))]
        items.append({"haystack_sessions": sessions, "haystack_dates": dates,
                      "question": "What did we plant in the garden?"})  # fmt: skip
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(items, f)
    return path


def test_bench_cold_prints_both_parts_and_their_stages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tiny_longmemeval(tmp_path / "lme.json.gz")
    argv = ["--data", str(data), "--histories", "2", "--requests", "2", "--profile"]
    assert bench_cold.main(argv) == 0
    out = capsys.readouterr().out
    assert "cold path (LongMemEval, 1 histories of 30 turns" in out and "ratio" in out
    assert "store closed by its writer: first reopen" in out
    assert "writer ended without closing: first reopen" in out
    assert "writer still running, never closed: first reopen" in out
    assert "compose: tokenizing" in out and "open: index snapshot loaded" in out
    assert "per request MET" in out or "per request MISSED" in out


def test_bench_cold_refuses_too_few_runs(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        bench_cold.main(["--data", str(tmp_path / "x"), "--histories", "1"])
