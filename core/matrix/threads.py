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
limits BLAS inside its loops). The limit is process-wide while it lasts, as every BLAS thread
setting is.
"""

from __future__ import annotations

from contextlib import nullcontext

#: Multiply-adds of one product below which the iterations run on one BLAS thread.
SMALL_PRODUCT_WORK = 3e7


def one_blas_thread():
    """A context in which BLAS (NumPy's and SciPy's) runs on one thread."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def blas_threads_for(work: float):
    """One BLAS thread for products of fewer than :data:`SMALL_PRODUCT_WORK` multiply-adds,
    else the threads as they are."""
    return one_blas_thread() if work < SMALL_PRODUCT_WORK else nullcontext()
