"""The command line: round trips through export and import, exit codes, quiet closed pipes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import yait_byheart
from yait_byheart.cli import main
from yait_byheart.cli._io import Progress
from yait_byheart.store import SQLiteStore

ROOT = str(Path(__file__).resolve().parents[1])
ENV = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}


def run(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "yait_byheart", *args],
        capture_output=True, text=True, env=ENV, timeout=120, **kw,
    )  # fmt: skip


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def store(tmp_path: Path) -> str:
    path = str(tmp_path / "chats.db")
    with SQLiteStore(path) as s:
        mem = s.open("bakery", user="ana", budget=300)
        for i in range(12):
            mem.append("user", f"question {i}: how many loaves on day {i}?", when="3 March 2025")
            mem.append(
                "assistant", f"answer {i}: {i * 10} loaves, baked yesterday", when="3 March 2025"
            )
        mem.redact(3)
        mem.compose("how many loaves on day 7?")
        s.open("garden", user="ben").append("user", "tomatoes in the south bed", when="9 May 2023")
    return path


def test_version_prints_the_package_version() -> None:
    proc = run("--version")
    assert proc.returncode == 0 and yait_byheart.__version__ in proc.stdout


def test_export_then_import_round_trips_a_conversation(
    store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "bakery.json"
    assert cli(capsys, "export", "--store", store, "bakery", "-o", str(file)) == (0, "", "")
    other = str(tmp_path / "other.db")
    code, out, err = cli(capsys, "import", "--store", other, "copy", str(file), "--user", "ana")
    assert code == 0 and "imported 24 turns" in out and err == ""
    code, out, _ = cli(capsys, "export", "--store", other, "copy")
    assert code == 0 and json.loads(out) == json.loads(file.read_text(encoding="utf-8"))
    with SQLiteStore(store) as a, SQLiteStore(other) as b:
        assert b.export("copy") == a.export("bakery")  # turns, redaction, settings, sticky state
        assert b.conversations(user="ana") == ["copy"]
        assert b.open("copy").compose("loaves on day 5?") == a.open("bakery").compose(
            "loaves on day 5?"
        )


def test_import_reads_stdin(store: str, tmp_path: Path) -> None:
    exported = run("export", "--store", store, "garden").stdout
    proc = run("import", "--store", store, "garden-2", "-", input=exported)
    assert proc.returncode == 0, proc.stderr
    assert (
        run("show", "--store", store, "garden-2").stdout
        == run("show", "--store", store, "garden").stdout
    )


def test_listing_showing_composing_and_stats(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "conversations", "--store", store) == (0, "bakery\ngarden\n", "")
    assert cli(capsys, "--store", store, "conversations", "--user", "ben")[1] == "garden\n"
    assert json.loads(cli(capsys, "conversations", "--store", store, "--json")[1]) == [
        "bakery",
        "garden",
    ]
    code, out, _ = cli(capsys, "show", "--store", store, "bakery")
    assert code == 0 and "#0 user [3 March 2025]\nquestion 0: how many loaves on day 0?" in out
    assert "#3 assistant [3 March 2025]\n(redacted)" in out and "answer 1:" not in out
    with SQLiteStore(store) as s:
        before = s.export("bakery")
    code, out, _ = cli(
        capsys, "compose", "--store", store, "bakery", "loaves on day 9?", "--budget", "400"
    )
    assert code == 0 and "question 9: how many loaves on day 9?" in out and "stable_upto" in out
    with SQLiteStore(store) as s:
        assert s.export("bakery") == before  # inspecting changed nothing stored
    stats = json.loads(cli(capsys, "stats", "--store", store, "bakery", "--json")[1])
    assert stats["turns"] == 24 and stats["redactions"] == 1
    assert cli(capsys, "stats", "--store", store)[1].startswith("conversations: 2\n")


def test_delete_and_delete_user(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys, "delete", "--store", store, "bakery")[:2] == (0, "deleted 'bakery'\n")
    assert cli(capsys, "delete-user", "--store", store, "ben")[:2] == (
        0, "deleted 1 conversation of user 'ben'\n",
    )  # fmt: skip
    with SQLiteStore(store) as s:
        assert s.conversations() == []


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["show", "ghost"], 1, "no conversation 'ghost'"),
        (["export", "ghost"], 1, "no conversation 'ghost'"),
        (["compose", "ghost", "hi"], 1, "no conversation 'ghost'"),
        (["delete", "ghost"], 1, "no conversation 'ghost'"),
        (["stats", "ghost"], 1, "no conversation 'ghost'"),
        (["delete-user", "nobody"], 1, "no conversations of user 'nobody'"),
        (["compose", "bakery", "  "], 2, "the query is blank"),
    ],
)
def test_not_found_and_usage_exit_codes(
    store: str, capsys: pytest.CaptureFixture[str], args: list[str], code: int, message: str
) -> None:
    got, out, err = cli(capsys, "--store", store, *args)
    assert (got, out) == (code, "") and message in err and "Traceback" not in err


def test_store_errors(tmp_path: Path, store: str, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.db"
    code, _, err = cli(capsys, "conversations", "--store", str(missing))
    assert code == 1 and "no store at" in err and not missing.exists()
    text = tmp_path / "notes.txt"
    text.write_text("not a store\n")
    assert cli(capsys, "conversations", "--store", str(text))[0] == 3
    assert text.read_text() == "not a store\n"
    os.environ.pop("BYHEART_STORE", None)
    assert cli(capsys, "conversations")[0] == 2
    assert cli(capsys, "import", "--store", store, "bakery", str(text))[0] == 1  # not JSON
    dump = tmp_path / "garden.json"
    assert cli(capsys, "export", "--store", store, "garden", "-o", str(dump))[0] == 0
    code, _, err = cli(capsys, "import", "--store", store, "garden", str(dump))
    assert code == 1 and "already exists" in err


def test_usage_errors_exit_2_without_a_traceback() -> None:
    proc = run("demo", "--budget", "0")
    assert proc.returncode == 2 and "--budget" in proc.stderr and "Traceback" not in proc.stderr
    assert run("frobnicate").returncode == 2
    assert run().returncode == 2


@pytest.mark.parametrize("args", [["demo"], ["export", "bakery"], ["show", "bakery"]])
def test_a_closed_pipe_ends_quietly(store: str, args: list[str]) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write fails
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "yait_byheart", "--store", store, *args],
            stdout=write, stderr=subprocess.PIPE, env=ENV, timeout=120,
        )  # fmt: skip
    finally:
        os.close(write)
    assert proc.returncode == 0 and proc.stderr == b""


def test_demo_still_shows_the_cache_breakpoint() -> None:
    proc = run("demo")
    assert proc.returncode == 0 and "cache breakpoint" in proc.stdout


def test_progress_only_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    quiet, loud = io.StringIO(), Tty()
    for stream in (quiet, loud):
        p = Progress(stream, after=0.0)
        p.update("reading 50 %")
        p.done("imported 3 turns")
    assert quiet.getvalue() == ""
    assert "reading 50 %" in loud.getvalue() and loud.getvalue().endswith("s)\x1b[K\n")


def test_the_byheart_console_script_runs_main() -> None:
    tomllib = pytest.importorskip("tomllib")
    with open(Path(ROOT) / "pyproject.toml", "rb") as f:
        target = tomllib.load(f)["project"]["scripts"]["byheart"]
    module, _, name = target.partition(":")
    assert getattr(__import__(module, fromlist=[name]), name) is main


def test_conversation_ids_print_one_per_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An id holding a line break (or a NUL) is printed escaped, on its one line; --json is
    exact."""
    path = str(tmp_path / "ids.db")
    ids = ["plain", "two\nlines", "nul\x00byte", "tab\there"]
    with SQLiteStore(path) as s:
        for name in ids:
            s.open(name)
    code, out, _ = cli(capsys, "conversations", "--store", path)
    assert code == 0
    assert out.splitlines() == ["'nul\\x00byte'", "plain", "'tab\\there'", "'two\\nlines'"]
    code, out, _ = cli(capsys, "conversations", "--store", path, "--json")
    assert json.loads(out) == sorted(ids)
