"""The revision table behind ``storage.Store``: one row per write, as k3s's kine keeps etcd's
data model. A row is ``(id, name, created, deleted, prev_revision, value)``: ``id`` is the
revision, ``name`` the key (``/<group>/<plural>/<namespace>/<name>``), ``created`` and ``deleted``
flags (0 or 1), the key's previous revision (0: none) and the JSON ``value`` (empty for a
deletion's tombstone).

``RevisionTable`` is what the store asks of it; two tables answer it alike:

- ``SQLiteTable``: the ``kine`` table in SQLite, with the store's revision counter in a ``meta``
  table; a file in WAL mode for a data directory (the rows and the counter survive a restart).
- ``MemoryTable``: for a store without a data directory: the rows in a dict by revision, their
  revisions in order in a list, nothing encoded or copied (a row holds the same bytes object as
  the stored entry), no SQL per write. Nothing survives the process, so it keeps no counter.

Contract: ``insert`` is atomic (all rows or none); rows are inserted in revision order and never
changed; ``compact`` drops the rows a later row of their key superseded at or below its bound,
and tombstones there. Not thread-safe: the store calls it from one thread.
"""

from __future__ import annotations

import bisect
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol

__all__ = ["MemoryTable", "RevisionTable", "Row", "SQLiteTable"]

Row = tuple[int, str, int, int, int, bytes]
"""``(id, name, created, deleted, prev_revision, value)``."""


class RevisionTable(Protocol):
    """The revision table's queries (see the module docstring)."""

    def insert(self, rows: list[Row], counter: int | None) -> None:
        """Add ``rows`` (and store the revision ``counter``, where one is kept) atomically;
        ``sqlite3.Error`` if that fails (nothing is added then)."""

    def counter(self) -> int:
        """The highest revision written or counted (0 for an empty table)."""

    def current(self) -> Iterable[tuple[int, str, bytes]]:
        """``(id, name, value)`` of the newest row of every key whose newest row is no tombstone."""

    def at(self, rev: int, prefix: str) -> Iterable[tuple[int, str, bytes]]:
        """``(id, name, value)`` of the newest row at or below ``rev`` of every key under
        ``prefix`` whose row there is no tombstone."""

    def changes(self, after: int, upto: int, prefix: str) -> Iterable[tuple[str, int, int]]:
        """``(name, created, prev_revision)`` of the rows above ``after`` up to ``upto`` of keys
        under ``prefix``, in revision order."""

    def between(self, after: int, upto: int, prefix: str) -> list[Row]:
        """The rows above ``after`` up to ``upto`` of keys under ``prefix``, in revision order."""

    def row(self, rev: int) -> tuple[bytes, int, int] | None:
        """``(value, deleted, prev_revision)`` of revision ``rev`` (None when there is no such row)."""

    def compact(self, start: int, end: int) -> None:
        """Drop the rows superseded by a row above ``start`` up to ``end``, and the tombstones there."""

    def count(self, upto: int | None = None) -> int:
        """How many rows there are (at or below ``upto``, if given)."""

    def ping(self) -> str | None:
        """None when the table answers, else why not."""

    def close(self) -> None:
        """Release the table."""


class SQLiteTable:
    """The revision table in SQLite: ``data_dir``'s ``state.db`` (WAL, synchronous=NORMAL), or an
    in-memory database when ``path`` is None."""

    def __init__(self, path: Path | None) -> None:
        self._persist_counter = path is not None
        if path is None:
            self.db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=MEMORY")
            self.db.execute("PRAGMA synchronous=OFF")
        else:
            self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS kine (id INTEGER PRIMARY KEY, name TEXT NOT NULL, created INTEGER NOT NULL,"
            " deleted INTEGER NOT NULL, prev_revision INTEGER NOT NULL, value BLOB)")
        self.db.execute("CREATE INDEX IF NOT EXISTS kine_name ON kine (name, id)")
        self.db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL)")

    def insert(self, rows: list[Row], counter: int | None) -> None:
        """See ``RevisionTable``: one transaction."""
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany(
                "INSERT INTO kine (id, name, created, deleted, prev_revision, value) VALUES (?,?,?,?,?,?)", rows)
            if counter is not None and self._persist_counter:
                self.db.execute("INSERT OR REPLACE INTO meta (k, v) VALUES ('rev', ?)", (counter,))

    def counter(self) -> int:
        """See ``RevisionTable``."""
        max_id = self.db.execute("SELECT COALESCE(MAX(id), 0) FROM kine").fetchone()[0]
        row = self.db.execute("SELECT v FROM meta WHERE k = 'rev'").fetchone()
        return max(int(max_id), int(row[0]) if row else 0)

    def current(self) -> Iterable[tuple[int, str, bytes]]:
        """See ``RevisionTable``."""
        rows = self.db.execute(
            "SELECT k.id, k.name, k.value FROM kine k JOIN (SELECT name, MAX(id) AS id FROM kine GROUP BY name) m"
            " ON k.id = m.id WHERE k.deleted = 0")
        return ((int(rev), name, bytes(value)) for rev, name, value in rows)

    def at(self, rev: int, prefix: str) -> Iterable[tuple[int, str, bytes]]:
        """See ``RevisionTable``."""
        rows = self.db.execute(
            "SELECT k.id, k.name, k.value FROM kine k JOIN (SELECT name, MAX(id) AS id FROM kine"
            " WHERE id <= ? AND name >= ? AND name < ? GROUP BY name) m ON k.id = m.id WHERE k.deleted = 0",
            (rev, prefix, prefix + "\uffff"))
        return ((int(row_rev), name, bytes(value)) for row_rev, name, value in rows)

    def changes(self, after: int, upto: int, prefix: str) -> Iterable[tuple[str, int, int]]:
        """See ``RevisionTable``."""
        return self.db.execute(
            "SELECT name, created, prev_revision FROM kine WHERE id > ? AND id <= ? AND name >= ? AND name < ?"
            " ORDER BY id", (after, upto, prefix, prefix + "\uffff"))

    def between(self, after: int, upto: int, prefix: str) -> list[Row]:
        """See ``RevisionTable``."""
        # NOT INDEXED: walk the revisions after ``after`` (by rowid), not every revision of the prefix
        rows = self.db.execute(
            "SELECT id, name, created, deleted, prev_revision, value FROM kine NOT INDEXED"
            " WHERE id > ? AND id <= ? AND name >= ? AND name < ? ORDER BY id",
            (after, upto, prefix, prefix + "\uffff")).fetchall()
        return [(int(i), name, int(c), int(d), int(p), bytes(v or b"")) for i, name, c, d, p, v in rows]

    def row(self, rev: int) -> tuple[bytes, int, int] | None:
        """See ``RevisionTable``."""
        found = self.db.execute("SELECT value, deleted, prev_revision FROM kine WHERE id = ?", (rev,)).fetchone()
        return None if found is None else (bytes(found[0] or b""), int(found[1]), int(found[2]))

    def compact(self, start: int, end: int) -> None:
        """See ``RevisionTable``: as kine, a row is garbage once a newer revision of its key (its
        prev_revision) is at or below ``end``; tombstones there go too."""
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute("DELETE FROM kine WHERE id IN (SELECT prev_revision FROM kine WHERE id > ? AND id <= ?"
                            " AND prev_revision > 0)", (start, end))
            self.db.execute("DELETE FROM kine WHERE deleted = 1 AND id > ? AND id <= ?", (start, end))

    def count(self, upto: int | None = None) -> int:
        """See ``RevisionTable``."""
        if upto is None:
            return int(self.db.execute("SELECT COUNT(*) FROM kine").fetchone()[0])
        return int(self.db.execute("SELECT COUNT(*) FROM kine WHERE id <= ?", (upto,)).fetchone()[0])

    def ping(self) -> str | None:
        """See ``RevisionTable``."""
        try:
            self.db.execute("SELECT 1").fetchone()
        except sqlite3.Error as err:
            return str(err)
        return None

    def close(self) -> None:
        """Close the database."""
        self.db.close()


class MemoryTable:
    """The revision table in memory (see the module docstring)."""

    def __init__(self) -> None:
        self._rows: dict[int, Row] = {}
        self._order: list[int] = []  # the revisions above the last compaction's bound, ascending

    def insert(self, rows: list[Row], counter: int | None) -> None:
        """See ``RevisionTable`` (no counter is kept: nothing outlives the process)."""
        for row in rows:
            self._rows[row[0]] = row
            self._order.append(row[0])

    def counter(self) -> int:
        """See ``RevisionTable``."""
        return max(self._rows, default=0)

    def current(self) -> Iterable[tuple[int, str, bytes]]:
        """See ``RevisionTable``."""
        newest: dict[str, Row] = {}
        for row in self._rows.values():  # revision order: the newest row of a key comes last
            newest[row[1]] = row
        return ((row[0], row[1], row[5]) for row in newest.values() if not row[3])

    def at(self, rev: int, prefix: str) -> Iterable[tuple[int, str, bytes]]:
        """See ``RevisionTable``: one pass over the rows (exact-revision lists are rare)."""
        newest: dict[str, Row] = {}
        for row in self._rows.values():
            if row[0] <= rev and row[1].startswith(prefix):
                newest[row[1]] = row
        return ((row[0], row[1], row[5]) for row in newest.values() if not row[3])

    def _walk(self, after: int, upto: int, prefix: str) -> Iterator[Row]:
        order, rows = self._order, self._rows
        for i in range(bisect.bisect_right(order, after), len(order)):
            rev = order[i]
            if rev > upto:
                return
            row = rows.get(rev)
            if row is not None and row[1].startswith(prefix):
                yield row

    def changes(self, after: int, upto: int, prefix: str) -> Iterable[tuple[str, int, int]]:
        """See ``RevisionTable``."""
        return [(row[1], row[2], row[4]) for row in self._walk(after, upto, prefix)]

    def between(self, after: int, upto: int, prefix: str) -> list[Row]:
        """See ``RevisionTable``."""
        return list(self._walk(after, upto, prefix))

    def row(self, rev: int) -> tuple[bytes, int, int] | None:
        """See ``RevisionTable``."""
        found = self._rows.get(rev)
        return None if found is None else (found[5], found[3], found[4])

    def compact(self, start: int, end: int) -> None:
        """See ``RevisionTable``; the revisions up to ``end`` leave the ordered list too (no
        query walks below a compaction's bound)."""
        rows = self._rows
        for row in list(self._walk(start, end, "")):
            if row[4] > 0:
                rows.pop(row[4], None)
            if row[3]:
                rows.pop(row[0], None)
        del self._order[:bisect.bisect_right(self._order, end)]

    def count(self, upto: int | None = None) -> int:
        """See ``RevisionTable``."""
        return len(self._rows) if upto is None else sum(1 for rev in self._rows if rev <= upto)

    def ping(self) -> str | None:
        """See ``RevisionTable``: memory always answers."""
        return None

    def close(self) -> None:
        """Drop the rows."""
        self._rows.clear()
        self._order.clear()
