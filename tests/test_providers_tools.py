"""Tool calls and results in every provider adapter: shapes, pairing, bad input, breakpoints.

Golden transcripts live in tests/data/tools/*.json (a compose result and the request each
adapter must produce). The property tests build random agent transcripts and check every
adapter's output against the provider's own ordering rule for tool messages: no call left
unanswered, no result without its call. Nothing touches the network; SDK type checks skip
when the SDK is not installed.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart.providers import (
    JOIN,
    MAX_BREAKPOINTS,
    min_cacheable_tokens,
    to_anthropic,
    to_gemini,
    to_openai,
    to_openai_responses,
)

GOLDEN = sorted((Path(__file__).parent / "data" / "tools").glob("*.json"))
CONVERTERS = [to_openai, to_openai_responses, to_anthropic, to_gemini]


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tcall(ident: str, name: str = "lookup", arguments: str = "{}") -> dict[str, Any]:
    return {"type": "tool_call", "id": ident, "name": name, "arguments": arguments}


def tresult(ident: str, output: str = "ok", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "id": ident, "output": output, **extra}


def user(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "parts": list(parts)}


def assistant(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "parts": list(parts)}


def result_of(messages: list[dict[str, Any]], points: list[int] | None = None) -> dict[str, Any]:
    points = points or []
    return {
        "messages": messages,
        "stable_upto": points[-1] if points else -1,
        "breakpoints": points,
    }


ROUND = result_of(
    [
        user(text("weather in Oslo?")),
        assistant(tcall("c1", "wx", '{"city": "Oslo"}')),
        user(tresult("c1", "4 C")),
    ],
    [1],
)


# --------------------------------------------------------------------------- golden cases


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
@pytest.mark.parametrize("convert", CONVERTERS, ids=lambda f: f.__name__)
def test_golden_transcripts(path: Path, convert: Any) -> None:
    case = json.loads(path.read_text())
    assert convert(case["result"], system=case["system"]) == case["expected"][convert.__name__]


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_text_parts_convert_as_before_beside_tool_parts(path: Path) -> None:
    """A transcript's text-only messages come out exactly as they would alone."""
    case = json.loads(path.read_text())
    first = case["result"]["messages"][0]
    alone = result_of([first])
    assert to_openai(case["result"])[0] == to_openai(alone)[0]
    assert to_gemini(case["result"])["contents"][0] == to_gemini(alone)["contents"][0]


@pytest.mark.parametrize("convert", CONVERTERS, ids=lambda f: f.__name__)
def test_tool_requests_share_nothing_with_the_result(convert: Any) -> None:
    res = copy.deepcopy(ROUND)
    out = convert(res)
    json.dumps(out)  # plain JSON all the way down
    if convert is to_anthropic:
        out["messages"][1]["content"][0]["input"]["city"] = "Bergen"
    if convert is to_gemini:
        out["contents"][1]["parts"][0]["functionCall"]["args"]["city"] = "Bergen"
    assert res == ROUND


def test_openai_parts_mode_sends_tool_output_as_parts_too() -> None:
    out = to_openai(ROUND, parts=True)
    assert out[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "wx", "arguments": '{"city": "Oslo"}'},
            }
        ],
    }
    assert out[2] == {"role": "tool", "tool_call_id": "c1", "content": [text("4 C")]}


def test_arguments_are_sent_verbatim_to_openai_and_parsed_for_the_others() -> None:
    odd = '{ "b":1,  "a" : [1, 2] }'  # spacing and key order a model might produce
    res = result_of([user(text("q")), assistant(tcall("x", "f", odd)), user(tresult("x"))])
    assert to_openai(res)[1]["tool_calls"][0]["function"]["arguments"] == odd
    assert to_openai_responses(res)["input"][1]["arguments"] == odd
    assert to_anthropic(res)["messages"][1]["content"][0]["input"] == {"b": 1, "a": [1, 2]}
    assert to_gemini(res)["contents"][1]["parts"][0]["functionCall"]["args"] == {
        "b": 1,
        "a": [1, 2],
    }


def test_gemini_merges_results_and_a_following_user_message_into_one_content() -> None:
    res = result_of(
        [
            user(text("q")),
            assistant(tcall("a", "f"), tcall("b", "g")),
            user(tresult("b", "B"), text("note"), tresult("a", "A")),
            user(text("[retrieved]"), text("more")),
        ]
    )
    contents = to_gemini(res)["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    names = [p["functionResponse"]["name"] for p in contents[2]["parts"][:2]]
    assert names == ["f", "g"]  # the calls' order, not the results'
    assert contents[2]["parts"][2:] == [{"text": JOIN.join(["note", "[retrieved]", "more"])}]


def test_openai_error_result_keeps_output_and_anthropic_flags_it() -> None:
    res = result_of(
        [user(text("q")), assistant(tcall("e")), user(tresult("e", "boom", is_error=True))]
    )
    assert to_openai(res)[-1] == {"role": "tool", "tool_call_id": "e", "content": "boom"}
    block = to_anthropic(res)["messages"][-1]["content"][0]
    assert block == {"type": "tool_result", "tool_use_id": "e", "content": "boom", "is_error": True}
    response = to_gemini(res)["contents"][-1]["parts"][0]["functionResponse"]["response"]
    assert response == {"error": "boom"}


def test_results_spread_over_a_run_of_user_messages_are_gathered_after_the_call() -> None:
    """Memory keeps each appended result as its own user turn; every provider needs a round's
    results together, right after the call, ahead of any text."""
    res = result_of(
        [
            user(text("q")),
            assistant(tcall("a", "f"), tcall("b", "g")),
            user(tresult("a", "A")),
            user(text("meanwhile"), tresult("b", "B")),
            user(text("and?")),
        ],
        [2, 3],
    )
    chat = to_openai(res, cache=True)
    assert [m["role"] for m in chat] == ["user", "assistant", "tool", "tool", "user", "user"]
    assert [m["content"][0]["text"] for m in chat[4:]] == ["meanwhile", "and?"]
    # Breakpoint 2 now covers both results (the second tool message), 3 the text left behind.
    assert [i for i, m in enumerate(chat) if "prompt_cache_breakpoint" in json.dumps(m)] == [3, 4]
    anthropic = to_anthropic(res)["messages"]
    kinds = [[b["type"] for b in m["content"]] for m in anthropic]
    assert kinds[1:3] == [["tool_use", "tool_use"], ["tool_result", "tool_result"]]
    assert [m["content"][0]["text"] for m in anthropic[3:]] == ["meanwhile", "and?"]
    assert anthropic_marks(to_anthropic(res)) == [2, 3]
    gemini = to_gemini(res)["contents"]
    assert [p.get("text", "fn") for p in gemini[2]["parts"]] == ["fn", "fn", "meanwhile\n\nand?"]


def test_real_memory_compose_with_one_turn_per_result_converts() -> None:
    from yait_byheart import Memory

    mem = Memory(budget=2000, chunk=300)
    mem.append("user", "weather in Oslo and Rome?")
    mem.append_message(assistant(tcall("c1", "wx", '{"city": "Oslo"}')))
    mem.append_message(assistant(tcall("c2", "wx", '{"city": "Rome"}')))
    mem.append_message(user(tresult("c1", "sunny")))
    mem.append_message(user(tresult("c2", "rain")))
    res = mem.compose()
    check_all(res)
    assert [m["role"] for m in to_openai(res)] == ["user", "assistant", "tool", "tool"]


# --------------------------------------------------------------------------- bad input

BAD: list[tuple[str, list[dict[str, Any]], str, str]] = [
    (
        "orphan result",
        [user(text("q")), assistant(text("hm")), user(tresult("zz"))],
        r"\['messages'\]\[2\]\['parts'\]\[0\] is a tool_result for id 'zz' with no open tool_call",
        "Memory.append_message",
    ),
    (
        "result first",
        [user(tresult("zz"))],
        r"\['messages'\]\[0\]\['parts'\]\[0\] is a tool_result for id 'zz'.*message before it",
        "Memory.append_message",
    ),
    (
        "unanswered call",
        [user(text("q")), assistant(tcall("a"), tcall("b")), user(tresult("a"))],
        r"\['messages'\]\[1\]\['parts'\]\[1\] is a tool_call \(id 'b'\) with no tool_result",
        "tool_result for each call",
    ),
    (
        "result after the next assistant turn",
        [
            user(text("q")),
            assistant(tcall("a")),
            user(text("x")),
            assistant(text("y")),
            user(tresult("a")),
        ],
        r"\['messages'\]\[1\]\['parts'\]\[0\] is a tool_call \(id 'a'\) with no tool_result in"
        r" the user messages after it \(from message 2\)",
        "compose after the results",
    ),
    (
        "result answered twice",
        [user(text("q")), assistant(tcall("a")), user(tresult("a")), user(tresult("a"))],
        r"\['messages'\]\[3\]\['parts'\]\[0\] is a tool_result for id 'a' with no open",
        "Memory.append_message",
    ),
    (
        "bad JSON",
        [user(text("q")), assistant(tcall("a", "f", "{city: Oslo}")), user(tresult("a"))],
        r"\['messages'\]\[1\]\['parts'\]\[0\]\['arguments'\] is not valid JSON",
        "JSON object string",
    ),
    (
        "JSON list",
        [user(text("q")), assistant(tcall("a", "f", "[1]")), user(tresult("a"))],
        r"\['arguments'\] is JSON list, not an object",
        "'{}' for none",
    ),
    (
        "unknown part",
        [user({"type": "image", "url": "x"})],
        r"\['messages'\]\[0\]\['parts'\]\[0\] has type 'image'",
        "Memory.compose()",
    ),
    (
        "call from the user",
        [user(tcall("a")), assistant(text("x")), user(text("q"))],
        r"\['messages'\]\[0\]\['parts'\]\[0\] is a tool_call in a user message",
        "put tool_call parts in assistant messages",
    ),
    (
        "result from the assistant",
        [user(text("q")), assistant(tresult("a")), user(text("q"))],
        r"is a tool_result in a assistant message",
        "put tool_result parts in user messages",
    ),
    (
        "duplicate id",
        [user(text("q")), assistant(tcall("a"), tcall("a")), user(tresult("a"))],
        r"\['messages'\]\[1\] holds tool id 'a' twice",
        "its own id",
    ),
    (
        "missing name",
        [user(text("q")), assistant({"type": "tool_call", "id": "a", "arguments": "{}"})],
        r"\['parts'\]\[0\]\['name'\] must be a non-empty str",
        "Memory.compose()",
    ),
    (
        "is_error not bool",
        [user(text("q")), assistant(tcall("a")), user(tresult("a", is_error="yes"))],
        r"\['is_error'\] must be True, False or absent",
        "Memory.compose()",
    ),
    (
        "output not str",
        [user(text("q")), assistant(tcall("a")), user(tresult("a", output=3))],  # type: ignore[arg-type]
        r"\['output'\] must be a str",
        "Memory.compose()",
    ),
]


@pytest.mark.parametrize("convert", CONVERTERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize(("name", "messages", "why", "fix"), BAD, ids=[b[0] for b in BAD])
def test_bad_tool_input_names_adapter_message_and_fix(
    convert: Any, name: str, messages: list[dict[str, Any]], why: str, fix: str
) -> None:
    before = copy.deepcopy(messages)
    with pytest.raises(ValueError, match=why) as info:
        convert(result_of(messages))
    assert str(info.value).startswith(f"{convert.__name__}(result): result['messages']")
    assert fix in str(info.value)
    assert messages == before


# --------------------------------------------------------------------------- breakpoints


def test_min_cacheable_tokens_table() -> None:
    cases = {
        "claude-sonnet-4-20250514": 1024,
        "claude-sonnet-4-5": 1024,
        "claude-opus-4-1-20250805": 1024,
        "claude-opus-4-5-20251101": 4096,
        "claude-opus-4-6": 4096,
        "claude-haiku-4-5-20251001": 4096,
        "claude-3-5-haiku-20241022": 2048,
        "claude-3-haiku-20240307": 2048,
        "anthropic/claude-opus-4.1": 1024,
        "claude-sonnet-4-5@20250929": 1024,
        "us.anthropic.claude-haiku-4-5-20251001-v1:0": 4096,
        "anthropic.claude-3-5-haiku-20241022-v1:0": 2048,
        "gpt-4o": 1024,
        "gpt-5.6": 1024,
        "o3-mini": 1024,
    }
    assert {m: min_cacheable_tokens(m) for m in cases} == cases
    for unknown in ("claude-3-7-sonnet", "llama-3", "claude-sonnet-5", "", "xclaude-opus-4"):
        assert min_cacheable_tokens(unknown) is None


def long_round(chars: int) -> dict[str, Any]:
    """A tool round whose first two messages hold about ``chars`` characters."""
    return result_of(
        [
            user(text("x" * (chars - 40))),
            assistant(tcall("c", "f", '{"q": "' + "y" * 20 + '"}')),
            user(tresult("c", "done")),
            assistant(text("ok")),
            user(text("next?")),
        ],
        [1, 3],
    )


def anthropic_marks(req: dict[str, Any]) -> list[int]:
    return [
        i for i, m in enumerate(req["messages"]) if any("cache_control" in b for b in m["content"])
    ]


def test_anthropic_model_skips_breakpoints_below_the_minimum() -> None:
    # ~1,000 estimated tokens up to message 1; message 3 adds only a few more.
    res = long_round(4000)
    assert anthropic_marks(to_anthropic(res)) == [1, 3]
    assert anthropic_marks(to_anthropic(res, model="claude-sonnet-4-5")) == []
    big = long_round(4200)  # 1,050 tokens by the 4-characters estimate
    assert anthropic_marks(to_anthropic(big, model="claude-sonnet-4-5")) == [1, 3]
    assert anthropic_marks(to_anthropic(big, model="claude-haiku-4-5")) == []
    assert anthropic_marks(to_anthropic(big, model="some-future-model")) == [1, 3]
    # The system prompt counts toward every prefix, and alone is marked only if long enough.
    req = to_anthropic(res, system="s" * 400, model="claude-sonnet-4-5")
    assert anthropic_marks(req) == [1, 3] and "cache_control" not in req["system"][0]


@pytest.mark.parametrize("model", ["", "  ", 7])
def test_model_must_be_a_name(model: Any) -> None:
    with pytest.raises(ValueError, match=r"to_anthropic.*model must be a model name"):
        to_anthropic(ROUND, model=model)


def test_anthropic_marks_a_tool_use_block_at_a_breakpoint() -> None:
    req = to_anthropic(ROUND)
    assert req["messages"][1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def openai_marked(messages: list[dict[str, Any]]) -> list[tuple[int, int]]:
    return [
        (i, j)
        for i, m in enumerate(messages)
        if isinstance(m.get("content"), list)
        for j, b in enumerate(m["content"])
        if "prompt_cache_breakpoint" in b
    ]


def test_openai_explicit_breakpoints_fall_on_the_last_text_at_or_before_each_point() -> None:
    res = long_round(4000)
    out = to_openai(res, cache=True)
    # Message 1 is an assistant turn of tool calls only: its mark falls back to message 0.
    assert openai_marked(out) == [(0, 0), (3, 0)]
    assert out[3]["content"][0]["prompt_cache_breakpoint"] == {"mode": "explicit"}
    assert all(isinstance(m["content"], list) for m in out if m["content"] is not None)
    assert openai_marked(to_openai(res, cache=True, model="gpt-5.6")) == []
    ttl = to_openai(res, cache=True, ttl="12h", system="S")
    assert ttl[0]["content"][0]["prompt_cache_breakpoint"] == {"mode": "explicit", "ttl": "12h"}
    assert "prompt_cache_breakpoint" not in json.dumps(to_openai(res, parts=True))


def test_openai_breakpoint_moves_without_changing_the_prefix() -> None:
    """Content is parts whether marked or not, so a moved marker leaves the bytes alone."""
    res = long_round(4000)
    later = copy.deepcopy(res)
    later["breakpoints"], later["stable_upto"] = [3], 3

    def strip(ms: list[dict[str, Any]]) -> str:
        return json.dumps(ms).replace(', "prompt_cache_breakpoint": {"mode": "explicit"}', "")

    assert strip(to_openai(res, cache=True)) == strip(to_openai(later, cache=True))


def test_responses_breakpoints_only_on_input_text() -> None:
    res = long_round(4000)
    out = to_openai_responses(res, cache=True)["input"]
    marked = [
        (i, b["type"])
        for i, item in enumerate(out)
        for b in (item.get("content") or item.get("output") or [])
        if isinstance(b, dict) and "prompt_cache_breakpoint" in b
    ]
    # Breakpoint 1 (tool call only) falls back to the user text; breakpoint 3 is an
    # assistant text (output_text carries none), so it falls back to the tool output.
    assert marked == [(0, "input_text"), (2, "input_text")]
    assert out[2]["output"][0]["text"] == "done"


@pytest.mark.parametrize("convert", [to_openai, to_openai_responses], ids=lambda f: f.__name__)
@pytest.mark.parametrize("ttl", ["1h", "5m", 30])
def test_openai_rejects_unknown_ttl(convert: Any, ttl: Any) -> None:
    with pytest.raises(ValueError, match="ttl must be None, '30m' or '12h'"):
        convert(ROUND, cache=True, ttl=ttl)


def test_openai_caps_explicit_breakpoints_at_four() -> None:
    msgs = [user(text(f"u{i}")) if i % 2 == 0 else assistant(text(f"a{i}")) for i in range(11)]
    res = result_of(msgs, [0, 2, 4, 6, 8, 10])
    assert [i for i, _ in openai_marked(to_openai(res, cache=True))] == [4, 6, 8, 10]
    assert [i for i, _ in openai_marked(to_openai(res, cache=True, system="S"))] == [0, 7, 9, 11]


# --------------------------------------------------------------------------- random transcripts

NAMES = st.sampled_from(["search", "wx", "calc"])  # few names: Gemini pairs by name and order
WORDS = st.text(min_size=1, max_size=20).filter(lambda t: t.strip() != "")
ARGS = st.dictionaries(st.sampled_from("abc"), st.one_of(st.integers(), WORDS), max_size=2)


@st.composite
def agent_results(draw: st.DrawFn) -> dict[str, Any]:
    """Compose results of agent transcripts: user texts, assistant turns of text and/or
    parallel tool calls, each answered in the user messages that follow (results in any order,
    in one message or one per message, sometimes with text among them), extra user messages
    (retrieved stretches) anywhere."""
    messages = [user(text(draw(WORDS)))]
    counter = 0
    for _ in range(draw(st.integers(0, 5))):
        calls = []
        for _ in range(draw(st.integers(0, 3))):
            counter += 1
            args = json.dumps(draw(ARGS), ensure_ascii=draw(st.booleans()))
            calls.append(tcall(f"call_{counter}", draw(NAMES), args))
        say = [text(draw(WORDS))] if draw(st.booleans()) or not calls else []
        messages.append(assistant(*say, *calls))
        if calls:
            results = [
                tresult(c["id"], draw(st.text(max_size=15)), **draw(st.sampled_from(ERRS)))
                for c in draw(st.permutations(calls))
            ]
            tail = [text(draw(WORDS))] if draw(st.booleans()) else []
            if draw(st.booleans()):  # as Memory keeps them: one user turn per result
                messages.extend(user(r) for r in results)
                if tail:
                    messages.insert(
                        len(messages) - draw(st.integers(0, len(results) - 1)), user(*tail)
                    )
            else:
                messages.append(user(*results, *tail))
        else:
            messages.append(user(text(draw(WORDS))))
        if draw(st.booleans()):
            messages.append(user(text(draw(WORDS))))
    n = len(messages)
    points = sorted(draw(st.sets(st.integers(0, n - 1), max_size=6)))
    return result_of(messages, points)


ERRS: list[dict[str, Any]] = [{}, {"is_error": True}, {"is_error": False}]


def check_openai_chat(out: list[dict[str, Any]]) -> None:
    """Chat Completions: an assistant's tool_calls are answered by tool messages that
    follow it at once, one per id; a tool message only answers the calls just before it."""
    pending: set[str] = set()
    for m in out:
        if m["role"] == "tool":
            assert m["tool_call_id"] in pending, m
            pending.discard(m["tool_call_id"])
            continue
        assert not pending, f"unanswered calls {pending} before {m}"
        pending = {c["id"] for c in m.get("tool_calls", [])}
        assert len(pending) == len(m.get("tool_calls", []))
        if m["role"] == "assistant" and "tool_calls" in m:
            for c in m["tool_calls"]:
                assert isinstance(json.loads(c["function"]["arguments"]), dict)
    assert not pending


def check_responses(items: list[dict[str, Any]]) -> None:
    """Responses: every function_call output follows its call, every call gets one output
    before the next message from the assistant."""
    open_calls: set[str] = set()
    for item in items:
        if item["type"] == "function_call":
            open_calls.add(item["call_id"])
        elif item["type"] == "function_call_output":
            assert item["call_id"] in open_calls
            open_calls.discard(item["call_id"])
        else:
            assert not (item["role"] == "assistant" and open_calls)
    assert not open_calls


def check_anthropic(messages: list[dict[str, Any]]) -> None:
    """Anthropic: each tool_use is answered by a tool_result in the next (user) message,
    results first in it, and no tool_result answers anything but the message before."""
    for i, m in enumerate(messages):
        kinds = [b["type"] for b in m["content"]]
        uses = {b["id"] for b in m["content"] if b["type"] == "tool_use"}
        results = [b["tool_use_id"] for b in m["content"] if b["type"] == "tool_result"]
        assert kinds[: len(results)] == ["tool_result"] * len(results)
        prev = messages[i - 1]["content"] if i else []
        assert set(results) <= {b["id"] for b in prev if b["type"] == "tool_use"}
        if uses:
            nxt = messages[i + 1]
            assert nxt["role"] == "user"
            answered = [b["tool_use_id"] for b in nxt["content"] if b["type"] == "tool_result"]
            assert sorted(answered) == sorted(uses)
    # The last may be the assistant's: compose() with no query after an assistant turn.
    assert messages[0]["role"] == "user"


def check_gemini(contents: list[dict[str, Any]]) -> None:
    """Gemini: roles alternate, a model turn's functionCalls are answered by as many
    functionResponses, first in the next user turn, with the calls' names in their order."""
    roles = [c["role"] for c in contents]
    assert roles[0] == "user"
    assert all(a != b for a, b in itertools.pairwise(roles))
    for i, c in enumerate(contents):
        calls = [p["functionCall"]["name"] for p in c["parts"] if "functionCall" in p]
        responses = [p["functionResponse"]["name"] for p in c["parts"] if "functionResponse" in p]
        assert responses == [p["functionResponse"]["name"] for p in c["parts"][: len(responses)]]
        prev = contents[i - 1]["parts"] if i else []
        assert responses == [p["functionCall"]["name"] for p in prev if "functionCall" in p]
        if calls:
            assert contents[i + 1]["role"] == "user"
        assert all(p.get("text") != "" for p in c["parts"])


def check_all(res: dict[str, Any]) -> None:
    """Every adapter's request for ``res`` keeps every tool call paired with its result."""
    check_openai_chat(to_openai(res, system="S"))
    check_openai_chat(to_openai(res, cache=True))
    check_responses(to_openai_responses(res, cache=True)["input"])
    check_responses(to_openai_responses(res)["input"])
    check_anthropic(to_anthropic(res, system="S")["messages"])
    check_gemini(to_gemini(res)["contents"])


@settings(max_examples=300, deadline=None)
@given(agent_results())
def test_random_agent_transcripts_never_produce_an_orphan(res: dict[str, Any]) -> None:
    check_all(res)


@settings(max_examples=200, deadline=None)
@given(agent_results(), st.integers(0, 50))
def test_dropping_any_tool_part_is_refused_by_every_adapter(res: dict[str, Any], k: int) -> None:
    """Removing one call or one result from a valid transcript makes an orphan; every
    adapter refuses it rather than send what the provider would reject."""
    spots = [
        (i, j)
        for i, m in enumerate(res["messages"])
        for j, p in enumerate(m["parts"])
        if p["type"] != "text" and len(m["parts"]) > 1
    ]
    if not spots:
        return
    i, j = spots[k % len(spots)]
    broken = copy.deepcopy(res)
    del broken["messages"][i]["parts"][j]
    for convert in CONVERTERS:
        with pytest.raises(ValueError, match=r"tool_(call|result)"):
            convert(broken)


@settings(max_examples=150, deadline=None)
@given(agent_results())
def test_random_transcripts_keep_every_text_and_output(res: dict[str, Any]) -> None:
    texts = [p["text"] for m in res["messages"] for p in m["parts"] if p["type"] == "text"]
    outputs = sorted(p["output"] for m in res["messages"] for p in m["parts"] if "output" in p)
    blob = json.dumps(to_anthropic(res))
    anthropic = json.loads(blob)["messages"]
    assert [b["text"] for m in anthropic for b in m["content"] if b["type"] == "text"] == texts
    got = sorted(
        b["content"] for m in anthropic for b in m["content"] if b["type"] == "tool_result"
    )
    assert got == outputs
    chat = to_openai(res)
    assert sorted(m["content"] for m in chat if m["role"] == "tool") == outputs
    assert len(anthropic_marks(to_anthropic(res))) <= MAX_BREAKPOINTS


# --------------------------------------------------------------------------- through a real Memory

SAY = st.text(alphabet="abcdefgh ijklmnop", min_size=1, max_size=60).filter(
    lambda t: t.strip() != ""
)


@st.composite
def agent_sessions(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """A transcript as Memory calls: ("append", (role, text)), ("message", neutral message),
    ("compose", query or None). Composes come where an agent would call the model: after the
    user spoke, after a round's results (None or the user's words), or with a new query."""
    events: list[tuple[str, Any]] = []
    counter = 0
    for _ in range(draw(st.integers(1, 6))):
        said = draw(SAY)
        events.append(("append", ("user", said)))
        events.append(("compose", draw(st.sampled_from([None, said]))))
        for _ in range(draw(st.integers(0, 2))):
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                counter += 1
                args = json.dumps({"q": draw(SAY)})
                calls.append(tcall(f"c{counter}", draw(NAMES), args))
            lead = [text(draw(SAY))] if draw(st.booleans()) else []
            if draw(st.booleans()):
                events.append(("message", assistant(*lead, *calls)))
            else:  # one turn per call, as some frameworks file them
                events.extend(
                    ("message", assistant(*([p] if i else [*lead, p]))) for i, p in enumerate(calls)
                )
            results = [
                tresult(c["id"], draw(SAY) * draw(st.integers(1, 8)))
                for c in draw(st.permutations(calls))
            ]
            if draw(st.booleans()):
                events.append(("message", user(*results)))
            else:
                events.extend(("message", user(r)) for r in results)
            events.append(("compose", None))
        events.append(("append", ("assistant", draw(SAY))))
        if draw(st.booleans()):
            events.append(("compose", draw(SAY)))
    return events


@settings(max_examples=60, deadline=None)
@given(agent_sessions(), st.integers(120, 900), st.integers(40, 300), st.floats(0.0, 1.0))
def test_real_compose_at_small_budgets_never_gives_an_adapter_an_orphan(
    events: list[tuple[str, Any]], budget: int, chunk: int, stability: float
) -> None:
    from yait_byheart import Memory

    mem = Memory(budget=budget, chunk=chunk, stability=stability)
    composed = 0
    for kind, value in events:
        if kind == "append":
            mem.append(*value)
        elif kind == "message":
            mem.append_message(value)
        else:
            try:
                res = mem.compose(value)
            except ValueError as err:  # a query alone above ceiling x budget is refused
                assert "ceiling" in str(err) or "budget" in str(err), err
                continue
            composed += 1
            check_all(res)
            assert len(anthropic_marks(to_anthropic(res, model="claude-sonnet-4-5"))) <= 4
    assert composed >= 1
