"""A pytest plugin: skip the listed tests, each with its reason (``BYHEART_SKIPS`` names the
list: ``test id | reason`` per line); a listed id that matches no test fails the run, so the
list cannot outlive the tests it names."""

from __future__ import annotations

import os

import pytest


def _listed() -> dict[str, str]:
    out: dict[str, str] = {}
    with open(os.environ["BYHEART_SKIPS"], encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                test, _, reason = line.partition("|")
                out[test.strip()] = reason.strip()
    return out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    listed = _listed()
    used: set[str] = set()
    for item in items:
        base = item.nodeid.split("[", 1)[0]
        for test in (item.nodeid, base):
            if test in listed:
                reason = f"another backend's internals: {listed[test]}"
                item.add_marker(pytest.mark.skip(reason=reason))
                used.add(test)
    here = {item.nodeid.split("::", 1)[0] for item in items}
    stale = [t for t in listed if t.split("::", 1)[0] in here and t not in used]
    if stale:
        raise pytest.UsageError(f"listed skips that match no test: {stale}")
