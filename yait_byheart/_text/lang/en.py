"""English: the Porter stemmer and the English stop words (see `.._stem`, `en_data`).

>>> read("running"), read("the")
('run', '')
"""

from __future__ import annotations

from ..porter import stem
from .en_data import STOP_WORDS


def read(word: str) -> str:
    """ "" for a stop word, else the Porter stem."""
    return "" if word in STOP_WORDS else stem(word)
