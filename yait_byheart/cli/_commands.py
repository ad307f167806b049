"""The command line's subcommands: each takes the parsed arguments and returns an exit code."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Callable
from typing import Any

from ..providers._show import messages_text, shown_id, summary_line, turns_text
from ..store import (
    Damage,
    DamagedRowError,
    Recalled,
    StoreConflictError,
    StoreError,
    UnknownConversationError,
)
from ..store._failures import salvage_advice
from ._demo import demo
from ._io import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_STORE,
    EXIT_USAGE,
    CliError,
    Progress,
    Store,
    open_store,
    read_bytes,
    store_location,
    write_text,
)

Command = Callable[[argparse.Namespace], int]
# Turns past which storing an import takes seconds (indexing them for the snapshot): say so.
_LONG_IMPORT = 20_000


def _store(args: argparse.Namespace, *, create: bool = False) -> Store:
    return open_store(store_location(args), create=create, timeout=getattr(args, "timeout", None))


def _export(store: Store, conversation: str) -> dict[str, Any]:
    return store.export(conversation)  # UnknownConversationError: see _failing_cleanly


def _print_json(obj: object) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2))


def run_demo(args: argparse.Namespace) -> int:
    demo(args.budget, args.width, sys.stdout)
    return EXIT_OK


def run_conversations(args: argparse.Namespace) -> int:
    with _store(args) as store:
        names = store.conversations(user=args.user or None)
    if args.json:
        _print_json(names)
    elif names:
        # One id per line: an id holding a line break or a control character is escaped.
        print("\n".join(shown_id(name) for name in names))
    return EXIT_OK


def run_show(args: argparse.Namespace) -> int:
    with _store(args) as store:
        turns = _export(store, args.conversation)["turns"]
    if args.json:
        _print_json(turns)
    elif turns:
        print(turns_text(turns))
    return EXIT_OK


def run_compose(args: argparse.Namespace) -> int:
    if not args.query.strip():
        raise CliError("the query is blank; pass the user's new message", EXIT_USAGE)
    settings = {} if args.budget is None else {"budget": args.budget}
    with _store(args) as store:
        mem = store.open(args.conversation, create=False, **settings)  # unknown: as _export
        # Unbound: inspecting must not move the sticky selection the application relies on.
        mem.attach_journal(None)
    result = mem.compose(args.query, when=args.when)
    if args.json:
        _print_json(result)
    else:
        print(summary_line(result))
        print(messages_text(result["messages"], stable_upto=result["stable_upto"]))
    return EXIT_OK


def run_recall(args: argparse.Namespace) -> int:
    if not args.query.strip():
        raise CliError("the query is blank; pass the question to recall for", EXIT_USAGE)
    with _store(args) as store:
        found = store.recall(
            args.query, user=args.user, budget=args.budget, exclude=args.exclude or (),
            when=args.when,
        )  # fmt: skip
    if args.json:
        _print_json(found)
    elif found:
        print(recalled_text(found))
    else:
        print(f"nothing of user {args.user!r} matches")
    return EXIT_OK


def recalled_text(found: list[Recalled]) -> str:
    """Recalled passages for a reader: a heading naming each one's conversation and date."""
    blocks = []
    for r in found:
        when = f", {r['when']}" if r["when"] else ""
        turns = r["turns"]
        where = f"turn {turns[0]}" if len(turns) == 1 else f"turns {turns[0]}-{turns[-1]}"
        blocks.append(f"== {r['conversation']}{when}, {where}\n{r['text']}")
    return "\n\n".join(blocks)


def run_export(args: argparse.Namespace) -> int:
    progress = Progress()
    with _store(args) as store:
        progress.update(f"reading {args.conversation!r} from the store")
        data = _export(store, args.conversation)
    text = json.dumps(data, ensure_ascii=False, indent=args.indent) + "\n"
    write_text(text, args.output, progress)
    progress.done(f"exported {len(data['turns']):,} turns")
    return EXIT_OK


def run_import(args: argparse.Namespace) -> int:
    progress = Progress()
    raw = read_bytes(args.file, progress)
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CliError(f"{args.file}: not JSON ({exc}); pass a file written by export") from None
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
        raise CliError(f"{args.file}: not a conversation (no 'turns' list); pass export's output")
    with _store(args, create=True) as store:
        n = len(data["turns"])
        progress.update(f"storing {n:,} turns", now=n >= _LONG_IMPORT)
        try:
            store.import_(args.conversation, data, user=args.user or None)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    progress.done(f"imported {len(data['turns']):,} turns")
    print(f"imported {len(data['turns']):,} turns as {args.conversation!r}")
    return EXIT_OK


def run_delete(args: argparse.Namespace) -> int:
    with _store(args) as store:
        store.delete(args.conversation)
    print(f"deleted {args.conversation!r}")
    return EXIT_OK


def run_delete_user(args: argparse.Namespace) -> int:
    with _store(args) as store:
        n = store.delete_user(args.user)
    if n == 0:
        raise CliError(f"no conversations of user {args.user!r}; nothing was deleted")
    print(f"deleted {n} conversation{'s' if n != 1 else ''} of user {args.user!r}")
    return EXIT_OK


def run_stats(args: argparse.Namespace) -> int:
    location = store_location(args)
    with open_store(location, create=False, timeout=getattr(args, "timeout", None)) as store:
        if args.conversation is None:
            stats: dict[str, Any] = {"conversations": len(store.conversations())}
            if os.path.exists(location):
                stats["bytes"] = sum(
                    os.path.getsize(p) for p in (location, location + "-wal") if os.path.exists(p)
                )
        else:
            stats = dict(store.open(args.conversation, create=False).stats)
    if args.json:
        _print_json(stats)
    else:
        print("\n".join(f"{key}: {value}" for key, value in stats.items()))
    return EXIT_OK


def _damage_line(damage: Damage) -> str:
    where = damage.table if damage.row is None else f"{damage.table} row {damage.row}"
    if not damage.conversation:
        return f"{where}: {damage.problem}"
    return f"{damage.conversation!r}: {where}: {damage.problem}"


def _check_summary(found: list[Damage], location: str) -> str:
    """What to do about the damage `check` found."""
    if any(d.table == "file" for d in found):
        # A damaged file is past what `repair` does (set rows aside): its pages are broken.
        return (
            f"the database file is damaged; `repair` cannot mend a file: {salvage_advice(location)}"
        )
    rows = f"{len(found)} damaged row{'s' if len(found) != 1 else ''}"
    return f"{rows}; `repair` sets them aside (kept) so their conversations open"


def run_check(args: argparse.Namespace) -> int:
    with _store(args) as store:
        found = store.check()
        checked = None if found else len(store.conversations())
    if args.json:
        _print_json([d._asdict() for d in found])
    elif found:
        print("\n".join(_damage_line(d) for d in found))
        print(_check_summary(found, store_location(args)))
    else:
        print(f"no damaged rows in {checked} conversation{'s' if checked != 1 else ''}")
    return EXIT_FAILED if found else EXIT_OK


def run_repair(args: argparse.Namespace) -> int:
    with _store(args) as store:
        found = store.repair()
    for damage in found:
        print(f"set aside {_damage_line(damage)}")
    if not found:
        print("nothing to repair: no damaged rows")
    return EXIT_OK


def run_salvage(args: argparse.Namespace) -> int:
    with _store(args, create=True) as store:
        copied = store.salvage(args.damaged)
    if args.json:
        _print_json([c._asdict() for c in copied])
    for c in [] if args.json else copied:
        lost = f"; lost turns {_ranges(c.lost)} (stored blank)" if c.lost else ""
        settings = "; its settings did not read (stored with the defaults)" * c.settings_lost
        print(f"{shown_id(c.conversation)}: {c.turns:,} turns copied{lost}{settings}")
    if not copied:
        raise CliError(f"{args.damaged}: no conversation in it still reads; restore a backup")
    return EXIT_FAILED if any(c.lost or c.settings_lost for c in copied) else EXIT_OK


def _ranges(indexes: list[int]) -> str:
    """Turn indexes as runs: 3, 7-9."""
    runs: list[list[int]] = []
    for i in indexes:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def run_mcp(args: argparse.Namespace) -> int:
    from ..mcp_server import serve  # the server's modules load only for this command

    with _store(args, create=True) as store:
        return serve(store, budget=args.budget, max_text=args.max_text, user=args.user)


def _failing_cleanly(run: Command) -> Command:
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except (StoreConflictError, DamagedRowError) as exc:
            raise CliError(str(exc), EXIT_FAILED) from None
        except StoreError as exc:  # the database failed: damaged, read-only, full, locked, lost
            raise CliError(str(exc), EXIT_STORE) from None
        except UnknownConversationError:
            # The store's message names its Python call; a shell user needs the command.
            where = shlex.quote(store_location(args))
            prog = getattr(args, "prog", "byheart")
            raise CliError(
                f"no conversation {args.conversation!r} in the store {where}; "
                f"`{prog} conversations --store {where}` lists the stored ids",
                EXIT_FAILED,
            ) from None
        except ValueError as exc:  # e.g. a conversation stored with callables: say it, once
            raise CliError(str(exc), EXIT_FAILED) from None

    return wrapped


COMMANDS: dict[str, Command] = {
    name: _failing_cleanly(fn)
    for name, fn in {
        "demo": run_demo,
        "conversations": run_conversations,
        "show": run_show,
        "compose": run_compose,
        "recall": run_recall,
        "export": run_export,
        "import": run_import,
        "delete": run_delete,
        "delete-user": run_delete_user,
        "stats": run_stats,
        "check": run_check,
        "repair": run_repair,
        "salvage": run_salvage,
        "mcp": run_mcp,
    }.items()
}
