"""Regular expressions compiled on first use: `import yait_byheart` stays cheap (issue 46).

Compiling the date phrases of nine languages and the word classes of every script took most
of the package's import; a request sees one or two languages, and a process that only stores
turns never needs the phrase patterns at all.  `lazy` returns a stand-in that compiles on the
first method call and then binds the compiled pattern's methods on itself, so later calls cost
what a compiled pattern's do.
"""

from __future__ import annotations

import re
from typing import Any, cast

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class _Lazy:
    """`re.compile(pattern, flags)`, done when first used."""

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern
        self.flags = flags

    def __getattr__(self, name: str) -> Any:
        # Only reached for what the instance does not hold yet: the first use.
        compiled = re.compile(self.pattern, self.flags)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        self.groupindex, self.groups = compiled.groupindex, compiled.groups
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r})"


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern used as `re.compile(pattern, flags)` is, compiled on its first use."""
    return cast("re.Pattern[str]", _Lazy(pattern, flags))
