"""Data sets kept on disk once, addressed by the hash of their content (issue 51's store).

A session that loads or derives a data set (an upload, side data, a transformed table, an image
set) can put it here and name it by its key, a SHA-256 of its content; a reload, a new session, a
restarted server or a second server sharing the folder gets it back by that key. The key is the
only way in: nothing lists the entries to a user, user-given names are kept inside the entry and
never become paths, and a key is 64 hexadecimal digits or refused.

Each entry is one uncompressed NumPy ``.npz`` (``allow_pickle=False``): the matrix, the labels,
the names, and a JSON header with the rest of the data set (its name, source, kind, image shape
and the JSON-able part of its ``meta``). Writes go to a temporary file in the same folder,
flushed and renamed into place (``os.replace`` is atomic), so a server killed during a write
leaves no half entry under a key. The folder keeps at most ``quota`` bytes: the least recently
used entries (by modification time, touched on every read) go first, and a single data set larger
than the quota is refused with the reason.

Several server processes may share the folder. Puts and evictions take an inter-process lock (an
``fcntl`` lock on the folder's ``.lock`` file), so two processes making room at once cannot both
count the same free bytes and overshoot the quota. Reads take no lock, and tell three failures apart:

* the entry is not there, or another process evicted it between the check and the read:
  :class:`NotHeld`, the page's "not held here";
* the operating system failed to read it (too many open files, an I/O error): retried a few
  times, then :class:`Unreadable`, "try again"; the entry is kept, since nothing says it is wrong;
* what was read is not the content its key names (a truncated or altered file, twice in a row):
  :class:`Damaged`; only then is the entry removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

from .dataset import Dataset
from ..errors import InputError

__all__ = ["STORE_FOLDER_VARIABLE", "STORE_QUOTA_VARIABLE", "DEFAULT_QUOTA", "ContentStore", "content_key",
           "default_folder", "NotHeld", "Unreadable", "Damaged"]

#: The environment variable that names the store's folder (default: under the user's cache folder).
STORE_FOLDER_VARIABLE = "QALPHA_STORE_DIR"
#: The environment variable that sets the store's size quota in GB.
STORE_QUOTA_VARIABLE = "QALPHA_STORE_QUOTA_GB"
#: Bytes the store keeps at most when nobody says (4 GB).
DEFAULT_QUOTA = 4 * 10**9

_KEY = re.compile(r"^[0-9a-f]{64}$")
_SUFFIX = ".npz"
#: Arrays of an entry that are the layouts of its samples (``meta["layouts"]``), by this prefix
LAYOUT_PREFIX = "layout:"
_LOCK = ".lock"
#: Reads the operating system refused (EMFILE, EIO...) are tried this many times in all, this
#: many seconds apart (doubling), before the read is reported as failed.
READ_ATTEMPTS = 4
READ_PAUSE = 0.05


class NotHeld(InputError):
    """The store has no entry under the key (never kept, evicted, or another server's folder)."""


class Unreadable(InputError):
    """The entry is there but the operating system would not read it just now; it is kept."""


class Damaged(InputError):
    """What the entry holds is not the content its key names; it was removed."""


def default_folder() -> Path:
    """``$QALPHA_STORE_DIR``, else ``spectral-feature-selection/store`` under the user's cache
    folder (``platformdirs.user_cache_path``: ``~/.cache`` on Linux)."""
    configured = os.environ.get(STORE_FOLDER_VARIABLE)
    if configured:
        return Path(configured).expanduser()
    from platformdirs import user_cache_path

    return user_cache_path("spectral-feature-selection") / "store"


def _default_quota() -> int:
    configured = os.environ.get(STORE_QUOTA_VARIABLE)
    if not configured:
        return DEFAULT_QUOTA
    try:
        quota = float(configured)
    except ValueError:
        raise InputError(f"{STORE_QUOTA_VARIABLE} must be a number of GB; got {configured!r}.") from None
    if not quota > 0:
        raise InputError(f"{STORE_QUOTA_VARIABLE} must be positive; got {configured!r}.")
    return int(quota * 10**9)


def _header(dataset: Dataset) -> dict:
    """The data set's fields besides its arrays, with the part of ``meta`` that JSON can hold."""
    meta = {}
    for name, value in dataset.meta.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue  # a basis object, original images: made again by whoever derives the set
        meta[name] = value
    return {"name": dataset.name, "source": dataset.source, "kind": dataset.kind,
            "image_shape": list(dataset.image_shape) if dataset.image_shape is not None else None, "meta": meta}


def _arrays(dataset: Dataset) -> dict[str, np.ndarray]:
    arrays = {"X": dataset.X, "header": np.array(json.dumps(_header(dataset), sort_keys=True))}
    if dataset.labels is not None:
        labels = np.asarray(dataset.labels)
        arrays["labels"] = labels.astype(str) if labels.dtype == object else labels
    for field, names in (("feature_names", dataset.feature_names_), ("sample_names", dataset.sample_names_)):
        if names is not None:
            arrays[field] = np.asarray(names, dtype=str)
    for name, values in dataset.meta.get("layouts", {}).items():
        arrays[LAYOUT_PREFIX + name] = values
    return arrays


def _digest(arrays: dict[str, np.ndarray]) -> str:
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
        digest.update(array.reshape(-1).view(np.uint8) if array.size else b"")  # the buffer itself, not a copy
    return digest.hexdigest()


def content_key(dataset: Dataset) -> str:
    """The SHA-256 of the data set's content (matrix, labels, names, header): its key in the store."""
    return _digest(_arrays(dataset))


class ContentStore:
    """A folder of data sets addressed by :func:`content_key`.

    Parameters
    ----------
    folder : path, optional
        Where the entries live (:func:`default_folder` when left out); made if missing.
    quota : int, optional
        Bytes kept at most (``$QALPHA_STORE_QUOTA_GB`` or :data:`DEFAULT_QUOTA`).
    """

    def __init__(self, folder=None, quota: int | None = None):
        self.folder = Path(folder) if folder is not None else default_folder()
        self.quota = _default_quota() if quota is None else int(quota)
        if self.quota <= 0:
            raise InputError(f"The store's quota must be positive; got {quota!r}.")
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        if not isinstance(key, str) or not _KEY.match(key):
            raise InputError("A stored data set is named by the 64 hexadecimal digits of its key; this link's key "
                             "is not one. Open the link you were given whole, or load the file again.")
        return self.folder / f"{key}{_SUFFIX}"

    def __contains__(self, key) -> bool:
        try:
            return self._path(key).is_file()
        except InputError:
            return False

    @contextlib.contextmanager
    def _locked(self):
        """The folder's inter-process lock, for whatever adds or removes entries."""
        try:
            import fcntl
        except ImportError:  # not POSIX: one process per folder (docs/deployment.md)
            yield
            return
        with open(self.folder / _LOCK, "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def put(self, dataset: Dataset) -> str:
        """Keep ``dataset`` (once: an equal one is already there) and return its key. The entry is
        written beside the others first, then, under the folder's lock, room is made and it is
        renamed into place, so the quota holds whatever other processes put at the same time."""
        arrays = _arrays(dataset)
        key = _digest(arrays)
        path = self._path(key)
        if _touch(path):
            return key
        size = sum(array.nbytes for array in arrays.values())
        if size > self.quota:
            raise InputError(f"{dataset.name} takes {size / 1e9:.2f} GB, more than the store's quota of "
                             f"{self.quota / 1e9:.2f} GB ({STORE_QUOTA_VARIABLE}): it is in use in this session "
                             "but cannot be kept for links and reloads. Raise the quota or select fewer features.")
        handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=".writing-", suffix=_SUFFIX)
        try:
            with os.fdopen(handle, "wb") as file:
                np.savez(file, **arrays)
                file.flush()
                os.fsync(file.fileno())
            written = Path(temporary).stat().st_size
            if written > self.quota:  # the file's headers and names come on top of the arrays' bytes
                raise InputError(f"{dataset.name} takes {written:,} bytes as stored, more than the store's quota of "
                                 f"{self.quota:,} bytes ({STORE_QUOTA_VARIABLE}): it is in use in this session but "
                                 "cannot be kept for links and reloads. Raise the quota or select fewer features.")
            with self._locked():
                if not _touch(path):  # another process may have kept it meanwhile
                    self._make_room(written)
                    os.replace(temporary, path)  # atomic: the entry is whole or absent
        finally:
            Path(temporary).unlink(missing_ok=True)
        return key

    def get(self, key: str) -> Dataset:
        """The data set kept under ``key``. Refused with :class:`NotHeld` when there is none
        (expired, evicted meanwhile by another process, never kept, another server's folder),
        :class:`Unreadable` when the system would not read it after :data:`READ_ATTEMPTS` tries
        (kept), and :class:`Damaged` when what it holds, read twice, is not the content of its key
        (removed)."""
        path = self._path(key)
        arrays = self._read(path, key)
        if arrays is None:
            arrays = self._read(path, key)  # a second look before calling an entry damaged
            if arrays is None:
                self._remove_damaged(path)
                raise Damaged("The stored copy of this data set is damaged and was removed: load the file again.")
        _touch(path)  # least recently used goes first; evicted since the read, it was read whole
        header = json.loads(str(arrays["header"]))
        names = {field: tuple(arrays[field].tolist()) for field in ("feature_names", "sample_names") if field in arrays}
        layouts = {name[len(LAYOUT_PREFIX):]: values for name, values in arrays.items() if name.startswith(LAYOUT_PREFIX)}
        meta = {**header["meta"], "layouts": layouts} if layouts else header["meta"]
        return Dataset(arrays["X"], labels=arrays.get("labels"), image_shape=header["image_shape"],
                       feature_names_=names.get("feature_names"), sample_names_=names.get("sample_names"),
                       name=header["name"], source=header["source"], kind=header["kind"], meta=meta)

    def _read(self, path: Path, key: str) -> dict | None:
        """The entry's arrays, or None when they are not the content of ``key``."""
        pause = READ_PAUSE
        for attempt in range(1, READ_ATTEMPTS + 1):
            try:
                with np.load(path, allow_pickle=False) as entry:
                    arrays = {name: entry[name] for name in entry.files}
                return arrays if _digest(arrays) == key else None
            except FileNotFoundError:
                raise NotHeld("This server does not hold that data set (it expired from the store, or was loaded on "
                              "another server): load the file again.") from None
            except (ValueError, EOFError, KeyError, zipfile.BadZipFile):
                return None  # read, and not what the key names
            except OSError as error:  # the system's refusal, not the content's: try again, never remove
                if attempt == READ_ATTEMPTS:
                    raise Unreadable(f"The server could not read this data set just now ({error.strerror or error}); "
                                     "it is still kept: reload the page to try again.") from None
                time.sleep(pause)
                pause *= 2

    def _remove_damaged(self, path: Path) -> None:
        with self._locked(), contextlib.suppress(FileNotFoundError):
            path.unlink()

    def _entries(self) -> list[tuple[Path, os.stat_result]]:
        """The entries and their status, skipping any removed while they are listed."""
        entries = []
        for path in self.folder.glob(f"*{_SUFFIX}"):
            if _KEY.match(path.stem):
                with contextlib.suppress(FileNotFoundError):
                    entries.append((path, path.stat()))
        return entries

    def size(self) -> int:
        """Bytes the entries take on disk."""
        return sum(status.st_size for _, status in self._entries())

    def _make_room(self, needed: int) -> None:
        """Remove the least recently used entries until ``needed`` more bytes fit in the quota
        (under the folder's lock: every process's puts and evictions take it)."""
        entries = sorted(self._entries(), key=lambda entry: entry[1].st_mtime)
        total = sum(status.st_size for _, status in entries)
        while entries and total + needed > self.quota:
            oldest, status = entries.pop(0)
            total -= status.st_size
            oldest.unlink(missing_ok=True)

    def clear(self) -> None:
        """Remove every entry (and any write a killed server left half done)."""
        with self._locked():
            for path in self.folder.glob(f"*{_SUFFIX}"):
                if _KEY.match(path.stem) or path.name.startswith(".writing-"):
                    path.unlink(missing_ok=True)


def _touch(path: Path) -> bool:
    """Mark an entry as just used; False when it is not there (or was evicted meanwhile)."""
    try:
        os.utime(path)
        return True
    except FileNotFoundError:
        return False
    except OSError:  # a read-only folder or the like: the entry is there, its age stays
        return path.is_file()
