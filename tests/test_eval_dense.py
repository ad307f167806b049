"""eval/dense_minilm.py: the fusion worked by hand, with a toy encoder instead of the model."""

import math
import re
from pathlib import Path

import pytest

from eval.dense_minilm import CachedEncoder, Hybrid, MiniLM, fuse
from yait_byheart import Memory

# A toy "meaning": words of one concept share a dimension, so "car" and "automobile" are
# alike although they share no stem (what a sentence encoder adds to BM25).
CONCEPTS = {"car": 0, "automobile": 0, "vehicle": 0, "dog": 1, "puppy": 1, "rain": 2, "sunny": 2}


def toy_encode(texts: list[str]) -> list[list[float]]:
    out = []
    for text in texts:
        v = [0.0] * 4
        for word in re.findall(r"[a-z]+", text.lower()):
            v[CONCEPTS.get(word, 3)] += 1.0
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        out.append([x / norm for x in v])
    return out


def test_fuse_by_hand() -> None:
    # BM25 over its best: 0, 0.5, 1. Cosines: mean 0.5, best 1.0 above it by 0.5, so
    # (0.25 - 0.5) / 0.5 = -0.5 and (1.0 - 0.5) / 0.5 = 1. Weight 0.5: -0.25, 1.0, 0.75.
    assert fuse([0.0, 2.0, 4.0], [0.25, 1.0, 0.25], 0.5) == [-0.25, 1.0, 0.75]
    # A flat list says nothing and adds nothing: no division by zero either way.
    assert fuse([0.0, 3.0], [0.5, 0.5], 2.0) == [0.0, 1.0]
    assert fuse([0.0, 0.0], [0.25, 0.75], 1.0) == [-1.0, 1.0]
    with pytest.raises(ValueError):
        fuse([1.0], [0.1, 0.2], 1.0)


def test_the_encoder_encodes_each_text_once_and_keeps_them_on_disk(tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def counting(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        return toy_encode(texts)

    path = tmp_path / "vectors.pickle"
    encoder = CachedEncoder(counting, path)
    first = encoder(["a car", "a dog", "a car"])
    assert calls == [["a car", "a dog"]]
    assert first[0] == first[2] == toy_encode(["a car"])[0]
    encoder(["a dog"])
    assert len(calls) == 1
    encoder.save()
    again = CachedEncoder(lambda texts: pytest.fail(f"encoded {texts} again"), path)
    assert again(["a dog", "a car"]) == [first[1], first[0]]


def test_ranks_by_meaning_where_no_word_is_shared() -> None:
    docs = ["dogs bark at night", "my automobile is red", "it may rain", "what a day"]
    assert MiniLM(encoder=toy_encode).fit(docs).rank("Which car?")[0] == 1
    assert Hybrid(0.5, encoder=toy_encode).fit(docs).rank("Which car?")[0] == 1
    # BM25 alone finds nothing to score: every stretch ties, in stretch order.
    assert Hybrid(0.0, encoder=toy_encode).fit(docs).rank("Which car?") == [0, 1, 2, 3]


def test_shared_words_still_lead() -> None:
    docs = ["we talked about the automobile show", "the car wash closed", "sunny all week"]
    # "car" is shared only with stretch 1: BM25 gives it 1.0 and half as much to each
    # neighbour (0.5, 0.5). Cosines 1, 1, 0 (mean 2/3, spread 1/3): 1, 1, -2. Weight 0.5:
    # stretch 0 gets 0.5 + 0.5 = 1.0, stretch 1 gets 1.5, stretch 2 gets 0.5 - 1 = -0.5.
    assert Hybrid(0.5, encoder=toy_encode).fit(docs).rank("the car") == [1, 0, 2]


def test_a_memory_with_the_hybrid_sends_the_turn_it_finds_by_meaning() -> None:
    def conversation(retriever: Hybrid) -> Memory:
        mem = Memory(budget=1_200, retriever=retriever)
        for i in range(30):
            mem.append("user", f"Filler message number {i} about the weather being dull.")
            mem.append("assistant", f"Reply {i}: noted, thanks for telling me.")
            if i == 15:  # far from both ends: neither the oldest nor the newest talk
                mem.append("user", "I finally bought an automobile, a red one.")
                mem.append("assistant", "Congratulations on the purchase!")
        return mem

    def sent(mem: Memory) -> str:
        messages = mem.compose("What colour is my new car?")["messages"]
        return "\n".join(m["parts"][0]["text"] for m in messages)

    found = sent(conversation(Hybrid(0.5, encoder=toy_encode)))
    assert "user: I finally bought an automobile, a red one." in found
    # No word of the question is in the conversation: BM25 alone ranks every stretch alike.
    assert "automobile" not in sent(conversation(Hybrid(0.0, encoder=toy_encode)))
