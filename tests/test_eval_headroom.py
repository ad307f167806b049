"""`python -m eval headroom`'s bands and table: each miss counted once, in its own cell."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from eval.headroom import BANDS, band, matrix

places = st.one_of(st.none(), st.integers(0, 400))


@given(places)
def test_a_place_falls_in_the_band_that_holds_it(place: int | None) -> None:
    name = band(place)
    if place is None:
        assert name == "unscored"
    elif place >= BANDS[-1]:
        assert name == f"past {BANDS[-1]}"
    else:
        low, high = (int(x) for x in name.split("-"))
        assert low <= place + 1 <= high  # bands count from 1


@given(st.lists(st.tuples(places, places), max_size=40))
def test_the_table_holds_every_miss_once(pairs: list[tuple[int | None, int | None]]) -> None:
    found = Counter((band(a), band(b)) for a, b in pairs)
    rows = matrix(found).splitlines()[2:]
    cells = [c.strip() for row in rows for c in row.strip("|").split("|")[1:]]
    assert sum(int(c) for c in cells if c) == len(pairs)
    assert len(rows) == len(BANDS) + 2  # each band, past the last, unscored
