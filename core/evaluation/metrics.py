"""How good is a selection: clustering, neighbourhood, classification and stability measures.

Definitions (each also in its function's docstring):

* :func:`clustering_accuracy` -- fraction of samples correctly grouped under the best one-to-one
  matching of found clusters to classes (Hungarian algorithm).
* :func:`pairwise_accuracy` -- Xing, Ng, Jordan & Russell (NIPS 2002), the score of [SW04]'s UCI
  table: over pairs of samples, does the clustering put them together exactly when the classes
  do? Xing et al. weigh same-class and different-class pairs equally (0.5 each) so that many
  clusters do not make every clustering look good; ``balanced=False`` gives the plain pair count.
* :func:`normalized_precision_index` -- [SW04] Sec. 6, after Globerson et al. (UAI 2003) and
  Weinshall et al. (ECCV 2002): the purity of the k nearest neighbours averaged over samples and
  over a range of k, rescaled so that random neighbours score 0 and pure neighbourhoods 1.
* :func:`test_information` -- [MWA07] Sec. 6.1: average log predictive probability of the true
  labels in bits, plus the entropy of the labels, so that 1 bit is perfect for two balanced
  classes and 0 is no better than the label frequencies.
* :func:`kuncheva_index`, :func:`jaccard_index`, :func:`selection_stability`, :func:`stability_curve` -- agreement of
  top-K sets across bootstrap resamples (Kuncheva, AIA 2007).
* :func:`kmeans_scores` -- k-means with seeded starts (:func:`.kmeans.seeded_kmeans`), each scored: the one place the library
  clusters to judge a selection (the comparison protocol, :mod:`.compare`, and the pages use it).

References
----------
.. [MWA07] B. Moghaddam, Y. Weiss and S. Avidan, "Fast pixel/part selection with sparse
   eigenvectors", ICCV 2007.
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..errors import InputError
from ..progress import ProgressCallback, report_or_stop
from ..matrix.neighbours import stable_nearest
from ..validation import random_seed, zscores
from ..matrix.kmeans import adjusted_rand, contingency_table, labelled_pair, seeded_kmeans

__all__ = ["adjusted_rand", "clustering_accuracy", "pairwise_accuracy", "nmi", "normalized_precision_index", "precision_from_distances",
           "test_information", "kuncheva_index", "jaccard_index", "selection_stability", "stability_curve",
           "StabilityResult", "accuracy_curve", "CurveResult", "selection_curves", "projection_curves",
           "kmeans_scores", "seeded_kmeans"]


def clustering_accuracy(truth, found) -> float:
    """Accuracy of a clustering under the best matching of clusters to classes (Hungarian)."""
    truth, found = labelled_pair(truth, found)
    table = contingency_table(truth, found)
    rows, cols = linear_sum_assignment(-table)
    return float(table[rows, cols].sum() / truth.size)


def pairwise_accuracy(truth, found, balanced: bool = True) -> float:
    """Xing et al.'s pairwise clustering accuracy (NIPS 2002, Sec. 4).

    For pairs ``i < j`` let ``same = [c_i == c_j]`` (classes) and ``together = [f_i == f_j]``
    (clusters). ``balanced=True`` (Xing et al.'s choice): ``0.5 P(together | same) +
    0.5 P(apart | not same)``; ``balanced=False``: the fraction of pairs with
    ``together == same``.
    """
    truth, found = labelled_pair(truth, found)
    upper = np.triu_indices(truth.size, 1)
    same = (truth[:, None] == truth[None, :])[upper]
    together = (found[:, None] == found[None, :])[upper]
    if not balanced:
        return float(np.mean(same == together))
    parts = []
    if same.any():
        parts.append(np.mean(together[same]))
    if (~same).any():
        parts.append(np.mean(~together[~same]))
    return float(np.mean(parts))


def nmi(truth, found) -> float:
    """Normalised mutual information of two labellings, ``I(U; V) / ((H(U) + H(V)) / 2)``.

    The arithmetic normalisation, as scikit-learn's ``normalized_mutual_info_score`` has it by
    default, with its two limits: two labellings that do not split the samples score 1, and a
    mutual information of 0 scores 0. Equal to scikit-learn's within 1e-12 (tested). Computed from
    the contingency table: scikit-learn's function took 1.9 ms a call on 130 samples against 0.09,
    mostly checking its input, a third of every k-means score (``benchmarks/bench_metrics.py``).
    """
    truth, found = labelled_pair(truth, found)
    table = contingency_table(truth, found)
    if table.shape == (1, 1):
        return 1.0
    joint = table / truth.size
    classes, clusters = joint.sum(axis=1), joint.sum(axis=0)
    held = joint > 0
    information = float(np.sum(joint[held] * np.log(joint[held] / np.outer(classes, clusters)[held])))
    if information <= 1e-15:  # the labellings are independent (rounding can leave -1e-17)
        return 0.0
    entropy = -(np.sum(classes * np.log(classes)) + np.sum(clusters * np.log(clusters)))
    return information / (entropy / 2)


def normalized_precision_index(X, labels, k_values=range(1, 11), samples=None) -> float:
    """The normalised precision index of [SW04] Sec. 6.

    For each sample and each ``k`` in ``k_values``, the precision is the fraction of its ``k``
    nearest neighbours (Euclidean, itself excluded) that share its label; ``P`` is the mean over
    samples and ``k``. The chance level ``P0`` is the probability that a random other sample
    shares the label, ``sum_c n_c (n_c - 1) / (n (n - 1))``. The index is
    ``(P - P0) / (1 - P0)``: 0 for random neighbours, 1 when every neighbourhood is pure.

    ``samples`` (indices, default all) restricts the mean to those samples' neighbourhoods, which
    still range over every sample; ``P0`` is then the mean of their own chance levels,
    ``(n_c - 1) / (n - 1)`` for a sample of class ``c``.
    """
    X = np.asarray(X, dtype=np.float64)
    _, labels = np.unique(np.asarray(labels).ravel(), return_inverse=True)
    n = labels.size
    if X.ndim != 2 or X.shape[0] != n:
        raise InputError(f"X must have one row per label ({n}); got shape {X.shape}.")
    k_values = np.asarray(list(k_values), dtype=int)
    if k_values.size == 0 or k_values.min() < 1 or k_values.max() >= n:
        raise InputError(f"k values must lie between 1 and n - 1 = {n - 1}.")
    rows = np.arange(n) if samples is None else np.asarray(samples).ravel()
    if rows.size == 0 or rows.dtype.kind not in "iu" or rows.min() < 0 or rows.max() >= n:
        raise InputError(f"samples must be indices of rows of X (0 to {n - 1}); got {samples!r}.")
    squared = np.einsum("ij,ij->i", X, X)
    distances = squared[rows, None] + squared[None, :] - 2 * X[rows] @ X.T
    return precision_from_distances(distances, labels, k_values, rows)


def precision_from_distances(distances, codes, k_values, rows=None) -> float:
    """:func:`normalized_precision_index` from the distances of the samples ``rows`` (default all)
    to every sample (``len(rows) x n``; changed: the own distances set to infinity) and the label
    codes ``0 .. c - 1``: what callers that hold the distances already use.

    The neighbours are :func:`core.matrix.neighbours.stable_nearest`'s: nearest first, equals in
    index order."""
    n = codes.size
    rows = np.arange(n) if rows is None else rows
    k_values = np.asarray(list(k_values), dtype=int)
    distances[np.arange(rows.size), rows] = np.inf
    neighbours = stable_nearest(distances, int(k_values.max()))
    hits = np.cumsum(codes[neighbours] == codes[rows, None], axis=1)
    precision = np.mean([hits[:, k - 1] / k for k in k_values])
    chance = float(np.mean((np.bincount(codes)[codes[rows]] - 1) / (n - 1)))
    if chance >= 1:
        raise InputError("Every sample has the same label: the precision index is undefined.")
    return float((precision - chance) / (1 - chance))


def test_information(y_true, probabilities, classes) -> float:
    """[MWA07] Sec. 6.1's "test information" in bits: ``H(y) + mean_i log2 p(y_i | x_i)``.

    ``H(y)`` is the entropy of the test labels' frequencies, so a predictor that outputs those
    frequencies scores 0 and a perfect one scores ``H(y)`` (1 bit for two balanced classes).
    Probabilities are clipped at ``1e-12`` so one confident mistake costs ~40 bits, not infinity.
    """
    y_true = np.asarray(y_true).ravel()
    probabilities = np.asarray(probabilities, dtype=np.float64)
    classes = list(classes)
    if probabilities.shape != (y_true.size, len(classes)):
        raise InputError("probabilities must be (n_samples x n_classes) in the order of classes.")
    index = np.array([classes.index(y) for y in y_true])
    log_p = np.log2(np.clip(probabilities[np.arange(y_true.size), index], 1e-12, 1.0))
    frequencies = np.bincount(index, minlength=len(classes)) / y_true.size
    entropy = -np.sum(frequencies[frequencies > 0] * np.log2(frequencies[frequencies > 0]))
    return float(entropy + log_p.mean())


test_information.__test__ = False  # a metric, not a test for pytest to collect


@dataclass(frozen=True, eq=False)
class CurveResult:
    """Classification error and test information against the number of selected features."""

    n_features: np.ndarray
    error: np.ndarray
    information: np.ndarray


def accuracy_curve(X_train, y_train, X_test, y_test, ranking, sizes, classifier=None) -> CurveResult:
    """Train ``classifier`` on the first ``k`` ranked features for each ``k`` in ``sizes``.

    ``classifier``: a scikit-learn classifier with ``predict_proba`` (default: logistic
    regression on standardised features). Returns test error and test information per size.
    """
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = classifier if classifier is not None else make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    ranking = np.asarray(ranking, dtype=np.intp)
    sizes = np.asarray(list(sizes), dtype=int)
    errors, information = [], []
    for k in sizes:
        chosen = ranking[:k]
        fitted = clone(model).fit(np.asarray(X_train)[:, chosen], y_train)
        probabilities = fitted.predict_proba(np.asarray(X_test)[:, chosen])
        predicted = fitted.classes_[np.argmax(probabilities, axis=1)]
        errors.append(float(np.mean(predicted != np.asarray(y_test))))
        information.append(test_information(y_test, probabilities, fitted.classes_))
    return CurveResult(n_features=sizes, error=np.asarray(errors), information=np.asarray(information))


def kuncheva_index(first, second, n_features: int) -> float:
    """Kuncheva's consistency index of two subsets of equal size ``k`` out of ``n_features``:
    ``(r n - k^2) / (k (n - k))`` with ``r`` the overlap; 1 for identical sets, about 0 by chance."""
    first, second = set(np.asarray(first).ravel().tolist()), set(np.asarray(second).ravel().tolist())
    k = len(first)
    if len(second) != k or not 0 < k < n_features:
        raise InputError("Kuncheva's index needs two subsets of the same size k, 0 < k < n_features.")
    r = len(first & second)
    return float((r * n_features - k * k) / (k * (n_features - k)))


def jaccard_index(first, second) -> float:
    """``|A & B| / |A | B|`` of two feature subsets."""
    first, second = set(np.asarray(first).ravel().tolist()), set(np.asarray(second).ravel().tolist())
    union = first | second
    return float(len(first & second) / len(union)) if union else 1.0


@dataclass(frozen=True, eq=False)
class StabilityResult:
    """Agreement of the top-K sets over bootstrap resamples."""

    kuncheva: float
    jaccard: float
    subsets: np.ndarray  # (n_bootstrap, top_k)
    frequency: np.ndarray  # how often each feature was in the top K


def selection_stability(X, y, rank_features: Callable, top_k: int, n_bootstrap: int = 20,
                        random_state=None) -> StabilityResult:
    """Stability of a selection across bootstrap resamples of the samples.

    ``rank_features(X, y)`` returns feature indices best first (``y`` may be ``None``). The
    mean pairwise Kuncheva and Jaccard indices of the top-``top_k`` sets are reported.
    """
    X = np.asarray(X, dtype=np.float64)
    if not 0 < top_k < X.shape[1]:
        raise InputError(f"top_k must lie between 1 and {X.shape[1] - 1}; got {top_k}.")
    rankings = _bootstrap_rankings(X, y, rank_features, n_bootstrap, random_state)
    subsets = [np.sort(ranking[:top_k]) for ranking in rankings]
    frequency = np.bincount(np.concatenate(subsets), minlength=X.shape[1]) / n_bootstrap
    return StabilityResult(kuncheva=_mean_pairwise(kuncheva_index, subsets, X.shape[1]),
                           jaccard=_mean_pairwise(jaccard_index, subsets),
                           subsets=np.asarray(subsets), frequency=frequency)


def _bootstrap_rankings(X, y, rank_features, n_bootstrap, random_state, progress=None):
    """``rank_features`` on ``n_bootstrap`` resamples (with replacement) of the samples."""
    if n_bootstrap < 2:
        raise InputError("Stability needs at least two bootstrap resamples.")
    rng = np.random.default_rng(random_state)
    rankings = []
    for resample in range(n_bootstrap):
        rows = rng.integers(0, X.shape[0], X.shape[0])
        rankings.append(np.asarray(rank_features(X[rows], None if y is None else np.asarray(y)[rows])))
        report_or_stop(progress, resample + 1, n_bootstrap)
    return rankings


def _mean_pairwise(index, subsets, *args):
    return float(np.mean([index(a, b, *args) for i, a in enumerate(subsets) for b in subsets[i + 1:]]))


def stability_curve(X, y, rank_features: Callable, sizes, n_bootstrap: int = 10, random_state=0,
                    progress: ProgressCallback | None = None) -> dict:
    """Stability of the top-``k`` sets against ``k``: one ranking per bootstrap resample, then the
    mean pairwise :func:`kuncheva_index` and :func:`jaccard_index` of the top-``k`` sets for each
    ``k`` of ``sizes`` (Kuncheva, 2007; the number of features must stay below ``n_features``).

    Returns ``{"size": [...], "kuncheva": [...], "jaccard": [...]}``; ``progress(report)``
    (:mod:`core.progress`) is called after each resample; returning False stops the run
    (:class:`core.errors.Stopped`).
    """
    X = np.asarray(X, dtype=np.float64)
    sizes = [int(k) for k in sizes]
    if not sizes or not all(0 < k < X.shape[1] for k in sizes):
        raise InputError(f"Every size must lie between 1 and {X.shape[1] - 1}; got {sizes}.")
    rankings = _bootstrap_rankings(X, y, rank_features, n_bootstrap, random_state, progress)
    curve = {"size": sizes, "kuncheva": [], "jaccard": []}
    for k in sizes:
        subsets = [ranking[:k] for ranking in rankings]
        curve["kuncheva"].append(_mean_pairwise(kuncheva_index, subsets, X.shape[1]))
        curve["jaccard"].append(_mean_pairwise(jaccard_index, subsets))
    return curve


def selection_curves(X, labels, rankings: dict, sizes, n_runs: int = 5, random_state=0) -> dict:
    """How well the top-``k`` features of each ranking group the samples, for each ``k``.

    For every ranking and size ``k``: k-means (as many clusters as classes, ``n_runs`` starts
    averaged) on the standardised top-``k`` features, scored by :func:`clustering_accuracy` and
    :func:`nmi`, and the :func:`normalized_precision_index` of those features. Returns
    ``{method: {"size": [...], "accuracy": [...], "nmi": [...], "precision": [...]}}``.
    """
    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels).ravel()
    if np.unique(labels).size < 2:
        raise InputError("Comparing selections needs labels with at least two classes.")
    Z = zscores(X)
    out = {}
    for method, ranking in rankings.items():
        curves = {"size": [], "accuracy": [], "nmi": [], "precision": []}
        for size in sizes:
            curves["size"].append(int(size))
            _append_grouping_scores(curves, Z[:, np.asarray(ranking)[: int(size)]], labels, n_runs, random_state)
        out[method] = curves
    return out


def kmeans_scores(Z, labels, n_runs: int = 5, random_state=0) -> tuple[np.ndarray, np.ndarray]:
    """k-means on ``Z`` (as many clusters as classes, :func:`seeded_kmeans`): the
    :func:`clustering_accuracy` and :func:`nmi` of each run."""
    found = seeded_kmeans(Z, np.unique(labels).size, n_runs, random_seed(random_state))
    return (np.array([clustering_accuracy(labels, f) for f in found]), np.array([nmi(labels, f) for f in found]))


def _append_grouping_scores(curves, Z, labels, n_runs, random_state):
    """k-means accuracy and NMI (``n_runs`` starts averaged) and the precision index of ``Z``."""
    accuracy, information = kmeans_scores(Z, labels, n_runs, random_state)
    curves["accuracy"].append(float(np.mean(accuracy)))
    curves["nmi"].append(float(np.mean(information)))
    curves["precision"].append(normalized_precision_index(Z, labels, range(1, min(10, Z.shape[0] - 1) + 1)))


def projection_curves(X, labels, projections: dict, dims, side=None, n_runs: int = 5, random_state=0,
                      progress=None) -> dict:
    """How well ``d`` extracted features group the samples, for each ``d``: the feature-extraction
    counterpart of :func:`selection_curves`, scored the same way on the same samples.

    ``projections`` maps a name to a method of :data:`core.selection.projections.PROJECTIONS`. Each is fitted
    on the standardised data without labels (and on ``side``, standardised with the data's
    statistics, when it needs side data), except the models of co-occurrences (``models_counts``:
    SDR-SI), which take the non-negative data as given. ``d`` beyond what a method can give (samples - 1 or
    features) is left out, and so is a ``d`` at which the method refuses the data (Isomap's
    geodesic kernel, for one, has only so many positive eigenvalues): ``"skipped"`` lists those
    as ``(d, message)``. ``progress(report)`` is called after every fit (returning False
    stops the run: :class:`core.errors.Stopped`). Returns
    ``{name: {"size": [d, ...], "accuracy": [...], "nmi": [...], "precision": [...],
    "skipped": [...]}}``.
    """
    from ..selection.projections import PROJECTIONS, make_projection

    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels).ravel()
    if np.unique(labels).size < 2:
        raise InputError("Comparing extractions needs labels with at least two classes.")
    unknown = [m for m in projections.values() if m not in PROJECTIONS]
    if unknown:
        raise InputError(f"Unknown projection {unknown[0]!r}; choose from {', '.join(PROJECTIONS)}.")
    Z = zscores(X)
    side_z = None if side is None else zscores(np.asarray(side, dtype=np.float64), reference=X)
    usable = [int(d) for d in dims if 1 <= int(d) <= min(X.shape[0] - 1, X.shape[1])]
    total, done, out = len(projections) * len(usable), 0, {}
    for name, method in projections.items():
        needs_side, as_given = PROJECTIONS[method].needs_side, PROJECTIONS[method].models_counts
        if needs_side and side is None:
            raise InputError(f"{name} needs side data: load side data on the Data page first.")
        curves = {"size": [], "accuracy": [], "nmi": [], "precision": [], "skipped": []}
        for d in usable:
            done += 1
            try:
                model = make_projection(method, d).fit(X if as_given else Z,
                                                       side=(side if as_given else side_z) if needs_side else None)
            except InputError as error:
                curves["skipped"].append((d, str(error)))
            else:
                curves["size"].append(d)
                _append_grouping_scores(curves, model.transform(X if as_given else Z), labels, n_runs, random_state)
            report_or_stop(progress, done, total)
        if usable and not curves["size"]:
            raise InputError(f"{name} could not be fitted at any dimension: {curves['skipped'][0][1]}")
        out[name] = curves
    return out
