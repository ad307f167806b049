"""Reading stored turns back: a long turn's record (cut into pieces) reads through the quick
path exactly as through the checked one, and a bad one is still named."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yait_byheart._record.state import _read_turn_checked, read_turns

fields = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]), "text": st.text(max_size=40)},
    optional={
        "shown": st.text(max_size=40),
        "kind": st.sampled_from(["said", "supplied", "derived"]),
        "source": st.text(max_size=10),
        "when": st.sampled_from(["", "8 May 2023"]),
        "redacted": st.booleans(),
        "key": st.text(min_size=1, max_size=5),
    },
)


@given(fields, st.lists(st.integers(1, 10_000), min_size=1, max_size=5), st.data())
def test_a_cut_turn_reads_as_the_checked_path_reads_it(
    record: dict[str, Any], cuts: list[int], data: st.DataObject
) -> None:
    opens = data.draw(st.lists(st.booleans(), min_size=len(cuts) + 1, max_size=len(cuts) + 1))
    record = {**record, "cuts": cuts, "opens": opens}
    turns, layouts = read_turns([record])
    assert (turns[0], *layouts[0]) == _read_turn_checked(record, "turns[0]")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"cuts": [True, 5]}, r"turns\[0\]\.cuts\[\] should be int"),
        ({"opens": [True]}, r"turns\[0\]\.opens should hold one flag per piece"),
        ({"opens": [True, 1, False]}, r"turns\[0\]\.opens should be bool"),
        ({"role": "system"}, r"turns\[0\]\.role is 'system'"),
        ({"when": 5}, r"turns\[0\]\.when should be str"),
    ],
)
def test_a_bad_cut_turn_is_still_named(change: dict[str, Any], message: str) -> None:
    record = {"role": "user", "text": "a long reply", "cuts": [2, 7], "opens": [True, False, False]}
    with pytest.raises(ValueError, match=message):
        read_turns([{**record, **change}])
