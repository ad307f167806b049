"""The environment of a timed child process, as a deployed package runs.

An installed package's modules are compiled once, at install; a child that inherits
PYTHONDONTWRITEBYTECODE (set on some development machines) compiles every module it imports
from source instead, each time, which no deployment pays (docs/benchmarks.md, "Bytecode in
the fresh processes timed").
"""

from __future__ import annotations

import os
from pathlib import Path


def deployed_env(path: Path) -> dict[str, str]:
    """This process's environment with `path` first on PYTHONPATH and bytecode written and
    read: run one child before timing any, so that the .pyc files exist."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(path), os.environ.get("PYTHONPATH")) if p)
    return env
