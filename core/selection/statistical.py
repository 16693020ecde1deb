"""Statistical filters from class-wise statistics: chi-square, Welch's t, the Gini index and the
trace ratio; registered in :data:`core.selection.scorers.SCORERS`.

Chi-square, t and the trace ratio need only per-class column moments (count, mean, centred sum of
squares), so they read the data once, sparse or chunked too (``_*_of`` take the moments of
:func:`core.selection.filters._moments_by_class`). The Gini index needs each feature's order.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..validation import check_positive_int
from ._scoring import _safe_divide, _separating, _separators_first
from .filters import _class_scatters, _moments_by_class

__all__ = ["chi_square_score", "t_score", "gini_score", "trace_ratio_score", "trace_ratio_subset"]


def chi_square_score(X, y):
    """Pearson's chi-square statistic of each feature read as counts against the class (as
    scikit-learn's ``chi2``, Yang & Pedersen, ICML 1997, Sec. 2.5): observed ``O_c = sum_{i in c}
    x_i``, expected ``E_c = (n_c / q) sum_i x_i``, ``chi2 = sum_c (O_c - E_c)^2 / E_c``.
    Values must be non-negative (counts, frequencies, intensities)."""
    return _chi_square_of(*_moments_by_class(X, y))


def _chi_square_of(overall, groups):
    if len(groups) < 2:
        raise InputError("Chi-square needs labels with at least two classes.")
    if (overall.minimum < 0).any():
        raise InputError("Chi-square reads the values as counts and needs them non-negative; these data have "
                         "negatives. Choose another method, or shift the data on the Data page.")
    total = overall.count * overall.mean
    statistic = np.zeros(overall.mean.size)
    for group in groups:
        expected = total * (group.count / overall.count)
        statistic += _safe_divide((group.count * group.mean - expected) ** 2, expected)
    return statistic


def t_score(X, y):
    """Welch's t statistic, ``|mean_1 - mean_2| / sqrt(s_1^2 / n_1 + s_2^2 / n_2)`` with the
    unbiased class variances (Welch, Biometrika 1947); with more than two classes, the largest over
    each class against the rest. A feature constant within both classes but different between
    them separates perfectly: it ranks above every other, by its difference of means."""
    return _t_of(*_moments_by_class(X, y))


#: a mean difference whose standard error is under 1e-12 of it (t above 1e12) is a perfect
#: separation, not a measurement: float64 rounding of constant classes leaves spreads of ~1e-33
_T_NO_SPREAD = 1e-24


def _t_of(overall, groups):
    if len(groups) < 2:
        raise InputError("The t-score needs labels with at least two classes.")
    pairs = [(groups[1], groups[0])] if len(groups) == 2 else [(group, overall.without(group)) for group in groups]
    best = np.zeros(overall.mean.size)
    separating_gap = np.zeros(overall.mean.size)  # the largest difference of means of a perfect separation
    for one, rest in pairs:
        if min(one.count, rest.count) < 2:
            raise InputError("The t-score needs at least 2 samples in each class.")
        spread = one.centred / (one.count - 1) / one.count + rest.centred / (rest.count - 1) / rest.count
        gap = np.abs(one.mean - rest.mean)
        best = np.maximum(best, _safe_divide(gap, np.sqrt(spread)))
        separating_gap = np.maximum(separating_gap, np.where(spread <= _T_NO_SPREAD * gap ** 2, gap, 0.0))
    return _separators_first(best, separating_gap > 0, separating_gap)


def gini_score(X, y):
    """Gini index (Gini 1912; Breiman et al., CART 1984, Sec. 4.3): the largest decrease of the
    class impurity ``1 - sum_c p_c^2`` that one split of the feature, ``x <= v`` against ``x > v``
    at any of its values ``v``, achieves (impurity before minus the sizes-weighted impurity of the
    two sides). Higher is better; a feature that cannot split scores 0."""
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    q, n = X.shape
    indicator = np.eye(classes.size)[codes]
    before = 1.0 - np.sum((indicator.sum(axis=0) / q) ** 2)
    scores = np.zeros(n)
    block = max(1, 4_000_000 // max(q * classes.size, 1))  # a few million values at a time
    sizes = np.arange(1, q)[:, None]
    for start in range(0, n, block):
        part = X[:, start:start + block]
        order = np.argsort(part, axis=0, kind="stable")
        ordered = np.take_along_axis(part, order, axis=0)
        left = np.cumsum(indicator[order], axis=0)[:-1]               # (q - 1, block, classes)
        right = indicator.sum(axis=0) - left
        impurity = (sizes * (1.0 - np.sum((left / sizes[..., None]) ** 2, axis=2))
                    + (q - sizes) * (1.0 - np.sum((right / (q - sizes)[..., None]) ** 2, axis=2))) / q
        impurity[np.diff(ordered, axis=0) == 0] = np.inf              # only between distinct values
        scores[start:start + block] = np.maximum(before - impurity.min(axis=0, initial=before), 0.0)
    return scores


def trace_ratio_score(X, y, n_features_to_select=100):
    """Trace ratio (Nie et al., AAAI 2008, Eq. 6 and Algorithm 1) with the Fisher graphs: the
    subset ``S`` of ``n_features_to_select`` features maximising
    ``sum_{i in S} between_i / sum_{i in S} within_i`` (between- and within-class scatter), found
    exactly by the paper's iteration. Scores are ``between_i - lambda* within_i`` at the optimal
    ratio ``lambda*``, so the optimal subset scores highest; see :func:`trace_ratio_subset`."""
    return _trace_ratio_of(*_moments_by_class(X, y), n_features_to_select=n_features_to_select)


def trace_ratio_subset(between, within, size):
    """The subset of ``size`` features with the largest ``sum between / sum within``, by Nie et
    al.'s iteration: rank by ``between - lambda within``, take the top ``size``, set ``lambda`` to
    their ratio, until the subset repeats. Each pass raises ``lambda`` strictly until then, so it
    ends in at most as many passes as there are subsets and the subset is a global optimum
    (their Theorem 1). Returns the subset, ``lambda*`` and the number of passes.

    Features with no within-class scatter but some between-class make the ratio infinite: they are
    taken first (by ``between``), and the rest of the subset is chosen among the others.
    """
    n = between.size
    size = int(min(size, n))
    separators = _separating(between, within)
    first = np.flatnonzero(separators)[np.argsort(-between[separators], kind="stable")][:size]
    if first.size == size:
        return first, np.inf, 0
    candidates = np.flatnonzero(~separators)
    wanted = size - first.size
    ratio = np.sum(between[candidates]) / max(np.sum(within[candidates]), 1e-300)
    subset = None
    for passes in range(1, 10 * n + 2):
        chosen = candidates[np.argsort(-(between[candidates] - ratio * within[candidates]), kind="stable")[:wanted]]
        if subset is not None and np.array_equal(np.sort(chosen), np.sort(subset)):
            break
        subset = chosen
        ratio = np.sum(between[subset]) / max(np.sum(within[subset]), 1e-300)
    return np.concatenate([first, subset]), ratio, passes


def _trace_ratio_of(overall, groups, n_features_to_select=100):
    if len(groups) < 2:
        raise InputError("The trace ratio needs labels with at least two classes.")
    size = check_positive_int(n_features_to_select, "n_features_to_select")
    between, within = _class_scatters(overall, groups)
    subset, ratio, _ = trace_ratio_subset(between, within, size)
    if not np.isfinite(ratio):  # the subset is all perfect separators: they alone score
        scores = np.zeros(between.size)
        scores[subset] = between[subset]
        return scores
    return _separators_first(between - ratio * within, _separating(between, within), between)
