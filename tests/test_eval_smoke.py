"""CI smoke: ``python -m eval locomo`` end to end on the hand-made conversation, one budget.

At 2,000 characters the whole conversation (679 chars with date headers) fits every system,
so evidence recall is 1 wherever evidence exists, and answer-token recall differs only where
byheart's date resolution adds words: "last Saturday" on 20 March 2023 is 18 March 2023.
"""

import json
from pathlib import Path

import pytest

from eval.__main__ import main

TINY = Path(__file__).parent / "data" / "tiny_locomo.json"
SYSTEMS = [
    ("recent", "fresh"),
    ("bm25-turns", "fresh"),
    ("bm25-sessions", "fresh"),
    ("byheart", "fresh"),
    ("byheart", "sticky"),
]


def test_locomo_command_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "locomo",
        "--data",
        str(TINY),
        "--conversations",
        "1",
        "--budgets",
        "2000",
        "--live-budgets",
        "300,2000",
        "--out",
        str(tmp_path),
        "--jobs",
        "1",
    ]
    assert main(argv) == 0
    assert "locomo: 1 conversations, 6 questions" in capsys.readouterr().err
    result = json.loads((tmp_path / "locomo.json").read_text())
    rows = {(r["system"], r["regime"], r["category"]): r for r in result["rows"]}
    assert {(s, r) for s, r, _ in rows} == set(SYSTEMS)
    assert len(result["rows"]) == 5 * 6  # categories 1-5 and "all"
    for system, regime in SYSTEMS:
        everything = rows[system, regime, "all"]
        assert everything["budget"] == 2000
        assert everything["questions"] == 5 and everything["skipped"] == 1
        assert everything["evidence_recall"] == 1.0
        assert rows[system, regime, 5]["evidence_recall"] == 1.0
        assert rows[system, regime, 1]["answer_token_recall"] == 0.75  # "her" is never said
        assert rows[system, regime, 4]["answer_token_recall"] == pytest.approx(0.5 * (1 + 2 / 3))
        assert everything["mean_chars"] <= 2000
    for system in ("recent", "bm25-turns", "bm25-sessions"):
        # the session header gives "march" and "2023", nothing gives "18"
        assert rows[system, "fresh", 2]["answer_token_recall"] == pytest.approx(2 / 3)
        # 679 chars of turns and headers plus the mean question length (24+30+46+43+34)/5
        assert rows[system, "fresh", "all"]["mean_chars"] == pytest.approx(679 + 35.4)
    for regime in ("fresh", "sticky"):
        assert rows["byheart", regime, 2]["answer_token_recall"] == 1.0

    # Live replay: six user turns, so six calls. At 2,000 everything fits (rule 1): every call
    # is passthrough, and its prefix (the history so far) extends the previous one from the
    # third call on (the first has no history, so the second finds nothing cached).
    live = {(r["regime"], r["budget"], r["calls_counted"]): r for r in result["live"]}
    assert len(live) == 2 * 2 * 2
    for regime in ("sticky", "fresh"):
        for budget in (300, 2000):
            assert live[regime, budget, "all"]["calls"] == 6
        assert live[regime, 2000, "assembled"]["calls"] == 0
        passthrough = live[regime, 2000, "all"]
        assert (passthrough["hits"], passthrough["misses_off_rebuild"]) == (4, 0)
        assert 0 < passthrough["billed_ratio"] < 1

    # Outside knowledge: 4 questions with evidence in categories 1-4 (5 evidence turns);
    # junk comes from the second conversation in the file (its one evidence turn each time).
    (ext,) = result["external"]
    assert (ext["budget"], ext["needed_questions"], ext["needed_offered"]) == (2000, 4, 5)
    assert (ext["junk_questions"], ext["junk_offered"]) == (4, 4)
    assert 0 <= ext["junk_rejected"] <= 1 and 0 <= ext["needed_admitted_share"] <= 1

    md = (tmp_path / "locomo.md").read_text()
    assert "## Evidence recall, categories 1-4" in md and "| byheart | sticky | 1.000 |" in md
    assert "## Live replay" in md and "## Outside knowledge" in md


def test_bad_arguments_fail_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["locomo", "--budgets", "0,-5", "--out", str(tmp_path)])
    with pytest.raises(ValueError, match="module:Class"):
        main(["locomo", "--data", str(TINY), "--retriever", "nocolon", "--out", str(tmp_path)])
    capsys.readouterr()
    # Missing data: one line on where to get it (tests/test_eval_missing_data.py), exit 2.
    assert main(["locomo", "--data", str(tmp_path / "none.json"), "--out", str(tmp_path)]) == 2
    assert "--data" in capsys.readouterr().err
    assert main([]) == 2


def test_a_custom_retriever_runs_as_its_own_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "newest_first.py"
    module.write_text(
        "class Newest:\n"
        "    def fit(self, docs):\n"
        "        self.n = len(docs)\n"
        "        return self\n"
        "    def rank(self, query):\n"
        "        return list(range(self.n - 1, -1, -1))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["locomo", "--data", str(TINY), "--conversations", "1", "--budgets", "2000",
            "--no-live", "--no-external", "--jobs", "1", "--quiet", "--out", str(tmp_path),
            "--retriever", "newest_first:Newest"]  # fmt: skip
    assert main(argv) == 0
    rows = json.loads((tmp_path / "locomo.json").read_text())["rows"]
    mine = [r for r in rows if r["system"] == "byheart+Newest" and r["category"] == "all"]
    assert {r["regime"] for r in mine} == {"fresh", "sticky"}
    assert all(r["evidence_recall"] == 1.0 for r in mine)  # everything fits at 2,000
