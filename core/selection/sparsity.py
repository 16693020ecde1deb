"""The sparsity of Q-alpha's weights: where the sorted weights break and how clearly, how many
features to select when nobody says, and the simulation behind the positivity of the weights.

* :func:`find_sparsity_gap` / :func:`sparsity_gap` -- the break in the sorted weights ([WS03] Sec. 4,
  [Sha] "sparsity gap").
* :func:`default_k` / :func:`weight_share_count` -- the count a page selects before the user chooses.
* :func:`positive_eigenvector_probability` -- the simulation of [WS03] Fig. 1a.

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
.. [Sha] A. Shashua, "A new paradigm for feature selection" (talk).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from ._spectral import orient
from ..errors import InputError
from ..validation import check_positive_int as _check_positive_int
from ..validation import check_real as _check_real

__all__ = ["GAP_CLEAR", "DEFAULT_WEIGHT_SHARE", "SparsityGap", "DefaultK", "PositivityResult", "find_sparsity_gap",
           "sparsity_gap", "weight_share_count", "default_k", "positive_eigenvector_probability"]

#: A sparsity gap is called clear when the two groups of weights it separates explain at least
#: this share of the weights' variance (:func:`find_sparsity_gap`). Measured on the bundled
#: sets: sorted weights that fall smoothly (every face and gene set, with and without side
#: classes) score 0.63-0.82; planted relevant features (Weston 0.98, madelon 0.93, Ben-Dor 0.89)
#: and wine with a side class (0.85) stand out.
GAP_CLEAR = 0.85


@dataclass(frozen=True)
class SparsityGap:
    """Outcome of :func:`find_sparsity_gap`.

    Attributes
    ----------
    n_selected : int
        Number of weights in the high group (at least 1).
    separability : float
        Share of the weights' variance explained by the split into the two groups (between-group
        over total variance, Otsu's eta), in [0, 1]: 1 when the weights take two values, 0.75
        for weights spread evenly between their extremes, 0 when all are equal.
    ratio : float
        Mean of the high group over the mean of the low group (``inf`` when the low group's mean
        is not positive).
    clear : bool
        Whether ``separability >= threshold``: the weights break into a few high values and a
        tail, rather than falling smoothly.
    threshold : float
        The separability a clear gap needs.
    """

    n_selected: int
    separability: float
    ratio: float
    clear: bool
    threshold: float = GAP_CLEAR



@dataclass(frozen=True, eq=False)
class PositivityResult:
    """Outcome of :func:`positive_eigenvector_probability` ([WS03] Fig. 1a)."""

    n_values: np.ndarray
    probability: np.ndarray
    n_trials: int
    mean: float
    std: float


def find_sparsity_gap(alpha, threshold: float = GAP_CLEAR) -> SparsityGap:
    """Where the sorted weights break, and how clearly ([WS03] Sec. 4, [Sha] "sparsity gap").

    The sorted weights of Q-alpha often fall into a few high values and a long tail near zero.
    The break is found as the two-group split of the sorted weights with the largest
    between-group variance (Otsu's criterion on the 1-D values). The split exists for any
    weights; whether it is a gap is measured by the share of the weights' variance that the
    split explains (``separability``): on weights that fall smoothly it stays near the 0.75 of
    evenly spread values, where a few features stand out it approaches 1.

    Parameters
    ----------
    alpha : array_like, shape (n_features,)
    threshold : float, default GAP_CLEAR
        The separability from which the gap counts as clear (see :data:`GAP_CLEAR`).

    Returns
    -------
    SparsityGap
    """
    alpha = np.asarray(alpha, dtype=np.float64).ravel()
    if alpha.size == 0:
        raise InputError("alpha is empty.")
    if not np.isfinite(alpha).all():
        raise InputError("alpha contains NaN or infinite values.")
    threshold = _check_real(threshold, "threshold", low=0.0, high=1.0)
    if alpha.size == 1:
        return SparsityGap(1, 0.0, float("inf") if alpha[0] > 0 else 1.0, False, threshold)
    values = np.sort(alpha)[::-1]
    n = values.size
    head = np.arange(1, n)  # size of the high group
    cumulative = np.cumsum(values)[:-1]
    high_mean = cumulative / head
    low_mean = (values.sum() - cumulative) / (n - head)
    between = head * (n - head) * (high_mean - low_mean) ** 2 / n ** 2
    best = int(np.argmax(between))
    total = float(values.var())
    # weights equal to rounding have no split worth the name
    separability = float(min(between[best] / total, 1.0)) if total > (1e-12 * np.abs(values).max()) ** 2 else 0.0
    ratio = float(high_mean[best] / low_mean[best]) if low_mean[best] > 0 else float("inf")
    return SparsityGap(int(head[best]), separability, ratio, separability >= threshold, threshold)


#: Share of the squared weight that the default selection holds when the sorted weights show no
#: clear sparsity gap (:func:`default_k`).
DEFAULT_WEIGHT_SHARE = 0.5


@dataclass(frozen=True)
class DefaultK:
    """Outcome of :func:`default_k`: the count ``k`` and the rule that chose it, in words."""

    k: int
    rule: str


def weight_share_count(alpha, share: float = DEFAULT_WEIGHT_SHARE) -> int:
    """The smallest number of features whose weights hold ``share`` of the squared weight.

    With the sorted positive weights ``a_1 >= a_2 >= ...``, the smallest ``K`` with
    ``sum_{i<=K} a_i^2 >= share * sum_i a_i^2`` (negative weights, possible with side information,
    count as 0: they mark features the criterion pushes away). Q-alpha's alpha has unit norm, so
    without negative weights the total is 1 and the ``K`` features hold half of ``||alpha||^2``.
    """
    alpha = np.asarray(alpha, dtype=np.float64).ravel()
    if alpha.size == 0 or not np.isfinite(alpha).all():
        raise InputError("alpha must be a non-empty vector of finite weights.")
    if not 0.0 < share <= 1.0:
        raise InputError(f"share must be in (0, 1]; got {share}.")
    squared = np.sort(np.maximum(alpha, 0.0))[::-1] ** 2
    total = squared.sum()
    if total == 0.0:
        return int(alpha.size)
    return int(min(np.searchsorted(np.cumsum(squared), share * total * (1.0 - 1e-12)) + 1, alpha.size))


def default_k(alpha, gap: SparsityGap | None = None, share: float = DEFAULT_WEIGHT_SHARE) -> DefaultK:
    """The number of features a page selects before the user chooses: the count above the
    sparsity gap when the gap is clear ([WS03] Sec. 4), else :func:`weight_share_count`.

    Where the weights fall smoothly the gap's best split is an arbitrary point of a smooth curve
    (about 40% of the pixels of the AR faces); half of the squared weight is a stated rule that
    keeps the features carrying most of the weighting (20% of the AR pixels;
    ``benchmarks/bench_default_k.py`` checks it on every bundled set against half the features).
    """
    gap = find_sparsity_gap(alpha) if gap is None else gap
    if gap.clear:
        return DefaultK(int(gap.n_selected), "sparsity gap")
    return DefaultK(weight_share_count(alpha, share), f"{share:.0%} of the squared weight")


def sparsity_gap(alpha) -> int:
    """Number of features above the break in the sorted weights: ``find_sparsity_gap(alpha).n_selected``.

    Parameters
    ----------
    alpha : array_like, shape (n_features,)

    Returns
    -------
    int
    """
    return find_sparsity_gap(alpha).n_selected


def positive_eigenvector_probability(n_values, n_trials=200, mean=1.0 / 6.0,
                                     std=np.sqrt(2.0) / 6.0, random_state=None) -> PositivityResult:
    """Probability that the leading eigenvector of a random symmetric G is non-negative ([WS03] Fig. 1a).

    ``G`` is symmetric with i.i.d. ``N(mean, std^2)`` entries on and above the diagonal; the
    leading eigenvector (sign fixed so that it sums to a positive number) counts as positive when
    none of its entries is negative. The defaults are the distribution of [WS03] Proposition 2.
    """
    n_values = np.atleast_1d(np.asarray(n_values))
    if n_values.ndim != 1 or n_values.size == 0 or not np.issubdtype(n_values.dtype, np.integer) \
            or n_values.min() < 1:
        raise InputError("n_values must be a list of positive integers (matrix sizes).")
    n_trials = _check_positive_int(n_trials, "n_trials")
    if not std >= 0:
        raise InputError(f"std must be non-negative; got {std!r}.")
    rng = np.random.default_rng(random_state)
    probability = np.empty(n_values.size)
    for index, n in enumerate(n_values):
        positive = 0
        for _ in range(n_trials):
            upper = np.triu(rng.normal(mean, std, size=(n, n)))
            G = upper + np.triu(upper, 1).T
            _, vector = linalg.eigh(G, subset_by_index=[n - 1, n - 1])
            vector = orient(vector[:, 0])
            positive += bool(np.all(vector >= 0))
        probability[index] = positive / n_trials
    return PositivityResult(n_values=n_values, probability=probability, n_trials=n_trials,
                            mean=float(mean), std=float(std))
