"""A Hybrid opened through a store keeps its vectors there: a reopen embeds no stretch again."""

import hashlib
from pathlib import Path

from yait_byheart.semantic import Hybrid
from yait_byheart.store import SQLiteStore


class CountingEmbedder:
    name = "counting-8"

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return [[hashlib.sha256(f"{t}{i}".encode()).digest()[0] / 255 for i in range(8)]
                for t in texts]  # fmt: skip


def test_a_reopened_store_embeds_only_the_new_query(tmp_path: Path) -> None:
    embed = CountingEmbedder()
    with SQLiteStore(tmp_path / "chats.db") as store:
        hybrid = Hybrid(embed)
        mem = store.open("c1", retriever=hybrid, budget=600, stability=0)
        assert hybrid.cache is not None  # the store handed its vectors
        for i in range(60):
            mem.append("user" if i % 2 == 0 else "assistant", f"turn {i} on topic {i % 7}, more")
        first = mem.compose("what about topic 3?")["included"]
    stretches = [t for t in embed.texts if t != "what about topic 3?"]
    assert stretches and len(set(stretches)) == len(stretches)  # each text once
    embed.texts.clear()
    with SQLiteStore(tmp_path / "chats.db") as store:
        mem = store.open("c1", retriever=Hybrid(embed), budget=600, stability=0)
        again = mem.compose("which turn was on topic 5?")["included"]
        assert mem.compose("what about topic 3?")["included"] == first
    assert embed.texts == ["which turn was on topic 5?", "what about topic 3?"]
    assert again
