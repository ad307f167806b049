"""The stores' SQL text, written once for SQLite and PostgreSQL.

A template marks a parameter with ``?`` and the table prefix with ``{s}`` (empty in SQLite,
``schema.`` in PostgreSQL); :meth:`Statements.rendered` turns it into one dialect's text.
Table definitions also name their column types (``{id}``, ``{big}``, ``{int}``, ``{blob}``).
"""

from __future__ import annotations

#: Version of the table layout.  A store written by a newer layout is refused, never altered;
#: an older one is upgraded in place when opened (2 added ``snapshots``, 3 ``vectors``,
#: 4 ``quarantine``, 5 ``recall_index``, 6 the recall index in pieces: ``recall_users``,
#: ``recall_segments``, ``recall_terms``, ``recall_index`` dropped; 7 an index of
#: ``recall_terms`` by segment).
SCHEMA_VERSION = 7
FORMAT = "yait_byheart.store"

# The layout of schema version 1.
BASE_TABLES = (
    "CREATE TABLE {s}meta (key {text} PRIMARY KEY, value {text} NOT NULL)",
    "CREATE TABLE {s}conversations (id {id}, name {text} NOT NULL UNIQUE, user_id {text}, "
    "head {text} NOT NULL, seq {big} NOT NULL)",
    "CREATE INDEX conversations_user ON {s}conversations (user_id)",
    # record is text, not jsonb: jsonb reorders keys and costs a parse per append.
    "CREATE TABLE {s}turns (conv {big} NOT NULL, idx {int} NOT NULL, record {text} NOT NULL, "
    "PRIMARY KEY (conv, idx))",
    "CREATE TABLE {s}state (conv {big} PRIMARY KEY, state {text} NOT NULL)",
)
# What each schema version added to the one before, run in order to upgrade an older store
# (IF NOT EXISTS: a store whose upgrade was half done by hand still upgrades).
UPGRADES = {
    2: ("CREATE TABLE IF NOT EXISTS {s}snapshots (conv {big} PRIMARY KEY, data {blob} NOT NULL)",),
    3: (
        "CREATE TABLE IF NOT EXISTS {s}vectors (conv {big} NOT NULL, name {text} NOT NULL, "
        "key {text} NOT NULL, data {blob} NOT NULL, PRIMARY KEY (conv, name, key))",
    ),
    # Rows `repair` set aside because they could not be read: their bytes, kept, never parsed.
    4: (
        "CREATE TABLE IF NOT EXISTS {s}quarantine (id {id}, conv {big} NOT NULL, "
        "tbl {text} NOT NULL, idx {int}, data {blob} NOT NULL, problem {text} NOT NULL)",
    ),
    # Each user's recall index (derived, see `_user_saved`), and a count of the redactions,
    # repairs and deletions that dropped one (a write built before one of them is refused).
    5: (
        "CREATE TABLE IF NOT EXISTS {s}recall_index (user_id {text} PRIMARY KEY, "
        "data {blob} NOT NULL)",
        "INSERT INTO {s}meta (key, value) VALUES ('recall_generation', '0') "
        "ON CONFLICT (key) DO NOTHING",
    ),
    # The recall index in pieces a query reads selectively (see `_user_saved`): per user a
    # version a write must still find, its segments, and each segment's postings per term.
    6: (
        "DROP TABLE IF EXISTS {s}recall_index",
        "CREATE TABLE IF NOT EXISTS {s}recall_users (user_id {text} PRIMARY KEY, "
        "version {big} NOT NULL)",
        "CREATE TABLE IF NOT EXISTS {s}recall_segments (user_id {text} NOT NULL, "
        "seg {big} NOT NULL, docs {big} NOT NULL, data {blob} NOT NULL, "
        "PRIMARY KEY (user_id, seg))",
        "CREATE TABLE IF NOT EXISTS {s}recall_terms (user_id {text} NOT NULL, "
        "term {blob} NOT NULL, seg {big} NOT NULL, data {blob} NOT NULL, "
        "PRIMARY KEY (user_id, term, seg))",
    ),
    # A segment's postings found by its number (a merge reads and drops them): without it,
    # each merge passed over every term row of the user (docs/benchmarks.md, "Stateless
    # requests").
    7: ("CREATE INDEX IF NOT EXISTS recall_terms_seg ON {s}recall_terms (user_id, seg)",),
}
# Tables holding a conversation's rows (deleted with it); `conversations` itself comes last.
CHILD_TABLES = ("turns", "state", "snapshots", "vectors", "quarantine")
SQLITE_TYPES = {"id": "INTEGER PRIMARY KEY", "big": "INTEGER", "int": "INTEGER"}
SQLITE_TYPES |= {"text": "TEXT", "blob": "BLOB"}
POSTGRES_TYPES = {"id": "bigserial PRIMARY KEY", "big": "bigint", "int": "integer"}
POSTGRES_TYPES |= {"text": "text", "blob": "bytea"}


def new_tables(prefix: str, types: dict[str, str]) -> list[str]:
    """The DDL of a new store of SCHEMA_VERSION: version 1's tables, then each upgrade."""
    statements = [t.format(s=prefix, **types) for t in BASE_TABLES]
    for version in range(2, SCHEMA_VERSION + 1):
        statements += upgrade(version, prefix, types)
    return statements


def upgrade(version: int, prefix: str, types: dict[str, str]) -> list[str]:
    """The DDL that schema `version` added to the one before."""
    return [t.format(s=prefix, **types) for t in UPGRADES[version]]


# Every statement the stores run, one "name: template" a line (an indented line continues
# the one above).  `{{keys}}` in `vectors_in` becomes one `?` per key at run time.  A text
# column read back as `{raw}` (one per column read so) comes as the dialect reads stored text
# that may be damaged: bytes in SQLite, so that junk bytes reach the code that names the row.
_TEMPLATES = """
meta: SELECT key, value FROM {s}meta
insert_meta: INSERT INTO {s}meta (key, value) VALUES (?, ?)
set_version: UPDATE {s}meta SET value = ? WHERE key = 'schema_version'
conversation: SELECT id, user_id, {raw_head}, seq FROM {s}conversations WHERE name = ?
turns: SELECT idx, {raw_record} FROM {s}turns WHERE conv = ? ORDER BY idx
state: SELECT {raw_state} FROM {s}state WHERE conv = ?
since: SELECT c.seq, t.idx, {raw_t_record} FROM {s}conversations c
    LEFT JOIN {s}turns t ON t.conv = c.id AND t.idx >= ? WHERE c.id = ? ORDER BY t.idx
redacted: SELECT idx, {raw_record} FROM {s}turns WHERE conv = ? AND idx < ? AND record LIKE ?
    ORDER BY idx
lock_conversation: SELECT seq FROM {s}conversations WHERE id = ? FOR UPDATE
bump_seq: UPDATE {s}conversations SET seq = seq + 1 WHERE id = ?
write_state: INSERT INTO {s}state (conv, state) SELECT id, ? FROM {s}conversations WHERE id = ?
    ON CONFLICT (conv) DO UPDATE SET state = excluded.state
set_aside: INSERT INTO {s}quarantine (conv, tbl, idx, data, problem) VALUES (?, ?, ?, ?, ?)
put_turn: INSERT INTO {s}turns (conv, idx, record) VALUES (?, ?, ?)
    ON CONFLICT (conv, idx) DO UPDATE SET record = excluded.record
delete_state_row: DELETE FROM {s}state WHERE conv = ?
set_head: UPDATE {s}conversations SET head = ? WHERE id = ?
turn_row: SELECT {raw_record} FROM {s}turns WHERE conv = ? AND idx = ?
head_row: SELECT {raw_head} FROM {s}conversations WHERE id = ?
quarantined: SELECT q.tbl, q.idx, q.problem FROM {s}quarantine q
    JOIN {s}conversations c ON c.id = q.conv WHERE c.name = ? ORDER BY q.id
snapshot: SELECT data FROM {s}snapshots WHERE conv = ?
create: INSERT INTO {s}conversations (name, user_id, head, seq)
    VALUES (?, ?, ?, 0) ON CONFLICT (name) DO NOTHING
create_with_id: INSERT INTO {s}conversations (id, name, user_id, head, seq)
    VALUES (?, ?, ?, ?, 0) ON CONFLICT (name) DO NOTHING
top_conversation_id: SELECT MAX(id) FROM {s}conversations
last_conversation_id: SELECT value FROM {s}meta WHERE key = 'last_conversation_id'
set_last_conversation_id: INSERT INTO {s}meta (key, value) VALUES ('last_conversation_id', ?)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value
conversation_id: SELECT id FROM {s}conversations WHERE name = ?
insert_turn: INSERT INTO {s}turns (conv, idx, record) VALUES (?, ?, ?)
insert_state: INSERT INTO {s}state (conv, state) VALUES (?, ?)
insert_snapshot: INSERT INTO {s}snapshots (conv, data) VALUES (?, ?)
rewrite_turn: UPDATE {s}turns SET record = ? WHERE conv = ? AND idx = ?
drop_snapshot: DELETE FROM {s}snapshots WHERE conv = ?
write_snapshot: INSERT INTO {s}snapshots (conv, data)
    SELECT id, ? FROM {s}conversations WHERE id = ? AND seq = ?
    ON CONFLICT (conv) DO UPDATE SET data = excluded.data
recall_generation: SELECT value FROM {s}meta WHERE key = 'recall_generation'
recall_version: SELECT version FROM {s}recall_users WHERE user_id = ?
set_recall_version: INSERT INTO {s}recall_users (user_id, version) VALUES (?, ?)
    ON CONFLICT (user_id) DO UPDATE SET version = excluded.version
recall_segment: SELECT data FROM {s}recall_segments WHERE user_id = ? AND seg = ?
recall_segment_list: SELECT seg, docs FROM {s}recall_segments WHERE user_id = ? ORDER BY seg
recall_segment_top: SELECT max(seg) FROM {s}recall_segments WHERE user_id = ?
database_id: SELECT value FROM {s}meta WHERE key = 'database_id'
recall_terms_in: SELECT term, seg, data FROM {s}recall_terms
    WHERE user_id = ? AND term IN ({{keys}})
recall_every_term: SELECT term, seg, data FROM {s}recall_terms WHERE user_id = ?
recall_segment_terms: SELECT term, seg, data FROM {s}recall_terms WHERE user_id = ? AND seg = ?
recall_pages_in: SELECT term, data FROM {s}recall_terms
    WHERE user_id = ? AND seg = ? AND term IN ({{keys}})
put_recall_segment: INSERT INTO {s}recall_segments (user_id, seg, docs, data) VALUES (?, ?, ?, ?)
put_recall_term: INSERT INTO {s}recall_terms (user_id, term, seg, data) VALUES (?, ?, ?, ?)
drop_recall_segment: DELETE FROM {s}recall_segments WHERE user_id = ? AND seg = ?
drop_recall_segment_terms: DELETE FROM {s}recall_terms WHERE user_id = ? AND seg = ?
drop_user_recall_segments: DELETE FROM {s}recall_segments WHERE user_id = ?
drop_user_recall_terms: DELETE FROM {s}recall_terms WHERE user_id = ?
drop_recall_users: DELETE FROM {s}recall_users
    WHERE user_id = (SELECT user_id FROM {s}conversations WHERE id = ?)
drop_recall_segments: DELETE FROM {s}recall_segments
    WHERE user_id = (SELECT user_id FROM {s}conversations WHERE id = ?)
drop_recall_terms: DELETE FROM {s}recall_terms
    WHERE user_id = (SELECT user_id FROM {s}conversations WHERE id = ?)
bump_recall_generation: UPDATE {s}meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT)
    WHERE key = 'recall_generation'
exists: SELECT 1 FROM {s}conversations WHERE id = ?
names: SELECT name FROM {s}conversations ORDER BY name
names_of_user: SELECT name FROM {s}conversations WHERE user_id = ? ORDER BY name
ids_by_name: SELECT id FROM {s}conversations WHERE name = ?
ids_by_user: SELECT id FROM {s}conversations WHERE user_id = ?
delete_conversation: DELETE FROM {s}conversations WHERE id = ?
vector_keys: SELECT v.key FROM {s}vectors v JOIN {s}conversations c ON c.id = v.conv
    WHERE c.name = ? AND v.name = ? ORDER BY v.key
vector_count: SELECT count(*) FROM {s}vectors v JOIN {s}conversations c ON c.id = v.conv
    WHERE c.name = ? AND v.name = ?
vectors_in: SELECT v.key, v.data FROM {s}vectors v JOIN {s}conversations c ON c.id = v.conv
    WHERE c.name = ? AND v.name = ? AND v.key IN ({{keys}})
upsert_vector: INSERT INTO {s}vectors (conv, name, key, data) VALUES (?, ?, ?, ?)
    ON CONFLICT (conv, name, key) DO UPDATE SET data = excluded.data
delete_vector: DELETE FROM {s}vectors
    WHERE conv = (SELECT id FROM {s}conversations WHERE name = ?) AND name = ? AND key = ?
"""
# A conversation's rows in each of these go with it (`delete_TABLE` statements).
_DELETE_CHILD = "DELETE FROM {s}%s WHERE conv = ?"


def templates() -> dict[str, str]:
    """The statements by name, unrendered.

    >>> templates()["exists"]
    'SELECT 1 FROM {s}conversations WHERE id = ?'
    """
    out: dict[str, str] = {}
    name = ""
    for line in _TEMPLATES.strip().splitlines():
        if line.startswith(" "):
            out[name] += " " + line.strip()
        else:
            name, _, text = line.partition(": ")
            out[name] = text
    for table in CHILD_TABLES:
        out["delete_" + table] = _DELETE_CHILD % table
    return out


def rendered(prefix: str, param: str, raw: str = "{}") -> dict[str, str]:
    """Every statement with `prefix` before each table name, `param` for each ``?`` and each
    `{raw_COLUMN}` read through `raw` (a format with one ``{}`` for the column).

    >>> rendered("byheart.", "%s")["exists"]
    'SELECT 1 FROM byheart.conversations WHERE id = %s'
    >>> rendered("", "?", "CAST({} AS BLOB)")["state"]
    'SELECT CAST(state AS BLOB) FROM state WHERE conv = ?'
    """
    columns = {"head": "head", "record": "record", "state": "state", "t_record": "t.record"}
    reads = {f"raw_{name}": raw.format(column) for name, column in columns.items()}
    return {k: v.format(s=prefix, **reads).replace("?", param) for k, v in templates().items()}


def vectors_in(statements: dict[str, str], count: int, param: str, name: str = "vectors_in") -> str:
    """The rendered `vectors_in` statement (or another with `{keys}`) for `count` keys."""
    return statements[name].format(keys=", ".join([param] * count))
