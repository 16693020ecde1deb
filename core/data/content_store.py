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
leaves no half entry under a key; a read recomputes the key from what it read and refuses an entry
that does not match (a truncated or altered file) with a message, removing it. The folder keeps at
most ``quota`` bytes: the least recently used entries (by modification time, touched on every
read) go first, and a single data set larger than the quota is refused with the reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from .dataset import Dataset
from ..errors import InputError

__all__ = ["STORE_FOLDER_VARIABLE", "STORE_QUOTA_VARIABLE", "DEFAULT_QUOTA", "ContentStore", "content_key",
           "default_folder"]

#: The environment variable that names the store's folder (default: under the user's cache folder).
STORE_FOLDER_VARIABLE = "QALPHA_STORE_DIR"
#: The environment variable that sets the store's size quota in GB.
STORE_QUOTA_VARIABLE = "QALPHA_STORE_QUOTA_GB"
#: Bytes the store keeps at most when nobody says (4 GB).
DEFAULT_QUOTA = 4 * 10**9

_KEY = re.compile(r"^[0-9a-f]{64}$")
_SUFFIX = ".npz"


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

    def put(self, dataset: Dataset) -> str:
        """Keep ``dataset`` (once: an equal one is already there) and return its key."""
        arrays = _arrays(dataset)
        key = _digest(arrays)
        path = self._path(key)
        if path.is_file():
            os.utime(path)
            return key
        size = sum(array.nbytes for array in arrays.values())
        if size > self.quota:
            raise InputError(f"{dataset.name} takes {size / 1e9:.2f} GB, more than the store's quota of "
                             f"{self.quota / 1e9:.2f} GB ({STORE_QUOTA_VARIABLE}): it is in use in this session "
                             "but cannot be kept for links and reloads. Raise the quota or select fewer features.")
        self._make_room(size)
        handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=".writing-", suffix=_SUFFIX)
        try:
            with os.fdopen(handle, "wb") as file:
                np.savez(file, **arrays)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)  # atomic: the entry is whole or absent
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return key

    def get(self, key: str) -> Dataset:
        """The data set kept under ``key``; refused with a message when there is none (expired,
        never kept, another server's folder) or when the entry does not match its key (damaged:
        it is removed)."""
        path = self._path(key)
        if not path.is_file():
            raise InputError("This server does not hold that data set (it expired from the store, or was loaded on "
                             "another server): load the file again.")
        try:
            with np.load(path, allow_pickle=False) as entry:
                arrays = {name: entry[name] for name in entry.files}
            damaged = _digest(arrays) != key
        except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as error:
            arrays, damaged = None, error
        if damaged is not False:
            path.unlink(missing_ok=True)
            reason = "" if damaged is True else f" ({damaged})"
            raise InputError(f"The stored copy of this data set is damaged{reason} and was removed: load the file "
                             "again.")
        os.utime(path)  # least recently used goes first
        header = json.loads(str(arrays["header"]))
        names = {field: tuple(arrays[field].tolist()) for field in ("feature_names", "sample_names") if field in arrays}
        return Dataset(arrays["X"], labels=arrays.get("labels"), image_shape=header["image_shape"],
                       feature_names_=names.get("feature_names"), sample_names_=names.get("sample_names"),
                       name=header["name"], source=header["source"], kind=header["kind"], meta=header["meta"])

    def size(self) -> int:
        """Bytes the entries take on disk."""
        return sum(path.stat().st_size for path in self.folder.glob(f"*{_SUFFIX}") if _KEY.match(path.stem))

    def _make_room(self, needed: int) -> None:
        """Remove the least recently used entries until ``needed`` more bytes fit in the quota."""
        entries = sorted((path for path in self.folder.glob(f"*{_SUFFIX}") if _KEY.match(path.stem)),
                         key=lambda path: path.stat().st_mtime)
        total = sum(path.stat().st_size for path in entries)
        while entries and total + needed > self.quota:
            oldest = entries.pop(0)
            total -= oldest.stat().st_size
            oldest.unlink(missing_ok=True)

    def clear(self) -> None:
        """Remove every entry (and any write a killed server left half done)."""
        for path in self.folder.glob(f"*{_SUFFIX}"):
            if _KEY.match(path.stem) or path.name.startswith(".writing-"):
                path.unlink(missing_ok=True)
