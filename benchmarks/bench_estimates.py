"""The pages' time estimates against the runs they estimate, on the bundled data sets.

    python benchmarks/bench_estimates.py

What a page says before a long run (``pages/ui/estimates.py``) beside what the run then takes,
with the BLAS threads the app uses (one core short of the machine): sparse LDA's whole path on
the first two classes of each bundled set of 1,000 to 7,200 features, and kernel Q-alpha's fast
step (RBF, gamma 5, then gamma 10 estimated from the gamma-5 run, as the page does) on the
bundled image sets of up to 2,420 pixels. Reported: the ratio actual / estimate (the goal: between
0.5 and 2).
"""

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SLDA_SETS = ["Yale", "ORL", "COIL20", "colon", "warpAR10P", "warpPIE10P", "lymphoma", "GLIOMA", "TOX-171",
             "Prostate-GE", "leukemia", "ALLAML"]
KERNEL_SETS = ["Yale", "ORL", "warpAR10P", "warpPIE10P"]


def main():
    import numpy as np
    import scipy.linalg  # noqa: F401 - SciPy's BLAS loaded, so that the limit below reaches it
    from threadpoolctl import threadpool_limits

    from core.data.bundled import load_dataset
    from core.selection.kernel_qalpha import kernel_q_alpha
    from core.selection.slda import greedy_slda
    from pages.ui import estimates

    threadpool_limits(max(1, (os.cpu_count() or 1) - 1), user_api="blas")  # as the app runs
    rows = []
    for name in SLDA_SETS:
        data = load_dataset(name)
        first, second = data.classes[:2]
        keep = np.isin(data.labels, [first, second])
        estimate = estimates.slda_seconds(data.n_features, int(keep.sum()))
        start = time.perf_counter()
        greedy_slda(data.X[keep], data.labels[keep], classes=(first, second))
        rows.append(("sparse LDA", name, data.n_features, estimate, time.perf_counter() - start))
        print(rows[-1], flush=True)
    for name in KERNEL_SETS:
        data = load_dataset(name)
        k = int(min(max(data.classes.size, 2), 50, data.n_samples - 1))
        last = None
        for gamma in (5.0, 10.0):
            estimate, _, _ = estimates.kernel_seconds(data.n_features, "power", last)
            start = time.perf_counter()
            result = kernel_q_alpha(data.X, k, "rbf", gamma=gamma, solver="power", dtype="float32", max_iter=1000)
            seconds = time.perf_counter() - start
            last = (seconds / result.n_iter, result.n_iter)
            what = "kernel, first run" if gamma == 5.0 else "kernel, from the last"
            rows.append((f"{what} (gamma {gamma:g})", name, data.n_features, estimate, seconds))
            print(rows[-1], flush=True)
    print(f"\n{'run':<34} {'data':<12} {'features':>8} {'estimate s':>10} {'actual s':>9} {'actual/est':>10}")
    for what, name, n, estimate, seconds in rows:
        ratio = seconds / estimate
        flag = "" if 0.5 <= ratio <= 2.0 else "  outside 2x"
        print(f"{what:<34} {name:<12} {n:>8,} {estimate:>10.2f} {seconds:>9.2f} {ratio:>10.2f}{flag}")


if __name__ == "__main__":
    main()
