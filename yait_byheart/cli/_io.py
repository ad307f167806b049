"""What the command line's subcommands share: exit codes, errors, opening a store, progress."""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import time
from typing import TextIO

from ..store import PostgresStore, SQLiteStore, StoreError

EXIT_OK = 0
EXIT_FAILED = 1  # not found, or the operation failed
EXIT_USAGE = 2  # argparse's own code for bad arguments
EXIT_STORE = 3  # the store cannot be opened
EXIT_INTERRUPTED = 130  # the shell's code for Ctrl-C

Store = SQLiteStore | PostgresStore
_DSN_PREFIXES = ("postgresql://", "postgres://")


class CliError(Exception):
    """A failure to report in one line on stderr, with its exit code."""

    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


def store_location(args: argparse.Namespace) -> str:
    """``--store`` (after or before the subcommand), else ``$BYHEART_STORE``."""
    location = getattr(args, "store", None) or os.environ.get("BYHEART_STORE", "")
    if not location:
        raise CliError("no store given; pass --store PATH (or set BYHEART_STORE)", EXIT_USAGE)
    location = str(location)
    # An MCP host's config passes "~/chats.db" to us with no shell to expand the "~".
    return location if location.startswith(_DSN_PREFIXES) else os.path.expanduser(location)


def open_store(location: str, *, create: bool, timeout: float | None = None) -> Store:
    """The store at `location` (a SQLite path or a postgresql:// DSN).

    With ``create=False`` a missing SQLite file, or an empty one, is reported (exit 1)
    instead of being made into a store.
    `timeout` (seconds; None: the store's default): how long a SQLite write waits for another
    process's lock, or how long PostgreSQL's connection may take.
    """
    if location.startswith(_DSN_PREFIXES):
        try:
            return PostgresStore(location, connect_timeout=10.0 if timeout is None else timeout)
        except (ImportError, StoreError) as exc:
            raise CliError(str(exc), EXIT_STORE) from None
        except Exception as exc:  # psycopg's connection errors; psycopg is optional
            raise CliError(f"cannot open the PostgreSQL store: {exc}", EXIT_STORE) from None
    if not create:
        _check_exists(location)
    try:
        return SQLiteStore(location, timeout=5.0 if timeout is None else timeout)
    except (ValueError, TypeError, OSError, sqlite3.Error, StoreError) as exc:
        raise CliError(str(exc), EXIT_STORE) from None


def _check_exists(path: str) -> None:
    """A read command's store must already be one: a missing file is not created, and an
    empty one (0 bytes: a store truncated by a failed copy, or a file made by `touch`) is not
    silently made into a new store either."""
    if not os.path.exists(path):
        raise CliError(f"no store at {path!r} (nothing was created); check the path")
    if os.path.isfile(path) and os.path.getsize(path) == 0:
        raise CliError(
            f"no store at {path!r}: the file is empty (0 bytes), and it was left so; if it "
            f"held a store, restore it from a backup; else check the path"
        )


class Progress:
    """Status on one stderr line, only on a terminal and only once a step has taken a while.

    Short operations print nothing; a pipe or file as stderr never gets progress.
    """

    def __init__(self, stream: TextIO | None = None, *, after: float = 0.5) -> None:
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(isatty and isatty())
        self.after = after
        self.start = time.monotonic()
        self.shown = False

    def update(self, message: str, *, now: bool = False) -> None:
        """Show `message` (replacing the last one) once the operation has run `after` seconds.

        ``now=True`` shows it at once: the step that follows is known to be long.
        """
        if self.enabled and (now or time.monotonic() - self.start >= self.after):
            self.stream.write(f"\r{message}\x1b[K")
            self.stream.flush()
            self.shown = True

    def done(self, message: str) -> None:
        """End the status line with `message`, if a status was shown at all."""
        if self.shown:
            self.stream.write(f"\r{message} ({time.monotonic() - self.start:.1f} s)\x1b[K\n")
            self.stream.flush()


def read_bytes(path: str, progress: Progress) -> bytes:
    """The file's bytes (``-``: stdin), reading in 1 MiB blocks with progress."""
    block = 1 << 20
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            chunks = []
            while chunk := f.read(block):
                chunks.append(chunk)
                got = len(chunks) * block
                progress.update(f"reading {path}: {min(100, 100 * got // max(size, 1))} %")
            return b"".join(chunks)
    except OSError as exc:
        raise CliError(f"cannot read {path!r}: {exc.strerror or exc}") from None


def write_text(text: str, path: str | None, progress: Progress) -> None:
    """`text` to the file at `path` (None: stdout), in 1 MiB pieces with progress."""
    block = 1 << 20
    try:
        out = sys.stdout if path is None else open(path, "w", encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise CliError(f"cannot write {path!r}: {exc.strerror or exc}") from None
    try:
        for at in range(0, len(text), block):
            out.write(text[at : at + block])
            progress.update(f"writing: {min(100, 100 * (at + block) // len(text))} %")
        out.flush()
    finally:
        if out is not sys.stdout:
            out.close()
