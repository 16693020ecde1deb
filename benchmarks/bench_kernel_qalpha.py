"""Kernel Q-alpha: time and memory at n = 2,400 (AR faces) and n = 10,000 (PIX faces) features.

    python -m benchmarks.bench_kernel_qalpha

The n x n kernel matrix is the cost. Each case runs in its own process (peak memory is its own);
the reference is linear Q-alpha (matrix-free) on the same data in the same process. The step 3
solvers compared on the AR faces (RBF, gamma 2, 5 and 20): the exact eigenvector per iteration
in float64 (the default, as printed) against the power step in float64 and in float32 (the app's
fast step), in the same process: time, iterations, objective and the largest weight difference.
"""

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from benchmarks.results import run_recorded

ROOT = Path(__file__).resolve().parents[1]


def case(name, kernel, max_iter):
    import numpy as np

    from core.data.bundled import load_dataset
    from core.selection.kernel_qalpha import kernel_memory_bytes, kernel_q_alpha
    from core.selection.qalpha import q_alpha

    data = load_dataset(name)
    k = min(data.classes.size, 10)
    start = time.perf_counter()
    result = kernel_q_alpha(data.X, k, kernel, max_iter=max_iter)
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    linear = q_alpha(data.X, k, max_iter=max_iter)
    linear_seconds = time.perf_counter() - start
    return dict(name=name, n=data.n_features, kernel=kernel, seconds=seconds, n_iter=result.n_iter,
                converged=result.converged, linear_seconds=linear_seconds, linear_iter=linear.n_iter,
                estimate_gb=kernel_memory_bytes(data.n_features) / 2**30,
                peak_gb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
                selected=int(result.n_selected), positive=float(np.mean(result.alpha >= 0)))


def main():
    print(f"{'data':>10} {'n':>6} {'kernel':>6} {'seconds':>8} {'iters':>6} {'s/iter':>7} {'peak GB':>8} "
          f"{'estimate GB':>11} {'linear s':>9} {'ratio':>6}")
    for name, kernel, max_iter in (("warpAR10P", "rbf", 500), ("warpAR10P", "poly", 500),
                                   ("pixraw10P", "rbf", 20)):
        code = (f"import json; "
                f"import benchmarks.bench_kernel_qalpha as b; print(json.dumps(b.case({name!r}, {kernel!r}, {max_iter})))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{row['name']:>10} {row['n']:>6} {row['kernel']:>6} {row['seconds']:>8.1f} {row['n_iter']:>6} "
              f"{row['seconds'] / row['n_iter']:>7.2f} {row['peak_gb']:>8.2f} {row['estimate_gb']:>11.2f} "
              f"{row['linear_seconds']:>9.2f} {row['seconds'] / row['linear_seconds']:>5.0f}x")
    print("pixraw10P is capped at 20 iterations; s/iter x iterations estimates a full run.")
    solvers()


def solvers():
    import numpy as np

    from core.data.bundled import load_dataset
    from core.selection.kernel_qalpha import kernel_q_alpha

    data = load_dataset("warpAR10P")
    print(f"\n{'gamma':>5} {'solver':<16} {'seconds':>8} {'iters':>6} {'ms/iter':>8} {'objective':>10} "
          f"{'max |alpha - exact|':>20}")
    for gamma in (2.0, 5.0, 20.0):
        exact = None
        for label, options in (("eigen, float64", dict(solver="eigen")),
                               ("power, float64", dict(solver="power")),
                               ("power, float32", dict(solver="power", dtype=np.float32))):
            start = time.perf_counter()
            result = kernel_q_alpha(data.X, 10, "rbf", gamma=gamma, max_iter=1000, **options)
            seconds = time.perf_counter() - start
            exact = result if exact is None else exact
            print(f"{gamma:>5g} {label:<16} {seconds:>8.2f} {result.n_iter:>6} {1000 * seconds / result.n_iter:>8.1f} "
                  f"{result.objective:>10.5g} {np.abs(result.alpha - exact.alpha).max():>20.1e}")


if __name__ == "__main__":
    run_recorded(main, "bench_kernel_qalpha", __doc__)
