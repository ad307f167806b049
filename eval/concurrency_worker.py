"""A writer process for eval/bench_concurrency.py and tests/test_store_concurrency.py.

    python -m eval.concurrency_worker BACKEND LOCATION SCHEMA CONVERSATION WRITER OPS MIX [FIRST]

Opens CONVERSATION (``sqlite``: LOCATION a file; ``postgres``: LOCATION a DSN, SCHEMA its
schema), prints ``ready`` and waits for a line on stdin (so that every writer starts at once),
then runs OPS operations: appends (a share MIX of them, 0-1, spread evenly) and composes.  Each
append of operation ``i`` (from FIRST, default 0) has the text ``writer_text(WRITER, i)`` and
the key ``WRITER-i``; once it returned (committed) the child prints ``a i INDEX``.  A compose
prints ``c``; an error prints ``e`` and the error on one line, and the child goes on.  At the
end it prints ``done SECONDS`` (the time the operations took).
"""

from __future__ import annotations

import sys
import time


def writer_text(writer: str, i: int) -> str:
    """The text of writer `writer`'s append number `i`: unique, and words a query can find.

    >>> writer_text("w2", 7)
    'w2 says 7: the ferry to Lisbon leaves at 7 and the lantern stays lit'
    """
    return f"{writer} says {i}: the ferry to Lisbon leaves at {i % 24} and the lantern stays lit"


def is_append(i: int, mix: float) -> bool:
    """Whether operation `i` appends: a share `mix` of operations, spread evenly."""
    return int((i + 1) * mix) > int(i * mix)


def main(argv: list[str]) -> int:
    from yait_byheart.store import PostgresStore, SQLiteStore

    backend, location, schema, conversation, writer, ops, mix = argv[:7]
    first = int(argv[7]) if len(argv) > 7 else 0
    store = SQLiteStore(location) if backend == "sqlite" else PostgresStore(location, schema=schema)
    mem = store.open(conversation, budget=2_000)
    print("ready", flush=True)
    sys.stdin.readline()
    start = time.perf_counter()
    for i in range(first, first + int(ops)):
        try:
            if is_append(i, float(mix)):
                index = mem.append("user", writer_text(writer, i), key=f"{writer}-{i}")
                print("a", i, index, flush=True)
            else:
                mem.compose(f"when does the ferry leave at {i % 24}?")
                print("c", flush=True)
        except Exception as exc:  # counted by the parent: every error is a finding
            print("e", type(exc).__name__, str(exc).replace("\n", " "), flush=True)
    print("done", time.perf_counter() - start, flush=True)
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
