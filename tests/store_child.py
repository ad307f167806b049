"""A child process for tests/test_store.py: appends numbered turns through a store.

    python tests/store_child.py BACKEND LOCATION SCHEMA CONVERSATION START COUNT [PAUSE_AT]

BACKEND is ``sqlite`` (LOCATION a file) or ``postgres`` (LOCATION a DSN, SCHEMA its schema).
Turn ``i`` has the text ``turn_text(CONVERSATION, i)``; after each append returns (so after it
is committed) the child prints ``i`` on its own line, which is what the parent counts as
acknowledged.  With PAUSE_AT it prints ``paused`` after that many turns and waits for a line on
stdin before going on.  It starts at turn START of an existing conversation (0 for a new one).
"""

from __future__ import annotations

import sys

WORDS = ("budget", "pricing", "garden", "marathon", "cello", "lisbon", "invoice", "rain",
         "ferry", "quartz", "lantern", "orchid")  # fmt: skip


def turn_text(conversation: str, i: int) -> str:
    """The deterministic text of turn ``i``, so the parent knows what each row must hold.

    >>> turn_text("c", 13)
    'c turn 13: rain ferry quartz lantern'
    """
    words = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(6, 10))
    return f"{conversation} turn {i}: {words}"


def main(argv: list[str]) -> None:
    from yait_byheart.store import PostgresStore, SQLiteStore

    backend, location, schema, conversation, start, count = argv[:6]
    pause_at = int(argv[6]) if len(argv) > 6 else -1
    store = SQLiteStore(location) if backend == "sqlite" else PostgresStore(location, schema=schema)
    mem = store.open(conversation, budget=2_000)
    if len(mem) != int(start):
        print(f"expected {start} stored turns, found {len(mem)}", file=sys.stderr)
        sys.exit(2)
    print("ready", flush=True)
    for i in range(int(start), int(start) + int(count)):
        if i == pause_at:
            print("paused", flush=True)
            sys.stdin.readline()
        mem.append("user" if i % 2 == 0 else "assistant", turn_text(conversation, i))
        print(i, flush=True)
    store.close()


if __name__ == "__main__":
    main(sys.argv[1:])
