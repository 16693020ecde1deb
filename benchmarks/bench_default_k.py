"""The default K of the pages on every bundled set: the rule that chose it, its share of the
features, and how k-means clusters on it against half the features and all of them.

    python benchmarks/bench_default_k.py [--runs 5]

Q-alpha runs as the Q-alpha page runs it before anyone touches a setting (k = the number of
classes, at most 50; the library's other defaults). The default K (:func:`core.default_k`) is the
sparsity gap's count where the gap is clear, else the fewest features holding half of the squared
weight. k-means on the standardised top features, as many clusters as classes, ``--runs`` starts
averaged, scored by Hungarian accuracy and NMI against the labels (the page's measure,
:func:`core.evaluation.metrics.selection_curves`). Issue 34 asks: on the faces at most 20% of the
pixels, and on every set the default K no worse than half the features.
"""

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main():
    from core import QAlphaParameters, default_k, list_datasets, load_dataset
    from core.evaluation.metrics import selection_curves

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="k-means starts averaged per size")
    options = parser.parse_args()
    print(f"{'data set':14s} {'features':>8s} {'rule':>26s} {'K':>6s} {'K/n':>5s}   accuracy at K / n/2 / n"
          f"      NMI at K / n/2 / n    K no worse than n/2?  seconds")
    worse = []
    for info in list_datasets():
        data = load_dataset(info.name)
        start = time.perf_counter()
        k = int(min(max(data.classes.size, 2), 50, data.n_samples - 1))
        result = QAlphaParameters(k=k).run(data.X)
        chosen = default_k(result.alpha, result.gap)
        half = max(1, data.n_features // 2)
        sizes = [chosen.k, half, data.n_features]
        scores = selection_curves(data.X, data.labels, {"q": result.ranking}, sizes, n_runs=options.runs,
                                  random_state=0)["q"]
        accuracy, nmi = scores["accuracy"], scores["nmi"]
        holds = accuracy[0] >= accuracy[1] - 1e-12
        if not holds:
            worse.append(info.name)
        print(f"{info.name:14s} {data.n_features:8d} {chosen.rule:>26s} {chosen.k:6d} {chosen.k / data.n_features:5.0%}"
              f"   {accuracy[0]:.3f} / {accuracy[1]:.3f} / {accuracy[2]:.3f}    {nmi[0]:.3f} / {nmi[1]:.3f} / {nmi[2]:.3f}"
              f"    {'yes' if holds else 'NO':>21s}   {time.perf_counter() - start:6.1f}", flush=True)
    print(f"\nsets where the default K clusters worse than half the features (accuracy): {worse or 'none'}")


if __name__ == "__main__":
    main()
