"""Data sets kept on disk by the hash of their content (core.data.content_store, issue 51): whole
or absent after an interrupted write, refused when damaged, least recently used out first, a single
set over the quota refused, user names never paths."""

import os
import time

import numpy as np
import pytest

from core import Dataset, InputError
from core.data.content_store import ContentStore, content_key


def table(seed=0, n=30, d=12, name="genes.csv", **options):
    rng = np.random.default_rng(seed)
    return Dataset(rng.normal(size=(n, d)), labels=np.array(["tumour", "normal"] * (n // 2)), name=name,
                   feature_names_=[f"GENE{j}" for j in range(d)], kind="table", source="uploaded: genes.csv",
                   meta={"load_report": ["Guessed: samples as rows."], "basis": np.eye(2)}, **options)


def entries_and_writes(folder):
    """What the store holds in ``folder``, but for its lock file."""
    return [path for path in folder.iterdir() if path.name != ".lock"]


def test_a_kept_data_set_comes_back_equal_once_under_its_key(tmp_path):
    store = ContentStore(tmp_path)
    data = table()
    key = store.put(data)
    assert key == content_key(data) and len(key) == 64 and key in store
    assert store.put(table()) == key and len(list(tmp_path.glob("*.npz"))) == 1  # equal content, one entry
    back = store.get(key)
    np.testing.assert_array_equal(back.X, data.X)
    np.testing.assert_array_equal(back.labels, data.labels)
    assert back.feature_names == data.feature_names and back.name == "genes.csv" and back.kind == "table"
    assert back.meta == {"load_report": ["Guessed: samples as rows."]}  # the basis object is not kept
    assert back.fingerprint == data.fingerprint
    images = Dataset(np.random.default_rng(1).uniform(size=(4, 6)), image_shape=(2, 3), name="faces.zip",
                     kind="images")
    assert store.get(store.put(images)).image_shape == (2, 3)


def test_an_interrupted_write_leaves_nothing_under_the_key(tmp_path, monkeypatch):
    store = ContentStore(tmp_path)
    data = table()

    def killed(*args):
        raise KeyboardInterrupt("the server was stopped between the temporary file and the rename")

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        store.put(data)
    monkeypatch.undo()
    key = content_key(data)
    assert key not in store and entries_and_writes(tmp_path) == []
    # a write a SIGKILL cut short leaves only its temporary file: invisible, and cleared
    (tmp_path / ".writing-abc.npz").write_bytes(b"PK\x03\x04 half")
    assert key not in store and store.size() == 0
    with pytest.raises(InputError, match="does not hold that data set"):
        store.get(key)
    store.clear()
    assert entries_and_writes(tmp_path) == []


def test_a_damaged_entry_is_refused_with_a_message_and_removed(tmp_path):
    store = ContentStore(tmp_path)
    key = store.put(table())
    path = tmp_path / f"{key}.npz"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # truncated
    with pytest.raises(InputError, match="damaged.*load the file again"):
        store.get(key)
    assert not path.exists()
    # whole but not what the key says: another data set's bytes under this key
    other = store.put(table(seed=5))
    os.replace(tmp_path / f"{other}.npz", path)
    with pytest.raises(InputError, match="damaged"):
        store.get(key)


def test_the_quota_evicts_the_least_recently_used_first_and_refuses_one_set_over_it(tmp_path):
    one = table(seed=0, n=200, d=50)  # 80 kB of values
    store = ContentStore(tmp_path / "s", quota=200_000)
    first, second = store.put(one), store.put(table(seed=1, n=200, d=50))
    past = time.time() - 100
    os.utime(store.folder / f"{second}.npz", (past, past))
    os.utime(store.folder / f"{first}.npz", (past + 10, past + 10))
    store.get(first)  # read: the most recently used now
    third = store.put(table(seed=2, n=200, d=50))
    assert first in store and third in store and second not in store
    assert store.size() <= store.quota
    with pytest.raises(InputError, match="more than the store's quota"):
        store.put(table(seed=3, n=400, d=100))


def test_names_from_users_stay_names_and_keys_are_checked(tmp_path):
    store = ContentStore(tmp_path / "store")
    key = store.put(table(name="../../etc/passwd.csv"))
    assert [path.name for path in entries_and_writes(tmp_path / "store")] == [f"{key}.npz"]
    assert store.get(key).name == "../../etc/passwd.csv"
    assert not (tmp_path / "etc").exists()
    for bad in ("../../etc/passwd", key[:16], key.upper(), "", None):
        assert bad not in store
        with pytest.raises(InputError, match="64 hexadecimal digits"):
            store.get(bad)


def test_the_folder_and_quota_come_from_the_environment(tmp_path, monkeypatch):
    from core.data import content_store

    monkeypatch.setenv(content_store.STORE_FOLDER_VARIABLE, str(tmp_path / "kept"))
    monkeypatch.setenv(content_store.STORE_QUOTA_VARIABLE, "0.5")
    store = ContentStore()
    assert store.folder == tmp_path / "kept" and store.quota == 500_000_000 and store.folder.is_dir()
    monkeypatch.setenv(content_store.STORE_QUOTA_VARIABLE, "lots")
    with pytest.raises(InputError, match="number of GB"):
        ContentStore()
    monkeypatch.delenv(content_store.STORE_FOLDER_VARIABLE)
    assert content_store.default_folder().parts[-2:] == ("spectral-feature-selection", "store")


def test_the_quota_counts_the_bytes_written_not_the_arrays(tmp_path):
    """A set whose arrays fit the quota but whose file (headers, names) does not is refused, and
    nothing is kept over the quota (10,408 bytes had been kept under a quota of 10,008)."""
    from core.data.content_store import _arrays

    data = table(n=30, d=40)
    arrays_bytes = sum(array.nbytes for array in _arrays(data).values())
    store = ContentStore(tmp_path / "s", quota=arrays_bytes + 100)  # each array's headers take more
    with pytest.raises(InputError, match="as stored, more than the store's quota"):
        store.put(data)
    assert store.size() == 0 and not list((tmp_path / "s").glob(".writing-*"))
