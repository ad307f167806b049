"""A user's recall index as bytes, kept in the store so a new store object loads it.

Without it every new store object (a request of a web handler, a fresh process, another
machine) read and tokenized every row of the user on its first recall: seconds at 10,000
turns. The store keeps one row per user in `recall_index`: the index as it was at some point
(`dump`), and a generation that every redaction, repair and deletion of one of the user's
conversations bumps while blanking the bytes (they hold the stems of the words taken away).

Nothing loaded is trusted past what the rows say: a loaded index is a `UserIndex` that knows,
per conversation, the sequence number and the rows it was built from, so the recall that
loads it follows the rows exactly as a kept index does (`UserIndex.changed` and `follow`): a
conversation deleted since is dropped, rows appended since are read, a redaction since is
found by the sequence number. Writing is conditional on the generation read with the
index's first rows, so bytes built before a redaction or a deletion never land after it.
"""

from __future__ import annotations

import json
import struct
import sys
import zlib
from array import array
from typing import Any

from .._retrieval import flat
from ._user_index import Conv, Docs, Open, UserIndex

_MAGIC = b"BHUI"
# Bump when what `dump` writes, or how a `UserIndex` indexes a stretch, changes: older bytes
# are then ignored (and the next recall rebuilds from the rows and writes them again).
VERSION = 1
# magic, VERSION, byte order, tokenizer id, gap, next_block, dead, ids, bytes of:
# conversations (JSON), their id arrays, index, user index; the CRC-32 of what comes before the
# indexes (the postings in them are checked as each list is first used: `flat`).
_HEADER = struct.Struct("<4sIBIIIIIIIIII")
_ORDER = 0 if sys.byteorder == "little" else 1  # arrays are kept in the machine's order
_INT_COLUMNS = ("first_turn", "first_piece", "last_turn", "last_piece", "size", "day_lo",
                "day_hi", "stretch")  # fmt: skip


def _raw(values: array[int]) -> bytes:
    return values.tobytes()


def _conv_meta(conv: Conv) -> list[Any]:
    last = conv.last
    return [conv.id, conv.name, conv.seq, conv.turns, len(conv.docs), conv.next_id,
            conv.block_end, conv.block, sorted(conv.redacted),
            [last.user, last.other, last.said, last.every, last.mine]]  # fmt: skip


def dump(ui: UserIndex) -> bytes:
    """`ui` as bytes for `load` (call under `ui.lock`, after a sync)."""
    docs = ui.docs
    convs = list(ui.convs.values())
    meta = json.dumps([ui.user, [_conv_meta(c) for c in convs]], ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8", "surrogatepass")  # fmt: skip
    ids = b"".join(_raw(c.docs) + _raw(c.firsts) for c in convs)
    index, user_index = b"".join(flat.dump(ui.index)), b"".join(flat.dump(ui.user_index))
    checked = b"".join((_raw(docs.conv), *(_raw(getattr(docs, c)) for c in _INT_COLUMNS),
                        bytes(docs.dated), bytes(docs.alive), meta, ids))  # fmt: skip
    header = _HEADER.pack(
        _MAGIC, VERSION, _ORDER, ui.tokenizer.snapshot_id, ui.gap, ui.next_block, ui.dead,
        len(docs), len(meta), len(ids), len(index), len(user_index), zlib.crc32(checked),
    )  # fmt: skip
    return b"".join((header, checked, index, user_index))


def load(ui: UserIndex, data: bytes | memoryview) -> bool:
    """Fill `ui` (new, empty) from `dump` bytes; False, `ui` left empty, if they are not bytes
    of this version for this user, tokenizer and gap, or are damaged."""
    view = memoryview(data)
    try:
        head = _HEADER.unpack_from(view)
        magic, version, order, tokenizer, gap, next_block, dead, n, *sizes, crc = head
        ours = (_MAGIC, VERSION, _ORDER, ui.tokenizer.snapshot_id, ui.gap)
        if (magic, version, order, tokenizer, gap) != ours:
            return False
        body = view[_HEADER.size :]
        meta_size, ids_size, index_size, user_size = sizes
        docs, at = _docs(body, n)
        end = at + meta_size + ids_size
        if end + index_size + user_size != len(body) or zlib.crc32(body[:end]) != crc:
            return False
        user, metas = json.loads(bytes(body[at : at + meta_size]).decode("utf-8", "surrogatepass"))
        if user != ui.user:
            return False
        convs, _ = _convs(metas, body, at + meta_size)
        index = flat.load(body[end : end + index_size])
        user_index = flat.load(body[end + index_size :])
    except (struct.error, ValueError, TypeError, KeyError, IndexError):
        return False
    ui.docs, ui.convs, ui.index, ui.user_index = docs, convs, index, user_index
    ui.next_block, ui.dead = next_block, dead
    ui.warmed = len(index)  # its long lists are grouped when a query first walks them
    return True


def _docs(body: memoryview, n: int) -> tuple[Docs, int]:
    docs = Docs()
    docs.conv, at = flat.read_array("q", body, 0, n)
    for column in _INT_COLUMNS:
        values, at = flat.read_array("i", body, at, n)
        setattr(docs, column, values)
    if at + 2 * n > len(body):
        raise ValueError("truncated")
    docs.dated = bytearray(body[at : at + n])
    docs.alive = bytearray(body[at + n : at + 2 * n])
    return docs, at + 2 * n


def _convs(metas: list[Any], body: memoryview, at: int) -> tuple[dict[int, Conv], int]:
    convs: dict[int, Conv] = {}
    for cid, name, seq, turns, k, next_id, block_end, block, redacted, last in metas:
        conv = Conv(int(cid), str(name), int(seq), int(turns))
        conv.docs, at = flat.read_array("i", body, at, int(k))
        conv.firsts, at = flat.read_array("i", body, at, int(k))
        conv.next_id, conv.block_end, conv.block = int(next_id), int(block_end), int(block)
        conv.redacted = set(map(int, redacted))
        user, other, said, every, mine = last
        conv.last = Open(list(user), list(other), list(said), dict(every), dict(mine))
        convs[conv.id] = conv
    return convs, at
