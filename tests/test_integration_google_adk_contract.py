"""ADK's session-service contract, run on ByheartSessionService and on ADK's own SQL service.

Written by us, in the shape of ADK's ``tests/unittests/sessions/test_session_service.py``
(google/adk-python): neither the source distribution nor the wheel of google-adk carries its
tests, so CI cannot fetch them the way ``.ci/external_suites.py`` fetches other frameworks'.
Each test is a behaviour that file checks on every service type; each runs on

- ``adk-sqlite``: ADK's own ``SqliteSessionService``, the reference;
- ``adk-sqlite-2``: two ``SqliteSessionService`` objects on one file, each call through the
  other one than the call before (two workers of one app);
- ``byheart``: ``ByheartSessionService`` on one ``SQLiteStore``;
- ``byheart-2``: two ``ByheartSessionService`` objects on two ``SQLiteStore`` handles of one
  file, calls alternating between them;
- ``byheart-pg-2``: the same on two ``PostgresStore`` handles (CI starts a server; elsewhere
  it skips unless ``BYHEART_TEST_PG_REQUIRED=1``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions import BaseSessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

from tests import test_store
from yait_byheart.integrations.google_adk import ByheartSessionService
from yait_byheart.store import PostgresStore, SQLiteStore

KINDS = ["adk-sqlite", "adk-sqlite-2", "byheart", "byheart-2", "byheart-pg-2"]


class TwoWorkers(BaseSessionService):  # type: ignore[misc]
    """Two workers of one app: each call goes to the other service than the call before, so
    that each one's reads follow writes made through the other (and its own caches are
    filled before those writes)."""

    def __init__(self, one: Any, two: Any) -> None:
        self.services, self.calls = [one, two], 0

    def _next(self) -> Any:
        self.calls += 1
        return self.services[self.calls % 2]

    async def create_session(self, **kw: Any) -> Any:
        return await self._next().create_session(**kw)

    async def append_event(self, session: Any, event: Any) -> Any:
        return await self._next().append_event(session, event)

    async def delete_session(self, **kw: Any) -> None:
        await self._next().delete_session(**kw)

    async def get_session(self, **kw: Any) -> Any:
        return await self._next().get_session(**kw)

    async def list_sessions(self, **kw: Any) -> Any:
        return await self._next().list_sessions(**kw)

    async def get_user_state(self, **kw: Any) -> Any:
        return await self._next().get_user_state(**kw)


def _pg_stores(stack: ExitStack) -> list[PostgresStore]:
    reason = test_store.pg_unavailable()
    if reason:
        if test_store.PG_REQUIRED:
            pytest.fail(f"PostgreSQL is required here but {reason}")
        pytest.skip(reason)
    schema = "t_" + uuid.uuid4().hex[:12]

    def drop() -> None:
        import psycopg

        with psycopg.connect(test_store.PG_DSN, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")

    stack.callback(drop)
    return [stack.enter_context(PostgresStore(test_store.PG_DSN, schema=schema)) for _ in "ab"]


@pytest.fixture(params=KINDS)
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    path = str(tmp_path / "sessions.db")
    kind = request.param
    with ExitStack() as stack:
        if kind.startswith("adk"):
            first = SqliteSessionService(path)
            yield first if kind == "adk-sqlite" else TwoWorkers(first, SqliteSessionService(path))
            return
        if kind == "byheart-pg-2":
            stores = _pg_stores(stack)
        else:
            stores = [stack.enter_context(SQLiteStore(path)) for _ in "ab"]
        first = ByheartSessionService(stores[0])
        yield first if kind == "byheart" else TwoWorkers(first, ByheartSessionService(stores[1]))


def run(body: Callable[[Any], Awaitable[None]], service: Any) -> None:
    asyncio.run(body(service))


def _now() -> float:
    return datetime.now().astimezone(timezone.utc).timestamp()


def _delta(**state: Any) -> EventActions:
    return EventActions(state_delta=state)


def test_get_empty_session(service: Any) -> None:
    async def body(svc: Any) -> None:
        assert not await svc.get_session(app_name="my_app", user_id="u", session_id="123")

    run(body, service)


def test_create_get_delete_session(service: Any) -> None:
    async def body(svc: Any) -> None:
        session = await svc.create_session(app_name="my_app", user_id="u", state={"k": "v"})
        assert session.id and session.state == {"k": "v"}
        assert session.last_update_time <= _now()
        got = await svc.get_session(app_name="my_app", user_id="u", session_id=session.id)
        assert got == session
        await svc.delete_session(app_name="my_app", user_id="u", session_id=session.id)
        assert await svc.get_session(app_name="my_app", user_id="u", session_id=session.id) is None

    run(body, service)


def test_create_and_list_sessions(service: Any) -> None:
    async def body(svc: Any) -> None:
        ids = [f"session{i}" for i in range(5)]
        for sid in ids:
            await svc.create_session(
                app_name="my_app", user_id="u", session_id=sid, state={"key": "value" + sid}
            )
        sessions = (await svc.list_sessions(app_name="my_app", user_id="u")).sessions
        assert {s.id for s in sessions} == set(ids)
        assert all(s.state == {"key": "value" + s.id} for s in sessions)

    run(body, service)


def test_list_sessions_of_all_users(service: Any) -> None:
    async def body(svc: Any) -> None:
        for user, sid in [("u1", "s1a"), ("u1", "s1b"), ("u2", "s2a")]:
            await svc.create_session(
                app_name="my_app", user_id=user, session_id=sid, state={"key": sid}
            )
        one = (await svc.list_sessions(app_name="my_app", user_id="u1")).sessions
        assert {s.id: s.state for s in one} == {"s1a": {"key": "s1a"}, "s1b": {"key": "s1b"}}
        two = (await svc.list_sessions(app_name="my_app", user_id="u2")).sessions
        assert [(s.id, s.state) for s in two] == [("s2a", {"key": "s2a"})]
        every = (await svc.list_sessions(app_name="my_app", user_id=None)).sessions
        assert {s.id for s in every} == {"s1a", "s1b", "s2a"}

    run(body, service)


def test_app_state_is_shared_by_all_users_of_the_app(service: Any) -> None:
    async def body(svc: Any) -> None:
        s1 = await svc.create_session(
            app_name="my_app", user_id="u1", session_id="s1", state={"app:k1": "v1"}
        )
        event = Event(invocation_id="inv1", author="user", actions=_delta(**{"app:k2": "v2"}))
        await svc.append_event(session=s1, event=event)
        s2 = await svc.create_session(app_name="my_app", user_id="u2", session_id="s2")
        assert s2.state == {"app:k1": "v1", "app:k2": "v2"}
        got = await svc.get_session(app_name="my_app", user_id="u1", session_id="s1")
        assert got.state["app:k1"] == "v1" and got.state["app:k2"] == "v2"

    run(body, service)


def test_user_state_is_shared_only_by_the_users_sessions(service: Any) -> None:
    async def body(svc: Any) -> None:
        s1 = await svc.create_session(
            app_name="my_app", user_id="u1", session_id="s1", state={"user:k1": "v1"}
        )
        event = Event(invocation_id="inv1", author="user", actions=_delta(**{"user:k2": "v2"}))
        await svc.append_event(session=s1, event=event)
        s1b = await svc.create_session(app_name="my_app", user_id="u1", session_id="s1b")
        assert s1b.state == {"user:k1": "v1", "user:k2": "v2"}
        s2 = await svc.create_session(app_name="my_app", user_id="u2", session_id="s2")
        assert s2.state == {}

    run(body, service)


def test_session_state_is_not_shared(service: Any) -> None:
    async def body(svc: Any) -> None:
        s1 = await svc.create_session(
            app_name="my_app", user_id="u1", session_id="s1", state={"sk1": "v1"}
        )
        await svc.append_event(s1, Event(invocation_id="i", author="user", actions=_delta(sk2=2)))
        got = await svc.get_session(app_name="my_app", user_id="u1", session_id="s1")
        assert got.state["sk1"] == "v1" and got.state["sk2"] == 2
        s1b = await svc.create_session(app_name="my_app", user_id="u1", session_id="s1b")
        assert s1b.state == {}

    run(body, service)


def test_temp_state_is_kept_in_the_session_object_only(service: Any) -> None:
    async def body(svc: Any) -> None:
        session = await svc.create_session(app_name="my_app", user_id="u1", session_id="s1")
        event = Event(invocation_id="inv1", author="a1", actions=_delta(**{"temp:k": 1, "sk": 2}))
        await svc.append_event(session=session, event=event)
        assert session.state["temp:k"] == 1 and session.state["sk"] == 2
        assert event.actions.state_delta == {"sk": 2}
        got = await svc.get_session(app_name="my_app", user_id="u1", session_id="s1")
        assert "temp:k" not in got.state and got.state["sk"] == 2

    run(body, service)


def test_get_session_respects_the_user_id(service: Any) -> None:
    async def body(svc: Any) -> None:
        s1 = await svc.create_session(app_name="my_app", user_id="u1", session_id="s1")
        await svc.append_event(s1, Event(invocation_id="inv1", author="user"))
        await svc.create_session(app_name="my_app", user_id="u2", session_id="s1")
        got = await svc.get_session(app_name="my_app", user_id="u2", session_id="s1")
        assert got.user_id == "u2" and got.events == []

    run(body, service)


def test_creating_an_existing_id_raises(service: Any) -> None:
    async def body(svc: Any) -> None:
        await svc.create_session(app_name="my_app", user_id="u", session_id="taken")
        with pytest.raises(AlreadyExistsError):
            await svc.create_session(app_name="my_app", user_id="u", session_id="taken")

    run(body, service)


def test_append_event_with_bytes(service: Any) -> None:
    async def body(svc: Any) -> None:
        session = await svc.create_session(app_name="my_app", user_id="u")
        content = types.Content(
            role="user", parts=[types.Part.from_bytes(data=b"image", mime_type="image/png")]
        )
        grounding = types.GroundingMetadata(
            search_entry_point=types.SearchEntryPoint(sdk_blob=b"blob")
        )
        event = Event(
            invocation_id="i", author="user", content=content, grounding_metadata=grounding
        )
        await svc.append_event(session=session, event=event)
        got = await svc.get_session(app_name="my_app", user_id="u", session_id=session.id)
        assert [e.content for e in got.events] == [content]
        assert got.events[0].grounding_metadata == grounding

    run(body, service)


def test_append_event_keeps_every_field(service: Any) -> None:
    async def body(svc: Any) -> None:
        session = await svc.create_session(app_name="my_app", user_id="u")
        event = Event(
            invocation_id="invocation", author="user",
            content=types.Content(role="user", parts=[types.Part(text="test_text")]),
            turn_complete=True, partial=False,
            actions=EventActions(
                artifact_delta={"file": 0}, transfer_to_agent="agent", escalate=True
            ),
            long_running_tool_ids={"tool1"}, error_code="error_code",
            error_message="error_message", interrupted=True,
            grounding_metadata=types.GroundingMetadata(web_search_queries=["query1"]),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=1, candidates_token_count=1, total_token_count=2
            ),
            citation_metadata=types.CitationMetadata(),
            custom_metadata={"custom_key": "custom_value"},
            timestamp=1700000000.123,
            input_transcription=types.Transcription(text="in", finished=True),
            output_transcription=types.Transcription(text="out", finished=True),
        )  # fmt: skip
        await svc.append_event(session=session, event=event)
        got = await svc.get_session(app_name="my_app", user_id="u", session_id=session.id)
        assert got == session

    run(body, service)


def test_last_update_time_follows_the_latest_event(service: Any) -> None:
    async def body(svc: Any) -> None:
        session = await svc.create_session(app_name="my_app", user_id="u")
        before = session.last_update_time
        event = Event(invocation_id="i", author="user", timestamp=before + 10)
        await svc.append_event(session=session, event=event)
        assert session.last_update_time == pytest.approx(before + 10, abs=1e-6)
        got = await svc.get_session(app_name="my_app", user_id="u", session_id=session.id)
        assert got.last_update_time == pytest.approx(before + 10, abs=1e-6)

    run(body, service)


def test_get_session_with_a_config(service: Any) -> None:
    async def body(svc: Any) -> None:
        session = await svc.create_session(app_name="my_app", user_id="u")
        for i in range(1, 6):
            await svc.append_event(session, Event(author="user", timestamp=i))

        async def stamps(**config: Any) -> list[float]:
            got = await svc.get_session(
                app_name="my_app", user_id="u", session_id=session.id,
                config=GetSessionConfig(**config) if config else None,
            )  # fmt: skip
            return [e.timestamp for e in got.events]

        assert await stamps() == [1, 2, 3, 4, 5]
        assert await stamps(num_recent_events=0) == []
        assert await stamps(num_recent_events=3) == [3, 4, 5]
        assert await stamps(after_timestamp=4.0) == [4, 5]
        assert await stamps(after_timestamp=50.0) == []
        assert await stamps(after_timestamp=4.0, num_recent_events=3) == [4, 5]

    run(body, service)


def test_partial_events_are_not_kept(service: Any) -> None:
    async def body(svc: Any) -> None:
        session = await svc.create_session(app_name="my_app", user_id="u")
        await svc.append_event(session, Event(author="user", partial=True))
        assert session.events == []
        got = await svc.get_session(app_name="my_app", user_id="u", session_id=session.id)
        assert got.events == []

    run(body, service)


def test_user_state_reads(service: Any) -> None:
    async def body(svc: Any) -> None:
        assert not await svc.get_user_state(app_name="my_app", user_id="u1")
        session = await svc.create_session(app_name="my_app", user_id="u1")
        for value in (1, 2):
            delta = _delta(**{"user:profile": {"n": value}, "user:c": value, "sk": 1})
            await svc.append_event(session, Event(author="system", actions=delta))
        state = await svc.get_user_state(app_name="my_app", user_id="u1")
        assert state == {"profile": {"n": 2}, "c": 2}
        assert not await svc.get_user_state(app_name="my_app", user_id="u2")
        assert not await svc.get_user_state(app_name="other_app", user_id="u1")

    run(body, service)


def test_a_second_worker_reads_what_the_first_wrote_after_it_read(service: Any) -> None:
    """Not in ADK's file, which uses one service: reads between the writes, so that a
    reader's cache is filled before each write it must see."""

    async def body(svc: Any) -> None:
        session = await svc.create_session(app_name="my_app", user_id="u", session_id="s")
        assert (await svc.get_session(app_name="my_app", user_id="u", session_id="s")).events == []
        assert not await svc.get_user_state(app_name="my_app", user_id="u")
        delta = _delta(**{"app:a": 1, "user:b": 2, "c": 3})
        event = Event(invocation_id="i", author="user", actions=delta)
        await svc.append_event(session, event)
        got = await svc.get_session(app_name="my_app", user_id="u", session_id="s")
        assert got.events == [event] and got.state == {"app:a": 1, "user:b": 2, "c": 3}
        assert await svc.get_user_state(app_name="my_app", user_id="u") == {"b": 2}
        listed = (await svc.list_sessions(app_name="my_app", user_id="u")).sessions
        assert [s.state for s in listed] == [got.state]
        await svc.delete_session(app_name="my_app", user_id="u", session_id="s")
        assert await svc.get_session(app_name="my_app", user_id="u", session_id="s") is None
        assert (await svc.list_sessions(app_name="my_app", user_id="u")).sessions == []

    run(body, service)
