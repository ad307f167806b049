"""`import yait_byheart` loads only what every request uses (issue 46): the date patterns of
other languages, their modules and the stemmers of other scripts wait for a text that needs
them.  Checked by what a fresh process holds after the import, not by timing it (the time is
`python -m eval bench-import`'s, in docs/benchmarks.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1])

_PROBE = """
import json, sys
import yait_byheart
from yait_byheart._text.lazy_re import _Lazy

def compiled():
    out = []
    for name, module in list(sys.modules.items()):
        if name.startswith("yait_byheart"):
            for key, value in vars(module).items():
                for item in value if isinstance(value, tuple) else (value,):
                    if isinstance(item, _Lazy) and "search" in vars(item):
                        out.append(f"{name}.{key}")
            phrase = getattr(getattr(module, "LANG", None), "phrase", None)
            if isinstance(phrase, _Lazy) and "search" in vars(phrase):
                out.append(f"{name}.LANG.phrase")
    return sorted(set(out))

seen = {"modules": sorted(sys.modules), "compiled": compiled()}
{after}
print(json.dumps(seen))
"""

HEAVY = [
    "yait_byheart._dates.lang.ja", "yait_byheart._dates.lang.zh", "yait_byheart._dates.lang.ru",
    "yait_byheart._text.lang.ar", "yait_byheart._text.lang.hi", "yait_byheart._text.lang.ru",
    "yait_byheart._text.lang.nl", "yait_byheart.store", "sqlite3", "email.utils",
]  # fmt: skip


def probe(after: str = "") -> dict[str, list[str]]:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    code = _PROBE.replace("{after}", after)
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=120).stdout  # fmt: skip
    found: dict[str, list[str]] = json.loads(out)
    return found


def test_the_import_loads_no_other_language_and_compiles_no_pattern() -> None:
    seen = probe()
    assert [m for m in HEAVY if m in seen["modules"]] == []
    assert seen["compiled"] == []


def test_a_text_in_a_language_loads_that_language_only() -> None:
    seen = probe(
        "m = yait_byheart.Memory()\n"
        "m.append('user', '先週の金曜日に会った', when='25 May 2023')\n"
        "m.compose('いつ会った?')\n"
        "seen['after'] = sorted(sys.modules)\n"
        "seen['compiled_after'] = compiled()\n"
    )
    after = set(seen["after"])
    assert "yait_byheart._dates.lang.ja" in after
    assert "yait_byheart._dates.lang.ru" not in after and "yait_byheart._text.lang.ar" not in after
    assert "yait_byheart._dates.lang.ja.LANG.phrase" in seen["compiled_after"]
    assert "yait_byheart._dates.lang.de.LANG.phrase" not in seen["compiled_after"]
