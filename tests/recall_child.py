"""A child process for tests/test_store_recall.py: runs store operations from the command line.

    python tests/recall_child.py BACKEND LOCATION SCHEMA OPS_JSON

OPS_JSON is a list of operations, each a list: ``["append", conversation, user, role, text]``,
``["redact", conversation, index]``, ``["delete", conversation]``, ``["delete_user", user]``,
``["recall", user, query]`` (prints the recalled passages as one JSON line) or
``["wait"]`` (prints ``waiting`` and reads a line from stdin before going on).  Prints ``done``
at the end; every operation runs in this process, through its own store object.
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> None:
    from yait_byheart.store import PostgresStore, SQLiteStore, _user_kept

    if os.environ.get("BYHEART_TEST_SAVE_AFTER"):  # a test's: the kept pieces saved sooner
        _user_kept.SAVE_AFTER = int(os.environ["BYHEART_TEST_SAVE_AFTER"])
    backend, location, schema, ops = argv[:4]
    store = SQLiteStore(location) if backend == "sqlite" else PostgresStore(location, schema=schema)
    for op, *args in json.loads(ops):
        if op == "append":
            conversation, user, role, text = args
            store.open(conversation, user=user).append(role, text)
        elif op == "redact":
            store.open(args[0]).redact(int(args[1]))
        elif op == "delete":
            store.delete(args[0])
        elif op == "delete_user":
            store.delete_user(args[0])
        elif op == "recall":
            print(json.dumps(store.recall(args[1], user=args[0], budget=100_000)), flush=True)
        elif op == "wait":
            print("waiting", flush=True)
            sys.stdin.readline()
        else:
            raise SystemExit(f"unknown operation {op!r}")
    store.close()
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
