"""ByheartSession in real OpenAI Agents SDK runs: a scripted model calls a function tool on
every run; the session must keep every item exactly (as the SDK's own SQLiteSession does) while
the model is sent a composed selection within the Memory's limit. No network."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("agents")

from agents import Agent, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.memory import Session, SQLiteSession
from agents.testing import ScriptedModel, assistant_message, function_call

from yait_byheart import Memory
from yait_byheart.integrations.openai_agents import ByheartSession
from yait_byheart.store import SQLiteStore

set_tracing_disabled(True)  # nothing leaves the machine, not even traces
RUNS = 12
PAD = "The forecast office adds its usual long note about wind and humidity. " * 2


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}, {len(city)} degrees. {PAD}"


def script(runs: int) -> list[Any]:
    steps: list[Any] = []
    for k in range(runs):
        steps.append([function_call("get_weather", {"city": f"City{k}"}, call_id=f"call_{k}")])
        steps.append([assistant_message(f"In City{k} it is sunny, {len(f'City{k}')} degrees.")])
    return steps


def question(k: int) -> str:
    return f"What is the weather in City{k}? I plan a trip about topic {k} soon."


async def drive(session: Any, config: RunConfig | None, runs: int = RUNS) -> ScriptedModel:
    model = ScriptedModel(script(runs))
    agent = Agent(name="weather", model=model, tools=[get_weather])
    for k in range(runs):
        await Runner.run(agent, question(k), session=session, run_config=config)
    model.assert_complete()
    return model


def chars(items: list[Any]) -> int:
    """Characters of words an input list carries (texts, arguments, outputs)."""
    n = 0
    for item in items:
        content = item.get("content")
        if isinstance(content, str):
            n += len(content)
        elif isinstance(content, list):
            n += sum(len(c.get("text", "")) for c in content)
        n += len(item.get("arguments", "")) + len(str(item.get("output", "")))
    return n


def check_pairs(items: list[dict[str, Any]]) -> None:
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert sorted(calls) == sorted(outputs)
    for k, item in enumerate(items):
        if item.get("type") == "function_call_output":
            assert any(
                i.get("type") == "function_call" and i["call_id"] == item["call_id"]
                for i in items[:k]
            )


def test_session_keeps_every_item_and_sends_a_composed_selection() -> None:
    mem = Memory(budget=800, chunk=300, ceiling=1.5)
    session = ByheartSession(mem, "trip")
    assert isinstance(session, Session)
    model = asyncio.run(
        drive(session, RunConfig(session_input_callback=session.session_input_callback))
    )
    reference = SQLiteSession("trip")
    asyncio.run(drive(reference, None))
    kept = asyncio.run(session.get_items())
    # Verbatim: the same items the SDK's own session keeps, tool items included.
    assert kept == asyncio.run(reference.get_items())
    assert {i.get("type") for i in kept} >= {"function_call", "function_call_output", "message"}
    assert len(mem) == 4 * RUNS  # question, call, result, answer per run
    limit = mem.ceiling * mem.budget
    firsts = model.calls[0::2]  # each run's first model call, made from the composed input
    for k, call in enumerate(firsts):
        sent = call.input
        assert isinstance(sent, list)
        check_pairs(sent)
        assert sent[-1] == {"role": "user", "content": question(k)}
        assert json.dumps(sent).count(question(k)) == 1  # never sent twice
        assert chars(sent) <= limit
    assert chars(kept) > 2 * limit  # the history outgrew what any call was sent
    assert session.last_result is not None and session.last_result["mode"] == "assembled"
    # The second call of a run continues it natively: this run's call and output as items.
    last = model.calls[-1].input
    assert isinstance(last, list)
    assert [i.get("type") for i in last[-2:]] == ["function_call", "function_call_output"]
    check_pairs(last)


def test_callback_brings_back_the_round_a_new_question_needs() -> None:
    mem = Memory(budget=800, chunk=300, ceiling=1.5)
    session = ByheartSession(mem, "trip")
    config = RunConfig(session_input_callback=session.session_input_callback)
    asyncio.run(drive(session, config))
    model = ScriptedModel([[assistant_message("It was sunny, 5 degrees.")]])
    agent = Agent(name="weather", model=model, tools=[get_weather])
    asyncio.run(
        Runner.run(agent, "Remind me: City3, how warm was it?", session=session, run_config=config)
    )
    sent = json.dumps(model.calls[0].input)
    assert "sunny in City3" in sent  # the old tool result, selected by the question
    shown = [k for k in range(RUNS) if f"sunny in City{k}," in sent]
    assert len(shown) < RUNS / 2, shown  # ... and not everything


def test_items_the_sdk_gives_are_kept_exactly_including_unfiled_ones() -> None:
    mem = Memory()
    session = ByheartSession(mem, "s")
    items: list[Any] = [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}", "id": "fc_1"},
        {"type": "function_call", "call_id": "b", "name": "g", "arguments": '{"x": 1}'},
        {"type": "function_call_output", "call_id": "b", "output": "B"},
        {
            "type": "function_call_output",
            "call_id": "a",
            "output": [{"type": "input_text", "text": "A"}],
        },
        {"role": "system", "content": "be brief"},
    ]
    asyncio.run(session.add_items(items))
    assert asyncio.run(session.get_items()) == items
    assert asyncio.run(session.get_items(limit=2)) == items[-2:]
    assert asyncio.run(session.get_items(limit=0)) == []
    # user text, one assistant turn for the two calls, one user turn for both outputs.
    assert len(mem) == 3
    sent = mem.compose("what next?")["messages"]
    parts = [p["type"] for m in sent for p in m["parts"]]
    assert parts.count("tool_call") == 2 and parts.count("tool_result") == 2
    got = asyncio.run(session.get_items())
    got[0]["content"][0]["text"] = "changed"
    assert asyncio.run(session.get_items()) == items  # callers get copies


def test_pop_item_redacts_its_turn_and_clear_session_forgets_everything() -> None:
    mem = Memory()
    session = ByheartSession(mem, "s")
    asyncio.run(
        session.add_items(
            [{"role": "user", "content": "my code is 4471"}, {"role": "assistant", "content": "ok"}]
        )
    )
    popped = asyncio.run(session.pop_item())
    assert popped == {"role": "assistant", "content": "ok"}
    assert "ok" not in json.dumps(mem.compose("code?")["messages"][:-1])
    asyncio.run(session.clear_session())
    assert asyncio.run(session.get_items()) == []
    assert asyncio.run(session.pop_item()) is None
    assert "4471" not in json.dumps(mem.to_dict())


def test_store_backed_session_reopens_with_every_item_exactly(tmp_path: Path) -> None:
    path = tmp_path / "agents.db"
    with SQLiteStore(path) as store:
        session = ByheartSession(store, "conv-1", budget=1500)
        config = RunConfig(session_input_callback=session.session_input_callback)
        asyncio.run(drive(session, config, runs=3))
        before = asyncio.run(session.get_items())
    with SQLiteStore(path) as store:
        again = ByheartSession(store, "conv-1")
        after = asyncio.run(again.get_items())
        assert again.memory.budget == 1500
        assert after == before  # every field: item ids, status, content lists
        assert any("id" in i for i in after)
        asyncio.run(again.clear_session())
        assert store.conversations() == ["conv-1"]
        assert len(again.memory) == 0


def test_an_output_whose_call_memory_never_saw_is_kept_with_a_warning() -> None:
    mem = Memory()
    session = ByheartSession(mem, "s")
    asyncio.run(session.add_items([{"role": "user", "content": "hi"}]))
    orphan = {"type": "function_call_output", "call_id": "gone", "output": "x"}
    with pytest.warns(UserWarning, match=r"ByheartSession.add_items: kept but not filed.*'gone'"):
        asyncio.run(session.add_items([orphan]))
    assert asyncio.run(session.get_items()) == [{"role": "user", "content": "hi"}, orphan]
    # Kept in a turn of its own that holds only the item: stored, never sent.
    silent = {"role": "user", "text": "", "item": {"openai_agents": [orphan]}}
    assert mem.to_dict()["turns"][1] == silent
    assert "gone" not in json.dumps(mem.compose("hi?")["messages"])
    assert asyncio.run(session.pop_item()) == orphan
    assert asyncio.run(session.get_items()) == [{"role": "user", "content": "hi"}]
    assert "gone" not in json.dumps(mem.to_dict())


@pytest.mark.parametrize(
    ("args", "why"),
    [
        ((object(), "s"), "must be a yait_byheart.Memory or a store"),
        ((Memory(), ""), "session_id must be a non-empty str"),
    ],
)
def test_bad_arguments_name_the_call(args: tuple[Any, ...], why: str) -> None:
    with pytest.raises((TypeError, ValueError), match=f"ByheartSession.*{why}"):
        ByheartSession(*args)


def test_memory_settings_need_a_store() -> None:
    with pytest.raises(TypeError, match="apply only when a store is given"):
        ByheartSession(Memory(), "s", budget=10)


WORDS = st.text(alphabet="abcdefgh ijklmnop", min_size=1, max_size=50).filter(
    lambda t: t.strip() != ""
)


@st.composite
def sdk_runs(draw: st.DrawFn) -> list[list[dict[str, Any]]]:
    """add_items batches as the SDK makes them: the user's input, then the model's items
    (reasoning, text, parallel function calls and their outputs in any order), then the
    answer; sometimes split differently."""
    batches: list[list[dict[str, Any]]] = []
    n = 0
    for _ in range(draw(st.integers(1, 6))):
        batches.append([{"role": "user", "content": draw(WORDS)}])
        for _ in range(draw(st.integers(0, 2))):
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                n += 1
                args = json.dumps({"q": draw(WORDS)})
                calls.append(
                    {"type": "function_call", "call_id": f"c{n}", "name": "f", "arguments": args}
                )
            outputs = [
                {
                    "type": "function_call_output",
                    "call_id": c["call_id"],
                    "output": draw(WORDS) * draw(st.integers(1, 6)),
                }
                for c in draw(st.permutations(calls))
            ]
            lead = (
                [{"type": "reasoning", "id": f"rs{n}", "summary": []}]
                if draw(st.booleans())
                else []
            )
            round_items = [*lead, *calls, *outputs]
            cut = draw(st.integers(0, len(round_items)))
            batches += [b for b in (round_items[:cut], round_items[cut:]) if b]
        batches.append(
            [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": draw(WORDS)}],
                }
            ]
        )
    return batches


@settings(max_examples=60, deadline=None)
@given(sdk_runs(), st.integers(150, 800))
def test_random_sdk_histories_are_kept_and_composed_without_orphans(
    batches: list[list[dict[str, Any]]], budget: int
) -> None:
    mem = Memory(budget=budget, chunk=200)
    session = ByheartSession(mem, "s")
    added: list[dict[str, Any]] = []
    for batch in batches:
        if batch[0].get("role") == "user":  # a new run: compose its input as the SDK would
            sent = session.session_input_callback([], copy.deepcopy(batch))
            check_pairs(sent)
            assert sent[-1] == batch[0]
            assert json.dumps(sent).count(json.dumps(batch[0]["content"])) >= 1
        asyncio.run(session.add_items(copy.deepcopy(batch)))
        added += batch
    assert asyncio.run(session.get_items()) == added


def every_item_type() -> list[dict[str, Any]]:
    """One input item of each kind the SDK's ``TResponseInputItem`` covers, with the ids,
    statuses and content parts the SDK and the Responses API fill in."""
    image = {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "auto"}
    return [
        {"role": "developer", "content": "Answer in French."},
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": [{"type": "input_text", "text": "What is on it?"}, image]},
        {"role": "user", "content": [image]},  # an image alone: nothing byheart can read
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "look"}],
         "encrypted_content": "gAAA=="},
        {"type": "web_search_call", "id": "ws_1", "status": "completed",
         "action": {"type": "search", "query": "cat breeds"}},
        {"type": "file_search_call", "id": "fs_1", "status": "completed", "queries": ["cat"],
         "results": None},
        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "A cat.", "annotations": [],
                      "logprobs": []}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "measure",
         "arguments": '{"what": "cat"}', "status": "completed"},
        {"type": "function_call_output", "call_id": "call_1", "output": "30 cm",
         "id": "fco_1", "status": "completed"},
        {"type": "computer_call", "id": "cu_1", "call_id": "cc_1", "status": "completed",
         "action": {"type": "click", "x": 1, "y": 2, "button": "left"},
         "pending_safety_checks": []},
        {"type": "computer_call_output", "call_id": "cc_1",
         "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,BB"}},
        {"type": "image_generation_call", "id": "ig_1", "status": "completed", "result": "AAAA"},
        {"type": "code_interpreter_call", "id": "ci_1", "status": "completed", "code": "1+1",
         "container_id": "cnt_1", "outputs": [{"type": "logs", "logs": "2"}]},
        {"type": "local_shell_call", "id": "ls_1", "call_id": "lsc_1", "status": "completed",
         "action": {"type": "exec", "command": ["ls"], "env": {}}},
        {"type": "local_shell_call_output", "id": "lsc_1", "output": "a.txt"},
        {"type": "mcp_list_tools", "id": "ml_1", "server_label": "s", "tools": []},
        {"type": "mcp_approval_request", "id": "ma_1", "server_label": "s", "name": "t",
         "arguments": "{}"},
        {"type": "mcp_approval_response", "approval_request_id": "ma_1", "approve": True},
        {"type": "mcp_call", "id": "mc_1", "server_label": "s", "name": "t", "arguments": "{}",
         "output": "done"},
        {"type": "custom_tool_call", "id": "ct_1", "call_id": "ctc_1", "name": "grammar",
         "input": "x = 1"},
        {"type": "custom_tool_call_output", "call_id": "ctc_1", "output": "ok"},
        {"type": "item_reference", "id": "msg_0"},
        {"type": "message", "role": "assistant", "id": "msg_2", "status": "incomplete",
         "content": [{"type": "refusal", "refusal": "I cannot say."}]},
    ]  # fmt: skip


def test_every_item_type_survives_a_store_exactly(tmp_path: Path) -> None:
    items = every_item_type()
    with SQLiteStore(tmp_path / "all.db") as store:
        session = ByheartSession(store, "c")
        for batch in (items[:3], items[3:4], items[4:10], items[10:]):
            asyncio.run(session.add_items(copy.deepcopy(batch)))
        assert asyncio.run(session.get_items()) == items
    with SQLiteStore(tmp_path / "all.db") as store:
        again = ByheartSession(store, "c")
        assert asyncio.run(again.get_items()) == items  # 24 in, 24 back, every field
        # The words it can read are filed; images, reasoning, hosted tools are never sent.
        sent = json.dumps(again.memory.compose("what is on it?")["messages"])
        assert "What is on it?" in sent and "30 cm" in sent
        assert "base64" not in sent and "gAAA" not in sent and "cat breeds" not in sent


def test_pop_item_removes_exactly_one_item_also_after_reopening(tmp_path: Path) -> None:
    text = {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
            "content": [{"type": "output_text", "text": "Checking the forecast.",
                         "annotations": []}]}  # fmt: skip
    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    first = {"role": "user", "content": "Weather in Oslo?"}
    with SQLiteStore(tmp_path / "p.db") as store:
        session = ByheartSession(store, "c")
        asyncio.run(session.add_items([first, text, call]))
        assert len(session.memory) == 2  # the text and its call share one assistant turn
        assert asyncio.run(session.pop_item()) == call
        assert asyncio.run(session.get_items()) == [first, text]
    with SQLiteStore(tmp_path / "p.db") as store:
        again = ByheartSession(store, "c")
        assert asyncio.run(again.get_items()) == [first, text]
        sent = json.dumps(again.memory.compose("forecast?")["messages"])
        assert "Checking the forecast." in sent and "c1" not in sent
        asyncio.run(again.add_items([call]))  # the popped call can be added again
        assert asyncio.run(again.get_items()) == [first, text, call]


def test_session_settings_and_limits_behave_as_the_sdk_sessions() -> None:
    from agents.memory import SessionSettings

    session = ByheartSession(Memory(), "s")
    assert session.session_settings == SessionSettings()
    items = [{"role": "user", "content": f"m{k}"} for k in range(5)]
    asyncio.run(session.add_items(items))
    assert asyncio.run(session.get_items(limit=-1)) == items  # SQLite: negative is no limit
    assert asyncio.run(session.get_items(limit=0)) == []
    assert asyncio.run(session.get_items(limit=2)) == items[-2:]
    limited = ByheartSession(Memory(), "s", session_settings={"limit": 3})
    assert isinstance(limited.session_settings, SessionSettings)
    asyncio.run(limited.add_items(items))
    assert asyncio.run(limited.get_items()) == items[-3:]
    assert asyncio.run(limited.get_items(limit=1)) == items[-1:]
    with pytest.raises(TypeError, match="Unknown session settings: limitt"):
        ByheartSession(Memory(), "s", session_settings={"limitt": 1})


def test_runner_honours_a_dict_session_settings_limit() -> None:
    session = ByheartSession(Memory(), "s", session_settings={"limit": 2})
    asyncio.run(session.add_items([{"role": "user", "content": f"old {k}"} for k in range(6)]))
    model = ScriptedModel([[assistant_message("ok")]])
    asyncio.run(Runner.run(Agent(name="a", model=model), "new", session=session))
    sent = model.calls[0].input
    assert isinstance(sent, list)
    assert [i.get("content") for i in sent] == ["old 4", "old 5", "new"]


def test_several_session_objects_on_one_conversation_see_each_others_items(
    tmp_path: Path,
) -> None:
    """As SQLiteSession allows: two objects (here on one store and on a second store object
    over the same file, as two processes would be) add, read and pop on one conversation."""
    path = str(tmp_path / "sessions.db")

    async def scenario() -> None:
        with SQLiteStore(path) as store, SQLiteStore(path) as elsewhere:
            a, b = ByheartSession(store, "c"), ByheartSession(store, "c")
            c = ByheartSession(elsewhere, "c")
            said = [{"role": "user", "content": f"message {k}"} for k in range(6)]
            for k, item in enumerate(said):
                await (a, b, c)[k % 3].add_items([item])
            for session in (a, b, c):
                assert await session.get_items() == said
            assert await c.pop_item() == said[-1]
            assert await a.get_items() == await b.get_items() == said[:-1]
            assert await b.get_items(limit=2) == said[3:5]

    asyncio.run(scenario())


def test_compaction_sees_the_retained_history_and_its_output_is_stored(tmp_path: Path) -> None:
    """The SDK's automatic compaction, on a session whose reads are limited to one item, is
    given the whole retained history and replaces it, in the store, with what it returned."""
    from types import SimpleNamespace
    from unittest.mock import AsyncMock, MagicMock

    from agents.memory import OpenAIResponsesCompactionSession

    summary = {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "summary: the user asked about City0"}]}  # fmt: skip
    client = MagicMock()
    client.responses.compact = AsyncMock(return_value=SimpleNamespace(output=[summary]))
    path = tmp_path / "chats.db"
    with SQLiteStore(path) as store:
        backend = ByheartSession(store, "c1", session_settings={"limit": 1})
        session = OpenAIResponsesCompactionSession(
            "c1", backend, client=client, compaction_mode="input",
            should_trigger_compaction=lambda _: True,
        )  # fmt: skip
        asyncio.run(drive(session, None, runs=1))
        client.responses.compact.assert_awaited_once()
        sent = json.dumps(client.responses.compact.call_args.kwargs["input"])
        assert question(0) in sent and "call_0" in sent and "it is sunny" in sent
        assert asyncio.run(backend.get_items(limit=100)) == [summary]
    with SQLiteStore(path) as store:  # the compacted history is what the store keeps
        assert asyncio.run(ByheartSession(store, "c1").get_items()) == [summary]


def test_a_compaction_snapshot_is_refused_once_the_history_moved_on() -> None:
    session = ByheartSession(Memory(), "s")
    items = [{"role": "user", "content": f"m{k}"} for k in range(3)]
    asyncio.run(session.add_items(items))
    snapshot = asyncio.run(session._get_compaction_snapshot(2))
    assert snapshot.items == items[1:] and not snapshot.complete
    asyncio.run(session.add_items([{"role": "assistant", "content": "later"}]))
    assert not asyncio.run(snapshot.replace_suffix(0, []))  # the newest items are not those read
    assert len(asyncio.run(session.get_items())) == 4
    fresh = asyncio.run(session._get_compaction_snapshot(10))
    assert fresh.complete
    done = {"role": "user", "content": "compacted"}
    assert asyncio.run(fresh.replace_suffix(1, [done]))
    assert asyncio.run(session.get_items()) == [items[0], done]
    sent = json.dumps(session.memory.compose("anything")["messages"])
    assert "compacted" in sent and "m0" in sent
    assert "m1" not in sent and "later" not in sent  # the replaced items are never sent again
