"""The MCP server's tools: remember, recall, recall_across, forget, conversations, over one store.

Each tool publishes a JSON Schema for its input, and that schema checks the input
(`_argcheck`).  A tool answers ``(text, structured, is_error)``; bad arguments, unknown
conversations and the library's own refusals come back as error results the model can read and
correct, never as exceptions.
"""

from __future__ import annotations

import sqlite3
import warnings
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from typing import Any

from .._dates.resolve import parse_when
from ..memory import Memory
from ..providers._show import messages_text, shown_id
from ..store import (
    DamagedRowError,
    PostgresStore,
    SQLiteStore,
    StoreConflictError,
    StoreError,
    UnknownConversationError,
)
from ..store._recall import source_line
from ._argcheck import problems

Store = SQLiteStore | PostgresStore
Answer = tuple[str, dict[str, Any], bool]

# Open conversations kept in memory between calls: reopening a long one costs its index load.
_KEEP_OPEN = 16


def tool_list(max_text: int, served: str | None = None) -> list[dict[str, Any]]:
    """The tools' descriptions, as ``tools/list`` returns them (built afresh on each call);
    `served`: the one user a server serves (their id is then every tool's default user)."""
    ids, conv, user, when, query = _fields(served)
    asked = ["query"] if served is not None else ["user", "query"]
    text = {"type": "string", "minLength": 1, "maxLength": max_text,
            "description": "The turn's words, verbatim."}  # fmt: skip
    return [
        _tool("remember", "Remember a turn",
              "Store one conversation turn verbatim (created on first use). Relative dates in "
              "the text ('last Saturday') are resolved against `when`.",
              {"conversation": conv, "text": text,
               "role": {"type": "string", "enum": ["user", "assistant"],
                        "description": "Who said it (default user)."},
               "when": {"type": "string", "maxLength": 200,
                        "description": "When it was said, e.g. '2026-12-03 14:05' or '8 May "
                                       "2023'; omitted: now; '': undated."},
               "user": user,
               "key": {**ids, "description": "Optional id of this message (e.g. the chat "
                       "message's id). Sending the same message again with the same key stores "
                       "nothing and answers the turn it was stored as: retries are safe."}},
              ["conversation", "text"], readOnlyHint=False, destructiveHint=False),
        _tool("recall", "Recall earlier turns",
              "The earlier turns of a conversation that matter for `query`, verbatim, with their "
              "dates, selected under a character budget.",
              {"conversation": conv, "query": query,
               "budget": {"type": "integer", "minimum": 100, "maximum": 10_000_000,
                          "description": "Characters to fill (default: the conversation's)."},
               "when": when},
              ["conversation", "query"], readOnlyHint=True),
        _tool("recall_across", "Recall from the user's other conversations",
              "What `user` said in their other stored conversations that matters for `query`, "
              "verbatim, each passage with its conversation id and date. Only that user's "
              "conversations are read.",
              {"user": user, "query": query,
               "exclude": {**conv, "description": "A conversation to leave out (the current "
                           "one, whose turns `recall` gives)."},
               "budget": {"type": "integer", "minimum": 100, "maximum": 10_000_000,
                          "description": "Characters to fill (default 6,000)."},
               "when": when},
              asked, readOnlyHint=True),
        _tool("forget", "Forget",
              "Delete a conversation (`conversation`), every conversation of a user (`user`), "
              "or blank one turn (`conversation` and `turn`, as remember numbered it; -1: the "
              "last).",
              {"conversation": conv, "user": user,
               "turn": {"type": "integer", "minimum": -(2**31), "maximum": 2**31}},
              [], readOnlyHint=False, destructiveHint=True, idempotentHint=True),
        _tool("conversations", "List conversations", "The stored conversation ids, sorted.",
              {"user": user}, [], readOnlyHint=True),
    ]  # fmt: skip


def _fields(served: str | None) -> tuple[dict[str, Any], ...]:
    """The schemas several tools share: an id, a conversation, a user (`served`'s, when a
    server serves one), when a query is asked, and the query."""
    ids = {"type": "string", "minLength": 1, "maxLength": 512}
    conv = {**ids, "description": "Conversation id, e.g. 'alice-2026-12-03' or a chat id."}
    user = {**ids, "description": "User id that owns conversations (recorded at creation)."}
    if served is not None:
        user["description"] = f"This server serves user {served!r} only (the default)."
    when = {"type": "string", "maxLength": 200,
            "description": "When the query is asked, e.g. '2026-12-03' or '8 May 2023': "
                           "relative dates in it ('last weekend') are read against it; "
                           "omitted or '': not read."}  # fmt: skip
    query = {"type": "string", "minLength": 1, "maxLength": 20_000,
             "description": "The new message or question."}  # fmt: skip
    return ids, conv, user, when, query


def _tool(name: str, title: str, description: str, props: dict[str, Any], required: list[str],
          **hints: bool) -> dict[str, Any]:  # fmt: skip
    """One tool's description: its input schema (no properties but `props`) and hints."""
    schema = {"type": "object", "properties": props, "required": required,
              "additionalProperties": False}  # fmt: skip
    return {"name": name, "title": title, "description": description,
            "inputSchema": schema, "annotations": {"title": title, **hints}}  # fmt: skip


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


class Tools:
    """The tools over `store`; conversations created by ``remember`` get `budget`.

    `user`: the one user served; every tool then sees their conversations only (another's
    is answered as absent) and refuses another user id.  `log`: where a warning the store
    gives (a read-only or full store) is reported, once per kind.
    """

    def __init__(
        self, store: Store, *, budget: int, max_text: int, clock: Callable[[], datetime],
        user: str | None = None, log: Callable[[str], None] | None = None,
    ) -> None:  # fmt: skip
        self.store = store
        self.budget = budget
        self.clock = clock  # read only when `remember` is given no `when`
        self.user = user
        self.log = log
        self.schemas = {t["name"]: t for t in tool_list(max_text, user)}
        self._open: OrderedDict[str, tuple[Memory, str | None]] = OrderedDict()
        self._warned: set[type[Warning]] = set()

    def call(self, name: str, arguments: Any) -> Answer:
        """Run tool `name`; KeyError if there is no such tool."""
        schema = self.schemas[name]["inputSchema"]
        wrong = problems(schema, arguments)
        if wrong:
            return f"{name}: " + "; ".join(wrong) + ".", {}, True
        run = {"remember": self._remember, "recall": self._recall, "forget": self._forget,
               "conversations": self._conversations,
               "recall_across": self._recall_across}[name]  # fmt: skip
        try:
            for attempt in (1, 2):
                try:
                    return self._warning_once(run, arguments)
                except StoreConflictError:
                    # Deleted by another server after this one opened it: open it afresh.
                    self._open.clear()
                    if attempt == 2:
                        raise
        except DamagedRowError as exc:
            self._open.pop(str(arguments.get("conversation")), None)
            return f"{name}: {exc}", {}, True
        except UnknownConversationError:
            # The store's own message names a Python call; the model can call a tool.
            return (
                f"{name}: no conversation {arguments.get('conversation')!r} in this store; "
                "the `conversations` tool lists the stored ids",
                {},
                True,
            )
        except (ValueError, TypeError, IndexError, KeyError, StoreConflictError) as exc:
            return f"{name}: {exc}", {}, True
        except StoreError as exc:
            # Its message says what is wrong and whether trying again can help (exc.retry):
            # a lock or a lost connection, yes; a read-only, full or damaged store, no.
            return f"{name}: {exc}", {}, True
        except (sqlite3.Error, OSError) as exc:  # past what the store names: do not guess
            return f"{name}: the store failed ({exc}); nothing was changed", {}, True
        raise AssertionError("unreachable")

    def _warning_once(self, run: Callable[[dict[str, Any]], Answer], args: Any) -> Answer:
        """`run(args)`, the warnings it gives logged in a line each, once per kind a server
        runs (a read-only store warns on every compose: its stderr must not fill up); with no
        `log`, they go to Python's warnings as any library's do."""
        if self.log is None:
            return run(args)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            answer = run(args)
        for w in caught:
            if w.category not in self._warned:
                self._warned.add(w.category)
                self.log(f"{w.category.__name__}: {w.message} (said once)")
        return answer

    def _whose(self, asked: str | None) -> str | None:
        """The user a call is for: the one served, or `asked` when the server serves all."""
        if self.user is None or asked is None or asked == self.user:
            return self.user if self.user is not None else asked
        raise ValueError(
            f"this server serves user {self.user!r} only; leave `user` out or pass that id"
        )

    def _mine(self, conversation: str) -> None:
        """In a one-user server, another user's conversation is answered as absent."""
        if self.user is not None and conversation not in self.store.conversations(user=self.user):
            raise UnknownConversationError(conversation)

    def _memory(self, conversation: str, *, create: bool, user: str | None = None) -> Memory:
        if self.user is not None:
            user = self.user
            if not create:
                self._mine(conversation)
            elif conversation not in self.store.conversations(user=user):
                self._unclaimed(conversation)
        held = self._open.get(conversation)
        if held is not None and (user is None or user == held[1]):
            self._open.move_to_end(conversation)
            return held[0]
        settings = {"budget": self.budget} if create else {}
        mem = self.store.open(conversation, user=user, create=create, **settings)
        self._open[conversation] = (mem, user)
        while len(self._open) > _KEEP_OPEN:
            self._open.popitem(last=False)
        return mem

    def _unclaimed(self, conversation: str) -> None:
        """A one-user server creates a conversation only under an id no one holds: another
        user's is refused without naming them or reading a word of it."""
        if conversation in self.store.conversations():
            raise ValueError(
                f"the conversation id {conversation!r} is taken in this store; pass another id"
            )

    def _remember(self, args: dict[str, Any]) -> Answer:
        conversation, user = args["conversation"], self._whose(args.get("user"))
        role, words = args.get("role", "user"), args["text"]
        if not words.strip():  # a model's empty call is a mistake to tell it about
            raise ValueError("text is blank; pass the words to remember")
        when: str | datetime = args["when"] if "when" in args else self.clock()
        try:
            mem = self._memory(conversation, create=False, user=user)
        except UnknownConversationError:
            # A refused first turn must leave no empty conversation behind: it is tried on a
            # scratch Memory before the conversation is created (deleting it afterwards could
            # delete the turns another server stored in the meantime).
            scratch = Memory(budget=self.budget)
            _check_when(scratch, when, words)
            scratch.append(role, words, when=when)
            mem = self._memory(conversation, create=True, user=user)
        _check_when(mem, when, words)
        index = mem.append(role, words, when=when, key=args.get("key"))
        text = f"remembered as turn {index} of {conversation!r} ({_count(len(mem), 'turn')})"
        return text, {"conversation": conversation, "turn": index, "turns": len(mem)}, False

    def _recall(self, args: dict[str, Any]) -> Answer:
        conversation, query = args["conversation"], _asked(args["query"])
        mem = self._memory(conversation, create=False)
        if "budget" in args and int(args["budget"]) != mem.budget:
            # A one-off budget: a fresh Memory, so the kept one keeps its own settings (the
            # selection it stores is discarded by readers with other settings, never trusted).
            mem = self.store.open(
                conversation, user=self.user, create=False, budget=int(args["budget"])
            )
        _check_when(mem, args.get("when", ""), query)
        result = mem.compose(query, when=args.get("when", ""))
        earlier = result["messages"][:-1]  # the last message is the query itself
        structured = {
            "conversation": conversation, "turns": len(mem), "mode": result["mode"],
            "chars": result["chars"], "included": result["included"], "messages": earlier,
        }  # fmt: skip
        if not earlier:
            return f"{conversation!r} holds no turns yet.", structured, False
        head = (
            f"From {conversation!r} ({_count(len(mem), 'turn')}; {len(result['included'])} shown, "
            f"{result['chars']:,} characters with the query):\n"
        )
        return head + messages_text(earlier), structured, False

    def _recall_across(self, args: dict[str, Any]) -> Answer:
        user, query = self._whose(args.get("user")), _asked(args["query"])
        if user is None:
            raise ValueError("missing argument 'user'")
        _check_when(None, args.get("when", ""), query)
        found = self.store.recall(
            query, user=user, budget=int(args.get("budget", 6_000)),
            exclude=args.get("exclude", ()), when=args.get("when", ""),
        )  # fmt: skip
        structured = {"user": user, "passages": found}
        if not found:
            return f"nothing in user {user!r}'s conversations matches", structured, False
        blocks = [f"[{source_line(r)}]\n{r['text']}" for r in found]
        return "\n\n".join(blocks), structured, False

    def _forget(self, args: dict[str, Any]) -> Answer:
        conversation, user, turn = args.get("conversation"), args.get("user"), args.get("turn")
        user = self._whose(user) if user is not None else None
        if conversation is not None:
            self._mine(conversation)
        if conversation is not None and user is None and turn is not None:
            mem = self._memory(conversation, create=False)
            n, index = len(mem), int(turn)
            if not -n <= index < n:  # said in the tool's terms, not Memory.redact's
                held = f"turns 0 to {n - 1} (-1 is the last)" if n else "no turns yet"
                raise IndexError(f"no turn {index} in {conversation!r}, which holds {held}")
            index %= n  # the reply names the turn blanked, not "-1"
            mem.redact(index)
            text = f"turn {index} of {conversation!r} blanked"
        elif conversation is not None and user is None:
            self._open.pop(conversation, None)
            self.store.delete(conversation)
            text = f"conversation {conversation!r} deleted"
        elif user is not None and conversation is None and turn is None:
            self._open.clear()
            n = self.store.delete_user(user)
            text = f"{_count(n, 'conversation')} of user {user!r} deleted"
        else:
            raise ValueError(
                "pass `conversation` (delete it), `user` (delete theirs), or `conversation` "
                "and `turn` (blank that turn)"
            )
        return text, {"forgotten": text}, False

    def _conversations(self, args: dict[str, Any]) -> Answer:
        names = self.store.conversations(user=self._whose(args.get("user")))
        # One id per line, as the CLI prints them: an id with a line break is quoted.
        text = "\n".join(map(shown_id, names)) if names else "no conversations stored"
        return text, {"conversations": names}, False


def _asked(query: str) -> str:
    """A query that says something, as compose and store.recall require (said here in the
    tool's terms: their messages name Python calls)."""
    if not query.strip():
        raise ValueError("query is blank; pass the user's new message or question")
    return query


def _check_when(mem: Memory | None, when: str | datetime, text: str) -> None:
    """Refuse a `when` that ``Memory.append``, ``compose`` or ``store.recall`` (`mem` None)
    would refuse as no date: said here in the tool's terms, since their own messages name
    Python settings a model cannot change."""
    if isinstance(when, str) and _unreadable(mem, when, text):
        raise ValueError(
            f"cannot read a date in `when`={when!r}; pass e.g. '2026-12-03 14:05', "
            "'8 May 2023', '8. Mai 2023' or '2023年5月8日', or '' for no date"
        )


def _unreadable(mem: Memory | None, when: str, text: str) -> bool:
    resolve, order = (True, None) if mem is None else (mem.resolve_time, mem.date_order)
    dated = resolve and when.strip() and text.strip()
    return bool(dated) and parse_when(when, order) is None
