"""compose() mid-turn (no query, a tool result last) ends with the round the model is waiting
on, natively: even when a result is long enough to be cut into pieces when stored, as long as
the round fits the hard limit (ceiling x budget); a round past the limit is cut, and its
newest call and result still end the messages natively; a round larger than the limit alone
keeps them native too, its long outputs elided (head and tail verbatim)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests._sizes import sent_size, tokenish
from yait_byheart import Memory
from yait_byheart.providers import to_anthropic, to_openai

FILE = "".join(
    f"line {k}: the quarterly numbers for region {k % 7} look steady. " for k in range(90)
)


def call(mem: Memory, call_id: str, path: str) -> None:
    arguments = json.dumps({"path": path})
    part = {"type": "tool_call", "id": call_id, "name": "read_file", "arguments": arguments}
    mem.append_message({"role": "assistant", "parts": [part]})


def result(mem: Memory, call_id: str, output: str) -> None:
    mem.append_message({"role": "user", "parts": [
        {"type": "tool_result", "id": call_id, "output": output}]})  # fmt: skip


def tail(messages: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """The last two messages' parts as (role, type, id or text)."""
    return [
        (m["role"], p["type"], p.get("id", p.get("text", "")))
        for m in messages[-2:]
        for p in m["parts"]
    ]


def history(mem: Memory, turns: int) -> None:
    for k in range(turns):
        mem.append("user", f"question {k} about the garden, tomatoes and basil, week {k}")
        mem.append("assistant", f"answer {k}: water the tomatoes, pick the basil, week {k}")


@pytest.mark.parametrize("turns", [0, 40])  # a short talk (passthrough), a long one (selected)
def test_a_long_file_read_is_sent_whole_and_native(turns: int) -> None:
    assert len(FILE) > 5_000
    mem = Memory(budget=3_000)
    history(mem, turns)
    mem.append("user", "Read notes.txt and tell me how the quarter went.")
    call(mem, "c1", "notes.txt")
    result(mem, "c1", FILE)
    assert mem._conv.entries[-1].parts > 1  # stored cut into pieces (it passes the stretch cap)
    r = mem.compose()
    assert tail(r["messages"]) == [("assistant", "tool_call", "c1"), ("user", "tool_result", "c1")]
    assert r["messages"][-1]["parts"][0]["output"] == FILE  # whole, verbatim
    assert "Read notes.txt" in json.dumps(r["messages"])  # with the request it answers
    assert r["size"] <= mem.ceiling * mem.budget
    assert len(mem) - 1 in r["included"] and len(mem) - 1 not in r["partial"]
    to_openai(r)  # every provider takes it: no orphan call or result
    to_anthropic(r, model="claude-sonnet-4-5")


def test_several_long_results_stay_native_while_the_round_fits() -> None:
    mem = Memory(budget=3_000)
    history(mem, 10)
    mem.append("user", "Compare notes.txt with last year's.")
    call(mem, "c1", "notes.txt")
    result(mem, "c1", FILE)
    r = mem.compose()
    assert tail(r["messages"])[-1] == ("user", "tool_result", "c1")
    call(mem, "c2", "old.txt")
    result(mem, "c2", FILE.replace("steady", "weak"))
    r = mem.compose()
    sent = [p for m in r["messages"] for p in m["parts"]]
    assert [p["id"] for p in sent if p["type"] == "tool_result"] == ["c1", "c2"]
    assert r["size"] <= mem.ceiling * mem.budget


def test_a_round_past_the_limit_is_cut_and_ends_with_the_newest_result_native() -> None:
    mem = Memory(budget=3_000, ceiling=2.0)  # a hard limit of 6,000: two reads do not fit
    mem.append("user", "Read the three files.")
    for k in range(3):
        call(mem, f"c{k}", f"f{k}.txt")
        result(mem, f"c{k}", FILE + f" file {k}")
    r = mem.compose()
    assert r["size"] <= 6_000
    assert tail(r["messages"]) == [("assistant", "tool_call", "c2"), ("user", "tool_result", "c2")]
    assert r["messages"][-1]["parts"][0]["output"] == FILE + " file 2"
    assert "earlier turns of this exchange omitted" in json.dumps(r["messages"])
    to_openai(r)


def test_a_result_larger_than_the_limit_alone_stays_native_its_middle_elided() -> None:
    mem = Memory(budget=1_000, ceiling=2.0)
    mem.append("user", "Read it.")
    call(mem, "c1", "big.txt")
    result(mem, "c1", FILE)  # 5,000+ characters against a limit of 2,000
    r = mem.compose()
    assert r["size"] <= 2_000 and sent_size(r) == r["size"]
    assert tail(r["messages"]) == [("assistant", "tool_call", "c1"), ("user", "tool_result", "c1")]
    output = r["messages"][-1]["parts"][0]["output"]
    head, marker, end = output.split("\n", 2)
    assert FILE.startswith(head) and FILE.endswith(end) and len(head) > 300
    left_out = len(FILE) - len(head) - len(end)
    assert marker == f"[... {left_out} characters left out to stay within the size limit ...]"
    assert r["partial"] == [2] and 2 in r["included"]
    assert mem.to_dict()["turns"][2]["tools"][0]["output"] == FILE  # the stored turn is untouched
    to_openai(r)
    to_anthropic(r, model="claude-sonnet-4-5")


def test_parallel_results_over_the_limit_are_all_elided_and_native() -> None:
    mem = Memory(budget=1_500, ceiling=2.0, measure=tokenish)
    mem.append("user", "Read both.")
    parts = [{"type": "tool_call", "id": f"c{k}", "name": "read_file", "arguments": "{}"}
             for k in range(2)]  # fmt: skip
    mem.append_message({"role": "assistant", "parts": parts})
    mem.append_message({"role": "user", "parts": [
        {"type": "tool_result", "id": f"c{k}", "output": FILE * 3} for k in range(2)]})  # fmt: skip
    r = mem.compose()
    assert r["size"] <= 3_000 and sent_size(r, tokenish) <= r["size"]
    assert [p["id"] for p in r["messages"][-1]["parts"]] == ["c0", "c1"]
    assert all("characters left out" in p["output"] for p in r["messages"][-1]["parts"])
    assert r["partial"] == [2]
    to_anthropic(r, model="claude-sonnet-4-5")


def test_a_limit_too_small_for_the_bare_round_sends_it_as_text() -> None:
    mem = Memory(budget=100, ceiling=1.0)
    mem.append("user", "Read it.")
    arguments = json.dumps({"path": "x" * 400})  # arguments are never elided
    part = {"type": "tool_call", "id": "c1", "name": "read_file", "arguments": arguments}
    mem.append_message({"role": "assistant", "parts": [part]})
    result(mem, "c1", FILE)
    r = mem.compose()
    assert r["size"] <= 100
    assert not any(p["type"] != "text" for m in r["messages"] for p in m["parts"])
