"""Solver audit: does ``converged=True`` mean what it says, and what does the residual test cost?

    python -m benchmarks.bench_solvers [--seeds 8] [--reference e1e011a] [--repeats 3]

**The audit.** Random small problems over the grid solver (dense, Lanczos, power) x side
information (none, a side data set, pairs, labels) x criterion (sum, gap) x dtype (float64,
float32) x samples below and above the subspace threshold, plus kernel Q-alpha (linear and RBF,
eigen and power, with and without side data). "Above" lowers ``GRAM_LIMIT`` to 20 samples for the
run, so the subspace iteration that serves data beyond 4,096 samples runs on these small problems.
Each problem has planted clusters in a random subset of its features; tolerances 1e-6 and 1e-9.
For every result the script recomputes, by its own dense computation (its own normalisation, the
explicit ``G``, ``C`` and ``A_alpha``, their true 2-norms from ``eigvalsh``), alpha's eigen-residual
``||C beta - theta beta|| / ||C||_2`` and Q's subspace residual ``||A Q - Q Q^T A Q||_F / ||A||_2``
at the returned ``(alpha, Q)``. Reported: how many say ``converged=True`` with a residual above
their ``tol`` (must be 0), and, where converged, the largest relative error of ``eigenvalue``
against the leading eigenvalue of the dense ``C(Q)`` and of ``objective`` against the dense
``alpha^T C alpha`` (by dtype: float32 results are judged against the float64 data).

**The cost.** Q-alpha with its defaults (k = 2, tol 1e-6, the automatic solver) on ten bundled
sets, by this code and by the code at ``--reference`` (a ``git worktree`` of that commit, run
in a child process beside this one, alternating): iterations, the best of ``--repeats`` times,
and the true residual (as above) of the weights each returns. The reference stopped when alpha
changed by less than tol between iterations.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
from scipy import linalg

from benchmarks.reference import ROOT, worktree_at
from benchmarks.results import run_recorded

SETS = ("warpAR10P", "Yale", "ORL", "COIL20", "digits", "colon", "ALLAML", "GLIOMA", "lung_small", "TOX-171")


# ------------------------------------------------------------------ the dense reference
def normalise(X):
    """Centre every feature, scale it to unit norm, drop the constant ones: ``Mt`` (q x n) and what was kept."""
    spread = X.max(axis=0) - X.min(axis=0)
    kept = np.flatnonzero(spread > 1e-12 * np.maximum(np.abs(X).max(axis=0), 1e-300))
    centred = X[:, kept] - X[:, kept].mean(axis=0)
    norms = np.linalg.norm(centred, axis=0)
    return centred / norms, kept, norms


def norm2(symmetric):
    return float(np.max(np.abs(linalg.eigvalsh(symmetric))))


def side_scaled(C, alpha, X, side, kept, norms, lam):
    """``C`` in the side-information form ``S^1/2 C S^1/2`` and the unit ``beta`` of ``alpha``
    (``S = (D + lam I)^-1``, ``D`` the side variances relative to the main ones); as given without side data."""
    beta = alpha
    if side is not None:
        D = X.shape[0] * ((side[:, kept] / norms).var(axis=0))
        s = 1.0 / np.sqrt(D + lam)
        C, beta = C * np.outer(s, s), alpha / s
    return C, beta / np.linalg.norm(beta)


def eigen_truth(C, beta):
    """Rayleigh quotient of ``beta`` and its eigen-residual relative to ``||C||_2``."""
    theta = float(beta @ C @ beta)
    return theta, float(np.linalg.norm(C @ beta - theta * beta)) / norm2(C)


def linear_truth(X, result, *, side=None, pairs=None, lam=0.0, criterion="sum", supervised=False):
    """True residuals, leading eigenvalue and ``alpha^T C alpha`` at the returned ``(alpha, Q)``."""
    Mt, kept, norms = normalise(X)
    alpha = result.alpha[kept]
    Q = result.Q
    gram = Mt.T @ Mt
    P = Mt.T @ Q
    G = gram * (P @ P.T)
    C = 2 * G - gram ** 2 if criterion == "gap" else G
    if pairs is not None:
        W = (Mt[pairs[:, 0]] * Mt[pairs[:, 1]]).T
        C = C - lam * (W @ W.T)
    C, beta = side_scaled(C, alpha, X, side, kept, norms, lam)
    theta, alpha_residual = eigen_truth(C, beta)
    A = (Mt * alpha) @ Mt.T
    AQ = A @ Q
    Q_residual = 0.0 if supervised else float(np.linalg.norm(AQ - Q @ (Q.T @ AQ))) / norm2(A)
    leading = float(linalg.eigvalsh(C)[-1])
    return alpha_residual, Q_residual, leading, theta


def kernel_truth(X, result, *, kernel, gamma, side=None, lam=0.0):
    """The same for kernel Q-alpha, in the kernel's feature space (``Q = Phi E``, ``||Phi x||^2 = x^T V x``)."""
    from sklearn.metrics.pairwise import rbf_kernel

    Mt, kept, norms = normalise(X)
    features = Mt.T
    V = features @ features.T if kernel == "linear" else rbf_kernel(features, gamma=gamma)
    alpha, E = result.alpha[kept], result.Q
    P = V @ E
    C, beta = side_scaled(V * (P @ P.T), alpha, X, side, kept, norms, lam)
    theta, alpha_residual = eigen_truth(C, beta)
    Z = alpha[:, None] * P  # A Q = Phi D V E
    rest = Z - E @ (P.T @ Z)  # Q^T A Q = E^T V D V E
    root = np.sqrt(np.clip(alpha, 0, None))
    A_norm = norm2(root[:, None] * V * root)  # spectrum of Phi D Phi^T for alpha >= 0
    Q_residual = float(np.sqrt(max(np.sum(rest * (V @ rest)), 0.0))) / A_norm
    return alpha_residual, Q_residual, float(linalg.eigvalsh(C)[-1]), theta


# ------------------------------------------------------------------ the problems
def planted(seed):
    """Samples in 2-4 clusters that differ on a random subset of the features, side data with
    another structure, the labels and pairs in different clusters."""
    rng = np.random.default_rng(seed)
    q, n = int(rng.integers(25, 61)), int(rng.integers(15, 151))
    n_clusters = int(rng.integers(2, 5))
    labels = np.arange(q) % n_clusters
    relevant = rng.choice(n, size=max(3, n // 8), replace=False)
    X = rng.standard_normal((q, n))
    X[:, relevant] += 2.5 * rng.standard_normal((n_clusters, relevant.size))[labels]
    side = rng.standard_normal((q // 2, n))
    other = rng.choice(n, size=max(3, n // 8), replace=False)
    side[:, other] += 3.0 * rng.standard_normal((2, other.size))[np.arange(q // 2) % 2]
    return X, side, labels


def audit_problems(seeds):
    linear = [(solver, variant, criterion, dtype, above, tol)
              for solver in ("dense", "lanczos", "power")
              for variant in ("plain", "side", "pairs", "labels")
              for criterion in ("sum", "gap")
              for dtype in ("float64", "float32")
              for above in (False, True)
              for tol in (1e-6, 1e-9)
              if not (solver == "power" and (criterion == "gap" or variant == "pairs"))]
    kernels = [(kernel, solver, variant, dtype, tol)
               for kernel in ("linear", "rbf") for solver in ("eigen", "power") for variant in ("plain", "side")
               for dtype in ("float64", "float32") for tol in (1e-6, 1e-9)]
    return linear, kernels


def run_audit(seeds):
    from core import q_alpha, pairs_from_labels
    from core.matrix import sample_vectors
    from core.selection.kernel_qalpha import kernel_q_alpha

    linear, kernels = audit_problems(seeds)
    rows = []
    default_limit = sample_vectors.GRAM_LIMIT
    for seed in range(seeds):
        for number, (solver, variant, criterion, dtype, above, tol) in enumerate(linear):
            X, side, labels = planted(1000 * seed + number)
            pairs = pairs_from_labels(labels, 20, random_state=seed)
            options = dict(side=side if variant == "side" else None, pairs=pairs if variant == "pairs" else None,
                           lam=0.5 if variant in ("side", "pairs") else 0.1)
            sample_vectors.GRAM_LIMIT = 20 if above else default_limit
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if variant == "labels":
                        result = q_alpha(X, labels=labels, criterion=criterion, solver=solver, dtype=np.dtype(dtype),
                                         tol=tol, max_iter=3000)
                    else:
                        result = q_alpha(X, 2, criterion=criterion, solver=solver, dtype=np.dtype(dtype), tol=tol,
                                         max_iter=3000, **options)
            finally:
                sample_vectors.GRAM_LIMIT = default_limit
            truth = linear_truth(X, result, side=options["side"], pairs=options["pairs"], lam=options["lam"],
                                 criterion=criterion, supervised=variant == "labels")
            rows.append(dict(kind="linear", solver=solver, variant=variant, dtype=dtype, above=above, tol=tol,
                             result=result, truth=truth))
        for number, (kernel, solver, variant, dtype, tol) in enumerate(kernels):
            X, side, _ = planted(1000 * seed + 500 + number)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = kernel_q_alpha(X, 2, kernel=kernel, gamma=5.0, side=side if variant == "side" else None,
                                        lam=0.5, solver=solver, dtype=np.dtype(dtype), tol=tol, max_iter=3000)
            truth = kernel_truth(X, result, kernel=kernel, gamma=5.0, side=side if variant == "side" else None, lam=0.5)
            rows.append(dict(kind="kernel " + kernel, solver=solver, variant=variant, dtype=dtype, above=False,
                             tol=tol, result=result, truth=truth))
    return rows


def print_audit(rows):
    print(f"Audit: {len(rows)} problems (linear {sum(r['kind'] == 'linear' for r in rows)}, "
          f"kernel {sum(r['kind'] != 'linear' for r in rows)})\n")
    print(f"{'group':<28} {'runs':>5} {'converged':>9} {'false conv.':>11} {'worst res/tol':>13} "
          f"{'eigenvalue err':>14} {'objective err':>13}")
    groups = {}
    for row in rows:
        key = (row["kind"], row["solver"], row["variant"], row["dtype"])
        groups.setdefault(key, []).append(row)
        groups.setdefault(("all", "", "", row["dtype"]), []).append(row)
    for key in sorted(groups, key=lambda k: (k[0] == "all", k)):
        group = groups[key]
        converged = [r for r in group if r["result"].converged]
        false = sum(max(r["truth"][0], r["truth"][1]) > r["tol"] for r in converged)
        worst = max((max(r["truth"][0], r["truth"][1]) / r["tol"] for r in converged), default=float("nan"))
        eig = max((abs(r["result"].eigenvalue - r["truth"][2]) / abs(r["truth"][2]) for r in converged), default=float("nan"))
        obj = max((abs(r["result"].objective - r["truth"][3]) / abs(r["truth"][3]) for r in converged), default=float("nan"))
        name = " ".join(part for part in key if part)
        print(f"{name:<28} {len(group):>5} {len(converged):>9} {false:>11} {worst:>13.2g} {eig:>14.1e} {obj:>13.1e}")
    above = [r for r in rows if r["above"]]
    print(f"\nAbove the subspace threshold: {len(above)} runs, {sum(r['result'].converged for r in above)} converged, "
          f"{sum(r['result'].converged and max(r['truth'][:2]) > r['tol'] for r in above)} false.")


# ------------------------------------------------------------------ the cost on the bundled sets
_CHILD = r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from core import load_dataset, q_alpha
name, repeats, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
X = load_dataset(name).X
best = np.inf
for _ in range(repeats):
    start = time.perf_counter()
    result = q_alpha(X, 2)
    best = min(best, time.perf_counter() - start)
np.savez(out, alpha=result.alpha, Q=result.Q)
print(json.dumps(dict(n_iter=int(result.n_iter), converged=bool(result.converged), seconds=best,
                      solver=result.solver)))
"""


def run_child(root, name, repeats, out):
    done = subprocess.run([sys.executable, "-c", _CHILD, name, str(repeats), out], cwd=root, capture_output=True,
                          text=True, check=True, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    return json.loads(done.stdout.strip().splitlines()[-1])


class _Stored:
    def __init__(self, path):
        with np.load(path) as stored:
            self.alpha, self.Q = stored["alpha"], stored["Q"]


def run_cost(reference, repeats):
    from core import load_dataset

    print(f"\nCost on ten bundled sets: q_alpha(X, 2), tol 1e-6, automatic solver; this code against {reference} "
          f"(its stop: alpha changed by at most tol); best of {repeats}, each in a fresh child process\n")
    print(f"{'set':<12} {'shape':>12} {'solver':>7} {'iter (ref)':>10} {'iter':>6} {'ratio':>6} "
          f"{'s (ref)':>8} {'s':>8} {'ratio':>6} {'residual (ref)':>14} {'residual':>9} {'conv.':>6}")
    with tempfile.TemporaryDirectory() as folder, worktree_at(reference) as tree:
        ratios_iter, ratios_time = [], []
        for name in SETS:
            X = load_dataset(name).X
            old = run_child(tree, name, repeats, f"{folder}/old.npz")
            new = run_child(ROOT, name, repeats, f"{folder}/new.npz")
            old_truth = linear_truth(X, _Stored(f"{folder}/old.npz"))
            new_truth = linear_truth(X, _Stored(f"{folder}/new.npz"))
            ratios_iter.append(new["n_iter"] / old["n_iter"])
            ratios_time.append(new["seconds"] / old["seconds"])
            print(f"{name:<12} {f'{X.shape[0]} x {X.shape[1]}':>12} {new['solver']:>7} {old['n_iter']:>10} "
                  f"{new['n_iter']:>6} {ratios_iter[-1]:>5.2f}x {old['seconds']:>8.3f} {new['seconds']:>8.3f} "
                  f"{ratios_time[-1]:>5.2f}x {max(old_truth[:2]):>14.1e} {max(new_truth[:2]):>9.1e} "
                  f"{str(new['converged']):>6}")
        print(f"\nmedian ratio: iterations {np.median(ratios_iter):.2f}x, time {np.median(ratios_time):.2f}x; "
              f"largest: {max(ratios_iter):.2f}x and {max(ratios_time):.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--reference", default="e1e011a")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-cost", action="store_true")
    options = parser.parse_args()
    begin = time.perf_counter()
    print_audit(run_audit(options.seeds))
    print(f"(audit: {time.perf_counter() - begin:.0f} s)")
    if not options.skip_cost:
        run_cost(options.reference, options.repeats)


if __name__ == "__main__":
    run_recorded(main, "bench_solvers", __doc__)
