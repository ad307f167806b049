"""`Column`: pages copied only when written, so copies never see each other's writes."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart.store._columns import PAGE, Column

# An operation on one of the columns: ("set", which, id share, value), ("grow", which, more),
# ("copy", which): the copy joins the columns, its values the same.
_OPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("set"),
            st.integers(0, 7),
            st.floats(0, 1, exclude_max=True),
            st.integers(-(2**31), 2**31 - 1),
        ),
        st.tuples(st.just("grow"), st.integers(0, 7), st.integers(0, 2 * PAGE + 3)),
        st.tuples(st.just("copy"), st.integers(0, 7)),
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3 * PAGE), _OPS)
def test_columns_and_their_copies_behave_as_independent_arrays(start: int, ops: list) -> None:
    base = array("i", range(start))
    kept = base.tobytes()
    columns = [Column.of("i", memoryview(base).cast("B").cast("i"))]
    models = [array("i", base)]
    for op in ops:
        k = op[1] % len(columns)
        column, model = columns[k], models[k]
        if op[0] == "set" and len(model):
            doc = int(op[2] * len(model))
            column[doc] = model[doc] = op[3]
        elif op[0] == "grow":
            column.grow(len(model) + op[2])
            model.extend([0] * op[2])
        elif op[0] == "copy":
            columns.append(column.copy())
            models.append(array("i", model))
    for column, model in zip(columns, models, strict=True):
        assert len(column) == len(model)
        assert column.values() == model
        assert column.tobytes() == model.tobytes()
        assert [column[d] for d in range(0, len(model), max(1, len(model) // 50))] == [
            model[d] for d in range(0, len(model), max(1, len(model) // 50))
        ]
    assert base.tobytes() == kept  # the shared bytes never written


def test_an_id_outside_the_column_is_an_index_error() -> None:
    column = Column("q")
    column.grow(3)
    column[2] = 2**40
    assert column[2] == 2**40
    for doc in (3, -1):
        with pytest.raises(IndexError):
            column[doc]
        with pytest.raises(IndexError):
            column[doc] = 1
