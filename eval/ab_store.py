"""A/B of two versions of ``yait_byheart/store.py`` in one process, interleaved.

    python -m eval.ab_store --against OLD/yait_byheart/store.py [--pg "$DSN"]

The machine is shared, so whole benchmark runs minutes apart differ by more than the change
being measured.  This loads the other version's ``store.py`` beside the current one (as a
module of this ``yait_byheart`` package, so both use the same Memory), then alternates them
round by round on one store each: a round times ``--appends`` appends through a bound Memory
and one reopening of an imported ``--turns``-turn conversation.  It prints the median append
and the median reopen over all rounds and the ratio current / other: 1.00 is no change.
Get an older ``store.py`` with ``git show COMMIT:yait_byheart/store.py > /tmp/old_store.py``
(it must be of a commit whose ``memory.py`` matches the current one's interface).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from types import ModuleType
from typing import Any

from eval.bench_store import make_texts, time_appends
from yait_byheart import Memory
from yait_byheart import store as current


def load_other(path: str) -> ModuleType:
    """`path` imported as ``yait_byheart._ab_other_store`` (its relative imports resolve)."""
    spec = importlib.util.spec_from_file_location("yait_byheart._ab_other_store", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def prepare(make: Callable[[], Any], big: dict[str, Any]) -> Any:
    """A store with `big` imported and a bound Memory to append to: (store, memory)."""
    store = make()
    store.import_("big", big)
    return store, store.open("appends", budget=20_000)


def one_round(make: Callable[[], Any], bound: Any, texts: list[str]) -> tuple[list[int], float]:
    """Append `texts` to the bound Memory (ns each) and reopen "big" once (s)."""
    lat = time_appends(bound, texts)
    with make() as store:
        t0 = time.perf_counter()
        store.open("big")
        return lat, time.perf_counter() - t0


def factories(module: ModuleType, tmp: str, dsn: str) -> dict[str, Callable[[], Callable[[], Any]]]:
    """Per backend, a maker of fresh store locations for `module`'s classes."""

    def sqlite() -> Callable[[], Any]:
        path = os.path.join(tmp, uuid.uuid4().hex + ".db")
        return lambda: module.SQLiteStore(path)

    def postgres() -> Callable[[], Any]:
        schema = "ab_" + uuid.uuid4().hex[:10]
        SCHEMAS.append(schema)
        return lambda: module.PostgresStore(dsn, schema=schema)

    return {"SQLite NORMAL": sqlite, **({"PostgreSQL": postgres} if dsn else {})}


SCHEMAS: list[str] = []


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", required=True, help="the other version's store.py")
    parser.add_argument("--turns", type=int, default=20_000)
    parser.add_argument("--appends", type=int, default=300, help="appends per round")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--pg", default=os.environ.get("BYHEART_TEST_PG_DSN", ""))
    args = parser.parse_args(argv)
    other = load_other(args.against)
    source = Memory(budget=20_000)
    for i, text in enumerate(make_texts(args.turns)):
        source.append("user" if i % 2 == 0 else "assistant", text)
    big = source.to_dict()
    print("| store | append, other | current | ratio | reopen, other | current | ratio |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for label in factories(current, tmp, args.pg):
                compare(label, other, tmp, args, big)
        finally:
            drop_schemas(args.pg)


def compare(label: str, other: ModuleType, tmp: str, args: Any, big: dict[str, Any]) -> None:
    """Alternate the two versions round by round on one backend; print one table row."""
    makes = {
        n: factories(m, tmp, args.pg)[label]() for n, m in (("other", other), ("current", current))
    }
    ready = {n: prepare(make, big) for n, make in makes.items()}
    lat: dict[str, list[int]] = {"other": [], "current": []}
    reopen: dict[str, list[float]] = {"other": [], "current": []}
    for k in range(args.rounds):
        texts = make_texts(args.appends, seed=11 + k)
        for name in ("other", "current")[:: 1 if k % 2 else -1]:
            appended, opened = one_round(makes[name], ready[name][1], texts)
            lat[name] += appended
            reopen[name].append(opened)
    for store, _bound in ready.values():
        store.close()
    a, b = (statistics.median(lat[n]) / 1000 for n in ("other", "current"))
    c, d = (statistics.median(reopen[n]) * 1000 for n in ("other", "current"))
    print(
        f"| {label} | {a:.0f} us | {b:.0f} us | {b / a:.2f} "
        f"| {c:.0f} ms | {d:.0f} ms | {d / c:.2f} |"
    )


def drop_schemas(dsn: str) -> None:
    if not SCHEMAS:
        return
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        for schema in SCHEMAS:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


if __name__ == "__main__":
    main()
