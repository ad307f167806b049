"""A message's `item` (the framework's own record of it): kept with its turn, returned as
given, never read by selection or sent; redaction blanks it; a message with only an item is
kept silent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from yait_byheart import Memory
from yait_byheart.store import SQLiteStore

ITEM = {"type": "message", "id": "msg_1", "status": "completed", "content": [1, 2.5, None, True]}


def fill(mem: Memory) -> None:
    mem.append_message({"role": "user", "parts": [{"type": "text", "text": "hello there"}],
                        "item": ITEM})  # fmt: skip
    mem.append_message({"role": "assistant", "parts": [], "item": {"type": "reasoning"}})
    mem.append_message({"role": "assistant", "parts": [{"type": "text", "text": "hi"}]})


def test_items_come_back_as_given_and_are_never_sent(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "i.db") as store:
        fill(store.open("c"))
    with SQLiteStore(tmp_path / "i.db") as store:
        mem = store.open("c")
        turns = mem.to_dict()["turns"]
        assert turns[0]["item"] == ITEM and turns[1] == {
            "role": "assistant", "text": "", "item": {"type": "reasoning"}}  # fmt: skip
        sent = json.dumps(mem.compose("hello?")["messages"])
        assert "msg_1" not in sent and "reasoning" not in sent
        assert [m["role"] for m in mem.compose()["messages"]] == ["user", "assistant"]
        again = Memory.from_dict(json.loads(json.dumps(mem.to_dict())))
        assert again.to_dict()["turns"] == turns


def test_redaction_blanks_the_item_too(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "r.db") as store:
        mem = store.open("c")
        fill(mem)
        mem.redact(0)
        mem.redact(1)
    with SQLiteStore(tmp_path / "r.db") as store:
        turns = store.open("c").to_dict()["turns"]
    assert turns[:2] == [{"role": "user", "text": "", "redacted": True},
                         {"role": "assistant", "text": "", "redacted": True}]  # fmt: skip
    assert "msg_1" not in json.dumps(turns)


def test_an_item_must_be_json_and_parts_may_be_empty_only_with_one() -> None:
    mem = Memory()
    with pytest.raises(TypeError, match=r"Memory.append_message: message\['item'\] must be JSON"):
        mem.append_message({"role": "user", "parts": [], "item": {"x": object()}})
    with pytest.raises(ValueError, match="non-empty list of 'parts'"):
        mem.append_message({"role": "user", "parts": []})
    assert len(mem) == 0
    given = {"a": [1]}
    mem.append_message({"role": "user", "parts": [{"type": "text", "text": "x"}], "item": given})
    given["a"].append(2)  # the caller's later change does not reach the Memory
    assert mem.to_dict()["turns"][0]["item"] == {"a": [1]}


def test_a_redacted_record_with_an_item_is_refused() -> None:
    data = Memory().to_dict()
    data["turns"] = [{"role": "user", "text": "", "redacted": True, "item": {"a": 1}}]
    with pytest.raises(ValueError, match=r"turns\[0\] is redacted yet holds an item"):
        Memory.from_dict(data)
