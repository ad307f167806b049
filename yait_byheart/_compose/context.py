"""What a call sent, kept so the next call can repeat it byte for byte and append to it.

A context holds items: settled stretches (rendered as one user message each, adjacent ones
of the rebuilt block joined) and entries sent as themselves. Entries from `start` up to `upto`
are all in it; stretches come before them (the block chosen at the last rebuild) or between
them (appended later, when a query needed them). Tool parts travel natively only between
entries of the context whose partner (call or result) is also native in it, so no provider
ever sees an orphan; everywhere else tool activity is text.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice

from .._turns.conversation import Conversation, Rendering
from .._turns.render import (
    TURN_JOIN,
    Part,
    Piece,
    render_ordinary,
    render_unit,
    searchable,
    tool_line,
)

STRETCH = "u"  # the kinds as persistence writes them
ENTRY = "t"


@dataclass(slots=True)
class Item:
    kind: str
    ref: int
    role: str
    text: str
    size: int
    tools: tuple[Part, ...] = ()
    joined: bool = False  # continues the previous item's message


@dataclass
class SentContext:
    start: int
    upto: int
    block: int = 0  # items chosen at the rebuild; the rest were appended after
    items: list[Item] = field(default_factory=list)
    stretches: set[int] = field(default_factory=set)
    # The entries it holds that show something, ascending while `ordered`: entries come
    # after the ones held, a joined stretch's before them (then they are sorted once).
    entries: list[int] = field(default_factory=list)
    native_calls: set[str] = field(default_factory=set)
    sent_items: int = 0  # items the previous call sent (its cache breakpoint)
    # What the items added by `add_stretch` and `add_entry` measure, kept as they come:
    # every compose asks it several times.
    size: int = 0
    ordered: bool = True

    def copy(self) -> SentContext:
        """A copy to extend, so a failed call leaves the kept one as it was."""
        return SentContext(
            self.start, self.upto, self.block, list(self.items), set(self.stretches),
            list(self.entries), set(self.native_calls), self.sent_items, self.size,
            self.ordered,
        )  # fmt: skip

    def hold(self, entries: Sequence[int]) -> None:
        """Count `entries` (ascending) among those it holds."""
        if entries and self.entries and entries[0] <= self.entries[-1]:
            self.ordered = False
        self.entries += entries

    def replace_items(self, items: list[Item]) -> None:
        """Hold `items` instead of its own (its size follows)."""
        self.items = items
        self.size = sum(item.size for item in items)

    def entries_from(self, conv: Conversation) -> int:
        """The first stretch it holds as entries: it holds those from there on, and before
        them `stretches`."""
        return bisect_left(conv.starts, self.start)

    def add_stretch(self, conv: Conversation, uid: int) -> None:
        last = self.items[-1] if self.items else None
        # Adjacent stretches of the rebuilt block share one message; only inside the block,
        # which never changes once sent, so no sent message ever grows.
        joined = (
            last is not None and len(self.items) < self.block and last.ref == uid - 1
            and last.kind == STRETCH and bool(_rendering(conv, uid - 1, last.joined)[2])
        )  # fmt: skip
        text, size, shown = _rendering(conv, uid, joined)
        self.items.append(Item(STRETCH, uid, "user", text, size, joined=joined))
        self.size += size
        self.stretches.add(uid)
        self.hold(shown)

    @property
    def selected(self) -> bool:
        """Built from a selection (not the whole conversation from its start)."""
        return self.block > 0 or self.start > 0

    def holds(self, conv: Conversation, uid: int, by_pieces: bool = False) -> bool:
        """Whether closed stretch `uid` is in it: selected, or among the entries it holds (with
        `by_pieces`, less those that open with a long reply's piece, which it leaves out)."""
        if uid in self.stretches:
            return True
        if uid < self.entries_from(conv):
            return False
        return not by_pieces or carried(conv, conv.starts[uid])

    def add_entry(
        self, conv: Conversation, i: int, limit: int, replay: set[str] | None = None,
        whole: bool = False,
    ) -> None:  # fmt: skip
        """Entry `i` as itself; `limit` is where this extension of the context ends. `replay`
        names the calls that travelled natively when a saved context is rebuilt. A tool turn
        cut into pieces is sent as one entry, its tool parts native, when all its pieces are
        in this context (from `start`, before `limit`), or with `whole` (the round being
        answered): its first piece carries it, the others add nothing."""
        piece = conv.piece(i)
        turn = piece.turn
        if turn.silent:
            return
        held = range(i, i + 1)
        if piece.parts > 1 and turn.tools and (whole or self._holds_turn(conv, i, limit)):
            if piece.part > 0:
                return  # sent whole with the turn's first piece
            held = range(i, i + piece.parts)
            piece = Piece(turn, searchable(turn))
        previous = conv.turns[conv.entries[i - 1].turn] if i > 0 else None
        with_when = i == self.start or previous is None or turn.when != previous.when
        named = not self.items and turn.role == "assistant"
        native: tuple[Part, ...] = ()
        if not named and piece.parts == 1:
            native = self._native_tools(conv, i, limit, replay, whole)
        body = piece.body
        if turn.tools and piece.parts == 1:  # a piece of a cut turn is its own slice of text
            lines = [turn.shown] if turn.shown else []
            lines += [tool_line(p) for p in turn.tools if p not in native]
            body = "\n".join(lines)
        text = render_ordinary(piece, with_when=with_when, named=named, body=body)
        measure = conv.shape.measure
        size = (measure(text) if text else 0) + sum(measure(tool_line(p)) for p in native)
        last = self.items[-1] if self.items else None
        follows = last is not None and last.kind == ENTRY and last.role == "assistant"
        if turn.role == "assistant" and len(self.items) > 1 and follows:
            size += measure(TURN_JOIN)  # assemble joins the two messages
        role = "user" if named else turn.role
        self.items.append(Item(ENTRY, i, role, text, size, native))
        self.size += size
        self.hold(held)

    def _native_tools(
        self, conv: Conversation, i: int, limit: int, replay: set[str] | None, whole: bool
    ) -> tuple[Part, ...]:
        """The tool parts of entry `i` that may travel natively: a call whose result lies in
        this context, whole (or cut, when `whole` sends cut turns whole) and shown; a result
        whose call travelled natively."""
        turn = conv.turns[conv.entries[i].turn]
        native: list[Part] = []
        for part in turn.tools:
            call_id = part["id"]
            if part["type"] == "tool_result":
                if call_id in self.native_calls:
                    native.append(part)
                continue
            if replay is not None:
                if call_id in replay:
                    native.append(part)
                    self.native_calls.add(call_id)
                continue
            answer = conv.answered.get(call_id)
            if answer is None or not conv.answered_next(call_id):
                continue
            first = conv.first_entry[answer]
            sent_whole = whole or self._holds_turn(conv, first, limit)
            if first > i and first < limit and sent_whole and not conv.turns[answer].redacted:
                native.append(part)
                self.native_calls.add(call_id)
        return tuple(native)

    def _holds_turn(self, conv: Conversation, i: int, limit: int) -> bool:
        """Whether every piece of the turn of entry `i` lies from `start` to `limit`: a past
        round cut into pieces only to fit stretches is then sent whole, native, like any
        round that fits (the size limit still decides whether it is sent at all)."""
        entry = conv.entries[i]
        first = i - entry.part
        return first >= self.start and first + entry.parts <= limit

    def extend(
        self, conv: Conversation, stretches: list[int], limit: int, *, by_pieces: bool = False
    ) -> None:
        """Append the entries said since the last call (up to `limit`), then `stretches`;
        with `by_pieces`, the pieces of long replies are left out (`carried`)."""
        for i in range(self.upto, limit):
            if by_pieces and not carried(conv, i):
                continue
            self.add_entry(conv, i, limit)
        self.upto = limit
        for uid in stretches:
            self.add_stretch(conv, uid)

    def included_turns(
        self, conv: Conversation, more: Iterable[int] = ()
    ) -> tuple[list[int], list[int]]:
        """The turns it holds (any entry), with entries `more`, and those of them it holds
        only in part."""
        if not self.ordered:
            self.entries, self.ordered = sorted(set(self.entries)), True
        sent = self.entries + list(more)
        if len(sent) > len(self.entries) and not _ascending(sent, len(self.entries) - 1):
            sent = sorted(set(sent))
        if len(conv.entries) == len(conv.turns):  # no turn was cut: entry i is turn i
            return sent, []
        held: dict[int, int] = {}
        for i in sent:
            t = conv.entries[i].turn
            held[t] = held.get(t, 0) + 1
        partial = [t for t, n in held.items() if n < conv.entries[conv.first_entry[t]].parts]
        return sorted(held), sorted(partial)


def carried(conv: Conversation, i: int) -> bool:
    """Whether a context that carries long replies by their pieces holds entry `i` as itself:
    all but the pieces of a reply cut for being longer than a stretch (an assistant turn
    without tools). Its pieces are stretches, which join when a later query needs them."""
    entry = conv.entries[i]
    if entry.parts == 1:
        return True
    turn = conv.turns[entry.turn]
    return turn.role != "assistant" or bool(turn.tools)


def loose_item(conv: Conversation, uid: int) -> tuple[Item, Sequence[int]]:
    """Stretch `uid` as an item sent after a context, not held by it; with the entries it
    shows."""
    text, size, shown = _rendering(conv, uid, False)
    return Item(STRETCH, uid, "user", text, size), shown


def _ascending(values: list[int], start: int) -> bool:
    """Whether `values` rise strictly from position `start` on."""
    return all(values[i] < values[i + 1] for i in range(max(start, 0), len(values) - 1))


# A context sends dozens of stretches, and keeps most of them compose after compose; a cache
# of every stretch ever sent would grow to a second copy of a long conversation's text. Least
# recently used first out: clearing it whole made the next compose render its context again.
RENDERINGS_KEPT = 8192


def _rendering(conv: Conversation, uid: int, joined: bool) -> Rendering:
    """Stretch `uid` as sent (continuing the one before it when `joined`), its size and its
    entries that show something, cached in `conv`. A joined one is measured as sent: the
    whole size minus the saving is exact only for additive measures."""
    key = (uid, joined)
    cache = conv.renderings
    found = cache.pop(key, None)
    if found is None:
        start, end = conv.stretch_range(uid)
        shown = conv.shown_entries(start, end)
        if joined:
            text = render_unit(conv.pieces(start, end), after=conv.last_shown(uid - 1))
            found = (text, conv.shape.measure(text) if text else 0, shown)
        else:
            found = (render_unit(conv.pieces(start, end)), conv.stretch_sizes[uid], shown)
        if len(cache) >= RENDERINGS_KEPT:
            for old in list(islice(cache, len(cache) // 2)):  # the older half (dicts keep order)
                del cache[old]
    cache[key] = found  # the most recently used last
    return found
