"""byheart with Google ADK: an LlmAgent whose scripted model (a ``BaseLlm``, as ADK's own
tests script one) calls a tool on every run, with ByheartPlugin composing each model call,
ByheartSessionService keeping the session in a SQLite store (reopened midway) and
ByheartMemoryService recalling from the same user's sessions. No network."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event, EventActions
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

from tests import test_store
from yait_byheart import Memory
from yait_byheart.integrations.google_adk import (
    ByheartMemoryService,
    ByheartPlugin,
    ByheartSessionService,
)
from yait_byheart.store import SQLiteStore

# The store suite's backends: SQLite, and PostgreSQL where a server is given (CI starts one).
backend = test_store.backend

NOTE = " The forecast office adds its usual long note about wind and humidity." * 3
SETTINGS = {"budget": 600, "chunk": 300, "ceiling": 1.5}
LIMIT = SETTINGS["budget"] * SETTINGS["ceiling"]


class Scripted(BaseLlm):
    """Answers from a script; records each request's contents as the model got them, and the
    Part objects of the request (to check they are the ones ADK made)."""

    model: str = "scripted"
    replies: list[types.Content] = []  # noqa: RUF012 (pydantic fields, given per test)
    sent: list[list[types.Content]] = []  # noqa: RUF012

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.sent.append(list(llm_request.contents))
        yield LlmResponse(content=self.replies.pop(0))


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}.{NOTE}"


def script(first: int, runs: int) -> list[types.Content]:
    out = []
    for k in range(first, first + runs):
        call = types.FunctionCall(name="get_weather", args={"city": f"City{k}"})
        out += [
            types.Content(role="model", parts=[types.Part(function_call=call)]),
            types.Content(role="model", parts=[types.Part(text=f"In City{k} it is sunny.")]),
        ]
    return out


def question(k: int) -> types.Content:
    text = f"What is the weather in City{k}? Asking about trip {k}."
    return types.Content(role="user", parts=[types.Part(text=text)])


def chars(contents: list[types.Content]) -> int:
    n = 0
    for c in contents:
        for p in c.parts or []:
            if p.text:
                n += len(p.text)
            elif p.function_call:
                n += len(json.dumps(p.function_call.args or {}))
            elif p.function_response:
                n += len(json.dumps(p.function_response.response or {}))
    return n


def check_sendable(contents: list[types.Content]) -> None:
    """User first; every function response answers a call of the model content right before
    it (by id, else by name in order), every call is answered before the next model content."""
    assert contents[0].role == "user"
    open_calls: list[types.FunctionCall] = []
    for c in contents:
        if c.role == "model":
            assert not open_calls, open_calls
            open_calls = [p.function_call for p in c.parts or [] if p.function_call]
            continue
        for p in c.parts or []:
            if p.function_response:
                got = p.function_response
                match = next(
                    (f for f in open_calls if (f.id or got.id) and f.id == got.id), None
                ) or next((f for f in open_calls if f.name == got.name), None)
                assert match is not None, f"orphan function response {got}"
                open_calls.remove(match)
    assert not open_calls


async def run(runner: Runner, sid: str, k: int) -> str:
    last = ""
    async for event in runner.run_async(user_id="ann", session_id=sid, new_message=question(k)):
        if event.content and event.content.parts and event.content.parts[0].text:
            last = event.content.parts[0].text
    return last


def make_runner(store: SQLiteStore, model: Scripted) -> tuple[Runner, Any, Any]:
    agent = LlmAgent(name="weather", model=model, tools=[get_weather], instruction="Be brief.")
    plugin = ByheartPlugin(store, **SETTINGS)
    sessions = ByheartSessionService(store)
    app = App(name="trips", root_agent=agent, plugins=[plugin])
    return Runner(app=app, session_service=sessions), plugin, sessions


def check_calls(model: Scripted, first: int) -> None:
    """Every request sendable and within the hard limit; a mid-turn request ends with the
    round ADK made, native: the call, then its response unwrapped."""
    for n, sent in enumerate(model.sent):
        check_sendable(sent)
        assert chars(sent) <= LIMIT
        if n % 2 == 1:  # the second call of a run: after the tool round
            call = sent[-2].parts[-1].function_call
            assert call is not None and call.args == {"city": f"City{first + n // 2}"}
            response = sent[-1].parts[0].function_response
            assert response.response == {"result": get_weather(f"City{first + n // 2}")}
        else:
            assert sent[-1].parts[-1].text == question(first + n // 2).parts[0].text


def test_agent_loop_across_a_reopened_store(tmp_path: Path) -> None:
    path = tmp_path / "adk.db"
    with SQLiteStore(path) as store:
        model = Scripted(replies=script(0, 6), sent=[])
        runner, plugin, sessions = make_runner(store, model)
        sid = asyncio.run(sessions.create_session(app_name="trips", user_id="ann")).id
        for k in range(6):
            assert asyncio.run(run(runner, sid, k)) == f"In City{k} it is sunny."
        check_calls(model, 0)
        assert plugin.last_result["mode"] == "assembled"  # the history outgrew the budget
        before = asyncio.run(sessions.get_session(app_name="trips", user_id="ann", session_id=sid))
        assert len(before.events) == 24
        assert chars([e.content for e in before.events]) > 2 * LIMIT
    with SQLiteStore(path) as store:  # a restart: new service, plugin and model
        model = Scripted(replies=script(6, 2), sent=[])
        runner, plugin, sessions = make_runner(store, model)
        again = asyncio.run(sessions.get_session(app_name="trips", user_id="ann", session_id=sid))
        assert [e.model_dump() for e in again.events] == [e.model_dump() for e in before.events]
        for k in range(6, 8):
            assert asyncio.run(run(runner, sid, k)) == f"In City{k} it is sunny."
        check_calls(model, 6)
        # The reopened plugin filed nothing twice: 24 contents before, 4 + 4 since, less the
        # last answer (filed on the next call).
        memory = store.open(plugin.last_conversation)
        assert len(memory) == 24 + 8 - 1


def test_sent_parts_are_the_ones_adk_made() -> None:
    mem = Memory(budget=5_000)
    plugin = ByheartPlugin(mem)
    call = types.Part(function_call=types.FunctionCall(id="c1", name="wx", args={"a": 1}))
    resp = types.Part(
        function_response=types.FunctionResponse(id="c1", name="wx", response={"r": [1, 2]})
    )
    contents = [
        types.Content(role="user", parts=[types.Part(text="hi, weather?")]),
        types.Content(role="model", parts=[call]),
        types.Content(role="user", parts=[resp]),
    ]
    request = LlmRequest(contents=list(contents))

    class Ctx:
        class session:  # the attribute ADK's callback context has
            app_name, user_id, id = "a", "u", "s"

    asyncio.run(plugin.before_model_callback(callback_context=Ctx(), llm_request=request))
    assert all(a is b for a, b in zip(request.contents, contents, strict=True))
    asyncio.run(plugin.before_model_callback(callback_context=Ctx(), llm_request=request))
    assert len(mem) == 3  # nothing filed twice
    Ctx.session.id = "other"
    with pytest.raises(ValueError, match="one session"):
        asyncio.run(plugin.before_model_callback(callback_context=Ctx(), llm_request=request))


def test_session_service_keeps_state_and_events(backend: test_store.Backend) -> None:
    """On SQLite and PostgreSQL (CI starts a server; elsewhere the PostgreSQL half skips)."""
    with backend.store() as store:
        svc = ByheartSessionService(store)
        s = asyncio.run(svc.create_session(
            app_name="a", user_id="u", session_id="s1",
            state={"k": 1, "app:theme": "dark", "user:lang": "nb", "temp:x": 0},
        ))  # fmt: skip
        assert s.state == {"k": 1, "app:theme": "dark", "user:lang": "nb"}
        with pytest.raises(AlreadyExistsError):
            asyncio.run(svc.create_session(app_name="a", user_id="u", session_id="s1"))
        ghost = Session(app_name="a", user_id="u", id="nope")
        with pytest.raises(SessionNotFoundError):
            asyncio.run(svc.append_event(ghost, Event(author="user", content=question(1))))
        assert ghost.events == []
        delta = {"k": 2, "user:lang": "en", "temp:scratch": 1}
        event = Event(author="user", content=question(0), actions=EventActions(state_delta=delta))
        asyncio.run(svc.append_event(s, event))
        assert s.state["temp:scratch"] == 1  # for this invocation only: never stored
        assert event.actions.state_delta == {"k": 2, "user:lang": "en"}
        got = asyncio.run(svc.get_session(app_name="a", user_id="u", session_id="s1"))
        assert got.state == {"k": 2, "app:theme": "dark", "user:lang": "en"}
        assert got.events == [event]
        assert asyncio.run(svc.get_user_state(app_name="a", user_id="u")) == {"lang": "en"}
        none = GetSessionConfig(num_recent_events=0)
        assert (
            asyncio.run(
                svc.get_session(app_name="a", user_id="u", session_id="s1", config=none)
            ).events
            == []
        )
        asyncio.run(svc.create_session(app_name="a", user_id="v", session_id="s2"))
        listed = asyncio.run(svc.list_sessions(app_name="a"))
        assert [(x.user_id, x.id, x.events) for x in listed.sessions] == [
            ("u", "s1", []), ("v", "s2", [])
        ]  # fmt: skip
        assert [x.id for x in asyncio.run(svc.list_sessions(app_name="a", user_id="v")).sessions] \
            == ["s2"]  # fmt: skip
    with backend.store() as store:  # reopened
        svc = ByheartSessionService(store)
        again = asyncio.run(svc.get_session(app_name="a", user_id="u", session_id="s1"))
        assert again.events == [event] and again.state == got.state
        asyncio.run(svc.delete_session(app_name="a", user_id="u", session_id="s1"))
        assert asyncio.run(svc.get_session(app_name="a", user_id="u", session_id="s1")) is None


def test_memory_search_recalls_only_the_same_users_sessions(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "m.db") as store:
        svc = ByheartSessionService(store)
        said = {"ann": "my locker code is 4471", "bob": "my locker code is 9902"}
        for user, text in said.items():
            s = asyncio.run(svc.create_session(app_name="a", user_id=user, session_id="old"))
            content = types.Content(role="user", parts=[types.Part(text=text)])
            asyncio.run(svc.append_event(s, Event(author="user", content=content)))
        recall = ByheartMemoryService(svc)
        found = asyncio.run(recall.search_memory(app_name="a", user_id="ann", query="locker code"))
        assert [m.content.parts[0].text for m in found.memories] == [said["ann"]]
        assert found.memories[0].custom_metadata == {"session_id": "old"}
        other = asyncio.run(recall.search_memory(app_name="b", user_id="ann", query="locker"))
        assert other.memories == []


def test_bad_sources_name_the_call(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="ByheartPlugin"):
        ByheartPlugin("chats.db")
    with pytest.raises(TypeError, match="ByheartSessionService"):
        ByheartSessionService(Memory())
    with pytest.raises(TypeError, match="Memory settings"):
        ByheartPlugin(Memory(), budget=10)
    with SQLiteStore(tmp_path / "x.db") as store, pytest.raises(ValueError, match="limit"):
        ByheartMemoryService(store, limit=0)


def test_tool_rounds_filed_by_other_means_are_sent_as_adk_parts() -> None:
    """A round the plugin never saw as ADK objects (filed with append_message) is sent as
    ADK's function call and response, never as a part without text."""
    mem = Memory(budget=5_000)
    call = {"type": "tool_call", "id": "c9", "name": "wx", "arguments": '{"city": "Oslo"}'}
    mem.append_message({"role": "user", "parts": [{"type": "text", "text": "Oslo weather?"}]})
    mem.append_message({"role": "assistant", "parts": [call]})
    mem.append_message({"role": "user", "parts": [{"type": "tool_result", "id": "c9",
                                                   "output": '"rain"'}]})  # fmt: skip
    mem.append_message({"role": "assistant", "parts": [{"type": "text", "text": "Rain."}]})
    request = LlmRequest(contents=[question(1)])
    plugin = ByheartPlugin(mem)
    asyncio.run(plugin.before_model_callback(callback_context=_Ctx(), llm_request=request))
    check_sendable(request.contents)
    made = request.contents[1].parts[0].function_call
    assert (made.id, made.name, made.args) == ("c9", "wx", {"city": "Oslo"})
    got = request.contents[2].parts[0].function_response
    assert (got.id, got.name, got.response) == ("c9", "wx", {"result": "rain"})
    assert request.contents[-1] == question(1)


class _Ctx:
    """What ByheartPlugin reads of ADK's callback context."""

    class session:  # the attribute ADK's callback context has
        app_name, user_id, id = "a", "u", "prop"


@st.composite
def adk_histories(draw: st.DrawFn) -> list[types.Content]:
    """Contents as ADK builds them: questions, rounds of (parallel, id-less or not) calls
    answered in one content, answers; long outputs and texts to outgrow the budget."""
    words = st.text(alphabet="abcdefgh ", min_size=1, max_size=400)
    out: list[types.Content] = []
    for r in range(draw(st.integers(1, 6))):
        out.append(types.Content(role="user", parts=[types.Part(text=f"q{r} " + draw(words))]))
        for c in range(draw(st.integers(0, 2))):
            n = draw(st.integers(1, 3))
            ids = [f"c{r}.{c}.{k}" if draw(st.booleans()) else None for k in range(n)]
            names = [draw(st.sampled_from(["wx", "db"])) for _ in range(n)]
            calls = [types.Part(function_call=types.FunctionCall(id=i, name=m, args={"k": k}))
                     for k, (i, m) in enumerate(zip(ids, names, strict=True))]  # fmt: skip
            answers = [types.Part(function_response=types.FunctionResponse(
                id=i, name=m, response={"result": draw(words)}))
                for i, m in zip(ids, names, strict=True)]  # fmt: skip
            out += [types.Content(role="model", parts=calls),
                    types.Content(role="user", parts=answers)]  # fmt: skip
        out.append(types.Content(role="model", parts=[types.Part(text=f"a{r} " + draw(words))]))
    return out


@settings(max_examples=40)
@given(adk_histories())
def test_random_histories_are_sent_sendable_within_the_limit_with_adks_parts(
    contents: list[types.Content],
) -> None:
    memory = Memory(**SETTINGS)
    plugin = ByheartPlugin(memory)
    for end in range(1, len(contents) + 1):
        if contents[end - 1].role != "user":
            continue  # ADK calls the model after a question or a round's responses
        sofar = contents[:end]
        request = LlmRequest(contents=list(sofar))
        asyncio.run(plugin.before_model_callback(callback_context=_Ctx(), llm_request=request))
        sent = request.contents
        check_sendable(sent)
        assert plugin.last_result["size"] <= LIMIT
        own = {id(p) for c in sofar for p in c.parts or []}
        for c in sent:
            for p in c.parts or []:
                if p.function_call or p.function_response:
                    assert id(p) in own  # ADK's own Part, never made anew
        # Mid-turn, a round sent whole ends the request as ADK made it, the very objects.
        if (
            sofar[-1].parts[0].function_response
            and len(memory) - 1 not in (plugin.last_result["partial"])
        ):
            assert sent[-1] is sofar[-1] and sent[-2] is sofar[-2]
