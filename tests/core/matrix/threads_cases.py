"""The solvers' BLAS threads (core.matrix.threads): one thread for thin products while they run,
the caller's setting untouched outside and above the threshold, overlapping solves of several
threads ending where they started.

BLAS threads are the process's: whatever else a test worker ran (an AppTest's script threads, the
app's background solves) shares them. So ``tests/core/matrix/test_threads.py`` runs these cases in
a fresh interpreter; ``python -m pytest tests/core/matrix/threads_cases.py`` runs them directly."""

import numpy as np
import pytest
import scipy.linalg  # noqa: F401 - SciPy's BLAS loaded, so that the limits reach it
from threadpoolctl import threadpool_info, threadpool_limits

from core import kernel_q_alpha, q_alpha, sdr_si
from core.matrix.threads import SMALL_PRODUCT_WORK, blas_threads_for, one_thread_holders


def blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def recorder(seen):
    def progress(_):
        seen.append(blas_threads())  # returns None: go on (False would stop the run)
    return progress


def test_one_thread_below_the_threshold_and_none_changed_above():
    with threadpool_limits(2, user_api="blas"):
        with blas_threads_for(SMALL_PRODUCT_WORK / 2):
            assert blas_threads() == {1}
        assert blas_threads() == {2}
        with blas_threads_for(SMALL_PRODUCT_WORK * 2):
            assert blas_threads() == {2}


@pytest.mark.parametrize("solver", ["power", "lanczos"])
def test_q_alpha_iterates_on_one_thread_on_small_data_and_restores_the_callers(solver):
    X = np.random.default_rng(0).standard_normal((40, 300))
    seen = []
    with threadpool_limits(2, user_api="blas"):
        result = q_alpha(X, 3, solver=solver, max_iter=5, tol=1e-12, progress=recorder(seen))
        assert blas_threads() == {2}
    assert len(seen) == 5 and all(threads == {1} for threads in seen)
    with threadpool_limits(1, user_api="blas"):  # the same weights whatever the threads
        again = q_alpha(X, 3, solver=solver, max_iter=5, tol=1e-12)
    np.testing.assert_allclose(result.alpha, again.alpha, rtol=0, atol=1e-12)


def test_q_alpha_keeps_the_threads_on_large_products():
    m, k = 200, 10
    n = int(SMALL_PRODUCT_WORK // (m * k)) + 100
    X = np.random.default_rng(1).standard_normal((m, n))
    seen = []
    with threadpool_limits(2, user_api="blas"):
        # the alternation's products (the ascent holds one BLAS thread and splits its Gram matrix itself)
        q_alpha(X, k, solver="power", max_iter=2, tol=1e-12, progress=recorder(seen), accelerate=False)
    assert seen and all(threads == {2} for threads in seen)


def test_kernel_q_alpha_and_sdr_si_on_small_problems_run_on_one_thread():
    rng = np.random.default_rng(2)
    seen_kernel, seen_sdr = [], []
    with threadpool_limits(2, user_api="blas"):
        kernel_q_alpha(rng.standard_normal((30, 60)), 2, "rbf", solver="power", max_iter=3, tol=1e-12,
                       progress=recorder(seen_kernel))
        sdr_si(rng.poisson(2.0, (60, 8)).astype(float) + 1, rng.poisson(2.0, (30, 8)).astype(float) + 1, 2,
               max_iter=3, progress=recorder(seen_sdr))
        assert blas_threads() == {2}
    assert seen_kernel and all(threads == {1} for threads in seen_kernel)
    assert seen_sdr and all(threads == {1} for threads in seen_sdr)


def test_overlapping_limits_of_two_sessions_end_where_they_started():
    """Enter A, enter B, leave A, leave B (two sessions' solves, not nested): BLAS is back on the
    threads it had, not left on one (threadpool_limits alone restores what each saw on entry)."""
    from contextlib import ExitStack

    from core.matrix.threads import one_blas_thread

    with threadpool_limits(2, user_api="blas"):
        first, second = ExitStack(), ExitStack()
        first.enter_context(one_blas_thread())
        second.enter_context(one_blas_thread())
        assert blas_threads() == {1}
        first.close()
        assert blas_threads() == {1}  # B still holds the limit
        second.close()
        assert blas_threads() == {2}


def test_overlapping_solves_on_many_threads_end_where_they_started():
    import threading

    rng = np.random.default_rng(3)
    problems = [rng.standard_normal((30, 80)) for _ in range(8)]
    errors, start = [], threading.Barrier(8)

    def solve(X):
        try:
            start.wait()
            for _ in range(3):
                q_alpha(X, 2, max_iter=20, tol=1e-12)
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    with threadpool_limits(2, user_api="blas"):
        workers = [threading.Thread(target=solve, args=(X,)) for X in problems]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert not errors and blas_threads() == {2} and one_thread_holders() == 0


def test_the_automatic_choices_k_means_resamples_run_on_one_blas_thread_on_small_data(monkeypatch):
    """choose_settings' k-means beside two BLAS threads took 7.8-10.5 s on a 700 x 765 table
    against 4.4-4.6 s on one (scikit-learn's, on OpenMP threads, then); its resamples run on one
    thread, and the caller's setting is back afterwards."""
    from core.selection import automatic

    seen, seeded_kmeans = [], automatic.seeded_kmeans

    def recorded(*args, **kwargs):
        seen.append(blas_threads())
        return seeded_kmeans(*args, **kwargs)

    monkeypatch.setattr(automatic, "seeded_kmeans", recorded)
    X = np.random.default_rng(2).standard_normal((120, 40))
    with threadpool_limits(2, user_api="blas"):
        scores = automatic.clustering_stability(X, 3, n_resamples=2)
        assert blas_threads() == {2}
    assert seen == [{1}]
    with threadpool_limits(1, user_api="blas"):  # the same scores whatever the threads
        np.testing.assert_allclose(automatic.clustering_stability(X, 3, n_resamples=2), scores, rtol=0, atol=1e-12)


def test_a_k_means_that_closes_after_another_threads_solve_leaves_the_threads_as_they_were(monkeypatch):
    """The review's order (issue 75): thread A holds the solvers' limit; thread B's k-means opens
    scikit-learn's own limit inside it (and sees one thread); A leaves; then the k-means closes.
    Its limit restored the one thread it found, for good ([2, 2] -> [1, 1]), until the library's
    k-means calls ran inside ``one_blas_thread``. (choose_settings' stability was the other such
    call; it now runs the project's NumPy k-means, which sets no threads.)"""
    import threading

    from sklearn.cluster import KMeans

    from core.matrix.threads import one_blas_thread
    from core.selection import clustering_scores

    k_means_running, solve_done = threading.Event(), threading.Event()
    fit_predict, errors = KMeans.fit_predict, []

    def waits_for_the_solve(self, X, *args, **kwargs):
        with threadpool_limits(1, user_api="blas"):  # as scikit-learn's own decorator does
            k_means_running.set()
            solve_done.wait(timeout=30)
            return fit_predict(self, X, *args, **kwargs)

    monkeypatch.setattr(KMeans, "fit_predict", waits_for_the_solve)
    # as on data whose products are large enough for two threads (the selectors' own limit then
    # opens no context around the k-means)
    monkeypatch.setattr("core.matrix.threads.SMALL_PRODUCT_WORK", 0.0)
    X = np.random.default_rng(5).standard_normal((60, 12))

    def run():
        try:
            clustering_scores.ndfs(X, n_clusters=3, max_iter=2)
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    with threadpool_limits(2, user_api="blas"):
        solve = one_blas_thread()
        solve.__enter__()
        other = threading.Thread(target=run)
        other.start()
        assert k_means_running.wait(timeout=30)
        solve.__exit__(None, None, None)
        solve_done.set()
        other.join(timeout=60)
        assert not errors and not other.is_alive()
        assert blas_threads() == {2} and one_thread_holders() == 0


def test_the_last_holder_restores_the_threads_from_any_thread():
    """The first holder and the last can be two sessions' threads. threadpoolctl 3.8 lets only the
    thread that first set OpenBLAS's threads set them again while it lives, and ignores the rest
    silently: the restore of the last holder, in another thread, left BLAS on one thread for good
    (hence threadpoolctl 3.7.0 in requirements.txt)."""
    import threading

    from core.matrix.threads import one_blas_thread

    with threadpool_limits(2, user_api="blas"):
        first = one_blas_thread()
        first.__enter__()
        assert blas_threads() == {1}
        seen = []

        def leave():
            first.__exit__(None, None, None)
            seen.append(blas_threads())

        other = threading.Thread(target=leave)
        other.start()
        other.join(timeout=30)
        assert seen == [{2}] and blas_threads() == {2}


def test_the_libraries_are_found_once_and_again_after_an_import(monkeypatch):
    """The pools are looked for once (9 ms a time here) and kept; an import since can load another
    BLAS, so the next holder looks again."""
    import sys
    import types

    from core.matrix import threads

    with threads.one_blas_thread():
        kept = threads._controller
    with threads.one_blas_thread():
        assert threads._controller is kept  # nothing imported since: the same controller
    monkeypatch.setitem(sys.modules, "an_import_since", types.ModuleType("an_import_since"))
    with threads.one_blas_thread():
        assert threads._controller is not kept
        assert blas_threads() == {1}


def test_a_blas_loaded_after_the_first_holder_is_limited_too():
    """In a fresh interpreter whose first limit saw NumPy's BLAS alone, SciPy's, loaded by an import
    afterwards, runs on one thread inside the next holder as well."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = """
import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits
import core.matrix.threads as threads
with threadpool_limits(2, user_api="blas"):
    with threads.one_blas_thread():
        pass
    before = len([p for p in threadpool_info() if p["user_api"] == "blas"])
    import scipy.linalg
    with threads.one_blas_thread():
        inside = {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}
        count = len([p for p in threadpool_info() if p["user_api"] == "blas"])
print(before, count, sorted(inside))
"""
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    before, count, inside = done.stdout.split(" ", 2)
    assert int(count) > int(before), done.stdout  # SciPy brought a BLAS of its own after the first holder
    assert inside.strip() == "[1]", done.stdout
