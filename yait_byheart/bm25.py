"""BM25 over plain strings: ``BM25().fit(docs).rank(query)`` (Robertson and Zaragoza 2009).

The public face of `yait_byheart._retrieval.bm25`, where the formulas and the incremental
index that ``Memory`` ranks with live.
"""

from ._retrieval.bm25 import BM25

__all__ = ["BM25"]
