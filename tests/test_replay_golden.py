"""Exactness guard for speed work (issue 26): composes over a recorded live replay.

A deterministic replay (generated text, a few hundred turns: short turns, long turns cut into
pieces, tool rounds, dates, relative dates, questions about the user, composes with and
without a query, several budgets and measures, a SQLite reopen and a `to_dict` round trip
midway) is composed, and a digest of every compose result must equal the one recorded in
`tests/data/replay_golden.json` from the code before the speed changes. A speed-up may change
how things are computed, never what is selected or sent.

Regenerate (only when a change of selection is intended): `python -m tests.test_replay_golden`.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from yait_byheart import Memory
from yait_byheart.store import SQLiteStore

GOLDEN = Path(__file__).parent / "data" / "replay_golden.json"

VOCAB = (
    "ferry harbour tomato violin lisbon invoice server error shard timeout garden train "
    "ticket euro cafe flight hotel booked passport museum dinner sister birthday recipe "
    "oven pasta salad running marathon knee doctor appointment budget rent landlord "
    "deploy kubernetes cluster latency cache redis queue worker cron backup disk"
).split()
FUNCTION = "the a to and of I you it is in that we for was on with my so but do".split()
RELATIVE = ("yesterday", "last Friday", "two weeks ago", "next Monday", "last month")


class Rand:
    """A small LCG: the same numbers on every Python."""

    def __init__(self, seed: int) -> None:
        self.state = seed

    def next(self, n: int) -> int:
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % 2**64
        return (self.state >> 33) % n


def sentence(rng: Rand, words: int) -> str:
    out = []
    for k in range(words):
        pool = FUNCTION if rng.next(10) < 4 else VOCAB
        word = pool[rng.next(len(pool))]
        if rng.next(40) == 0:
            word = str(10 + rng.next(90))
        out.append(word)
        if k % 13 == 12:
            out[-1] += "." if rng.next(3) else ".\n\n"
    if rng.next(6) == 0:
        out.append(RELATIVE[rng.next(len(RELATIVE))])
    return " ".join(out).capitalize() + "."


def digest(result: Any) -> str:
    return hashlib.sha256(json.dumps(result, sort_keys=True).encode()).hexdigest()[:16]


def tokenish(text: str) -> int:
    return (len(text) + 3) // 4


def replay(budget: int, seed: int, measure: bool) -> list[str]:
    """Digests of every compose (and the final stats) of one replay."""
    rng = Rand(seed)
    settings: dict[str, Any] = {"budget": budget, "chunk": 300}
    if measure:
        settings["measure"] = tokenish
    out: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "replay.db")
        mem = store.open("c", **settings)
        call = 0
        for i in range(320):
            day = f"{1 + i // 25} May 2023"
            choice = rng.next(20)
            if choice == 0:  # a tool round
                call += 1
                cid = f"call-{call}"
                mem.append_message(
                    {"role": "assistant", "parts": [
                        {"type": "text", "text": sentence(rng, 6)},
                        {"type": "tool_call", "id": cid, "name": "search",
                         "arguments": json.dumps({"q": VOCAB[rng.next(len(VOCAB))]})},
                    ]}, when=day,
                )  # fmt: skip
                output = sentence(rng, 30 + rng.next(200))
                result = {"type": "tool_result", "id": cid, "output": output}
                mem.append_message({"role": "user", "parts": [result]}, when=day)
                out.append(digest(mem.compose(None)))
                continue
            long = choice == 1
            words = 600 + rng.next(1500) if long else 5 + rng.next(40)
            role = "user" if i % 2 == 0 else "assistant"
            mem.append(role, sentence(rng, words), when=day)
            if role == "user" and i > 40:
                kind = rng.next(4)
                if kind == 0:
                    query = "What did I say about " + VOCAB[rng.next(len(VOCAB))] + "?"
                    out.append(digest(mem.compose(query, when=day)))
                elif kind == 1:
                    query = "When did we talk about the " + VOCAB[rng.next(len(VOCAB))] + "?"
                    out.append(digest(mem.compose(query)))
                elif kind == 2:
                    out.append(digest(mem.compose(sentence(rng, 8), when="12 May 2023")))
                else:
                    out.append(digest(mem.compose(None)))
            if i == 200:  # reopen from the store (index snapshot), then a JSON round trip
                snapshot = mem.index_snapshot()
                store.close()
                store = SQLiteStore(Path(tmp) / "replay.db")
                mem = store.open("c", **settings)
                out.append(digest(mem.to_dict()))
                out.append(str(len(snapshot)))
            if i == 260:
                record = json.loads(json.dumps(mem.to_dict()))
                again = Memory.from_dict(record, **({"measure": tokenish} if measure else {}))
                out.append(digest(again.compose("the oven and the pasta recipe")))
        out.append(digest(mem.stats))
        store.close()
    return out


CASES = [(budget, seed, measure) for budget in (2_000, 6_000, 20_000) for seed, measure in
         ((1, False), (2, True))]  # fmt: skip


def run_all() -> dict[str, str]:
    return {
        f"{b}-{s}-{m}": hashlib.sha256(" ".join(replay(b, s, m)).encode()).hexdigest()
        for b, s, m in CASES
    }


def test_replay_composes_unchanged() -> None:
    expected = json.loads(GOLDEN.read_text())
    assert run_all() == expected


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(run_all(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
