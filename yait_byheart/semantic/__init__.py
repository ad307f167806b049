"""Semantic retrieval: `Hybrid` fuses byheart's BM25 with any embedding model.

byheart's core never imports this package; the embed helpers import their packages only
when called (`pip install -e ".[embed]"` from a clone, or the package each names). See
docs/semantic.md.
"""

from __future__ import annotations

from ._embedders import fastembed, openai_compatible, sentence_transformers
from ._hybrid import Embed, Hybrid

__all__ = ["Embed", "Hybrid", "fastembed", "openai_compatible", "sentence_transformers"]
