"""LoCoMo ingest: speakers to roles, captions, dates, evidence ids, categories."""

import json
from pathlib import Path

import pytest

from eval.locomo.data import load

TINY = Path(__file__).parent / "data" / "tiny_locomo.json"


def test_tiny_conversation_ingest() -> None:
    conv = load(TINY)[0]
    assert conv.sample_id == "tiny-1"
    assert len(conv.turns) == 12
    first, photo, reply = conv.turns[0], conv.turns[2], conv.turns[7]
    assert (first.role, first.text) == ("user", "Ada: Morning Ben! I finally adopted a dog.")
    assert photo.text == (
        "Ada: A beagle called Pickle, he is two years old. "
        "[shares a photo of a beagle on a red blanket]"
    )
    assert (reply.dia_id, reply.role, reply.session) == ("D2:2", "assistant", 2)
    assert reply.when == "3:00 pm on 20 March, 2023"
    assert [t.index for t in conv.turns] == list(range(12))


def test_questions_answers_and_evidence() -> None:
    qs = load(TINY)[0].questions
    assert [q.category for q in qs] == [4, 2, 1, 3, 4, 5]
    assert qs[2].evidence == ("D2:3", "D1:3")
    # a dia_id that does not exist is dropped, and recorded as dropped
    assert (qs[3].evidence, qs[3].dropped_evidence) == (("D1:4",), ("D9:9",))
    assert qs[4].evidence == ()
    # category 5 takes its gold answer from adversarial_answer
    assert qs[5].answer == "a beagle"


def test_sessions_sorted_numerically_and_int_answers(tmp_path: Path) -> None:
    turn = {"speaker": "A", "text": "hi"}
    sample = {
        "sample_id": "s",
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_10": [{**turn, "dia_id": "D10:1"}],
            "session_10_date_time": "late",
            "session_2": [{**turn, "dia_id": "D2:1"}],
            "session_2_date_time": "early",
            "session_11_date_time": "no session",
        },
        "qa": [{"question": "year?", "answer": 2022, "evidence": ["D2:1"], "category": 2}],
    }
    path = tmp_path / "x.json"
    path.write_text(json.dumps([sample]))
    conv = load(path)[0]
    assert [t.dia_id for t in conv.turns] == ["D2:1", "D10:1"]
    assert [t.when for t in conv.turns] == ["early", "late"]
    assert conv.questions[0].answer == "2022"


def test_bad_paths_and_formats_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="--data"):
        load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}')
    with pytest.raises(ValueError, match="not a LoCoMo file"):
        load(bad)
