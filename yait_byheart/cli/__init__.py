"""The ``byheart`` command line (also ``python -m yait_byheart``).

Exit codes: 0 done; 1 not found (conversation, user, store file), the operation failed, or a
stored row is damaged (``check`` found one, or a damaged file; others name it: ``repair`` sets
a row aside); 2 usage error (bad arguments); 3 the store cannot be opened or used (not a
byheart store, newer schema, no database driver or connection, a damaged file, read-only,
full, locked past its timeout, the connection lost); 130 interrupted.  A reader that stops
early (``| head``, ``| grep -q``) is not an error: the command ends quietly with 0.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import warnings
from collections.abc import Callable, Sequence

from .. import __version__
from .._compose.checks import MAX_SIZE
from .._dates.resolve import parse_when
from ._commands import COMMANDS
from ._io import EXIT_INTERRUPTED, EXIT_OK, CliError

__all__ = ["main"]

# A lock or a connection waited for longer than a day is a hung command, not a timeout.
_MAX_WAIT = 86_400


def positive_int(text: str) -> int:
    """An argparse type: a whole number from 1 to `MAX_SIZE` (underscores and commas allowed:
    20_000, 20,000)."""
    try:
        value = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1 (e.g. 1200)")
    if value > MAX_SIZE:  # the API's own bound, said as a usage error rather than a bad config
        raise argparse.ArgumentTypeError(
            f"{text!r} is out of range; use a whole number from 1 to {MAX_SIZE:,}"
        )
    return value


def seconds(text: str) -> float:
    """An argparse type: a finite number of seconds >= 0 (e.g. 30 or 0.5)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (math.isfinite(value) and 0 <= value <= _MAX_WAIT):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of seconds from 0 to {_MAX_WAIT:,} (e.g. 30)"
        )
    return value


def an_id(text: str) -> str:
    """An argparse type: a conversation or user id, a non-empty string (as the store's calls
    require one)."""
    if not text:
        raise argparse.ArgumentTypeError("the id is empty; pass a non-empty id")
    return text


def a_date(text: str) -> str:
    """An argparse type: a date `parse_when` reads, as `recall` and `compose` take it."""
    if not text.strip():
        return ""  # undated, as the API's when=""
    if parse_when(text) is None:
        raise argparse.ArgumentTypeError(
            f"cannot read a date in {text!r}; pass e.g. '8 May 2023', '8. Mai 2023', "
            "'2023年5月8日' or an ISO date (2023-05-08)"
        )
    return text


_Adder = Callable[..., argparse.ArgumentParser]  # (name, help, *parents): a subcommand's parser


def _subcommands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Every subcommand, in the order `--help` lists them."""
    store, as_json = _shared_options()

    def add(name: str, help_: str, *parents: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_, parents=list(parents))
        p.set_defaults(command=name)
        return p

    _reading_commands(add, store, as_json)
    _writing_commands(add, store)
    _upkeep_commands(add, store, as_json)


def _shared_options() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The options of every command that opens a store, and of those that can print JSON."""
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument(
        "--store",
        default=argparse.SUPPRESS,
        metavar="PATH",
        help="SQLite file, or a postgresql:// DSN (default: $BYHEART_STORE)",
    )
    store.add_argument(
        "--timeout",
        type=seconds,
        default=argparse.SUPPRESS,
        metavar="SECONDS",
        help="how long to wait for another process's write lock (SQLite; default 5) or for the "
        "server to connect (PostgreSQL; default 10)",
    )
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print JSON instead of text")
    return store, as_json


def _reading_commands(
    add: _Adder, store: argparse.ArgumentParser, as_json: argparse.ArgumentParser
) -> None:
    """The demo, and the commands that read a store without changing it."""
    d = add("demo", "replay a short shipped conversation and show what compose sends")
    d.add_argument("--budget", type=positive_int, default=1_200, help="characters (default 1200)")
    d.add_argument("--width", type=int, default=100, help="wrap at this width (0: do not wrap)")
    add("conversations", "list the stored conversation ids", store, as_json).add_argument(
        "--user", type=an_id, help="only this user's conversations"
    )
    add("show", "print a conversation's turns", store, as_json).add_argument(
        "conversation", type=an_id
    )
    c = add("compose", "print what compose would send (the stored state is not changed)", store)
    c.add_argument("conversation", type=an_id)
    c.add_argument("query")
    c.add_argument("--budget", type=positive_int, help="characters (default: the stored budget)")
    c.add_argument("--when", type=a_date, default="", help="when the query is asked")
    c.add_argument("--json", action="store_true", help="print compose's result as JSON")
    r = add("recall", "print what a user said in their stored conversations about a query", store)
    r.add_argument("query")
    r.add_argument(
        "--user", type=an_id, required=True, help="whose conversations (only theirs are read)"
    )
    r.add_argument(
        "--exclude", type=an_id, action="append", metavar="CONVERSATION", help="leave it out"
    )
    r.add_argument("--budget", type=positive_int, default=6_000, help="characters (default 6000)")
    r.add_argument("--when", type=a_date, default="", help="the date the query's dates are read by")
    r.add_argument("--json", action="store_true", help="print the passages as JSON")


def _writing_commands(add: _Adder, store: argparse.ArgumentParser) -> None:
    """The commands that copy conversations out of a store, into it, or delete them."""
    e = add("export", "write a conversation as JSON (Memory.to_dict())", store)
    e.add_argument("conversation", type=an_id)
    e.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    e.add_argument("--indent", type=int, help="pretty-print with this indent")
    i = add("import", "store a JSON file written by export as a new conversation", store)
    i.add_argument("conversation", type=an_id)
    i.add_argument("file", help="the JSON file; - reads stdin")
    i.add_argument("--user", type=an_id, help="record this user as the conversation's owner")
    add("delete", "delete a conversation (its bytes are overwritten)", store).add_argument(
        "conversation", type=an_id
    )
    add("delete-user", "delete every conversation of a user", store).add_argument(
        "user", type=an_id
    )


def _upkeep_commands(
    add: _Adder, store: argparse.ArgumentParser, as_json: argparse.ArgumentParser
) -> None:
    """The store's counters and repairs, and the MCP server."""
    add("stats", "the store's size, or one conversation's counters", store, as_json).add_argument(
        "conversation", nargs="?", type=an_id
    )
    add("check", "list every stored row that cannot be read (exit 1 if any)", store, as_json)
    add("repair", "set damaged rows aside (kept, never deleted) so the rest opens", store)
    v = add(
        "salvage",
        "copy every turn a damaged store file still holds into a new store (--store); "
        "exit 1 if some did not read",
        store,
        as_json,
    )
    v.add_argument("damaged", help="the damaged SQLite store file (only read)")
    m = add("mcp", "serve the store to MCP hosts over stdio (JSON-RPC lines)", store)
    m.add_argument("--budget", type=positive_int, default=20_000, help="new conversations' budget")
    m.add_argument(
        "--max-text", type=positive_int, default=100_000, help="longest turn remember accepts"
    )
    m.add_argument(
        "--user", type=an_id, help="serve this user's conversations only (default: every user's)"
    )


def build_parser(prog: str) -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="byheart: verbatim conversation memory. Inspect stores, run the MCP server.",
        epilog="exit codes: 0 done, 1 not found, failed or damaged, 2 usage, 3 store cannot be "
        "opened or used",
    )
    parser.add_argument("--version", action="version", version=f"yait-byheart {__version__}")
    parser.add_argument("--store", metavar="PATH", help="as each subcommand's --store")
    parser.add_argument("--timeout", type=seconds, metavar="SECONDS", help="as each subcommand's")
    _subcommands(parser.add_subparsers(title="commands", required=True, metavar="COMMAND"))
    return parser


def _quiet_stdout() -> None:
    # The reader is gone: point stdout at devnull so the final flush at exit cannot fail again.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _warned_once(run: Callable[[argparse.Namespace], int], args: argparse.Namespace,
                 prog: str) -> int:  # fmt: skip
    """`run(args)`, each warning it gives said once on stderr as a line of the command's own
    (a conversation opened without its callables, a store that refuses writes), never as
    Python's warning with a source path."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return run(args)
        finally:
            for message in dict.fromkeys(str(w.message) for w in caught):
                print(f"{prog} {args.command}: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None, prog: str = "byheart") -> int:
    """Run the command line; returns the exit code (see the module docstring).

    Args:
        argv: The arguments after the program name (default None: `sys.argv[1:]`).
        prog: The program name shown in usage and error lines (default "byheart").

    Returns:
        The exit code: 0 done, 1 not found or failed, 3 the store cannot be opened or used, 130
        interrupted. A usage error raises SystemExit(2) from argparse instead.
    """
    args = build_parser(prog).parse_args(argv)  # exits 2 on a usage error
    args.prog = prog  # errors that suggest a command spell it as the user ran this one
    run: Callable[[argparse.Namespace], int] = COMMANDS[args.command]
    try:
        code = _warned_once(run, args, prog)
        sys.stdout.flush()
        return code
    except CliError as exc:
        print(f"{prog} {args.command}: {exc}", file=sys.stderr)
        return exc.code
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_OK
    except KeyboardInterrupt:
        print(f"{prog} {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
