"""Results shared by every session of the server: computed once, read-only, bounded in bytes.

Sessions run their scripts in threads of one process. A result kept for one is handed to every
other that asks with the same key, so three rules hold here (issue 58, point 10):

* **computed once**: a session asking for a key another session is computing waits for that
  computation instead of starting its own (if the other stops without a result, it computes);
* **read-only**: every NumPy array a kept result holds is made read-only before it is shared, so
  a page that changed one in place would raise instead of changing another session's view;
* **bounded in bytes**: each cache keeps at most its share of ``$QALPHA_CACHE_MB`` (default
  :data:`DEFAULT_BUDGET_MB`), the least recently used out first; a result larger than the share
  is handed back but not kept. Sizes are the bytes of the arrays (and tables) a result holds,
  counted once per buffer.

``docs/deployment.md`` says what this means for the memory of a server.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from collections import OrderedDict

import numpy as np

#: The environment variable that sets the server's budget for kept results, in MB.
BUDGET_VARIABLE = "QALPHA_CACHE_MB"
#: The budget when nobody sets one.
DEFAULT_BUDGET_MB = 1024


def budget_bytes(share: float) -> int:
    """``share`` of the server's budget for kept results, in bytes."""
    configured = os.environ.get(BUDGET_VARIABLE, "")
    try:
        megabytes = float(configured) if configured else DEFAULT_BUDGET_MB
    except ValueError:
        megabytes = DEFAULT_BUDGET_MB
    return int(max(megabytes, 1.0) * 2**20 * share)


def _children(value):
    """What a result is made of, for sizing and freezing: containers' items, dataclasses' fields
    and what their cached properties hold."""
    if isinstance(value, dict):
        return list(value.keys()) + list(value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    found = []
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        found = [getattr(value, field.name, None) for field in dataclasses.fields(value)]
    if hasattr(value, "__dict__") and not isinstance(value, type) and type(value).__module__.startswith(("core", "pages")):
        found += list(vars(value).values())
    return found


def _walk(value, visit, seen, depth=0):
    if value is None or depth > 8 or id(value) in seen:
        return
    seen.add(id(value))
    if visit(value):
        return
    for child in _children(value):
        _walk(child, visit, seen, depth + 1)


def size_of(value) -> int:
    """Bytes a result holds: its arrays' buffers (each counted once, views by their base), sparse
    matrices' and tables' buffers, text; a few dozen bytes for anything else."""
    total, buffers = [0], set()

    def visit(item):
        if isinstance(item, np.ndarray):
            base = item
            while isinstance(base.base, np.ndarray):
                base = base.base
            if id(base) not in buffers:
                buffers.add(id(base))
                total[0] += base.nbytes
            return True
        if hasattr(item, "memory_usage") and hasattr(item, "columns"):  # a pandas DataFrame
            total[0] += int(item.memory_usage(deep=True).sum())
            return True
        if type(item).__module__.startswith("pyarrow") and hasattr(item, "nbytes"):
            total[0] += int(item.nbytes)
            return True
        if hasattr(item, "tocsr") and hasattr(item, "data"):  # a SciPy sparse matrix
            total[0] += sum(getattr(item, part).nbytes for part in ("data", "indices", "indptr") if hasattr(item, part))
            return True
        if isinstance(item, (str, bytes)):
            total[0] += len(item)
            return True
        total[0] += sys.getsizeof(item) if not isinstance(item, (int, float, bool)) else 0
        return False

    _walk(value, visit, set())
    return total[0]


def freeze(value):
    """Make every NumPy array ``value`` holds read-only, those behind its pandas tables too (in
    place: the result is this cache's own)."""
    def visit(item):
        if isinstance(item, np.ndarray):
            item.flags.writeable = False
            return True
        if hasattr(item, "_mgr") and hasattr(item, "columns"):  # a pandas DataFrame: its blocks' arrays
            for array in item._mgr.arrays:
                if isinstance(array, np.ndarray):
                    array.flags.writeable = False
            return True
        if hasattr(item, "tocsr") and hasattr(item, "data"):
            for part in ("data", "indices", "indptr"):
                if isinstance(getattr(item, part, None), np.ndarray):
                    getattr(item, part).flags.writeable = False
            return True
        return False

    _walk(value, visit, set())
    return value


class SharedResults:
    """Values by key for every session of the server: at most ``budget`` bytes, least recently
    used out first, each value frozen (:func:`freeze`) when kept, each key computed once at a time.

    Parameters
    ----------
    name : str
        What the cache holds, for the page that lists the caches' use.
    budget : int
        Bytes kept at most.
    """

    def __init__(self, name: str, budget: int):
        self.name, self.budget = name, int(budget)
        self.lock = threading.RLock()
        self._values: OrderedDict = OrderedDict()  # key -> (value, bytes)
        self._running: dict = {}  # key -> (thread id, threading.Event set when done)
        self.used = 0

    def __contains__(self, key) -> bool:
        with self.lock:
            return key in self._values

    def __len__(self) -> int:
        with self.lock:
            return len(self._values)

    def find(self, key, missing=None):
        """The value kept for ``key`` (now the most recently used), or ``missing``: one look under
        the lock, where ``key in cache`` then ``get`` could meet an eviction by another session between."""
        with self.lock:
            if key not in self._values:
                return missing
            self._values.move_to_end(key)
            return self._values[key][0]

    def get(self, key):
        """The value kept for ``key`` (``KeyError`` when there is none), now the most recently used."""
        with self.lock:
            self._values.move_to_end(key)
            return self._values[key][0]

    def put(self, key, value) -> bool:
        """Keep ``value`` (frozen) under ``key``; False when it is larger than the whole budget."""
        size = size_of(value)
        if size > self.budget:
            return False
        freeze(value)
        with self.lock:
            if key in self._values:
                self.used -= self._values.pop(key)[1]
            self._values[key] = (value, size)
            self.used += size
            while self.used > self.budget and self._values:
                _, (_, dropped) = self._values.popitem(last=False)
                self.used -= dropped
        return True

    def running(self, key) -> threading.Event | None:
        """The event another thread's computation of ``key`` sets when it ends, or None."""
        with self.lock:
            entry = self._running.get(key)
            return entry[1] if entry is not None and entry[0] != threading.get_ident() else None

    def compute_once(self, key, compute, keep=lambda value: True):
        """The value kept for ``key``, else ``compute()``, kept if ``keep(value)``. A thread that
        asks while another computes ``key`` waits for it and takes its value, frozen, whether or not
        it was kept (a result larger than the budget was computed once per waiting session, one
        after another); it computes itself only if that one ended without a value (stopped, or
        failed). A computation that asks for its own key again computes it."""
        while True:
            with self.lock:
                if key in self._values:
                    self._values.move_to_end(key)
                    return self._values[key][0]
                entry = self._running.get(key)
                if entry is None or entry[0] == threading.get_ident():
                    done, handed = threading.Event(), []
                    self._running[key] = (threading.get_ident(), done, handed)
                    break
            entry[1].wait()
            if entry[2]:
                return entry[2][0]
        try:
            value = compute()
            if keep(value):
                if not self.put(key, value):
                    freeze(value)  # not kept, but shared with the sessions that waited for it
                handed.append(value)
            return value
        finally:
            with self.lock:
                self._running.pop(key, None)
            done.set()
