"""Read LongMemEval files into questions over flat, date-ordered turns, and sample them.

A file is the original format (``longmemeval_s_cleaned.json``), plain or gzip-compressed (told
apart by the magic bytes, not the name): a list of entries with ``question_id``,
``question_type``, ``question``, ``question_date``, ``haystack_sessions``, ``haystack_dates``,
``haystack_session_ids`` and ``answer_session_ids``.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.locomo.data import Turn

GZIP_MAGIC = b"\x1f\x8b"
ABSTENTION = "_abs"
# The README's order; a type not listed here is reported after these, by name.
TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
_FIELDS = ("question_id", "question_type", "question", "haystack_sessions", "haystack_dates")

Entry = dict[str, Any]  # one question as the file has it


@dataclass(frozen=True)
class Question:
    question_id: str
    question_type: str
    question: str
    question_date: str
    turns: tuple[Turn, ...]  # every haystack turn; Turn.session indexes `sessions`
    sessions: tuple[str, ...]  # session ids in date order
    evidence: tuple[int, ...]  # indices of the has_answer turns
    answer_sessions: tuple[str, ...]  # answer_session_ids that hold an evidence turn

    def session_of(self, turn: int) -> str:
        return self.sessions[self.turns[turn].session]


def is_abstention(entry: Entry) -> bool:
    return str(entry["question_id"]).endswith(ABSTENTION)


def date_key(date: str) -> tuple[int, ...]:
    """Sort key of a LongMemEval date: its numbers in order (year, month, day, hour, minute).

    >>> date_key("2023/05/30 (Tue) 17:27")
    (2023, 5, 30, 17, 27)
    """
    return tuple(int(n) for n in re.findall(r"\d+", date))


def parse(entry: Entry) -> Question:
    """One entry as a Question; sessions sorted by date (the file does not store them so)."""
    sessions = entry["haystack_sessions"]
    dates = [str(d) for d in entry["haystack_dates"]]
    ids = [str(s) for s in entry.get("haystack_session_ids") or range(len(sessions))]
    # sorted() is stable: sessions of the same minute keep the file's order.
    order = sorted(range(len(sessions)), key=lambda s: date_key(dates[s]))
    turns: list[Turn] = []
    evidence: list[int] = []
    for position, s in enumerate(order):
        for k, raw in enumerate(sessions[s]):
            if raw.get("has_answer"):
                evidence.append(len(turns))
            turns.append(
                Turn(
                    index=len(turns),
                    dia_id=f"{ids[s]}:{k}",
                    session=position,
                    role=str(raw["role"]),
                    speaker=str(raw["role"]),
                    text=str(raw["content"]),  # as the data has it, empty ones too
                    when=dates[s],  # as the data has it: "2023/05/30 (Tue) 17:27"
                )
            )
    in_order = tuple(ids[s] for s in order)
    with_evidence = {in_order[turns[i].session] for i in evidence}
    answer = tuple(str(a) for a in entry.get("answer_session_ids", ()) if a in with_evidence)
    return Question(
        question_id=str(entry["question_id"]),
        question_type=str(entry["question_type"]),
        question=str(entry["question"]),
        question_date=str(entry.get("question_date", "")),
        turns=tuple(turns),
        sessions=in_order,
        evidence=tuple(evidence),
        answer_sessions=answer,
    )


def load(path: Path) -> list[Entry]:
    """The entries of a LongMemEval file; FileNotFoundError if missing, ValueError if it is
    not one."""
    if not path.is_file():
        raise FileNotFoundError(str(path))
    with path.open("rb") as fh:
        compressed = fh.read(2) == GZIP_MAGIC
    opener = gzip.open if compressed else open
    with opener(path, "rt", encoding="utf-8") as fh:
        try:
            data = json.load(fh)
        except (json.JSONDecodeError, UnicodeDecodeError, OSError) as exc:
            raise ValueError(f"{path} is not JSON ({exc})") from exc
    if not isinstance(data, list) or not all(
        isinstance(e, dict) and all(f in e for f in _FIELDS) for e in data
    ):
        raise ValueError(
            f"{path} is not a LongMemEval file: expected a list of questions with haystack_sessions"
        )
    return data


def type_order(types: set[str]) -> list[str]:
    """The README's types first, in its order, then any others by name."""
    known = [t for t in TYPES if t in types]
    return known + sorted(types - set(TYPES))


def stratified_sample(entries: Sequence[Entry], n: int, seed: int) -> list[Entry]:
    """`n` entries, each question type holding its share (largest remainders), chosen by a
    seeded generator: the same seed always gives the same questions, in file order."""
    if n >= len(entries):
        return list(entries)
    groups: dict[str, list[int]] = {}
    for i, e in enumerate(entries):
        groups.setdefault(str(e["question_type"]), []).append(i)
    shares = {t: n * len(members) / len(entries) for t, members in groups.items()}
    counts = {t: int(share) for t, share in shares.items()}
    # Ties go by type name so the split never depends on the file's order of types.
    by_remainder = sorted(shares, key=lambda t: (counts[t] - shares[t], t))
    for t in by_remainder[: n - sum(counts.values())]:
        counts[t] += 1
    rng = random.Random(seed)
    chosen = [i for t in sorted(groups) for i in rng.sample(groups[t], counts[t])]
    return [entries[i] for i in sorted(chosen)]
