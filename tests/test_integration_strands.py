"""byheart with Strands Agents: an Agent whose scripted model (a ``Model`` streaming Converse
events, as Strands' own test fixture does) calls a tool on every run, with ByheartMiddleware
composing each model call and ByheartSessionRepository keeping the session in a SQLite store,
reopened midway. No network. Strands pins an older mcp than the dev extra, so CI runs this
file from an environment of its own (.ci/run); elsewhere it is skipped."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("strands")

from strands import Agent, tool
from strands.agent.conversation_manager import NullConversationManager
from strands.middleware import InvokeModelStage
from strands.models import Model
from strands.session.repository_session_manager import RepositorySessionManager

from yait_byheart import Memory
from yait_byheart.integrations.strands import ByheartMiddleware, ByheartSessionRepository
from yait_byheart.store import SQLiteStore

NOTE = " The forecast office adds its usual long note about wind and humidity." * 3
SETTINGS = {"budget": 600, "chunk": 300, "ceiling": 1.5}
LIMIT = SETTINGS["budget"] * SETTINGS["ceiling"]


class Scripted(Model):
    """Streams the scripted replies as Converse events; records the messages of each call."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = replies
        self.sent: list[list[dict[str, Any]]] = []

    def update_config(self, **config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError
        yield

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        self.sent.append(json.loads(json.dumps(messages)))
        reply = self.replies.pop(0)
        yield {"messageStart": {"role": "assistant"}}
        stop = "end_turn"
        for block in reply["content"]:
            if "text" in block:
                yield {"contentBlockStart": {"start": {}}}
                yield {"contentBlockDelta": {"delta": {"text": block["text"]}}}
            else:
                stop, use = "tool_use", block["toolUse"]
                start = {"toolUse": {"name": use["name"], "toolUseId": use["toolUseId"]}}
                yield {"contentBlockStart": {"start": start}}
                delta = {"toolUse": {"input": json.dumps(use["input"])}}
                yield {"contentBlockDelta": {"delta": delta}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": stop}}


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}.{NOTE}"


def script(first: int, runs: int) -> list[dict[str, Any]]:
    out = []
    for k in range(first, first + runs):
        use = {"toolUseId": f"call_{k}", "name": "get_weather", "input": {"city": f"City{k}"}}
        answer = {"text": f"In City{k} it is sunny."}
        out += [{"role": "assistant", "content": [{"toolUse": use}]},
                {"role": "assistant", "content": [answer]}]  # fmt: skip
    return out


def question(k: int) -> str:
    return f"What is the weather in City{k}? Asking about trip {k}."


def chars(messages: list[dict[str, Any]]) -> int:
    n = 0
    for m in messages:
        for b in m["content"]:
            n += len(b.get("text", ""))
            n += len(json.dumps(b["toolUse"]["input"])) if "toolUse" in b else 0
            n += sum(len(c.get("text", "")) for c in b.get("toolResult", {}).get("content", []))
    return n


def check_sendable(messages: list[dict[str, Any]]) -> None:
    """User first; every toolResult answers a toolUse of the assistant message right before
    it; every toolUse is answered in the next message."""
    assert messages[0]["role"] == "user"
    pending: set[str] = set()
    for m in messages:
        results = [b["toolResult"]["toolUseId"] for b in m["content"] if "toolResult" in b]
        assert set(results) == pending, (results, pending)
        pending = {b["toolUse"]["toolUseId"] for b in m["content"] if "toolUse" in b}
    assert not pending


def make_agent(store: SQLiteStore, model: Scripted) -> tuple[Agent, ByheartMiddleware]:
    repo = ByheartSessionRepository(store)
    sessions = RepositorySessionManager(session_id="trip", session_repository=repo)
    agent = Agent(model=model, tools=[get_weather], system_prompt="Be brief.",
                  conversation_manager=NullConversationManager(), session_manager=sessions,
                  callback_handler=None)  # fmt: skip
    middleware = ByheartMiddleware(store, "trip-input", **SETTINGS)
    agent.add_middleware(InvokeModelStage.Input, middleware)
    return agent, middleware


def check_calls(model: Scripted, agent: Agent, first: int) -> None:
    for n, sent in enumerate(model.sent):
        check_sendable(sent)
        assert chars(sent) <= LIMIT
        k = first + n // 2
        if n % 2:  # after the tool round: the call and its result, native, last
            assert sent[-2]["content"][-1]["toolUse"]["toolUseId"] == f"call_{k}"
            result = sent[-1]["content"][0]["toolResult"]
            assert result["content"] == [{"text": get_weather(city=f"City{k}")}]
            kept = [m for m in agent.messages if m["content"][0].get("toolResult", {})
                    .get("toolUseId") == f"call_{k}"]  # fmt: skip
            assert sent[-1]["content"] == json.loads(json.dumps(kept[0]["content"]))
        else:
            assert sent[-1] == {"role": "user", "content": [{"text": question(k)}]}


def test_agent_loop_across_a_reopened_store(tmp_path: Path) -> None:
    path = tmp_path / "strands.db"
    with SQLiteStore(path) as store:
        model = Scripted(script(0, 6))
        agent, middleware = make_agent(store, model)
        for k in range(6):
            assert str(agent(question(k))).strip() == f"In City{k} it is sunny."
        check_calls(model, agent, 0)
        assert middleware.last_result["mode"] == "assembled"
        before = [{"role": m["role"], "content": m["content"]} for m in agent.messages]
        before = json.loads(json.dumps(before))
        assert len(before) == 24 and chars(before) > 2 * LIMIT
    with SQLiteStore(path) as store:  # a restart: the session and the input reopened
        model = Scripted(script(6, 2))
        agent, middleware = make_agent(store, model)
        again = [{"role": m["role"], "content": m["content"]} for m in agent.messages]
        assert json.loads(json.dumps(again)) == before
        for k in range(6, 8):
            assert str(agent(question(k))).strip() == f"In City{k} it is sunny."
        check_calls(model, agent, 6)
        assert len(middleware.memory) == 24 + 8 - 1  # nothing filed twice
        repo_memory = ByheartSessionRepository(store).memory("trip", agent.agent_id)
        assert repo_memory is not None and len(repo_memory) == 32


def test_middleware_keeps_the_agents_blocks() -> None:
    middleware = ByheartMiddleware(Memory(budget=5_000))
    use = {"toolUse": {"toolUseId": "t1", "name": "wx", "input": {"city": "Oslo"}}}
    result = {"toolResult": {"toolUseId": "t1", "status": "error", "content": [{"json": {"e": 1}}]}}
    messages = [{"role": "user", "content": [{"text": "Weather?"}]},
                {"role": "assistant", "content": [{"text": "Checking."}, use]},
                {"role": "user", "content": [result]}]  # fmt: skip
    sent = middleware.compose(messages)
    assert all(a is b for a, b in zip(sent, messages, strict=True))
    assert middleware.compose(messages) == messages and len(middleware.memory) == 3
    turn = middleware.memory.to_dict()["turns"][2]["tools"][0]
    assert turn == {"type": "tool_result", "id": "t1", "output": '{"e": 1}', "is_error": True}


def test_bad_sources_name_the_call() -> None:
    with pytest.raises(TypeError, match="ByheartMiddleware"):
        ByheartMiddleware("chats.db")
    with pytest.raises(TypeError, match="ByheartSessionRepository"):
        ByheartSessionRepository(Memory())


@st.composite
def converse_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Messages as a Strands agent holds them: questions, rounds of (parallel) toolUse
    answered by toolResult blocks in one user message (text or JSON content, some errors),
    answers; long texts to outgrow the budget."""
    words = st.text(alphabet="abcdefgh ", min_size=1, max_size=400)
    out: list[dict[str, Any]] = []
    for r in range(draw(st.integers(1, 6))):
        out.append({"role": "user", "content": [{"text": f"q{r} " + draw(words)}]})
        for c in range(draw(st.integers(0, 2))):
            ids = [f"t{r}.{c}.{k}" for k in range(draw(st.integers(1, 3)))]
            uses = [{"toolUse": {"toolUseId": i, "name": "wx", "input": {"q": i}}} for i in ids]
            results = [{"toolResult": {
                "toolUseId": i, "status": draw(st.sampled_from(["success", "error"])),
                "content": [draw(st.sampled_from([{"text": draw(words)}, {"json": {"v": 1}}]))],
            }} for i in ids]  # fmt: skip
            out += [{"role": "assistant", "content": uses}, {"role": "user", "content": results}]
        out.append({"role": "assistant", "content": [{"text": f"a{r} " + draw(words)}]})
    return out


@settings(max_examples=40)
@given(converse_histories())
def test_random_histories_are_sent_sendable_within_the_limit_with_the_agents_blocks(
    messages: list[dict[str, Any]],
) -> None:
    middleware = ByheartMiddleware(Memory(**SETTINGS))
    for end in range(1, len(messages) + 1):
        if messages[end - 1]["role"] != "user":
            continue  # the agent calls the model after a question or a round's results
        sofar = messages[:end]
        sent = middleware.compose(sofar)
        check_sendable(sent)
        assert middleware.last_result["size"] <= LIMIT
        own = {id(b) for m in sofar for b in m["content"]}
        for m in sent:
            for b in m["content"]:
                if "toolUse" in b or "toolResult" in b:
                    assert id(b) in own  # the agent's own block, never made anew
        last = len(middleware.memory) - 1
        if (
            "toolResult" in sofar[-1]["content"][0]
            and last not in middleware.last_result["partial"]
        ):
            assert sent[-1] is sofar[-1] and sent[-2] is sofar[-2]


# -- several workers and threads on one store ----------------------------------------------

from tests._stores import Stores, stores_fixture  # noqa: E402, F401 (the fixture)


def said(text: str, k: int, role: str = "user") -> Any:
    from strands.types.session import SessionMessage

    return SessionMessage({"role": role, "content": [{"text": text}]}, k)  # type: ignore[arg-type]


def new_session(repo: Any, session_id: str = "s1", agent_id: str = "a1") -> None:
    from strands.types.session import Session, SessionAgent, SessionType

    repo.create_session(Session(session_id, SessionType.AGENT))
    repo.create_agent(session_id, SessionAgent(agent_id, {}, {}))


def texts(repo: Any, session_id: str = "s1", agent_id: str = "a1") -> list[str]:
    found = repo.list_messages(session_id, agent_id)
    return [m.message["content"][0]["text"] for m in found]


def test_every_read_reflects_another_handles_writes(stores: Stores) -> None:
    from strands.types.session import SessionAgent

    a = ByheartSessionRepository(stores.open())
    b = ByheartSessionRepository(stores.open())
    assert b.read_session("s1") is None
    new_session(a)
    assert b.read_session("s1") is not None  # created by the other worker
    a.create_message("s1", "a1", said("first", 0))
    assert texts(b) == ["first"]
    a.create_message("s1", "a1", said("second", 1, "assistant"))
    assert texts(b) == ["first", "second"]  # 2 of 2, not stale
    assert b.read_message("s1", "a1", 1).message["content"][0]["text"] == "second"
    a.update_message("s1", "a1", said("first, redacted", 0))
    assert texts(b) == ["first, redacted", "second"]
    a.update_agent("s1", SessionAgent("a1", {"mood": "calm"}, {}))
    assert b.read_agent("s1", "a1").state == {"mood": "calm"}
    b.create_message("s1", "a1", said("third", 2))
    assert texts(a) == ["first, redacted", "second", "third"]
    assert texts(a) == texts(b)


CHILD = """
import sys
from strands.types.session import SessionMessage
from tests._stores import open_store
from yait_byheart.integrations.strands import ByheartSessionRepository
repo = ByheartSessionRepository(open_store(*sys.argv[1:4]))
for k in range(int(sys.argv[4]), int(sys.argv[5])):
    message = {"role": "user", "content": [{"text": f"m{k}"}]}
    repo.create_message("s1", "a1", SessionMessage(message, k))
"""


def test_a_handle_reads_what_another_process_wrote(stores: Stores) -> None:
    import subprocess
    import sys

    repo = ByheartSessionRepository(stores.open())
    new_session(repo)
    repo.create_message("s1", "a1", said("m0", 0))
    assert texts(repo) == ["m0"]  # read once, before the other process writes
    child = [sys.executable, "-c", CHILD, *stores.args, "1", "4"]
    subprocess.run(child, check=True, env=stores.child_env(), timeout=120)
    assert texts(repo) == ["m0", "m1", "m2", "m3"]
    assert repo.read_message("s1", "a1", 3) is not None
    repo.create_message("s1", "a1", said("m4", 4))
    assert texts(ByheartSessionRepository(stores.open())) == [f"m{k}" for k in range(5)]


def test_two_threads_write_through_one_repository_another_reads(stores: Stores) -> None:
    from concurrent.futures import ThreadPoolExecutor

    writer = ByheartSessionRepository(stores.open())
    reader = ByheartSessionRepository(stores.open())
    new_session(writer, agent_id="a1")
    new_session(writer, session_id="s2", agent_id="a2")

    def write(where: tuple[str, str]) -> None:
        for k in range(8):
            writer.create_message(*where, said(f"{where[1]}-{k}", k))
            texts(reader, *where)  # reads while the other thread writes

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(write, [("s1", "a1"), ("s2", "a2")]))
    assert texts(reader) == [f"a1-{k}" for k in range(8)]
    assert texts(reader, "s2", "a2") == [f"a2-{k}" for k in range(8)]


def test_two_workers_middlewares_on_one_session_file_each_message_once(stores: Stores) -> None:
    # One session served by two workers in turn (Strands restores the agent's messages from
    # the session on each): each worker's middleware hands the model the whole history and
    # must not file again what the other worker filed.
    workers = [ByheartMiddleware(stores.open(), "s1-input") for _ in range(2)]
    history: list[dict[str, Any]] = []
    for k in range(6):
        history.append({"role": "user", "content": [{"text": f"Question {k} about orchids."}]})
        sent = workers[k % 2].compose(history)
        assert [m["content"][0]["text"] for m in sent][-1] == f"Question {k} about orchids."
        history.append({"role": "assistant", "content": [{"text": f"Answer {k}."}]})
    workers[0].compose(history)
    assert len(stores.open().open("s1-input")) == 12  # each message once
    assert len(workers[1].compose(history)) == 12


def test_a_repository_keeps_few_conversations_open_and_reopens_the_rest(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    from yait_byheart.integrations import strands as module

    monkeypatch.setattr(module, "OPEN_AT_MOST", 3)
    repo = ByheartSessionRepository(stores.open())
    for k in range(4):  # a session and its agent: two conversations each
        new_session(repo, f"s{k}")
        repo.create_message(f"s{k}", "a1", said(f"hello {k}", 0))
    assert len(repo._repo.open) == 3 and len(repo._repo.views) <= 3
    assert [texts(repo, f"s{k}") for k in range(4)] == [[f"hello {k}"] for k in range(4)]
    repo.create_message("s0", "a1", said("again", 1, "assistant"))  # dropped, then reopened
    assert texts(ByheartSessionRepository(stores.open()), "s0") == ["hello 0", "again"]
