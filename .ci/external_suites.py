"""Run the frameworks' own test suites against byheart's integrations.

- openai-agents: ``tests/memory/test_session.py`` and ``test_session_limit.py`` with every
  ``SQLiteSession(...)`` call turned into a ``ByheartSession`` on a SQLite store
  (``.ci/external/agents_session.py``); then, the same way, the session tests of its runner
  suite, and its compaction tests (``tests/memory/test_compaction_model_visibility.py``,
  ``test_openai_responses_compaction_session.py``) whole;
- langchain-core: ``tests/unit_tests/runnables/test_history.py`` with every
  ``InMemoryChatMessageHistory(...)`` call turned into a store-backed
  ``ByheartChatMessageHistory`` (``.ci/external/langchain_history.py``), under LangChain's own
  blocking-call guard (its ``conftest.py``, blockbuster);
- strands-agents: ``tests/strands/session/test_repository_session_manager.py`` with every
  ``MockedSessionRepository()`` a ``ByheartSessionRepository`` on a SQLite store
  (``.ci/external/strands_repository.py``), from an environment of its own.

google-adk ships its tests in neither its source distribution nor its wheel, so its
session-service contract runs in the main suite instead, written by us in the shape of ADK's
``tests/unittests/sessions/test_session_service.py``
(``tests/test_integration_google_adk_contract.py``).

The test files come from the source distributions of the installed versions (``pip
download``); only the constructor call is rewritten (the script checks that every ``assert``
is still there). Tests of SQLiteSession's internals are skipped as ``.ci/external/skips.txt``
lists them, each with its reason. Usage: ``python .ci/external_suites.py [suite ...]`` (default:
the suites of the dev environment; exit 1 on a failure).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
EXTERNAL = HERE / "external"
# The test runner's plugins the suites rely on (asyncio tests, mocker, the blocking guard),
# installed beside the run, not into the environment.
# cryptography below 51: the Agents SDK's compaction tests patch ``cryptography.fernet.time``,
# and 51 moved Fernet into its Rust core (no module clock left to patch).
PLUGINS = [
    "pytest-asyncio>=1.0", "pytest-mock>=3.10", "blockbuster>=1.5.18,<1.6", "forbiddenfruit",
    "cryptography<51",
]  # fmt: skip

# The SDK's test files whose session tests run against ByheartSession (the runner suite).
RUNNER_SESSION_TESTS = [
    "tests/test_agent_runner.py",
    "tests/test_agent_runner_streamed.py",
    "tests/test_tool_batch_failure_history.py",
    "tests/test_native_tool_failure_history.py",
    "tests/test_run_impl_resume_paths.py",
    "tests/test_max_turns.py",
    "tests/test_soft_cancel.py",
    "tests/test_tool_failure_boundaries.py",
    "tests/test_programmatic_tool_calling.py",
]

# The SDK's compaction tests that run with a SQLite session: all of them, the session they
# wrap a ByheartSession (its ``_get_compaction_snapshot`` gives compaction the retained history).
COMPACTION_TESTS = [
    "tests/memory/test_compaction_model_visibility.py",
    "tests/memory/test_openai_responses_compaction_session.py",
]
AGENTS_INI = (
    "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = session\n"
    "markers =\n    allow_call_model_methods: x\n    requires_native_macos_sandbox: x\n"
    "    review_optional: x\n    serial: x\n"
)

SUITES = {
    "openai-agents": {
        "files": [
            "tests/__init__.py",
            "tests/conftest.py",
            "tests/testing_processor.py",
            "tests/test_responses.py",
            "tests/memory/test_session.py",
            "tests/memory/test_session_limit.py",
        ],
        "rewrite": ["tests/memory/test_session.py", "tests/memory/test_session_limit.py"],
        "call": "SQLiteSession(",
        "factory": "byheart_session(",
        "harness": "agents_session.py",
        "ini": "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = session\n"
        "markers =\n    allow_call_model_methods: x\n    requires_native_macos_sandbox: x\n",
        "run": ["tests/memory/test_session.py", "tests/memory/test_session_limit.py"],
    },
    # The SDK's runner tests that run with a session, on the whole test tree (they use its
    # helpers); only their session tests run (-k).
    "openai-agents runner": {
        "package": "openai-agents",
        "files": ["tests/"],
        "rewrite": RUNNER_SESSION_TESTS,
        "call": "SQLiteSession(",
        "factory": "byheart_session(",
        "harness": "agents_session.py",
        "ini": AGENTS_INI,
        "run": ["-k", "session or Session", *RUNNER_SESSION_TESTS],
    },
    # Its compaction tests, every one (compaction wraps the session in each).
    "openai-agents compaction": {
        "package": "openai-agents",
        "files": ["tests/"],
        "rewrite": COMPACTION_TESTS,
        "call": "SQLiteSession(",
        "factory": "byheart_session(",
        "harness": "agents_session.py",
        "ini": AGENTS_INI,
        "run": COMPACTION_TESTS,
    },
    # Strands' repository session tests with every MockedSessionRepository() a
    # ByheartSessionRepository on a SQLite store. Strands pins an mcp older than the dev
    # extra's, so this suite runs from an environment of its own (.ci/run):
    # `python .ci/external_suites.py strands-agents`.
    "strands-agents": {
        "files": [
            "tests/__init__.py",
            "tests/conftest.py",
            "tests/fixtures/",
            "tests/strands/__init__.py",
            "tests/strands/session/__init__.py",
            "tests/strands/session/test_repository_session_manager.py",
        ],
        "rewrite": ["tests/strands/session/test_repository_session_manager.py"],
        "call": "MockedSessionRepository(",
        "factory": "byheart_repository(",
        "harness": "strands_repository.py",
        "ini": "[pytest]\nasyncio_default_fixture_loop_scope = function\n",
        "run": ["tests/strands/session/test_repository_session_manager.py"],
        "own_environment": True,
    },
    "langchain-core": {
        "files": [
            "tests/__init__.py",
            "tests/unit_tests/__init__.py",
            "tests/unit_tests/conftest.py",
            "tests/unit_tests/pydantic_utils.py",
            "tests/unit_tests/runnables/__init__.py",
            "tests/unit_tests/runnables/conftest.py",
            "tests/unit_tests/runnables/test_history.py",
        ],
        "rewrite": ["tests/unit_tests/runnables/test_history.py"],
        "call": "InMemoryChatMessageHistory(",
        "factory": "byheart_history(",
        "harness": "langchain_history.py",
        "ini": "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
        "markers =\n    requires: x\n    compile: x\n",
        "run": ["tests/unit_tests/runnables/test_history.py"],
    },
}


def sh(*args: str, **kw: object) -> None:
    subprocess.run(args, check=True, **kw)  # type: ignore[call-overload]


def download(package: str, into: Path) -> Path:
    """The sdist of the installed version (only it from source: its build tools as wheels)."""
    version = metadata.version(package)
    name = package.replace("-", "_")
    if list(into.glob(f"{name}-{version}.tar.gz")):
        return next(into.glob(f"{name}-{version}.tar.gz"))
    sh(sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", package,
       f"{package}=={version}", "-d", str(into))  # fmt: skip
    found = sorted(into.glob(f"{name}-{version}.tar.gz"))
    if not found:
        raise SystemExit(f"external_suites: no sdist of {package} {version} in {into}")
    return found[0]


def extract(sdist: Path, files: list[str], into: Path) -> None:
    """The listed files (a name ending in "/": every file under it) into `into`."""
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/", 1)[0]
        names = [m.name[len(top) + 1 :] for m in tar.getmembers() if m.isfile()]
        wanted = [n for f in files for n in (names if f.endswith("/") else [f])
                  if n == f or (f.endswith("/") and n.startswith(f))]  # fmt: skip
        for name in wanted:
            member = tar.extractfile(f"{top}/{name}")
            if member is None:
                raise SystemExit(f"external_suites: {name} missing from {sdist.name}")
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(member.read())


def rewrite(path: Path, call: str, factory: str) -> None:
    """Every ``call`` becomes ``factory``, imported from the harness; nothing else changes."""
    text = path.read_text(encoding="utf-8")
    asserts = len(re.findall(r"\bassert\b|pytest\.raises", text))
    calls = text.count(call)
    if not calls:
        raise SystemExit(f"external_suites: {path.name} no longer calls {call}; update the script")
    text = text.replace(call, factory)
    lines = text.splitlines(keepends=True)
    at = next(
        i for i, line in enumerate(lines)
        if line.startswith(("import ", "from ")) and "__future__" not in line
    )  # fmt: skip
    lines.insert(at, f"from tests._byheart import {factory[:-1]}  # byheart: the swap\n")
    text = "".join(lines)
    assert len(re.findall(r"\bassert\b|pytest\.raises", text)) == asserts
    path.write_text(text, encoding="utf-8")
    print(f"external_suites: {path.name}: {calls} calls of {call[:-1]} -> {factory[:-1]}")


def prepare(work: Path) -> Path:
    """Plugins in a folder of their own, and the package from this checkout first on the path."""
    plugins = work / "plugins"
    sh(sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(plugins),
       *PLUGINS)  # fmt: skip
    shutil.copy(EXTERNAL / "skip_plugin.py", plugins / "byheart_skips.py")
    src = work / "src"
    src.mkdir()
    (src / "yait_byheart").symlink_to(REPO / "yait_byheart")
    return plugins


def run_suite(name: str, spec: dict[str, object], work: Path, plugins: Path) -> int:
    package = str(spec.get("package", name))
    root = work / name.replace(" ", "-")
    sdist = download(package, work / "sdists")
    extract(sdist, spec["files"], root)  # type: ignore[arg-type]
    for path in spec["rewrite"]:  # type: ignore[attr-defined]
        rewrite(root / path, spec["call"], spec["factory"])  # type: ignore[arg-type]
    shutil.copy(EXTERNAL / str(spec["harness"]), root / "tests" / "_byheart.py")
    (root / "pytest.ini").write_text(str(spec["ini"]), encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(work / "src"), str(plugins)]),
        "BYHEART_SKIPS": str(EXTERNAL / "skips.txt"),
    }
    print(f"external_suites: {name} ({package} {metadata.version(package)})", flush=True)
    args = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
            "-p", "byheart_skips", *spec["run"]]  # type: ignore[misc]  # fmt: skip
    return subprocess.run(args, cwd=root, env=env, timeout=600).returncode


def main(names: list[str]) -> int:
    """Run the suites named (default: every suite of the dev environment)."""
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        raise SystemExit(f"external_suites: no suite {unknown}; known: {sorted(SUITES)}")
    names = names or [n for n, spec in SUITES.items() if not spec.get("own_environment")]
    work = Path(tempfile.mkdtemp(prefix="byheart-external-"))
    try:
        plugins = prepare(work)
        codes = {name: run_suite(name, SUITES[name], work, plugins) for name in names}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, code in codes.items():
        print(f"external_suites: {name}: {'passed' if code == 0 else f'FAILED (exit {code})'}")
    return 0 if all(code == 0 for code in codes.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
