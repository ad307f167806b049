"""``python -m eval locomo``: offline metrics, live replay, outside knowledge, optional answers."""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval.locomo import answer, offline, report, runner
from eval.locomo.data import ANSWERABLE, load
from eval.locomo.llm import ChatClient
from eval.sources import LOCOMO, locomo_missing, missing
from eval.tunings import tuning_of

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo-dev.json"


def _budgets(text: str) -> list[int]:
    try:
        values = [int(v.replace("_", "")) for v in text.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers like 4000,8000, got {text!r}")
    return sorted(set(values))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m eval locomo", description=__doc__)
    p.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="LoCoMo JSON (locomo10.json format, from github.com/snap-research/locomo); "
        "default ../shared/data/locomo-dev.json",
    )
    p.add_argument(
        "--budgets",
        type=_budgets,
        default=[4000, 8000, 20000],
        help="character budgets, comma-separated (default 4000,8000,20000)",
    )
    p.add_argument(
        "--live-budgets",
        type=_budgets,
        default=None,
        help="budgets for the live replay (default: --budgets)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=ROOT / "eval" / "out",
        help="output directory for locomo.json and locomo.md (default eval/out)",
    )
    p.add_argument(
        "--conversations",
        type=int,
        default=None,
        metavar="N",
        help="only the first N conversations",
    )
    p.add_argument(
        "--retriever",
        default=None,
        metavar="module:Class",
        help="also run byheart with this fit/rank retriever (or a registered name: hybrid-minilm)",
    )
    p.add_argument(
        "--tuning",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a yait_byheart.Tuning field for byheart (repeatable), e.g. rank_fusion=1",
    )
    p.add_argument("--no-live", action="store_true", help="skip the live replay")
    p.add_argument("--no-external", action="store_true", help="skip the outside-knowledge run")
    p.add_argument(
        "--answer-model", default=None, help="answer with this model (needs --judge-model)"
    )
    p.add_argument("--judge-model", default=None, help="judge answers with this model")
    p.add_argument(
        "--answer-systems",
        default="byheart:sticky",
        help="system:regime pairs to answer for, comma-separated (default byheart:sticky)",
    )
    p.add_argument(
        "--answer-budgets",
        type=_budgets,
        default=None,
        help="budgets to answer at (default: --budgets)",
    )
    p.add_argument("--run", default=None, help="results file name (default from the model names)")
    p.add_argument(
        "--results",
        type=Path,
        default=ROOT / "eval" / "results",
        help="directory of the resumable answer traces (default eval/results)",
    )
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per model request")
    p.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="worker processes (default: up to 2)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return p


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip()


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if bool(args.answer_model) != bool(args.judge_model):
        parser().error("--answer-model and --judge-model go together")
    progress = not args.quiet
    started = time.perf_counter()
    timings: dict[str, float] = {}

    def say(text: str) -> None:
        if progress:
            print(text, file=sys.stderr, flush=True)

    gone = locomo_missing("python -m eval locomo", args.data)
    if gone is not None:
        return gone
    try:
        pool = load(args.data)
    except ValueError as exc:  # a file, but not LoCoMo's format
        return missing("python -m eval locomo", args.data, f"{exc}. {LOCOMO}")
    conversations = pool[: args.conversations] if args.conversations else pool
    questions = sum(len(c.questions) for c in conversations)
    answerable = sum(q.category in ANSWERABLE for c in conversations for q in c.questions)
    say(f"locomo: {len(conversations)} conversations, {questions} questions from {args.data}")
    try:
        tuning = tuning_of(args.tuning)
    except (TypeError, ValueError) as exc:
        parser().error(str(exc))
    # fails early on a bad --retriever
    all_specs = runner.specs(args.budgets, args.retriever, tuning)

    plan = runner.Plan(
        data=args.data,
        conversations=args.conversations,
        budgets=tuple(args.budgets),
        live_budgets=() if args.no_live else tuple(args.live_budgets or args.budgets),
        external_budgets=() if args.no_external else tuple(args.budgets),
        retriever=args.retriever,
        tuning=tuning,
    )
    t = time.perf_counter()
    done = runner.execute(plan, args.jobs, progress=progress)
    timings["offline+live+external"] = time.perf_counter() - t

    answer_rows: list[dict[str, Any]] = []
    if args.answer_model:
        t = time.perf_counter()
        wanted = {tuple(s.split(":", 1)) for s in args.answer_systems.split(",") if s}
        budgets = args.answer_budgets or args.budgets
        chosen = [s for s in all_specs if (s.system, s.regime) in wanted and s.budget in budgets]
        if not chosen:
            parser().error(f"--answer-systems {args.answer_systems!r} matches no system:regime")
        run_name = args.run or re.sub(
            r"[^A-Za-z0-9._-]+", "_", f"locomo-{args.answer_model}-{args.judge_model}"
        )
        records = answer.run(
            chosen,
            conversations,
            ChatClient.from_env(timeout=args.timeout),
            answer_model=args.answer_model,
            judge_model=args.judge_model,
            results=args.results / f"{run_name}.jsonl",
            progress=progress,
        )
        answer_rows = answer.summarise(records)
        timings["answers"] = time.perf_counter() - t

    timings["total"] = time.perf_counter() - started
    result = {
        "meta": {
            "command": "python -m eval locomo "
            + shlex.join(sys.argv[2:] if argv is None else argv),
            "commit": _commit(),
            "data": str(args.data),
            "conversations": len(conversations),
            "questions": questions,
            "answerable": answerable,
            "budgets": args.budgets,
            "python": platform.python_version(),
            "jobs": args.jobs,
            "seconds": {k: round(v, 2) for k, v in timings.items()},
            "task_seconds": done.seconds,  # per kind, measured only when --jobs 1
        },
        "rows": offline.rows(done.scored),
        "live": done.live,
        "external": done.external,
        "answers": answer_rows,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "locomo.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (args.out / "locomo.md").write_text(report.markdown(result), encoding="utf-8")
    say(f"locomo: wrote {args.out / 'locomo.json'} and locomo.md in {timings['total']:.1f} s")
    return 0
