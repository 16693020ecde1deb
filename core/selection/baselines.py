"""The competitors of Q-alpha and sparse LDA, behind two common interfaces.

* Feature scores (a score per feature, higher = more relevant, and the ranking it implies):
  :func:`score_features(method, X, y, **options) <score_features>` with ``method`` in
  :data:`SCORERS` -- filters, wrappers and embedded selectors.
* Feature combinations (projections fitted on training data and applied to new data), as [SW04]
  Sec. 6 compares against: :func:`make_projection(method, n_components, **options)
  <make_projection>` with ``method`` in :data:`PROJECTIONS`; each object has
  ``fit(X, side=None)`` and ``transform(X)`` and learns only from what ``fit`` is given.

Every method carries a :class:`BaselineInfo`: whether it needs labels, what it costs and where
it comes from. scikit-learn does the work where it already does it well.

References
----------
.. [MWA07] B. Moghaddam, Y. Weiss and S. Avidan, "Fast pixel/part selection with sparse
   eigenvectors", ICCV 2007.
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import linalg, special

from ..data.transforms import dispersion_ranking
from ..errors import InputError
from ..matrix import data_matrix, dense_matrix
from ..progress import warn_not_converged
from ..validation import (as_labels, check_positive_int, check_real,
                         require_finite, zscores)

__all__ = ["BaselineInfo", "FeatureScores", "IterativeScores", "SCORERS", "CLUSTERING_SCORERS", "PROJECTIONS",
           "ONE_PASS_SCORERS", "score_features", "rank_features", "make_projection", "PCAProjection", "CPCA", "OPCA", "KernelPCAProjection",
           "LPP", "LLEProjection", "IsomapProjection", "SDRSI", "knn_graph", "rbf_similarity", "discrete_feature_mask", "discrete_mutual_information", "discretise", "udfs", "ndfs"]


@dataclass(frozen=True)
class BaselineInfo:
    name: str
    family: str  # "filter", "wrapper", "embedded", "combination"
    supervised: bool
    cost: str
    citation: str
    #: samples each class needs: 2 for scorers that estimate something within a class (nearest
    #: neighbours, two-sample tests, hits and misses, cross-validated fits)
    min_per_class: int = 1
    #: whether the scorer models counts or intensities and so needs non-negative values (the
    #: dispersion does), as a projection's ``models_counts`` says the same of SDR-SI
    models_counts: bool = False


@dataclass(frozen=True, eq=False)
class FeatureScores:
    """Scores per feature (higher = more relevant), the ranking (best first), and the run time."""

    method: str
    scores: np.ndarray
    ranking: np.ndarray
    seconds: float
    info: BaselineInfo
    #: 1, or the power of two the data were divided by because their squares would overflow
    #: float64 (values near 1e200): rankings are unchanged, unit-dependent scores are of X / scale
    scale: float = 1.0


@dataclass(frozen=True, eq=False)
class IterativeScores:
    """Scores of an iterative selector with its convergence: the objective after each iteration."""

    scores: np.ndarray
    objective_history: np.ndarray
    converged: bool

    @property
    def n_iter(self) -> int:
        return int(self.objective_history.size)


def _scores_of(result, name):
    if not result.converged:
        warn_not_converged(name, result.n_iter, stacklevel=4)
    return result.scores


# ---------------------------------------------------------------------------- helpers
def _one_vs_rest(y):
    classes = np.unique(y)
    if classes.size < 2:
        raise InputError("These scores need labels with at least two classes.")
    return [(y == c) for c in (classes[1:] if classes.size == 2 else classes)]


def _safe_divide(a, b):
    return np.divide(a, b, out=np.zeros_like(a, dtype=np.float64), where=b > 0)


def _ranked_scores(order, n_features):
    """Scores of a greedy selection: the ``order`` chosen first scores highest; the features it
    did not reach tie below every chosen one (finite, as every score here)."""
    scores = np.full(n_features, -float(len(order)))
    scores[np.asarray(order, dtype=np.int64)] = -np.arange(len(order), dtype=np.float64)
    return scores


def _check_iterative(X, n_clusters, n_neighbors, max_iter, tol):
    """The checks shared by :func:`udfs` and :func:`ndfs`, which users may call directly."""
    X = dense_matrix(X)
    if X.shape[0] < 3:
        raise InputError("These selectors need at least 3 samples.")
    return (X, check_positive_int(n_clusters, "n_clusters"), check_positive_int(n_neighbors, "n_neighbors"),
            check_positive_int(max_iter, "max_iter"), check_real(tol, "tol", low=0.0, low_open=True))


def _unit_scale(X):
    """``X`` centred and divided by its root mean square: the selectors whose regularisation
    weights are absolute (UDFS, NDFS) then give the same ranking in any unit of the data."""
    centred = X - X.mean(axis=0)
    rms = np.sqrt(np.mean(centred ** 2))
    return centred / rms if rms > 0 else centred


# ---------------------------------------------------------------------------- filters
def _moments_by_class(X, y):
    """Overall and per-class :class:`~core.matrix.ColumnMoments` of ``X`` (any kind
    :func:`core.matrix.data_matrix` takes) in one pass: everything the one-pass filters need."""
    data = data_matrix(X)
    if y is None:
        overall = data.moments()
        return overall, [overall]
    _, codes = np.unique(y, return_inverse=True)
    groups = data.class_moments(codes, int(codes.max()) + 1)
    overall = groups[0]
    for group in groups[1:]:
        overall = overall.combine(group)
    return overall, groups


def variance_score(X, y=None):
    return _variance_of(*_moments_by_class(X, None))


def _variance_of(overall, groups):
    return overall.variance


def dispersion_score(X, y=None):
    """Normalised dispersion, scanpy's highly variable genes (flavor "seurat", Satija et al. 2015),
    as scores in the order of :func:`core.data.transforms.dispersion_ranking`."""
    if (X < 0).any():
        raise InputError("The dispersion (scanpy's highly variable genes) needs non-negative values (counts or "
                         "intensities); these data have negatives. Choose another method.")
    return _ranked_scores(dispersion_ranking(X), X.shape[1])


def pearson_score(X, y):
    """Largest absolute correlation of each feature with a one-vs-rest class indicator.

    From class moments: with ``t_c`` the centred indicator of class ``c`` (``n_c`` samples of
    ``q``), ``x^T t_c = n_c (mean_c - mean)`` and ``||t_c|| = sqrt(n_c (1 - n_c / q))``.
    """
    return _pearson_of(*_moments_by_class(X, y))


def _pearson_of(overall, groups):
    if len(groups) < 2:
        raise InputError("These scores need labels with at least two classes.")
    spread = np.sqrt(overall.centred)
    best = np.zeros(overall.mean.size)
    for group in (groups[1:] if len(groups) == 2 else groups):
        target_norm = np.sqrt(group.count * (1.0 - group.count / overall.count))
        correlation = _safe_divide(np.abs(group.count * (group.mean - overall.mean)), spread * target_norm)
        best = np.maximum(best, correlation)
    return best


#: within-class variance at most this share of the total counts as none (float64 rounding of a
#: constant group's mean leaves ~1e-33, not 0)
_NO_SPREAD = 1e-12


def fisher_score(X, y):
    """Fisher score (the lecture's Fisher discriminant ratio, FDR; not a false discovery rate):
    between-class over within-class variance, per feature.

    A feature whose classes have different means and no spread within any class separates them
    perfectly; its ratio is infinite. Such features rank above every other, finitely, ordered among
    themselves by their between-class spread: score ``(top + 1) * (1 + between / max between)``,
    ``top`` the largest ratio of the other features (as scikit-learn's ``f_classif`` ranks them
    first with ``inf``, but keeping every score a number).
    """
    return _fisher_of(*_moments_by_class(X, y))


def _fisher_of(overall, groups):
    between = sum(group.count * (group.mean - overall.mean) ** 2 for group in groups)
    within = sum(group.centred for group in groups)
    separators = (within <= _NO_SPREAD * (between + within)) & (between > 0)
    scores = _safe_divide(between, np.where(separators, 0.0, within))
    if separators.any():
        top = scores[~separators].max(initial=0.0)
        scores[separators] = (top + 1) * (1 + between[separators] / between[separators].max())
    return scores


def _level_codes(X):
    """Each column's values as codes 0, 1, ... in increasing order, and the number of levels."""
    order = np.argsort(X, axis=0, kind="stable")
    ordered = np.take_along_axis(X, order, axis=0)
    levels_sorted = np.vstack([np.zeros((1, X.shape[1]), dtype=np.int64),
                               np.cumsum(np.diff(ordered, axis=0) != 0, axis=0)])
    codes = np.empty_like(levels_sorted)
    np.put_along_axis(codes, order, levels_sorted, axis=0)
    return codes, levels_sorted[-1] + 1


def discrete_mutual_information(codes, n_levels, target_codes, n_target):
    """Exact plug-in mutual information (nats) of each column of ``codes`` with ``target_codes``.

    ``I(f; c) = sum_{a,b} p(a, b) log(p(a, b) / (p(a) p(b)))`` from the counts of the
    contingency table (Cover & Thomas, Eq. 2.28); columns of codes ``0 .. n_levels - 1``.
    """
    q, n = codes.shape
    width = int(n_levels.max())
    cell = (np.arange(n)[None, :] * width + codes) * n_target + target_codes[:, None]
    joint = np.bincount(cell.ravel(), minlength=n * width * n_target).reshape(n, width, n_target) / q
    marginal = joint.sum(axis=2, keepdims=True) * joint.sum(axis=1, keepdims=True)
    ratio = np.divide(joint, marginal, out=np.ones_like(joint), where=marginal > 0)
    return np.maximum(special.xlogy(joint, ratio).sum(axis=(1, 2)), 0.0)  # 0 log 0 = 0


#: ``discrete_features="auto"`` treats a feature as discrete when it has at most this many
#: distinct values and at most a third as many as samples (a continuous measurement on few
#: samples also has few distinct values, but then every one is distinct)
DISCRETE_LEVELS = 10


def _auto_discrete(n_levels, n_samples):
    return n_levels <= min(DISCRETE_LEVELS, max(2, n_samples // 3))


def _discrete_levels(X, discrete_features):
    """The mask of :func:`discrete_feature_mask` and the discrete features' level codes and
    counts, from one sort of the data."""
    if isinstance(discrete_features, str) and discrete_features == "auto":
        codes, n_levels = _level_codes(X)
        mask = _auto_discrete(n_levels, X.shape[0])
        return mask, codes[:, mask], n_levels[mask]
    mask = discrete_feature_mask(X, discrete_features)
    return (mask, *_level_codes(X[:, mask]))


def discrete_feature_mask(X, discrete_features="auto"):
    """Which features are discrete: ``"auto"`` (see :data:`DISCRETE_LEVELS`), a bool, a boolean
    mask or the indices of the discrete features (as scikit-learn's ``mutual_info_classif``)."""
    n = X.shape[1]
    if isinstance(discrete_features, str):
        if discrete_features != "auto":
            raise InputError(f"discrete_features must be 'auto', a bool, a mask or indices; got {discrete_features!r}.")
        return _auto_discrete(_level_codes(X)[1], X.shape[0])
    if isinstance(discrete_features, (bool, np.bool_)):
        return np.full(n, bool(discrete_features))
    given = np.asarray(discrete_features)
    if given.dtype == bool:
        if given.shape != (n,):
            raise InputError(f"The discrete_features mask has {given.size} entries for {n} features.")
        return given.copy()
    if given.dtype.kind not in "iu" or given.ndim != 1 or (given.size and (given.min() < 0 or given.max() >= n)):
        raise InputError(f"discrete_features indices must be integers in 0..{n - 1}.")
    mask = np.zeros(n, dtype=bool)
    mask[given] = True
    return mask


def mutual_information_score(X, y, discrete_features="auto", n_neighbors=3, random_state=0):
    """Mutual information of each feature with the class (nats).

    Discrete features (few distinct values, e.g. genes coded -2, 0, 2; see
    :func:`discrete_feature_mask`) get the exact plug-in estimate from their contingency table,
    which depends on no seed. Continuous ones get the k-nearest-neighbour estimate of Ross (PLoS
    ONE 2014; Kraskov et al. 2004) via scikit-learn, whose seed only adds tie-breaking noise of
    relative size 1e-10.
    """
    from sklearn.feature_selection import mutual_info_classif

    discrete, codes, n_levels = _discrete_levels(X, discrete_features)
    scores = np.zeros(X.shape[1])
    classes, target = np.unique(y, return_inverse=True)
    if discrete.any():
        scores[discrete] = discrete_mutual_information(codes, n_levels, target, classes.size)
    if (~discrete).any():
        scores[~discrete] = mutual_info_classif(X[:, ~discrete], y, discrete_features=False,
                                                n_neighbors=n_neighbors, random_state=random_state)
    return scores


def ks_score(X, y):
    """Two-sample Kolmogorov-Smirnov statistic (one class against the rest, the largest)."""
    # imported here: scipy.stats took 1.1-1.8 s to import, the Data page's whole first open otherwise
    from scipy import stats

    best = np.zeros(X.shape[1])
    for member in _one_vs_rest(y):
        statistic = stats.ks_2samp(X[member], X[~member], axis=0).statistic
        best = np.maximum(best, np.nan_to_num(statistic))
    return best


def _squared_distances(X):
    squared = np.einsum("ij,ij->i", X, X)
    return np.maximum(squared[:, None] + squared[None, :] - 2 * X @ X.T, 0)


GRAPH_WEIGHTS = ("heat", "binary")


def knn_graph(X, n_neighbors=5, weight="heat", width=None):
    """Symmetric k-nearest-neighbour graph of the samples (rows of ``X``), as the spectral
    selectors build it (He, Cai & Niyogi 2005, Sec. 3; Cai, Zhang & He 2010, Sec. 3.1).

    ``S_ij = exp(-|x_i - x_j|^2 / width)`` (``"heat"``) or 1 (``"binary"``) when ``j`` is among
    the ``n_neighbors`` nearest samples of ``i`` or ``i`` among those of ``j``, else 0. ``width``
    (``t`` in the papers) defaults to the mean squared distance of the neighbours, which makes the
    weights independent of the data's unit.
    """
    if weight not in GRAPH_WEIGHTS:
        raise InputError(f"The graph weight must be one of {', '.join(GRAPH_WEIGHTS)}; got {weight!r}.")
    n_neighbors = int(n_neighbors)
    if not 1 <= n_neighbors:
        raise InputError(f"The graph needs at least one neighbour per sample; got n_neighbors={n_neighbors}.")
    n_neighbors = min(n_neighbors, X.shape[0] - 1)
    distances = _squared_distances(X)
    np.fill_diagonal(distances, np.inf)
    neighbours = np.argsort(distances, axis=1, kind="stable")[:, :n_neighbors].ravel()
    rows = np.repeat(np.arange(X.shape[0]), n_neighbors)
    S = np.zeros_like(distances)
    if weight == "binary":
        S[rows, neighbours] = 1.0
    else:
        if width is None:
            width = float(np.mean(distances[rows, neighbours])) or 1.0
        elif not width > 0:
            raise InputError(f"The heat kernel's width must be positive; got {width}.")
        S[rows, neighbours] = np.exp(-distances[rows, neighbours] / width)
    return np.maximum(S, S.T)


def laplacian_score(X, y=None, n_neighbors=5, weight="heat", width=None):
    """He, Cai & Niyogi (NIPS 2005): features that respect the k-NN graph (:func:`knn_graph`
    with ``n_neighbors``, ``weight`` and ``width``) score low; returned negated so that higher
    is better, like every other score here."""
    S = knn_graph(X, n_neighbors, weight, width)
    d = S.sum(axis=1)
    L = np.diag(d) - S
    centred = X - (d @ X) / d.sum()
    numerator = np.einsum("ij,ij->j", centred, L @ centred)
    denominator = np.einsum("ij,i,ij->j", centred, d, centred)
    return -_safe_divide(numerator, denominator) - (denominator <= 0) * 1e300


RELIEF_METRICS = ("manhattan", "euclidean")


def _relief_differences(X, metric):
    """Features scaled by their range (Kononenko's diff) and the distances between samples."""
    if metric not in RELIEF_METRICS:
        raise InputError(f"The distance must be one of {', '.join(RELIEF_METRICS)}; got {metric!r}.")
    from scipy.spatial.distance import cdist

    span = X.max(axis=0) - X.min(axis=0)
    span[span == 0] = 1.0
    Z = X / span
    distance = cdist(Z, Z, "cityblock") if metric == "manhattan" else np.sqrt(_squared_distances(Z))
    np.fill_diagonal(distance, np.inf)
    return Z, distance


def _relief_weights(Z, codes, neighbourhoods, chosen):
    """The ReliefF update over the reference samples ``chosen``: minus the mean difference to the
    hits, plus the prior-weighted mean difference to the misses of each other class.
    ``neighbourhoods(i, members)`` picks the neighbours of sample ``i`` among ``members``."""
    n_classes = int(codes.max()) + 1
    prior = np.bincount(codes, minlength=n_classes) / codes.size
    weights = np.zeros(Z.shape[1])
    for i in chosen:
        for c in range(n_classes):
            members = np.flatnonzero(codes == c)
            nearest = neighbourhoods(i, members[members != i])
            if nearest.size == 0:
                continue
            difference = np.abs(Z[nearest] - Z[i]).mean(axis=0)
            if c == codes[i]:
                weights -= difference
            else:
                weights += prior[c] / (1 - prior[codes[i]]) * difference
    return weights / len(chosen)


def relieff_score(X, y, n_neighbors=10, random_state=None, n_samples=None, metric="manhattan"):
    """ReliefF (Kononenko, ECML 1994): features that differ on nearest misses and agree on nearest hits.

    Differences are scaled by each feature's range, and the distance between samples is the sum
    of those differences (``"manhattan"``, Kononenko's; ``"euclidean"`` as an option); misses of
    each other class are weighted by its prior. ``n_samples`` reference samples (all by default).
    """
    rng = np.random.default_rng(random_state)
    Z, distance = _relief_differences(X, metric)
    _, codes = np.unique(y, return_inverse=True)
    chosen = np.arange(X.shape[0]) if n_samples is None else rng.choice(X.shape[0], n_samples, replace=False)
    return _relief_weights(Z, codes, lambda i, members: members[np.argsort(distance[i, members],
                                                                           kind="stable")[:n_neighbors]], chosen)


def surf_score(X, y, metric="manhattan"):
    """SURF (Greene et al., EvoBIO 2009): ReliefF whose neighbours of a sample are all samples
    closer than the mean distance between all pairs, hits and misses averaged."""
    Z, distance = _relief_differences(X, metric)
    _, codes = np.unique(y, return_inverse=True)
    threshold = distance[np.isfinite(distance)].mean()
    return _relief_weights(Z, codes, lambda i, members: members[distance[i, members] < threshold],
                           np.arange(X.shape[0]))


def multisurf_score(X, y, metric="manhattan"):
    """MultiSURF (Urbanowicz et al., J. Biomed. Inform. 2018): SURF with a threshold per sample,
    the mean of its distances to the others less half their standard deviation."""
    Z, distance = _relief_differences(X, metric)
    _, codes = np.unique(y, return_inverse=True)
    others = np.where(np.isfinite(distance), distance, np.nan)
    threshold = np.nanmean(others, axis=1) - np.nanstd(others, axis=1) / 2
    return _relief_weights(Z, codes, lambda i, members: members[distance[i, members] < threshold[i]],
                           np.arange(X.shape[0]))


# ---------------------------------------------------------------------------- wrappers / embedded
def rfe_svm_score(X, y, step=0.1):
    """Recursive feature elimination with a linear SVM (Guyon et al. 2002), via scikit-learn."""
    from sklearn.feature_selection import RFE
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    ranking = RFE(LinearSVC(C=0.1, max_iter=5000), n_features_to_select=1, step=step).fit(
        StandardScaler().fit_transform(X), y).ranking_
    return -ranking.astype(np.float64)


def _wrapper(X, y, direction, n_features_to_select, max_candidates, cv):
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    candidates = np.argsort(-fisher_score(X, y), kind="stable")[:max_candidates]
    model = make_pipeline(StandardScaler(), LinearSVC(C=0.1, max_iter=5000))

    def accuracy(subset):
        return cross_val_score(model, X[:, subset], y, cv=cv).mean()

    target = min(n_features_to_select, candidates.size)
    if direction == "forward":
        order, remaining = [], list(candidates)
        while len(order) < target:
            scores = [accuracy(order + [j]) for j in remaining]
            order.append(remaining.pop(int(np.argmax(scores))))
    else:
        kept, removed = list(candidates), []
        while len(kept) > target:
            scores = [accuracy(kept[:i] + kept[i + 1:]) for i in range(len(kept))]
            removed.append(kept.pop(int(np.argmax(scores))))
        order = kept + removed[::-1]
    return _ranked_scores(order, X.shape[1])


def forward_wrapper_score(X, y, n_features_to_select=10, max_candidates=40, cv=3):
    """Greedy forward selection by cross-validated linear-SVM accuracy (Kohavi & John 1997),
    among the ``max_candidates`` features with the best Fisher score (to bound the cost)."""
    return _wrapper(X, y, "forward", n_features_to_select, max_candidates, cv)


def backward_wrapper_score(X, y, n_features_to_select=10, max_candidates=40, cv=3):
    """Greedy backward elimination by cross-validated linear-SVM accuracy, from the
    ``max_candidates`` features with the best Fisher score."""
    return _wrapper(X, y, "backward", n_features_to_select, max_candidates, cv)


def lasso_score(X, y, alpha=0.05):
    """|coefficients| of a Lasso fit of the (standardised) features to the label codes (Tibshirani 1996)."""
    from sklearn.linear_model import Lasso

    Z = zscores(X)
    _, codes = np.unique(y, return_inverse=True)
    return np.abs(Lasso(alpha=alpha, max_iter=10000).fit(Z, codes - codes.mean()).coef_)


def l1_logistic_score(X, y, C=0.1):
    """|coefficients| of an L1-penalised logistic regression (largest over classes)."""
    from sklearn.linear_model import LogisticRegression

    Z = zscores(X)
    model = LogisticRegression(l1_ratio=1.0, C=C, solver="saga", max_iter=5000, tol=1e-3).fit(Z, y)
    return np.abs(model.coef_).max(axis=0)


def l21_score(X, y, gamma=1.0, max_iter=50, tol=1e-6):
    """Row norms of ``W`` in ``min ||X W - Y||_F^2 + gamma ||W||_{2,1}`` (Nie et al., NIPS 2010),
    ``Y`` the one-hot labels, solved by iteratively reweighted least squares in the sample space
    (``W = D^-1 X^T (X D^-1 X^T + gamma I)^-1 Y``), so the cost is ``O(q^2 n)`` per iteration."""
    Z = zscores(X)
    classes, codes = np.unique(y, return_inverse=True)
    Y = np.eye(classes.size)[codes]
    d_inverse = np.ones(Z.shape[1])
    W = np.zeros((Z.shape[1], classes.size))
    for _ in range(max_iter):
        ZD = Z * d_inverse
        W_new = (ZD.T @ linalg.solve(ZD @ Z.T + gamma * np.eye(Z.shape[0]), Y, assume_a="pos"))
        change = np.linalg.norm(W_new - W) / max(np.linalg.norm(W_new), 1e-300)
        W = W_new
        d_inverse = 2 * np.maximum(np.linalg.norm(W, axis=1), 1e-12)
        if change < tol:
            break
    return np.linalg.norm(W, axis=1)


def fsca_score(X, y=None, n_features_to_select=100):
    """Forward selection component analysis (Puggini & McLoone 2017): greedily pick the variable
    whose residual explains most of the remaining variance of all variables (unsupervised).

    With residuals ``R`` and ``K = R R^T`` (samples x samples) the gain of variable ``j`` is
    ``r_j^T K r_j / |r_j|^2``, so a step costs ``O(q^2 n)``. The first ``n_features_to_select``
    variables are ranked; the rest tie below them (score ``-(number ranked)``).
    """
    R = X - X.mean(axis=0)
    n = X.shape[1]
    scores = np.full(n, -np.inf)
    ranked = 0
    for step in range(min(n_features_to_select, n)):
        norms = np.einsum("ij,ij->j", R, R)
        gain = _safe_divide(np.einsum("ij,ij->j", R, (R @ R.T) @ R), norms)
        gain[np.isfinite(scores)] = -np.inf
        j = int(np.argmax(gain))
        if not np.isfinite(gain[j]) or norms[j] <= 1e-12 * norms.max():
            break
        scores[j] = -float(step)
        ranked = step + 1
        r = R[:, j] / np.sqrt(norms[j])
        R = R - np.outer(r, r @ R)
    scores[~np.isfinite(scores)] = -float(ranked)
    return scores


SPEC_STYLES = ("phi1", "phi2", "phi3")


def rbf_similarity(X, sigma2=None):
    """``S_ij = exp(-|x_i - x_j|^2 / (2 sigma2))`` between all samples; ``sigma2`` by default half
    the mean squared distance between two samples (unit-free)."""
    distances = _squared_distances(X)
    if sigma2 is None:
        sigma2 = float(distances.sum() / max(X.shape[0] * (X.shape[0] - 1), 1)) / 2 or 1.0
    elif not sigma2 > 0:
        raise InputError(f"The RBF kernel's width sigma2 must be positive; got {sigma2}.")
    return np.exp(-distances / (2 * sigma2))


def spec_score(X, y=None, style="phi2", n_clusters=5, sigma2=None):
    """SPEC, spectral feature selection (Zhao & Liu, ICML 2007, Sec. 3).

    On the RBF similarity :func:`rbf_similarity` (``sigma2`` by default half the mean squared
    distance between samples), degrees ``D`` and normalised Laplacian
    ``L = I - D^-1/2 S D^-1/2`` with eigenpairs ``(lambda_j, xi_j)``, each feature ``f`` is
    normalised to ``f^ = D^1/2 f / |D^1/2 f|`` and scored by

    * ``phi1 = f^T L f^`` (Eq. 8), lower is better;
    * ``phi2 = f^T L f^ / (1 - (f^T xi_1)^2)`` (Eq. 9), lower is better, the default: it
      discounts the trivial eigenvector, along which a constant feature lies;
    * ``phi3 = sum_{j=2}^{n_clusters} (2 - lambda_j) (f^T xi_j)^2`` (Eq. 10), higher is better.

    Returned so that higher is better (``-phi1``, ``-phi2``, ``phi3``); a feature that is
    constant (``f^`` on ``xi_1``) scores below all others.
    """
    if style not in SPEC_STYLES:
        raise InputError(f"SPEC's style must be one of {', '.join(SPEC_STYLES)}; got {style!r}.")
    A, root_degree = _normalised_affinity(rbf_similarity(X, sigma2))
    F = root_degree[:, None] * X
    norms = np.linalg.norm(F, axis=0)
    F = F / np.where(norms > 0, norms, 1.0)
    trivial = root_degree / np.linalg.norm(root_degree)
    along_trivial = (trivial @ F) ** 2
    degenerate = (norms <= 0) | (along_trivial >= 1 - 1e-12)
    if style == "phi3":
        k = int(min(max(n_clusters, 2), X.shape[0]))
        # eigenvalues of L are 1 - those of A; the k smallest of L are A's k largest
        values, vectors = linalg.eigh(A, subset_by_index=[X.shape[0] - k, X.shape[0] - 1])
        values, vectors = values[::-1][1:], vectors[:, ::-1][:, 1:]
        scores = ((1 + values)[:, None] * (vectors.T @ F) ** 2).sum(axis=0)
    else:
        phi1 = 1 - np.einsum("ij,ij->j", F, A @ F)
        scores = -(phi1 if style == "phi1" else _safe_divide(phi1, np.where(degenerate, 0.0, 1 - along_trivial)))
    return np.where(degenerate, scores.min(initial=0.0) - 1.0, scores) if degenerate.any() else scores


def _normalised_affinity(S):
    """``D^-1/2 S D^-1/2`` (``I`` minus the normalised Laplacian) and ``D^1/2``'s diagonal."""
    root_degree = np.sqrt(S.sum(axis=1))
    return S / root_degree[:, None] / root_degree[None, :], root_degree


def _spectral_embedding(affinity, root_degree, n_clusters):
    """The ``n_clusters`` eigenvectors of ``L y = lambda D y`` with the smallest eigenvalues
    (``L = D - S``), from the symmetric ``D^-1/2 S D^-1/2`` of :func:`_normalised_affinity`. The
    first is the constant one when the graph is connected; when it falls into c pieces the first
    c span their indicators, so ``n_clusters`` well-separated groups are described either way
    (as in spectral clustering)."""
    q = affinity.shape[0]
    k = int(min(n_clusters, q))
    _, vectors = linalg.eigh(affinity, subset_by_index=[q - k, q - 1])
    return vectors[:, ::-1] / root_degree[:, None]


def _lasso_with_cardinality(X, target, cardinality):
    """The L1-regularised regression of ``target`` on ``X`` (with intercept) at the largest penalty
    where ``cardinality`` coefficients are non-zero, by the LARS-lasso path (Efron et al. 2004)."""
    from sklearn.linear_model import lars_path

    centred, goal = X - X.mean(axis=0), target - target.mean()
    _, _, path = lars_path(centred, goal, method="lasso", max_iter=4 * cardinality + 10)
    counts = np.count_nonzero(path, axis=0)
    reached = np.flatnonzero(counts >= cardinality)
    return path[:, reached[0] if reached.size else -1]


def mcfs_score(X, y=None, n_clusters=5, n_features_to_select=100, n_neighbors=5, weight="heat", width=None):
    """MCFS, multi-cluster feature selection (Cai, Zhang & He, KDD 2010, Sec. 3).

    The ``n_clusters`` eigenvectors ``y_k`` of ``L y = lambda D y`` with the smallest eigenvalues
    on the k-NN graph (:func:`knn_graph`, Eqs. 1-2; :func:`_spectral_embedding`) are each regressed on the features with an L1 penalty
    whose cardinality is ``n_features_to_select`` (Eq. 4, by LARS); a feature's score is its
    largest absolute coefficient over the eigenvectors (Eq. 5). Features never chosen score 0.
    """
    Y = _spectral_embedding(*_normalised_affinity(knn_graph(X, n_neighbors, weight, width)), n_clusters)
    Y = Y - Y.mean(axis=0)
    # the constant eigenvector of a connected graph has nothing to regress
    informative = np.linalg.norm(Y, axis=0) > 1e-10 * np.abs(Y).max()
    cardinality = int(min(n_features_to_select, X.shape[1]))
    return np.max([np.abs(_lasso_with_cardinality(X, y, cardinality)) for y in Y[:, informative].T]
                  + [np.zeros(X.shape[1])], axis=0)


def _udfs_local_scatter(X, n_neighbors, ridge):
    """``L = sum_i S_i H (X~_i^T X~_i + lambda I)^-1 H S_i^T`` (Yang et al. 2011, Eq. 9): over each
    sample's neighbourhood (itself and its ``n_neighbors`` nearest), the centred Gram matrix's
    regularised inverse, placed at the neighbourhood's rows and columns (samples x samples).
    ``lambda = ridge`` times the Gram matrix's mean diagonal (scale-free)."""
    q = X.shape[0]
    size = int(min(n_neighbors, q - 1)) + 1
    distances = _squared_distances(X)
    np.fill_diagonal(distances, -1.0)  # each sample first in its own neighbourhood
    neighbourhoods = np.argsort(distances, axis=1, kind="stable")[:, :size]
    H = np.eye(size) - 1.0 / size
    L = np.zeros((q, q))
    for members in neighbourhoods:
        local = H @ X[members]
        gram = local @ local.T
        regularised = gram + (ridge * max(np.trace(gram) / size, 1e-300)) * np.eye(size)
        L[np.ix_(members, members)] += H @ np.linalg.solve(regularised, H)
    return L


#: feature counts up to which UDFS solves its eigenproblem densely; above, matrix-free. Measured
#: on colon's first genes (2 cores, quiet machine): per iteration 10 ms dense against 1.1 ms
#: matrix-free at 100 genes, 12 against 1.2 at 200, 107 against 13 at 1,000 (so 100 is generous)
_UDFS_DENSE_LIMIT = 100


def _smallest_eigenvectors(Z, diagonal, k, start):
    """The ``k`` eigenvectors of ``Z Z^T + diag(diagonal)`` with the smallest eigenvalues.

    Dense up to :data:`_UDFS_DENSE_LIMIT` rows; above, as the largest of the inverse by Lanczos,
    applying the inverse by the Woodbury identity (``O(n r)`` per product, never ``n x n``)."""
    n, r = Z.shape
    if n <= _UDFS_DENSE_LIMIT:
        P = Z @ Z.T
        P[np.diag_indices(n)] += diagonal
        return linalg.eigh(P, subset_by_index=[0, k - 1])[1]
    from scipy.sparse.linalg import LinearOperator, eigsh

    inverse_diagonal = 1.0 / diagonal
    scaled = Z * inverse_diagonal[:, None]
    core_factor = linalg.cho_factor(np.eye(r) + Z.T @ scaled)

    def apply_inverse(v):
        v = v.reshape(n, -1)
        return inverse_diagonal[:, None] * v - scaled @ linalg.cho_solve(core_factor, scaled.T @ v)

    operator = LinearOperator((n, n), matvec=apply_inverse, matmat=apply_inverse, dtype=np.float64)
    _, vectors = eigsh(operator, k=k, which="LA", v0=start, tol=1e-10)
    return vectors


def udfs_score(X, y=None, **options):
    """UDFS scores (:func:`udfs`); warns ``ConvergenceWarning`` if it did not converge."""
    return _scores_of(udfs(X, **options), "UDFS")


def udfs(X, n_clusters=5, n_neighbors=5, gamma=0.1, ridge=1e-3, max_iter=300, tol=1e-6) -> IterativeScores:
    """UDFS, unsupervised discriminative feature selection (Yang et al., IJCAI 2011, Sec. 3).

    ``min_{W^T W = I} Tr(W^T M W) + gamma ||W||_{2,1}``, ``M = X^T L X`` with ``L`` the local
    discriminative scatter of :func:`_udfs_local_scatter` and ``W`` features x ``n_clusters``,
    solved as the paper's Algorithm 1: ``W`` = the eigenvectors of ``M + gamma D`` with the
    smallest eigenvalues, ``D_ii = 1 / (2 |w_i|)``, until the objective's relative change is
    under ``tol``. Scores are the row norms ``|w_i|``. The data are centred and divided by their
    root mean square first, so ``gamma`` does not depend on the data's unit.
    """
    X, n_clusters, n_neighbors, max_iter, tol = _check_iterative(X, n_clusters, n_neighbors, max_iter, tol)
    gamma, ridge = check_real(gamma, "gamma", low=0.0, low_open=True), check_real(ridge, "ridge", low=0.0, low_open=True)
    Xs = _unit_scale(X)
    values, vectors = linalg.eigh(_udfs_local_scatter(Xs, n_neighbors, ridge))
    keep = values > values.max() * 1e-12
    Z = Xs.T @ (vectors[:, keep] * np.sqrt(values[keep]))  # M = Z Z^T
    k = int(min(n_clusters, X.shape[1] - 1))
    diagonal = np.full(X.shape[1], gamma)
    start = np.ones(X.shape[1])
    history = []
    for _ in range(max_iter):
        W = _smallest_eigenvectors(Z, diagonal, k, start)
        row_norms = np.linalg.norm(W, axis=1)
        history.append(np.sum((Z.T @ W) ** 2) + gamma * row_norms.sum())
        converged = len(history) > 1 and abs(history[-2] - history[-1]) <= tol * abs(history[-1])
        if converged:
            break
        diagonal = gamma / (2 * np.maximum(row_norms, 1e-12))
        start = W.sum(axis=1)
    return IterativeScores(row_norms, np.asarray(history), converged)


def _ndfs_regression(X, F, d_inverse, beta):
    """``W = (X^T X + beta D)^-1 X^T F`` and ``K (K + beta I)^-1`` (= ``X (X^T X + beta D)^-1 X^T``)
    through the samples x samples ``K = X D^-1 X^T`` (push-through identity), never features x
    features."""
    K = (X * d_inverse) @ X.T
    factor = linalg.cho_factor(K + beta * np.eye(X.shape[0]))
    projected = linalg.cho_solve(factor, F)
    return d_inverse[:, None] * (X.T @ projected), factor


def ndfs_score(X, y=None, **options):
    """NDFS scores (:func:`ndfs`); warns ``ConvergenceWarning`` if it did not converge."""
    return _scores_of(ndfs(X, **options), "NDFS")


def ndfs(X, n_clusters=5, n_neighbors=5, alpha=1.0, beta=1.0, gamma=1e8, max_iter=300, tol=1e-6,
         random_state=0) -> IterativeScores:
    """NDFS, nonnegative discriminative feature selection (Li et al., AAAI 2012, Sec. 3).

    ``min Tr(F^T L F) + alpha (|X W - F|_F^2 + beta |W|_{2,1})`` over nonnegative cluster
    indicators ``F`` (samples x ``n_clusters``, ``F^T F = I`` enforced by the penalty ``gamma``)
    and ``W``, ``L`` the normalised Laplacian of the k-NN heat graph. The paper's alternation:
    ``W = (X^T X + beta D)^-1 X^T F``; ``F <- F o (gamma F) / (M F + gamma F F^T F)`` with
    ``M = L + alpha (I - X (X^T X + beta D)^-1 X^T)`` (Eq. 13; damped to the same fixed points,
    see the code); ``D_ii = 1 / (2 |w_i|)``; until the
    objective's relative change is under ``tol``. ``F`` starts from spectral clustering
    (k-means with ``random_state`` on the graph's embedding) plus 0.2. Scores are ``|w_i|``.
    The data are centred and divided by their root mean square first (unit-free ``alpha``, ``beta``).
    """
    from sklearn.cluster import KMeans

    X, n_clusters, n_neighbors, max_iter, tol = _check_iterative(X, n_clusters, n_neighbors, max_iter, tol)
    alpha, beta, gamma = (check_real(value, name, low=0.0, low_open=True)
                          for value, name in ((alpha, "alpha"), (beta, "beta"), (gamma, "gamma")))
    Xs = _unit_scale(X)
    q = X.shape[0]
    affinity, root_degree = _normalised_affinity(knn_graph(Xs, n_neighbors))
    laplacian = np.eye(q) - affinity
    k = int(min(n_clusters, q - 1))
    embedding = _spectral_embedding(affinity, root_degree, k)
    clusters = KMeans(k, n_init=10, random_state=random_state).fit_predict(embedding)
    F = np.eye(k)[clusters] + 0.2
    F /= np.linalg.norm(F, axis=0)
    d_inverse = np.ones(X.shape[1])
    history = []
    for _ in range(max_iter):
        W, factor = _ndfs_regression(Xs, F, d_inverse, beta)
        row_norms = np.linalg.norm(W, axis=1)
        history.append(np.sum(F * (laplacian @ F)) + alpha * (np.sum((Xs @ W - F) ** 2) + beta * row_norms.sum()))
        converged = len(history) > 1 and abs(history[-2] - history[-1]) <= tol * abs(history[-1])
        if converged:
            break
        M_F = laplacian @ F + alpha * beta * linalg.cho_solve(factor, F)
        # The paper's rule with two changes that keep its fixed points (F o (M F + gamma F F^T F
        # - gamma F) = 0). M F is split into its signed parts, as in semi-NMF (Ding, Li & Jordan
        # 2010), so a negative (M F)_ij near F_ij = 0 cannot flip a sign or divide by ~0. The
        # ratio is taken to the power 1/2, as orthogonal NMF does (Ding et al., KDD 2006): where
        # gamma dominates, the plain rule maps a column of norm f to norm 1/f and oscillates with
        # period two (on colon its objective alternated 1.27 / 1.70 for 300 iterations).
        numerator = gamma * F + np.maximum(-M_F, 0)
        denominator = np.maximum(M_F, 0) + gamma * F @ (F.T @ F)
        F = F * np.sqrt(np.divide(numerator, denominator, out=np.zeros_like(F), where=denominator > 0))
        d_inverse = 2 * np.maximum(row_norms, 1e-12)
    return IterativeScores(row_norms, np.asarray(history), converged)


MRMR_CRITERIA = ("difference", "quotient")


def discretise(X, width=1.0, discrete_features="auto"):
    """Level codes of each feature: discrete ones (:func:`discrete_feature_mask`) keep their
    values; continuous ones get three states, below ``mean - width * std``, above
    ``mean + width * std`` and between, as Peng, Long & Ding (2005, Sec. 4) discretise."""
    discrete, discrete_codes, _ = _discrete_levels(X, discrete_features)
    codes = np.ones(X.shape, dtype=np.int64)
    continuous = X[:, ~discrete]
    mean, spread = continuous.mean(axis=0), continuous.std(axis=0)
    codes[:, ~discrete] = (continuous > mean - width * spread).astype(np.int64) + (continuous > mean + width * spread)
    codes[:, discrete] = discrete_codes
    return codes, codes.max(axis=0) + 1


def mrmr_score(X, y, n_features_to_select=100, criterion="difference", width=1.0, discrete_features="auto"):
    """mRMR, minimum redundancy maximum relevance (Peng, Long & Ding, TPAMI 2005, Eqs. 6-9).

    On discretised features (:func:`discretise`), greedily add the feature maximising its mutual
    information with the class (relevance) minus (``"difference"``, MID) or divided by
    (``"quotient"``, MIQ) its mean mutual information with the features already chosen
    (redundancy); the first is the most relevant. ``n_features_to_select`` are ranked; the rest
    tie below them.
    """
    if criterion not in MRMR_CRITERIA:
        raise InputError(f"mRMR's criterion must be one of {', '.join(MRMR_CRITERIA)}; got {criterion!r}.")
    codes, n_levels = discretise(X, width, discrete_features)
    classes, target = np.unique(y, return_inverse=True)
    relevance = discrete_mutual_information(codes, n_levels, target, classes.size)
    redundancy = np.zeros(X.shape[1])
    chosen = np.zeros(X.shape[1], dtype=bool)
    order = []
    for step in range(int(min(n_features_to_select, X.shape[1]))):
        if step == 0:
            merit = relevance.copy()
        elif criterion == "difference":
            merit = relevance - redundancy / step
        else:
            merit = relevance / np.maximum(redundancy / step, 1e-12)
        merit[chosen] = -np.inf
        best = int(np.argmax(merit))
        order.append(best)
        chosen[best] = True
        redundancy += discrete_mutual_information(codes, n_levels, codes[:, best], int(n_levels[best]))
    return _ranked_scores(order, X.shape[1])


def adaboost_score(X, y, n_estimators=100, random_state=0):
    """Feature importances of AdaBoost with decision stumps, the Viola-Jones selector (lecture)."""
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier

    model = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=n_estimators,
                               random_state=random_state).fit(X, y)
    return model.feature_importances_


_REF_LECTURE = "lecture on feature extraction and selection"
SCORERS: dict[str, tuple[BaselineInfo, Callable]] = {
    "variance": (BaselineInfo("variance", "filter", False, "O(q n)", _REF_LECTURE), variance_score),
    "pearson": (BaselineInfo("Pearson correlation", "filter", True, "O(q n)", "Wolf & Shashua, ICCV 2003, Sec. 5"), pearson_score),
    "fisher": (BaselineInfo("Fisher score (between- over within-class variance)", "filter", True, "O(q n)", "Wolf & Shashua, ICCV 2003, Sec. 5; " + _REF_LECTURE), fisher_score),
    "mutual_information": (BaselineInfo("mutual information", "filter", True, "O(q log q n)", "Kraskov et al. 2004 via scikit-learn", min_per_class=2), mutual_information_score),
    "ks": (BaselineInfo("Kolmogorov-Smirnov", "filter", True, "O(q log q n)", "Wolf & Shashua, ICCV 2003, Sec. 5", min_per_class=2), ks_score),
    "dispersion": (BaselineInfo("dispersion (scanpy's highly variable genes)", "filter", False, "O(q n)",
                                "Satija et al., Nat. Biotechnol. 2015; scanpy's highly_variable_genes, flavor seurat",
                                models_counts=True), dispersion_score),
    "laplacian": (BaselineInfo("Laplacian score", "filter", False, "O(q^2 n)", "He, Cai & Niyogi, NIPS 2005"), laplacian_score),
    "relieff": (BaselineInfo("ReliefF", "filter", True, "O(q^2 n)", "Kononenko, ECML 1994; " + _REF_LECTURE, min_per_class=2), relieff_score),
    "rfe_svm": (BaselineInfo("RFE with a linear SVM", "wrapper", True, "O(log n) SVM fits", "Guyon et al., MLJ 2002", min_per_class=2), rfe_svm_score),
    "forward_wrapper": (BaselineInfo("forward selection (SVM, CV)", "wrapper", True, "O(k m) CV fits, m candidates", "Kohavi & John, AIJ 1997", min_per_class=2), forward_wrapper_score),
    "backward_wrapper": (BaselineInfo("backward elimination (SVM, CV)", "wrapper", True, "O(m^2) CV fits, m candidates", "Kohavi & John, AIJ 1997", min_per_class=2), backward_wrapper_score),
    "lasso": (BaselineInfo("Lasso", "embedded", True, "O(q n) per sweep", "Tibshirani, JRSS-B 1996"), lasso_score),
    "l1_logistic": (BaselineInfo("L1 logistic regression", "embedded", True, "O(q n) per iteration", _REF_LECTURE), l1_logistic_score),
    "l21": (BaselineInfo("L2,1 least squares", "embedded", True, "O(q^2 n) per iteration", "Nie et al., NIPS 2010"), l21_score),
    "fsca": (BaselineInfo("FSCA", "filter", False, "O(k q n^2)", "Puggini & McLoone, Eng. Appl. AI 2017"), fsca_score),
    "adaboost": (BaselineInfo("AdaBoost stumps", "embedded", True, "O(T q n log q)", "Viola & Jones, IJCV 2004; " + _REF_LECTURE), adaboost_score),
    "surf": (BaselineInfo("SURF", "filter", True, "O(q^2 n)", "Greene et al., EvoBIO 2009", min_per_class=2), surf_score),
    "multisurf": (BaselineInfo("MultiSURF", "filter", True, "O(q^2 n)", "Urbanowicz et al., J. Biomed. Inform. 2018", min_per_class=2), multisurf_score),
    "mrmr": (BaselineInfo("mRMR", "filter", True, "O(k q n)", "Peng, Long & Ding, TPAMI 2005"), mrmr_score),
    "spec": (BaselineInfo("SPEC", "filter", False, "O(q^2 n)", "Zhao & Liu, ICML 2007"), spec_score),
    "mcfs": (BaselineInfo("MCFS", "filter", False, "O(q^2 n) + k LARS paths", "Cai, Zhang & He, KDD 2010"), mcfs_score),
    "udfs": (BaselineInfo("UDFS", "filter", False, "O(q^2 n) + O(n r) per Lanczos product", "Yang et al., IJCAI 2011"), udfs_score),
    "ndfs": (BaselineInfo("NDFS", "filter", False, "O(q^2 n) per iteration", "Li et al., AAAI 2012"), ndfs_score),
}
#: Scorers that group the samples into a number of clusters given as ``n_clusters``
#: (:func:`rank_features` passes its own).
CLUSTERING_SCORERS = ("spec", "mcfs", "udfs", "ndfs")
#: Scorers that need only per-class column moments: one pass over data of any size (sparse,
#: chunked, out of core), from the statistics of :meth:`core.matrix.DataMatrix.class_moments`.
ONE_PASS_SCORERS = {"variance": _variance_of, "pearson": _pearson_of, "fisher": _fisher_of}


def score_features(method: str, X, y=None, **options) -> FeatureScores:
    """Run one scoring baseline (see :data:`SCORERS`) and rank the features by it.

    ``X`` is a dense array, or, for the one-pass scorers (:data:`ONE_PASS_SCORERS`), also a SciPy
    sparse matrix or a Dask array, read once for its per-class column moments.
    """
    if method not in SCORERS:
        raise InputError(f"Unknown baseline {method!r}; choose one of {', '.join(SCORERS)}.")
    info, function = SCORERS[method]
    data = data_matrix(X)
    one_pass = method in ONE_PASS_SCORERS
    if not one_pass:
        data.dense(f"{info.name} needs the data as a dense in-memory array; on sparse or chunked data the "
                   f"one-pass scores run ({', '.join(ONE_PASS_SCORERS)}). Select a subset (e.g. the features "
                   "of highest variance) and pass it as a NumPy array.")
    if data.shape[0] < 2:
        raise InputError("X must be a samples x features matrix with at least two samples.")
    # every ranking is unchanged by a common factor; scores of unit-dependent methods (variance,
    # the embedded models) are then in the units of X / scale
    scale = data.unit_scale()
    data = data.rescaled(scale)
    if info.supervised:
        if y is None:
            raise InputError(f"{info.name} is supervised: give the labels y.")
        y = as_labels(y, data.shape[0], "y")
        classes, counts = np.unique(y, return_counts=True)
        if classes.size < 2:
            raise InputError(f"{info.name} needs at least two classes in y; got {classes.size}.")
        if counts.min() < info.min_per_class:
            raise InputError(f"{info.name} needs at least {info.min_per_class} samples of each class; class "
                             f"{np.asarray(classes)[counts.argmin()].tolist()!r} has {counts.min()}.")
    elif y is not None:
        y = as_labels(y, data.shape[0], "y")
    start = time.perf_counter()
    if one_pass:
        overall, groups = _moments_by_class(data, y if info.supervised else None)
        if not (overall.maximum > overall.minimum).any():
            raise InputError("Every feature is constant over the samples: there is nothing to rank.")
        scores = np.asarray(ONE_PASS_SCORERS[method](overall, groups), dtype=np.float64)
    else:
        X = data.values
        if not (X.max(axis=0) > X.min(axis=0)).any():
            raise InputError("Every feature is constant over the samples: there is nothing to rank.")
        try:
            scores = np.asarray(function(X, y if (info.supervised or y is not None) else None, **options),
                                dtype=np.float64)
        except (ValueError, np.linalg.LinAlgError, FloatingPointError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"{info.name} could not score these data ({exc}).") from None
    seconds = time.perf_counter() - start
    require_finite(scores, f"{info.name}'s scores")
    ranking = np.argsort(-scores, kind="stable")
    return FeatureScores(method=method, scores=scores, ranking=ranking, seconds=seconds, info=info, scale=scale)


#: Rankers of :func:`rank_features` beyond the scoring baselines: the methods of the papers this library implements.
SPECTRAL_RANKERS = ("Q-alpha", "Q-alpha (supervised)", "sparse LDA")


def rank_features(method: str, X, y=None, n_clusters: int = 2) -> np.ndarray:
    """Feature indices, best first, by ``method``: one of :data:`SPECTRAL_RANKERS` or of :data:`SCORERS`.

    ``"Q-alpha"`` is unsupervised Q-alpha with ``n_clusters`` ([WS03] Eq. 1; the clustering
    scorers of :data:`CLUSTERING_SCORERS` get it too), ``"Q-alpha
    (supervised)"`` fixes Q to the class indicators, and ``"sparse LDA"`` orders the features
    by the greedy backward elimination of [MWA07] Sec. 4 (two classes). One signature for all
    methods, so that comparisons and bootstrap stability call them alike.
    """
    if method == "Q-alpha":
        from .qalpha import q_alpha
        return q_alpha(X, n_clusters).ranking
    if method == "Q-alpha (supervised)":
        from .qalpha import q_alpha
        return q_alpha(X, labels=y).ranking
    if method == "sparse LDA":
        from .slda import greedy_slda
        return greedy_slda(X, y).backward_order
    if method not in SCORERS:
        raise InputError(f"Unknown method {method!r}; choose one of {', '.join(SPECTRAL_RANKERS + tuple(SCORERS))}.")
    return score_features(method, X, y, **({"n_clusters": n_clusters} if method in CLUSTERING_SCORERS else {})).ranking


# ---------------------------------------------------------------------------- projections
class _Projection:
    """Base: ``fit(X, side=None)`` learns ``mean_`` and ``components_`` (d x n_features)."""

    info: BaselineInfo
    needs_side = False
    #: Models the data as co-occurrence counts or intensities: fitted on the non-negative data as
    #: given, never on standardised values (which have negative entries).
    models_counts = False

    def __init__(self, n_components: int = 10):
        if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or n_components < 1:
            raise InputError(f"n_components must be a positive integer; got {n_components!r}.")
        self.n_components = int(n_components)

    def _check(self, X, side):
        X = dense_matrix(X)
        if X.shape[0] < 2:
            raise InputError("fit needs a samples x features matrix with at least two samples.")
        if self.needs_side:
            if side is None:
                raise InputError(f"{self.info.name} needs side data: fit(X, side=...).")
            side = dense_matrix(side, "side")
            if side.shape[1] != X.shape[1] or side.shape[0] < 2:
                raise InputError(f"The side data must have at least 2 samples and {X.shape[1]} features.")
        return X, side

    def transform(self, X):
        if not hasattr(self, "components_"):
            raise InputError("Call fit before transform.")
        return (dense_matrix(X) - self.mean_) @ self.components_.T

    def fit_transform(self, X, side=None):
        return self.fit(X, side).transform(X)


def _leading_directions(C, d):
    values, vectors = linalg.eigh(C, subset_by_index=[C.shape[0] - d, C.shape[0] - 1])
    return vectors[:, ::-1].T, values[::-1]


class PCAProjection(_Projection):
    """Principal component analysis of the main data."""

    info = BaselineInfo("PCA", "combination", False, "O(q n min(q, n))", "Pearson 1901; Shashua & Wolf, ECCV 2004, Sec. 6")

    def fit(self, X, side=None):
        X, _ = self._check(X, None)
        self.mean_ = X.mean(axis=0)
        _, _, Vt = np.linalg.svd(X - self.mean_, full_matrices=False)
        self.components_ = Vt[: min(self.n_components, Vt.shape[0])]
        return self


class CPCA(_Projection):
    """Constrained PCA: PCA of the main data after projecting out the side data's principal
    subspace of dimension ``side_components`` (Diamantaras & Kung 1996, as in [SW04] Sec. 6)."""

    info = BaselineInfo("CPCA", "combination", False, "O((q + p) n min(q, n))", "Diamantaras & Kung 1996; Shashua & Wolf, ECCV 2004, Sec. 6")
    needs_side = True

    def __init__(self, n_components: int = 10, side_components: int = 5):
        super().__init__(n_components)
        self.side_components = int(side_components)

    def fit(self, X, side=None):
        X, side = self._check(X, side)
        _, _, side_basis = np.linalg.svd(side - side.mean(axis=0), full_matrices=False)
        side_basis = side_basis[: min(self.side_components, side_basis.shape[0])]
        self.mean_ = X.mean(axis=0)
        centred = X - self.mean_
        projected = centred - (centred @ side_basis.T) @ side_basis
        _, _, Vt = np.linalg.svd(projected, full_matrices=False)
        self.components_ = Vt[: min(self.n_components, Vt.shape[0])]
        return self


class OPCA(_Projection):
    """Oriented PCA: directions maximising main variance over side variance, the generalised
    eigenproblem ``C_main v = lambda (C_side + reg I) v`` (Diamantaras & Kung 1996). ``reg``:
    ``None`` takes ``1e-3`` times the mean side variance (the side covariance is singular when
    it has fewer samples than features); the value used is ``reg_``.

    Solved in the samples' space: ``S = C_side + reg I`` is a rank-``p`` matrix plus a ridge, so
    ``S^{-1/2}`` is explicit from a thin SVD of the side data, and the leading eigenvectors of
    ``S^{-1/2} C_main S^{-1/2}`` come from a thin SVD of the whitened main data:
    ``O((q + p)^2 n)`` instead of ``O(n^3)``. The directions ``v = S^{-1/2} u`` satisfy
    ``v^T S v = 1``, as a generalised eigensolver returns them; at most ``q - 1`` (the rank of
    ``C_main``) directions are returned.
    """

    info = BaselineInfo("OPCA", "combination", False, "O((q + p)^2 n)", "Diamantaras & Kung 1996; Shashua & Wolf, ECCV 2004, Sec. 6")
    needs_side = True

    def __init__(self, n_components: int = 10, reg: float | None = None):
        super().__init__(n_components)
        self.reg = reg

    def fit(self, X, side=None):
        X, side = self._check(X, side)
        self.mean_ = X.mean(axis=0)
        n_features = X.shape[1]
        side_scaled = (side - side.mean(axis=0)) / np.sqrt(side.shape[0] - 1)
        main_scaled = (X - self.mean_) / np.sqrt(X.shape[0] - 1)
        mean_side_variance = float(np.einsum("ij,ij->", side_scaled, side_scaled)) / n_features
        self.reg_ = float(1e-3 * max(mean_side_variance, 1e-12)) if self.reg is None else float(self.reg)
        if not self.reg_ > 0:
            raise InputError(f"OPCA needs a positive ridge reg; got {self.reg!r}.")
        # C_side = U diag(sigma^2) U^T with U the left singular vectors of the side data (as n x p)
        _, sigma, side_rows = np.linalg.svd(side_scaled, full_matrices=False)
        keep = sigma > 1e-12 * max(sigma.max(initial=0.0), 1e-300)
        U, sigma = side_rows[keep].T, sigma[keep]
        # S^{-1/2} = U diag((sigma^2 + reg)^-1/2) U^T + reg^-1/2 (I - U U^T), applied to rows
        def whiten(rows):
            coordinates = rows @ U
            return ((coordinates * (sigma**2 + self.reg_) ** -0.5) @ U.T
                    + (rows - coordinates @ U.T) / np.sqrt(self.reg_))
        _, values, directions = np.linalg.svd(whiten(main_scaled), full_matrices=False)
        rank = int(np.sum(values > 1e-12 * max(values.max(initial=0.0), 1e-300)))
        d = min(self.n_components, n_features, max(rank, 1))
        self.components_ = whiten(directions[:d])  # rows v^T = (S^{-1/2} u)^T, S symmetric
        self.explained_ratio_ = values[:d] ** 2  # the generalised eigenvalues lambda
        return self


class KernelPCAProjection(_Projection):
    """Kernel PCA (Schoelkopf et al. 1998; the lecture) with an RBF kernel, via scikit-learn."""

    info = BaselineInfo("kernel PCA", "combination", False, "O(q^3)", "Schoelkopf, Smola & Mueller 1998; " + _REF_LECTURE)

    def __init__(self, n_components: int = 10, gamma: float | None = None):
        super().__init__(n_components)
        self.gamma = gamma

    def fit(self, X, side=None):
        from sklearn.decomposition import KernelPCA

        X, _ = self._check(X, None)
        self.model_ = KernelPCA(n_components=min(self.n_components, X.shape[0] - 1), kernel="rbf",
                                gamma=self.gamma).fit(X)
        self.components_ = self.model_.eigenvectors_.T  # marks the object as fitted
        return self

    def transform(self, X):
        if not hasattr(self, "model_"):
            raise InputError("Call fit before transform.")
        return self.model_.transform(np.asarray(X, dtype=np.float64))


class LPP(_Projection):
    """Locality preserving projections / Laplacianfaces (He & Niyogi 2003; the lecture): PCA to
    at most ``pca_components`` dimensions, then the directions that keep k-NN neighbours close,
    ``X^T L X a = lambda X^T D X a`` with the smallest ``lambda``."""

    info = BaselineInfo("LPP (Laplacianfaces)", "combination", False, "O(q^2 n + q^3)", "He & Niyogi, NIPS 2003; " + _REF_LECTURE)

    def __init__(self, n_components: int = 10, n_neighbors: int = 5, pca_components: int = 50):
        super().__init__(n_components)
        self.n_neighbors = n_neighbors
        self.pca_components = pca_components

    def fit(self, X, side=None):
        X, _ = self._check(X, None)
        pca = PCAProjection(min(self.pca_components, X.shape[0] - 1, X.shape[1])).fit(X)
        Z = pca.transform(X)
        S = knn_graph(Z, self.n_neighbors)
        d = S.sum(axis=1)
        L = np.diag(d) - S
        left, right = Z.T @ L @ Z, Z.T @ (d[:, None] * Z)
        right[np.diag_indices_from(right)] += 1e-9 * np.trace(right) / right.shape[0]
        k = min(self.n_components, Z.shape[1])
        _, vectors = linalg.eigh(left, right, subset_by_index=[0, k - 1])
        self.mean_ = pca.mean_
        self.components_ = vectors.T @ pca.components_
        return self


class _ManifoldEmbedding(_Projection):
    """A scikit-learn manifold learner fitted on training data; new samples are placed by its own
    out-of-sample rule (``transform``), so nothing of them is learnt."""

    def __init__(self, n_components: int = 10, n_neighbors: int = 10):
        super().__init__(n_components)
        self.n_neighbors = check_positive_int(n_neighbors, "n_neighbors")

    def _model(self, n_components, n_neighbors):
        raise NotImplementedError

    def fit(self, X, side=None):
        X, _ = self._check(X, None)
        n_neighbors = min(self.n_neighbors, X.shape[0] - 1)
        n_components = min(self.n_components, X.shape[0] - 1, X.shape[1])
        try:
            self.model_ = self._model(n_components, n_neighbors).fit(X)
        except (ValueError, np.linalg.LinAlgError) as exc:
            raise InputError(f"{self.info.name} could not embed these data ({exc}); try more neighbours.") from None
        self.components_ = np.zeros((n_components, X.shape[1]))  # marks the object as fitted (non-linear map)
        return self

    def transform(self, X):
        if not hasattr(self, "model_"):
            raise InputError("Call fit before transform.")
        return self.model_.transform(dense_matrix(X))


class LLEProjection(_ManifoldEmbedding):
    """Locally linear embedding (Roweis & Saul, Science 2000; the lecture), scikit-learn's standard
    variant with a dense eigensolver (deterministic)."""

    info = BaselineInfo("LLE", "combination", False, "O(q^2 n + q^3)", "Roweis & Saul, Science 2000; " + _REF_LECTURE)

    def _model(self, n_components, n_neighbors):
        from sklearn.manifold import LocallyLinearEmbedding

        return LocallyLinearEmbedding(n_neighbors=n_neighbors, n_components=n_components, eigen_solver="dense")


class IsomapProjection(_ManifoldEmbedding):
    """Isomap (Tenenbaum, de Silva & Langford, Science 2000; the lecture): classical MDS of the
    geodesic distances of the k-NN graph, via scikit-learn (dense eigensolver, deterministic)."""

    info = BaselineInfo("Isomap", "combination", False, "O(q^2 log q + q^3)",
                        "Tenenbaum, de Silva & Langford, Science 2000; " + _REF_LECTURE)

    def _model(self, n_components, n_neighbors):
        from sklearn.manifold import Isomap

        return Isomap(n_neighbors=n_neighbors, n_components=n_components, eigen_solver="dense")


class SDRSI(_Projection):
    """Sufficient dimensionality reduction with side information (Globerson, Chechik & Tishby,
    UAI 2003), the next best method after Q-alpha-SI in Shashua & Wolf's AR-faces comparison
    (ECCV 2004, Sec. 6): each sample as a distribution over its features, reduced to the
    expectations of ``n_components`` functions of the features that keep the information about
    the main samples and lose the side samples' (:func:`core.selection.sdr.sdr_si`). The data must be
    non-negative (counts, intensities). ``gamma`` weighs the side information; the fit's
    convergence is in ``result_``."""

    info = BaselineInfo("SDR-SI", "combination", False, "O((q + p) n d) per iteration",
                        "Globerson, Chechik & Tishby, UAI 2003; Shashua & Wolf, ECCV 2004, Sec. 6")
    needs_side = True
    models_counts = True

    def __init__(self, n_components: int = 10, gamma: float = 1.0, max_iter: int = 500, tol: float = 1e-5):
        super().__init__(n_components)
        self.gamma, self.max_iter, self.tol = gamma, max_iter, tol

    def fit(self, X, side=None):
        from .sdr import sdr_si

        X, side = self._check(X, side)
        d = min(self.n_components, X.shape[1] - 1)
        # sdr_si warns ConvergenceWarning itself when it does not converge
        self.result_ = sdr_si(X, side, d, gamma=self.gamma, max_iter=self.max_iter, tol=self.tol)
        self.components_ = self.result_.feature_directions.T
        return self

    def transform(self, X):
        if not hasattr(self, "result_"):
            raise InputError("Call fit before transform.")
        return self.result_.transform(X)


PROJECTIONS: dict[str, type] = {"pca": PCAProjection, "cpca": CPCA, "opca": OPCA, "sdr_si": SDRSI,
                                "kernel_pca": KernelPCAProjection, "lpp": LPP, "lle": LLEProjection,
                                "isomap": IsomapProjection}


def make_projection(method: str, n_components: int = 10, **options):
    """A feature-combination baseline by name (see :data:`PROJECTIONS`)."""
    if method not in PROJECTIONS:
        raise InputError(f"Unknown projection {method!r}; choose one of {', '.join(PROJECTIONS)}.")
    return PROJECTIONS[method](n_components, **options)
