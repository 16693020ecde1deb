"""The server's caches of results (pages/ui/shared_results.py, issue 58 point 10): bounded in bytes,
read-only once shared, each key computed once however many sessions ask at the same time."""

import threading
from pathlib import Path
import time
from dataclasses import dataclass

import numpy as np
import pytest

from pages.ui.shared_results import BUDGET_VARIABLE, SharedResults, budget_bytes, freeze, size_of


@dataclass(frozen=True)
class Result:
    weights: np.ndarray
    table: dict


def result(n):
    return Result(np.zeros(n), {"curve": np.ones(n // 2), "name": "x"})


def test_sizes_count_each_buffer_once():
    weights = np.zeros(1000)
    assert size_of(Result(weights, {"view": weights[:10], "again": weights})) == pytest.approx(8000, abs=600)
    assert size_of(result(2000)) == pytest.approx(8 * 3000, abs=600)


def test_the_cache_holds_at_most_its_budget_least_recently_used_out_first():
    cache = SharedResults("test", budget=100_000)
    for key in range(6):
        cache.put(key, result(2000))  # 24 kB each: four fit
        assert cache.used <= cache.budget
    assert 0 not in cache and 1 not in cache and 5 in cache
    cache.get(2)  # used: now the newest
    cache.put(6, result(2000))
    assert 2 in cache and 3 not in cache
    assert not cache.put("huge", result(20_000)) and "huge" not in cache  # larger than the budget


def test_a_kept_result_is_read_only():
    cache = SharedResults("test", budget=10**7)
    value = cache.compute_once("key", lambda: result(10))
    with pytest.raises(ValueError, match="read-only"):
        value.weights[0] = 1
    with pytest.raises(ValueError, match="read-only"):
        value.table["curve"] += 1
    assert cache.get("key") is value and not value.weights.any()


def sessions_asking_at_once(cache, key, size, sessions):
    """``sessions`` threads asking ``cache`` for ``key`` at the same moment, the computation a
    result of ``size`` values taking 0.3 s: how many times it ran, and the answers."""
    calls, answers, start = [], [], threading.Barrier(sessions)

    def compute():
        calls.append(1)
        time.sleep(0.3)
        return result(size)

    def session():
        start.wait()
        answers.append(cache.compute_once(key, compute))

    threads = [threading.Thread(target=session) for _ in range(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(calls), answers


def test_sessions_asking_at_once_wait_for_one_computation():
    calls, answers = sessions_asking_at_once(SharedResults("test", budget=10**7), "same key", 100, 8)
    assert calls == 1 and len(answers) == 8 and all(answer is answers[0] for answer in answers)


def test_a_computation_that_keeps_nothing_leaves_the_waiter_to_compute():
    cache = SharedResults("test", budget=10**7)
    started, results = threading.Event(), []

    def stopped_run():
        started.set()
        time.sleep(0.2)
        return "stopped"

    first = threading.Thread(target=lambda: results.append(cache.compute_once("k", stopped_run, keep=lambda v: v != "stopped")))
    first.start()
    started.wait()
    results.append(cache.compute_once("k", lambda: "complete"))
    first.join()
    assert sorted(results) == ["complete", "stopped"] and cache.get("k") == "complete"


def test_a_result_larger_than_the_budget_is_computed_once_for_every_waiter():
    """It is not kept, but the sessions that waited for it take it (frozen) instead of computing
    it again one after another."""
    cache = SharedResults("test", budget=1_000)
    calls, answers = sessions_asking_at_once(cache, "large", 10_000, 4)  # 80 kB: over the budget
    assert calls == 1 and len(answers) == 4 and all(answer is answers[0] for answer in answers)
    assert "large" not in cache and not answers[0].weights.flags.writeable


def test_freeze_makes_a_tables_columns_read_only():
    import pandas as pd

    table = freeze({"markers": pd.DataFrame({"gene": ["A", "B"], "score": [1.0, 2.0], "rank": [1, 2]})})["markers"]
    with pytest.raises(ValueError, match="read-only"):
        table.iloc[0, 1] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        table["rank"].to_numpy()[0] = 7
    assert table["score"].tolist() == [1.0, 2.0]


def test_the_budget_is_set_by_the_environment(monkeypatch):
    monkeypatch.setenv(BUDGET_VARIABLE, "100")
    assert budget_bytes(0.5) == 50 * 2**20
    monkeypatch.delenv(BUDGET_VARIABLE)
    assert budget_bytes(1.0) == 1024 * 2**20


def test_freeze_reaches_sparse_matrices_and_nested_containers():
    from scipy import sparse

    matrix = sparse.random(5, 5, density=0.5, format="csr", random_state=0)
    value = freeze({"m": matrix, "list": [np.zeros(3)]})
    assert not value["m"].data.flags.writeable and not value["list"][0].flags.writeable


def test_the_qalpha_pages_result_is_shared_read_only():
    from streamlit.testing.v1 import AppTest

    from core.data.bundled import load_dataset
    from pages.ui import runs

    app = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "pages" / "qalpha.py"), default_timeout=300)
    app.session_state["dataset"] = load_dataset("wine")
    app.run()
    assert not app.exception
    results = [value for value, _ in runs._PROGRESS_CACHE._values.values() if hasattr(value, "alpha")]
    assert results and all(not value.alpha.flags.writeable for value in results)


def test_find_is_one_look_that_an_eviction_cannot_split():
    cache = SharedResults("test", budget=30_000)
    cache.put("a", result(2000))  # 24 kB: a second one evicts it
    assert cache.find("a") is cache.get("a") and cache.find("b", "missing") == "missing"
    cache.put("b", result(2000))
    assert "a" not in cache and cache.find("a", "missing") == "missing"
