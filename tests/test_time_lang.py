"""Relative dates in other languages and the newer English phrases: golden cases from
tests/data/time/*.json (one file per language, negatives included), and `when` forms."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from yait_byheart._dates.resolve import parse_when, resolve_time

DATA = Path(__file__).parent / "data" / "time"
FILES = sorted(DATA.glob("*.json"))
CASES: list[tuple[str, dict[str, Any]]] = [
    (path.stem, case) for path in FILES for case in json.loads(path.read_text(encoding="utf-8"))
]


def _case_id(item: tuple[str, dict[str, Any]]) -> str:
    return f"{item[0]}:{item[1]['text'][:30]}"


@pytest.mark.parametrize("item", CASES, ids=_case_id)
def test_golden(item: tuple[str, dict[str, Any]]) -> None:
    case = item[1]
    assert resolve_time(case["text"], case["when"]) == case["expected"]


@pytest.mark.parametrize("item", CASES, ids=_case_id)
def test_golden_is_stable_when_fed_again(item: tuple[str, dict[str, Any]]) -> None:
    case = item[1]
    assert resolve_time(case["expected"], case["when"]) == case["expected"]


def test_every_language_has_cases_and_negatives() -> None:
    for lang in ("de", "fr", "es", "it", "pt", "ru", "zh", "ja", "en_new"):
        cases = [c for name, c in CASES if name == lang]
        negatives = [c for c in cases if c["text"] == c["expected"]]
        assert len(cases) >= 20 and len(negatives) >= 2, lang


# --- parse_when in other languages ---------------------------------------------

D = date(2023, 5, 8)


@pytest.mark.parametrize(
    "when",
    [
        "8. Mai 2023", "Montag, 8. Mai 2023", "8. Mai 2023, 13:56", "8. Mai 2023 um 13:56 Uhr",
        "08.05.2023", "8.5.2023", "8 mai 2023", "le 8 mai 2023", "lundi 8 mai 2023 à 13h56",
        "8 de mayo de 2023", "lunes, 8 de mayo de 2023", "8 mayo 2023", "8 maggio 2023",
        "8 de maio de 2023", "8 мая 2023 г.", "8 мая 2023 года", "08.05.2023 г.",
        "2023年5月8日", "2023年05月08日 13:56", "2023年5月8日(月)", "2023年5月8日 星期一",
        "2023/05/08", "2023.05.08", "8 Mayo 2023",
    ],
)  # fmt: skip
def test_parse_when_other_languages(when: str) -> None:
    assert parse_when(when) == D


@pytest.mark.parametrize("when", ["05/08/2023", "5-8-2023", "05/08/23", "31.02.2023", "8 Maj 2023"])
def test_parse_when_ambiguous_or_invalid_numeric_is_refused(when: str) -> None:
    assert parse_when(when) is None


def test_parse_when_unambiguous_numeric_needs_no_order() -> None:
    assert parse_when("13/05/2023") == date(2023, 5, 13)
    assert parse_when("05/13/2023") == date(2023, 5, 13)
    assert parse_when("05/05/2023") == date(2023, 5, 5)


def test_parse_when_order_reads_ambiguous_numeric_dates() -> None:
    assert parse_when("05/08/2023", order="mdy") == D
    assert parse_when("08/05/2023", order="dmy") == D
    assert resolve_time("yesterday", "05/08/2023", order="mdy") == "yesterday [7 May 2023]"
    assert resolve_time("yesterday", "05/08/2023") == "yesterday"


def test_parse_when_bad_order_names_the_call_and_the_choices() -> None:
    with pytest.raises(ValueError, match=r"parse_when: order='ymd'.*'dmy'.*'mdy'"):
        parse_when("05/08/2023", order="ymd")


def test_memory_date_order_reads_ambiguous_when() -> None:
    from yait_byheart import Memory

    mem = Memory(date_order="dmy")
    mem.append("user", "I moved last week", when="08/05/2023")
    first = mem.compose("moved")["messages"][0]["parts"][0]["text"]
    assert first == "[08/05/2023]\nI moved last week [1-7 May 2023]"
    with pytest.raises(ValueError, match=r"Memory.append: cannot read a date"):
        Memory().append("user", "hi", when="08/05/2023")
    with pytest.raises(ValueError, match=r"Memory\(\): date_order='ymd'"):
        Memory(date_order="ymd")
