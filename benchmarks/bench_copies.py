"""What Q-alpha copies: the memory a run adds to the data it is given, by kind of input and precision.

    python -m benchmarks.bench_copies [--samples 200] [--features 50000]

The docs promise that sparse data are never densified, say when they are copied, and say what
``dtype=np.float32`` saves; this measures each, as the peak of Python's allocations
(``tracemalloc``, which NumPy and SciPy report their buffers to) during ``q_alpha(X, 2,
max_iter=3)`` beyond the input, in multiples of the input's own bytes (for sparse input, of its
stored values and indices). Inputs: a dense matrix in float64 and float32 (with ``dtype``
float64 and float32), and a SciPy sparse matrix (1% stored) as float64 CSR, float64 CSC and
float32 CSR. What is added is the working copy of the data (the normalised features for dense
data; a float64 CSR copy where the input is not one), the data's validation, and the iteration's
vectors.
"""

import argparse
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
from scipy import sparse

ROOT = Path(__file__).resolve().parents[1]

from benchmarks.results import run_recorded


def peak_added(run) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - base


def sparse_bytes(matrix) -> int:
    return matrix.data.nbytes + matrix.indices.nbytes + matrix.indptr.nbytes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--features", type=int, default=50000)
    options = parser.parse_args()
    from core import q_alpha

    rng = np.random.default_rng(0)
    dense64 = rng.standard_normal((options.samples, options.features))
    dense32 = dense64.astype(np.float32)
    csr64 = sparse.random(options.samples, options.features, density=0.01, format="csr", random_state=0,
                          dtype=np.float64)
    cases = [("dense float64", dense64, np.float64, dense64.nbytes),
             ("dense float64", dense64, np.float32, dense64.nbytes),
             ("dense float32", dense32, np.float64, dense32.nbytes),
             ("dense float32", dense32, np.float32, dense32.nbytes),
             ("sparse CSR float64", csr64, np.float64, sparse_bytes(csr64)),
             ("sparse CSC float64", csr64.tocsc(), np.float64, sparse_bytes(csr64)),
             ("sparse CSR float32", csr64.astype(np.float32), np.float64, sparse_bytes(csr64.astype(np.float32)))]
    for X, dtype, _ in [(case[1], case[2], None) for case in cases]:  # the imports of a first call are not copies
        small = X[:20, :50]
        peak_added(lambda: q_alpha(small, 2, max_iter=3, **({} if sparse.issparse(X) else {"dtype": dtype})))
    print(f"q_alpha(X, 2, max_iter=3) on {options.samples:,} x {options.features:,}; peak allocations beyond the input "
          "(after a warm-up run of each case, so that first-call imports are not counted)\n")
    print(f"{'input':<20} {'dtype':>8} {'input MB':>9} {'added MB':>9} {'x input':>8}")
    for name, X, dtype, size in cases:
        options_ = {} if sparse.issparse(X) else {"dtype": dtype}
        added = peak_added(lambda: q_alpha(X, 2, max_iter=3, **options_))
        print(f"{name:<20} {np.dtype(dtype).name:>8} {size / 2**20:>9.1f} {added / 2**20:>9.1f} {added / size:>8.2f}")


if __name__ == "__main__":
    run_recorded(main, "bench_copies", __doc__)
