"""A stateful fuzz of Memory (issue 19): random appends (short, long and huge turns, tool
rounds, dates), composes (with and without a query and outside material), redactions, JSON
round trips and store reopenings. After every step the messages are sendable by every
provider adapter, the hard limit holds, every included turn is sent verbatim (whole, or as its
pieces), redacted words are gone everywhere, and round trips continue identically."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from datetime import date
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tests._profiles import heavy, long_run
from tests._sizes import sent_size, sent_text, tokenish
from tests.test_providers_tools import check_all
from yait_byheart import Memory
from yait_byheart._turns.render import tool_line
from yait_byheart.store import SQLiteStore

WORDS = (
    "ferry harbour tomato violin Lisbon invoice server error shard timeout garden "
    "train ticket 55 euro naïve café 日本語 我们 去了 yesterday last Friday"
).split()
SEPARATORS = (" ", " ", " ", " ", ". ", "\n", "\n\n", "。")
SIZES = {"short": (1, 12), "long": (150, 900), "huge": (7_000, 8_000)}  # words; huge ~ 50k chars
WHEN = ("", "8 May 2023", "9 May 2023", date(2023, 5, 20))


def words(seed: int, n: int) -> str:
    """A deterministic text of `n` words with paragraph, line and sentence breaks."""
    out = []
    for k in range(n):
        out.append(WORDS[(seed * 31 + k * 7 + k * k) % len(WORDS)])
        out.append(SEPARATORS[(seed + k * 13) % len(SEPARATORS)])
    return "".join(out).strip() or "word"


class MemoryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="byheart-fuzz-"))
        self.serial = 0
        self.tokens: dict[int, str] = {}  # turn -> its unique word
        self.redacted: set[str] = set()
        self.pending: list[str] = []  # tool calls not answered yet
        self.call_turn: dict[str, int] = {}

    @initialize(
        budget=st.sampled_from([300, 800, 3_000]),
        chunk=st.sampled_from([60, 300, 900]),
        stability=st.sampled_from([0.0, 0.5, 0.7, 1.0]),
        ceiling=st.sampled_from([1.0, 1.5, 4.0]),
        external=st.booleans(),
        tokens=st.booleans(),
    )
    def start(
        self, budget: int, chunk: int, stability: float, ceiling: float, external: bool,
        tokens: bool,
    ) -> None:  # fmt: skip
        self.settings: dict[str, Any] = {"external": self.outside} if external else {}
        if tokens:
            self.settings["measure"] = tokenish
        self.store = SQLiteStore(self.folder / "fuzz.db")
        self.mem = self.store.open(
            "c", budget=budget, chunk=chunk, stability=stability, ceiling=ceiling,
            **self.settings,
        )  # fmt: skip

    def teardown(self) -> None:
        if hasattr(self, "store"):
            self.store.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    @staticmethod
    def outside(query: str) -> list[dict[str, str]]:
        return [
            {"text": f"reference on {query} " + words(len(query), 40), "source": "ref.md"},
            {"text": words(len(query) + 1, 3_000), "source": "big.md"},
        ]

    def token(self) -> str:
        self.serial += 1
        return f"zq{self.serial}x"

    def stored(self, index: int, token: str) -> None:
        assert index == len(self.mem) - 1
        self.tokens[index] = token

    # -- rules --------------------------------------------------------------------------------

    @rule(
        role=st.sampled_from(["user", "assistant"]), size=st.sampled_from(["short"] * 4 +
        ["long"] * 2 + ["huge"]), seed=st.integers(0, 10_000), when=st.sampled_from(WHEN),
    )  # fmt: skip
    def append(self, role: str, size: str, seed: int, when: Any) -> None:
        low, high = SIZES[size]
        token = self.token()
        text = f"{words(seed, low + seed % (high - low + 1))} {token}"
        self.stored(self.mem.append(role, text, when=when), token)

    @rule(name=st.sampled_from(["search", "lookup"]), seed=st.integers(0, 1_000))
    def tool_call(self, name: str, seed: int) -> None:
        token = self.token()
        call = {"type": "tool_call", "id": f"call{self.serial}", "name": name,
                "arguments": json.dumps({"q": words(seed, 3)})}  # fmt: skip
        message = {"role": "assistant", "parts": [{"type": "text", "text": token}, call]}
        self.stored(self.mem.append_message(message), token)
        self.pending.append(call["id"])
        self.call_turn[call["id"]] = len(self.mem) - 1

    @precondition(lambda self: bool(self.pending))
    @rule(seed=st.integers(0, 1_000), error=st.booleans())
    def tool_result(self, seed: int, error: bool) -> None:
        token = self.token()
        results = [
            {"type": "tool_result", "id": call, "output": f"{words(seed, 20)} {token}",
             "is_error": error}
            for call in self.pending
        ]  # fmt: skip
        self.stored(self.mem.append_message({"role": "user", "parts": results}), token)
        self.pending = []

    @rule(seed=st.integers(0, 1_000), ask=st.sampled_from(["none", "words", "token"]))
    def compose(self, seed: int, ask: str) -> None:
        query: str | None = None
        if ask == "words":
            query = words(seed, 1 + seed % 10)
        elif ask == "token":
            live = [t for t in self.tokens.values() if t not in self.redacted]
            query = f"what about {live[seed % len(live)]}?" if live else "what about it?"
        if query is None:
            turns = self.mem.to_dict()["turns"]
            shown = [t for t in turns if not t.get("redacted")]
            if turns and not shown:
                with pytest.raises(ValueError, match="nothing to send"):
                    self.mem.compose()
                return
            if not shown or shown[-1]["role"] != "user":
                return  # a model is called after a user turn or tool results, not after itself
        self.check(self.mem.compose(query), query)

    @precondition(lambda self: len(self.mem) > 0)
    @rule(seed=st.integers(0, 10_000))
    def redact(self, seed: int) -> None:
        index = seed % len(self.mem)
        self.mem.redact(index)
        self.redacted.add(self.tokens[index])
        # A redacted call is forgotten: nothing may answer it any more.
        self.pending = [c for c in self.pending if self.call_turn[c] != index]

    @rule(query=st.sampled_from(["ferry timeout?", "the garden", "日本語"]))
    def round_trip(self, query: str) -> None:
        data = json.loads(json.dumps(self.mem.to_dict()))
        copy = Memory.from_dict(data, **self.settings)
        assert copy.to_dict() == self.mem.to_dict()
        assert copy.stats == self.mem.stats
        assert copy.compose(query) == self.mem.compose(query)
        assert copy.to_dict() == self.mem.to_dict()

    @rule(query=st.sampled_from(["ferry timeout?", "violin lessons"]))
    def reopen(self, query: str) -> None:
        before = self.mem.to_dict()
        self.store.close()
        self.store = SQLiteStore(self.folder / "fuzz.db")
        reopened = self.store.open("c", **self.settings)
        assert reopened.to_dict() == before
        twin = Memory.from_dict(before, **self.settings)
        self.mem = reopened
        assert self.mem.compose(query) == twin.compose(query)

    # -- checks -------------------------------------------------------------------------------

    def check(self, result: dict[str, Any], query: str | None) -> None:
        mem = self.mem
        messages = result["messages"]
        roles = [m["role"] for m in messages]
        assert roles and roles[0] == "user"
        assert not any(a == b == "assistant" for a, b in pairwise(roles))
        assert all(m["parts"] for m in messages)
        assert all(p["text"].strip() for m in messages for p in m["parts"] if p["type"] == "text")
        if query is not None:
            assert messages[-1]["parts"][-1]["text"].endswith(query)
        check_all(result)
        # `size` may count a message join that did not happen: never less than was sent.
        assert sent_size(result, mem.measure) <= result["size"] <= mem.ceiling * mem.budget
        text = sent_text(result)
        turns = mem.to_dict()["turns"]
        for i in result["included"]:
            assert not turns[i].get("redacted")
            shown = turns[i].get("shown", turns[i]["text"])
            # Cuts are offsets into the turn as indexed: its words, then its tool parts as lines.
            lines = ([shown] if shown else []) + [tool_line(p) for p in turns[i].get("tools", [])]
            whole = "\n".join(lines)
            bounds = [0, *turns[i].get("cuts", []), len(whole)]
            pieces = [whole[a:b] for a, b in pairwise(bounds)]
            if i in result["partial"]:
                # Some of its pieces, or (a limit too small for the newest turn) only its end.
                # Some of its pieces; or its long strings elided around a marker (a tool round
                # alone over the limit); or (a limit too small for the newest turn) its end.
                in_pieces = len(pieces) > 1 and any(p.strip() and p.strip() in text for p in pieces)
                assert (
                    in_pieces or elided_from(result, whole)
                    or sent_end_of(result, whole, turns[i]["role"])
                )  # fmt: skip
            elif len(pieces) > 1:
                # Results sent natively come first in their message (providers ask it), the
                # turn's other parts after them as text: then each part is whole, not each cut.
                in_order = all(p.strip() in text for p in pieces)
                assert in_order or all(line.strip() in text for line in lines)
            elif shown:
                assert shown in text
        for token in self.redacted:
            assert token not in text

    @invariant()
    def redacted_words_are_gone(self) -> None:
        if not hasattr(self, "mem"):
            return
        data = json.dumps(self.mem.to_dict(), ensure_ascii=False)
        for token in self.redacted:
            assert token not in data


ELIDED = re.compile(r"\n\[\.\.\. \d+ characters left out to stay within the size limit \.\.\.\]\n")
ANNOTATION = re.compile(r"^(\[[^\]\n]*\]\n)+")  # a date, a part number: the renderer's


def elided_from(result: dict[str, Any], whole: str) -> bool:
    """Whether a part sent (a text, a tool part's text form) keeps a verbatim head and tail
    of `whole` around the marker of characters left out."""
    for message in result["messages"]:
        for part in message["parts"]:
            line = part["text"] if part["type"] == "text" else tool_line(part)
            if _elided_in(line, whole):
                return True
    return False


def _elided_in(line: str, whole: str) -> bool:
    for found in ELIDED.finditer(line):
        head, tail = ANNOTATION.sub("", line[: found.start()]), line[found.end() :]
        if head.strip() and tail.strip() and head in whole and tail.rstrip("]") in whole:
            return True
    return False


def sent_end_of(result: dict[str, Any], whole: str, role: str) -> bool:
    """Whether a message's text is the end of `whole` (after the role's name, for a turn that
    is not the user's), as a compose sends the newest turn when it alone exceeds the limit."""
    ends = (
        p["text"].removeprefix(f"{role}: ")
        for m in result["messages"]
        for p in m["parts"]
        if p["type"] == "text"
    )
    return any(end.strip() and whole.endswith(end) for end in ends)


# The suite's heaviest test (43 % of its time at 80 examples): 20 examples of 30 steps in the
# default run, the same ones every time (derandomized: a red run is reproducible); with
# `pytest --slow`, 200 random examples of 60 steps (tests/conftest.py).
MemoryMachine.TestCase.settings = settings(
    max_examples=heavy(0.2), stateful_step_count=60 if long_run() else 30, deadline=None,
    derandomize=not long_run(), phases=[Phase.explicit, Phase.generate],
    database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)  # fmt: skip
TestMemoryMachine = MemoryMachine.TestCase


# -- the cases the machine found, kept as plain tests ---------------------------------------


def test_a_redacted_call_is_forgotten_as_a_reopened_memory_forgets_it() -> None:
    mem = Memory(budget=800)
    call = {"type": "tool_call", "id": "c1", "name": "f", "arguments": "{}"}
    mem.append_message({"role": "assistant", "parts": [{"type": "text", "text": "zq"}, call]})
    mem.redact(0)
    copy = Memory.from_dict(json.loads(json.dumps(mem.to_dict())))
    assert copy.compose("hello?") == mem.compose("hello?")
    assert copy.to_dict() == mem.to_dict()
    result = {"role": "user", "parts": [{"type": "tool_result", "id": "c1", "output": "x"}]}
    for memory in (mem, copy):
        with pytest.raises(ValueError, match="answers no open tool_call"):
            memory.append_message(result)


def test_compose_without_a_query_when_every_turn_is_redacted_says_so() -> None:
    mem = Memory()
    mem.append("user", "my card number is 4111")
    mem.redact(0)
    before = mem.to_dict()
    with pytest.raises(ValueError, match="nothing to send.*all redacted"):
        mem.compose()
    assert mem.to_dict() == before
    assert mem.compose("hello")["messages"] == [
        {"role": "user", "parts": [{"type": "text", "text": "hello"}]}
    ]


def test_compose_without_a_query_sends_turns_a_measure_counts_as_nothing() -> None:
    mem = Memory(measure=lambda text: len(text) // 100)
    mem.append("user", "hi")
    sent = mem.compose()["messages"]
    assert sent == [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]


@pytest.mark.parametrize("earlier", [1, 10])
@pytest.mark.parametrize("budget", [300, 3_000])
def test_a_call_answered_after_a_later_exchange_travels_as_text(earlier: int, budget: int) -> None:
    # Providers take a result only in the user turn right after its call's assistant turn.
    mem = Memory(budget=budget)

    def call(n: int) -> dict[str, Any]:
        return {"type": "tool_call", "id": f"c{n}", "name": "f", "arguments": "{}"}

    for k in range(earlier):
        mem.append("user", words(k, 60))
        mem.append("assistant", words(k + 1, 60))
    mem.append("user", "look up the ferry")
    mem.append_message({"role": "assistant", "parts": [call(1)]})
    mem.append("user", "and the harbour too")
    mem.append_message({"role": "assistant", "parts": [call(2)]})
    results = [{"type": "tool_result", "id": f"c{n}", "output": f"out {n}"} for n in (1, 2)]
    mem.append_message({"role": "user", "parts": results})
    result = mem.compose("the ferry?")
    check_all(result)
    native = [p["id"] for m in result["messages"] for p in m["parts"] if p["type"] != "text"]
    assert "c1" not in native  # answered after a later exchange: as text, verbatim
    assert "[tool result c1: out 1]" in sent_text(result)


def test_a_limit_too_small_for_the_newest_result_sends_its_end() -> None:
    mem = Memory(budget=300, ceiling=1.0, external=MemoryMachine.outside)
    mem.append_message({"role": "assistant", "parts": [
        {"type": "text", "text": "zq1x"},
        {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": "{}"},
    ]})  # fmt: skip
    mem.append("assistant", "still looking")
    output = words(877, 20) + " zq3x"
    mem.append_message({"role": "user", "parts": [
        {"type": "tool_result", "id": "c1", "output": output, "is_error": True},
    ]})  # fmt: skip
    result = mem.compose("invoice 55 ferry ticket")
    check_all(result)
    assert result["size"] <= 300 and result["partial"] == [2]
    end = result["messages"][0]["parts"][0]["text"]
    assert end.strip() and tool_line(result_part(mem)).endswith(end)


def result_part(mem: Memory) -> dict[str, Any]:
    return mem.to_dict()["turns"][-1]["tools"][0]


@pytest.mark.parametrize("budget", [800, 3_000])
def test_the_newest_entries_kept_before_a_round_count_their_joins(budget: int) -> None:
    # Trimmed to the hard limit: a long reply's pieces, each measured alone, share one
    # assistant message with the round's call: every join counts toward the limit.
    mem = Memory(budget=budget, chunk=60, ceiling=1.0)
    mem.append("user", words(1, 7_000))
    mem.append("assistant", words(2, 400), when="8 May 2023")
    call = {"type": "tool_call", "id": "c1", "name": "search", "arguments": "{}"}
    mem.append_message({"role": "assistant", "parts": [{"type": "text", "text": "ok"}, call]})
    result = {"type": "tool_result", "id": "c1", "output": words(3, 20), "is_error": True}
    mem.append_message({"role": "user", "parts": [result]})
    sent = mem.compose()
    check_all(sent)
    assert sent["messages"][1]["role"] == "assistant" and len(sent["messages"]) == 3
    assert sent_size(sent) <= sent["size"] <= budget


def test_a_limit_the_omission_note_would_pass_sends_no_note() -> None:
    # Outside material leaves less room than the note of what was left out takes.
    mem = Memory(budget=300, ceiling=1.0, external=MemoryMachine.outside)
    call = {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": "{}"}
    mem.append_message({"role": "assistant", "parts": [{"type": "text", "text": "zq1x"}, call]})
    result = {"type": "tool_result", "id": "c1", "output": words(1000, 60)}
    mem.append_message({"role": "user", "parts": [result]})
    query = words(274, 5)
    sent = mem.compose(query)
    check_all(sent)
    assert sent["external"] and sent_size(sent) <= sent["size"] <= 300
    assert sent["messages"][-1]["parts"][-1]["text"] == query
