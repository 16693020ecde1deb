"""Greedy sparse LDA: the full path (every cardinality), against LAPACK, the rank-1 version and naive search.

    python -m benchmarks.bench_slda [--quick]

Random problems: B = R^T R + 0.1 I with R of (n + 5) x n standard normal entries, a standard
normal. Table 0: the whole path from a precomputed problem, ``greedy_slda(a=a, B=B)`` (ridge
test, both blocked passes, Fisher thresholding, bounds), against ``scipy.linalg.cholesky(B)``
plus ``scipy.linalg.inv(B)`` on the same B (about as many flops, 7n^3/3, as the path's), and against the rank-1 version of the path as it was
before the passes were blocked (its ridge test and bound took full spectra); then from data,
``greedy_slda(X, y)`` with 3n samples against the same reference plus forming B; peak memory
of the path (tracemalloc) in units of one n x n float64 matrix. Table 1: the forward pass, the backward pass and the whole path (both passes, Fisher
thresholding, bounds) for n = 256 ... 4,096; median of repeats. Table 2: the naive greedy
search (a Cholesky solve of every candidate subproblem, the "default GSLDA" of [MWA07] Sec. 5)
against ours at n = 128 and 256, and the speed-up. Table 3: exact branch-and-bound. Table 4:
fewer samples than features (images, genes), ``greedy_slda(X, y)`` with the dense solver against
the low-rank one, which works on the n x m centred samples (m samples of the pair): seconds,
whether the three orders agree and the largest relative difference of the objectives; it sets
``LOW_RANK_FRACTION``, the fraction m / n up to which ``solver="auto"`` takes the low-rank path.
"""

import argparse
import time

import numpy as np


from scipy import linalg  # noqa: E402

from core.selection._slda_kernels import _greedy_eliminate, _nested_objectives
from core.selection.slda import _path_from_problem, greedy_slda, subset_objective
from core.selection.exact import exact_slda
from benchmarks.results import run_recorded  # noqa: E402


def problem(n, seed=0, extra=5):
    rng = np.random.default_rng(seed)
    R = rng.standard_normal((n + extra, n))
    return rng.standard_normal(n), R.T @ R + 0.1 * np.eye(n)


def timed(function, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def naive_path(a, B):
    n = a.size
    chosen, remaining = [], list(range(n))
    for _ in range(n):
        scores = [subset_objective(a, B, chosen + [j]) for j in remaining]
        chosen.append(remaining.pop(int(np.argmax(scores))))
    current = list(range(n))
    while len(current) > 1:
        scores = [subset_objective(a, B, current[:i] + current[i + 1:]) for i in range(len(current))]
        current.pop(int(np.argmax(scores)))


def rank1_path(a, B):
    """The whole path as landed before the blocked passes: the ridge test and the bound from
    spectra (eigvalsh), B^-1 by cho_solve with the identity, rank-1 passes, three nested Cholesky."""
    n = a.size
    eigenvalues = linalg.eigvalsh(B)
    assert eigenvalues[0] > 1e-10 * eigenvalues[-1]  # these problems need no ridge
    factor = linalg.cho_factor(B, lower=True)
    fisher = linalg.cho_solve(factor, a)
    forward, _ = _greedy_eliminate(B, a, True)
    inverse = linalg.cho_solve(factor, np.eye(n))
    removal, _ = _greedy_eliminate((inverse + inverse.T) / 2, fisher, False)
    for order in (forward, removal[::-1], np.argsort(-np.abs(fisher), kind="stable")):
        _nested_objectives(a, B, order)
    linalg.eigvalsh(B, subset_by_index=[n - 1, n - 1])


def peak_matrices(function, n):
    import tracemalloc

    tracemalloc.start()
    function()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / (8 * n * n)


def whole_path_table(sizes, rank1_sizes):
    print("Table 0: the whole path against LAPACK on the same B (seconds: median of 3 runs up to n = 4,096, "
          "one run above; the rank-1 path one run)")
    a, B = problem(256)
    greedy_slda(a=a, B=B)  # first-call costs (SciPy's ARPACK import) are not the path's
    print(f"{'n':>6} {'chol+inv':>9} {'ours(a,B)':>10} {'ratio':>6} {'rank-1':>8} {'speed-up':>9} "
          f"{'form B':>7} {'ours(X,y)':>10} {'ratio':>6} {'peak (n^2)':>10}")
    for n in sizes:
        a, B = problem(n, extra=2 * n)  # 3n samples: well conditioned, no ridge
        repeats = 3 if n <= 4096 else 1
        reference = timed(lambda: (linalg.cholesky(B), linalg.inv(B)), repeats)
        ours = timed(lambda: greedy_slda(a=a, B=B), repeats)
        rank1 = timed(lambda: rank1_path(a, B), 1) if n in rank1_sizes else float("nan")
        rng = np.random.default_rng(n)
        X = rng.standard_normal((3 * n, n)) * np.linspace(0.5, 2.0, n)
        y = np.arange(3 * n) % 2
        X[y == 1, : n // 10] += 0.3
        form = timed(lambda: (X.T @ X), repeats)
        from_data = timed(lambda: greedy_slda(X, y), repeats)
        peak = peak_matrices(lambda: greedy_slda(a=a, B=B), n) if n <= 4096 else float("nan")
        print(f"{n:>6} {reference:>9.2f} {ours:>10.2f} {ours / reference:>6.2f} {rank1:>8.2f} "
              f"{rank1 / ours:>8.1f}x {form:>7.2f} {from_data:>10.2f} {from_data / (reference + form):>6.2f} "
              f"{peak:>10.2f}")
    print("  ratio: ours / (chol + inv) [+ forming B]; speed-up: the rank-1 path / ours; peak: the largest"
          " memory the path allocated (tracemalloc) in n x n float64 matrices, B itself not counted\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes = [256, 1024] if args.quick else [256, 1024, 2048, 4096]
    whole_path_table([1024] if args.quick else [2048, 4096, 8192], [1024] if args.quick else [2048, 4096])

    print("Table 1: full path, every cardinality (median seconds)")
    print(f"{'n':>6} {'forward':>9} {'backward':>9} {'whole path':>11}")
    for n in sizes:
        a, B = problem(n)
        repeats = 3 if n <= 2048 else 1
        forward = timed(lambda: _path_from_problem(a, B, 0.0, (0, 1), "forward"), repeats)
        backward = timed(lambda: _path_from_problem(a, B, 0.0, (0, 1), "backward"), repeats)
        whole = timed(lambda: _path_from_problem(a, B, 0.0, (0, 1), "both"), repeats)
        print(f"{n:>6} {forward:>9.3f} {backward:>9.3f} {whole:>11.3f}")
    print("  (forward/backward include the Fisher thresholding curve and the bounds, as the path does)")

    print("\nTable 2: naive per-candidate search vs ours (both passes)")
    print(f"{'n':>6} {'naive s':>9} {'ours s':>9} {'speed-up':>9}")
    for n in ([128] if args.quick else [128, 256]):
        a, B = problem(n)
        naive = timed(lambda: naive_path(a, B), 1)
        ours = timed(lambda: _path_from_problem(a, B, 0.0, (0, 1), "both"), 5)
        print(f"{n:>6} {naive:>9.2f} {ours:>9.4f} {naive / ours:>8.0f}x")

    print("\nTable 3: exact branch-and-bound, every cardinality")
    print(f"{'n':>6} {'samples':>8} {'seconds':>9} {'subproblems':>12}")
    for n, extra in ([(16, 5)] if args.quick else [(16, 5), (20, 5), (24, 5), (24, 72)]):
        a, B = problem(n, extra=extra)
        start = time.perf_counter()
        result = exact_slda(a=a, B=B)
        print(f"{n:>6} {n + extra:>8} {time.perf_counter() - start:>9.2f} {result.nodes:>12,}")

    low_rank_table([(512, 32), (512, 128), (512, 256)] if args.quick else
                   [(256, 32), (256, 64), (512, 32), (512, 128), (512, 256), (1024, 32), (1024, 256),
                    (1024, 512), (2048, 32), (2048, 128), (2048, 512), (2048, 1024), (4096, 64), (4096, 1024)])


def low_rank_table(cases):
    print("\nTable 4: fewer samples m than features n, from data: the dense solver against the low-rank one "
          "(median seconds of 3)")
    print(f"{'n':>6} {'m':>5} {'m/n':>6} {'dense':>7} {'low-rank':>9} {'speed-up':>9} {'orders':>7} {'objectives':>11}")
    for n, m in cases:
        rng = np.random.default_rng(n + m)
        X = rng.standard_normal((m, n)) * np.linspace(0.5, 2.0, n)
        y = np.arange(m) % 2
        X[y == 1, : n // 10] += 0.3
        dense = greedy_slda(X, y, solver="dense")
        low = greedy_slda(X, y, solver="low-rank")
        same = all(np.array_equal(getattr(dense, f), getattr(low, f))
                   for f in ("forward_order", "backward_order", "fisher_order"))
        difference = max(float(np.max(np.abs(getattr(low, f) / getattr(dense, f) - 1)))
                          for f in ("forward_objective", "backward_objective", "fisher_objective"))
        dense_seconds = timed(lambda: greedy_slda(X, y, solver="dense"), 3)
        low_seconds = timed(lambda: greedy_slda(X, y, solver="low-rank"), 3)
        print(f"{n:>6} {m:>5} {m / n:>6.3f} {dense_seconds:>7.3f} {low_seconds:>9.3f} "
              f"{dense_seconds / low_seconds:>8.1f}x {'same' if same else 'differ':>7} {difference:>11.1e}")
    print("  objectives: the largest |low-rank / dense - 1| over k and the three curves")


if __name__ == "__main__":
    run_recorded(main, "bench_slda", __doc__)
