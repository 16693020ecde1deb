"""Q-alpha: explicit G against the matrix-free products, and matrix-free alone up to 10^6 features.

Run ``python -m benchmarks.bench_qalpha`` (about 10 minutes on 2 cores; ``--quick`` for a
smaller run). Each case runs in its own process so that its peak memory (``ru_maxrss``) is its own.

Table 1 (issue 3): q = 130 samples in 5 groups of 26, k = 5, n = 2,000 / 5,000 / 20,000
features (1 % of the features shifted by 1.5 in each group). Both versions run the same
power-embedded iteration from the same start for the same number of iterations; "explicit" forms
``G = (M M^T) o (P P^T)`` and takes its leading eigenvector from the stored matrix, "matrix-free"
never forms it. Reported: time, the cosine between the two alphas, the speed ratio.

Table 2: q = 100 samples in two groups of 50, 1 % of the features shifted by 1.0 in the second
group, the rest N(0, 1); k = 3; the default solver (power steps).
Reported: time, iterations, converged flag, peak memory of the process (data included), and
the fraction of the planted features that rank in the top 1 %.

Table 3: the lambda path (``q_alpha_path``, 13 values from 1e-4 to 100, each warm-started from the
one before) against solving each lambda cold with ``q_alpha``, in the same process: wine (classes
2 and 3 main, class 1 side, z-scores, k = 2), the AR faces (people 1-5 main, person 6 side, 2,400
pixels, k = 5) and a 20,000-gene table (100 samples, two groups, 20 side samples that share half
the planted genes, k = 2). Reported: both totals and their ratio, the iterations of each, the
largest difference of the weights, the time of a lambda between grid points (warm from the
nearest) against its cold solve. ``--tables 3`` runs this table alone.

Table 4: BLAS threads (``core.matrix.threads``). Random data of 130 x 2,400 (the AR faces' size)
to 1,000 x 10,000, k = 10, 20 iterations of the power and the Lanczos steps, best of 3, in one
process: with every BLAS thread of the machine, with one, and as the library chooses (one thread
below ``SMALL_PRODUCT_WORK`` multiply-adds per product). Reported: milliseconds per iteration and
the all-threads time over the library's.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from benchmarks.results import run_recorded

ROOT = Path(__file__).resolve().parents[1]


def grouped_data(n_features, n_groups, group_size, shift, fraction, rng, every_group=True):
    X = rng.standard_normal((n_groups * group_size, n_features))
    planted = []
    groups = range(n_groups) if every_group else range(1, n_groups)
    for g in groups:
        chosen = rng.choice(n_features, max(1, int(fraction * n_features)), replace=False)
        X[g * group_size:(g + 1) * group_size, chosen] += shift
        planted.append(chosen)
    return X, np.unique(np.concatenate(planted))


def case_compare(n_features, max_iter):
    from core.selection.qalpha import q_alpha
    rng = np.random.default_rng(0)
    X, _ = grouped_data(n_features, 5, 26, 1.5, 0.01, rng)
    out = {}
    for label, solver in (("explicit", "dense"), ("matrix-free", "lanczos")):
        start = time.perf_counter()
        result = q_alpha(X, 5, solver=solver, max_iter=max_iter, tol=1e-9, eig_tol=1e-10)
        out[label] = dict(seconds=time.perf_counter() - start, n_iter=result.n_iter,
                          alpha=result.alpha.tolist())
    a, b = np.array(out["explicit"]["alpha"]), np.array(out["matrix-free"]["alpha"])
    return dict(n=n_features, explicit_s=out["explicit"]["seconds"],
                free_s=out["matrix-free"]["seconds"], n_iter=out["explicit"]["n_iter"],
                cosine=float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)),
                peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def case_large(n_features, max_iter, tol, dtype):
    from core.selection.qalpha import q_alpha
    rng = np.random.default_rng(0)
    X, planted = grouped_data(n_features, 2, 50, 1.0, 0.01, rng, every_group=False)
    start = time.perf_counter()
    result = q_alpha(X, 3, max_iter=max_iter, tol=tol, dtype=np.dtype(dtype))
    seconds = time.perf_counter() - start
    top = result.top(planted.size)
    return dict(n=n_features, seconds=seconds, n_iter=result.n_iter, converged=result.converged,
                solver=result.solver, dtype=dtype,
                recall=float(np.isin(top, planted).sum() / planted.size),
                peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def path_cases(quick):
    """(name, main, side, k) of Table 3."""
    from core import load_dataset

    wine = load_dataset("wine")
    X = (wine.X - wine.X.mean(axis=0)) / wine.X.std(axis=0)
    cases = [("wine", X[wine.labels != 1], X[wine.labels == 1], 2)]
    faces = load_dataset("warpAR10P")
    cases.append(("AR faces", faces.X[faces.labels <= 5], faces.X[faces.labels == 6], 5))
    if not quick:
        rng = np.random.default_rng(0)
        genes = rng.standard_normal((120, 20_000))
        planted = rng.choice(20_000, 200, replace=False)
        genes[50:100, planted] += 1.0
        genes[100:, planted[:100]] += 1.0  # the side samples share half of the planted genes
        cases.append(("20k genes", genes[:100], genes[100:], 2))
    return cases


def table_path(quick):
    from core import q_alpha, q_alpha_path
    from core.selection.lambda_path import DEFAULT_LAMS

    print(f"\nTable 3: the lambda path ({DEFAULT_LAMS.size} values, 1e-4 to 100, warm-started) vs each lambda solved cold")
    print(f"{'data':>10} {'features':>9} {'path s':>7} {'cold s':>7} {'ratio':>6} {'iters path/cold':>16} "
          f"{'max |d alpha|':>13} {'between: warm s / cold s':>25}")
    for name, main, side, k in path_cases(quick):
        q_alpha(main, k, side=side, lam=1.0, max_iter=5)  # warm-up: imports, BLAS threads
        start = time.perf_counter()
        path = q_alpha_path(main, k, side=side)
        path_seconds = time.perf_counter() - start
        start = time.perf_counter()
        cold = [q_alpha(main, k, side=side, lam=lam) for lam in path.lams]
        cold_seconds = time.perf_counter() - start
        difference = max(float(np.abs(a.alpha - c.alpha).max()) for a, c in zip(path.results, cold))
        between = float(np.sqrt(path.lams[6] * path.lams[7]))
        start = time.perf_counter()
        path.at(between)
        warm_between = time.perf_counter() - start
        start = time.perf_counter()
        q_alpha(main, k, side=side, lam=between)
        cold_between = time.perf_counter() - start
        iterations = f"{path.n_iter.sum()}/{sum(c.n_iter for c in cold)}"
        print(f"{name:>10} {main.shape[1]:>9,} {path_seconds:>7.2f} {cold_seconds:>7.2f} "
              f"{cold_seconds / path_seconds:>5.1f}x {iterations:>16} {difference:>13.1e} "
              f"{warm_between:>12.3f} / {cold_between:.3f}")


def table_threads(quick):
    import os
    import warnings

    import scipy.linalg  # noqa: F401 - SciPy's BLAS loaded, so that the limits reach it
    from threadpoolctl import threadpool_limits

    from core import q_alpha
    from core.matrix import threads

    every = os.cpu_count() or 1
    sizes = [(130, 2400), (200, 5000)] if quick else [(130, 2400), (200, 5000), (300, 8000), (1000, 2000),
                                                       (400, 20000), (1000, 10000)]
    print(f"\nTable 4: BLAS threads, ms per iteration (k = 10, 20 iterations, best of 3; {every} threads at most; "
          f"one below {threads.SMALL_PRODUCT_WORK:.0e} multiply-adds)")
    print(f"{'data':>12} {'m n k':>8} {'solver':>8} {'all threads':>12} {'one thread':>11} {'library':>8} "
          f"{'all / library':>14}")
    rng = np.random.default_rng(0)
    limit = threads.SMALL_PRODUCT_WORK

    def per_iteration(X, solver):
        best = np.inf
        for _ in range(3):
            start = time.perf_counter()
            result = q_alpha(X, 10, solver=solver, max_iter=20, tol=1e-12)
            best = min(best, (time.perf_counter() - start) / result.n_iter)
        return best * 1000

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 20 iterations do not converge, by design
        for m, n in sizes:
            X = rng.standard_normal((m, n))
            X[:, :50] += 3 * rng.standard_normal((m, 1))
            for solver in ("power", "lanczos"):
                times = {}
                with threadpool_limits(every, user_api="blas"):
                    threads.SMALL_PRODUCT_WORK = 0  # the library's limit off
                    try:
                        per_iteration(X, solver)  # warm-up
                        times["all"] = per_iteration(X, solver)
                    finally:
                        threads.SMALL_PRODUCT_WORK = limit
                    times["library"] = per_iteration(X, solver)
                with threadpool_limits(1, user_api="blas"):
                    times["one"] = per_iteration(X, solver)
                print(f"{m:>5} x {n:<6,} {m * n * 10:>8.0e} {solver:>8} {times['all']:>12.1f} {times['one']:>11.1f} "
                      f"{times['library']:>8.1f} {times['all'] / times['library']:>13.1f}x", flush=True)


def run_in_child(kind, **kwargs):
    code = (f"import json; "
            f"import benchmarks.bench_qalpha as b; print(json.dumps(b.case_{kind}(**{kwargs!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    parser.add_argument("--compare-iter", type=int, default=20,
                        help="iterations of the explicit/matrix-free comparison")
    parser.add_argument("--max-iter", type=int, default=300, help="iterations cap, table 2")
    parser.add_argument("--tol", type=float, default=1e-3, help="alpha-change tolerance, table 2")
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    parser.add_argument("--tables", default="1,2,3,4", help="which tables to run, e.g. 3")
    args = parser.parse_args()
    tables = {int(part) for part in args.tables.split(",")}
    compare_sizes = [2000, 5000] if args.quick else [2000, 5000, 20000]
    large_sizes = [100_000] if args.quick else [100_000, 1_000_000]

    if 1 in tables:
        table_compare(compare_sizes, args)
    if 2 in tables:
        table_large(large_sizes, args)
    if 3 in tables:
        table_path(args.quick)
    if 4 in tables:
        table_threads(args.quick)


def table_compare(compare_sizes, args):
    print("Table 1: explicit G vs matrix-free (q = 130, k = 5, same start, "
          f"{args.compare_iter} iterations)")
    print(f"{'n':>8} {'explicit s':>11} {'free s':>9} {'ratio':>8} {'cos(alpha)':>11} {'peak MB':>9}")
    for n in compare_sizes:
        row = run_in_child("compare", n_features=n, max_iter=args.compare_iter)
        print(f"{row['n']:>8} {row['explicit_s']:>11.2f} {row['free_s']:>9.3f} "
              f"{row['explicit_s'] / row['free_s']:>7.1f}x {row['cosine']:>11.6f} {row['peak_mb']:>9.0f}")


def table_large(large_sizes, args):
    print(f"\nTable 2: matrix-free alone (q = 100, two groups, 1 % planted, k = 3, tol = {args.tol}, "
          f"max_iter = {args.max_iter}, {args.dtype})")
    print(f"{'n':>9} {'solver':>7} {'seconds':>8} {'iters':>6} {'conv':>5} {'s/iter':>7} "
          f"{'peak MB':>8} {'planted in top 1%':>18}")
    for n in large_sizes:
        row = run_in_child("large", n_features=n, max_iter=args.max_iter, tol=args.tol,
                           dtype=args.dtype)
        print(f"{row['n']:>9} {row['solver']:>7} {row['seconds']:>8.1f} {row['n_iter']:>6} "
              f"{str(row['converged']):>5} {row['seconds'] / row['n_iter']:>7.3f} "
              f"{row['peak_mb']:>8.0f} {row['recall']:>18.3f}")


if __name__ == "__main__":
    run_recorded(main, "bench_qalpha", __doc__)
