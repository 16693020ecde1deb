"""The pages' time estimates against the runs they estimate, on the bundled data sets.

    python -m benchmarks.bench_estimates

What a page says before a long run (``pages/ui/estimates.py``) beside what the run then takes,
with the BLAS threads the app uses (one core short of the machine): sparse LDA's whole path on
the first two classes of each bundled set of 1,000 to 7,200 features, and kernel Q-alpha's fast
step (RBF, gamma 5, then gamma 10 estimated from the gamma-5 run, as the page does) on the
bundled image sets of up to 2,420 pixels. Reported: the ratio actual / estimate (the goal: between
0.5 and 2).

Runs without a cost model say the rest at the rate of their steps so far
(``estimates.RestOfRun``): choosing k and λ (7 settings) and the λ path (13 values of λ), with
the last class as side data, as the Q-alpha page runs them. For each, every progress report from
the second step on is checked: the rest it predicted against the rest the run then took (the
worst ratio over the reports, and at the first report that says anything), wherever at least a
second of the run was left; runs of a second or two have no such report.
"""

import os
import time
from pathlib import Path
from benchmarks.results import run_recorded

ROOT = Path(__file__).resolve().parents[1]

SLDA_SETS = ["Yale", "ORL", "COIL20", "colon", "warpAR10P", "warpPIE10P", "lymphoma", "GLIOMA", "TOX-171",
             "Prostate-GE", "leukemia", "ALLAML"]
KERNEL_SETS = ["Yale", "ORL", "warpAR10P", "warpPIE10P"]
#: bench_app.py's uploaded gene table (100 x 20,000), whose λ path takes long enough to need a rest
GENES = "genes"
RATE_SETS = ["warpAR10P", "ORL", "Yale", "colon", "lung_small", "GLIOMA", GENES]
#: A rest shorter than this is not judged (the page says at least "about 1 s left")
SHORTEST_REST = 1.0


def rate_checks(name):
    """Choosing k and λ and the λ path on ``name`` (the last class as side data, power steps as the
    page runs them): per run, the rest ``RestOfRun`` predicted at each report against the rest
    the run took, as ``(run, first ratio, worst ratio, seconds)``; a ratio is actual / predicted."""
    from core.data.bundled import load_dataset
    from core.selection.automatic import choose_settings
    from core.selection.lambda_path import q_alpha_path
    from pages.ui.estimates import RestOfRun
    from pages.ui.settings import QALPHA_PATH_LAMBDAS

    if name == GENES:
        from benchmarks.bench_app import genes_parquet
        from core import load_table

        data = load_table("genes.parquet", genes_parquet(), label_column="cell_type")
    else:
        data = load_dataset(name)
    main, side = data.split_by_class([data.classes[-1]])
    clusters = main.classes.size if main.classes.size >= 2 else None  # as the page: else estimated
    out = []
    for run, call in (
            ("choosing k and λ", lambda progress: choose_settings(main.X, side=side.X, n_clusters=clusters,
                                                                  solver="power", progress=progress)),
            ("λ path", lambda progress: q_alpha_path(main.X, clusters or 2, side=side.X, lams=QALPHA_PATH_LAMBDAS,
                                                     solver="power", progress=progress))):
        reports = []
        start = time.perf_counter()

        def progress(report):
            reports.append((time.perf_counter() - start, report.done, report.total))

        call(progress)
        seconds = time.perf_counter() - start
        ratios, rest = [], RestOfRun()
        for elapsed, done, total in reports:
            predicted = rest.seconds(elapsed, done, total)
            if predicted is not None and predicted > 0 and seconds - elapsed >= SHORTEST_REST:
                ratios.append((seconds - elapsed) / predicted)
        worst = max(ratios, key=lambda r: max(r, 1 / r)) if ratios else float("nan")
        out.append((run, ratios[0] if ratios else float("nan"), worst, seconds))
    return out


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
    rates = []
    for name in RATE_SETS:
        for run, first, worst, seconds in rate_checks(name):
            rates.append((run, name, first, worst, seconds))
            print(rates[-1], flush=True)
    print(f"\n{'run':<34} {'data':<12} {'features':>8} {'estimate s':>10} {'actual s':>9} {'actual/est':>10}")
    for what, name, n, estimate, seconds in rows:
        ratio = seconds / estimate
        flag = "" if 0.5 <= ratio <= 2.0 else "  outside 2x"
        print(f"{what:<34} {name:<12} {n:>8,} {estimate:>10.2f} {seconds:>9.2f} {ratio:>10.2f}{flag}")
    print(f"\nthe rest at the rate so far: actual rest / predicted rest\n"
          f"{'run':<20} {'data':<12} {'run s':>7} {'first report':>13} {'worst report':>13}")
    for run, name, first, worst, seconds in rates:
        flag = "" if not 0 < worst < float("inf") or 0.5 <= worst <= 2.0 else "  outside 2x"
        print(f"{run:<20} {name:<12} {seconds:>7.2f} {first:>13.2f} {worst:>13.2f}{flag}")


if __name__ == "__main__":
    run_recorded(main, "bench_estimates", __doc__)
