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
import os
import sys
from collections.abc import Callable, Sequence

from .. import __version__
from ._commands import COMMANDS
from ._io import EXIT_INTERRUPTED, EXIT_OK, CliError

__all__ = ["main"]


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1 (underscores and commas allowed: 20_000, 20,000)."""
    try:
        value = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1 (e.g. 1200)")
    return value


def _subcommands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument(
        "--store",
        default=argparse.SUPPRESS,
        metavar="PATH",
        help="SQLite file, or a postgresql:// DSN (default: $BYHEART_STORE)",
    )
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print JSON instead of text")

    def add(name: str, help_: str, *parents: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_, parents=list(parents))
        p.set_defaults(command=name)
        return p

    d = add("demo", "replay a short shipped conversation and show what compose sends")
    d.add_argument("--budget", type=positive_int, default=1_200, help="characters (default 1200)")
    d.add_argument("--width", type=int, default=100, help="wrap at this width (0: do not wrap)")
    add("conversations", "list the stored conversation ids", store, as_json).add_argument(
        "--user", help="only this user's conversations"
    )
    add("show", "print a conversation's turns", store, as_json).add_argument("conversation")
    c = add("compose", "print what compose would send (the stored state is not changed)", store)
    c.add_argument("conversation")
    c.add_argument("query")
    c.add_argument("--budget", type=positive_int, help="characters (default: the stored budget)")
    c.add_argument("--json", action="store_true", help="print compose's result as JSON")
    r = add("recall", "print what a user said in their stored conversations about a query", store)
    r.add_argument("query")
    r.add_argument("--user", required=True, help="whose conversations (only theirs are read)")
    r.add_argument("--exclude", action="append", metavar="CONVERSATION", help="leave it out")
    r.add_argument("--budget", type=positive_int, default=6_000, help="characters (default 6000)")
    r.add_argument("--when", help="the date relative dates in the query are read against")
    r.add_argument("--json", action="store_true", help="print the passages as JSON")
    e = add("export", "write a conversation as JSON (Memory.to_dict())", store)
    e.add_argument("conversation")
    e.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    e.add_argument("--indent", type=int, help="pretty-print with this indent")
    i = add("import", "store a JSON file written by export as a new conversation", store)
    i.add_argument("conversation")
    i.add_argument("file", help="the JSON file; - reads stdin")
    i.add_argument("--user", help="record this user as the conversation's owner")
    add("delete", "delete a conversation (its bytes are overwritten)", store).add_argument(
        "conversation"
    )
    add("delete-user", "delete every conversation of a user", store).add_argument("user")
    add("stats", "the store's size, or one conversation's counters", store, as_json).add_argument(
        "conversation", nargs="?"
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
    _subcommands(parser.add_subparsers(title="commands", required=True, metavar="COMMAND"))
    return parser


def _quiet_stdout() -> None:
    # The reader is gone: point stdout at devnull so the final flush at exit cannot fail again.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


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
        code = run(args)
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
