"""Revisioned object storage, the way k3s's kine keeps etcd's data model in SQL.

One table of revisions (``revisions.RevisionTable``): ``id`` is the revision (and every object's
resourceVersion), ``name`` the key (``/<group>/<plural>/<namespace>/<name>``), ``created`` and
``deleted`` flags, ``prev_revision`` and the JSON ``value``. Every write appends a row; nothing
is updated in place. A deletion's row (tombstone) keeps no value: its object is the previous
revision's with the deletion's resourceVersion, rebuilt when a watch replays it. In memory by
default (``revisions.MemoryTable``: no SQL, no copy of a row's bytes); SQLite in a file in WAL
mode with ``data_dir`` (``revisions.SQLiteTable``), in which case the current state and the
revision counter survive a restart.

Group commit: ``put`` and ``delete`` change the in-memory state at once (internal controllers see
it through ``listeners``) and queue their row; the rows queued during one event-loop turn are
committed in one transaction on the next turn (``commit``), together with the revision counter
(``meta.rev``, on disk only: an in-memory table never outlives its process), so a revision is
never handed out twice, even after a crash and a compaction of the newest tombstone. ``durable()`` gives the future a request handler awaits before it answers:
nothing is acknowledged before it is committed. Watchers and the history (``events_since``) get
an event only once it is committed, as etcd's do. A failed commit fails the waiting futures and
keeps the rows queued for the next commit. With ``data_dir`` the directory is made 0700 and the
database files 0600 (SQLite gives -wal and -shm the database file's mode).

On top of the table the store keeps, in memory: the current objects (decoded once, plus their
encoded bytes, so reads never re-parse JSON), an index by uid and by owner uid (for the garbage
collector), and the bounds of the history of recent events that feeds watches: at most
``history`` events and none committed more than ``history_window`` seconds ago (75 s by default,
kube-apiserver's watch-cache freshness). The history is the table itself: every revision above
``compacted`` is one event, and ``events_since`` reads them back from their rows; memory holds
one (commit time, revision) pair per commit, not the events, so it does not grow with churn.
Revisions older than the history are *compacted*: their superseded rows are deleted (once
``ROWS_COMPACT_BATCH`` revisions have left the history, so a steady churn keeps a flat number of
rows), and a watch or an exact list from such a revision must answer 410 Expired (``Expired`` is
raised).

Contract: the store is not thread-safe. The API server calls it only from its event loop thread.
Stored objects are treated as immutable; callers build a new dict for every write.
"""

from __future__ import annotations

import asyncio
import bisect
import fcntl
import logging
import os
import sqlite3
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from samplecontroller.apiserver import bodies
from samplecontroller.apiserver.revisions import MemoryTable, RevisionTable, Row, SQLiteTable
from samplecontroller.tls import private_dir

__all__ = ["ROWS_COMPACT_BATCH", "WATCH_BUFFER", "Entry", "Event", "Expired", "Page", "Store", "TooLarge", "Watcher"]

log = logging.getLogger(__name__)

_encode = bodies.encode
_decode = bodies.decode

Key = tuple[str, str]  # (namespace, name)
EntryList = list[tuple[Key, "Entry"]]
EventList = list["Event"]
ROWS_COMPACT_BATCH = 1000
"""The superseded rows of revisions that left the history are deleted once this many revisions
have left it since the last compaction (they were kept until 10,000 writes had been made, however
large the objects: a soak's memory grew by the rows of thousands of deleted objects)."""
_CHANGES_CACHED = 16  # (skey, namespace, revision) walks whose changes since their revision are remembered



class Expired(Exception):
    """The requested revision is older than the compacted revision."""

    def __init__(self, requested: int, compacted: int) -> None:
        super().__init__(f"too old resource version: {requested} ({compacted})")
        self.requested = requested
        self.compacted = compacted


class TooLarge(ValueError):
    """An object's JSON is longer than ``Store.put``'s ``max_bytes``: ``size`` and ``limit``."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"the object is {size} bytes, the limit is {limit}")
        self.size = size
        self.limit = limit


class Entry:
    """A stored object: its revision, the decoded dict (do not mutate) and its JSON bytes.

    An entry read back from the table (``obj`` None when built) keeps only its bytes: ``obj``
    then decodes them on every access and keeps nothing."""

    __slots__ = ("_deep", "_obj", "raw", "rev")

    def __init__(self, rev: int, obj: dict[str, Any] | None, raw: bytes) -> None:
        self.rev = rev
        self._obj = obj
        self.raw = raw
        self._deep: bool | None = None

    @property
    def obj(self) -> dict[str, Any]:
        """The decoded object (do not mutate it)."""
        obj = self._obj
        if obj is None:
            decoded: dict[str, Any] = _decode(self.raw)
            return decoded
        if self._deep is None:
            raw = self.raw
            self._deep = (raw.count(b"{") + raw.count(b"[") >= bodies.DEEP
                          and bodies.depth_of(obj, bodies.DEEP) >= bodies.DEEP)
        if self._deep:
            bodies.note_deep()  # the request's walks over it get the raised recursion limit
        return obj

    def copy(self) -> dict[str, Any]:
        """A fresh, mutable deep copy of the object."""
        out: dict[str, Any] = _decode(self.raw)
        return out


class Event:
    """One change: ``type`` is ADDED, MODIFIED or DELETED; ``entry`` the object as written,
    ``prev`` the object before it (None for ADDED)."""

    __slots__ = ("_line", "_prev", "entry", "name", "namespace", "rev", "skey", "type")

    def __init__(self, type_: str, skey: str, namespace: str, name: str, entry: Entry,
                 prev: Entry | None) -> None:
        self.type = type_
        self.skey = skey
        self.namespace = namespace
        self.name = name
        self.entry = entry
        self.rev = entry.rev
        self._prev = prev
        self._line: bytes | None = None

    @property
    def prev(self) -> dict[str, Any] | None:
        """The object before this event (None for ADDED)."""
        return self._prev.obj if self._prev is not None else None

    def line(self) -> bytes:
        """The watch event as one JSON line (cached: shared by every watcher)."""
        if self._line is None:
            self._line = b'{"type":"' + self.type.encode() + b'","object":' + self.entry.raw + b"}\n"
        return self._line


WATCH_BUFFER = 1000
"""The most events a watcher keeps for a watch that is busy (writing to a slow client, or waiting
on a conversion) before it is closed as unresponsive (kube's cacheWatcher: a channel of at most
1000 events, the watcher terminated when it stays full)."""


class Watcher:
    """A subscription to one storage key (optionally one namespace); events are buffered.

    ``busy`` is set by the watch while it is not waiting for events (it writes to its client, or
    converts): a watcher whose buffer reaches ``limit`` events while busy is a slow watcher and is
    closed (``overflowed``), its buffer dropped, so a client that reads slowly or never holds no
    more than ``limit`` references, as kube-apiserver's cacher terminates a watcher whose channel
    stays full. An idle watch (waiting to be scheduled) keeps everything a burst gives it."""

    def __init__(self, skey: str, namespace: str | None, limit: int = WATCH_BUFFER, after: int = 0) -> None:
        self.skey = skey
        self.namespace = namespace
        self.after = after  # events at or below this revision are not offered (the watch has them)
        self.buffer: list[Event] = []
        self.wake = asyncio.Event()
        self.overflowed = False
        self.closed = False
        self.busy = True  # until the watch first waits for events
        self._limit = limit

    def offer(self, event: Event) -> None:
        if self.closed or event.rev <= self.after or (self.namespace is not None and event.namespace != self.namespace):
            return  # a closed watcher takes nothing more: its stream ends after what it already has
        if self.busy and len(self.buffer) >= self._limit:
            self.overflowed = self.closed = True  # too slow: the watch ends, the client watches again
            self.buffer = []
        else:
            self.buffer.append(event)
        self.wake.set()

    def close(self) -> None:
        self.closed = True
        self.wake.set()

    def drain(self) -> list[Event]:
        out, self.buffer = self.buffer, []
        self.wake.clear()
        return out


def _tombstone(prev_raw: bytes, rev: int) -> bytes:
    """The JSON of a deletion at ``rev`` of the object ``prev_raw``: the same bytes ``Store.delete``
    encodes (its metadata keeps its key order, with the new resourceVersion)."""
    obj: dict[str, Any] = _decode(prev_raw)
    obj["metadata"] = {**obj["metadata"], "resourceVersion": str(rev)}
    return _encode(obj)


def _owner_uids(obj: dict[str, Any]) -> set[str]:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return {str(r.get("uid")) for r in refs if isinstance(r, dict) and r.get("uid")}


def _private_file(path: Path, create: bool) -> None:
    """Create ``path`` with mode 0600 if ``create`` and it is missing; take group and other
    permissions from it if it exists (a data directory of an older version)."""
    if create:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    if path.exists() and path.stat().st_mode & 0o077:
        path.chmod(0o600)


class DataDirInUseError(OSError):
    """Another embedded API server holds the data directory."""


def _lock_data_dir(path: Path) -> int:
    """Take the data directory's lock (an exclusive flock on ``path/lock``, held until close):
    two servers on one SQLite file would each trust their own in-memory state and diverge."""
    fd = os.open(path / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    os.fchmod(fd, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise DataDirInUseError(f"the data directory {path} is in use by another embedded API server "
                                f"(pid {holder}); stop it or choose another directory") from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    return fd


class Store:
    """The kine-style revision table plus the in-memory current state and watch history."""

    def __init__(self, data_dir: str | Path | None = None, history: int = 100_000,
                 history_window: float = 75.0) -> None:
        self._lock_fd: int | None = None
        self.table: RevisionTable
        if data_dir is None:
            self.table = MemoryTable()
        else:
            path = Path(data_dir)
            private_dir(path)
            self._lock_fd = _lock_data_dir(path)
            for name in ("state.db", "state.db-wal", "state.db-shm"):
                _private_file(path / name, create=name == "state.db")
            self.table = SQLiteTable(path / "state.db")
        self.data: dict[str, dict[Key, Entry]] = {}
        self.uids: dict[str, tuple[str, str, str]] = {}
        self.dependents: dict[str, set[tuple[str, str, str]]] = {}
        self.watchers: dict[str, set[Watcher]] = {}
        # the history is the revision table itself: every revision above ``compacted`` up to
        # ``committed_rev`` is one event; in memory only (commit time, last revision) per commit
        self._commits: deque[tuple[float, int]] = deque()
        self._history_limit = history
        self._history_window = history_window
        self._sorted: dict[tuple[str, str | None], list[Key]] = {}
        # keys changed after a paginated list's revision: (skey, ns, rev) -> (scanned up to, changes)
        self._changes: OrderedDict[tuple[str, str | None, int], tuple[int, dict[Key, int]]] = OrderedDict()
        self._names: dict[str, dict[str, set[str]]] = {}  # skey -> namespace -> names
        self.listeners: list[Callable[[Event], None]] = []
        self.rev = 0
        self.committed_rev = 0
        self.compacted = 0
        self._pending: list[Row] = []
        self._unpublished: list[Event] = []
        self._waiters: list[asyncio.Future[None]] = []
        self._commit_handle: asyncio.Handle | None = None
        self._rows_compacted = 0
        self._writes_since_compact = 0
        self._load()

    # ------------------------------------------------------------------ persistence

    def _load(self) -> None:
        self.rev = self.table.counter()
        for rev, name, value in self.table.current():
            skey, ns, obj_name = self._split(name)
            self._index(skey, (ns, obj_name), Entry(rev, _decode(value), value), None)
        # history does not survive a restart: older revisions are "compacted"
        self.compacted = self.committed_rev = self.rev

    @staticmethod
    def _key(skey: str, ns: str, name: str) -> str:
        return f"/{skey}/{ns}/{name}"

    @staticmethod
    def _split(key: str) -> tuple[str, str, str]:
        # /<group>/<plural>/<ns>/<name>; group may be empty
        _, group, plural, ns, name = key.split("/", 4)
        return f"{group}/{plural}", ns, name

    def ping(self) -> str | None:
        """None when the revision table answers (the ``etcd`` health check), else why not."""
        return self.table.ping()

    def close(self) -> None:
        if self._commit_handle is not None:
            self._commit_handle.cancel()
            self._commit_handle = None
        try:
            self.flush()
            self.table.close()
        except sqlite3.Error:
            log.exception("storage: the last commit failed")
        self._fail_waiters(RuntimeError("the storage is closed"))
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    # ------------------------------------------------------------------ reads

    def get(self, skey: str, ns: str, name: str) -> Entry | None:
        bucket = self.data.get(skey)
        return bucket.get((ns, name)) if bucket else None

    def by_uid(self, uid: str) -> tuple[str, str, str] | None:
        return self.uids.get(uid)

    def keys(self, skey: str, ns: str | None) -> list[Key]:
        """Keys of ``skey`` (in ``ns`` if given) sorted by namespace then name (cached and kept
        sorted as keys come and go: do not modify it, and copy it to keep it across writes)."""
        cache_key = (skey, ns)
        keys = self._sorted.get(cache_key)
        if keys is None:
            if ns is None:
                keys = sorted(self.data.get(skey) or ())
            else:
                keys = [(ns, name) for name in sorted((self._names.get(skey) or {}).get(ns) or ())]
            self._sorted[cache_key] = keys
        return keys

    def list(self, skey: str, ns: str | None) -> EntryList:
        bucket = self.data.get(skey) or {}
        return [(k, bucket[k]) for k in self.keys(skey, ns)]

    def count(self, skey: str) -> int:
        return len(self.data.get(skey) or ())

    def snapshot(self, skey: str, ns: str | None, rev: int) -> EntryList:
        """The objects of ``skey`` as they were at revision ``rev`` (raises ``Expired``)."""
        if rev < self.compacted and rev != self.rev:
            raise Expired(rev, self.compacted)
        if rev >= self.rev:
            return self.list(skey, ns)
        prefix = f"/{skey}/" + (f"{ns}/" if ns is not None else "")
        self.flush()
        live = self.data.get(skey) or {}
        out: EntryList = []
        for row_rev, name, value in self.table.at(rev, prefix):
            _, row_ns, row_name = self._split(name)
            key = (row_ns, row_name)
            current = live.get(key)
            if current is not None and current.rev == row_rev:
                out.append((key, current))  # unchanged since: share the live entry, decode nothing
            else:
                out.append((key, Entry(row_rev, _decode(value), value)))
        out.sort(key=lambda item: item[0])
        return out

    def seek(self, skey: str, ns: str | None, rev: int, after: Key | None = None) -> Page:
        """The objects of ``skey`` (in ``ns`` if given) as they were at revision ``rev``, in key
        order, from the first key after ``after``: what a continue token (revision and last key)
        resumes, as kube-apiserver serves the next page from etcd at the token's revision, seeking
        to the key. Costs O(log n) to start and O(1) per object (plus, once per walk and revision,
        a scan of the writes made since ``rev``), never a rebuild of the whole snapshot. Raises
        ``Expired`` when ``rev`` is compacted."""
        if rev < self.compacted and rev != self.rev:
            raise Expired(rev, self.compacted)
        changed = self._changed_since(skey, ns, min(rev, self.rev)) if rev < self.rev else {}
        return Page(self, skey, ns, rev, after, changed)

    def _changed_since(self, skey: str, ns: str | None, rev: int) -> dict[Key, int]:
        """``{key: its revision at rev (0: it did not exist)}`` for every key of ``skey`` (in
        ``ns``) written after ``rev``; remembered per (skey, ns, rev) and extended on the next page."""
        self.flush()
        cache_key = (skey, ns, rev)
        scanned, changed = self._changes.pop(cache_key, (rev, {}))
        if scanned < self.committed_rev:
            prefix = f"/{skey}/" + (f"{ns}/" if ns is not None else "")
            for name, created, prev_rev in self.table.changes(scanned, self.committed_rev, prefix):
                _, row_ns, row_name = self._split(name)
                # the first write after rev tells what the key was at rev: created anew (absent
                # then) or an update/deletion of the revision it names
                changed.setdefault((row_ns, row_name), 0 if created else int(prev_rev))
            scanned = self.committed_rev
        self._changes[cache_key] = (scanned, changed)
        while len(self._changes) > _CHANGES_CACHED:
            self._changes.popitem(last=False)
        return changed

    def events_since(self, rev: int, skey: str) -> EventList:
        """History events of ``skey`` after ``rev`` (raises ``Expired`` if compacted), read back
        from the revision table with their objects and previous objects."""
        if rev < self.compacted:
            raise Expired(rev, self.compacted)
        if rev >= self.committed_rev:
            return []
        out: EventList = []
        for row_rev, key, created, deleted, prev_rev, value in self.table.between(rev, self.committed_rev,
                                                                                   f"/{skey}/"):
            _, ns, name = self._split(key)
            prev = self.entry_at(skey, ns, name, int(prev_rev)) if prev_rev else None
            if deleted:
                type_ = "DELETED"
                # the tombstone is rebuilt from ``prev``, already read: not a second read of it
                entry = (Entry(int(row_rev), None, _tombstone(prev.raw, int(row_rev)))
                         if prev is not None and not value else self.entry_at(skey, ns, name, int(row_rev)))
            else:
                type_ = "ADDED" if created else "MODIFIED"
                live = self.get(skey, ns, name)
                entry = live if live is not None and live.rev == row_rev else Entry(row_rev, None, value)
            out.append(Event(type_, skey, ns, name, entry, prev))
        return out

    def entry_at(self, skey: str, ns: str, name: str, rev: int) -> Entry:
        """The object ``ns/name`` of ``skey`` as written at revision ``rev``, a committed revision
        not compacted away: the live entry if still current, else read back from the table (its
        ``obj`` decoded on access). Raises ``LookupError`` if the row is gone."""
        live = self.get(skey, ns, name)
        if live is not None and live.rev == rev:
            return live
        row = self.table.row(rev)
        if row is None:
            raise LookupError(f"revision {rev} of {self._key(skey, ns, name)} is compacted")
        value, deleted, prev_rev = row
        if deleted and not value:
            return Entry(rev, None, _tombstone(self.entry_at(skey, ns, name, int(prev_rev)).raw, rev))
        return Entry(rev, None, value)

    # ------------------------------------------------------------------ writes

    def _index(self, skey: str, key: Key, entry: Entry, prev: Entry | None) -> None:
        bucket = self.data.setdefault(skey, {})
        if prev is None:
            self._insert_key(skey, key)
            self._names.setdefault(skey, {}).setdefault(key[0], set()).add(key[1])
        bucket[key] = entry
        meta = entry.obj.get("metadata") or {}
        uid = meta.get("uid")
        ref = (skey, key[0], key[1])
        if uid:
            self.uids[str(uid)] = ref
        if prev is None and not meta.get("ownerReferences"):
            return  # no owners before or now: no dependents to index
        old_owners = _owner_uids(prev.obj) if prev is not None else set()
        new_owners = _owner_uids(entry.obj)
        for owner in old_owners - new_owners:
            deps = self.dependents.get(owner)
            if deps is not None:
                deps.discard(ref)
                if not deps:
                    del self.dependents[owner]
        for owner in new_owners - old_owners:
            self.dependents.setdefault(owner, set()).add(ref)

    def _insert_key(self, skey: str, key: Key) -> None:
        """Keep the sorted key lists (``keys``) of ``skey`` sorted with a new ``key``."""
        for cache_key in ((skey, None), (skey, key[0])):
            keys = self._sorted.get(cache_key)
            if keys is not None:
                if not keys or keys[-1] < key:
                    keys.append(key)  # names created in order (a sequence, a timestamp) go last
                else:
                    bisect.insort(keys, key)

    def _remove_key(self, skey: str, key: Key) -> None:
        for cache_key in ((skey, None), (skey, key[0])):
            keys = self._sorted.get(cache_key)
            if keys is not None:
                i = bisect.bisect_left(keys, key)
                if i < len(keys) and keys[i] == key:
                    del keys[i]

    def _append(self, name: str, created: bool, deleted: bool, prev_rev: int, raw: bytes) -> None:
        self._pending.append((self.rev, name, int(created), int(deleted), prev_rev, raw))
        self._schedule_commit()

    def _schedule_commit(self) -> None:
        """Commit on the next loop turn (once, whatever the number of writes in this turn)."""
        if self._commit_handle is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (direct use in tests): the next flush() or read commits
        self._commit_handle = loop.call_soon(self._commit_soon)

    def _commit_soon(self) -> None:
        self._commit_handle = None
        try:
            self.flush()
        except sqlite3.Error:
            log.exception("storage: commit failed; the waiting requests fail and the rows stay queued")

    def durable(self) -> asyncio.Future[None] | None:
        """None if every write so far is committed; else a future that resolves once they are (or
        fails with the commit's error). Call it from the event loop."""
        if not self._pending and not self._unpublished:
            return None
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        self._schedule_commit()
        return future

    def flush(self) -> None:
        """Commit every queued row and the revision counter in one transaction, then hand the
        events to the history and the watchers and resolve the ``durable()`` futures. Raises
        ``sqlite3.Error`` (after failing the waiting futures) if the commit fails."""
        if self._pending:
            rows = self._pending
            try:
                self.table.insert(rows, rows[-1][0])
            except sqlite3.Error as err:
                self._fail_waiters(err)
                raise
            self._pending = []
        events, self._unpublished = self._unpublished, []
        for event in events:
            self._publish(event)
        if events:
            now = time.monotonic()
            self.committed_rev = events[-1].rev
            self._commits.append((now, self.committed_rev))
            self._trim_history(now - self._history_window)
        waiters, self._waiters = self._waiters, []
        for future in waiters:
            if not future.done():
                future.set_result(None)
        if self.compacted - self._rows_compacted >= ROWS_COMPACT_BATCH or self._writes_since_compact >= 10_000:
            self._compact_table()  # the rows the history left behind go as it moves: memory stays flat

    def _fail_waiters(self, err: BaseException) -> None:
        waiters, self._waiters = self._waiters, []
        for future in waiters:
            if not future.done():
                future.set_exception(err)

    def next_revision(self) -> int:
        """The revision the next write will get (for objects returned by dry runs)."""
        return self.rev + 1

    def put(self, skey: str, obj: dict[str, Any], max_bytes: int = 0) -> Event:
        """Store ``obj`` (a new dict, not mutated afterwards) as a new revision; notify watchers.

        Sets ``metadata.resourceVersion``. The namespace and name are taken from the object.
        ``max_bytes`` (0: no limit): raise ``TooLarge`` and store nothing when the object's JSON
        is longer (etcd's request size limit; the JSON is encoded once, for both).
        """
        meta = obj["metadata"]
        ns, name = str(meta.get("namespace") or ""), str(meta["name"])
        prev = self.get(skey, ns, name)
        meta["resourceVersion"] = str(self.rev + 1)
        raw = _encode(obj)
        if max_bytes and len(raw) > max_bytes:
            raise TooLarge(len(raw), max_bytes)
        self.rev += 1
        self._append(self._key(skey, ns, name), prev is None, False, prev.rev if prev else 0, raw)
        entry = Entry(self.rev, obj, raw)
        self._index(skey, (ns, name), entry, prev)
        event = Event("ADDED" if prev is None else "MODIFIED", skey, ns, name, entry, prev)
        self._written(event)
        return event

    def delete(self, skey: str, ns: str, name: str) -> Event | None:
        """Remove the object (a DELETED event whose object carries the deletion revision)."""
        prev = self.get(skey, ns, name)
        if prev is None:
            return None
        self.rev += 1
        # shares everything but the metadata with the stored object (immutable): a history of
        # deletions costs no second copy of every object
        obj = {**prev.obj, "metadata": {**prev.obj["metadata"], "resourceVersion": str(self.rev)}}
        raw = _encode(obj)
        self._append(self._key(skey, ns, name), False, True, prev.rev, b"")  # see _tombstone
        bucket = self.data[skey]
        del bucket[(ns, name)]
        self._remove_key(skey, (ns, name))
        names = self._names[skey][ns]
        names.discard(name)
        if not names:
            del self._names[skey][ns]
        uid = (obj.get("metadata") or {}).get("uid")
        if uid and self.uids.get(str(uid)) == (skey, ns, name):
            del self.uids[str(uid)]
        for owner in _owner_uids(prev.obj):
            deps = self.dependents.get(owner)
            if deps is not None:
                deps.discard((skey, ns, name))
                if not deps:
                    del self.dependents[owner]
        event = Event("DELETED", skey, ns, name, Entry(self.rev, obj, raw), prev)
        self._written(event)
        return event

    def _written(self, event: Event) -> None:
        """A write was applied in memory: internal listeners see it now, watchers after the commit."""
        self._unpublished.append(event)
        for listener in self.listeners:
            listener(event)

    def _publish(self, event: Event) -> None:
        self._writes_since_compact += 1
        for watcher in self.watchers.get(event.skey, ()):
            watcher.offer(event)

    def _trim_history(self, oldest: float) -> None:
        """Compact the revisions committed before ``oldest``, and the oldest ones beyond the
        history's size limit."""
        commits = self._commits
        while commits and commits[0][0] < oldest:
            self.compacted = max(self.compacted, commits.popleft()[1])
        self.compacted = max(self.compacted, self.committed_rev - self._history_limit)
        while commits and commits[0][1] <= self.compacted:
            commits.popleft()

    def compact(self, rev: int | None = None) -> int:
        """Forget history up to ``rev`` (default: the current revision); returns the compacted revision."""
        self.flush()
        target = self.rev if rev is None else min(rev, self.rev)
        self.compacted = max(self.compacted, target)
        while self._commits and self._commits[0][1] <= self.compacted:
            self._commits.popleft()
        self._compact_rows()
        return self.compacted

    def _compact_rows(self) -> None:
        self.flush()
        self._compact_table()

    def _compact_table(self) -> None:
        """Delete the rows up to ``compacted`` (every write is committed)."""
        self._writes_since_compact = 0
        start, end = self._rows_compacted, self.compacted
        if end <= start:
            return
        self.table.compact(start, end)  # like kine: superseded rows and tombstones up to ``end``
        self._rows_compacted = end

    # ------------------------------------------------------------------ watches

    def subscribe(self, skey: str, namespace: str | None, after: int = 0) -> Watcher:
        """A watcher of ``skey`` that gets the events committed from now on with a revision above
        ``after`` (pass the revision of the state the watch has already sent)."""
        watcher = Watcher(skey, namespace, after=after)
        self.watchers.setdefault(skey, set()).add(watcher)
        return watcher

    def unsubscribe(self, watcher: Watcher) -> None:
        group = self.watchers.get(watcher.skey)
        if group is not None:
            group.discard(watcher)

    def close_watchers(self, skey: str) -> None:
        for watcher in list(self.watchers.get(skey, ())):
            watcher.close()

    def drop_all(self, skey: str) -> Iterable[Key]:
        """Keys currently stored under ``skey`` (a copy, safe to delete while iterating)."""
        return list((self.data.get(skey) or {}).keys())


class Page:
    """An iterator over ``(key, entry)`` of a ``Store.seek``: the objects at its revision in key
    order after its start key. Consume it before the store is written again (on one loop turn)."""

    def __init__(self, store: Store, skey: str, ns: str | None, rev: int, after: Key | None,
                 changed: dict[Key, int]) -> None:
        self._store = store
        self._skey = skey
        self._ns = ns
        self._rev = rev
        self._changed = changed
        self._after = after

    def __iter__(self) -> Iterator[tuple[Key, Entry]]:
        store, skey, changed = self._store, self._skey, self._changed
        live = store.keys(skey, self._ns)
        bucket = store.data.get(skey) or {}
        start = bisect.bisect_right(live, self._after) if self._after is not None else 0
        # keys gone since rev but there at rev, in order, merged with the live ones
        gone = sorted(k for k, r in changed.items() if r and k not in bucket
                      and (self._after is None or k > self._after))
        g = 0
        for i in range(start, len(live)):
            key = live[i]
            while g < len(gone) and gone[g] < key:
                yield gone[g], store.entry_at(skey, gone[g][0], gone[g][1], changed[gone[g]])
                g += 1
            then = changed.get(key)
            if then is None:
                yield key, bucket[key]
            elif then:
                yield key, store.entry_at(skey, key[0], key[1], then)
        for key in gone[g:]:
            yield key, store.entry_at(skey, key[0], key[1], changed[key])

    def remaining_after(self, key: Key) -> int:
        """How many objects of the walk's revision follow ``key`` (``remainingItemCount``)."""
        live = self._store.keys(self._skey, self._ns)
        bucket = self._store.data.get(self._skey) or {}
        count = len(live) - bisect.bisect_right(live, key)
        for k, then in self._changed.items():
            if k > key:
                count += (1 if then else 0) - (1 if k in bucket else 0)
        return count
