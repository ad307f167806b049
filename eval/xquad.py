"""``python -m eval xquad``: find the right paragraph in six languages (XQuAD).

XQuAD (Artetxe, Ruder, Yogatama, ACL 2020) holds the same 240 Wikipedia paragraphs and 1,190
questions in each language, so a difference between languages is a difference in how the
text is read. Method, per language: the 240 paragraphs are appended to one Memory as one user
turn each (a pasted paragraph is something a user sends); every question is composed afresh
(``stability=0``) at the budget; recall is the share of questions whose own paragraph is
among the turns the compose included. The baseline ranks single paragraphs with
``yait_byheart.BM25`` and sends the best that fit the same budget, in rank order.

    python -m eval xquad                       # every language found, budget 4000
    python -m eval xquad --budgets 2000,4000 --languages de,zh --no-write
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from eval.sources import XQUAD, missing
from yait_byheart import BM25, Memory

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "xquad"
DOCS = ROOT / "docs" / "benchmarks.md"
SECTION = "## Languages (XQuAD)"
ORDER = ("en", "de", "ru", "ar", "hi", "zh", "es", "ro", "tr", "vi", "el", "th")


@dataclass(frozen=True)
class Language:
    code: str
    paragraphs: list[str]
    questions: list[tuple[str, int]]  # (question, index of its paragraph)


def load(path: Path, code: str) -> Language:
    """One XQuAD file (SQuAD format)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    paragraphs: list[str] = []
    questions: list[tuple[str, int]] = []
    for article in data["data"]:
        for para in article["paragraphs"]:
            questions.extend((qa["question"], len(paragraphs)) for qa in para["qas"])
            paragraphs.append(para["context"])
    return Language(code, paragraphs, questions)


def found_languages(folder: Path, only: Sequence[str] = ()) -> list[Language]:
    """Every xquad.<code>.json in `folder` (or those of `only`), in ORDER then by code."""
    codes = sorted(
        (
            m.group(1)
            for p in folder.glob("xquad.*.json")
            if (m := re.fullmatch(r"xquad\.(\w+)\.json", p.name))
        ),
        key=lambda c: (ORDER.index(c) if c in ORDER else len(ORDER), c),
    )
    return [load(folder / f"xquad.{c}.json", c) for c in codes if not only or c in only]


def byheart_recall(lang: Language, budget: int, language: str | None = None) -> float:
    """Share of questions whose paragraph a fresh compose at `budget` included."""
    mem = Memory(budget=budget, stability=0.0, language=language)
    for text in lang.paragraphs:
        mem.append("user", text)
    hits = sum(own in mem.compose(q)["included"] for q, own in lang.questions)
    return hits / len(lang.questions)


def bm25_recall(lang: Language, budget: int) -> float:
    """Share of questions whose paragraph is among the best-ranked paragraphs fitting `budget`."""
    bm25 = BM25().fit(lang.paragraphs)
    hits = 0
    for q, own in lang.questions:
        left, sent = budget, set()
        for i in bm25.rank(q):
            if len(lang.paragraphs[i]) <= left:
                sent.add(i)
                left -= len(lang.paragraphs[i])
            if left <= 0:
                break
        hits += own in sent
    return hits / len(lang.questions)


def table(langs: Sequence[Language], budgets: Sequence[int]) -> str:
    """Markdown: one row per system and budget, one column per language."""
    head = "| system | budget | " + " | ".join(lang.code for lang in langs) + " |"
    rule = "|---|---:|" + "---:|" * len(langs)
    rows = [head, rule]
    for name, fn in (("byheart", byheart_recall), ("BM25, single paragraphs", bm25_recall)):
        for budget in budgets:
            cells = " | ".join(f"{fn(lang, budget):.3f}" for lang in langs)
            rows.append(f"| {name} | {budget:,} | {cells} |")
    return "\n".join(rows)


def write_section(text: str, docs: Path | None = None) -> None:
    """Replace (or append) the XQuAD section of `docs` (default docs/benchmarks.md)."""
    docs = docs or DOCS
    old = docs.read_text(encoding="utf-8")
    start = old.find(SECTION)
    if start < 0:
        docs.write_text(old.rstrip("\n") + "\n\n" + text + "\n", encoding="utf-8")
        return
    nxt = old.find("\n## ", start + len(SECTION))
    rest = old[nxt:] if nxt >= 0 else "\n"
    docs.write_text(old[:start] + text + "\n" + rest, encoding="utf-8")


def _budgets(text: str) -> list[int]:
    try:
        values = sorted({int(v.replace("_", "")) for v in text.split(",") if v.strip()})
    except ValueError:
        values = []
    if not values or values[0] <= 0:
        raise argparse.ArgumentTypeError(f"expected positive integers like 2000,4000, got {text!r}")
    return values


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval xquad", description=__doc__.split("\n")[0])
    p.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="folder of xquad.<lang>.json (from github.com/google-deepmind/xquad)",
    )
    p.add_argument("--budgets", type=_budgets, default=[4000], help="default 4000")
    p.add_argument("--languages", default="", help="comma-separated codes (default: all found)")
    p.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    args = p.parse_args(argv)
    only = [c for c in args.languages.split(",") if c]
    langs = found_languages(args.data, only)
    if not langs:
        return missing("python -m eval xquad", args.data, XQUAD)
    result = table(langs, args.budgets)
    print(result)
    if not args.no_write and not only:
        write_section(_section(result, args.budgets))
    return 0


def _section(result: str, budgets: Sequence[int]) -> str:
    command = "python -m eval xquad" + (
        "" if list(budgets) == [4000] else " --budgets " + ",".join(map(str, budgets))
    )
    return f"""{SECTION}

Produced by `{command}` (eval/xquad.py). XQuAD (Artetxe, Ruder and Yogatama, ACL
2020; CC BY-SA 4.0, not shipped): the `xquad.<lang>.json` files of the google-deepmind/xquad
GitHub repository; `--data DIR` names their folder (default ../shared/data/xquad). The same 240
Wikipedia paragraphs and 1,190 questions in each language. Each language's paragraphs are
appended to one Memory as one user turn each (one stretch each); every question is composed
afresh (`stability=0`) at the budget; recall is the share of questions whose own paragraph was
among the included turns. The baseline ranks single paragraphs with `yait_byheart.BM25` and
sends the best that fit the same budget. No language is forced: each paragraph's and each
question's language is read from its own words (yait_byheart/_text/lang/detect.py), and a
question that says too little is read in each plausible language, keeping the reading whose
terms the conversation holds most (`Ranker.terms`, yait_byheart/_retrieval/ranker.py).

{result}

How each language is read: docs/languages.md. XQuAD's other six languages (es, ro, tr, vi, el,
th) were not used here; the method was not tuned on them. The tokenizer before languages were
read by script: [history](history.md#languages).
"""


if __name__ == "__main__":
    raise SystemExit(main())
