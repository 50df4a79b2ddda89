"""Change logs on the embedded store: beside a narrow port table ``t_x`` (the one whose heads it
keeps, ``storage.embedded_heads``) a log ``g_x (seq, k, stamp)`` of the keys of the rows
inserted, replaced, updated or deleted, in commit order, so that a reader that keeps something
derived from every row (a database drop's outline of every table) reads again only the rows
changed since it last looked.

SQLite triggers on ``t_x`` append to the log in the statement that changes the row, by any
process and any version of the server that writes the file. Each entry has a sequence number
(one above the last entry's: never given twice while the entry that had it is committed and
kept) and 8 random bytes; a reader's position is the last entry it read, both of them. The log
keeps the newest ``KEPT_ENTRIES`` entries (each append removes the one that many before it). A
position is good while its entry is still there with the same random bytes: a position whose
entry was removed (the log moved on by more than that), or rolled back (read inside a
transaction that did not commit, its number perhaps given again since), says nothing, and the
reader reads everything again.
"""

from __future__ import annotations

import sqlite3

#: Entries a change log keeps (the newest).
KEPT_ENTRIES = 20_000

#: A reader's place in a change log: the sequence number and random bytes of the last entry it
#: read.
Position = tuple[int, bytes]


def log_name(sql: str) -> str:
    """The SQLite name of the change log of port table ``sql`` (``t_x``: ``g_x``; injective)."""
    return "g" + sql[1:]


def ensure_log(conn: sqlite3.Connection, sql: str) -> None:
    """Create the change log of port table ``sql`` and the triggers that append to it (inside
    the caller's write transaction). Idempotent."""
    log = log_name(sql)
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {log} "
        "(seq INTEGER PRIMARY KEY, k BLOB NOT NULL, stamp BLOB NOT NULL)"
    )
    # ``last_insert_rowid()`` inside a trigger: the entry the trigger has just appended.
    prune = f"DELETE FROM {log} WHERE seq <= last_insert_rowid() - {KEPT_ENTRIES}"

    def append(key: str) -> str:
        return f"INSERT INTO {log} (k, stamp) VALUES ({key}, randomblob(8)); {prune};"

    conn.execute(f"CREATE TRIGGER IF NOT EXISTS {log}_i AFTER INSERT ON {sql} "
                 f"BEGIN {append('new.k')} END")  # fmt: skip
    conn.execute(f"CREATE TRIGGER IF NOT EXISTS {log}_u AFTER UPDATE ON {sql} "
                 f"BEGIN {append('old.k')} {append('new.k')} END")  # fmt: skip
    conn.execute(f"CREATE TRIGGER IF NOT EXISTS {log}_d AFTER DELETE ON {sql} "
                 f"BEGIN {append('old.k')} END")  # fmt: skip


def changed_keys(
    conn: sqlite3.Connection, log: str, since: Position | None
) -> tuple[Position | None, list[bytes] | None]:
    """The log's last position and the keys changed after ``since`` (distinct, sorted); None
    for the keys when ``since`` is None or no longer good (read everything again then), None
    for the position while the log is empty. One snapshot: the caller's transaction, or one
    opened here."""
    own = conn.in_transaction
    if not own:
        conn.execute("BEGIN")
    try:
        last = conn.execute(f"SELECT seq, stamp FROM {log} ORDER BY seq DESC LIMIT 1").fetchone()
        position: Position | None = None if last is None else (last[0], last[1])
        if since is None or position is None:
            return position, None
        seq, stamp = since
        found = conn.execute(f"SELECT stamp FROM {log} WHERE seq = ?", (seq,)).fetchone()
        if found is None or found[0] != stamp:
            return position, None
        keys = conn.execute(f"SELECT DISTINCT k FROM {log} WHERE seq > ? ORDER BY k",
                            (seq,)).fetchall()  # fmt: skip
        return position, [key for (key,) in keys]
    finally:
        if not own:
            conn.execute("COMMIT")
