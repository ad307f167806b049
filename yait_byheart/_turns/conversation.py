"""The conversation as stored: turns, the entries they show as, and the stretches they form.

A turn is one entry, or several when it is too long for one stretch (`_pieces`): each entry is
indexed, selected and rendered on its own. Stretches are runs of entries, closed by a size
counter (see `Conversation.closes`). Everything here is bookkeeping over plain lists; ranking,
selection and rendering of what is sent live elsewhere.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import compress, pairwise, repeat
from operator import attrgetter

from .pieces import cut, cut_offsets
from .render import (
    MEMORY_MARKER,
    Piece,
    Turn,
    ordinary_most,
    ordinary_size,
    render_ordinary,
    render_unit,
    searchable,
    unit_size,
    when_line,
)
from .settings import Tuning

Boundaries = Callable[[list[dict[str, str]]], bool]
Rendering = tuple[str, int, Sequence[int]]  # a stretch as sent: text, size, entries shown


@dataclass(slots=True)
class Entry:
    """Turn `turn`'s text from `start` to `end` (part `part` of `parts`)."""

    turn: int
    part: int
    parts: int
    start: int
    end: int


@dataclass(frozen=True)
class Shape:
    """The sizes a conversation is cut by, derived once from the Memory's settings (each
    computed on first use and kept: every append asks for them)."""

    budget: int
    chunk: int
    tuning: Tuning
    measure: Callable[[str], int]
    boundaries: Boundaries | None = None

    @cached_property
    def cap(self) -> float:
        """No stretch grows past this (so at least two always fit the budget)."""
        return self.budget * self.tuning.max_stretch_share

    @cached_property
    def grain(self) -> int:
        """The conversation's own unit size, a share of `chunk`: the budget plays no part."""
        return max(1, int(self.chunk * self.tuning.stretch_share))

    @cached_property
    def stretch_size(self) -> int:
        """The size at which a stretch closes at the next user turn: the grain, at most
        budget / stretches_per_budget and half the cap (docs/benchmarks.md, "Retrieval
        ablations")."""
        t = self.tuning
        own = self.grain
        if t.stretches_per_budget > 0:
            own = min(own, int(self.budget / t.stretches_per_budget))
        return max(1, min(own, int(self.cap / 2)))

    @cached_property
    def piece_size(self) -> int:
        """The size long turns are cut to: the grain (at most half the cap)."""
        return max(1, min(self.grain, int(self.cap / 2)))

    @cached_property
    def cut_at(self) -> float:
        """A turn measuring more than this is cut into pieces: `cut_over` grains, so a user's
        short turn is not sent with the whole of a long reply ("Long replies"); at most the cap."""
        over = self.tuning.cut_over
        # A piece smaller than its own label ("[part 2 of 9 of a long message]") costs more
        # than it saves: with a tiny chunk, only the cap cuts.
        if over <= 0 or self.piece_size <= self.measure(Piece.label_of(9, 10)):
            return self.cap
        return min(self.cap, over * self.grain)


@dataclass(slots=True)
class Layout:
    """How a turn is stored: per piece, whether it opens a stretch and its size."""

    opens: list[bool]
    cuts: list[int]
    sizes: list[int]
    length: int  # of the turn's searchable text, which the pieces cut


@dataclass(slots=True)
class _Open:
    """The open stretch as a layout walks a turn's pieces (the conversation is not touched)."""

    size: int
    empty: bool
    calls: dict[str, int]
    answered: set[str]
    in_long: bool  # the last entry is a piece of a long turn

    def advance(self, turn: Turn, part: int, parts: int, size: int, opens: bool) -> None:
        """Past part `part` of `parts` of `turn`, of `size` (`opens`: it opened a stretch)."""
        if opens:
            self.size, self.calls = 0, {}
        self.size += size
        self.empty = False
        self.in_long = parts > 1 and not turn.tools
        if part == 0:
            for tool in turn.tools:
                if tool["type"] == "tool_call":
                    self.calls = {**self.calls, tool["id"]: -1}
                else:
                    self.answered.add(tool["id"])


class Conversation:
    """Turns, entries and stretches; stretch k is entries starts[k] to starts[k + 1]."""

    def __init__(self, shape: Shape) -> None:
        self.shape = shape
        self.turns: list[Turn] = []
        self.first_entry: list[int] = []
        self.entries: list[Entry] = []
        self.sizes: list[int] = []  # each entry's size as passthrough sends it
        self.opens: list[bool] = []  # each entry opened a stretch (what persistence replays)
        self.starts: list[int] = []
        # Each closed stretch's size as a rebuild sends it; measured in characters, those
        # closed since the last read are measured then, as compose indexes them then: an
        # append that closes a stretch costs no more than one that does not.
        self._stretch_sizes: list[int] = []
        # What stretch k saves sent as the continuation of k - 1; -1 until first needed.
        self.joins: list[int] = []
        self.open_start = 0
        self.open_size = 0
        self.total_size = 0
        self.silent_entries = 0  # entries of silent turns: while none, every entry shows
        self.open_calls: dict[str, int] = {}  # call id -> entry, for calls in the open stretch
        self.calls: dict[str, int] = {}  # every call id -> its turn
        self.answered: dict[str, int] = {}  # call id -> the turn holding its result
        # Each settled stretch as sent, alone (False) or continuing the one before (True):
        # a rebuild sends dozens, and only a redaction changes them.
        self.renderings: dict[tuple[int, bool], Rendering] = {}

    def __len__(self) -> int:
        return len(self.turns)

    # -- ingest ----------------------------------------------------------------------------

    def layout(
        self, turn: Turn, opens: Sequence[bool] | None = None, cuts: Sequence[int] | None = None
    ) -> Layout:
        """How `turn` would be stored (its pieces, their sizes, which open a stretch), without
        storing it: a journal records this before anything changes. `opens` and `cuts` replay
        a stored turn's choices."""
        text = searchable(turn)
        if cuts is None:
            cuts = [] if turn.silent else self._cuts(turn, text)
        last = self.entries[-1] if self.entries else None
        previous = self.turns[last.turn] if last is not None else None
        in_long = last is not None and last.parts > 1 and not self.turns[last.turn].tools
        empty = self.open_start == len(self.entries)
        state = _Open(self.open_size, empty, self.open_calls, set(), in_long)
        with_when = previous is None or turn.when != previous.when
        if not cuts:  # one piece, the common case: the loop below without its bookkeeping
            size = self._entry_size(turn, text, 0, 1, with_when, last is None)
            given = opens[0] if opens else None
            flag = self._closes(turn, 0, 1, size, state) if given is None else given
            return Layout([flag], [], [size], len(text))
        bounds = [0, *cuts, len(text)]
        sizes = self._piece_sizes(turn, text, bounds, with_when, last is None)
        out = Layout([], list(cuts), sizes, len(text))
        parts = len(sizes)
        for part, size in enumerate(sizes):
            given = opens[part] if opens is not None and part < len(opens) else None
            flag = self._closes(turn, part, parts, size, state) if given is None else given
            out.opens.append(flag)
            if part + 1 < parts:  # what the last piece leaves open is not asked
                state.advance(turn, part, parts, size, flag)
        return out

    def _piece_sizes(
        self, turn: Turn, text: str, bounds: list[int], with_when: bool, first_said: bool
    ) -> list[int]:
        """What each piece of `turn` cut at `bounds` measures sent as its own message (the
        first with its date line if `with_when`; see `_entry_size`)."""
        parts = len(bounds) - 1
        if self.shape.measure is not len or turn.silent or bounds != sorted(bounds):
            return [
                self._entry_size(turn, text[a:b], part, parts, with_when and part == 0,
                                 first_said and part == 0)
                for part, (a, b) in enumerate(pairwise(bounds))
            ]  # fmt: skip
        # In characters, from the offsets (each within the text, ascending): no piece is cut
        # out of the turn to be measured.
        named = first_said and turn.role == "assistant"
        return [
            ordinary_size(
                turn, b - a, part, parts, with_when=with_when and part == 0,
                named=(named and part == 0) or text.startswith(MEMORY_MARKER, a, b),
            )
            for part, (a, b) in enumerate(pairwise(bounds))
        ]  # fmt: skip

    def add(self, turn: Turn, layout: Layout) -> None:
        """Store `turn` as `layout` (from `layout(turn)`) says."""
        index = len(self.turns)
        self.turns.append(turn)
        self.first_entry.append(len(self.entries))
        turn.opens = layout.opens[0]
        if not layout.cuts and not turn.silent and not turn.tools:
            # One piece, the common case: the loop below without its bookkeeping.
            self._add_entry(Entry(index, 0, 1, 0, layout.length), turn.opens, layout.sizes[0])
            return
        bounds = [0, *layout.cuts, layout.length]
        parts = len(bounds) - 1
        if turn.silent:
            self.silent_entries += parts
        for part in range(parts):
            entry = Entry(index, part, parts, bounds[part], bounds[part + 1])
            i = self._add_entry(entry, layout.opens[part], layout.sizes[part])
            if part == 0:
                for tool in turn.tools:
                    if tool["type"] == "tool_call":
                        self.open_calls[tool["id"]] = i
                        self.calls[tool["id"]] = index
                    else:
                        self.answered[tool["id"]] = index

    def _entry_size(
        self, turn: Turn, body: str, part: int, parts: int, with_when: bool, first_said: bool
    ) -> int:
        """What part `part` of `parts` of `turn`, `body`, measures sent as its own message
        (`first_said`: it opens the conversation, so an assistant's is named)."""
        if turn.silent:
            return self.shape.measure("")
        named = first_said and turn.role == "assistant"
        measure = self.shape.measure
        # `ordinary_length` inlined, no piece made: every append sizes a turn, and calling it
        # here cost appends 2-3 % (`python -m eval ab-revision ba3ce5a`, when it was tried).
        if measure is len:
            named = named or body.startswith(MEMORY_MARKER)
            return ordinary_size(turn, len(body), part, parts, with_when=with_when, named=named)
        piece = Piece(turn, body, part, parts)
        return measure(render_ordinary(piece, with_when=with_when, named=named))

    def _add_entry(self, entry: Entry, opens: bool, size: int) -> int:
        """Store one entry (closing the open stretch first if it opens one); its index."""
        i = len(self.entries)
        if opens and self.open_start < i:
            self._close(i)
        self.entries.append(entry)
        self.opens.append(opens)
        self.sizes.append(size)
        self.open_size += size
        self.total_size += size
        return i

    def _cuts(self, turn: Turn, text: str) -> list[int]:
        """Where a turn too long for one stretch is cut (offsets into its text), or none."""
        shape = self.shape
        # A tool round is cut only past the cap: an agent's open round must stay native.
        limit = shape.cap if turn.tools else shape.cut_at
        if shape.measure is len:  # in characters: measured, not rendered
            if ordinary_most(turn, len(text)) <= limit:
                return []  # too short to reach it, whatever its rendering adds
            whole = ordinary_size(turn, len(text), 0, 1, with_when=True, named=True)
            return [] if whole <= limit else cut_offsets(text, shape.piece_size)
        if shape.measure(render_ordinary(Piece(turn, text), with_when=True, named=True)) <= limit:
            return []
        bodies = cut(text, shape.piece_size, shape.measure)
        offsets, at = [], 0
        for body in bodies[:-1]:
            at += len(body)
            offsets.append(at)
        return offsets

    def _closes(self, turn: Turn, part: int, parts: int, size: int, state: _Open) -> bool:
        """Whether part `part` of `parts` of `turn`, of `size` and about to be added, opens a
        new stretch (closing the open one).

        Never right before the result of a call in the open stretch, so a call and its result
        always share a stretch; a pending call also holds the stretch open up to the cap.
        """
        if state.empty:
            return False
        tools = turn.tools
        if (
            tools
            and part == 0
            and any(t["type"] == "tool_result" and t["id"] in state.calls for t in tools)
        ):
            return False
        shape = self.shape
        if state.size + size > shape.cap:
            return True  # the cap wins over the rest: every stretch must fit twice in the budget
        calls = state.calls
        if calls and any(c not in self.answered and c not in state.answered for c in calls):
            return False
        if part > 0:
            return state.size >= shape.stretch_size
        if (parts > 1 and not tools) or state.in_long:
            return True  # a long turn's stretches are its own: neither side joins them
        if not turn.shown:
            return False  # tool results only: an agent's rounds stay with the request they serve
        if turn.role != "user" and not shape.tuning.close_at_any_turn:
            return False
        if shape.boundaries is not None:
            return self._boundary(turn)
        return state.size >= shape.stretch_size

    def _boundary(self, turn: Turn) -> bool:
        assert self.shape.boundaries is not None
        stretch = [
            {"role": p.turn.role, "text": p.body}
            for p in self.pieces(self.open_start, len(self.entries))
        ] + [{"role": turn.role, "text": turn.shown}]
        return bool(self.shape.boundaries(stretch))

    def _close(self, end: int) -> None:
        self.starts.append(self.open_start)
        if self.shape.measure is not len:  # a caller's measure runs, and fails, in append
            self._stretch_sizes.append(self._rendered_size(self.open_start, end))
        self.joins.append(-1)
        self.open_start = end
        self.open_size = 0
        self.open_calls = {}

    def _rendered_size(self, start: int, end: int) -> int:
        measure = self.shape.measure
        if measure is len:
            return self._size_in_characters(start, end)
        pieces = [p for p in self.pieces(start, end) if not p.turn.silent]
        return measure(render_unit(pieces)) if pieces else 0

    def _size_in_characters(self, start: int, end: int) -> int:
        """`unit_length` of the shown entries from `start` to `end` (0 if none), from the
        entries themselves: no piece is made (a first compose sizes every stretch)."""
        turns = self.turns
        shown: list[tuple[Turn, int, int]] = []
        for entry in self.entries[start:end]:
            turn = turns[entry.turn]
            if turn.silent:
                continue
            if entry.parts == 1:
                shown.append((turn, 0, len(searchable(turn))))
            else:
                body = searchable(turn)[entry.start : entry.end]
                shown.append((turn, len(Piece.label_of(entry.part, entry.parts)), len(body)))
        return unit_size(shown) if shown else 0

    # -- reading ---------------------------------------------------------------------------

    @property
    def stretch_sizes(self) -> list[int]:
        sizes = self._stretch_sizes
        if len(sizes) < len(self.starts):  # those closed since the last read
            bounds = [*self.starts[len(sizes) :], self.open_start]
            sizes += map(self._rendered_size, bounds[:-1], bounds[1:])
        return sizes

    def piece_of(self, entry: Entry) -> Piece:
        turn = self.turns[entry.turn]
        text = searchable(turn)
        if entry.parts == 1:
            return Piece(turn, text)
        return Piece(turn, text[entry.start : entry.end], entry.part, entry.parts)

    def piece(self, i: int) -> Piece:
        return self.piece_of(self.entries[i])

    def pieces(self, start: int, end: int) -> list[Piece]:
        return [self.piece_of(e) for e in self.entries[start:end]]

    def stretch_range(self, k: int) -> tuple[int, int]:
        end = self.starts[k + 1] if k + 1 < len(self.starts) else self.open_start
        return self.starts[k], end

    def stretch_of(self, i: int) -> int:
        """The stretch holding entry `i` (len(starts) for the open one)."""
        return bisect_right(self.starts, i) - 1 if i < self.open_start else len(self.starts)

    def shown_entries(self, start: int, end: int) -> Sequence[int]:
        """The entries from `start` to `end` that show something (are not silent)."""
        if not self.silent_entries:
            return range(start, end)
        turns, entries = self.turns, self.entries
        return [i for i in range(start, end) if not turns[entries[i].turn].silent]

    def stretch_bodies(self, k: int) -> list[str]:
        """What stretch `k` is indexed by: its shown entries' text, one string each."""
        return [p.body for p in self.pieces(*self.stretch_range(k)) if not p.turn.silent]

    def bodies_by_role(self, first: int, end: int) -> list[tuple[list[str], list[str]]]:
        """For each stretch from `first` to `end`, its shown entries' text said by the user
        and by the assistant, in one pass over the entries."""
        turns, entries = self.turns, self.entries
        bounds = [*self.starts[first:end], self.starts[end] if end < len(self.starts)
                  else self.open_start]  # fmt: skip
        out: list[tuple[list[str], list[str]]] = []
        for k in range(end - first):
            user: list[str] = []
            other: list[str] = []
            for entry in entries[bounds[k] : bounds[k + 1]]:
                turn = turns[entry.turn]
                if turn.silent:
                    continue
                text = searchable(turn)
                body = text if entry.parts == 1 else text[entry.start : entry.end]
                (user if turn.role == "user" else other).append(body)
            out.append((user, other))
        return out

    def stretch_text(self, k: int) -> str:
        """Stretch `k`'s shown text as one string (what a custom retriever is given)."""
        return "\n".join(self.stretch_bodies(k))

    def last_shown(self, k: int) -> Piece | None:
        """The last entry of stretch `k` that is not silent (None if none, or no such k)."""
        if k < 0:
            return None
        start, end = self.stretch_range(k)
        for i in range(end - 1, start - 1, -1):
            if not self.turns[self.entries[i].turn].silent:
                return self.piece(i)
        return None

    def join_saving(self, k: int) -> int:
        """What stretch `k` saves sent as the continuation of stretch `k` - 1: its marker
        line, and its date line when the date does not change ("Retrieval ablations")."""
        saving = self.joins[k]
        if saving >= 0:
            return saving
        last = self.last_shown(k - 1)
        start, end = self.stretch_range(k)
        first = next((p for p in self.pieces(start, end) if not p.turn.silent), None)
        saving = 0
        if last is not None and first is not None:
            saving = self.shape.measure(MEMORY_MARKER)
            if first.turn.when and first.turn.when == last.turn.when:
                saving += self.shape.measure(when_line(first.turn.when))
        self.joins[k] = saving
        return saving

    def dated(self, k: int) -> bool:
        """Whether stretch `k` carries a resolved date (an annotation lengthened a turn)."""
        start, end = self.stretch_range(k)
        turns = {self.entries[i].turn for i in range(start, end)}
        return any(len(self.turns[t].shown) != len(self.turns[t].text) for t in turns
                   if not self.turns[t].silent)  # fmt: skip

    def pending(self) -> int:
        """The first entry of the open stretch holding a call not answered yet (or the end)."""
        waiting = [i for call, i in self.open_calls.items() if call not in self.answered]
        return min(waiting, default=len(self.entries))

    # -- redaction ---------------------------------------------------------------------------

    def touched_by(self, index: int) -> list[int]:
        """The closed stretches holding entries of turn `index`."""
        first = self.first_entry[index]
        held = {self.stretch_of(i) for i in range(first, first + self.entries[first].parts)}
        return sorted(held - {len(self.starts)})

    def blank(self, index: int, new: Turn) -> None:
        """Replace turn `index` by its redacted form; sizes and stretch sizes follow."""
        first = self.first_entry[index]
        self._forget_tools(index)
        if not self.turns[index].silent:
            self.silent_entries += self.entries[first].parts
        self.turns[index] = new
        for i in range(first, first + self.entries[first].parts):
            self.total_size -= self.sizes[i]
            if i >= self.open_start:
                self.open_size -= self.sizes[i]
            self.sizes[i] = 0
        self.renderings.clear()
        for k in self.touched_by(index):
            self.stretch_sizes[k] = self._rendered_size(*self.stretch_range(k))
            self.joins[k] = -1
            if k + 1 < len(self.joins):
                self.joins[k + 1] = -1

    def answered_next(self, call_id: str) -> bool:
        """Whether call `call_id`'s result lies in the user turns right after the assistant
        turns holding the call (no assistant turn after a user turn between them), as
        providers require of a round sent natively. A result answered later travels as text."""
        call, answer = self.calls.get(call_id), self.answered.get(call_id)
        if call is None or answer is None:
            return False
        user_between = False
        for turn in self.turns[call + 1 : answer]:
            if turn.role != "assistant":
                user_between = True
            elif user_between:
                return False
        return True

    def _forget_tools(self, index: int) -> None:
        """Drop turn `index`'s calls and results from the pairing tables, as a Memory
        reopened from the redacted records never learns them."""
        for tool in self.turns[index].tools:
            call = tool["type"] == "tool_call"
            table = self.calls if call else self.answered
            if table.get(tool["id"]) == index:
                del table[tool["id"]]
            if call:
                self.open_calls.pop(tool["id"], None)

    def record_cuts(self, index: int) -> tuple[list[bool], list[int]]:
        """Turn `index`'s per-entry stretch openings and its cut offsets, for persistence."""
        first = self.first_entry[index]
        entries = self.entries[first : first + self.entries[first].parts]
        return self.opens[first : first + len(entries)], [e.start for e in entries[1:]]


# -- reopening ------------------------------------------------------------------------------
# What `layout` and `add` would build for turns measured before, built in bulk: a store's
# snapshot holds those measurements (`_retrieval/snapshot.py`).


def restore(
    conv: Conversation, turns: list[Turn], cuts: dict[int, list[int]], opens: list[bool],
    sizes: list[int], stretch_sizes: list[int],
) -> None:  # fmt: skip
    """Store `turns`, into empty `conv`, as `add` would with the layouts they had
    when measured before: `cuts` for the turns cut into pieces, `opens` and `sizes` per
    entry, `stretch_sizes` per closed stretch. Reopening renders and measures nothing.

    Only for characters as the measure: the stretch sizes are then read lazily, as here.
    """
    assert not conv.turns and conv.shape.measure is len
    # Each a pass in C where it can: this runs for every turn of a reopened conversation.
    lengths = list(map(len, map(attrgetter("shown"), turns)))
    with_tools = list(compress(range(len(turns)), map(attrgetter("tools"), turns)))
    for t in with_tools:
        lengths[t] = len(searchable(turns[t]))
    entries, first_entry = conv.entries, conv.first_entry
    done = 0
    for t, offsets in cuts.items():  # ascending; whole turns in between, in bulk
        _restore_whole(conv, lengths, done, t)
        first_entry.append(len(entries))
        bounds = [0, *offsets, lengths[t]]
        parts = len(bounds) - 1
        entries += map(Entry, repeat(t), range(parts), repeat(parts), bounds, bounds[1:])
        done = t + 1
    _restore_whole(conv, lengths, done, len(turns))
    conv.turns = turns
    conv.sizes, conv.opens = sizes, opens
    # `_add_entry` closes the open stretch at every opening entry but the first.
    closes = [i for i in compress(range(len(opens)), opens) if i > 0]
    conv.starts = [0, *closes[:-1]] if closes else []
    conv.open_start = closes[-1] if closes else 0
    assert len(stretch_sizes) == len(conv.starts)
    conv._stretch_sizes = stretch_sizes
    conv.joins = [-1] * len(conv.starts)
    conv.total_size = sum(sizes)
    conv.open_size = sum(sizes[conv.open_start :])
    silent = compress(range(len(turns)), map(attrgetter("silent"), turns))
    conv.silent_entries = sum(entries[first_entry[t]].parts for t in silent)
    for t in with_tools:  # as `add` pairs them
        first = first_entry[t]
        for tool in turns[t].tools:
            if tool["type"] == "tool_call":
                if first >= conv.open_start:  # a call in a closed stretch was reset
                    conv.open_calls[tool["id"]] = first
                conv.calls[tool["id"]] = t
            else:
                conv.answered[tool["id"]] = t


def _restore_whole(conv: Conversation, lengths: list[int], start: int, end: int) -> None:
    """Turns `start` to `end`, each one entry, stored by `restore`."""
    n = len(conv.entries)
    conv.first_entry += range(n, n + end - start)
    conv.entries += map(Entry, range(start, end), repeat(0), repeat(1), repeat(0),
                        lengths[start:end])  # fmt: skip


def cuts_of(conv: Conversation, turn: Turn) -> list[int]:
    """Where `conv` cuts `turn` when laid out with no cuts given (as `layout` cuts it)."""
    return [] if turn.silent else conv._cuts(turn, searchable(turn))
