"""Where each benchmark's data comes from, and the one line a command prints without it.

The data sets are not shipped (their licences and sizes): a fresh clone has none, and each
command that reads one says, in one line on stderr, where to get it and that ``--data PATH``
takes it, then exits 2 (no traceback).
"""

from __future__ import annotations

import sys
from pathlib import Path

LOCOMO = (
    "LoCoMo is not shipped (CC BY-NC 4.0): get data/locomo10.json from the "
    "snap-research/locomo GitHub repository (https://github.com/snap-research/locomo) "
    "and pass it with --data PATH"
)
XQUAD = (
    "XQuAD is not shipped (CC BY-SA 4.0): get the xquad.<lang>.json files from the "
    "google-deepmind/xquad GitHub repository (https://github.com/google-deepmind/xquad) "
    "and pass their folder with --data DIR"
)
LONGMEMEVAL = (
    "LongMemEval is not shipped: get longmemeval_s_cleaned.json from the LongMemEval release "
    "by Wu et al. (github.com/xiaowu0162/LongMemEval) and pass it with --data PATH"
)
MISSING = 2  # the exit code: the command was not given what it needs


def missing(prog: str, path: Path | str, source: str) -> int:
    """Say in one line that `path` holds no data and where to get it; the exit code."""
    print(f"{prog}: no data at {path}. {source}", file=sys.stderr)
    return MISSING


def locomo_missing(prog: str, path: Path | str) -> int | None:
    """The exit code when `path` is not a LoCoMo file to read, after saying so; else None."""
    if Path(path).is_file():
        return None
    return missing(prog, path, LOCOMO)
