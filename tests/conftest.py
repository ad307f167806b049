"""Put the repository root on sys.path so tests can import the ``eval`` harness package, and
choose how long the property tests run.

Hypothesis profiles (issue 22: the suite must stay under four minutes on two cores):

* ``ci``, the default: Hypothesis's own 100 examples for the tests that set no count, and
  modest counts for the heavy property tests, which scale theirs with ``heavy(share)``.
* ``slow``, with ``python -m pytest --slow`` (a nightly run): ten times as many examples
  everywhere the profile decides, and the heavy tests run long.

Neither profile has a deadline: on a loaded shared machine one example can take seconds, and
the properties are about results (speed has its own benchmarks in ``eval/``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile("slow", max_examples=1_000, deadline=None)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        help="run the property tests long (Hypothesis profile 'slow'; default 'ci')",
    )


def pytest_configure(config: pytest.Config) -> None:
    # Before the test modules are imported: their @settings read the loaded profile.
    settings.load_profile("slow" if config.getoption("slow") else "ci")
