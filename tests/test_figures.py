"""Every published figure agrees with its source (issue 37).

Measured figures live in `docs/benchmarks.md` (and, for older measurements, each with its
commit, `docs/history.md`); the README and the other pages repeat some of them.  A paragraph
that cites the benchmarks ("benchmarks", "Live replay"), and a table right after one, may state
only figures its source states: the same number as written there, the budget ratio of a "Live
replay" row (mean chars / budget), or a "Live replay" bill rounded to two places.  The live
replay's per-budget figures are also checked where they sit: a table with one column per
budget, or one row per budget.  The demo's figures come from the demo itself, run here.
"""

from __future__ import annotations

import io
import re
from dataclasses import fields
from pathlib import Path

import pytest

from yait_byheart import Tuning
from yait_byheart.cli._demo import demo

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "docs" / "benchmarks.md"
HISTORY = ROOT / "docs" / "history.md"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
REPEATING = [p for p in PAGES if p not in (SOURCE, HISTORY)]
# A figure: 1,234 or 12.5 (not part of a version such as 0.1.1, nor of a longer number).
NUMBER = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d+\.\d+)(?![\d]|[.,]\d)")
CITES = re.compile(r"benchmarks|live replay", re.I)
BUDGETS = (4_000, 8_000, 20_000)


def _numbers(text: str) -> set[str]:
    return set(NUMBER.findall(text))


def _live_replay() -> dict[tuple[str, int, str], dict[str, str]]:
    """The "Live replay" table: (regime, budget, calls counted) -> its row by column."""
    section = SOURCE.read_text(encoding="utf-8").split("## Live replay", 1)[1]
    table = ("|" + section.split("\n\n|", 1)[1]).split("\n\n", 1)[0]
    lines = table.splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows: dict[tuple[str, int, str], dict[str, str]] = {}
    for line in lines[2:]:
        cells = dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=True))
        rows[(cells["regime"], int(cells["budget"].replace(",", "")), cells["calls counted"])] = (
            cells
        )
    return rows


LIVE = _live_replay()


def _ratio(budget: int) -> str:
    """The mean sticky assembled call over the budget, as pages write it (1.98)."""
    mean = int(LIVE[("sticky", budget, "assembled")]["mean chars"].replace(",", ""))
    return f"{mean / budget:.2f}"


def _demo() -> str:
    out = io.StringIO()
    demo(1_200, 0, out)
    return out.getvalue()


def _derived() -> set[str]:
    """Figures computed from the live replay's rows (budget ratios, bills to two places), and
    those the demo prints."""
    out = {_ratio(b) for b in BUDGETS} | _numbers(_demo())
    for row in LIVE.values():
        out.add(f"{float(row['billed / uncached']):.2f}")
    return out


def _cited_paragraphs(page: Path) -> list[str]:
    paragraphs = re.split(r"\n\s*\n", page.read_text(encoding="utf-8"))
    cited = []
    for i, paragraph in enumerate(paragraphs):
        table_after = paragraph.lstrip().startswith("|") and i and CITES.search(paragraphs[i - 1])
        if CITES.search(paragraph) or table_after:
            cited.append(paragraph)
    return cited


def test_the_live_replay_table_is_read() -> None:
    assert len(LIVE) == 12 and LIVE[("sticky", 8_000, "assembled")]["prefix reused"].endswith("%")


@pytest.mark.parametrize("page", REPEATING, ids=lambda p: p.name)
def test_a_page_states_only_figures_its_source_does(page: Path) -> None:
    known = _numbers(SOURCE.read_text(encoding="utf-8"))
    known |= _numbers(HISTORY.read_text(encoding="utf-8")) | _derived()
    wrong = {
        figure: paragraph.strip()[:70]
        for paragraph in _cited_paragraphs(page)
        for figure in NUMBER.findall(paragraph)
        if figure not in known
    }
    assert not wrong, f"{page.name} states figures docs/benchmarks.md does not: {wrong}"


def _per_budget_tables(page: Path) -> list[dict[int, str]]:
    """Cells of tables with one column per budget ("4,000 chars"), by row label."""
    found = []
    text = page.read_text(encoding="utf-8")
    for table in re.findall(r"^(\|[^\n]*4,000 chars[^\n]*\n(?:\|[^\n]*\n)+)", text, re.M):
        lines = table.strip().splitlines()
        budgets = [int(c.split()[0].replace(",", "")) for c in lines[0].strip("|").split("|")[1:]]
        for line in lines[2:]:
            label, *cells = (c.strip() for c in line.strip("|").split("|"))
            found.append({0: label, **dict(zip(budgets, cells, strict=True))})
    return found  # type: ignore[return-value]


def test_per_budget_figures_sit_under_their_budget() -> None:
    checked = 0
    for page in REPEATING:
        for row in _per_budget_tables(page):
            label = str(row[0])
            regime = "sticky" if "sticky" in label else "fresh"
            for budget in BUDGETS:
                source = LIVE[(regime, budget, "assembled")]
                if "prefix reused" in label:
                    assert row[budget] == source["prefix reused"], (page.name, label, budget)
                elif "billed" in label:
                    want = f"{float(source['billed / uncached']):.2f}x"
                    assert row[budget] == want, (page.name, label, budget)
                checked += 1
        text = page.read_text(encoding="utf-8")
        # Rows per budget: "| 8,000 | 85.3 % | 0.343 | 15,807 (1.98x) | ..."
        for budget_text, rest in re.findall(r"^\| (\d{1,2},000) \| (\d+\.\d %.*)$", text, re.M):
            budget = int(budget_text.replace(",", ""))
            source = LIVE[("sticky", budget, "assembled")]
            cells = [c.strip() for c in rest.strip("|").split("|")]
            assert cells[0] == source["prefix reused"], (page.name, budget)
            assert cells[1] == source["billed / uncached"], (page.name, budget)
            assert cells[2] == f"{source['mean chars']} ({_ratio(budget)}x)", (page.name, budget)
            checked += 1
    assert checked >= 2 * len(BUDGETS)


def test_budget_ratios_name_their_budget() -> None:
    """ "1.98x the budget at 8,000" and "1.82x at 20,000": each ratio beside its budget."""
    pattern = re.compile(r"(\d\.\d\d)x (?:the budget )?at (\d{1,2},000)")
    seen = 0
    for page in REPEATING:
        for paragraph in _cited_paragraphs(page):
            for ratio, budget in pattern.findall(" ".join(paragraph.split())):
                assert ratio == _ratio(int(budget.replace(",", ""))), (page.name, ratio, budget)
                seen += 1
            pairs = re.findall(r"(\d\.\d\d)x / (\d\.\d\d)x the budget at (\d+),000 / (\d+),000",
                               " ".join(paragraph.split()))  # fmt: skip
            for a, b, x, y in pairs:
                assert (a, b) == (_ratio(int(x) * 1000), _ratio(int(y) * 1000)), page.name
                seen += 1
    assert seen >= 2


def test_the_demo_figures_are_the_demo_s() -> None:
    printed = _demo()
    sent = set(re.findall(r"sent ([\d,]+) chars", printed))
    assert "budget 1,200" in printed and len(sent) >= 2
    quoted = 0
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for figure in re.findall(r'"sent ([\d,]+)"', text):
            assert figure in sent, f"{page.name}: the demo sends {sorted(sent)}, not {figure}"
            quoted += 1
        for figure in re.findall(r'demo shows "budget ([\d,]+)"', text):
            assert figure == "1,200", page.name
    assert quoted >= 1


def test_named_settings_exist() -> None:
    """A page that tells the reader to set a name names one the code has (`Tuning.x`, or a
    constant "in `file.py`")."""
    tuning = {f.name for f in fields(Tuning)}
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for name in re.findall(r"`Tuning\.(\w+)`", text):
            assert name in tuning, f"{page.name}: Tuning has no field {name!r}"
        for name, file in re.findall(r"`([A-Z][A-Z0-9_]{2,})` in `([\w/]+\.py)`", text):
            sources = list((ROOT / "yait_byheart").rglob(Path(file).name))
            assert any(re.search(rf"^{name}\b", s.read_text(), re.M) for s in sources), (
                f"{page.name}: no {name} in {file}"
            )


# -- every measured figure on every page (issue 45) -------------------------------------------

_N = r"\d[\d,]*(?:\.\d+)?"
# A measured figure: numbers joined by "-", "/", "to", "and" or "against", then a unit of time
# or size ("69-79 µs", "1.51 / 3.71 ms", "126 MB").
_MEASURED = re.compile(
    rf"(?<![\w.,-])({_N}(?:\s?(?:-|–|/|to|and|against)\s?{_N})*)\s?(ms|µs|us|s|MB|KB|GB)(?!\w)"
)
_UNITS = ("ms", "µs", "s", "MB", "KB", "GB")
# Figures with a unit that no benchmark measures: settings and facts, said where they are.
NOT_MEASURED = {
    ("store.md", "1 to 100 ms"),  # SQLite's own sleeps between lock tries
    ("store.md", "0.02-0.4 s"),  # when the crash test kills its child
    ("semantic.md", "3 KB"),  # 384 floats of 8 bytes
    ("store.md", "0.05 s"),  # CACHE_WAIT, a setting: how long compose's cache write waits
}


def _measured(text: str) -> set[tuple[str, str]]:
    """(number, unit) of every measured figure in `text`, "us" read as "µs"."""
    return {
        (value.replace(",", ""), unit.replace("us", "µs"))
        for numbers, unit in _MEASURED.findall(text)
        for value in re.findall(_N, numbers)
    }


def _table_figures(text: str) -> set[tuple[str, str]]:
    """The numbers of table cells that hold only numbers ("13.3-14.6", "**12.9-15.0** (later
    readers ...)"): their unit is the table's, so they stand for any."""
    out = set()
    for row in re.findall(r"^\|.*$", text, re.M):
        for cell in row.strip("|").split("|"):
            head = cell.replace("*", "").strip().split(" (")[0]
            if re.fullmatch(rf"{_N}(?:\s?(?:-|–|/)\s?{_N})*", head):
                out |= {(v.replace(",", ""), u) for v in re.findall(_N, head) for u in _UNITS}
    return out


def test_every_measured_figure_on_every_page_is_the_benchmarks() -> None:
    """A time or a size on any page (not only where it cites the benchmarks) is one that
    docs/benchmarks.md (or docs/history.md) states with the same unit."""
    sources = [p.read_text(encoding="utf-8") for p in (SOURCE, HISTORY)]
    known = set().union(*(_measured(t) | _table_figures(t) for t in sources))
    wrong = []
    for page in REPEATING:
        text = page.read_text(encoding="utf-8")
        for m in _MEASURED.finditer(text):
            if (page.name, m[0]) in NOT_MEASURED:
                continue
            if not _measured(m[0]) <= known:
                wrong.append(f"{page.name}:{text[: m.start()].count(chr(10)) + 1}: {m[0]!r}")
    assert not wrong, f"figures docs/benchmarks.md does not state: {wrong}"
