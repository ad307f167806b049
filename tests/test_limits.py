"""The hard limit (issue 19): no compose sends more than ceiling x budget, in measure units.

The case the issue reports: at budget=2000 a user pastes a 650,000-character server log and
asks about one line of it. The log must be cut into verbatim pieces, the piece holding the line
sent, and the call kept under the limit; after 40 more turns that piece must still be found.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest

from tests._sizes import sent_size, sent_text, tokenish
from yait_byheart import Memory

LINE = "2024-03-01T12:30:00 ERROR payment-gateway zebracorn timeout after 30000 ms on shard 42"
QUESTION = "why did the zebracorn payment gateway time out on that shard?"


def server_log(size: int = 650_000) -> str:
    """A deterministic log of about `size` characters with LINE in its middle."""
    lines: list[str] = []
    total, i = 0, 0
    while total < size:
        line = (
            f"2024-03-01T12:{i // 60 % 60:02d}:{i % 60:02d} INFO worker-{i % 7} "
            f"request {i} served in {(i * 37) % 900} ms"
        )
        lines.append(line)
        total += len(line) + 1
        i += 1
    lines[len(lines) // 2] = LINE
    return "\n".join(lines)


LOG = server_log()


def pasted(**settings: Any) -> Memory:
    mem = Memory(budget=2_000, **settings)
    mem.append("user", "here is the log from last night:\n" + LOG, when="8 May 2023")
    mem.append("assistant", "I have read the log.", when="8 May 2023")
    return mem


def check_limit(mem: Memory, result: dict[str, Any], measure: Callable[[str], int]) -> None:
    limit = mem.ceiling * mem.budget
    assert sent_size(result, measure) <= limit
    assert result["size"] <= limit
    assert sent_size(result, measure) <= result["size"]  # the size reported is never short
    if measure is len:  # characters add up exactly: the reported size is what was sent
        assert sent_size(result, measure) == result["size"]


def more_turns(mem: Memory, n: int = 40) -> None:
    for k in range(n):
        role = "user" if k % 2 == 0 else "assistant"
        mem.append(role, f"turn {k}: the weather was mild and the tomatoes grew", when="9 May 2023")


CASES = [
    pytest.param({}, len, id="default"),
    pytest.param({"stability": 0.0}, len, id="fresh"),
    pytest.param({"stability": 0.5}, len, id="stability-0.5"),
    pytest.param({"stability": 1.0}, len, id="stability-1"),
    pytest.param({"measure": tokenish}, tokenish, id="tokens"),
    pytest.param({"measure": tokenish, "stability": 0.0}, tokenish, id="tokens-fresh"),
    pytest.param({"ceiling": 1.0}, len, id="ceiling-1"),
]


@pytest.mark.parametrize(("settings", "measure"), CASES)
def test_a_pasted_log_is_sent_in_pieces_within_the_limit(
    settings: dict[str, Any], measure: Callable[[str], int]
) -> None:
    mem = pasted(**settings)
    first = mem.compose(QUESTION)
    check_limit(mem, first, measure)
    assert LINE in sent_text(first)
    assert first["included"][0] == 0 and first["partial"] == [0]
    assert "[part " in sent_text(first) and " of a long message]" in sent_text(first)
    more_turns(mem)
    later = mem.compose(QUESTION)
    check_limit(mem, later, measure)
    assert LINE in sent_text(later), "the piece holding the answer is still selected"
    assert 0 in later["included"] and 0 in later["partial"]
    again = mem.compose("and what about the tomatoes?")
    check_limit(mem, again, measure)


def test_the_pieces_of_the_log_join_back_to_the_turn() -> None:
    mem = pasted()
    record = mem.to_dict()["turns"][0]
    cuts = record["cuts"]
    assert cuts == sorted(cuts) and len(cuts) > 100
    text = record.get("shown", record["text"])  # cuts are offsets into the text as shown
    bounds = [0, *cuts, len(text)]
    pieces = [text[a:b] for a, b in pairwise(bounds)]
    assert "".join(pieces) == text
    assert any(LINE in p for p in pieces), "a line is never cut while it fits a piece"


def test_the_limit_holds_with_outside_material() -> None:
    def external(query: str) -> list[dict[str, str]]:
        body = "zebracorn payment gateway shard timeout runbook step. " * 2_000
        return [{"text": body, "source": "runbook.md"}]

    mem = pasted(external=external, external_max=1.0)
    result = mem.compose(QUESTION)
    check_limit(mem, result, len)
    assert result["external"] == ["runbook.md"]
    more_turns(mem)
    later = mem.compose(QUESTION)
    check_limit(mem, later, len)


def test_the_limit_holds_when_the_log_is_the_last_turn() -> None:
    """The newest turn, still in the open stretch, is sent as its most relevant pieces."""
    mem = Memory(budget=2_000)
    mem.append("user", "hello")
    mem.append("assistant", "hi")
    mem.append("user", LOG + "\nwhich line says zebracorn?")
    result = mem.compose()
    check_limit(mem, result, len)
    assert result["partial"] == [2]
    assert result["messages"][0]["role"] == "user"
    assert result["messages"][-1]["role"] == "user"


@pytest.mark.parametrize("settings", [{}, {"measure": tokenish}, {"stability": 0.0}])
def test_a_query_larger_than_the_limit_raises_and_changes_nothing(
    settings: dict[str, Any],
) -> None:
    mem = pasted(**settings)
    mem.compose(QUESTION)
    before = json.dumps(mem.to_dict())
    stats = mem.stats
    measure = settings.get("measure", len)
    query = "zebracorn " * 4_000
    size, limit = measure(query), int(mem.ceiling * mem.budget)
    assert size > limit
    with pytest.raises(ValueError, match="query") as err:
        mem.compose(query)
    assert str(size) in str(err.value) and str(limit) in str(err.value)
    assert json.dumps(mem.to_dict()) == before
    assert mem.stats == stats
    untouched = pasted(**settings)
    untouched.compose(QUESTION)
    assert mem.compose(QUESTION) == untouched.compose(QUESTION)
