"""byheart with Google ADK deployed as apps run: several workers (store handles, processes)
on one store, each with its own ByheartSessionService, ByheartPlugin and ByheartMemoryService.
Each read reflects every write acknowledged before it, through any of them; the model gets the
history ADK built, never a turn twice; memory ingests each event once. On SQLite and, where a
server is given (CI starts one), PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event, EventActions
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from tests import test_store
from tests.adk_child import CHILD_DELTA, CHILD_WORDS
from tests.test_integration_google_adk import (
    LIMIT,
    SETTINGS,
    Scripted,
    chars,
    check_sendable,
    get_weather,
    question,
    run,
    script,
)
from yait_byheart.integrations.google_adk import (
    ByheartMemoryService,
    ByheartPlugin,
    ByheartSessionService,
)

backend = test_store.backend
Backend = test_store.Backend
CHILD = Path(__file__).resolve().parent / "adk_child.py"
KEYS = {"app_name": "a", "user_id": "u", "session_id": "s"}


def said(text: str, **delta: Any) -> Event:
    content = types.Content(role="user", parts=[types.Part(text=text)])
    return Event(author="user", content=content, actions=EventActions(state_delta=delta))


def child(where: Backend, action: str) -> None:
    """Run one ADK call in another process, through a store handle of its own."""
    args = [sys.executable, str(CHILD), where.kind, where.location, where.schema or "-", action]
    path = [p for p in (os.environ.get("PYTHONPATH"), str(CHILD.parents[1])) if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    out = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout == "done\n", out.stderr


def test_two_handles_read_each_others_writes(backend: Backend) -> None:
    async def body(one: Any, two: Any) -> None:
        mine = await one.create_session(**{**KEYS}, state={"app:mode": "day", "step": 1})
        theirs = await two.get_session(**KEYS)  # read (and cached) before the writes below
        assert theirs == mine and await two.get_user_state(app_name="a", user_id="u") == {}
        event = said("book the ferry", **{"app:mode": "night", "user:lang": "en", "step": 2})
        await one.append_event(mine, event)
        got = await two.get_session(**KEYS)
        assert got.events == [event] and got == mine
        assert got.state == {"app:mode": "night", "user:lang": "en", "step": 2}
        assert await two.get_user_state(app_name="a", user_id="u") == {"lang": "en"}
        listed = (await two.list_sessions(app_name="a", user_id="u")).sessions
        assert [(s.id, s.state) for s in listed] == [("s", got.state)]
        await one.delete_session(**KEYS)
        assert await two.get_session(**KEYS) is None
        assert (await two.list_sessions(app_name="a")).sessions == []
        with pytest.raises(SessionNotFoundError):
            await two.append_event(got, said("too late"))
        # Made anew under the same id by the other worker: the new one, not the old words.
        fresh = await two.create_session(**KEYS, state={"step": 0})
        again = await one.get_session(**KEYS)
        assert again == fresh and again.events == [] and again.state["step"] == 0

    with backend.store() as a, backend.store() as b:
        asyncio.run(body(ByheartSessionService(a), ByheartSessionService(b)))


def test_a_worker_process_writes_and_deletes_what_this_one_reads(backend: Backend) -> None:
    with backend.store() as store:
        sessions = ByheartSessionService(store)
        created = asyncio.run(sessions.create_session(**KEYS, state={"step": 1}))
        assert asyncio.run(sessions.get_session(**KEYS)).events == []
        child(backend, "append")
        got = asyncio.run(sessions.get_session(**KEYS))
        assert [e.content.parts[0].text for e in got.events] == [CHILD_WORDS]
        assert got.state == CHILD_DELTA
        assert asyncio.run(sessions.get_user_state(app_name="a", user_id="u")) == {"lang": "nb"}
        child(backend, "delete")
        assert asyncio.run(sessions.get_session(**KEYS)) is None
        assert asyncio.run(sessions.list_sessions(app_name="a")).sessions == []
        with pytest.raises(SessionNotFoundError):
            asyncio.run(sessions.append_event(created, said("after the delete")))
        assert store.conversations() == ["adk-state/a", "adk-state/a/u"]  # nothing revived


class Recorder(BasePlugin):  # type: ignore[misc]
    """Runs before ByheartPlugin: what ADK itself would send each model call."""

    def __init__(self) -> None:
        super().__init__(name="recorder")
        self.seen: list[list[Any]] = []

    async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
        self.seen.append([c.model_dump(exclude_none=True) for c in llm_request.contents])


def worker(store: Any, model: Scripted, recorder: Recorder, **settings: Any) -> Runner:
    agent = LlmAgent(name="weather", model=model, tools=[get_weather], instruction="Be brief.")
    plugins = [recorder, ByheartPlugin(store, **settings)]
    app = App(name="trips", root_agent=agent, plugins=plugins)
    return Runner(app=app, session_service=ByheartSessionService(store))


@pytest.mark.parametrize("budget", [100_000, SETTINGS["budget"]])
def test_plugin_turns_alternating_between_two_workers(backend: Backend, budget: int) -> None:
    """Runs alternate between two workers; each run has a tool round. With room for all of
    it, the model gets exactly what ADK built; with less, a sendable selection within the
    limit; either way the plugin's conversation holds each content once."""
    runs = 6
    settings = {**SETTINGS, "budget": budget}
    with backend.store() as a, backend.store() as b:
        model, recorder = Scripted(replies=script(0, runs), sent=[]), Recorder()
        workers = [worker(store, model, recorder, **settings) for store in (a, b)]
        sid = asyncio.run(workers[0].session_service.create_session(app_name="trips",
                                                                    user_id="ann")).id  # fmt: skip
        for k in range(runs):
            assert asyncio.run(run(workers[k % 2], sid, k)) == f"In City{k} it is sunny."
        assert len(model.sent) == len(recorder.seen) == 2 * runs
        for sent, adk in zip(model.sent, recorder.seen, strict=True):
            check_sendable(sent)
            if budget > SETTINGS["budget"]:
                assert [c.model_dump(exclude_none=True) for c in sent] == adk
            else:
                assert chars(sent) <= settings["budget"] * settings["ceiling"] <= LIMIT
        # q, call, response, answer per run; the last answer is filed on the next call.
        assert len(a.open(f"adk-input/trips/ann/{sid}")) == 4 * runs - 1


def test_plugin_of_a_session_made_anew_sends_none_of_the_old_words(backend: Backend) -> None:
    with backend.store() as a, backend.store() as b:
        model, recorder = Scripted(replies=script(0, 2), sent=[]), Recorder()
        one, two = (worker(store, model, recorder, budget=100_000) for store in (a, b))
        keys = {"app_name": "trips", "user_id": "ann", "session_id": "s"}
        asyncio.run(one.session_service.create_session(**keys))
        asyncio.run(run(one, "s", 0))
        asyncio.run(two.session_service.delete_session(**keys))
        asyncio.run(two.session_service.create_session(**keys))
        asyncio.run(run(one, "s", 1))
        words = [p.text for c in model.sent[-2] for p in c.parts or [] if p.text]
        assert words == [question(1).parts[0].text]


def test_memory_readding_ingests_exactly_the_new_events(backend: Backend) -> None:
    """A session kept by another service (ADK's in-memory one), added through one handle,
    then again through another after an event was appended, then again."""

    async def body(a: Any, b: Any) -> None:
        kept = ByheartSessionService(a)
        own = await kept.create_session(**KEYS, state={"app:theme": "dark", "user:lang": "en"})
        await kept.append_event(own, said("our locker code is 4471"))
        other = InMemorySessionService()
        foreign = await other.create_session(
            app_name="a", user_id="u", session_id="f",
            state={"app:theme": "light", "user:lang": "fr"},
        )  # fmt: skip
        await other.append_event(foreign, said("the museum opens at nine", **{"app:x": 1}))
        first, second = ByheartMemoryService(a), ByheartMemoryService(b)
        await first.add_session_to_memory(foreign)
        await other.append_event(foreign, said("the night ferry leaves at noon"))
        await second.add_session_to_memory(await other.get_session(**{**KEYS, "session_id": "f"}))
        await first.add_session_to_memory(foreign)  # nothing new
        await second.add_session_to_memory(await kept.get_session(**KEYS))  # the store's own
        for memory, query, text in [
            (second, "ferry noon", "the night ferry leaves at noon"),
            (first, "museum nine", "the museum opens at nine"),
            (first, "locker code", "our locker code is 4471"),
        ]:
            found = (await memory.search_memory(app_name="a", user_id="u", query=query)).memories
            assert [m.content.parts[0].text for m in found[:1]] == [text]
            assert [m.content.parts[0].text for m in found].count(text) == 1
        got = await kept.get_session(**KEYS)
        assert len(got.events) == 1  # the store's own session got nothing twice
        assert got.state == {"app:theme": "dark", "user:lang": "en"}  # no foreign state
        assert await kept.get_user_state(app_name="a", user_id="u") == {"lang": "en"}

    with backend.store() as a, backend.store() as b:
        asyncio.run(body(a, b))


def test_two_threads_append_to_one_session_through_two_handles(backend: Backend) -> None:
    """Two threads, each a worker with its own handle, append to one session at once: every
    event is kept once, and both workers read all of them."""
    count = 12

    def append(store: Any, worker: int) -> None:
        async def body() -> None:
            service = ByheartSessionService(store)
            session = await service.get_session(**KEYS)
            for k in range(count):
                delta = {f"w{worker}": k, "user:last": worker}
                await service.append_event(session, said(f"worker {worker} note {k}", **delta))

        asyncio.run(body())

    with backend.store() as a, backend.store() as b:
        asyncio.run(ByheartSessionService(a).create_session(**KEYS))
        threads = [threading.Thread(target=append, args=(s, n)) for n, s in enumerate((a, b))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        expected = {f"worker {n} note {k}" for n in range(2) for k in range(count)}
        for store in (a, b):
            got = asyncio.run(ByheartSessionService(store).get_session(**KEYS))
            texts = [e.content.parts[0].text for e in got.events]
            assert len(texts) == 2 * count and set(texts) == expected
            assert got.state["w0"] == got.state["w1"] == count - 1


class Echo(BaseLlm):  # type: ignore[misc]
    """Answers each call by echoing its last question; records what each call got."""

    model: str = "echo"
    sent: list[list[types.Content]] = []  # noqa: RUF012 (a pydantic field, given per test)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.sent.append(list(llm_request.contents))
        await asyncio.sleep(0)  # let the other session's run go on meanwhile
        text = llm_request.contents[-1].parts[0].text
        answer = types.Content(role="model", parts=[types.Part(text=f"ok: {text}")])
        yield LlmResponse(content=answer)


def test_one_agent_serving_two_sessions_at_once_never_mixes_their_words(
    backend: Backend,
) -> None:
    """ADK's thread is a session: one runner, one plugin, alice's and bob's sessions run
    concurrently; no call for bob carries alice's words, nor the other way round."""

    async def body(runner: Runner) -> None:
        service = runner.session_service
        for user in ("alice", "bob"):
            await service.create_session(app_name="trips", user_id=user, session_id="s")

        async def turns(user: str) -> None:
            for k in range(4):
                text = f"{user} says: my secret {k} is {user.upper()}-{k}"
                message = types.Content(role="user", parts=[types.Part(text=text)])
                async for _ in runner.run_async(user_id=user, session_id="s",
                                                new_message=message):  # fmt: skip
                    pass

        await asyncio.gather(turns("alice"), turns("bob"))

    with backend.store() as store:
        model = Echo(sent=[])
        agent = LlmAgent(name="echo", model=model, instruction="Be brief.")
        app = App(name="trips", root_agent=agent, plugins=[ByheartPlugin(store, budget=50_000)])
        asyncio.run(body(Runner(app=app, session_service=ByheartSessionService(store))))
        assert len(model.sent) == 8
        for sent in model.sent:
            texts = [p.text or "" for c in sent for p in c.parts or []]
            user = "alice" if texts[-1].startswith("alice") else "bob"
            assert all(f"{user} says" in t for t in texts)  # each its own session's
            assert len(texts) % 2 == 1  # its questions and answers so far, none twice
