"""Selection bias: scores of feature selections judged in-sample against held-out, in one run.

    python -m benchmarks.bench_selection_bias [--k 20]

Each method ranks the features and the top K are judged by stratified 5-fold cross-validation
(:func:`core.evaluation.compare.compare_methods`, the Compare page's protocol): a 1-nearest-neighbour classifier fitted on the
training folds and k-means on the held-out fold. "Held-out": the ranking is made on the training
folds only (what the Compare page does). "In-sample": the ranking is made once on every sample,
labels included, and judged the same way (what Compare did before; Ambroise & McLachlan, PNAS
2002). The gap is what the labels the method was chosen with added to its score. Data: the bundled
AR faces (10 people, 2,400 pixels), colon (62 tissues x 2,000 genes, tumour / normal) and the
UCI wine table (178 x 13); and a control: noise (120 x 2,000) with shuffled labels, where every
held-out score must be at chance.
"""

import argparse
import time
from pathlib import Path
from benchmarks.results import run_recorded

ROOT = Path(__file__).resolve().parents[1]

METHODS = ["Q-alpha", "laplacian", "variance", "fisher", "relieff", "mrmr", "Q-alpha (supervised)"]


def main():
    import numpy as np

    from core.data.bundled import load_dataset
    from core.evaluation.compare import compare_methods

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=20, help="top features judged (at most the features there are)")
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    noise = (rng.standard_normal((120, 2000)), rng.permutation(np.repeat([0, 1], 60)))
    sets = {name: (lambda name=name: (load_dataset(name).X, load_dataset(name).labels))
            for name in ("warpAR10P", "colon", "wine")}
    sets["noise, shuffled labels"] = lambda: noise

    print(f"{'data':<24} {'method':<22} {'kind':<12} {'K':>4} {'1-NN held-out':>15} {'in-sample':>10} {'gap':>6} "
          f"{'k-means held-out':>17} {'in-sample':>10} {'seconds':>8}")
    for name, load in sets.items():
        X, y = load()
        k = min(options.k, X.shape[1] // 2)
        for method in METHODS:
            start = time.perf_counter()
            table = compare_methods(X, y, {method: method}, sizes=[k], n_splits=5,
                                    protocols=("held-out", "in-sample"))
            means = table.groupby(["protocol", "measure"]).value.mean()
            spreads = table.groupby(["protocol", "measure"]).value.std(ddof=0)
            kind = "supervised" if table.supervised.iloc[0] else "unsupervised"
            held, inside = means["held-out"], means["in-sample"]
            print(f"{name:<24} {method:<22} {kind:<12} {k:>4} "
                  f"{held['knn']:>8.3f} ± {spreads['held-out', 'knn']:.3f} {inside['knn']:>10.3f} "
                  f"{inside['knn'] - held['knn']:>6.3f} {held['accuracy']:>10.3f} ± {spreads['held-out', 'accuracy']:.3f} "
                  f"{inside['accuracy']:>10.3f} {time.perf_counter() - start:>8.1f}", flush=True)


if __name__ == "__main__":
    run_recorded(main, "bench_selection_bias", __doc__)
