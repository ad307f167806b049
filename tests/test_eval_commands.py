"""`python -m eval NAME`: the dispatcher's list and errors, and each benchmark on tiny inputs.

Only what is fast runs here (a few seconds each); the measured figures come from full runs
(docs/benchmarks.md names each command). Timings are printed, never asserted.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from eval import bench_live
from eval.__main__ import COMMANDS, main
from yait_byheart import Memory

ROOT = Path(__file__).resolve().parent.parent
TINY = Path(__file__).parent / "data" / "tiny_locomo.json"


def test_the_list_names_every_benchmark_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert len(re.findall(rf"^  {re.escape(name)} +\S", out, flags=re.M)) == 1
    assert main([]) == 2  # no benchmark named: the same list, as an error
    assert capsys.readouterr().out == out


def test_an_unknown_benchmark_exits_2_with_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["locomoo", "--budgets", "4000"]) == 2
    err = capsys.readouterr().err
    assert "unknown benchmark 'locomoo'" in err
    assert all(f"  {name} " in err for name in COMMANDS)


def test_every_command_is_a_module_with_main_argv() -> None:
    expected = {
        "locomo", "xquad", "longmemeval", "ablate", "bench-live", "bench-cold", "bench-store",
        "bench-recall", "bench-concurrency", "query-cost", "fuzz-time", "fuzz-tokens",
        "time-langs", "semantic", "minilm", "ab-revision", "embed-cache", "headroom",
        "agent-rounds", "bench-import", "bench-stateless", "agent-replay",
    }  # fmt: skip
    assert set(COMMANDS) == expected
    for name, command in COMMANDS.items():
        module = importlib.import_module(command.module)
        assert "argv" in inspect.signature(module.main).parameters, name


def test_the_dispatcher_runs_as_python_m_eval() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "eval", "nope"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 2 and "locomo" in done.stderr


def test_nothing_is_imported_until_a_command_runs() -> None:
    code = (
        "import sys, eval.__main__; print(sorted(m for m in sys.modules if m.startswith('eval')))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.stdout.strip() == "['eval', 'eval.__main__']"


def test_bench_store_runs_through_the_dispatcher(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["bench-store", "--help"])
    assert exc.value.code == 0
    assert "--pg" in capsys.readouterr().out


def test_bench_concurrency_prints_its_table_and_checks_the_store(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["bench-concurrency", "--procs", "1,2", "--ops", "12", "--append-ops", "12",
            "--rounds", "1", "--no-pg", "--workloads", "appends,mixed"]  # fmt: skip
    assert main(argv) == 0  # 1 would mean errors, or a stored conversation that was wrong
    rows = [
        ln.split(" | ")
        for ln in capsys.readouterr().out.splitlines()
        if ln.startswith("| sqlite |")
    ]
    assert [(r[1], r[2]) for r in rows] == [("1", "appends"), ("2", "appends"), ("1", "mixed"),
                                            ("2", "mixed")]  # fmt: skip
    assert all(r[5:] == ["0", "0 |"] for r in rows)


def test_ablate_runs_named_rows(capsys: pytest.CaptureFixture[str]) -> None:
    rows = ["300-char stretches + neighbours 1/2, 200 at 4,000 (kept)", "kept, no date boost"]
    argv = ["ablate", "--data", str(TINY), "--budgets", "2000", "--workers", "1", "--rows", *rows]
    assert main(argv) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| ")]
    assert lines[0] == "| variant | regime | 2,000 |"
    # At 2,000 the whole tiny conversation fits: every row finds every evidence turn and
    # sends the same words, whatever its tuning.
    cells = [ln.split(" | ") for ln in lines[1:]]
    assert [(c[0], c[1]) for c in cells] == [(f"| {r}", "fresh") for r in rows]
    assert all(c[2].startswith("1.000 / 1.000 (") for c in cells)
    assert cells[0][2] == cells[1][2]


def test_ablate_rows_are_tuning_overrides() -> None:
    from eval import ablate
    from yait_byheart import Tuning

    assert ablate.tuning_of("kept + date boost 1.25 for when-questions (kept)") == Tuning()
    assert ablate.tuning_of("kept, no strong join") == Tuning(strong_join=1.0)
    for name in ablate.VARIANTS:  # every override names a field: replace() would raise
        ablate.tuning_of(name)


def test_ablate_rejects_unknown_rows(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["ablate", "--data", str(TINY), "--rows", "no such row"])
    assert "--rows: unknown ['no such row']" in capsys.readouterr().err


def test_bench_live_prints_the_table_and_judges_floors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["bench-live", "--turns", "300", "--timed", "20", "--cold", "0"])
    out = capsys.readouterr().out
    assert re.search(r"^\| 300 \| [\d.]+ µs \| [\d.]+ µs \| [\d.]+ ms \| [\d.]+ ms \| \d+ MB "
                     r"\| [\d.]+ s \|$", out, flags=re.M)  # fmt: skip
    verdicts = re.findall(r"^(PASS|FAIL)  (\w+) at 300 turns", out, flags=re.M)
    # Only the floors that apply to any size are judged at 300 turns.
    assert [key for _, key in verdicts] == ["append_median_us", "peak_mb"]
    assert code == (0 if all(v == "PASS" for v, _ in verdicts) else 1)


def test_bench_live_no_dates_times_a_memory_that_resolves_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[object] = []

    def spy(**settings: Any) -> Memory:
        built.append(settings.get("resolve_time"))
        return Memory(**settings)

    monkeypatch.setattr(bench_live, "Memory", spy)
    bench_live.run(40, 2_000, 5, dates=False)
    bench_live.run(40, 2_000, 5)
    assert built == [False, True]


def test_bench_live_cold_path_against_plain_bm25() -> None:
    from eval import bench_live

    histories = bench_live.generated_histories(3, turns=20)
    turns, question = histories[0]
    assert len(turns) == 20 and question.endswith("?")
    two = [("user", "the oven", ""), ("user", "a deck", "")]
    assert bench_live.plain_bm25((two, "Oven?")) == [0]
    cold = bench_live.cold_path(histories, budget=2_000)
    assert cold["histories"] == 2 and cold["ratio"] > 0


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({"turns": 10_000, "compose_median_ms": 1.5, "append_median_us": 50.0, "peak_mb": 10.0},
         [True, True, True]),
        ({"turns": 10_000, "compose_median_ms": 1.51, "append_median_us": 49.0, "peak_mb": 300.0},
         [False, True, False]),
        ({"turns": 100_000, "compose_median_ms": 5.0, "append_median_us": 51.0, "peak_mb": 299.0},
         [True, False, True]),
        ({"turns": 1_000, "compose_median_ms": 9.0, "append_median_us": 1.0, "peak_mb": 1.0},
         [True, True]),
    ],
)  # fmt: skip
def test_bench_live_floors(result: dict[str, float], expected: list[bool]) -> None:
    assert [ok for _, ok in bench_live.verdicts([result])] == expected


def test_query_cost_on_tiny_data(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["query-cost", "--data", str(TINY), "--talk", "400", "--turns", "800"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "LoCoMo tiny-1: 12 turns, mean share nan" in out  # too short to have queries
    share = re.search(r"generated talk: 400 turns, mean share ([\d.]+)", out)
    assert share is not None and 0 < float(share.group(1)) < 1
    assert re.search(r"generated talk: 800 turns, [\d,]+ stretches; .* ns per posting", out)


def test_fuzz_time_small(capsys: pytest.CaptureFixture[str]) -> None:
    main(["fuzz-time", "--size", "1000", "--random", "30", "--calls", "20"])
    out = capsys.readouterr().out
    assert "60 random strings (Unicode and phrase soup, 0-400 chars): no exception" in out
    assert "resolve_time, anchor '1:56 pm on 25 May, 2023': 1,000 vs 10,000 characters" in out


def test_fuzz_tokens_quick(capsys: pytest.CaptureFixture[str]) -> None:
    main(["fuzz-tokens", "--quick"])
    out = capsys.readouterr().out
    assert "raised" not in out
    assert re.search(r"^\| all \| [\d.]+ ms \| [\d.]+ ms \| [\d.]+x \|$", out, flags=re.M)


def test_time_langs_scores_a_case_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        {"text": "I went there yesterday.", "when": "25 May 2023",
         "expected": "I went there yesterday [24 May 2023]."},
        {"text": "Nothing dated here.", "when": "25 May 2023", "expected": "Nothing dated here."},
    ]  # fmt: skip
    path = tmp_path / "en.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    assert main(["time-langs", str(path)]) == 0
    row = capsys.readouterr().out.splitlines()[1].split()
    assert row[0] == f"{tmp_path.name}/en.json" and row[1:] == ["2", "100.0%", "1", "0"]


def test_xquad_on_a_made_up_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paragraphs = [
        {"context": text * 6, "qas": [{"question": q, "id": str(i), "answers": []}]}
        for i, (text, q) in enumerate([
            ("The lighthouse was built in 1871 from granite. ", "When was the lighthouse built?"),
            ("Bakers sell rye bread with caraway seeds. ", "What seeds are in the rye bread?"),
        ])
    ]  # fmt: skip
    doc = {"data": [{"title": "t", "paragraphs": paragraphs}]}
    (tmp_path / "xquad.en.json").write_text(json.dumps(doc), encoding="utf-8")
    assert main(["xquad", "--data", str(tmp_path), "--budgets", "300", "--no-write"]) == 0
    assert "en" in capsys.readouterr().out


def test_ab_revision_against_this_checkouts_own_commit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ab-revision", "HEAD", "--turns", "200", "--rounds", "20"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("200 turns, 20 rounds alternated")
    for op in ("append", "compose"):
        assert re.search(rf"^{op}: HEAD [\d.]+ \S+, this checkout [\d.]+ \S+, ratio [\d.]+x$",
                         out, flags=re.M)  # fmt: skip


@pytest.mark.parametrize(
    ("option", "value", "what"), [("--cold", "1", "cold path"), ("--reopen", "300", "reopening")]
)
def test_ab_revision_compares_the_cold_path_and_reopening(
    option: str, value: str, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ab-revision", "HEAD", option, value]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"^{what}.*: HEAD [\d.]+ m?s, this checkout [\d.]+ m?s, ratio [\d.]+x$",
                     out, flags=re.M), out  # fmt: skip


def test_ab_revision_compares_stateless_requests_and_assembly_on_a_fixture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from eval import bench_stateless
    from eval.sources import MISSING
    from yait_byheart.store import SQLiteStore

    item = {
        "question": "What did I say about the harbour race?",
        "haystack_dates": ["2023/05/20 (Sat) 10:00"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "I ran the harbour race."},
                {"role": "assistant", "content": "Well done on the race."},
            ]
        ],
    }
    data = tmp_path / "lme.json"
    data.write_text(json.dumps([item]), encoding="utf-8")
    db = tmp_path / "user.db"
    with SQLiteStore(db) as store:
        mem = store.open("h0", user=bench_stateless.USER)
        mem.append("user", "I ran the harbour race last Saturday.")
        mem.append("assistant", "Well done on the harbour race.")
    argv = ["ab-revision", "HEAD", "--stateless", str(db), "--data", str(data), "--rounds", "2"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"stateless requests on {db}, 1 questions x 2 rounds alternated")
    for name in ("HEAD", "this checkout"):
        assert re.search(rf"^{name}: p50 [\d.]+, mean [\d.]+, p95 [\d.]+$", out, flags=re.M)
    # The requests wrote the user's pieces: assembling them, both revisions.
    assert main(["ab-revision", "HEAD", "--assemble", str(db)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^assembling .*: HEAD [\d.]+ ms, this checkout [\d.]+ ms, ratio [\d.]+x$",
                     out, flags=re.M), out  # fmt: skip
    argv[argv.index(str(data))] = str(tmp_path / "none.json")
    assert main(argv) == MISSING
    assert "no data at" in capsys.readouterr().err


def test_ab_revision_names_a_bad_revision(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["ab-revision", "no-such-rev-123", "--turns", "10"])
    assert "git archive no-such-rev-123" in capsys.readouterr().err


def test_embed_cache_says_where_the_data_is_and_lists_what_a_hybrid_run_embeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from eval import embed_cache

    assert embed_cache.main(["locomo", "--data", str(tmp_path / "none.json")]) == 2
    assert "--data PATH" in capsys.readouterr().err
    turns = [("user" if i % 2 == 0 else "assistant", f"turn {i} about tea " * 9, "8 May 2023")
             for i in range(40)]  # fmt: skip
    texts = embed_cache.texts_of(["Who made tea?", "When?"], turns, [4000, 8000])
    assert texts[:2] == ["Who made tea?", "When?"]
    assert len(texts) == len(set(texts)) > 2  # each stretch once, whatever the budgets
    assert all("turn" in t for t in texts[2:])
