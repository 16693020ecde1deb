"""How many BLAS threads the iterative solvers' products get.

OpenBLAS splits a product over its threads whatever the product's size, and waking the threads
costs more than it saves on the thin products of Q-alpha's iterations on data of image or small
table size. Measured on a 2-core machine (``benchmarks/bench_qalpha.py``, the threads table):
at ``n_samples x n_features x k`` of 3e6 (the AR faces, k = 10) one thread ran the power step in
1.0 ms against 1.5-9 ms with two, and the Lanczos step in 13 ms against 31; at 2e7 the two were
even; at 1e8 two threads won by 1.4x. NumPy and SciPy also load one OpenBLAS each, and a call into
one between the other's leaves both pools spinning on the same cores.

So the solvers run their iterations on one BLAS thread below :data:`SMALL_PRODUCT_WORK`
multiply-adds per product and leave the threads as they are above it (as scikit-learn's k-means
limits BLAS inside its loops).

A BLAS thread setting is process-wide, and in the app many sessions solve at once on threads of
one process. Nested ``threadpool_limits`` contexts restore what each saw on entry, so two that
overlap without nesting (enter A, enter B, leave A, leave B) left BLAS on one thread for good.
:func:`one_blas_thread` therefore counts its holders: the first to enter sets one thread, the
last to leave restores what the first found; while any holds it, every thread of the process
(a large solve of another session too) runs BLAS on one thread.

A context of another library cannot join that count, and one opened in another thread can still
overlap ours: scikit-learn's k-means opens ``threadpool_limits(1)`` around its loops, so a k-means
that began while a solve held the limit saw one thread, and, closing after the solve, put BLAS
back on one thread for good ([2, 2] -> [1, 1]). So every call of the project into a library that
sets BLAS threads itself (scikit-learn's ``KMeans``) runs inside :func:`one_blas_thread` (those
libraries want one thread there anyway): its context then nests inside one of ours, and our last
holder restores what was there before any of them. ``tests/test_house.py`` finds any such call
outside one.

The holders' count spans threads: the last holder to leave, in whatever thread, restores. That
needs a threadpoolctl whose settings act from any thread: 3.8 lets only the thread that first set
OpenBLAS's threads set them again while it lives and ignores the others, so requirements.txt pins
3.7.0.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager, nullcontext

import numpy as np

#: Multiply-adds of one product below which the iterations run on one BLAS thread.
SMALL_PRODUCT_WORK = 3e7

_holders_lock = threading.Lock()
_holders = 0
_limiter = None  # the limit set by the first holder, restored by the last
_controller = None
_controller_modules = -1  # len(sys.modules) when _controller looked for the libraries


def _blas_controller():
    """threadpoolctl's controller of the thread pools loaded in this process, found once and kept.

    ``threadpool_limits`` looks for them at every call: it reads the process's memory map and
    stats each library, 9.1 ms here, where setting the threads through a kept controller takes
    0.03 ms (2-core AMD EPYC; Q-alpha on a 55 x 101 table took 22 ms, 9 of them there). An import
    can load another BLAS, so the controller looks again once modules were imported since. Called
    with ``_holders_lock`` held."""
    global _controller, _controller_modules
    if _controller is None or len(sys.modules) != _controller_modules:
        from threadpoolctl import ThreadpoolController

        _controller, _controller_modules = ThreadpoolController(), len(sys.modules)
    return _controller


@contextmanager
def one_blas_thread():
    """A context in which BLAS (NumPy's and SciPy's) runs on one thread, safe when contexts of
    several threads overlap: the limit lasts while any holds it, then what was there before returns."""
    global _holders, _limiter

    with _holders_lock:
        if _holders == 0:
            _limiter = _blas_controller().limit(limits=1, user_api="blas")
        _holders += 1
    try:
        yield
    finally:
        with _holders_lock:
            _holders -= 1
            if _holders == 0:
                _limiter.restore_original_limits()
                _limiter = None


def one_thread_holders() -> int:
    """How many contexts of :func:`one_blas_thread` are open now, in every thread of the process."""
    with _holders_lock:
        return _holders


def small_products(work: float) -> bool:
    """Whether products of ``work`` multiply-adds run on one BLAS thread (:data:`SMALL_PRODUCT_WORK`)."""
    return work < SMALL_PRODUCT_WORK


def blas_threads_for(work: float):
    """One BLAS thread for products of fewer than :data:`SMALL_PRODUCT_WORK` multiply-adds,
    else the threads as they are."""
    return one_blas_thread() if small_products(work) else nullcontext()


_pool_lock = threading.Lock()
_pool = None


def cores() -> int:
    """The cores this process may run on."""
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


#: Below this many values a dense pass runs on the calling thread: at 200 x 5,000 the threads
#: cost more than they save (10.7 against 5.4 ms), at 2,600 x 1,200 they save a quarter.
PARALLEL_VALUES = 1 << 21


def row_ranges(n_rows, parallel=True):
    """Contiguous row ranges (starts, stops) of a dense pass for :func:`map_on_cores`: one per
    core, or one in all."""
    parts = min(cores(), n_rows) if parallel else 1
    if parts <= 1:  # without linspace, as small problems ask for it at every evaluation
        return np.array([0]), np.array([n_rows])
    bounds = np.linspace(0, n_rows, parts + 1).astype(int)
    return bounds[:-1], bounds[1:]


def map_on_cores(function, *iterables, blas: bool = True) -> list:
    """``list(map(function, *iterables))`` on a pool of one thread per core, shared by the whole
    process: for work split by hand into parts that each fit a core's cache. With ``blas`` BLAS
    runs on one thread meanwhile (OpenBLAS's own threads would split each small part again);
    work without BLAS calls leaves it as it is. One part
    runs on the calling thread. Many sessions calling at once share the pool's threads instead of
    each starting their own."""
    global _pool
    from concurrent.futures import ThreadPoolExecutor

    parts = list(zip(*iterables))
    if len(parts) == 1:
        return [function(*parts[0])]
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=cores(), thread_name_prefix="core-products")
    with one_blas_thread() if blas else nullcontext():
        return list(_pool.map(lambda part: function(*part), parts))
