"""The demo says why "sent" can exceed "budget" (issue 15): a budget is a rebuild's target."""

from __future__ import annotations

import io
import re

import pytest

from yait_byheart.cli._demo import demo


@pytest.mark.parametrize("budget", [1_200, 2_000])
def test_demo_explains_every_send_above_the_budget(budget: int) -> None:
    out = io.StringIO()
    demo(budget, 0, out)
    text = out.getvalue()
    assert "not a cap" in text and f"ceiling x budget = {4 * budget:,} characters" in text
    lines = text.splitlines()
    sent = [(i, int(m.group(1).replace(",", ""))) for i, line in enumerate(lines)
            if (m := re.match(r"mode=\w+  sent ([\d,]+) chars", line))]  # fmt: skip
    assert sent, "the demo printed no summary line"
    for i, chars in sent:
        above = chars > budget
        assert ("above the budget" in lines[i + 1]) == above, lines[i : i + 2]
        assert chars <= 4 * budget
    # At its default budget the shipped demo shows the case the note explains.
    if budget == 1_200:
        assert any(chars > budget for _, chars in sent)
