"""What ByheartPlugin hands ADK's model (issue 43): never two contents of one role in a row,
and past tool rounds that fit the budget as ADK's own function call and response parts,
whatever the size of their results. A scripted model, tool results of 2,000 to 20,000
characters, a SQLite store. No network."""

from __future__ import annotations

import asyncio
from itertools import pairwise
from pathlib import Path

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.genai import types

from tests.test_integration_google_adk import Scripted, check_sendable, question
from yait_byheart._turns.render import MEMORY_MARKER, OMITTED_MARKER
from yait_byheart.integrations.google_adk import ByheartPlugin, ByheartSessionService
from yait_byheart.store import SQLiteStore

SIZES = [2_000, 14_000, 20_000, 6_000, 17_000, 9_000, 12_000, 3_000]


def report(city: str) -> str:
    """A long tool result: its size set by the city's number."""
    k = int(city.removeprefix("City"))
    line = f"Hourly readings for {city}: wind, humidity, pressure and cloud cover. "
    return (line * (SIZES[k] // len(line) + 1))[: SIZES[k]]


def script(runs: int) -> list[types.Content]:
    out = []
    for k in range(runs):
        call = types.FunctionCall(name="report", args={"city": f"City{k}"})
        out += [
            types.Content(role="model", parts=[types.Part(function_call=call)]),
            types.Content(role="model", parts=[types.Part(text=f"City{k} is windy.")]),
        ]
    return out


async def ask(runner: Runner, sid: str, k: int) -> None:
    async for _ in runner.run_async(user_id="ann", session_id=sid, new_message=question(k)):
        pass


def test_contents_alternate_and_rounds_that_fit_stay_native(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "adk.db") as store:
        model = Scripted(replies=script(len(SIZES)), sent=[])
        agent = LlmAgent(name="weather", model=model, tools=[report], instruction="Be brief.")
        plugin = ByheartPlugin(store, budget=24_000)
        sessions = ByheartSessionService(store)
        runner = Runner(app=App(name="trips", root_agent=agent, plugins=[plugin]),
                        session_service=sessions)  # fmt: skip
        sid = asyncio.run(sessions.create_session(app_name="trips", user_id="ann")).id
        for k in range(len(SIZES)):
            asyncio.run(ask(runner, sid, k))
    native = 0
    for sent in model.sent:
        check_sendable(sent)
        roles = [c.role for c in sent]
        assert all(a != b for a, b in pairwise(roles)), roles
        texts = [p.text for c in sent for p in c.parts or [] if p.text]
        trimmed = OMITTED_MARKER in texts
        for text in texts:  # tool activity as text only in memory (or after a trim)
            assert "[tool call " not in text or text.startswith(MEMORY_MARKER) or trimmed
        native += sum(1 for c in sent for p in c.parts or [] if p.function_call)
    assert native >= len(SIZES)  # each round native at least in the call that answers it
