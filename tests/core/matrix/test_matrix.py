"""Sparse, chunked (Dask) and distributed data: the same results as the dense path, bounded
passes, and clear messages for what cannot work."""

import json
from pathlib import Path
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
from scipy import sparse

from conftest import ROOT, as_backend
from core.selection.scorers import score_features
from core.errors import InputError
from core.matrix import data_matrix
from core.matrix.cluster import connect_scheduler
from core.matrix import kinds
from core.matrix.kinds import as_chunked_array
from core.matrix.moments import class_moments, column_moments
from core.selection.qalpha import q_alpha
from core.data.stores import open_store
from core.data.generators import weston_linear

da = pytest.importorskip("dask.array")


def sparse_counts(n_samples=300, n_features=120, density=0.08, random_state=0):
    """Count-like sparse data with planted groups: two groups of samples that express their own
    marker features (0-5 and 6-11) at higher rates."""
    rng = np.random.default_rng(random_state)
    X = sparse.random(n_samples, n_features, density=density, random_state=rng,
                      data_rvs=lambda size: rng.poisson(3, size) + 1.0).toarray()
    groups = rng.integers(0, 2, n_samples)
    for group, markers in ((0, range(0, 6)), (1, range(6, 12))):
        rows = np.flatnonzero(groups == group)
        X[np.ix_(rows, list(markers))] += rng.poisson(6, (rows.size, 6))
    X[:, n_features // 2] = 0.0  # a feature that is never expressed
    return X, groups


# ------------------------------------------------------------------ statistics
@pytest.mark.parametrize("name", ["numpy", "sparse", "dask", "dask-sparse"])
def test_column_moments_equal_numpy(name):
    X, groups = sparse_counts()
    X[:, 3] -= 100.0  # negative values and a large offset: no cancellation
    moments = column_moments(as_backend(X, name))
    assert moments.count == X.shape[0]
    assert np.array_equal(moments.maximum, X.max(axis=0)) and np.array_equal(moments.minimum, X.min(axis=0))
    assert np.allclose(moments.mean, X.mean(axis=0), rtol=1e-13, atol=1e-13)
    assert np.allclose(moments.centred, ((X - X.mean(axis=0)) ** 2).sum(axis=0), rtol=1e-12, atol=1e-10)
    per_class = class_moments(as_backend(X, name), groups, 2)
    for c in range(2):
        assert per_class[c].count == (groups == c).sum()
        assert np.allclose(per_class[c].variance, X[groups == c].var(axis=0), rtol=1e-12, atol=1e-12)


def test_repeated_sparse_entries_count_as_their_sum():
    X = sparse.csr_matrix((np.array([2.0, 3.0, -1.0, 4.0]), np.array([0, 0, 1, 1]), np.array([0, 2, 4])), shape=(2, 2))
    assert not X.has_canonical_format
    moments = column_moments(X)
    assert np.array_equal(moments.maximum, [5.0, 3.0]) and np.array_equal(moments.minimum, [0.0, 0.0])
    assert X.nnz == 4  # the caller's matrix is not changed


def test_sparse_moments_with_empty_rows():
    """Rows without stored values (a cell with no counts) make a row block without entries: its
    moments were integer and the pass failed when the first row was empty."""
    X = np.zeros((6, 4))
    X[2:, :] = np.arange(16.0).reshape(4, 4) + 1
    moments = column_moments(sparse.csr_matrix(X))
    assert np.allclose(moments.centred, ((X - X.mean(axis=0)) ** 2).sum(axis=0))
    assert np.allclose(data_matrix(sparse.csr_matrix(X)).moments().variance, X.var(axis=0))


def test_sparse_moments_use_row_blocks(monkeypatch):
    import core.matrix.kinds as largedata

    X, _ = sparse_counts()
    monkeypatch.setattr(largedata, "SPARSE_BLOCK_ENTRIES", 97)  # many blocks, some rows split oddly
    moments = column_moments(sparse.csr_matrix(X))
    assert np.allclose(moments.centred, ((X - X.mean(axis=0)) ** 2).sum(axis=0), rtol=1e-12, atol=1e-10)


# ------------------------------------------------------------------ Q-alpha: the same results
@pytest.mark.parametrize("solver", ["power", "lanczos", "dense"])
def test_q_alpha_equals_numpy_path(backend, solver):
    data = weston_linear(150, random_state=4)
    reference = q_alpha(data.X, 2, solver=solver)
    result = q_alpha(backend(data.X), 2, solver=solver)
    assert result.n_iter == reference.n_iter and result.converged == reference.converged
    assert np.allclose(result.alpha, reference.alpha, atol=1e-8)
    assert np.allclose(result.history, reference.history, rtol=1e-8)
    assert np.allclose(np.abs(result.Q.T @ reference.Q), np.eye(2), atol=1e-8)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_q_alpha_side_data_pairs_and_labels_equal_numpy_path(backend):
    """Each kind of side information gives the NumPy path's iterates. Side data and labels run the
    solver large data get (power steps); pairs make the operator indefinite, so Lanczos, whose
    every product is a pass over chunked data: its first 30 iterations are compared (the whole
    run took 49 s of the suite's time on Dask, for the same check)."""
    X, groups = sparse_counts(240, 80, random_state=3)
    side, _ = sparse_counts(90, 80, random_state=5)
    pairs = np.array([[0, 1], [2, 5], [7, 30], [11, 12]])
    runs = [dict(side=side, lam=0.5, solver="power"), dict(pairs=pairs, lam=0.1, solver="lanczos", max_iter=30),
            dict(labels=groups, k=None, solver="power")]
    for options in runs:
        reference = q_alpha(X, options.pop("k", 2), **options)
        if "side" in options:
            options["side"] = backend(side)  # the side data may be large too
        result = q_alpha(backend(X), reference.k if "labels" not in options else None, **options)
        assert result.n_iter == reference.n_iter and result.converged == reference.converged, options.keys()
        assert np.allclose(result.alpha, reference.alpha, atol=1e-8), options.keys()
        assert np.allclose(result.history, reference.history, rtol=1e-8)


def test_auto_solver_takes_power_steps_where_they_apply():
    """The automatic solver takes power steps (one pass over the data per iteration) on every
    backend and at every size; Lanczos where the operator is indefinite (the gap criterion) beyond
    100 features, a dense solve up to them."""
    data = weston_linear(100, random_state=0)
    for name in ("numpy", "sparse", "dask"):
        assert q_alpha(as_backend(data.X, name), 2).solver == "power"
        assert q_alpha(as_backend(data.X[:, :100], name), 2).solver == "power"
    assert q_alpha(data.X, 2, criterion="gap").solver == "lanczos"
    assert q_alpha(data.X[:, :100], 2, criterion="gap").solver == "dense"


def test_sparse_input_is_not_densified_or_copied():
    """The statistics and a fused pass over a 2,000 x 5,000 CSR matrix (80 MB as dense float64,
    1.2 MB stored) allocate a small fraction of the dense matrix, and the matrix is not copied."""
    import tracemalloc

    matrix = sparse.random(2_000, 5_000, density=0.01, format="csr", random_state=0)
    W = np.random.default_rng(0).standard_normal((5_000, 3))
    tracemalloc.start()
    try:
        features = data_matrix(matrix).normalised()
        T, U = features.fused(W[:features.n_kept])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert features.X is matrix  # float64 CSR is used as it is
    assert T.shape == (2_000, 3) and U.shape == (3, features.n_kept)
    assert peak < 8 * 2_000 * 5_000 / 10


def test_stop_is_honoured_on_chunked_data():
    data = weston_linear(100, random_state=0)
    result = q_alpha(as_backend(data.X, "dask"), 2, progress=lambda report: report.done < 3)
    assert result.stopped and result.n_iter == 3 and not result.converged


# ------------------------------------------------------------------ one-pass filters
@pytest.mark.parametrize("method", ["variance", "fisher", "pearson"])
def test_one_pass_scores_equal_numpy(backend, method):
    X, groups = sparse_counts()
    y = None if method == "variance" else np.where(groups == 1, "b", "a")
    dense = score_features(method, X, y)
    large = score_features(method, backend(X), y)
    assert np.allclose(large.scores, dense.scores, rtol=1e-10, atol=1e-12)
    assert set(large.ranking[:6]) == set(dense.ranking[:6])


def test_filters_share_one_dask_array_held_in_memory():
    """Several one-pass filters on one data_matrix(X, persist=True): the array's chunks are made
    once, and each filter's scores are the NumPy path's."""
    X, groups = sparse_counts()
    made = []
    chunked = as_backend(X, "dask").map_blocks(lambda block: made.append(1) or block, dtype=np.float64)
    held = data_matrix(chunked, persist=True)
    assert held.placement.startswith("Held in this process's memory")
    chunks = len(made)
    for method in ("variance", "fisher", "pearson"):
        y = None if method == "variance" else groups
        assert np.allclose(score_features(method, held, y).scores, score_features(method, X, y).scores,
                           rtol=1e-10, atol=1e-12)
    assert len(made) == chunks  # no chunk made again


def test_one_pass_scores_find_marker_genes():
    X, groups = sparse_counts(600, 200)
    for method in ("fisher", "pearson"):
        scores = score_features(method, as_backend(X, "dask-sparse"), groups)
        assert set(scores.ranking[:12]) == set(range(12))


def test_filters_that_need_dense_data_say_so():
    X, groups = sparse_counts()
    with pytest.raises(InputError, match="needs the data as a dense in-memory array.*variance, pearson, fisher"):
        score_features("relieff", sparse.csr_matrix(X), groups)


def test_held_data_are_cut_into_row_blocks_two_per_thread(monkeypatch):
    """Held data: two row blocks per worker thread, at most HELD_BLOCK_BYTES each. Stored in at
    least 4 chunks a block, whole chunks are merged at the chunk ends nearest equal shares; else
    the rows are cut equally. The values unchanged; sparse chunks as they were."""
    from core.matrix import cluster

    values = np.arange(1001 * 7, dtype=np.float32).reshape(1001, 7)
    X = da.from_array(values, chunks=(50, 4))  # 21 row chunks
    # 2 and 4 blocks: 21 chunks are at least 4 a block, merged (shares 500.5; 250.25, 500.5, 750.75);
    # 6 blocks: fewer, cut into 1001 / 6 = 166.8 rows
    for threads, rows in ((1, (500, 501)), (2, (250, 250, 250, 251)), (3, (167,) * 5 + (166,))):
        held = cluster.held_row_blocks(X, threads)
        assert held.chunks == (rows, X.chunks[1]), (threads, held.chunks)
        assert np.array_equal(held.compute(), values)
    monkeypatch.setattr(cluster, "HELD_BLOCK_BYTES", 1001 * 7 * 4 // 10)
    assert cluster.held_row_blocks(X, 1).numblocks[0] == 11  # ten blocks would be over the cap
    tiny = da.from_array(values[:3], chunks=(1, 7))
    assert cluster.held_row_blocks(tiny, 4).chunks[0] == (1, 1, 1)  # never more blocks than rows
    counts, _ = sparse_counts()
    chunked = as_backend(counts, "dask-sparse")
    assert cluster.held_row_blocks(chunked, 2) is chunked


# ------------------------------------------------------------------ distributed
LOCAL_CLUSTER_CHECK = """
import os
from collections import Counter

import numpy as np
from distributed import Client, LocalCluster, get_task_stream
from core.data.generators import weston_linear
from core.matrix import data_matrix
from core.matrix.cluster import local_cluster
from core.selection.qalpha import q_alpha
from conftest import as_backend

if __name__ == "__main__":
    data = weston_linear(120, random_state=2)
    reference = q_alpha(data.X, 2, solver="power")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        # dask.distributed's own worker environment, which local_cluster leaves out
        assert set(client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_")).values()) == {"65536"}
        with get_task_stream(client) as stream:
            result = q_alpha(as_backend(data.X, "dask-sparse"), 2, solver="power")
    assert np.allclose(result.alpha, reference.alpha, atol=1e-8)
    assert result.n_iter == reference.n_iter
    # the passes ran as tasks on both worker processes
    names = [task["key"] if isinstance(task["key"], str) else task["key"][0] for task in stream.data]
    # a pass's block tasks are keyed (qalpha-pass-..., 0, block)
    products = [task for task, name in zip(stream.data, names) if name.startswith("qalpha-pass") and task["key"][1] == 0]
    assert len(products) >= result.n_iter and len({task["worker"] for task in products}) == 2

    # held in the workers' memory when it fits (persist=None), else read from its source at every pass
    reference_dense = q_alpha(data.X, 2, solver="power", init="random", random_state=0)
    source_tasks, placements = {}, {}
    with local_cluster(n_workers=2, threads_per_worker=1, host="127.0.0.1") as cluster, Client(cluster) as client:
        environments = client.run(lambda: (os.environ.get("MALLOC_TRIM_THRESHOLD_"), os.environ.get("OPENBLAS_NUM_THREADS")))
        assert len(environments) == 2 and set(environments.values()) == {(None, "1")}, environments
        for persist in (None, False):
            with get_task_stream(client) as stream:
                run = q_alpha(as_backend(data.X, "dask"), 2, solver="power", init="random", random_state=0,
                              persist=persist)
            # the same iterates; the mixing's last step (a residual of 8.7e-3 to 5.6e-7) scales the
            # products' rounding by its coefficients: 1.2e-12 apart in process, 1e-15 before it
            assert np.allclose(run.alpha, reference_dense.alpha, rtol=0, atol=1e-10) and run.n_iter == reference_dense.n_iter
            names = [task["key"] if isinstance(task["key"], str) else task["key"][0] for task in stream.data]
            source_tasks[persist] = sum(name.startswith(("array-", "rechunk-")) for name in names)
            placements[persist] = run.data_placement
        # held in two row blocks per worker thread, two on each worker (persisted whole, 3 of 4
        # landed on one)
        held = data_matrix(as_backend(data.X, "dask"), persist=True).values
        where = client.who_has(held)
        row_blocks = {(key[1], workers) for key, workers in where.items()}  # a row block on one worker
        assert held.numblocks[0] == 4 and len(row_blocks) == 4, where
        assert sorted(Counter(workers for _, workers in row_blocks).values()) == [2, 2], where
    assert placements[None].startswith("Held in the workers' memory for every pass") and "within 50%" in placements[None]
    assert placements[False] == "Read from their source at every pass (189.4 kB; persist=False)."
    # the source's chunks were made once, not once per pass
    assert 10 * source_tasks[None] < source_tasks[False], source_tasks
    print("cluster ok")
"""


KILLED_WORKER_CHECK = """
import os
import signal
import time

import dask.array as da
import numpy as np
from distributed import Client
from core.data.generators import weston_linear
from core.matrix.cluster import local_cluster
from core.matrix.kinds import BLOCK_COPIES, local_threads
from core.selection.qalpha import q_alpha

if __name__ == "__main__":
    data = weston_linear(400, random_state=2)
    options = dict(solver="power", init="random", random_state=0, tol=1e-8, max_iter=3000)
    reference = q_alpha(data.X, 2, **options)
    # blocks of 50 rows kept as they are (smaller ones are merged up to the memory limit's share)
    limit = BLOCK_COPIES * local_threads() * 8 * data.X.shape[1] * 50
    killed = []
    with local_cluster(n_workers=2, threads_per_worker=1, host="127.0.0.1") as cluster, Client(cluster) as client:
        pids = client.run(os.getpid)
        lost = []

        def progress(report):
            if report.done == 3 and not killed:  # mid-solve: the held blocks of one worker are lost
                victim = sorted(pids)[0]
                lost.append(len(client.who_has()))
                os.kill(pids[victim], signal.SIGKILL)
                killed.append(pids[victim])

        result = q_alpha(da.from_array(data.X, chunks=(50, 202)), 2, progress=progress, memory_limit=limit, **options)
        for _ in range(100):  # the nanny starts a new worker process
            if len(client.scheduler_info()["workers"]) == 2:
                break
            time.sleep(0.1)
        after = client.run(os.getpid)
    assert killed and killed[0] not in after.values() and len(after) == 2, (killed, after)
    assert result.data_placement.startswith("Held in the workers' memory"), result.data_placement
    assert reference.converged and result.converged and result.n_iter == reference.n_iter, (result.n_iter, reference.n_iter)
    assert np.abs(result.alpha - reference.alpha).max() <= 1e-12
    print("killed worker ok", result.n_iter, lost)
"""


@pytest.mark.slow  # a cluster of its own: the slow tier (docs/testing.md)
def test_a_worker_killed_mid_solve_changes_nothing(tmp_path):
    """Issue 62: on a local cluster of two worker processes, Q-alpha on data held in the workers'
    memory; at the third iteration one worker is SIGKILLed. Its blocks are recomputed from their
    source, the nanny starts a new worker, and the run ends at NumPy's weights (within 1e-12) in
    as many iterations."""
    import os

    script = tmp_path / "killed_worker_check.py"
    script.write_text(KILLED_WORKER_CHECK)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])})
    assert done.returncode == 0 and "killed worker ok" in done.stdout, done.stderr[-3000:]


@pytest.mark.slow  # a cluster of its own, 20-30 s: the slow tier (issue 62 allows it; docs/testing.md)
def test_q_alpha_on_a_local_cluster_of_two_processes(tmp_path):
    """In a fresh interpreter: the worker processes a LocalCluster spawns failed to start inside
    a pytest worker that had run other tests (twice under CI), and started at once from a
    process of their own."""
    import os

    script = tmp_path / "cluster_check.py"
    script.write_text(LOCAL_CLUSTER_CHECK)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])})
    assert done.returncode == 0 and "cluster ok" in done.stdout, done.stderr[-3000:]


def test_the_local_clusters_workers_keep_glibcs_adaptive_thresholds_and_the_rest_of_dasks_environment():
    """local_cluster starts workers without MALLOC_TRIM_THRESHOLD_ (each chunk-sized buffer mapped
    afresh: reads 1.8x slower) and with everything else dask.distributed sets, and changes no
    configuration of the caller's."""
    import dask

    from core.matrix.cluster import worker_environment

    environ = worker_environment()
    before = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
    assert "MALLOC_TRIM_THRESHOLD_" in before and "MALLOC_TRIM_THRESHOLD_" not in environ
    assert environ == {name: value for name, value in before.items() if name != "MALLOC_TRIM_THRESHOLD_"}
    assert environ["OPENBLAS_NUM_THREADS"] == 1
    assert dict(dask.config.get("distributed.nanny.pre-spawn-environ")) == before


def test_without_a_cluster_a_dask_array_is_held_in_memory_only_when_asked():
    from core.matrix.kinds import local_threads

    data = weston_linear(120, random_state=2)
    reference = q_alpha(data.X, 2, solver="power")
    for persist, placement in ((None, "Read from their source at every pass (189.4 kB; no dask.distributed cluster"),
                               (True, f"Held in this process's memory for every pass, in {2 * local_threads()} row blocks "
                                      "(189.4 kB; persist=True)."),
                               (False, "Read from their source at every pass (189.4 kB; persist=False).")):
        run = q_alpha(as_backend(data.X, "dask"), 2, solver="power", persist=persist)
        assert run.data_placement.startswith(placement) and np.allclose(run.alpha, reference.alpha, rtol=0, atol=1e-12)
    assert reference.data_placement == ""
    with pytest.raises(InputError, match="persist must be True, False or None"):
        q_alpha(as_backend(data.X, "dask"), 2, persist="yes")


def test_unreachable_scheduler_fails_within_ten_seconds():
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    start = time.perf_counter()
    with pytest.raises(InputError, match=f"Could not reach a Dask scheduler at tcp://127.0.0.1:{port}"):
        connect_scheduler(f"tcp://127.0.0.1:{port}", timeout=3)
    assert time.perf_counter() - start < 10


def test_a_scheduler_that_accepts_and_never_answers_fails_within_its_timeout():
    """A port that accepts the connection and never speaks (a wrong service, a hung scheduler):
    distributed's own Client waited past its timeout for good; the connection now gives up at it."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        start = time.perf_counter()
        with pytest.raises(InputError, match=f"Could not reach a Dask scheduler at {address} within 1.5 s"):
            connect_scheduler(address, timeout=1.5)
        assert time.perf_counter() - start < 3


# ------------------------------------------------------------------ bad input
def test_sparse_matrix_with_explicit_nan_is_refused():
    X, _ = sparse_counts()
    matrix = sparse.csr_matrix(X)
    matrix.data[17] = np.nan
    row = int(np.searchsorted(matrix.indptr, 17, side="right") - 1)
    with pytest.raises(InputError, match=rf"sparse matrix with 1 NaN or infinite stored value\(s\) \(the first at "
                                         rf"sample {row}, feature {matrix.indices[17]}\)"):
        q_alpha(matrix, 2)
    with pytest.raises(InputError, match="NaN or infinite"):
        score_features("variance", matrix)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, "both infinities"])
def test_dense_nan_or_infinity_anywhere_is_refused(dtype, bad):
    """The finiteness test sums columns: a NaN, an infinity, and +inf beside -inf in one column
    (a NaN sum) are refused wherever they sit; finite values whose column sums overflow are not."""
    rng = np.random.default_rng(6)
    for row, column in rng.integers(0, [300, 40], size=(5, 2)):
        X = rng.standard_normal((300, 40)).astype(dtype)
        if bad == "both infinities":
            X[row, column], X[(row + 1) % 300, column] = np.inf, -np.inf
        else:
            X[row, column] = bad
        with pytest.raises(InputError, match="NaN or infinite"):
            data_matrix(X)
    huge = np.full((300, 40), np.finfo(dtype).max / 4, dtype=dtype)
    assert not np.isfinite(np.ones(300, dtype=dtype) @ huge).all()
    assert data_matrix(huge).kind == "dense"


def test_chunked_nan_is_refused():
    X, _ = sparse_counts()
    X[5, 7] = np.nan
    with pytest.raises(InputError, match=r"NaN or infinite values \(1 feature\(s\), the first: feature 7\)"):
        q_alpha(as_backend(X, "dask"), 2)


def test_chunks_beyond_the_memory_limit_are_refused():
    X = da.zeros((10_000, 2_000), chunks=(5_000, 500))
    with pytest.raises(InputError, match=r"row chunks of up to 5,000 samples.*more than the memory limit of 50.0 MB.*"
                                         r"Rechunk along the samples to at most 1,638 rows"):
        as_chunked_array(X, memory_limit=50 << 20, workers=1)
    with pytest.raises(InputError, match="more than the memory limit"):
        q_alpha(X, 2, memory_limit=50 << 20)
    blocks = as_chunked_array(X, memory_limit=1 << 30, workers=1)
    # whole rows per block, its stored column chunks side by side (not copied into one)
    assert len(blocks.blocks()) == 2 and [len(row) for row in blocks.blocks()] == [4, 4]
    small = as_chunked_array(da.zeros((10_000, 100), chunks=(100, 50)), memory_limit=1 << 30, workers=1)
    assert small.array.chunks[0] == (10_000,)  # tiny row chunks merged into one task


@pytest.mark.parametrize("chunk_rows", [7, 300])
def test_chunked_class_moments_over_a_tree_of_many_blocks_equal_numpy(monkeypatch, chunk_rows):
    """43 row blocks of 7 rows (small blocks kept apart) are combined in a tree of two levels
    (fan-in 16): each block's labels are its own rows' and the classes' moments equal NumPy's,
    as with a single block."""
    X, groups = sparse_counts()
    X[:, 5] += 1e6  # an offset the combination must not cancel
    monkeypatch.setattr(kinds, "BLOCK_TARGET_BYTES", 1)
    chunked = da.from_array(X, chunks=(chunk_rows, -1))
    assert len(as_chunked_array(chunked).blocks()) == -(-300 // chunk_rows)
    per_class = class_moments(chunked, groups, 2)
    for c in range(2):
        rows = X[groups == c]
        assert per_class[c].count == len(rows)
        assert np.array_equal(per_class[c].maximum, rows.max(axis=0))
        assert np.allclose(per_class[c].mean, rows.mean(axis=0), rtol=1e-14, atol=0)
        assert np.allclose(per_class[c].variance, rows.var(axis=0), rtol=1e-10, atol=1e-12)


def test_sparse_chunks_are_not_held_to_the_dense_memory_limit():
    """A pass never densifies sparse chunks: 200 x 20,000 CSR chunks (32 MB as dense float64) pass
    a 10 MB limit that the same chunks as dense arrays do not."""
    matrix = sparse.random(400, 20_000, density=0.001, format="csr", random_state=0)
    chunked = da.from_array(matrix, chunks=(200, -1), asarray=False)
    blocks = as_chunked_array(chunked, memory_limit=10 << 20, workers=1)
    assert blocks.array.chunks == chunked.chunks
    with pytest.raises(InputError, match="more than the memory limit"):
        as_chunked_array(da.from_array(matrix.toarray(), chunks=(200, -1)), memory_limit=10 << 20, workers=1)
    moments = column_moments(chunked, memory_limit=10 << 20)
    assert np.allclose(moments.mean, np.asarray(matrix.mean(axis=0)).ravel())


def test_gap_criterion_and_float32_copies_need_dense_data():
    matrix = sparse.csr_matrix(weston_linear(50, random_state=0).X)
    with pytest.raises(InputError, match="gap criterion.*dense in-memory data only"):
        q_alpha(matrix, 2, criterion="gap")
    with pytest.raises(InputError, match="Leave dtype out"):
        q_alpha(matrix, 2, dtype=np.float32)


# ------------------------------------------------------------------ stores and the command line
def test_dense_subset_takes_the_top_variance_features_within_the_budget(tmp_path):
    from core.limits import LoadLimits
    from core.data.stores import dense_subset

    X, _ = sparse_counts(200, 60)
    np.save(tmp_path / "cells.npy", X)
    stored = open_store(tmp_path / "cells.npy")
    subset = dense_subset(stored, 10, 150, random_state=1)
    expected = np.sort(np.argsort(-X.var(axis=0), kind="stable")[:10])
    assert np.array_equal(subset.meta["subset_columns"], expected)
    rows = subset.meta["subset_rows"]
    assert rows.size == 150 and np.all(np.diff(rows) > 0)
    assert np.array_equal(subset.X, X[np.ix_(rows, expected)])
    with pytest.raises(InputError, match=r"A subset of 150 samples x 10 features would need 11.7 kB.*per-upload budget"):
        dense_subset(stored, 10, 150, limits=LoadLimits(max_decoded_bytes=10_000))


def test_missing_zarr_path_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"does not exist\. Give the path of an \.h5ad file, a \.zarr folder"):
        open_store(tmp_path / "cells.zarr")


def test_stores_open_lazily_and_agree(tmp_path):
    import anndata
    import pandas as pd
    import zarr

    X, groups = sparse_counts(200, 60)
    reference = q_alpha(X, 2, solver="power")
    adata = anndata.AnnData(sparse.csr_matrix(X), obs=pd.DataFrame({"group": [f"g{g}" for g in groups]},
                                                                    index=[f"cell{i}" for i in range(len(groups))]))
    adata.var_names = [f"gene{j}" for j in range(60)]
    adata.write_h5ad(tmp_path / "cells.h5ad")
    zarr.create_array(str(tmp_path / "cells.zarr"), data=X.astype(np.float32), chunks=(64, 20))
    np.save(tmp_path / "cells.npy", X)
    for name in ("cells.h5ad", "cells.zarr", "cells.npy"):
        stored = open_store(tmp_path / name)
        try:
            assert stored.shape == X.shape and hasattr(stored.X, "dask")
            expected = X.astype(np.float32) if name.endswith("zarr") else X
            result = q_alpha(stored.X, 2, solver="power")
            assert np.allclose(result.alpha, q_alpha(expected, 2, solver="power").alpha, atol=1e-8), name
        finally:
            stored.close()
    stored = open_store(tmp_path / "cells.h5ad")
    assert stored.is_sparse and stored.stored_values == sparse.csr_matrix(X).nnz
    assert stored.feature_names[:2] == ("gene0", "gene1") and list(stored.labels("group")[:3]) == [
        f"g{g}" for g in groups[:3]]
    stored.close()
    assert np.allclose(reference.alpha, q_alpha(X, 2, solver="power").alpha)


def test_a_server_h5ad_in_the_layout_before_anndata_0_7_opens_with_its_categories(tmp_path):
    """scanpy's pbmc68k_reduced.h5ad layout (record-array obs, categories in uns, a dense X with no
    encoding): the lazy store reads it as anndata.read_h5ad does."""
    import anndata
    import shutil

    legacy = Path(__file__).parents[2] / "fixtures" / "legacy_pbmc.h5ad"
    shutil.copy(legacy, tmp_path / "pbmc.h5ad")
    reference = anndata.read_h5ad(legacy)
    stored = open_store(tmp_path / "pbmc.h5ad")
    try:
        assert np.array_equal(stored.X.compute(), reference.X)
        assert list(stored.labels("bulk_labels")) == list(reference.obs["bulk_labels"].astype(str))
        assert stored.feature_names == tuple(reference.var_names)
    finally:
        stored.close()


@pytest.mark.slow  # the command line in a process of its own: the slow tier (docs/testing.md)
def test_command_line_writes_ranking_and_parameters(tmp_path):
    import anndata
    import pandas as pd

    X, groups = sparse_counts(200, 60)
    adata = anndata.AnnData(sparse.csr_matrix(X), obs=pd.DataFrame({"group": [f"g{g}" for g in groups]},
                                                                    index=[f"cell{i}" for i in range(len(groups))]))
    adata.write_h5ad(tmp_path / "cells.h5ad")
    output = tmp_path / "weights.csv"
    done = subprocess.run([sys.executable, "-m", "core", "qalpha", str(tmp_path / "cells.h5ad"), "--k", "2",
                           "--output", str(output)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "iteration    1  objective" in done.stderr and "converged after" in done.stderr
    ranking = pd.read_csv(output)
    record = json.loads(output.with_suffix(".json").read_text())
    expected = q_alpha(X, 2, solver="power", random_state=0)
    assert record["n_iter"] == expected.n_iter and record["converged"] and record["k"] == 2
    assert np.allclose(ranking.sort_values("feature").weight, expected.alpha, atol=1e-8)
    assert list(ranking.feature[:5]) == list(expected.ranking[:5])
    # a CSV table (read whole) with its label column
    table = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])]).assign(group=groups)
    table.to_csv(tmp_path / "cells.csv", index=False)
    done = subprocess.run([sys.executable, "-m", "core", "pearson", str(tmp_path / "cells.csv"), "--labels",
                           "group", "--output", str(tmp_path / "pearson.csv"), "--quiet"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    ranked = pd.read_csv(tmp_path / "pearson.csv")
    assert set(ranked.feature[:12]) == set(range(12)) and ranked.name[0].startswith("g")
    done = subprocess.run([sys.executable, "-m", "core", "fisher", str(tmp_path / "cells.h5ad"), "--labels",
                           "group", "--output", str(tmp_path / "fisher.csv")], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert set(pd.read_csv(tmp_path / "fisher.csv").feature[:12]) == set(range(12))


@pytest.mark.parametrize("arguments, message", [
    (["qalpha", "missing.zarr", "--k", "2"], "missing.zarr does not exist"),
    (["variance", "cells.npy", "--memory-limit", "lots"], "Memory sizes look like 3GB"),
    (["fisher", "cells.npy", "--labels", "group"], "has no per-sample column 'group'"),
    (["variance", "cells.npy", "--scheduler", "tcp://127.0.0.1:9", "--scheduler-timeout", "1.5"],
     "Could not reach a Dask scheduler at tcp://127.0.0.1:9 within 1.5 s"),
])
def test_command_line_bad_input(tmp_path, arguments, message):
    np.save(tmp_path / "cells.npy", sparse_counts(50, 20)[0])
    done = subprocess.run([sys.executable, "-m", "core", *arguments], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_moments_without_a_part_equal_the_rest_computed_directly():
    """``without`` inverts ``combine``: the overall moments minus a class's are the other samples' own."""
    from core.matrix.moments import column_moments

    X = np.random.default_rng(7).standard_normal((40, 6)) * [1, 10, 0.1, 3, 1e3, 2] + [0, 5, -2, 1e4, 0, 1]
    part, rest = column_moments(X[:13]), column_moments(X[13:])
    recovered = column_moments(X).without(part)
    assert recovered.count == 27
    assert np.allclose(recovered.mean, rest.mean, rtol=1e-12, atol=1e-9)
    assert np.allclose(recovered.centred, rest.centred, rtol=1e-9)
    with pytest.raises(ValueError):
        column_moments(X).without(column_moments(X))
