"""eval/xquad.py on small made-up files in XQuAD's format (the real data stays outside)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval import xquad

PARAGRAPHS = {
    "en": [
        ("The lighthouse on the northern cape was built in 1871 from granite blocks.",
         "When was the lighthouse built?"),
        ("Bakers in the old town sell rye bread with caraway seeds every morning.",
         "What seeds are in the rye bread?"),
        ("The river ferry carries forty cars and runs every half hour in summer.",
         "How many cars does the ferry carry?"),
    ],
    "zh": [
        ("北方海角上的灯塔建于一八七一年，用花岗岩砌成。", "灯塔是哪一年建的？"),
        ("老城的面包师每天早上卖加了香菜籽的黑麦面包。", "黑麦面包里有什么籽？"),
        ("夏天渡轮每半小时一班，可以载四十辆汽车。", "渡轮能载多少辆汽车？"),
    ],
}  # fmt: skip


@pytest.fixture
def data(tmp_path: Path) -> Path:
    for code, items in PARAGRAPHS.items():
        paragraphs = [
            {"context": c * 8, "qas": [{"question": q, "id": str(i), "answers": []}]}
            for i, (c, q) in enumerate(items)
        ]
        doc = {"data": [{"title": "t", "paragraphs": paragraphs}]}
        (tmp_path / f"xquad.{code}.json").write_text(json.dumps(doc), encoding="utf-8")
    return tmp_path


def test_each_question_finds_its_paragraph_at_a_budget_of_one(data: Path) -> None:
    for lang in xquad.found_languages(data):
        budget = max(len(p) for p in lang.paragraphs) + 200
        assert xquad.byheart_recall(lang, budget) == 1.0
        assert xquad.bm25_recall(lang, budget) == 1.0


def test_main_prints_a_row_per_system_and_writes_the_section(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "benchmarks.md"
    old = "# B\n\n## Languages (XQuAD)\n\nstale figures\n\n## Next\n\nkept\n"
    docs.write_text(old, encoding="utf-8")
    monkeypatch.setattr(xquad, "DOCS", docs)
    assert xquad.main(["--data", str(data), "--budgets", "700"]) == 0
    out = capsys.readouterr().out
    assert "| system | budget | en | zh |" in out
    assert out.count("| 700 |") == 2
    text = docs.read_text(encoding="utf-8")
    assert "stale figures" not in text and "## Next\n\nkept" in text
    assert "python -m eval xquad --budgets 700" in text


def test_missing_data_says_where_it_looked(tmp_path: Path) -> None:
    assert xquad.main(["--data", str(tmp_path), "--no-write"]) == 2
