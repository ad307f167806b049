"""Index snapshots: the BM25 indexes of a conversation's closed stretches, as bytes.

A store keeps one beside its rows, so reopening loads it instead of tokenizing and indexing
every stretch again. It records what it was built from (the entries it covers, the stretch
starts, the redacted entries, a checksum of the texts, the tokenizer's version), so a snapshot
that no longer matches is ignored and the index is rebuilt from the text, never misread.

What a store keeps also carries the conversation's layout (`with_layout`): how each turn was
cut, which entries open a stretch, and the size of every entry and closed stretch, so that
reopening measures nothing again (`load_layout`). It is used only for the settings it was
measured under (budget, chunk, tuning, characters as the measure) and for turns equal to the
ones it was taken from, field by field; otherwise the turns are laid out as they are appended.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter

from .._turns.conversation import Conversation, Shape, cuts_of
from .._turns.render import Turn, searchable
from .bm25 import Index
from .codec import u32_array, u32_bytes

# Bump whenever how a stretch's text is indexed, or what a snapshot holds, changes: an older
# snapshot is then ignored (and a store writes a new one on the next open).
INDEX_VERSION = 4  # 3: the user's words indexed apart too; 4: the layout beside it
# magic, INDEX_VERSION, Tokenizer.snapshot_id (its version and forced language),
# entries covered, texts' CRC-32, stretches, redacted
_HEADER = struct.Struct("<4sIIIIII")
_MAGIC = b"BHSN"


def _redacted(conv: Conversation, covered: int) -> list[int]:
    turns, entries = conv.turns, conv.entries
    return [i for i in range(covered) if turns[entries[i].turn].redacted]


def _utf8(texts: Iterable[str]) -> bytes:
    # surrogatepass: a lone surrogate is a valid str, and must not fail a snapshot.
    return "\x00".join(texts).encode("utf-8", "surrogatepass")


def _texts_crc(conv: Conversation, covered: int) -> int:
    # Runs in C (zlib): a small share of reopening, against seconds to re-index. The roles
    # too: the user's words are indexed apart.
    texts: Iterable[str]
    roles: Iterable[str]
    turns = conv.turns
    if covered == 0 or conv.entries[covered - 1].turn == covered - 1:  # no pieces: one per turn
        texts = map(searchable, turns[:covered])
        roles = map(attrgetter("role"), turns[:covered])
    else:
        texts = (p.body for p in conv.pieces(0, covered))
        roles = (turns[e.turn].role for e in conv.entries[:covered])
    return zlib.crc32(_utf8(roles), zlib.crc32(_utf8(texts)))


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


def load(
    conv: Conversation, snapshot: bytes | memoryview, tokenizer: int, checked: int = 0,
    intact: bool = False,
) -> tuple[Index, Index] | None:  # fmt: skip
    """The indexes in `snapshot` (every word, the user's words) if they were built from
    exactly these stretches by this tokenizer (its `snapshot_id`), else None. The first
    `checked` entries are known equal to those it was taken from (`load_layout` checked them
    against the layout taken with it): their texts are not read again. `intact`: a checksum
    showed the bytes to be what `dump` wrote (see `Index.load`)."""
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
        or (covered > checked and redacted != _redacted(conv, covered))
        or (covered > checked and crc != _texts_crc(conv, covered))
    ):
        return None
    view = memoryview(snapshot)
    try:
        index = Index.load(view[at : at + every_size], intact=intact)
        user_index = Index.load(view[at + every_size :], intact=intact)
    except ValueError:
        return None
    # Every stretch in the index, the user's only stretches (set operations: in C).
    uids = set(range(n_units))
    if len(index) != n_units or not uids.issuperset(index.ids()):
        return None
    if not uids.issuperset(user_index.ids()):
        return None
    return index, user_index


# -- the layout -------------------------------------------------------------------------------

# magic, INDEX_VERSION, bytes of the layout after this header, their CRC-32; then the index
# snapshot (`dump`) to the end.
_LAYOUT_HEAD = struct.Struct("<4sIII")
_LAYOUT_MAGIC = b"BHLY"
# turns described, their entries, the turns' CRC-32 (`_turns_crc`), ints describing the cut
# turns, closed stretches, bytes of the settings' key; then the key, each entry's size (u32),
# each entry's opening (a byte), the cut turns ([turn, n, offset 1..n] each, u32) and each
# closed stretch's size (u32).
_LAYOUT_BODY = struct.Struct("<IIIIII")

# The openings and cuts of the stored turns whose record holds them (`read_turns`).
Recorded = dict[int, tuple[list[bool] | None, list[int]]]


@dataclass(slots=True)
class Known:
    """The first turns of a conversation as laid out and measured when a snapshot was taken
    (what `conversation.restore` takes)."""

    turns: list[Turn]
    cuts: dict[int, list[int]]  # turn -> its cut offsets, for the turns cut into pieces
    opens: list[bool]  # per entry
    sizes: list[int]  # per entry
    stretch_sizes: list[int]  # per closed stretch


def _shape_key(shape: Shape) -> bytes | None:
    """What a layout depends on besides the turns; None when it cannot be told (a caller's
    measure may change between processes). `boundaries` plays no part: a stored turn's
    opening is replayed, never asked again."""
    if shape.measure is not len:
        return None
    t = shape.tuning
    tuning = ", ".join(f"{name}={getattr(t, name)!r}" for name in _KEYED_TUNING)
    return f"{shape.budget} {shape.chunk} Tuning({tuning})".encode()


# The Tuning fields a layout's key has named since layouts were first kept, written as the
# dataclass's repr writes them: a field added later never enters it (adding one would drop
# every stored layout, and the store rewrites none whose index still loads). None added
# since shapes a layout.
_KEYED_TUNING = (
    "stretch_share", "stretches_per_budget", "cut_over", "max_stretch_share",
    "close_at_any_turn", "context_weight", "context_width", "date_boost", "query_terms",
    "common_share", "shared_score", "strong_join", "rank_offset", "recency_fill_scan",
    "misfits", "cache_write", "cache_read", "mean_over_budget",
)  # fmt: skip


def _turns_crc(turns: Sequence[Turn]) -> int:
    """A CRC-32 of every field a turn's layout depends on: its words as shown, role, kind,
    source, date, whether it is silent, and a tool turn's parts in full (they pair calls and
    make its searchable text). Each a pass in C: this runs on every reopening."""
    crc = 0
    for name in ("shown", "role", "kind", "source", "when"):
        crc = zlib.crc32(_utf8(map(attrgetter(name), turns)), crc)
    crc = zlib.crc32(bytes(map(attrgetter("silent"), turns)), crc)
    with_tools = compress(range(len(turns)), map(attrgetter("tools"), turns))
    return zlib.crc32(_utf8(f"{i}:{turns[i].tools!r}" for i in with_tools), crc)


def with_layout(conv: Conversation, index_snapshot: bytes) -> bytes:
    """`index_snapshot` (from `dump`) preceded by `conv`'s layout, as `load_layout` reads it;
    `index_snapshot` alone when the layout cannot be kept (a caller's measure)."""
    key = _shape_key(conv.shape)
    if key is None:
        return index_snapshot
    words: list[int] = []
    if len(conv.entries) != len(conv.turns):
        entries = conv.entries
        for t, first in enumerate(conv.first_entry):
            parts = entries[first].parts
            if parts > 1:
                words += [t, parts - 1, *(e.start for e in entries[first + 1 : first + parts])]
    stretch_sizes = conv.stretch_sizes
    try:
        arrays = [u32_bytes(conv.sizes), bytes(conv.opens), u32_bytes(words),
                  u32_bytes(stretch_sizes)]  # fmt: skip
    except OverflowError:  # a size past 4 GB: measured again on reopening
        return index_snapshot
    counts = _LAYOUT_BODY.pack(len(conv.turns), len(conv.entries), _turns_crc(conv.turns),
                               len(words), len(stretch_sizes), len(key))  # fmt: skip
    body = b"".join((counts, key, *arrays))
    # The checksum covers the index snapshot after the layout too (zlib, in C): bytes known
    # intact need no Python pass over every posting when loaded (`Index.load`).
    crc = zlib.crc32(index_snapshot, zlib.crc32(body))
    head = _LAYOUT_HEAD.pack(_LAYOUT_MAGIC, INDEX_VERSION, len(body), crc)
    return b"".join((head, body, index_snapshot))


def load_layout(
    conv: Conversation, snapshot: bytes, turns: Sequence[Turn], recorded: Recorded
) -> tuple[Known | None, bytes | memoryview, bool]:
    """The layout `snapshot` carries if it was taken under `conv`'s settings from turns equal
    to the first of `turns` as recorded (else None), the index snapshot after it (`snapshot`
    itself if it carries no layout; empty if it is not a snapshot of this version), and
    whether a checksum showed that index snapshot intact."""
    if snapshot[:4] != _LAYOUT_MAGIC:
        return None, snapshot, False
    try:
        _magic, version, size, crc = _LAYOUT_HEAD.unpack_from(snapshot)
        at = _LAYOUT_HEAD.size
        view = memoryview(snapshot)
        body, index = view[at : at + size], view[at + size :]
        if (
            version != INDEX_VERSION
            or len(body) != size
            or zlib.crc32(index, zlib.crc32(body)) != crc
        ):
            return None, b"", False
        return _known(conv, body, turns, recorded), index, True
    except (struct.error, ValueError):
        return None, b"", False


def _known(
    conv: Conversation, body: memoryview, given: Sequence[Turn], recorded: Recorded
) -> Known | None:
    """The layout in `body` (its bytes checked), if it holds for `conv` and these turns."""
    n_turns, n_entries, crc, n_words, n_stretches, n_key = _LAYOUT_BODY.unpack_from(body)
    at = _LAYOUT_BODY.size
    if bytes(body[at : at + n_key]) != _shape_key(conv.shape) or conv.turns:
        return None
    if n_turns > len(given):
        return None
    at += n_key
    sizes = u32_array(body, n_entries, at).tolist()
    at += 4 * n_entries
    opens = bytes(body[at : at + n_entries])
    at += n_entries
    words = u32_array(body, n_words, at).tolist()
    at += 4 * n_words
    stretch_sizes = u32_array(body, n_stretches, at).tolist()
    if len(opens) != n_entries or at + 4 * n_stretches != len(body):
        return None
    cuts = _cut_turns(words, n_turns)
    if cuts is None or n_turns + sum(map(len, cuts.values())) != n_entries:
        return None
    # Every flag a bool; one closed stretch per opening after the first entry.
    if opens.strip(b"\x00\x01") or n_stretches != opens.count(1, 1):
        return None
    turns = list(given[:n_turns])
    if not _as_recorded(conv, turns, recorded, cuts, opens) or _turns_crc(turns) != crc:
        return None
    return Known(turns, cuts, list(map(bool, opens)), sizes, stretch_sizes)


def _cut_turns(words: list[int], n_turns: int) -> dict[int, list[int]] | None:
    """`[turn, n, offset 1..n]` runs back as turn -> offsets, in order (None if malformed)."""
    cuts: dict[int, list[int]] = {}
    at, last = 0, -1
    while at < len(words):
        turn, n = words[at], words[at + 1] if at + 1 < len(words) else 0
        offsets = words[at + 2 : at + 2 + n]
        if not last < turn < n_turns or n < 1 or len(offsets) != n:
            return None
        cuts[turn] = offsets
        at, last = at + 2 + n, turn
    return cuts


def _as_recorded(
    conv: Conversation, turns: list[Turn], recorded: Recorded, cuts: dict[int, list[int]],
    opens: bytes,
) -> bool:  # fmt: skip
    """Whether the layout makes the choices the records make: each turn's first opening,
    a recorded turn's cuts and openings, and `conv`'s own cuts of a turn recorded whole."""
    firsts = bytearray()  # each turn's first entry's opening
    at = extra = 0
    for t, offsets in cuts.items():
        first = t + extra
        firsts += opens[at : first + 1]
        at, extra = first + 1 + len(offsets), extra + len(offsets)
        given, recorded_cuts = recorded.get(t, (None, []))
        if recorded_cuts:
            if recorded_cuts != offsets or bytes(given or ()) != opens[first:at]:
                return False
        elif cuts_of(conv, turns[t]) != offsets:
            return False
        elif given and bytes(given[: at - first]) != opens[first : min(at, first + len(given))]:
            return False  # openings recorded for pieces the record does not cut
    firsts += opens[at:]
    if firsts != bytes(map(attrgetter("opens"), turns)):
        return False
    # A turn recorded cut is cut the same way (checked above), never laid out whole.
    return all(t in cuts for t, (_, c) in recorded.items() if c and t < len(turns))
