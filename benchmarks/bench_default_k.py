"""The default K of the pages on every bundled set: the rule that chose it, its share of the
features, and how k-means clusters on it against half the features and all of them.

    python -m benchmarks.bench_default_k [--runs 20]

Q-alpha runs as the Q-alpha page runs it before anyone touches a setting (k = the number of
classes, at most 50; the library's other defaults). The default K (:func:`core.default_k`) is the
sparsity gap's count where the gap is clear, else the fewest features holding half of the squared
weight. k-means on the standardised top features, as many clusters as classes, ``--runs`` starts
averaged, scored by Hungarian accuracy and NMI against the labels (the page's measure,
:func:`core.evaluation.metrics.selection_curves`). Issue 34 asks: on the faces at most 20% of the
pixels, and on every set the default K no worse than half the features.

k-means' own spread decides whether a difference is one: the accuracy at K minus the accuracy at
n/2 is taken start by start (the same seeds at both sizes, a paired difference), and its mean is
given with its standard error over the starts. "worse" means below by more than two standard
errors; "within spread" means the difference is within two standard errors of zero; the strict
reading (any mean difference below zero counts) is given beside it.
"""

import argparse
import time
from pathlib import Path
from benchmarks.results import run_recorded

ROOT = Path(__file__).resolve().parents[1]


def main():
    from core import QAlphaParameters, default_k, list_datasets, load_dataset
    import numpy as np

    from core.evaluation.metrics import kmeans_scores, zscores

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="k-means starts per size (paired across sizes)")
    options = parser.parse_args()
    print(f"{'data set':14s} {'features':>8s} {'rule':>26s} {'K':>6s} {'K/n':>5s}   accuracy at K / n/2 / n"
          f"      NMI at K / n/2 / n    K - n/2 (paired, ± s.e.)  verdict        seconds")
    strict, worse = [], []
    for info in list_datasets():
        data = load_dataset(info.name)
        start = time.perf_counter()
        k = int(min(max(data.classes.size, 2), 50, data.n_samples - 1))
        result = QAlphaParameters(k=k).run(data.X)
        chosen = default_k(result.alpha, result.gap)
        half = max(1, data.n_features // 2)
        # the same starts at every size (paired runs), each size clustered once
        Z = zscores(data.X)
        runs = [kmeans_scores(Z[:, result.ranking[:size]], data.labels, options.runs)
                for size in (chosen.k, half, data.n_features)]
        accuracy, nmi = [float(np.mean(run[0])) for run in runs], [float(np.mean(run[1])) for run in runs]
        difference = runs[0][0] - runs[1][0]
        error = difference.std(ddof=1) / np.sqrt(options.runs)
        verdict = ("no worse" if difference.mean() >= 0 else
                   "within spread" if difference.mean() >= -2 * error else "WORSE")
        if difference.mean() < 0:
            strict.append(info.name)
        if verdict == "WORSE":
            worse.append(info.name)
        print(f"{info.name:14s} {data.n_features:8d} {chosen.rule:>26s} {chosen.k:6d} {chosen.k / data.n_features:5.0%}"
              f"   {accuracy[0]:.3f} / {accuracy[1]:.3f} / {accuracy[2]:.3f}    {nmi[0]:.3f} / {nmi[1]:.3f} / {nmi[2]:.3f}"
              f"    {difference.mean():+.3f} ± {error:.3f}        {verdict:13s}  {time.perf_counter() - start:6.1f}",
              flush=True)
    print(f"\nsets where the default K's mean accuracy is below half the features' (strict): {strict or 'none'}")
    print(f"sets where it is below by more than two standard errors: {worse or 'none'}")


if __name__ == "__main__":
    run_recorded(main, "bench_default_k", __doc__)
