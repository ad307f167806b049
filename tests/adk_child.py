"""A child process for tests/test_integration_google_adk_workers.py: one call through a
``ByheartSessionService`` on a store handle of its own (another worker process of one app).

    python tests/adk_child.py BACKEND LOCATION SCHEMA ACTION

BACKEND is ``sqlite`` (LOCATION a file) or ``postgres`` (LOCATION a DSN, SCHEMA its schema).
ACTION ``append`` appends to session ``s`` of user ``u`` of app ``a`` one event saying
``CHILD_WORDS`` whose state delta sets ``app:mode``, ``user:lang`` and ``step``; ``delete``
deletes that session. The child prints ``done`` once the call returned (was acknowledged).
"""

from __future__ import annotations

import asyncio
import sys

CHILD_WORDS = "the child worker booked the night ferry"
CHILD_DELTA = {"app:mode": "child", "user:lang": "nb", "step": 2}


async def act(service: object, action: str) -> None:
    from google.adk.events.event import Event, EventActions
    from google.genai import types

    keys = {"app_name": "a", "user_id": "u", "session_id": "s"}
    if action == "delete":
        await service.delete_session(**keys)  # type: ignore[attr-defined]
        return
    session = await service.get_session(**keys)  # type: ignore[attr-defined]
    content = types.Content(role="user", parts=[types.Part(text=CHILD_WORDS)])
    event = Event(author="user", content=content, actions=EventActions(state_delta=CHILD_DELTA))
    await service.append_event(session, event)  # type: ignore[attr-defined]


def main(argv: list[str]) -> None:
    from yait_byheart.integrations.google_adk import ByheartSessionService
    from yait_byheart.store import PostgresStore, SQLiteStore

    backend, location, schema, action = argv[:4]
    store = SQLiteStore(location) if backend == "sqlite" else PostgresStore(location, schema=schema)
    with store:
        asyncio.run(act(ByheartSessionService(store), action))
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
