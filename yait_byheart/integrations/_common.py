"""What the framework integrations share: finding the Memory, reading its turns back as
neutral messages, clearing it, gathering a framework's messages into neutral ones, filing a
framework's items so that each turn keeps the items it came from, and sending a composed
selection as the framework's own objects (``ModelInput``, ``with_originals``)."""

from __future__ import annotations

import json
import threading
import warnings
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar
from urllib.parse import quote, unquote

from .._turns.render import Turn
from ..memory import Memory
from ..store import StoreConflictError

__all__ = [
    "ModelInput",
    "Seen",
    "TurnItems",
    "alternated",
    "catch_up",
    "check_source",
    "check_store",
    "clear_memory",
    "conversation_keys",
    "conversation_name",
    "file_items",
    "file_messages",
    "fingerprint",
    "group_messages",
    "lazy_classes",
    "message_key",
    "open_memory",
    "stored_items",
    "stored_messages",
    "with_originals",
]

T = TypeVar("T")


def check_source(
    memory_or_store: object, session_id: object, settings: Mapping[str, Any], call: str
) -> None:
    """Refuse what ``open_memory`` could not open, before anything is opened."""
    if not isinstance(session_id, str) or not session_id:
        raise ValueError(f"{call}: session_id must be a non-empty str, got {session_id!r}")
    if isinstance(memory_or_store, Memory):
        if settings:
            raise TypeError(
                f"{call}: Memory settings ({', '.join(settings)}) apply only when a store is "
                "given; set them on the Memory you pass"
            )
        return
    if not callable(getattr(memory_or_store, "open", None)):
        raise TypeError(
            f"{call}: memory_or_store must be a yait_byheart.Memory or a store "
            f"(SQLiteStore, PostgresStore), got {type(memory_or_store).__name__}"
        )


def check_store(source: object, call: str, allow_memory: bool = False) -> None:
    """Refuse what is not a store (nor, with `allow_memory`, a Memory), naming `call`."""
    if allow_memory and isinstance(source, Memory):
        return
    if not callable(getattr(source, "open", None)) or not callable(
        getattr(source, "conversations", None)
    ):
        what = "a yait_byheart.Memory or a store" if allow_memory else "a store"
        raise TypeError(
            f"{call}: pass {what} (SQLiteStore, PostgresStore), got {type(source).__name__}"
        )


def open_memory(
    memory_or_store: object, session_id: object, settings: Mapping[str, Any], call: str
) -> tuple[Memory, Any]:
    """The Memory to use and the store it came from (None when a Memory was given)."""
    check_source(memory_or_store, session_id, settings, call)
    if isinstance(memory_or_store, Memory):
        return memory_or_store, None
    return memory_or_store.open(session_id, **settings), memory_or_store  # type: ignore[attr-defined]


def clear_memory(
    memory: Memory, store: Any, session_id: str, settings: Mapping[str, Any]
) -> Memory:
    """Forget a conversation: a store deletes it (bytes purged) and opens it anew; a plain
    Memory has every turn redacted (its words are never sent or stored again)."""
    if store is not None:
        if session_id in store.conversations():
            store.delete(session_id)
        fresh: Memory = store.open(session_id, **settings)
        return fresh
    for index in range(len(memory)):
        memory.redact(index)
    return memory


def stored_messages(memory: Memory, start: int = 0) -> list[dict[str, Any] | None]:
    """Each turn of ``memory`` from ``start`` on as a neutral message with its ``item`` if it
    has one (None for a redacted turn): how the integrations rebuild a conversation reopened
    from a store, or read the turns another handle stored."""
    with memory._lock:
        turns = memory._conv.turns[start:]
    return [_neutral_turn(turn) for turn in turns]


def _neutral_turn(turn: Turn) -> dict[str, Any] | None:
    if turn.redacted:
        return None
    parts: list[dict[str, Any]] = [dict(p) for p in turn.tools]
    if turn.text:
        text = {"type": "text", "text": turn.text}
        parts = [*parts, text] if turn.role == "user" else [text, *parts]
    message: dict[str, Any] = {"role": turn.role, "parts": parts}
    if turn.item is not None:
        message["item"] = turn.item
    return message if parts or "item" in message else None


def stored_items(
    memory: Memory, tag: str, load: Callable[[Any], T],
    from_parts: Callable[[dict[str, Any]], list[T]], start: int = 0,
    local: Mapping[int, list[T]] | None = None,
) -> tuple[list[T], list[int]]:  # fmt: skip
    """The framework items ``memory``'s turns from ``start`` on hold, oldest first, and the
    turn holding each.

    A turn filed by this framework (its item is ``{tag: [dumped item, ...]}``) gives back
    exactly its items (``local[turn]`` if given: the objects this process filed, else
    ``load`` undoing each dump); any other turn with parts (plain ``append_message``,
    another framework) is converted by ``from_parts``; another framework's item-only turn
    gives nothing.
    """
    items: list[T] = []
    turns: list[int] = []
    for index, message in enumerate(stored_messages(memory, start), start):
        if message is None:
            continue
        kept = message.get("item")
        if local is not None and index in local:
            got = list(local[index])
        elif isinstance(kept, dict) and isinstance(kept.get(tag), list):
            got = [load(raw) for raw in kept[tag]]
        else:
            got = from_parts(message) if message["parts"] else []
        items += got
        turns += [index] * len(got)
    return items, turns


def catch_up(memory: Memory) -> None:
    """Apply to ``memory`` what other handles and processes stored in its conversation (a
    store's; one query when nothing changed); StoreConflictError if it was deleted."""
    with memory._lock:
        memory._follow()


class TurnItems(Generic[T]):
    """A framework's items of one Memory's turns, as an integration hands them back, true to
    the store on every read.

    ``read`` first catches up with what other handles and processes stored (``catch_up``),
    then converts only the turns it has not converted yet; a turn blanked since, by any
    writer, makes it convert every turn again. Items filed through ``filed`` are handed back
    as the objects given, not reloaded from their JSON form.
    """

    def __init__(
        self, memory: Memory, tag: str, load: Callable[[Any], T],
        from_parts: Callable[[dict[str, Any]], list[T]],
    ) -> None:  # fmt: skip
        self.memory = memory
        self._convert = (tag, load, from_parts)
        self._local: dict[int, list[T]] = {}
        self._items: list[T] = []
        self._turns: list[int] = []
        self._known = 0  # turns converted
        self._blanked = memory._blanked  # the Memory's count of blanked turns, as converted

    def read(self) -> tuple[list[T], list[int]]:
        """Every item and the turn holding each, after catching up (new lists; the items
        are this object's: copy one before changing it)."""
        memory = self.memory
        with memory._lock:
            catch_up(memory)
            if memory._blanked != self._blanked:
                self._items, self._turns, self._known = [], [], 0
                self._blanked = memory._blanked
            if len(memory) > self._known:
                tag, load, from_parts = self._convert
                items, turns = stored_items(memory, tag, load, from_parts, self._known, self._local)
                self._items += items
                self._turns += turns
                self._known = len(memory)
            return list(self._items), list(self._turns)

    def filed(self, items: Iterable[T], turns: Iterable[int]) -> None:
        """Items this process filed, and their turns (``file_items``' answer): read back as
        these objects."""
        for item, turn in zip(items, turns, strict=True):
            self._local.setdefault(turn, []).append(item)


PartsOf = Callable[[T], "tuple[str, list[dict[str, Any]]] | None"]


def file_items(
    memory: Memory, items: list[T], parts_of: PartsOf[T], dumped: list[Any], tag: str, call: str,
    extra: Mapping[str, Any] | None = None,
) -> list[int]:  # fmt: skip
    """File a framework's ``items`` in ``memory``, each turn keeping the items it came from
    (``{tag: [dumped item, ...], **extra}``, ``dumped[k]`` being item k as JSON data); the
    turn holding each item.

    Items byheart reads nothing from (reasoning, a system prompt, an image) ride in the turn
    of the next item that has parts in this batch (else the one before); a batch with none,
    and a message the Memory refuses (a result whose call it never saw), become turns that
    keep only their items: nothing is lost, nothing unsendable is sent.
    """
    messages, owner = group_messages(items, parts_of)
    homes = _homes(owner)
    if not messages:
        messages = [{"role": "user", "parts": []}]
        homes = [0] * len(items)
    for k, message in enumerate(messages):
        kept = [dumped[j] for j, home in enumerate(homes) if home == k]
        message["item"] = {tag: kept, **(extra or {})}
    turns = [_file_one(memory, message, call) for message in messages]
    return [turns[home] for home in homes]


def _homes(owner: list[int | None]) -> list[int]:
    """Each item's message: its own, else the next item's that has one, else the last."""
    homes: list[int] = []
    following: int | None = None
    for k in range(len(owner) - 1, -1, -1):
        following = owner[k] if owner[k] is not None else following
        homes.append(-1 if following is None else following)
    homes.reverse()
    last = max((o for o in owner if o is not None), default=0)
    return [last if home < 0 else home for home in homes]


def _file_one(memory: Memory, message: dict[str, Any], call: str) -> int:
    # Idempotency: once Memory.append_message takes key= (the concurrent-processes issue),
    # pass the framework's own id of the message's first item here (SDK item id, LangChain
    # message id), so that a retried add files it once. Not available yet.
    try:
        return memory.append_message(message)
    except ValueError as err:
        if not message["parts"]:
            raise
        warnings.warn(f"{call}: kept but not filed for selection: {err}", stacklevel=4)
        silent = {"role": message["role"], "parts": [], "item": message["item"]}
        return memory.append_message(silent)


def group_messages(
    items: Iterable[T], parts_of: Callable[[T], tuple[str, list[dict[str, Any]]] | None]
) -> tuple[list[dict[str, Any]], list[int | None]]:
    """Gather a framework's items into neutral messages, and say which message holds each item.

    ``parts_of`` gives an item's role and parts, or None for an item byheart does not keep
    (reasoning, a system prompt): it gets no message and does not break a group. Tool calls
    join the assistant message before them (its text, or other calls of the round) and
    results join results, so a round of parallel calls, or its results, is one turn.
    """
    messages: list[dict[str, Any]] = []
    owner: list[int | None] = []
    for item in items:
        got = parts_of(item)
        if got is None or not got[1]:
            owner.append(None)
            continue
        role, parts = got
        last = messages[-1] if messages else None
        if last is not None and last["role"] == role and _joins(role, last["parts"], parts):
            last["parts"].extend(parts)
        else:
            messages.append({"role": role, "parts": list(parts)})
        owner.append(len(messages) - 1)
    return messages, owner


def _joins(role: str, before: list[dict[str, Any]], parts: list[dict[str, Any]]) -> bool:
    """Assistant text or calls, then calls; results, then results."""
    if role == "assistant":
        return all(p["type"] == "tool_call" for p in parts)
    tool = all(p["type"] == "tool_result" for p in parts)
    return tool and all(p["type"] == "tool_result" for p in before)


def file_messages(memory: Memory, messages: list[dict[str, Any]], call: str) -> list[int | None]:
    """Append each message to ``memory``; the turn index of each, or None for one the Memory
    refused (a result whose call it never saw, e.g. after ``pop_item``): the framework's own
    copy is still kept, so a run never fails over filing, and a warning says what was left out."""
    turns: list[int | None] = []
    for message in messages:
        try:
            turns.append(memory.append_message(message))
        except ValueError as err:
            warnings.warn(f"{call}: kept but not filed in the Memory: {err}", stacklevel=3)
            turns.append(None)
    return turns


def message_key(role: str, parts: list[dict[str, Any]]) -> str:
    """A neutral message as one string: how a composed message is matched to a filed turn."""
    return json.dumps([role, parts], sort_keys=True, ensure_ascii=False)


def fingerprint(data: Any) -> str:
    """A framework object's JSON form as one string (what tells a message already filed)."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)


class Seen:
    """The messages a hook has filed, by fingerprint and count: a framework that hands over
    the whole list on every call gets only the ones it has not seen filed (a message said
    twice, "yes" then "yes", is filed twice)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def fresh(self, keys: Iterable[str]) -> list[int]:
        """Indices of ``keys`` beyond the count seen so far; those are counted as seen."""
        here: Counter[str] = Counter()
        out: list[int] = []
        for k, key in enumerate(keys):
            here[key] += 1
            if here[key] > self.counts[key]:
                self.counts[key] += 1
                out.append(k)
        return out


def with_originals(
    result: Mapping[str, Any], whole: Mapping[str, T], tools: Mapping[tuple[str, str], Any],
    build: Callable[[str, list[Any]], T],
) -> list[T]:  # fmt: skip
    """A compose result as the framework's own messages: a composed message equal to a filed
    one is that message as the framework made it (``whole``, by ``message_key``); any other
    (selected memory, a turn sent in part) is ``build(role, parts)``, its tool parts the
    framework's originals (``tools`` by ("call" | "result", id)) where known, else the
    neutral part, and its text parts neutral."""
    out: list[T] = []
    for message in result["messages"]:
        role, parts = message["role"], message["parts"]
        found = whole.get(message_key(role, parts))
        if found is not None:
            out.append(found)
            continue
        mapped = [
            tools.get(("call" if p["type"] == "tool_call" else "result", p["id"]), p)
            if p["type"] != "text" else p
            for p in parts
        ]  # fmt: skip
        out.append(build(role, mapped))
    return out


def alternated(
    made: list[T], roles: list[str], parts_of: Callable[[T], list[Any]],
    build: Callable[[str, list[Any]], T],
) -> list[T]:  # fmt: skip
    """``made`` (one framework message per role of ``roles``, the compose's neutral roles)
    with no two messages of one role in a row: each run becomes one message of all its
    parts in order (``build(role, parts)``, ``parts_of`` giving a message's own parts); a
    message alone stays the framework's own object. Bedrock Converse refuses a run; a compose
    sends one when memory or a long turn's pieces precede a user's message. A tool result
    always follows its call's message, so it opens its run and stays first in the merge."""
    runs: list[tuple[str, list[T]]] = []
    for role, message in zip(roles, made, strict=True):
        if runs and runs[-1][0] == role:
            runs[-1][1].append(message)
        else:
            runs.append((role, [message]))
    return [
        run[0] if len(run) == 1 else build(role, [p for m in run for p in parts_of(m)])
        for role, run in runs
    ]


def conversation_name(kind: str, *keys: str) -> str:
    """A store conversation id from a framework's keys (app, user, session...), each quoted
    so that no two keys read alike."""
    return "/".join([kind, *(quote(k, safe="") for k in keys)])


def conversation_keys(name: str) -> list[str]:
    """The keys ``conversation_name`` was given."""
    return [unquote(k) for k in name.split("/")[1:]]


Neutral = tuple[str, list[dict[str, Any]]]


class ModelInput(ABC, Generic[T]):
    """A model-input hook's filing and composing, for frameworks that hand over the whole
    message list before each model call (ADK's contents, Strands' messages).

    Each message not seen before (by its JSON form and count) is filed as one turn keeping
    that JSON form; ``compose`` then returns ``Memory.compose()`` as the framework's own
    messages: a composed message equal to a filed one is the object of this call's list,
    tool calls and results are the framework's own parts (``with_originals``), and no two
    messages of one role are in a row (``alternated``: Bedrock, Strands' default, refuses
    that; Gemini, ADK's, takes one message of several parts as the same turn). Subclasses
    say how a message is dumped, loaded, read, taken apart and rebuilt.
    """

    tag: str
    call: str

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.seen = Seen()
        self.filed: dict[str, list[Neutral]] = {}
        self.tools: dict[tuple[str, str], Any] = {}
        self.last_result: Any = None
        self.known = 0  # the Memory's turns taken in (filed here or read back)
        self.mine: set[int] = set()  # turns filed here since turns were last taken in
        self.refresh()  # a conversation reopened from a store

    def refresh(self) -> bool:
        """Take in the turns other workers filed since (another hook on another store handle
        or process serving the same conversation; one query when they filed nothing), so
        that what they filed counts as filed: never filed twice, its tool parts sent as the
        framework's. False if the conversation was deleted since."""
        try:
            catch_up(self.memory)
        except StoreConflictError:
            return False
        if len(self.memory) > self.known:
            for index, message in enumerate(stored_messages(self.memory, self.known), self.known):
                item = message.get("item") if message else None
                if message is None or index in self.mine or not isinstance(item, dict):
                    continue
                if isinstance(item.get(self.tag), list) and item[self.tag]:
                    key = fingerprint(item[self.tag][0])
                    self.seen.counts[key] += 1
                    neutral = (message["role"], message["parts"])
                    self._remember(key, self.load(item[self.tag][0]), neutral)
            self.known = len(self.memory)
        self.mine.clear()
        return True

    @abstractmethod
    def dump(self, message: T) -> Any:
        """The message as JSON data."""

    @abstractmethod
    def load(self, data: Any) -> T:
        """A message back from ``dump``'s data."""

    @abstractmethod
    def neutral(self, message: T) -> Neutral:
        """The message's neutral role and parts (called once per message, in order)."""

    @abstractmethod
    def tool_parts(self, message: T, parts: list[dict[str, Any]]) -> dict[tuple[str, str], Any]:
        """The message's own tool call and result parts, by ("call" | "result", neutral id)."""

    @abstractmethod
    def build(self, role: str, parts: list[Any]) -> T:
        """A new message of neutral text parts and the framework's own parts."""

    @abstractmethod
    def parts_of(self, message: T) -> list[Any]:
        """The message's own parts (content blocks), in order."""

    def _file(self, message: T, neutral: Neutral, dumped: Any) -> None:
        turns = file_items(self.memory, [message], lambda _: neutral, [dumped], self.tag, self.call)
        self.mine.update(turns)  # by index: turns other writers stored meanwhile are not

    def _remember(self, key: str, message: T, neutral: Neutral) -> None:
        self.filed.setdefault(key, []).append(neutral)
        self.tools.update(self.tool_parts(message, neutral[1]))

    def compose(self, messages: list[T]) -> list[T]:
        """File the messages not seen yet; what to send instead of ``messages``."""
        self.refresh()
        dumps = [self.dump(m) for m in messages]
        keys = [fingerprint(d) for d in dumps]
        for k in self.seen.fresh(keys):
            neutral = self.neutral(messages[k])
            self._file(messages[k], neutral, dumps[k])
            self._remember(keys[k], messages[k], neutral)
        whole: dict[str, T] = {}
        tools = dict(self.tools)
        used: Counter[str] = Counter()
        for message, key in zip(messages, keys, strict=True):
            filed = self.filed.get(key, [])
            if used[key] < len(filed):
                role, parts = filed[used[key]]
                whole.setdefault(message_key(role, parts), message)
                tools.update(self.tool_parts(message, parts))
            used[key] += 1
        self.last_result = self.memory.compose()
        made = with_originals(self.last_result, whole, tools, self.build)
        roles = [m["role"] for m in self.last_result["messages"]]
        return alternated(made, roles, self.parts_of, self.build)


def lazy_classes(module: str, makers: Mapping[str, Callable[[], type]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that makes each class (a subclass of a framework's, so made
    only when first asked for) once."""
    made: dict[str, type] = {}
    lock = threading.Lock()

    def __getattr__(name: str) -> Any:
        if name not in makers:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        with lock:
            if name not in made:
                made[name] = makers[name]()
            return made[name]

    return __getattr__
