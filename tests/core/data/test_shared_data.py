"""Data sets are shared read-only (issue 58, point 8): every session that loads a bundled set gets
the same object, and caches key on its fingerprint, so no session may change it for another."""

import pickle
import threading
from dataclasses import replace

import numpy as np
import pytest

from core.data.bundled import load_dataset
from core.data.dataset import Dataset


def test_a_bundled_set_cannot_be_changed_in_place():
    iris = load_dataset("iris")
    before = iris.fingerprint
    with pytest.raises(ValueError, match="read-only"):
        iris.X[0, 0] += 1000
    with pytest.raises(ValueError, match="read-only"):
        iris.labels[0] = 2
    with pytest.raises(TypeError, match="read-only"):
        iris.meta["description"] = "changed"
    again = load_dataset("iris")
    assert again is iris and again.fingerprint == before and again.X[0, 0] == 5.1


def test_two_sessions_in_one_process_cannot_change_each_others_data():
    """Two sessions (threads of one server) load the same set; one tries to change it in place, the
    other reads it before and after: unchanged, with the fingerprint of its content."""
    seen, refusals = [], []
    changed, read_again = threading.Event(), threading.Event()

    def session_that_changes():
        data = load_dataset("wine")
        try:
            data.X[:, 0] *= 10
        except ValueError:
            refusals.append("X")
        changed.set()

    def session_that_reads():
        data = load_dataset("wine")
        seen.append(data.X.copy())
        changed.wait()
        seen.append(load_dataset("wine").X.copy())
        read_again.set()

    threads = [threading.Thread(target=session_that_reads), threading.Thread(target=session_that_changes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert refusals == ["X"] and np.array_equal(seen[0], seen[1])
    fresh = Dataset(seen[1], labels=np.asarray(load_dataset("wine").labels).copy())
    assert fresh.fingerprint == load_dataset("wine").fingerprint  # the fingerprint is the content's


def test_a_new_data_set_is_made_for_a_change_and_the_old_one_stays():
    iris = load_dataset("iris")
    doubled = replace(iris, X=iris.X * 2)
    assert doubled.fingerprint != iris.fingerprint and np.array_equal(doubled.X / 2, iris.X)
    assert not doubled.X.flags.writeable


def test_a_data_set_pickles_and_keeps_its_meta():
    iris = load_dataset("iris")
    copy = pickle.loads(pickle.dumps(iris))
    assert copy.fingerprint == iris.fingerprint and dict(copy.meta) == dict(iris.meta)
