"""Entry point: ``python -m eval NAME [options]``; ``python -m eval`` lists the benchmarks.

Each benchmark is a module of this package with ``main(argv) -> int``, imported only when it
runs (some need optional packages or files another change adds); each also runs alone as
``python -m eval.MODULE``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import NamedTuple


class Command(NamedTuple):
    module: str
    summary: str


COMMANDS: dict[str, Command] = {
    "locomo": Command("eval.locomo.cli", "LoCoMo: recall, live replay, outside knowledge"),
    "xquad": Command("eval.xquad", "XQuAD: retrieval and sizes in six languages"),
    "longmemeval": Command("eval.longmemeval.cli", "LongMemEval_s: evidence turns sent, live"),
    "ablate": Command("eval.ablate", "LoCoMo recall per Tuning override (the ablation table)"),
    "bench-live": Command("eval.bench_live", "live-loop speed and memory, issue 19's floors"),
    "bench-cold": Command(
        "eval.bench_cold", "cold path vs a plain BM25; a fresh process per request"
    ),
    "bench-store": Command("eval.bench_store", "durable store speed (SQLite, PostgreSQL)"),
    "bench-recall": Command(
        "eval.bench_recall", "recall across 1,000 conversations of one user: speed, memory"
    ),
    "bench-import": Command("eval.bench_import", "import yait_byheart in a fresh process"),
    "bench-stateless": Command(
        "eval.bench_stateless", "a new store object per request: recall across 10k-500k turns"
    ),
    "bench-concurrency": Command(
        "eval.bench_concurrency", "many processes on one conversation: throughput, errors"
    ),
    "query-cost": Command("eval.query_cost", "postings a compose walks: LoCoMo vs generated"),
    "fuzz-time": Command("eval.fuzz_time", "resolve_time: linear time on adversarial texts"),
    "fuzz-tokens": Command("eval.fuzz_tokens", "tokenizer: linear time on adversarial texts"),
    "time-langs": Command("eval.time_langs", "relative dates: cases resolved per language"),
    "semantic": Command("eval.semantic", "semantic (embedding) retrieval comparison"),
    "embed-cache": Command("eval.embed_cache", "embed a benchmark's texts once (MiniLM cache)"),
    "headroom": Command(
        "eval.headroom", "where the hybrid's missed evidence ranks in each list (MiniLM)"
    ),
    "minilm": Command("eval.minilm", "live replay with the MiniLM hybrid (needs the eval extra)"),
    "agent-rounds": Command(
        "eval.agent_rounds", "past tool rounds in an agent loop: native or text"
    ),
    "agent-replay": Command(
        "eval.agent_replay", "agent transcripts with large tool results, live: the bill per call"
    ),
    "ab-revision": Command("eval.ab_revision", "developer A/B: this checkout vs a git revision"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: python -m eval NAME [options]   (python -m eval NAME --help for options)"]
    lines += ["", "benchmarks:"]
    lines += [f"  {name:<{width}}  {c.summary}" for name, c in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"python -m eval: unknown benchmark {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name].module)
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
