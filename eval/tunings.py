"""``--tuning NAME=VALUE`` on the command line: a `yait_byheart.Tuning` with those fields."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from yait_byheart import Tuning


def tuning_of(settings: Sequence[str]) -> Tuning | None:
    """A `Tuning` with each NAME=VALUE of `settings` (None when there are none)."""
    if not settings:
        return None
    fields = {f.name: f.type for f in dataclasses.fields(Tuning)}
    values: dict[str, Any] = {}
    for setting in settings:
        name, _, value = setting.partition("=")
        if name not in fields or not value:
            raise ValueError(f"--tuning {setting!r}: use NAME=VALUE with a Tuning field name")
        kind = fields[name]
        values[name] = (
            value.lower() in ("1", "true") if kind == "bool"
            else int(value) if kind == "int" else float(value)
        )  # fmt: skip
    return Tuning(**values)
