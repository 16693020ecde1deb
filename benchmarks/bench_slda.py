"""Greedy sparse LDA: the full path (every cardinality) with rank-1 updates, against naive search.

    python benchmarks/bench_slda.py [--quick]

Random problems: B = R^T R + 0.1 I with R of (n + 5) x n standard normal entries, a standard
normal. Table 1: the forward pass, the backward pass and the whole path (both passes, Fisher
thresholding, bounds) for n = 256 ... 4,096; median of repeats. Table 2: the naive greedy
search (a Cholesky solve of every candidate subproblem, the "default GSLDA" of 001 Sec. 5)
against ours at n = 128 and 256, and the speed-up. Table 3: exact branch-and-bound.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.slda import _path_from_problem, exact_slda, subset_objective  # noqa: E402


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes = [256, 1024] if args.quick else [256, 1024, 2048, 4096]

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

    print("\nTable 2: naive per-candidate search vs rank-1 updates (both passes)")
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


if __name__ == "__main__":
    main()
