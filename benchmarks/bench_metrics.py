"""The clustering scores every evaluation computes: the library's NMI and k-means against scikit-learn's.

    python -m benchmarks.bench_metrics [--repeats 7]

``core.evaluation.metrics.nmi`` computes the normalised mutual information from the contingency
table; it used to call scikit-learn's ``normalized_mutual_info_score``, which checks its input at
every call. Both are timed in the same run, and so are the two places where the score is
computed many times:
- ``kmeans_scores``: five k-means runs on one selection, each scored. The Q-alpha page computes it
  at every K step, and the UCI protocol thousands of times.
- ``held_out_curves``: the Compare page's run for one method, on the AR faces (5 folds, the page's
  11 sizes, 3 k-means runs each).

Reported: the best of ``--repeats`` runs in milliseconds, with scikit-learn's in place of the
library's NMI (patched in) as the reference, and the largest difference between the two NMIs over
2,000 random pairs of labellings.

``core.matrix.kmeans.seeded_kmeans`` runs k-means's seeded starts side by side in NumPy; it
used to call scikit-learn's ``KMeans(n_init=1)`` once per start, which checks its input and seeds
through its validated helpers at every call. The second table times five starts of each on the
faces' top 20, 100, 420 (the Q-alpha page's default K) and all 2,400 pixels, standardised, and
counts the starts whose clusterings differ (the library's must be scikit-learn's: 0).
"""

import argparse
from pathlib import Path
from unittest import mock

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

from benchmarks.timing import best_of  # noqa: E402
from benchmarks.results import run_recorded  # noqa: E402


def sklearn_nmi(truth, found) -> float:
    """The NMI as the library computed it before: scikit-learn's function."""
    from sklearn.metrics import normalized_mutual_info_score

    return float(normalized_mutual_info_score(truth, found))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()

    from core import load_dataset
    from core.evaluation import compare, metrics

    faces = load_dataset("warpAR10P")
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(2000):
        size = int(rng.integers(2, 200))
        truth = rng.integers(0, int(rng.integers(1, 12)), size)
        found = truth.copy() if rng.random() < 0.2 else rng.integers(0, int(rng.integers(1, 12)), size)
        worst = max(worst, abs(metrics.nmi(truth, found) - sklearn_nmi(truth, found)))

    from sklearn.cluster import KMeans

    selection = metrics.zscores(faces.X)[:, :100]
    clusters = KMeans(10, n_init=1, random_state=0).fit_predict(selection)
    variance_ranking = lambda X, y: np.argsort(-X.var(axis=0), kind="stable")  # noqa: E731
    sizes = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, faces.n_features]
    cases = {
        "one NMI (130 samples, 10 classes)": lambda: metrics.nmi(faces.labels, clusters),
        "kmeans_scores (5 runs, top 100 pixels)": lambda: metrics.kmeans_scores(selection, faces.labels, 5),
        "held_out_curves (Compare, one method)": lambda: compare.held_out_curves(
            faces.X, faces.labels, variance_ranking, sizes, n_splits=5, random_state=0),
    }
    print(f"AR faces ({faces.n_samples} x {faces.n_features}); best of {options.repeats}; "
          f"largest |library - scikit-learn| NMI over 2,000 random labellings: {worst:.1e}\n")
    print(f"{'computation':<42} {'library ms':>11} {'scikit-learn NMI ms':>20} {'ratio':>7}")
    for name, run in cases.items():
        repeats = options.repeats if "held_out" not in name else max(2, options.repeats // 3)
        library = best_of(run, repeats)
        with mock.patch.object(metrics, "nmi", sklearn_nmi):
            reference = best_of(run, repeats)
        print(f"{name:<42} {library * 1000:>11.2f} {reference * 1000:>20.2f} {reference / library:>6.1f}x")

    from core.matrix.kmeans import seeded_kmeans

    def scikit_learn_starts(Z):
        return [KMeans(10, n_init=1, random_state=run).fit_predict(Z) for run in range(5)]

    print(f"\n{'k-means, 5 seeded starts, 10 clusters':<42} {'library ms':>11} {'scikit-learn ms':>20} {'ratio':>7} "
          f"{'differing':>10}")
    for size in (20, 100, 420, faces.n_features):
        top = metrics.zscores(faces.X[:, np.argsort(-faces.X.var(axis=0), kind="stable")[:size]])
        differing = sum(not np.array_equal(ours, theirs)
                        for ours, theirs in zip(seeded_kmeans(top, 10), scikit_learn_starts(top)))
        library, reference = best_of(lambda: seeded_kmeans(top, 10), options.repeats), best_of(
            lambda: scikit_learn_starts(top), options.repeats)
        print(f"{f'top {size:,} pixels (by variance)':<42} {library * 1000:>11.2f} {reference * 1000:>20.2f} "
              f"{reference / library:>6.1f}x {differing:>10}")


if __name__ == "__main__":
    run_recorded(main, "bench_metrics", __doc__)
