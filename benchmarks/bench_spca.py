"""Greedy sparse PCA and OPCA: the fast formulations against the direct ones, in the same run.

    python -m benchmarks.bench_spca [--quick]

Table 1: greedy sparse PCA (forward and backward passes for every cardinality) on the
covariance of 210 random samples, by one eigendecomposition and a secular equation per step
(core.selection.spca.greedy_spca), against solving every candidate with its own eigendecomposition (the
direct greedy search of [MWA07] Sec. 5); largest relative difference of the objectives.
Table 2: how far the app offers sparse PCA (pages/slda.py SPCA_LIMIT, under 10 s): greedy_spca on
2n random samples at 256 ... 384 features and on the bundled lung_small (325 genes).
Table 3: OPCA (core.selection.projections.OPCA) in the samples' space against the dense generalised
eigenproblem (C_main, C_side + reg I) of scipy.linalg.eigh, 35 main and 13 side samples (the AR
protocol's sizes); the cosine of the leading directions in the S inner product.
"""

import argparse
import time

import numpy as np
from scipy import linalg


from core.selection.projections import OPCA  # noqa: E402
from core.selection.spca import greedy_spca  # noqa: E402
from benchmarks.results import run_recorded  # noqa: E402


def direct_greedy_spca(C):
    """Forward and backward passes, every candidate's lambda_max from its own eigvalsh."""
    n = C.shape[0]
    chosen, remaining, forward = [], list(range(n)), []
    for _ in range(n):
        scores = [linalg.eigvalsh(C[np.ix_(chosen + [j], chosen + [j])])[-1] for j in remaining]
        best = int(np.argmax(scores))
        chosen.append(remaining.pop(best))
        forward.append(scores[best])
    current, backward = list(range(n)), [linalg.eigvalsh(C)[-1]]
    while len(current) > 1:
        scores = [linalg.eigvalsh(C[np.ix_(current[:i] + current[i + 1:], current[:i] + current[i + 1:])])[-1]
                  for i in range(len(current))]
        best = int(np.argmax(scores))
        current.pop(best)
        backward.append(scores[best])
    return np.array(forward), np.array(backward[::-1])


def timed(function):
    start = time.perf_counter()
    value = function()
    return time.perf_counter() - start, value


def main(quick):
    rng = np.random.default_rng(0)
    print("Greedy sparse PCA, both passes, every k")
    print(f"{'n':>6} {'direct (s)':>11} {'ours (s)':>9} {'speed-up':>9} {'max rel. diff':>14}")
    for n in ([32, 64] if quick else [48, 96, 174]):
        X = rng.standard_normal((210, n)) @ rng.standard_normal((n, n)) * 0.3 + rng.standard_normal((210, n))
        C = np.cov(X, rowvar=False)
        direct_seconds, (forward, backward) = timed(lambda: direct_greedy_spca(C))
        ours_seconds, path = timed(lambda: greedy_spca(X))
        difference = max(np.max(np.abs(path.forward_objective - forward) / forward),
                         np.max(np.abs(path.backward_objective - backward) / backward))
        print(f"{n:>6} {direct_seconds:>11.2f} {ours_seconds:>9.3f} {direct_seconds / ours_seconds:>8.0f}x {difference:>14.1e}")
    print("\nTable 2: the app's limit for sparse PCA (both passes, seconds)")
    print(f"{'data':>22} {'features':>9} {'seconds':>8}")
    for n in ([64, 128] if quick else [256, 320, 340, 384]):
        X = rng.standard_normal((2 * n, n)) @ rng.standard_normal((n, n)) * 0.3 + rng.standard_normal((2 * n, n))
        seconds, _ = timed(lambda: greedy_spca(X))
        print(f"{'random, 2n samples':>22} {n:>9} {seconds:>8.2f}")
    if not quick:
        from core.data.bundled import load_dataset

        genes = load_dataset("lung_small")
        seconds, _ = timed(lambda: greedy_spca(genes.X))
        print(f"{'lung_small':>22} {genes.n_features:>9} {seconds:>8.2f}")
    print("\nTable 3: OPCA, leading 10 directions")
    print(f"{'n':>6} {'dense eigh (s)':>15} {'ours (s)':>9} {'speed-up':>9} {'min cos':>9}")
    for n in ([300, 1000] if quick else [600, 2400, 4800]):
        X = rng.standard_normal((35, n)) @ rng.standard_normal((n, n)) * (0.2 / np.sqrt(n)) + rng.standard_normal((35, n))
        side = rng.standard_normal((13, n))
        ours_seconds, model = timed(lambda: OPCA(10).fit(X, side))
        S = np.cov(side, rowvar=False) + model.reg_ * np.eye(n)
        dense_seconds, (_, vectors) = timed(lambda: linalg.eigh(np.cov(X, rowvar=False), S, subset_by_index=[n - 10, n - 1]))
        cosine = np.abs(np.diag(model.components_ @ S @ vectors[:, ::-1])).min()
        print(f"{n:>6} {dense_seconds:>15.2f} {ours_seconds:>9.3f} {dense_seconds / ours_seconds:>8.0f}x {cosine:>9.6f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    quick = parser.parse_args().quick
    run_recorded(lambda: main(quick), "bench_spca", __doc__)
