"""Plan the offline, live and outside-knowledge work as small tasks and run them, in parallel.

Tasks are (kind, conversation, setting) triples whose results are plain data, merged in a fixed
order afterwards, so the output does not depend on ``jobs`` or on which worker finished first.
Workers load the data themselves: specs hold closures, which do not cross process boundaries.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.locomo import external, live, offline
from eval.locomo.data import Conversation, load
from eval.locomo.offline import Scored, Spec
from eval.locomo.systems import BASELINES, Byheart, System, load_retriever


def _byheart(
    budget: int, regime: str, retriever: Callable[[], Any] | None = None, name: str = "",
    tuning: Any = None,
) -> Callable[[], System]:  # fmt: skip
    def make() -> System:
        return Byheart(budget=budget, regime=regime, retriever=retriever, retriever_name=name,
                       tuning=tuning)  # fmt: skip

    return make


def _baseline(cls: Callable[[int], System], budget: int) -> Callable[[], System]:
    return lambda: cls(budget)


def specs(budgets: Sequence[int], retriever: str | None, tuning: Any = None) -> list[Spec]:
    """Every system at every budget; baselines once (stateless: each question selects afresh).
    `tuning` (a `yait_byheart.Tuning`) is byheart's, with or without the retriever."""
    out: list[Spec] = []
    for cls in BASELINES:
        name = cls(1).name
        out += [Spec(name, "fresh", b, _baseline(cls, b)) for b in budgets]
    variants: list[tuple[str, Callable[[], Any] | None, str]] = [("byheart", None, "")]
    if retriever:
        loaded, short = load_retriever(retriever)
        variants.append((f"byheart+{short}", loaded, short))
    for name, factory, short in variants:
        for regime in ("fresh", "sticky"):
            out += [
                Spec(name, regime, b, _byheart(b, regime, factory, short, tuning)) for b in budgets
            ]
    return out


@dataclass(frozen=True)
class Plan:
    data: Path
    conversations: int | None  # the first N, or all
    budgets: tuple[int, ...]
    live_budgets: tuple[int, ...]  # empty: no live replay
    external_budgets: tuple[int, ...]  # empty: no outside-knowledge run
    retriever: str | None = None
    tuning: Any = None  # a yait_byheart.Tuning for byheart, or None for the defaults


Task = tuple[str, int, int, str]  # (kind, conversation position, budget, spec key or regime)

# Per-process state, set by _setup (in the parent when jobs == 1, in each worker otherwise).
_STATE: dict[str, Any] = {}


def _setup(plan: Plan) -> None:
    pool = load(plan.data)
    _STATE["pool"] = pool
    _STATE["convs"] = pool[: plan.conversations] if plan.conversations else pool
    _STATE["tuning"] = plan.tuning
    _STATE["specs"] = {
        f"{s.system}|{s.regime}|{s.budget}": s
        for s in specs(plan.budgets, plan.retriever, plan.tuning)
    }


def _do(task: Task) -> Any:
    kind, position, budget, key = task
    conv: Conversation = _STATE["convs"][position]
    if kind == "offline":
        return offline.run([_STATE["specs"][key]], [conv], progress=False)
    if kind == "live":
        return live.replay(conv, budget, key, tuning=_STATE["tuning"])
    if kind == "external":
        return external.measure(conv, _STATE["pool"], budget)
    raise ValueError(f"unknown task kind {kind!r}")


def tasks(plan: Plan, n_convs: int) -> list[Task]:
    """All tasks, the slowest kind first so two workers finish together (external is ~70 %)."""
    out: list[Task] = []
    for budget in plan.external_budgets:
        out += [("external", c, budget, "") for c in range(n_convs)]
    for budget in plan.live_budgets:
        for regime in ("sticky", "fresh"):
            out += [("live", c, budget, regime) for c in range(n_convs)]
    for spec in specs(plan.budgets, plan.retriever, plan.tuning):
        key = f"{spec.system}|{spec.regime}|{spec.budget}"
        out += [("offline", c, spec.budget, key) for c in range(n_convs)]
    return out


@dataclass
class Results:
    scored: list[Scored]
    live: list[dict[str, Any]]
    external: list[dict[str, Any]]
    seconds: dict[str, float]


def execute(plan: Plan, jobs: int = 1, *, progress: bool = True) -> Results:
    _setup(plan)
    n_convs = len(_STATE["convs"])
    todo = tasks(plan, n_convs)
    done: dict[Task, Any] = {}
    spent: dict[str, float] = {}
    started = time.perf_counter()

    def note(task: Task) -> None:
        if progress:
            kind, position, budget, key = task
            conv = _STATE["convs"][position].sample_id
            print(
                f"  [{len(done)}/{len(todo)}] {kind} {key or ''} {budget} {conv} "
                f"({time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
                flush=True,
            )

    if jobs <= 1:
        for task in todo:
            t = time.perf_counter()
            done[task] = _do(task)
            spent[task[0]] = spent.get(task[0], 0.0) + time.perf_counter() - t
            note(task)
    else:
        with ProcessPoolExecutor(max_workers=jobs, initializer=_setup, initargs=(plan,)) as ex:
            running: dict[Future[Any], Task] = {ex.submit(_do, task): task for task in todo}
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished:
                    task = running.pop(fut)
                    done[task] = fut.result()
                    note(task)
    return _merge(plan, n_convs, done, spent)


def _merge(plan: Plan, n_convs: int, done: dict[Task, Any], spent: dict[str, float]) -> Results:
    scored: list[Scored] = []
    for spec in specs(plan.budgets, plan.retriever, plan.tuning):
        key = f"{spec.system}|{spec.regime}|{spec.budget}"
        for c in range(n_convs):
            scored += done[("offline", c, spec.budget, key)]
    live_rows: list[dict[str, Any]] = []
    for budget in plan.live_budgets:
        for regime in ("sticky", "fresh"):
            assembled, every = live.Ledger(), live.Ledger()
            for c in range(n_convs):
                a, e = done[("live", c, budget, regime)]
                assembled.merge(a)
                every.merge(e)
            live_rows += live.records(budget, regime, assembled, every)
    external_rows: list[dict[str, Any]] = []
    for budget in plan.external_budgets:
        junk, needed = external.Tally(), external.Tally()
        for c in range(n_convs):
            j, n = done[("external", c, budget, "")]
            junk.merge(j)
            needed.merge(n)
        external_rows.append(external.summary(budget, junk, needed))
    return Results(scored, live_rows, external_rows, {k: round(v, 2) for k, v in spent.items()})
