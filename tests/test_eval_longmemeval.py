"""eval/longmemeval on a small made-up file in LongMemEval's format (the real data stays outside).

Two answerable questions and one abstention question, each over three sessions stored out of
date order, with one empty user turn; at a budget above the whole history every evidence turn
is sent, by every system.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from eval.__main__ import main as eval_main
from eval.longmemeval import cli, data

FILLER = "We talked about the weather and the traffic on the ring road for a while. " * 3


def _session(*turns: tuple[str, str, bool]) -> list[dict[str, Any]]:
    out = []
    for role, content, evidence in turns:
        turn: dict[str, Any] = {"role": role, "content": content}
        if evidence:
            turn["has_answer"] = True
        out.append(turn)
    return out


def _entry(qid: str, qtype: str, question: str, evidence: dict[str, str]) -> dict[str, Any]:
    """Sessions s2 (May 20), s1 (May 1), s3 (May 25), in that stored order; `evidence` puts one
    has_answer user turn in the named sessions."""
    sessions, ids, dates = [], [], []
    for sid, date in (
        ("s2", "2023/05/20 (Sat) 10:00"),
        ("s1", "2023/05/01 (Mon) 09:00"),
        ("s3", "2023/05/25 (Thu) 12:00"),
    ):
        turns = [("user", FILLER, False), ("assistant", "Sounds tiring. " + FILLER, False)]
        if sid in evidence:
            turns += [("user", evidence[sid], True), ("assistant", "Noted, thank you!", False)]
        if sid == "s3":
            turns += [("user", "", False), ("assistant", "Did you mean to send something?", False)]
        sessions.append(_session(*turns))
        ids.append(f"{qid}_{sid}")
        dates.append(date)
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": question,
        "answer": "x",
        "question_date": "2023/06/01 (Thu) 08:00",
        "haystack_sessions": sessions,
        "haystack_session_ids": ids,
        "haystack_dates": dates,
        "answer_session_ids": [f"{qid}_{s}" for s in evidence],
    }


ENTRIES = [
    _entry(
        "q1",
        "single-session-user",
        "What breed is my dog Biscuit?",
        {"s2": "My dog Biscuit is a golden retriever puppy."},
    ),
    _entry(
        "q2",
        "multi-session",
        "How many violin lessons did I take in total?",
        {
            "s1": "I took three violin lessons in April.",
            "s3": "I took two more violin lessons this week.",
        },
    ),
    _entry("q3_abs", "multi-session", "How many cello lessons did I take?", {}),
]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    # gzip under a plain .json name: the loader goes by the magic bytes, not the name
    p = tmp_path / "lme.json"
    p.write_bytes(gzip.compress(json.dumps(ENTRIES).encode()))
    return p


def _run(path: Path, tmp_path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / "out.json"
    assert cli.main(["--data", str(path), "--json", str(out), "--quiet", *args]) == 0
    return json.loads(out.read_text())


def test_everything_sent_gives_full_recall(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _run(path, tmp_path, "--budgets", "100000", "--no-live")
    out = capsys.readouterr().out
    assert out.startswith("python -m eval longmemeval --data ")
    assert "2 of 2 answerable questions (1 abstention questions skipped)" in out
    assert result["meta"]["systems"] == ["byheart", "turn-bm25"]
    records = result["records"]
    assert {r["question_id"] for r in records} == {"q1", "q2"}
    assert len(records) == 2 * 2
    for r in records:
        assert r["turn_recall"] == r["session_recall"] == r["whole_turn_recall"] == 1.0
        assert r["turns"] == 10 if r["question_id"] == "q1" else 12
    for name in ("byheart", "turn-bm25"):
        s = result["summary"]["100000"][name]
        assert s["turn_recall"] == 1.0 and s["by_type"]["multi-session"] == 1.0


def test_a_small_budget_sends_less_and_bm25_still_finds_the_rare_words(
    path: Path, tmp_path: Path
) -> None:
    result = _run(path, tmp_path, "--budgets", "300", "--no-live", "--systems", "turn-bm25")
    records = {r["question_id"]: r for r in result["records"]}
    # only the evidence turns share "Biscuit" / "violin lessons" with the questions
    assert records["q1"]["turn_recall"] == 1.0
    assert records["q2"]["turn_recall"] == 1.0
    assert all(r["chars"] <= 300 for r in records.values())


def test_the_live_replay_reaches_the_evidence_and_reuses_the_prefix(
    path: Path, tmp_path: Path
) -> None:
    result = _run(path, tmp_path, "--budgets", "100000", "--systems", "byheart-live")
    for r in result["records"]:
        assert r["turn_recall"] == 1.0
        cache = r["cache"]
        # one call per non-blank user turn, then the question
        assert cache["calls"] == r["composes"] == (4 if r["question_id"] == "q1" else 5) + 1
        assert cache["hits"] >= cache["calls"] - 2  # the first call has nothing cached


def test_a_user_turn_above_the_hard_limit_is_no_call(path: Path, tmp_path: Path) -> None:
    # budget 50, ceiling 4: the three 222-char filler user turns cannot be sent as a query
    result = _run(path, tmp_path, "--budgets", "50", "--systems", "byheart-live")
    for r in result["records"]:
        evidence_turns = 1 if r["question_id"] == "q1" else 2
        assert r["cache"]["unsendable"] == 3
        assert r["cache"]["calls"] == evidence_turns + 1
    assert result["summary"]["50"]["byheart-live"]["unsendable"] == 6


def test_sessions_are_read_in_date_order() -> None:
    q = data.parse(ENTRIES[1])
    assert q.sessions == ("q2_s1", "q2_s2", "q2_s3")
    assert [q.turns[i].text[:8] for i in q.evidence] == ["I took t"] * 2
    assert [q.session_of(i) for i in q.evidence] == ["q2_s1", "q2_s3"]
    assert "" in [t.text for t in q.turns]  # the empty turn is kept as the data has it


def test_missing_data_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert eval_main(["longmemeval", "--data", str(tmp_path / "none.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert "longmemeval_s_cleaned.json" in line and "--data PATH" in line


def test_not_a_longmemeval_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"conversation": {}}]', encoding="utf-8")
    assert cli.main(["--data", str(bad)]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_the_stratified_sample_is_fixed_by_the_seed() -> None:
    entries = [
        {"question_id": f"{t}{i}", "question_type": t}
        for t, n in (("a", 20), ("b", 10), ("c", 5))
        for i in range(n)
    ]
    first = data.stratified_sample(entries, 7, seed=1)
    assert first == data.stratified_sample(entries, 7, seed=1)
    assert [e["question_type"] for e in first].count("a") == 4  # 7 x 20/35
    assert [e["question_type"] for e in first].count("b") == 2
    assert [e["question_type"] for e in first].count("c") == 1
    assert first == sorted(first, key=entries.index)  # file order
    seeds = {
        tuple(e["question_id"] for e in data.stratified_sample(entries, 7, s)) for s in (1, 2, 3)
    }
    assert len(seeds) > 1
    assert data.stratified_sample(entries, 99, seed=1) == entries


def test_sample_through_main_is_deterministic(path: Path, tmp_path: Path) -> None:
    args = ("--budgets", "100000", "--no-live", "--sample", "1", "--seed", "5")
    first = [r["question_id"] for r in _run(path, tmp_path, *args)["records"]]
    again = [r["question_id"] for r in _run(path, tmp_path, *args)["records"]]
    assert first == again and len(set(first)) == 1


def test_hybrid_minilm_is_skipped_in_one_line_without_its_packages(
    path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cli, "HYBRID_NEEDS", ("no_such_module_for_this_test",))
    result = _run(path, tmp_path, "--budgets", "100000", "--systems", "hybrid-minilm")
    assert result["meta"]["systems"] == [] and result["records"] == []
    skipped = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("hybrid")]
    assert skipped == [
        "hybrid-minilm skipped: no_such_module_for_this_test not installed "
        "(pip install -e '.[eval]')"
    ]


def test_a_tuning_override_reaches_byheart(path: Path, tmp_path: Path) -> None:
    # Stretches of a few characters instead of a third of chunk: the selection at a small
    # budget must change (what is sent, or its size) unless the override was ignored.
    args = ("--budgets", "400", "--no-live", "--systems", "byheart")
    base = _run(path, tmp_path, *args)["records"]
    tuned = _run(path, tmp_path, *args, "--tuning", "stretch_share=0.01")["records"]
    assert [(r["chars"], r["turn_recall"]) for r in base] != [
        (r["chars"], r["turn_recall"]) for r in tuned
    ]


def test_a_bad_tuning_override_is_one_line_and_exit_2(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["--data", str(path), "--tuning", "no_such_field=1"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "no_such_field" in line and "NAME=VALUE" in line


def test_across_stores_sessions_as_conversations_and_recalls_the_evidence(
    path: Path, tmp_path: Path
) -> None:
    result = _run(path, tmp_path, "--budgets", "600", "--no-live", "--systems", "byheart",
                  "--across")  # fmt: skip
    assert result["meta"]["systems"] == ["byheart", "byheart-across"]
    across = {r["question_id"]: r for r in result["records"] if r["system"] == "byheart-across"}
    assert across["q1"]["turn_recall"] == 1.0 and across["q2"]["turn_recall"] == 1.0
    # Only the admitted passages count: the filler sessions are not sent.
    assert all(r["chars"] <= 2 * 600 for r in across.values())


def test_hybrid_weights_run_one_system_each_and_the_best_per_question(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import functools

    import eval.locomo.systems as locomo_systems
    from eval.semantic import TrigramEmbed
    from yait_byheart.semantic import Hybrid

    def load(spec: str) -> tuple[Any, str]:  # MiniLM's stand-in: no model to load
        weight = float(spec.partition("@")[2])
        return functools.partial(Hybrid, TrigramEmbed(), weight=weight), spec

    monkeypatch.setattr(cli, "HYBRID_NEEDS", ())
    monkeypatch.setattr(locomo_systems, "load_retriever", load)
    args = ("--budgets", "600", "--no-live", "--systems", "hybrid-minilm")
    result = _run(path, tmp_path, *args, "--hybrid-weights", "0", "2")
    names = ["hybrid-minilm@0", "hybrid-minilm@2"]
    assert result["meta"]["systems"] == [*names, cli.ORACLE]
    by = {(r["system"], r["question_id"]): r["turn_recall"] for r in result["records"]}
    questions = {q for _, q in by}
    for q in questions:
        assert by[(cli.ORACLE, q)] == max(by[(name, q)] for name in names)


def test_best_per_question_keeps_the_first_best_record_relabelled() -> None:
    rows = [
        {"question_id": "a", "budget": 1, "system": "x", "turn_recall": 0.5},
        {"question_id": "a", "budget": 1, "system": "y", "turn_recall": 1.0},
        {"question_id": "a", "budget": 2, "system": "x", "turn_recall": 1.0},
        {"question_id": "a", "budget": 2, "system": "y", "turn_recall": 1.0},
        {"question_id": "a", "budget": 2, "system": "z", "turn_recall": 1.0},
    ]
    best = cli.best_per_question(rows, ["x", "y"])
    assert [(r["budget"], r["turn_recall"], r["system"]) for r in best] == [
        (1, 1.0, cli.ORACLE),
        (2, 1.0, cli.ORACLE),
    ]
    assert rows[1]["system"] == "y"  # the records themselves are left as they were


def test_a_negative_hybrid_weight_is_refused_by_the_parser(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--data", str(path), "--hybrid-weights", "-1"])
    assert exit_info.value.code == 2
    assert "expected a weight >= 0, got '-1'" in capsys.readouterr().err
