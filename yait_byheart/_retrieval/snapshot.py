"""Index snapshots: the BM25 indexes of a conversation's closed stretches, as bytes.

A store keeps one beside its rows, so reopening loads it instead of tokenizing and indexing
every stretch again. It records what it was built from (the entries it covers, the stretch
starts, the redacted entries, a checksum of the texts, the tokenizer's version), so a snapshot
that no longer matches is ignored and the index is rebuilt from the text, never misread.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable

from .._turns.conversation import Conversation
from .._turns.render import searchable
from .bm25 import Index
from .codec import u32_array, u32_bytes

# Bump whenever how a stretch's text is indexed changes: an older snapshot is then ignored.
INDEX_VERSION = 3  # 3: the user's words indexed apart too
# magic, INDEX_VERSION, Tokenizer.snapshot_id (its version and forced language),
# entries covered, texts' CRC-32, stretches, redacted
_HEADER = struct.Struct("<4sIIIIII")
_MAGIC = b"BHSN"


def _redacted(conv: Conversation, covered: int) -> list[int]:
    turns, entries = conv.turns, conv.entries
    return [i for i in range(covered) if turns[entries[i].turn].redacted]


def _texts_crc(conv: Conversation, covered: int) -> int:
    # Runs in C (zlib): a small share of reopening, against seconds to re-index.
    texts: Iterable[str]
    if covered == 0 or conv.entries[covered - 1].turn == covered - 1:  # no pieces: one per turn
        texts = map(searchable, conv.turns[:covered])
    else:
        texts = (p.body for p in conv.pieces(0, covered))
    return zlib.crc32("\x00".join(texts).encode())


def dump(conv: Conversation, index: Index, user_index: Index, tokenizer: int) -> bytes:
    """The snapshot of `index` and `user_index`, which must cover every closed stretch of
    `conv` and were built by the tokenizer whose `snapshot_id` is `tokenizer`."""
    covered, starts = conv.open_start, conv.starts
    redacted = _redacted(conv, covered)
    header = _HEADER.pack(
        _MAGIC, INDEX_VERSION, tokenizer, covered, _texts_crc(conv, covered),
        len(starts), len(redacted),
    )  # fmt: skip
    every = index.dump()
    return b"".join(
        (header, u32_bytes(starts), u32_bytes(redacted), u32_bytes([len(every)]), every,
         user_index.dump())
    )  # fmt: skip


def load(conv: Conversation, snapshot: bytes, tokenizer: int) -> tuple[Index, Index] | None:
    """The indexes in `snapshot` (every word, the user's words) if they were built from
    exactly these stretches by this tokenizer (its `snapshot_id`), else None."""
    try:
        magic, version, tok, covered, crc, n_units, n_redacted = _HEADER.unpack_from(snapshot)
        if (magic, version, tok) != (_MAGIC, INDEX_VERSION, tokenizer):
            return None
        at = _HEADER.size
        starts = u32_array(snapshot, n_units, at).tolist()
        at += 4 * n_units
        redacted = u32_array(snapshot, n_redacted, at).tolist()
        at += 4 * n_redacted
        (every_size,) = u32_array(snapshot, 1, at).tolist()
        at += 4
    except (struct.error, ValueError):
        return None
    now = conv.starts
    boundary = now[n_units] if n_units < len(now) else conv.open_start
    if (
        covered > len(conv.entries)
        or n_units > len(now)
        or boundary != covered
        or starts != now[:n_units]
        or redacted != _redacted(conv, covered)
        or crc != _texts_crc(conv, covered)
    ):
        return None
    view = memoryview(snapshot)
    try:
        index = Index.load(view[at : at + every_size])
        user_index = Index.load(view[at + every_size :])
    except ValueError:
        return None
    if len(index) != n_units or any(uid not in index for uid in range(n_units)):
        return None
    if any(not 0 <= uid < n_units for uid in user_index.ids()):
        return None
    return index, user_index
