"""Provider adapters: request shapes, cache breakpoints, text preservation, usage reading.

Hand-built compose results stand in for ``Memory.compose`` in most tests (the shape is the
contract's); the integration tests at the end use a real Memory. Nothing here touches the
network. Tests that check requests against the provider SDKs' own request types skip when the
SDK is not installed (CI does not install them).
"""

from __future__ import annotations

import collections.abc
import copy
import http.server
import itertools
import json
import os
import re
import subprocess
import sys
import threading
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart.providers import (
    JOIN,
    MAX_BREAKPOINTS,
    cache_usage,
    chars_per_token,
    to_anthropic,
    to_gemini,
    to_openai,
    to_openai_responses,
)

USAGE_DIR = Path(__file__).parent / "data" / "usage"
CONVERTERS = [to_openai, to_openai_responses, to_anthropic, to_gemini]


def msg(role: str, *texts: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "text": t} for t in texts]}


def result_of(
    messages: list[dict[str, Any]], stable_upto: int = -1, breakpoints: list[int] | None = None
) -> dict[str, Any]:
    """A compose result with every documented key (values beyond the messages are inert)."""
    if breakpoints is None:
        breakpoints = [stable_upto] if stable_upto >= 0 else []
    chars = sum(len(p["text"]) for m in messages for p in m["parts"])
    return {
        "messages": messages,
        "mode": "assembled",
        "chars": chars,
        "size": chars,
        "reselected": False,
        "selected": 1,
        "of_units": 1,
        "included": [],
        "stable_upto": stable_upto,
        "breakpoints": breakpoints,
        "external": [],
    }


# A five-message conversation with two user messages in a row (a retrieved stretch followed
# by the query), the case every adapter has to get right.
CONV = result_of(
    [
        msg("user", "[from earlier in the conversation]", "we decided on 55 euro a month"),
        msg("assistant", "Noted: 55/month, annual at a discount."),
        msg("user", "and the trial?"),
        msg("assistant", "14 days."),
        msg("user", "what did we decide about pricing?"),
    ],
    stable_upto=3,
    breakpoints=[1, 3],
)


# --------------------------------------------------------------------------- strategies


ANY_TEXT = st.text(max_size=30)
WORDS = st.text(max_size=30).filter(lambda t: t.strip() != "")  # what Anthropic accepts


@st.composite
def compose_results(draw: st.DrawFn, text: st.SearchStrategy[str] = ANY_TEXT) -> dict[str, Any]:
    """Results that keep the contract: first and last message user, no two assistants in a
    row, breakpoints ascending and ending at stable_upto. Up to 6 breakpoints, beyond the
    contract's 4, so the adapters' own cap is exercised too."""
    n = draw(st.integers(1, 9))
    roles = ["user"]
    for i in range(1, n):
        if i == n - 1 or roles[-1] == "assistant":
            roles.append("user")
        else:
            roles.append(draw(st.sampled_from(["user", "assistant"])))
    messages = [msg(r, *draw(st.lists(text, min_size=1, max_size=3))) for r in roles]
    stable = draw(st.integers(-1, n - 1))
    points: list[int] = []
    if stable >= 0:
        points = [*sorted(draw(st.sets(st.integers(0, stable), max_size=5)) - {stable}), stable]
    res = result_of(messages, stable, points)
    if draw(st.booleans()):
        del res["breakpoints"]  # hand-built results may carry stable_upto alone
    return res


systems = st.one_of(st.none(), st.text(max_size=20).filter(lambda t: t.strip() != ""))


def flat(result: dict[str, Any]) -> list[str]:
    return [p["text"] for m in result["messages"] for p in m["parts"]]


def expected_points(result: dict[str, Any]) -> list[int]:
    if result["stable_upto"] < 0:
        return []
    return list(result.get("breakpoints", [result["stable_upto"]]))


# --------------------------------------------------------------------------- OpenAI Chat


def test_openai_string_content_joins_parts_with_a_blank_line() -> None:
    out = to_openai(CONV, system="You are terse.")
    assert out == [
        {"role": "system", "content": "You are terse."},
        {
            "role": "user",
            "content": "[from earlier in the conversation]\n\nwe decided on 55 euro a month",
        },
        {"role": "assistant", "content": "Noted: 55/month, annual at a discount."},
        {"role": "user", "content": "and the trial?"},
        {"role": "assistant", "content": "14 days."},
        {"role": "user", "content": "what did we decide about pricing?"},
    ]


def test_openai_parts_mode_keeps_one_part_per_compose_part() -> None:
    out = to_openai(CONV, parts=True)
    assert out[0] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "[from earlier in the conversation]"},
            {"type": "text", "text": "we decided on 55 euro a month"},
        ],
    }
    assert [m["role"] for m in out] == ["user", "assistant", "user", "assistant", "user"]
    sys_out = to_openai(CONV, system="S", parts=True)[0]
    assert sys_out == {"role": "system", "content": [{"type": "text", "text": "S"}]}


@settings(max_examples=150, deadline=None)
@given(compose_results(), systems, st.booleans())
def test_openai_preserves_every_text_and_role(
    res: dict[str, Any], system: str | None, parts: bool
) -> None:
    out = to_openai(res, system=system, parts=parts)
    if system is not None:
        head, out = out[0], out[1:]
        assert head["role"] == "system"
    assert [m["role"] for m in out] == [m["role"] for m in res["messages"]]
    assert out[0]["role"] == "user" and out[-1]["role"] == "user"
    for got, src in zip(out, res["messages"], strict=True):
        texts = [p["text"] for p in src["parts"]]
        if parts:
            assert got["content"] == [{"type": "text", "text": t} for t in texts]
        else:
            assert got["content"] == JOIN.join(texts)


# --------------------------------------------------------------------------- OpenAI Responses


def test_responses_items_use_input_text_for_user_and_output_text_for_assistant() -> None:
    out = to_openai_responses(CONV, system="You are terse.")
    assert out["instructions"] == "You are terse."
    assert out["input"][0] == {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "[from earlier in the conversation]"},
            {"type": "input_text", "text": "we decided on 55 euro a month"},
        ],
    }
    assert out["input"][1] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Noted: 55/month, annual at a discount."}],
    }
    assert "instructions" not in to_openai_responses(CONV)


@settings(max_examples=150, deadline=None)
@given(compose_results(), systems)
def test_responses_preserves_texts_and_roles(res: dict[str, Any], system: str | None) -> None:
    out = to_openai_responses(res, system=system)
    assert set(out) == ({"input", "instructions"} if system else {"input"})
    items = out["input"]
    assert [i["role"] for i in items] == [m["role"] for m in res["messages"]]
    assert [c["text"] for i in items for c in i["content"]] == flat(res)
    for item in items:
        kind = "input_text" if item["role"] == "user" else "output_text"
        assert {c["type"] for c in item["content"]} == {kind}


# --------------------------------------------------------------------------- Anthropic


def marks(req: dict[str, Any]) -> list[int]:
    """Indices of messages carrying a cache_control marker."""
    return [
        i for i, m in enumerate(req["messages"]) if any("cache_control" in b for b in m["content"])
    ]


def test_anthropic_marks_the_last_block_of_each_breakpoint_message() -> None:
    req = to_anthropic(CONV)
    assert "system" not in req
    assert req["messages"][1] == {
        "role": "assistant",
        "content": [
            {
                "type": "text",
                "text": "Noted: 55/month, annual at a discount.",
                "cache_control": {"type": "ephemeral"},
            }
        ],
    }
    assert marks(req) == [1, 3]
    first = req["messages"][0]["content"]
    assert [("cache_control" in b) for b in first] == [False, False]


def test_anthropic_multi_part_message_is_marked_on_its_last_block_only() -> None:
    res = result_of([msg("user", "a", "b", "c"), msg("user", "q")], stable_upto=0)
    blocks = to_anthropic(res)["messages"][0]["content"]
    assert [("cache_control" in b) for b in blocks] == [False, False, True]


def test_anthropic_system_prompt_is_a_marked_text_block() -> None:
    req = to_anthropic(CONV, system="You are terse.", ttl="1h")
    one_hour = {"type": "ephemeral", "ttl": "1h"}
    assert req["system"] == [{"type": "text", "text": "You are terse.", "cache_control": one_hour}]
    assert req["messages"][3]["content"][-1]["cache_control"] == one_hour


def test_anthropic_five_minute_ttl_is_the_default_marker() -> None:
    assert to_anthropic(CONV, ttl="5m") == to_anthropic(CONV)


def test_anthropic_no_markers_without_cache() -> None:
    req = to_anthropic(CONV, system="S", cache=False)
    assert "cache_control" not in json.dumps(req)
    assert req["system"] == [{"type": "text", "text": "S"}]


def test_anthropic_no_message_marker_when_nothing_is_stable() -> None:
    res = result_of([msg("user", "hi"), msg("assistant", "yo"), msg("user", "q")], -1)
    assert "cache_control" not in json.dumps(to_anthropic(res))
    # The system prompt repeats on every call whatever the selection does, so it keeps its own.
    req = to_anthropic(res, system="S")
    assert marks(req) == [] and "cache_control" in req["system"][0]


def test_anthropic_falls_back_to_stable_upto_without_breakpoints_key() -> None:
    res = dict(CONV)
    del res["breakpoints"]
    assert marks(to_anthropic(res)) == [3]


def test_anthropic_caps_breakpoints_at_four_counting_the_system_prompt() -> None:
    res = result_of([msg(r, str(i)) for i, r in enumerate("uauauauau")], 7, [1, 3, 5, 7])
    res["messages"] = [
        msg("user" if m["role"] == "u" else "assistant", m["parts"][0]["text"])
        for m in res["messages"]
    ]
    assert marks(to_anthropic(res)) == [1, 3, 5, 7]
    # With the system prompt marked, the earliest message breakpoint gives way: the latest
    # ones cover the longest prefixes.
    req = to_anthropic(res, system="S")
    assert marks(req) == [3, 5, 7]
    assert json.dumps(req).count("cache_control") == MAX_BREAKPOINTS


@pytest.mark.parametrize("ttl", ["10m", "1H", 60, ""])
def test_anthropic_rejects_unknown_ttl(ttl: Any) -> None:
    with pytest.raises(ValueError, match=r"to_anthropic.*ttl"):
        to_anthropic(CONV, ttl=ttl)


@settings(max_examples=150, deadline=None)
@given(compose_results(WORDS), systems, st.booleans(), st.sampled_from([None, "5m", "1h"]))
def test_anthropic_invariants(
    res: dict[str, Any], system: str | None, cache: bool, ttl: str | None
) -> None:
    req = to_anthropic(res, system=system, cache=cache, ttl=ttl)
    assert [m["role"] for m in req["messages"]] == [m["role"] for m in res["messages"]]
    assert req["messages"][0]["role"] == "user"
    assert [b["text"] for m in req["messages"] for b in m["content"]] == flat(res)
    # Count marked blocks, not the string: a text may itself contain '"cache_control"'.
    blocks = [*req.get("system", []), *(b for m in req["messages"] for b in m["content"])]
    n_marks = sum("cache_control" in b for b in blocks)
    assert n_marks <= MAX_BREAKPOINTS
    marked = marks(req)
    points = expected_points(res)
    assert set(marked) <= set(points)
    for m in req["messages"]:
        assert all("cache_control" not in b for b in m["content"][:-1])
    if not cache:
        assert n_marks == 0
    else:
        # The longest stable prefix is always the one kept.
        assert (res["stable_upto"] in marked) == (res["stable_upto"] >= 0)
        assert len(marked) == min(len(points), MAX_BREAKPOINTS - (system is not None))
        want = {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}
        for i in marked:
            assert req["messages"][i]["content"][-1]["cache_control"] == want


# --------------------------------------------------------------------------- Gemini


def test_gemini_merges_consecutive_user_messages_with_the_documented_join() -> None:
    res = result_of(
        [
            msg("user", "[from earlier in the conversation]", "we said 55 euro"),
            msg("assistant", "Noted."),
            msg("user", "[from earlier in the conversation]", "trial: 14 days"),
            msg("user", "what price?"),
        ],
        stable_upto=2,
    )
    req = to_gemini(res, system="You are terse.")
    assert req == {
        "contents": [
            {
                "role": "user",
                "parts": [{"text": "[from earlier in the conversation]\n\nwe said 55 euro"}],
            },
            {"role": "model", "parts": [{"text": "Noted."}]},
            {
                "role": "user",
                "parts": [
                    {"text": "[from earlier in the conversation]\n\ntrial: 14 days\n\nwhat price?"}
                ],
            },
        ],
        "systemInstruction": {"parts": [{"text": "You are terse."}]},
    }


@settings(max_examples=150, deadline=None)
@given(compose_results(st.text(min_size=1, max_size=30)), systems)
def test_gemini_alternates_and_keeps_every_text(res: dict[str, Any], system: str | None) -> None:
    req = to_gemini(res, system=system)
    contents = req["contents"]
    roles = [c["role"] for c in contents]
    assert roles[0] == "user" and roles[-1] == "user"
    assert all(a != b for a, b in itertools.pairwise(roles))
    assert set(roles) <= {"user", "model"}
    # Reference: group runs of same-role messages, join all their texts with JOIN.
    runs = itertools.groupby(res["messages"], key=lambda m: m["role"])
    want = [JOIN.join(p["text"] for m in run for p in m["parts"]) for _, run in runs]
    assert [c["parts"] for c in contents] == [[{"text": t}] for t in want]
    assert ("systemInstruction" in req) == (system is not None)


# --------------------------------------------------------------------------- shared behaviour


def scribble(value: Any) -> None:
    """Change every dict and list inside a request in place."""
    if isinstance(value, dict):
        for v in list(value.values()):
            scribble(v)
        value["scribbled"] = True
    elif isinstance(value, list):
        for v in value:
            scribble(v)
        value.append("scribbled")


@pytest.mark.parametrize("convert", CONVERTERS)
def test_converters_do_not_touch_the_result(convert: Any) -> None:
    res = copy.deepcopy(CONV)
    out = convert(res, system="S")
    assert res == CONV
    # The request shares no object with the result: editing it leaves the result intact.
    scribble(out)
    assert res == CONV


BAD_RESULTS: list[tuple[Any, str]] = [
    ({}, "no 'messages' key"),
    ({"messages": "hi", "stable_upto": -1}, r"\['messages'\] must be a list"),
    ({"messages": [], "stable_upto": -1}, "is empty"),
    ({"messages": ["hi"], "stable_upto": -1}, r"\['messages'\]\[0\] must be a dict"),
    ({"messages": [{"role": "system", "parts": []}], "stable_upto": -1}, "'user' or 'assistant'"),
    ({"messages": [{"role": "user", "content": "hi"}], "stable_upto": -1}, r"\['parts'\]"),
    ({"messages": [{"role": "user", "parts": []}], "stable_upto": -1}, "non-empty list"),
    ({"messages": [{"role": "user", "parts": [{"text": "x"}]}], "stable_upto": -1}, "'type'"),
    (
        {"messages": [{"role": "user", "parts": [{"type": "text", "text": 3}]}], "stable_upto": -1},
        r"\['text'\] must be a str",
    ),
    ({"messages": [msg("assistant", "a"), msg("user", "q")], "stable_upto": -1}, "user message"),
    # Ending with the assistant's message is no fault: compose() with no query after an
    # assistant turn does (tests/test_providers_accept_compose.py).
    (
        {
            "messages": [
                msg("user", "a"),
                msg("assistant", "b"),
                msg("assistant", "c"),
                msg("user", "q"),
            ]
        },
        "second assistant message",
    ),
]


@pytest.mark.parametrize("convert", CONVERTERS)
@pytest.mark.parametrize(("bad", "why"), BAD_RESULTS)
def test_malformed_results_raise_value_error_naming_call_and_fix(
    convert: Any, bad: Any, why: str
) -> None:
    with pytest.raises(ValueError, match=why) as info:
        convert(bad)
    assert str(info.value).startswith(f"{convert.__name__}(result)")
    assert "Memory.compose()" in str(info.value)


@pytest.mark.parametrize("convert", CONVERTERS)
@pytest.mark.parametrize("bad", [None, [msg("user", "q")], "text"])
def test_non_dict_results_raise_type_error(convert: Any, bad: Any) -> None:
    with pytest.raises(TypeError, match=f"{convert.__name__}.*Memory.compose"):
        convert(bad)


TWO = [msg("user", "a"), msg("assistant", "b"), msg("user", "q")]


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({}, "no 'stable_upto' key"),
        ({"stable_upto": 3}, r"stable_upto'\] must be an int in \[-1, 2\]"),
        ({"stable_upto": True}, "stable_upto"),
        ({"stable_upto": 1, "breakpoints": [0, 0, 1]}, "strictly ascending"),
        ({"stable_upto": 1, "breakpoints": [0]}, r"must end with stable_upto \(1\)"),
        ({"stable_upto": -1, "breakpoints": [0]}, "must be empty"),
        ({"stable_upto": 1, "breakpoints": [5, 1]}, r"ints in \[0, 2\]"),
        ({"stable_upto": 1, "breakpoints": "1"}, "list of message indices"),
    ],
)
def test_anthropic_rejects_inconsistent_cache_fields(fields: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        to_anthropic({"messages": TWO, **fields})


@pytest.mark.parametrize("convert", CONVERTERS)
@pytest.mark.parametrize("system", ["", " \n", 3, ["a"]])
def test_bad_system_prompt_is_rejected(convert: Any, system: Any) -> None:
    with pytest.raises(ValueError, match=f"{convert.__name__}.*system must be a non-empty str"):
        convert(CONV, system=system)


@pytest.mark.parametrize("blank", ["", "  ", "\n\t"])
def test_anthropic_rejects_blank_text_naming_the_message(blank: str) -> None:
    res = result_of([msg("user", "hi"), msg("assistant", "yo", blank), msg("user", "q")], 1)
    with pytest.raises(ValueError, match=r"to_anthropic.*\['messages'\]\[1\]\['parts'\]\[1\]"):
        to_anthropic(res)
    assert to_openai(res)[1]["content"] == "yo\n\n" + blank  # OpenAI takes it as it is


def test_gemini_rejects_only_a_content_that_would_be_empty() -> None:
    # An empty message merged with a neighbour leaves the words, joined as documented.
    res = result_of([msg("user", ""), msg("user", "q")])
    assert to_gemini(res)["contents"] == [{"role": "user", "parts": [{"text": "\n\nq"}]}]
    empty = result_of([msg("user", "hi"), msg("assistant", ""), msg("user", "q")])
    with pytest.raises(ValueError, match=r"to_gemini.*content 1 would be empty"):
        to_gemini(empty)


def test_anthropic_cache_flag_must_be_bool() -> None:
    with pytest.raises(TypeError, match="cache must be True or False"):
        to_anthropic(CONV, cache="yes")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- cache_usage

RECORDED = sorted(USAGE_DIR.glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def as_object(value: Any) -> Any:
    """The payload as an SDK-like object (attribute access only)."""
    if isinstance(value, dict):
        return types.SimpleNamespace(**{k: as_object(v) for k, v in value.items()})
    if isinstance(value, list):
        return [as_object(v) for v in value]
    return value


def usage_block(response: dict[str, Any]) -> Any:
    for key in ("usage", "usageMetadata", "usage_metadata"):
        if key in response:
            return response[key]
    raise AssertionError("payload has no usage block")


def test_every_provider_has_recorded_payloads() -> None:
    providers = {load(p)["provider"] for p in RECORDED}
    assert providers == {"openai-chat", "openai-responses", "anthropic", "gemini"}


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.stem)
def test_cache_usage_reads_recorded_payloads(path: Path) -> None:
    data = load(path)
    response, want = data["response"], data["expected"]
    assert cache_usage(response) == want
    assert cache_usage(usage_block(response)) == want
    assert cache_usage(as_object(response)) == want
    assert cache_usage(as_object(usage_block(response))) == want


def test_cache_usage_anthropic_total_is_the_sum_of_its_three_counts() -> None:
    # 21 uncached after the breakpoint + 188,086 read: the whole prompt is 188,107 tokens.
    usage = {"input_tokens": 21, "cache_read_input_tokens": 188086, "output_tokens": 393}
    assert cache_usage(usage) == {"input": 188107, "cached_read": 188086, "cache_write": 0}


def test_cache_usage_anthropic_ttl_breakdown_alone_counts_as_writes() -> None:
    usage = {
        "input_tokens": 10,
        "cache_creation": {"ephemeral_5m_input_tokens": 148, "ephemeral_1h_input_tokens": 100},
    }
    assert cache_usage(usage) == {"input": 258, "cached_read": 0, "cache_write": 248}


def test_cache_usage_sdk_objects_with_none_fields() -> None:
    # SDK models expose every field as an attribute, None when the API omitted it.
    anthropic_like = types.SimpleNamespace(
        input_tokens=50,
        output_tokens=5,
        cache_read_input_tokens=None,
        cache_creation_input_tokens=None,
        cache_creation=None,
    )
    assert cache_usage(anthropic_like) == {"input": 50, "cached_read": 0, "cache_write": 0}
    chat_like = types.SimpleNamespace(
        usage=types.SimpleNamespace(prompt_tokens=80, prompt_tokens_details=None)
    )
    assert cache_usage(chat_like) == {"input": 80, "cached_read": 0, "cache_write": 0}


def test_cache_usage_reads_openai_cache_write_tokens_when_reported() -> None:
    usage = {
        "input_tokens": 3000,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 2944},
    }
    assert cache_usage(usage) == {"input": 3000, "cached_read": 0, "cache_write": 2944}


def test_cache_usage_reads_responses_usage_without_cache_write_field() -> None:
    # The API reference's example predates cache_write_tokens.
    usage = {"input_tokens": 36, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 87}
    assert cache_usage({"usage": usage}) == {"input": 36, "cached_read": 0, "cache_write": 0}


def test_cache_usage_accepts_integral_floats() -> None:
    usage = {"usageMetadata": {"promptTokenCount": 4620.0, "cachedContentTokenCount": 4096.0}}
    assert cache_usage(usage) == {"input": 4620, "cached_read": 4096, "cache_write": 0}


@pytest.mark.parametrize(
    ("response", "why"),
    [
        (None, "got None"),
        ({}, "no usage found in dict"),
        ({"usage": {"output_tokens": 3}}, "no usage found"),
        ({"choices": [], "usage": None}, "no usage found"),
        (object(), "no usage found in object"),
        ({"usage": {"prompt_tokens": "2006"}}, "prompt_tokens must be a non-negative int"),
        ({"usage": {"prompt_tokens": -1}}, "prompt_tokens must be"),
        (
            {"usage": {"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 1.5}}},
            "cached_tokens",
        ),
        ({"input_tokens": True}, "input_tokens must be"),
        ({"usageMetadata": {"promptTokenCount": [1]}}, "promptTokenCount must be"),
    ],
)
def test_cache_usage_rejects_what_it_cannot_read(response: Any, why: str) -> None:
    with pytest.raises(ValueError, match=why) as info:
        cache_usage(response)
    assert str(info.value).startswith("cache_usage(response)")


# --------------------------------------------------------------------------- chars_per_token


def test_chars_per_token_rounds_up() -> None:
    est = chars_per_token()
    assert [est(""), est("a"), est("abcd"), est("abcde"), est("x" * 4000)] == [0, 1, 1, 2, 1000]
    assert chars_per_token(3)("abcdefg") == 3
    assert chars_per_token(2.5)("abcde") == 2


@pytest.mark.parametrize("n", [0, -4, float("nan"), float("inf"), "4", True])
def test_chars_per_token_rejects_bad_ratio(n: Any) -> None:
    with pytest.raises(ValueError, match=r"chars_per_token\(n\)"):
        chars_per_token(n)


def test_chars_per_token_measure_rejects_non_text() -> None:
    with pytest.raises(TypeError, match="expected a str"):
        chars_per_token()(42)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- SDK request types


def conforms(value: Any, tp: Any) -> bool:
    """Does ``value`` fit the SDK type ``tp`` exactly (no unknown keys, required keys present)?

    pydantic ignores unknown TypedDict keys and validates ``Iterable`` fields lazily, so it
    would pass a misspelt field; this walk is strict instead.
    """
    import typing_extensions

    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any or tp is object:
        return True
    if tp is type(None):
        return value is None
    if origin in (typing.Union, types.UnionType):
        return any(conforms(value, a) for a in args)
    if origin in (typing.Literal, typing_extensions.Literal):
        return value in args
    if origin in (typing_extensions.Required, typing_extensions.NotRequired, typing.Annotated):
        return conforms(value, args[0])
    if typing_extensions.is_typeddict(tp):
        if not isinstance(value, dict):
            return False
        hints = typing.get_type_hints(tp)
        if set(value) - set(hints) or set(tp.__required_keys__) - set(value):
            return False
        return all(conforms(v, hints[k]) for k, v in value.items())
    if origin in (dict, collections.abc.Mapping):
        return isinstance(value, dict) and all(
            conforms(k, args[0]) and conforms(v, args[1]) for k, v in value.items()
        )
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence) or (
        origin is not None and getattr(origin, "__name__", "") == "SequenceNotStr"
    ):
        return isinstance(value, list) and all(conforms(v, args[0]) for v in value)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(tp, type):
        return isinstance(value, tp)
    raise AssertionError(f"conforms: unhandled type {tp!r}")


def test_conforms_catches_a_misspelt_field() -> None:
    pytest.importorskip("anthropic")
    from anthropic.types import TextBlockParam

    assert conforms({"type": "text", "text": "x"}, TextBlockParam)
    assert not conforms({"type": "text", "txt": "x"}, TextBlockParam)
    assert not conforms({"type": "text", "text": "x", "cache": {}}, TextBlockParam)
    bad_ttl = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "2h"}}
    assert not conforms(bad_ttl, TextBlockParam)


SDK_CASES = [CONV, result_of([msg("user", "only the query")])]


@pytest.mark.parametrize("res", SDK_CASES)
def test_openai_chat_request_fits_sdk_types(res: dict[str, Any]) -> None:
    pytest.importorskip("openai")
    from openai.types.chat import ChatCompletionMessageParam

    for system in (None, "S"):
        for parts in (False, True):
            for message in to_openai(res, system=system, parts=parts):
                assert conforms(message, ChatCompletionMessageParam), message


@pytest.mark.parametrize("res", SDK_CASES)
def test_openai_responses_request_fits_sdk_types(res: dict[str, Any]) -> None:
    pytest.importorskip("openai")
    from openai.types.responses import ResponseInputItemParam, ResponseOutputMessageParam
    from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

    req = to_openai_responses(res, system="S")
    users = [i for i in req["input"] if i["role"] == "user"]
    assert conforms({"model": "gpt-4.1", **req, "input": users}, ResponseCreateParamsNonStreaming)
    for item in users:
        assert conforms(item, ResponseInputItemParam)
    for item in req["input"]:
        if item["role"] == "assistant":
            # The SDK types assistant history as the output message it once was, with the
            # id, status and annotations the API filled in. The API accepts history without
            # them; adding them here checks every other field against the SDK.
            filled = {
                **item,
                "id": "msg_1",
                "status": "completed",
                "content": [{**c, "annotations": []} for c in item["content"]],
            }
            assert conforms(filled, ResponseOutputMessageParam), item


@pytest.mark.parametrize("res", SDK_CASES)
def test_anthropic_request_fits_sdk_types(res: dict[str, Any]) -> None:
    pytest.importorskip("anthropic")
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    for system in (None, "S"):
        for ttl in (None, "1h"):
            req = to_anthropic(res, system=system, ttl=ttl)
            body = {"model": "claude-haiku-4-5", "max_tokens": 64, **req}
            assert conforms(body, MessageCreateParamsNonStreaming), body


@pytest.mark.parametrize("res", SDK_CASES)
def test_gemini_request_fits_sdk_types(res: dict[str, Any]) -> None:
    pytest.importorskip("google.genai")
    from google.genai import types as gt

    req = to_gemini(res, system="S")
    # The SDK's models forbid unknown fields and accept the REST camelCase names.
    for content in req["contents"]:
        gt.Content.model_validate(content)
    gt.Content.model_validate(req["systemInstruction"])
    config = gt.GenerateContentConfig.model_validate(
        {"systemInstruction": req["systemInstruction"]}
    )
    assert isinstance(config.system_instruction, gt.Content)
    with pytest.raises(ValueError):
        gt.Content.model_validate({"role": "user", "parts": [{"txt": "x"}]})


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.stem)
def test_recorded_payloads_parse_as_sdk_responses(path: Path) -> None:
    """The recorded payloads are real response shapes: the SDK parses them, and cache_usage
    reads the parsed SDK object the same as the JSON."""
    data = load(path)
    provider = data["provider"]
    if provider == "openai-chat":
        pytest.importorskip("openai")
        from openai.types.chat import ChatCompletion

        parsed: Any = ChatCompletion.model_validate(data["response"])
    elif provider == "openai-responses":
        pytest.importorskip("openai")
        from openai.types.responses import Response

        parsed = Response.model_validate(data["response"])
    elif provider == "anthropic":
        pytest.importorskip("anthropic")
        from anthropic.types import Message

        parsed = Message.model_validate(data["response"])
    else:
        pytest.importorskip("google.genai")
        from google.genai import types as gt

        parsed = gt.GenerateContentResponse.model_validate(data["response"])
    assert cache_usage(parsed) == data["expected"]


# --------------------------------------------------------------------------- with a real Memory

TOPICS = ["pricing", "the hiking trip", "the garden", "a new laptop", "the wedding"]


def long_memory(**kwargs: Any) -> Any:
    from yait_byheart import Memory

    mem = Memory(**kwargs)
    for i in range(30):
        topic = TOPICS[i % len(TOPICS)]
        mem.append(
            "user",
            f"Turn {i}: about {topic}, I think we should settle on option {i} by Friday.",
            when="8 May, 2023",
        )
        mem.append("assistant", f"Reply {i}: noted for {topic}; option {i} it is.")
    return mem


QUERIES = [
    "what did we decide about pricing?",
    "and about the garden?",
    "the garden again: which option?",
    "and the wedding?",
]


def test_real_compose_results_convert_for_every_provider() -> None:
    mem = long_memory(budget=1500, chunk=300)
    for query in QUERIES:
        res = mem.compose(query)
        assert res["mode"] == "assembled"
        texts = flat(res)
        assert to_openai(res)[-1] == {"role": "user", "content": query}
        responses = to_openai_responses(res, system="S")["input"]
        assert [c["text"] for item in responses for c in item["content"]] == texts
        anthropic = to_anthropic(res, system="S")
        assert marks(anthropic)[-1] == res["stable_upto"]
        assert json.dumps(anthropic).count("cache_control") <= MAX_BREAKPOINTS
        gemini = to_gemini(res)["contents"]
        roles = [c["role"] for c in gemini]
        assert roles[0] == roles[-1] == "user"
        assert all(a != b for a, b in itertools.pairwise(roles))
        assert JOIN.join(p["text"] for c in gemini for p in c["parts"]) == JOIN.join(texts)
        mem.append("user", query)
        mem.append("assistant", f"About that: {query}")


def test_converted_prefix_repeats_verbatim_when_the_selection_holds() -> None:
    """The point of stable_upto: the converted request keeps the prefix byte-identical on the
    next call, so the provider's cache can hit (OpenAI and Gemini match prefixes; Anthropic
    reads what the marker wrote)."""
    mem = long_memory(budget=1500, chunk=300)
    prev: dict[str, Any] | None = None
    held = 0
    for query in QUERIES:
        res = mem.compose(query)
        if prev is not None and not res["reselected"] and prev["stable_upto"] >= 0:
            held += 1
            cut = prev["stable_upto"] + 1
            assert to_openai(res)[:cut] == to_openai(prev)[:cut]
            assert (
                to_openai_responses(res)["input"][:cut] == to_openai_responses(prev)["input"][:cut]
            )
            new = to_anthropic(res, cache=False)["messages"][:cut]
            assert new == to_anthropic(prev, cache=False)["messages"][:cut]
            # Anthropic: the previous call's prefix end is still marked, so its entry is read.
            assert prev["stable_upto"] in marks(to_anthropic(res))
        prev = res
        mem.append("user", query)
        mem.append("assistant", f"About that: {query}")
    assert held >= 2  # the scenario really exercised the sticky path


def test_memory_accepts_chars_per_token_as_measure() -> None:
    est = chars_per_token()
    mem = long_memory(budget=400, chunk=80, measure=est)
    res = mem.compose("pricing option?")
    assert res["mode"] == "assembled"
    # size is in the measure's unit: about a quarter of the characters, never more than them.
    assert res["size"] < res["chars"]
    assert res["size"] >= res["chars"] / 4 - len(res["messages"])
    to_anthropic(res)


def test_empty_query_is_refused_where_the_provider_would_refuse_it() -> None:
    mem = long_memory(budget=1500, chunk=300)
    with pytest.raises(ValueError, match="blank"):
        mem.compose("")  # Memory itself refuses it first
    res = mem.compose("q")
    res["messages"][-1]["parts"][0]["text"] = ""  # a hand-edited result
    assert to_openai(res)[-1] == {"role": "user", "content": ""}
    with pytest.raises(ValueError, match="empty query"):
        to_anthropic(res)


def test_short_conversation_passthrough_converts() -> None:
    from yait_byheart import Memory

    mem = Memory()
    mem.append("assistant", "Hi! How can I help?")  # a greeting before the user spoke
    mem.append("user", "we decided on 55 euro a month")
    mem.append("assistant", "Noted.")
    res = mem.compose("what price?")
    assert res["mode"] == "passthrough"
    out = to_openai(res)
    assert out[0]["role"] == "user" and out[-1] == {"role": "user", "content": "what price?"}
    assert "55 euro" in json.dumps(to_gemini(res))
    assert marks(to_anthropic(res)) == expected_points(res)[-MAX_BREAKPOINTS:]


# --------------------------------------------------------------------------- examples

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = {
    # script: (key variable, base-URL variable, recorded reply, header carrying the key)
    "openai_chat": ("OPENAI_API_KEY", "OPENAI_BASE_URL", "openai_chat_cached", "Authorization"),
    "openai_responses": (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "openai_responses_cached",
        "Authorization",
    ),
    "anthropic_messages": (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "anthropic_read",
        "x-api-key",
    ),
    "gemini": ("GEMINI_API_KEY", "GEMINI_BASE_URL", "gemini_rest", "x-goog-api-key"),
}

ENDPOINTS = {
    "openai_chat": "/chat/completions",
    "openai_responses": "/responses",
    "anthropic_messages": "/v1/messages",
    "gemini": "/v1beta/models/gemini-2.5-flash:generateContent",
}


def run_example(name: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # No real key, model or endpoint from the caller's environment leaks into the run.
    ours = ("OPENAI_", "ANTHROPIC_", "GEMINI_")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    clean["PYTHONPATH"] = os.pathsep.join([str(REPO), clean.get("PYTHONPATH", "")])
    clean["NO_PROXY"] = clean["no_proxy"] = "127.0.0.1,localhost"
    return subprocess.run(
        [sys.executable, str(REPO / "examples" / f"{name}.py"), *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_without_key_prints_the_request(name: str) -> None:
    done = run_example(name, "--full")  # without --full: a dry-run summary (test_examples_dry_run)
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    question = "What monthly price did we settle on for the Pro plan?"
    if name == "openai_chat":
        assert body["messages"][0]["role"] == "system"
        assert body["messages"][-1] == {"role": "user", "content": question}
    elif name == "openai_responses":
        assert body["input"][-1]["content"] == [{"type": "input_text", "text": question}]
        assert body["instructions"]
    elif name == "anthropic_messages":
        assert "cache_control" in body["system"][0]
        assert 1 <= json.dumps(body).count("cache_control") <= MAX_BREAKPOINTS
        assert body["messages"][-1]["content"][-1]["text"] == question
    else:
        roles = [c["role"] for c in body["contents"]]
        assert all(a != b for a, b in itertools.pairwise(roles))
        assert body["contents"][-1]["parts"][0]["text"].endswith(question)


class FakeProvider(http.server.BaseHTTPRequestHandler):
    """Answers every POST with one recorded response and keeps what it was sent."""

    reply: typing.ClassVar[bytes] = b"{}"
    seen: typing.ClassVar[list[tuple[str, dict[str, str], Any]]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        self.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.reply)))
        self.end_headers()
        self.wfile.write(self.reply)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_with_key_runs_three_turns_and_reports_cache_usage(name: str) -> None:
    key_var, url_var, recorded, header = EXAMPLES[name]
    payload = load(USAGE_DIR / f"{recorded}.json")

    class Handler(FakeProvider):
        reply: typing.ClassVar[bytes] = json.dumps(payload["response"]).encode()
        seen: typing.ClassVar[list[tuple[str, dict[str, str], Any]]] = []

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        done = run_example(name, **{key_var: "test-key", url_var: base})
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr
    turns = [line for line in done.stdout.splitlines() if line.startswith("turn ")]
    assert len(turns) == 3 == len(Handler.seen)
    for line in turns:
        assert line.endswith("cache_usage=" + json.dumps(payload["expected"]))
    assert {path for path, _, _ in Handler.seen} == {ENDPOINTS[name]}
    _, headers, body = Handler.seen[-1]
    assert "test-key" in headers[header.lower()]
    # The third request carries the two earlier questions and the replies the fake gave.
    sent = json.dumps(body)
    assert "And how long is the free trial?" in sent
    assert "which day is the launch" in sent


# --------------------------------------------------------------------------- tool parts, SDK types

TOOL_CASES = [
    json.loads(p.read_text())["result"] for p in sorted((USAGE_DIR.parent / "tools").glob("*.json"))
]


@pytest.mark.parametrize("res", TOOL_CASES)
def test_openai_chat_tool_request_fits_sdk_types(res: dict[str, Any]) -> None:
    pytest.importorskip("openai")
    from openai.types.chat import ChatCompletionMessageParam

    for kwargs in ({}, {"parts": True}, {"cache": True, "ttl": "30m", "system": "S"}):
        out = to_openai(res, **kwargs)
        assert any(m["role"] == "tool" for m in out)
        for message in out:
            assert conforms(message, ChatCompletionMessageParam), message


@pytest.mark.parametrize("res", TOOL_CASES)
def test_openai_responses_tool_request_fits_sdk_types(res: dict[str, Any]) -> None:
    pytest.importorskip("openai")
    from openai.types.responses import ResponseInputItemParam

    for cache in (False, True):
        items = to_openai_responses(res, cache=cache)["input"]
        kinds = {i["type"] for i in items}
        assert {"function_call", "function_call_output"} <= kinds
        for item in items:
            if item.get("role") != "assistant":  # assistant text: checked in the test above
                assert conforms(item, ResponseInputItemParam), item


@pytest.mark.parametrize("res", TOOL_CASES)
def test_anthropic_tool_request_fits_sdk_types(res: dict[str, Any]) -> None:
    pytest.importorskip("anthropic")
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    for ttl in (None, "1h"):
        body = {"model": "claude-haiku-4-5", "max_tokens": 64, **to_anthropic(res, ttl=ttl)}
        assert "tool_use" in json.dumps(body)
        assert conforms(body, MessageCreateParamsNonStreaming), body


@pytest.mark.parametrize("res", TOOL_CASES)
def test_gemini_tool_request_fits_sdk_types(res: dict[str, Any]) -> None:
    pytest.importorskip("google.genai")
    from google.genai import types as gt

    for content in to_gemini(res)["contents"]:
        parsed = gt.Content.model_validate(content)
        for part, raw in zip(parsed.parts or [], content["parts"], strict=True):
            if "functionCall" in raw:
                assert part.function_call is not None
                assert part.function_call.args == raw["functionCall"]["args"]
            if "functionResponse" in raw:
                assert part.function_response is not None
                assert part.function_response.name == raw["functionResponse"]["name"]


def test_each_adapter_returns_the_shape_its_docs_table_says() -> None:
    """`to_openai` returns a list and the others a dict to merge (issue 37: the README called
    both `request`, and a first app indexed the list as a dict)."""
    from yait_byheart import Memory

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "prompt-cache.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(to_\w+)` \| (a list[^|]*|a dict: ([^|]*))\|", page, re.M)
    mem = Memory()
    mem.append("user", "hello")
    mem.append("assistant", "hi there")
    result = mem.compose("and now?")
    adapters = {"to_openai": to_openai, "to_openai_responses": to_openai_responses,
                "to_anthropic": to_anthropic, "to_gemini": to_gemini}  # fmt: skip
    assert sorted(name for name, _, _ in rows) == sorted(adapters)
    for name, shape, keys in rows:
        out = adapters[name](result, system="S")
        if shape.startswith("a list"):
            assert isinstance(out, list), name
        else:
            assert isinstance(out, dict), name
            assert sorted(out) == sorted(re.findall(r"`(\w+)`", keys)), name
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert not re.search(r"request = to_\w+\(", readme)
