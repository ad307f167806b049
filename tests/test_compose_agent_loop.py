"""compose() in an agent loop ends with the current request exactly as appended.

Whatever the budget, stickiness or joined stretches, the messages end with the last user
request and every tool round after it, in order, the newest tool result last and native; a
`compose(q)` whose `q` is the last turn ends with it once.
"""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart import Memory

TOPICS = ["pricing plan euro", "garden tomatoes basil", "train Lisbon station",
          "risotto arborio rice", "violin lessons Thursday"]  # fmt: skip


def _history(mem: Memory, picks: list[int], composes: list[bool]) -> None:
    for i, pick in enumerate(picks):
        compose = i < len(composes) and composes[i]
        topic = TOPICS[pick]
        mem.append("user", f"turn {i} about the {topic}, with filler words {i}")
        mem.append("assistant", f"reply {i} on the {topic}, noted.")
        if compose:
            mem.compose()


def _tool_round(mem: Memory, call_id: str, topic: str) -> None:
    arguments = json.dumps({"q": topic})
    mem.append_message(
        {"role": "assistant", "parts": [
            {"type": "tool_call", "id": call_id, "name": "lookup", "arguments": arguments}]}
    )  # fmt: skip
    mem.append_message(
        {"role": "user", "parts": [
            {"type": "tool_result", "id": call_id, "output": f"found: {topic}"}]}
    )  # fmt: skip


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    picks=st.lists(st.integers(0, len(TOPICS) - 1), min_size=25, max_size=40),
    composes=st.lists(st.booleans(), max_size=40),
    budget=st.integers(300, 1600),
    stability=st.sampled_from([0.0, 0.5, 0.7, 1.0]),
    rounds=st.integers(1, 3),
    ask=st.integers(0, len(TOPICS) - 1),
)
def test_each_compose_ends_with_the_request_and_its_tool_rounds(
    picks: list[int], composes: list[bool], budget: int, stability: float, rounds: int,
    ask: int,
) -> None:  # fmt: skip
    mem = Memory(budget=budget, chunk=300, stability=stability)
    _history(mem, picks, composes)
    request = f"what about the {TOPICS[ask]}?"
    mem.append("user", request)
    for r in range(rounds):
        _tool_round(mem, f"call{r}", TOPICS[ask])
        messages = mem.compose()["messages"]
        texts = [p["text"] for m in messages for p in m["parts"] if p["type"] == "text"]
        newest = [m["parts"][-1] for m in messages[-2:]]
        assert [(p["type"], p["id"]) for p in newest] == [
            ("tool_call", f"call{r}"), ("tool_result", f"call{r}")]  # fmt: skip
        if budget >= 600:  # below, the settled request may not fit beside the newest round
            assert any(request in t for t in texts)  # the rounds come with their question
        if budget < 1000:
            continue  # the rounds may outgrow a stretch (half the budget): older ones settle
        # The request, then each round: call (assistant), result (user), as appended.
        tail = messages[-(2 * (r + 1) + 1) :]
        assert [p["text"] for p in tail[0]["parts"] if p["type"] == "text"][-1] == request
        for k in range(r + 1):
            call = tail[1 + 2 * k]["parts"][-1]
            result = tail[2 + 2 * k]["parts"][-1]
            assert (call["type"], call["id"]) == ("tool_call", f"call{k}")
            assert (result["type"], result["id"]) == ("tool_result", f"call{k}")


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    picks=st.lists(st.integers(0, len(TOPICS) - 1), min_size=25, max_size=40),
    composes=st.lists(st.booleans(), max_size=40),
    budget=st.integers(300, 900),
    ask=st.integers(0, len(TOPICS) - 1),
    external=st.booleans(),
)
def test_an_appended_query_ends_the_messages_once(
    picks: list[int], composes: list[bool], budget: int, ask: int, external: bool
) -> None:
    def outside(query: str) -> list[dict[str, str]]:
        return [{"text": f"A note on the {TOPICS[ask]} {TOPICS[ask]}.", "source": "notes"}]

    mem = Memory(budget=budget, chunk=300, external=outside if external else None)
    _history(mem, picks, composes)
    query = f"remind me about the {TOPICS[ask]}"
    mem.append("user", query)
    messages = mem.compose(query)["messages"]
    texts = [p["text"] for m in messages for p in m["parts"] if p["type"] == "text"]
    assert texts[-1].endswith(query)
    assert sum(t.endswith(query) for t in texts) == 1
