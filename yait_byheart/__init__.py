"""byheart: conversation memory that knows the dialogue by heart.

The conversation is kept verbatim; before each model call, `Memory.compose` selects what to
send from the dialogue's own words, never a paraphrase.
"""

from ._dates.resolve import resolve_time
from ._record.load import MissingCallableWarning
from ._retrieval.bm25 import BM25
from ._turns.render import DERIVED, SAID, SUPPLIED
from ._turns.settings import Tuning
from .memory import Memory
from .protocols import ComposeResult

__all__ = [
    "BM25",
    "DERIVED",
    "SAID",
    "SUPPLIED",
    "ComposeResult",
    "Memory",
    "MissingCallableWarning",
    "Tuning",
    "resolve_time",
]
__version__ = "0.2.0"
