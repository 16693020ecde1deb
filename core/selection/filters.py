"""Filter baselines: a score per feature from statistics of the data (and labels), no model fitted.

Variance, dispersion, Pearson, Fisher, mutual information, Kolmogorov-Smirnov, the Laplacian
score, ReliefF / SURF / MultiSURF and FSCA (mRMR and the other
information-theoretic filters are in :mod:`.information`); registered in :data:`core.selection.scorers.SCORERS`
with their citations.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..data.transforms import dispersion_ranking
from ..errors import InputError
from ..matrix import data_matrix
from ._scoring import (_one_vs_rest, _safe_divide, _ranked_scores, _separating, _separators_first,
                       _squared_distances, knn_graph)

__all__ = ["variance_score", "dispersion_score", "pearson_score", "fisher_score", "discrete_mutual_information",
           "DISCRETE_LEVELS", "discrete_feature_mask", "mutual_information_score", "ks_score", "laplacian_score",
           "RELIEF_METRICS", "relieff_score", "surf_score", "multisurf_score", "discretise", "fsca_score"]


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


def _class_scatters(overall, groups):
    """Each feature's between-class scatter ``sum_c n_c (mean_c - mean)^2`` and within-class
    scatter ``sum_c sum_{i in c} (x_i - mean_c)^2``, from class moments."""
    between = sum(group.count * (group.mean - overall.mean) ** 2 for group in groups)
    within = sum(group.centred for group in groups)
    return between, within


def _fisher_of(overall, groups):
    between, within = _class_scatters(overall, groups)
    separators = _separating(between, within)
    return _separators_first(_safe_divide(between, np.where(separators, 0.0, within)), separators, between)


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
