"""Information-theoretic filters on discretised features: the conditional-likelihood family of
Brown et al. (MIM, MIFS, mRMR, CIFE, JMI, CMIM, ICAP, DISR) on one greedy core, and the
symmetric-uncertainty filters FCBF and CFS; registered in :data:`core.selection.scorers.SCORERS`.

Every criterion scores a candidate feature ``X_k`` against the class ``Y`` and the features ``S``
already chosen, from three quantities the core keeps per candidate: the relevance ``I(X_k; Y)``,
the redundancy ``I(X_k; X_j)`` and the conditional redundancy ``I(X_k; X_j | Y)`` for each chosen
``X_j``. The linear criteria of [BPZL12]_ Eq. 10 are

    ``J(X_k) = I(X_k; Y) - beta * sum_{j in S} I(X_k; X_j) + gamma * sum_{j in S} I(X_k; X_j | Y)``

with ``beta`` and ``gamma`` as each criterion's paper sets them (:data:`INFORMATION_CRITERIA`);
CMIM, ICAP and DISR are non-linear in the same quantities. ``I(X_k; X_j | Y)`` is computed as
``I(X_k; (X_j, Y)) - I(X_k; Y)`` (the chain rule), so a step costs two contingency-table passes
over all candidates at once, ``O(q n)``, never a loop over pairs.

Continuous features are discretised to three states, ``mean +- width * std``, as Peng, Long &
Ding (2005, Sec. 4) do; discrete ones keep their values (:func:`.filters.discretise`).

References
----------
.. [BPZL12] G. Brown, A. Pocock, M.-J. Zhao and M. Luján, "Conditional likelihood maximisation: a
   unifying framework for information theoretic feature selection", JMLR 13, 2012.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ..errors import InputError
from ..validation import check_positive_int, check_real
from ._scoring import _ranked_scores
from .filters import discrete_mutual_information, discretise

__all__ = ["InformationCriterion", "INFORMATION_CRITERIA", "information_order", "information_score", "MRMR_CRITERIA",
           "mrmr_score", "symmetric_uncertainty", "fcbf_score", "cfs_score"]


@dataclass(frozen=True)
class InformationCriterion:
    """One criterion of the family: its citation and, for the linear ones, ``beta`` and ``gamma``
    as functions of the number of features chosen (``None``: a non-linear criterion)."""

    name: str
    citation: str
    beta: object = None
    gamma: object = None


def _constant(value):
    return lambda chosen: value


def _mean(chosen):
    return 1.0 / chosen


#: Every criterion of the family, by the name :func:`information_score` takes. MIFS's ``beta``
#: is a parameter in Battiti's paper (0.5 to 1 recommended); 0.5 is the default here, as in
#: scikit-feature, and ``beta=`` changes it.
INFORMATION_CRITERIA: dict[str, InformationCriterion] = {
    "mim": InformationCriterion("MIM, mutual information maximisation", "Lewis, HLT 1992; [BPZL12] Sec. 3",
                                _constant(0.0), _constant(0.0)),
    "mifs": InformationCriterion("MIFS", "Battiti, IEEE TNN 5(4) 1994, Eq. 4", _constant(0.5), _constant(0.0)),
    "mrmr": InformationCriterion("mRMR", "Peng, Long & Ding, TPAMI 2005, Eq. 7", _mean, _constant(0.0)),
    "cife": InformationCriterion("CIFE", "Lin & Tang, ECCV 2006, Eq. 5", _constant(1.0), _constant(1.0)),
    "jmi": InformationCriterion("JMI", "Yang & Moody, NIPS 1999; [BPZL12] Eq. 13", _mean, _mean),
    "cmim": InformationCriterion("CMIM", "Fleuret, JMLR 5 2004, Eq. 3"),
    "icap": InformationCriterion("ICAP", "Jakulin, PhD thesis 2005; [BPZL12] Eq. 15"),
    "disr": InformationCriterion("DISR", "Meyer & Bontempi, EvoWorkshops 2006, Eq. 8"),
}


def _entropies(codes, n_levels):
    """Plug-in entropy (nats) of each column of ``codes`` (levels ``0 .. n_levels - 1``)."""
    q, n = codes.shape
    width = int(n_levels.max())
    counts = np.bincount((np.arange(n)[None, :] * width + codes).ravel(), minlength=n * width).reshape(n, width)
    p = counts / q
    return -special.xlogy(p, p).sum(axis=1)


def _discrete_target(y):
    classes, target = np.unique(np.asarray(y), return_inverse=True)
    return target.astype(np.int64), int(classes.size)


def information_order(codes, n_levels, target, n_target, criterion, n_features_to_select, beta=None):
    """The greedy order of ``criterion`` (a key of :data:`INFORMATION_CRITERIA`) over discrete
    features, and each chosen feature's criterion value when it was chosen.

    Parameters
    ----------
    codes : ndarray of int, shape (n_samples, n_features)
        Each feature's level codes ``0 .. n_levels - 1``.
    n_levels : ndarray of int, shape (n_features,)
    target, n_target : ndarray of int, int
        The class codes ``0 .. n_target - 1``.
    criterion : str
    n_features_to_select : int
    beta : float, optional
        MIFS's ``beta`` (ignored by the others, whose paper fixes it).

    Returns
    -------
    order : list of int
    merits : list of float

    Every criterion starts from the most relevant feature ([BPZL12] Sec. 3; DISR's sum is empty
    then). Ties go to the lowest index.
    """
    spec = INFORMATION_CRITERIA[criterion]
    n = codes.shape[1]
    relevance = discrete_mutual_information(codes, n_levels, target, n_target)
    redundancy = np.zeros(n)          # sum_j I(X_k; X_j)
    conditional = np.zeros(n)         # sum_j I(X_k; X_j | Y)
    worst = np.full(n, -np.inf)       # CMIM: max_j I(X_k; X_j) - I(X_k; X_j | Y)
    interaction = np.zeros(n)         # ICAP: sum_j max(0, I(X_k; X_j) - I(X_k; X_j | Y))
    symmetric = np.zeros(n)           # DISR: sum_j I(X_k X_j; Y) / H(X_k X_j Y)
    entropy = _entropies(codes, n_levels) if criterion == "disr" else None
    uses_class_given = spec.gamma is None or spec.gamma(1) != 0  # a non-linear criterion, or gamma > 0
    chosen = np.zeros(n, dtype=bool)
    order, merits = [], []
    for step in range(int(min(n_features_to_select, n))):
        if step == 0:
            merit = relevance.copy()
        elif spec.beta is not None:
            weight = beta if (criterion == "mifs" and beta is not None) else spec.beta(step)
            merit = relevance - weight * redundancy + spec.gamma(step) * conditional
        elif criterion == "cmim":
            merit = relevance - worst
        elif criterion == "icap":
            merit = relevance - interaction
        else:
            merit = symmetric.copy()
        merit[chosen] = -np.inf
        best = int(np.argmax(merit))
        order.append(best)
        merits.append(float(merit[best]))
        chosen[best] = True
        if step + 1 == n_features_to_select:
            break
        levels = int(n_levels[best])
        with_chosen = discrete_mutual_information(codes, n_levels, codes[:, best], levels)
        redundancy += with_chosen
        if not uses_class_given:  # MIFS, mRMR: no conditional term, so half the cost of a step
            continue
        joint = codes[:, best] * n_target + target  # (X_j, Y) as one variable
        with_joint = discrete_mutual_information(codes, n_levels, joint, levels * n_target)
        given_class = with_joint - relevance
        conditional += given_class
        worst = np.maximum(worst, with_chosen - given_class)
        interaction += np.maximum(0.0, with_chosen - given_class)
        if criterion == "disr":
            # I(X_k X_j; Y) = I(X_j; Y) + I(X_k; (X_j, Y)) - I(X_k; X_j), and
            # H(X_k X_j Y) = H(X_j, Y) + H(X_k) - I(X_k; (X_j, Y))
            joint_entropy = _entropies(joint[:, None], np.array([levels * n_target]))[0]
            together = relevance[best] + with_joint - with_chosen
            symmetric += np.divide(together, joint_entropy + entropy - with_joint,
                                   out=np.zeros(n), where=joint_entropy + entropy - with_joint > 0)
    return order, merits


def information_score(X, y, criterion="jmi", n_features_to_select=100, width=1.0, discrete_features="auto",
                      beta=None):
    """Scores of one criterion of the conditional-likelihood family ([BPZL12]_; see
    :data:`INFORMATION_CRITERIA`): the ``n_features_to_select`` chosen in greedy order score
    highest, in that order; the others follow by their relevance ``I(X_k; Y)``."""
    if criterion not in INFORMATION_CRITERIA:
        raise InputError(f"Unknown criterion {criterion!r}; choose one of {', '.join(INFORMATION_CRITERIA)}.")
    n_features_to_select = check_positive_int(n_features_to_select, "n_features_to_select")
    if beta is not None:
        beta = check_real(beta, "beta", low=0.0)
    codes, n_levels = discretise(X, check_real(width, "width", low=0.0, low_open=True), discrete_features)
    target, n_target = _discrete_target(y)
    if criterion == "mim":  # no redundancy term: the order is the relevance's, for every feature
        return discrete_mutual_information(codes, n_levels, target, n_target)
    order, _ = information_order(codes, n_levels, target, n_target, criterion, n_features_to_select, beta)
    return _ranked_scores(order, X.shape[1], then=discrete_mutual_information(codes, n_levels, target, n_target))


MRMR_CRITERIA = ("difference", "quotient")


def mrmr_score(X, y, n_features_to_select=100, criterion="difference", width=1.0, discrete_features="auto"):
    """mRMR, minimum redundancy maximum relevance (Peng, Long & Ding, TPAMI 2005, Eqs. 6-9).

    ``"difference"`` (MID, Eq. 7) is the family's linear criterion with ``beta = 1 / |S|``,
    ``gamma = 0`` (:func:`information_score`); ``"quotient"`` (MIQ, Eq. 9) divides the relevance by
    the mean redundancy instead.
    """
    if criterion not in MRMR_CRITERIA:
        raise InputError(f"mRMR's criterion must be one of {', '.join(MRMR_CRITERIA)}; got {criterion!r}.")
    if criterion == "difference":
        return information_score(X, y, "mrmr", n_features_to_select, width, discrete_features)
    codes, n_levels = discretise(X, width, discrete_features)
    target, n_target = _discrete_target(y)
    relevance = discrete_mutual_information(codes, n_levels, target, n_target)
    redundancy = np.zeros(X.shape[1])
    chosen = np.zeros(X.shape[1], dtype=bool)
    order = []
    for step in range(int(min(n_features_to_select, X.shape[1]))):
        merit = relevance / np.maximum(redundancy / step, 1e-12) if step else relevance.copy()
        merit[chosen] = -np.inf
        best = int(np.argmax(merit))
        order.append(best)
        chosen[best] = True
        redundancy += discrete_mutual_information(codes, n_levels, codes[:, best], int(n_levels[best]))
    return _ranked_scores(order, X.shape[1], then=relevance)


def symmetric_uncertainty(codes, n_levels, other, n_other, entropies=None):
    """``SU(X_k, Z) = 2 I(X_k; Z) / (H(X_k) + H(Z))`` for each column of ``codes`` against the
    discrete ``other`` (Press et al., Numerical Recipes, Sec. 14.7; 0 where both are constant).
    ``entropies``: the columns' own, when a caller that asks many times has them already."""
    information = discrete_mutual_information(codes, n_levels, other, n_other)
    own = _entropies(codes, n_levels) if entropies is None else entropies
    total = own + _entropies(np.asarray(other)[:, None], np.array([n_other]))[0]
    return np.divide(2.0 * information, total, out=np.zeros_like(information), where=total > 0)


def fcbf_score(X, y, delta=0.0, width=1.0, discrete_features="auto"):
    """FCBF, the fast correlation-based filter (Yu & Liu, ICML 2003, Fig. 1).

    Features whose symmetric uncertainty with the class exceeds ``delta`` are taken in decreasing
    order of it; each one taken removes every later feature ``X_q`` it predicts at least as well
    as the class does (``SU(X_p, X_q) >= SU(X_q, Y)``). The predominant features left rank first,
    in that order; the removed and the irrelevant follow in decreasing ``SU(X, Y)``, so that the
    ranking covers every feature.
    """
    delta = check_real(delta, "delta", low=0.0)
    codes, n_levels = discretise(X, check_real(width, "width", low=0.0, low_open=True), discrete_features)
    target, n_target = _discrete_target(y)
    entropies = _entropies(codes, n_levels)
    with_class = symmetric_uncertainty(codes, n_levels, target, n_target, entropies)
    by_relevance = np.argsort(-with_class, kind="stable")
    alive = with_class > delta
    predominant = []
    for p in by_relevance:
        if not alive[p]:
            continue
        predominant.append(int(p))
        alive[p] = False
        redundant = symmetric_uncertainty(codes, n_levels, codes[:, p], int(n_levels[p]), entropies) >= with_class
        alive &= ~redundant
    taken = set(predominant)
    rest = [int(f) for f in by_relevance if f not in taken]
    return _ranked_scores(predominant + rest, X.shape[1])


def cfs_score(X, y, n_features_to_select=100, width=1.0, discrete_features="auto"):
    """CFS, correlation-based feature selection (Hall, PhD thesis 1999, Eq. 4.1; ICML 2000).

    The merit of a subset ``S`` of ``k`` features is ``k r_cf / sqrt(k + k (k - 1) r_ff)``, with
    ``r_cf`` the mean symmetric uncertainty of its features with the class and ``r_ff`` the mean
    over its pairs. Forward search: each step adds the feature that gives the subset the largest
    merit; the ``n_features_to_select`` added rank in that order, the others below by their ``r_cf``.
    """
    n_features_to_select = check_positive_int(n_features_to_select, "n_features_to_select")
    codes, n_levels = discretise(X, check_real(width, "width", low=0.0, low_open=True), discrete_features)
    target, n_target = _discrete_target(y)
    entropies = _entropies(codes, n_levels)
    with_class = symmetric_uncertainty(codes, n_levels, target, n_target, entropies)
    n = X.shape[1]
    class_sum, pair_sum = 0.0, 0.0
    with_chosen = np.zeros(n)  # sum over the chosen of SU(X_k, X_j), per candidate
    chosen = np.zeros(n, dtype=bool)
    order = []
    for size in range(1, int(min(n_features_to_select, n)) + 1):
        spread = size + 2.0 * (pair_sum + with_chosen)
        merit = np.divide(class_sum + with_class, np.sqrt(spread), out=np.zeros(n), where=spread > 0)
        merit[chosen] = -np.inf
        best = int(np.argmax(merit))
        order.append(best)
        chosen[best] = True
        class_sum += with_class[best]
        pair_sum += with_chosen[best]
        with_chosen += symmetric_uncertainty(codes, n_levels, codes[:, best], int(n_levels[best]), entropies)
    return _ranked_scores(order, n, then=with_class)
