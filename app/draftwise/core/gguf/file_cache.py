"""What was read lately from files, kept while the file stays the same (`_FileCache`).

Keyed by the file's path, size, mtime and inode (`FileKey`); a file modified in the last
2 s is not kept. reader.py holds the two caches, of headers and of token lists.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

FileKey = tuple[str, int, int, int, int]  # path as given, size, mtime (ns), inode, device


class _FileCache:
    """What was read lately from files, keyed by what changes when a file is written
    (`FileKey`). Shared by every thread (re-plans and library scans run on a pool), so guarded
    by a lock; what it hands out is shared too: callers read it, never change it.

    A file modified less than `RACY_NS` before it was read is not kept: written again in
    place at the same size within the file system's timestamp step (a few ms on ext4, 2 s on
    FAT), it would look unchanged (git's "racily clean" index entries, the same cure)."""

    RACY_NS = 2_000_000_000

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[FileKey, Any] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(path: Path) -> FileKey | None:
        try:
            st = os.stat(path)
        except OSError:
            return None  # the read says why
        return str(path), st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev

    def get(self, key: FileKey, usable: Callable[[Any], bool] = lambda _v: True) -> Any:
        """The value kept for `key` if `usable` takes it, else None."""
        with self._lock:
            value = self._entries.get(key)
            if value is None or not usable(value):
                return None
            self._entries.move_to_end(key)
            return value

    def put(self, key: FileKey, value: Any, read_at_ns: int,
            keep_old: Callable[[Any, Any], bool] = lambda _old, _new: False) -> None:
        """Keep `value`, read from the file at `read_at_ns` (time.time_ns), unless the file
        was modified too shortly before, or `keep_old(old, value)` prefers the one kept."""
        if key[2] > read_at_ns - self.RACY_NS:
            return
        with self._lock:
            old = self._entries.get(key)
            if old is not None and keep_old(old, value):
                return
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
