"""Relative-date annotation: golden cases from tests/data/time_golden.json, and parse_when."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from yait_byheart._dates.resolve import format_day, parse_when, resolve_time

GOLDEN: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "time_golden.json").read_text(encoding="utf-8")
)


def _case_id(case: dict[str, Any]) -> str:
    return f"{case['text'][:40]}@{case['when']}"


@pytest.mark.parametrize("case", GOLDEN, ids=_case_id)
def test_golden(case: dict[str, Any]) -> None:
    assert resolve_time(case["text"], case["when"]) == case["expected"]


@pytest.mark.parametrize("case", GOLDEN, ids=_case_id)
def test_golden_output_is_stable_when_fed_again(case: dict[str, Any]) -> None:
    # A text re-fed after annotation (a restored memory) gains nothing more.
    assert resolve_time(case["expected"], case["when"]) == case["expected"]


def test_golden_file_is_substantial_and_has_negatives() -> None:
    unchanged = [c for c in GOLDEN if c["text"] == c["expected"]]
    changed = [c for c in GOLDEN if c["text"] != c["expected"]]
    assert len(GOLDEN) >= 80
    assert len(unchanged) >= 30 and len(changed) >= 50


# --- parse_when ----------------------------------------------------------------

D = date(2023, 5, 8)


@pytest.mark.parametrize(
    "when",
    [
        "1:56 pm on 8 May, 2023",
        "10:04 am on 8 May, 2023",
        "1:56pm on 8 May, 2023",
        "13:56 on 8 May 2023",
        "8 May 2023",
        "8 May, 2023",
        "May 8, 2023",
        "May 8 2023",
        "  may 8,   2023 ",
        "8th May 2023",
        "May 8th, 2023",
        "8 of May 2023",
        "Monday, 8 May 2023",
        "Mon 8 May 2023",
        "8 May 2023, 1:56 pm",
        "2023-05-08",
        "2023-05-08T13:56:00",
        "2023-05-08T13:56",
        "2023-05-08 13:56:00",
        "2023-05-08T13:56:00Z",
        "2023-05-08T13:56:00.123456+02:00",
        "2023-05-08T23:30:00-07:00",
        "2023/05/08 (Mon) 13:56",  # LongMemEval's own form
        "2023/05/08 (Mon)",
        "Mon, 08 May 2023 13:56:00 +0200",  # RFC 2822 (e-mail, HTTP)
        "Mon, 8 May 2023 13:56:00 GMT",
        "8 May 2023 13:56:00 -0700",
        D,
        datetime(2023, 5, 8, 13, 56),
        datetime(2023, 5, 8, 23, 30, tzinfo=timezone(timedelta(hours=-7))),
    ],
)
def test_parse_when_accepts(when: str | date) -> None:
    assert parse_when(when) == D


def test_parse_when_abbreviated_months() -> None:
    assert parse_when("8 Sept 2023") == date(2023, 9, 8)
    assert parse_when("Dec 31, 2023") == date(2023, 12, 31)


def test_parse_when_returns_a_plain_date_for_a_datetime() -> None:
    got = parse_when(datetime(2023, 5, 8, 13, 56))
    assert type(got) is date


@pytest.mark.parametrize(
    "when",
    [
        None,
        "",
        "   ",
        "sometime in May",
        "31 February 2023",
        "2023-02-30",
        "2023-13-01",
        "8 Maj 2023",
        "13:56 pm on 8 May, 2023",
        "1:61 pm on 8 May, 2023",
        "2023-05-08T25:00:00",
        "Friday, 8 May 2023",  # 8 May 2023 was a Monday: contradictory
        "8 May 2023 and some more words that are not a date at all, none of them",
        "8 May",
        "2023",
    ],
)
def test_parse_when_unreadable_is_none(when: str | None) -> None:
    assert parse_when(when) is None


@pytest.mark.parametrize("bad", [20230508, 1.5, ["8 May 2023"], b"8 May 2023", True])
def test_parse_when_bad_type_names_when_and_the_forms(bad: object) -> None:
    with pytest.raises(TypeError, match=r"`when` must be a str .*8 May 2023.*date"):
        parse_when(bad)  # type: ignore[arg-type]


# --- resolve_time errors and edge cases --------------------------------------


@pytest.mark.parametrize("bad", [None, b"last week", 3, ["last week"]])
def test_resolve_time_text_must_be_str(bad: object) -> None:
    with pytest.raises(TypeError, match=r"resolve_time.*text must be a str"):
        resolve_time(bad, "8 May 2023")  # type: ignore[arg-type]


def test_resolve_time_bad_when_type_raises_even_without_a_phrase() -> None:
    # A wrong type is a programming error: report it on the first turn, not
    # only on the first turn that happens to say "yesterday".
    with pytest.raises(TypeError, match="`when`"):
        resolve_time("hello", 20230508)  # type: ignore[arg-type]


def test_resolve_time_accepts_date_objects() -> None:
    assert resolve_time("yesterday", D) == "yesterday [7 May 2023]"
    assert resolve_time("yesterday", datetime(2023, 5, 8, 0, 5)) == "yesterday [7 May 2023]"


def test_resolve_time_empty_text() -> None:
    assert resolve_time("", "8 May 2023") == ""


def test_resolve_time_keeps_surrounding_text_exactly() -> None:
    text = "  Héllo!\n\tLast   week\u00a0I ran 🏃 — and  yesterday\r\n"
    assert resolve_time(text, "8 May 2023") == (
        "  Héllo!\n\tLast   week [1-7 May 2023]\u00a0I ran 🏃 — and  yesterday [7 May 2023]\r\n"
    )


def test_a_newline_splits_a_phrase() -> None:
    assert resolve_time("last\nweek", "8 May 2023") == "last\nweek"


def test_non_ascii_text_that_lower_would_lengthen() -> None:
    # "İ".lower() is two characters; positions must still line up.
    assert resolve_time("İİ last week İ", "8 May 2023") == "İİ last week [1-7 May 2023] İ"


def test_format_day() -> None:
    assert format_day(date(2023, 5, 20)) == "20 May 2023"
    assert format_day(date(2024, 1, 1)) == "1 January 2024"
