"""What the scoring baselines share, private: their result types, the checks and helpers of
several scorers, and the neighbour and RBF graphs of the graph-based ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..matrix import dense_matrix
from ..matrix.neighbours import stable_nearest
from ..progress import warn_not_converged
from ..validation import check_positive_int, check_real

_REF_LECTURE = "lecture on feature extraction and selection"


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
    #: features with no spread over the samples: scored ``-inf`` and ranked last, in index order
    constant_features: np.ndarray = None


@dataclass(frozen=True, eq=False)
class IterativeScores:
    """Scores of an iterative selector with its convergence: the objective after each iteration,
    the step of the scores in each (:func:`score_step`), and ``criterion``, which says in words
    what ``converged`` measured and how far from their limit the scores may still be."""

    scores: np.ndarray
    objective_history: np.ndarray
    converged: bool
    #: what a reader should know about how the answer was reached (an ill-posed step), or ""
    note: str = ""
    #: :func:`score_step` of each iteration after the first
    score_steps: np.ndarray = None
    #: what ``converged`` means for this run, in words (:func:`step_criterion`)
    criterion: str = ""

    @property
    def n_iter(self) -> int:
        return int(self.objective_history.size)


def score_step(previous, current) -> float:
    """The largest change of a score between two iterations, relative to the largest score now:
    the step test of the iterative selectors (UDFS, NDFS), taken on what they rank."""
    largest = float(np.abs(current).max(initial=0.0))
    change = float(np.abs(np.asarray(current) - previous).max(initial=0.0))
    return change / largest if largest > 0 else (0.0 if change == 0 else np.inf)


#: iterations over which :func:`step_criterion` reads the rate at which the steps shrink
RATE_WINDOW = 10


def step_criterion(steps, tol) -> str:
    """What a step test measured, said plainly: the last step against ``tol``, the rate at which
    the steps shrank over the last :data:`RATE_WINDOW` iterations, and what that rate implies.

    A step test is not a certificate of stationarity. Where the iteration contracts linearly at a
    rate ``rho`` per iteration, the iterate's distance to its limit is about ``step rho / (1 -
    rho)``: at ``rho = 0.996`` (UDFS on colon's 500 most variable genes) 250 times the last step.
    """
    steps = np.asarray(steps, dtype=np.float64)
    if steps.size == 0:
        return "one iteration only: no step was measured"
    last = steps[-1]
    said = f"the largest change of a score in the last iteration was {last:.2g} of the largest score (tol {tol:.2g})"
    recent = steps[-(RATE_WINDOW + 1):]
    if recent.size < 3 or np.any(recent <= 0):
        return said + "; too few iterations to read the rate at which the steps shrink"
    rate = float(np.exp(np.mean(np.diff(np.log(recent)))))
    if rate >= 1:
        return said + f"; the steps were not shrinking (x{rate:.3g} per iteration over the last {recent.size - 1})"
    return (said + f"; the steps shrank x{rate:.3g} per iteration over the last {recent.size - 1}, so the scores "
            f"may still be about {last * rate / (1 - rate):.2g} of the largest from their limit (a step test, "
            "not a certificate of stationarity)")


def _scores_of(result, name):
    if not result.converged:
        warn_not_converged(name, result.n_iter, stacklevel=4)
    return result.scores


def _one_vs_rest(y):
    classes = np.unique(y)
    if classes.size < 2:
        raise InputError("These scores need labels with at least two classes.")
    return [(y == c) for c in (classes[1:] if classes.size == 2 else classes)]


def _safe_divide(a, b):
    return np.divide(a, b, out=np.zeros_like(a, dtype=np.float64), where=b > 0)


#: within-class variance at most this share of the total counts as none (float64 rounding of a
#: constant group's mean leaves ~1e-33, not 0)
_NO_SPREAD = 1e-12


def _separating(between, within):
    """The features that separate the classes perfectly: some between-class scatter and none
    within (up to :data:`_NO_SPREAD` of the total)."""
    return (within <= _NO_SPREAD * (between + within)) & (between > 0)


def _separators_first(scores, separators, strength):
    """``scores`` with the features of ``separators`` (a perfect separation: no spread within the
    classes, some between; an infinite ratio) ranked above every other, finitely, in the order of
    their ``strength``: ``(top + 1) * (1 + strength / max strength)``, ``top`` the largest score
    of the others (as scikit-learn's ``f_classif`` ranks them first with ``inf``, but keeping every
    score a number). Modifies and returns ``scores``."""
    if separators.any():
        top = np.abs(scores[~separators]).max(initial=0.0)
        scores[separators] = (top + 1) * (1 + strength[separators] / strength[separators].max())
    return scores


def _ranked_scores(order, n_features, then=None):
    """Scores of a greedy selection: the ``order`` chosen first scores highest; the features it
    did not reach follow below every chosen one, by ``then`` (a score of every feature, largest
    first: what the greedy search's first step ranks by), so that the ranking covers every feature
    and ``SelectKBest`` with a ``k`` past the greedy steps takes the next by that score, not by
    column index. Without ``then`` they tie (finite, as every score here)."""
    order = [int(f) for f in order]
    if then is not None:
        reached = set(order)
        order += [int(f) for f in np.argsort(-np.asarray(then, dtype=np.float64), kind="stable") if f not in reached]
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
    neighbours = stable_nearest(distances, n_neighbors).ravel()
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


def rbf_similarity(X, sigma2=None):
    """``S_ij = exp(-|x_i - x_j|^2 / (2 sigma2))`` between all samples; ``sigma2`` by default half
    the mean squared distance between two samples (unit-free)."""
    distances = _squared_distances(X)
    if sigma2 is None:
        sigma2 = float(distances.sum() / max(X.shape[0] * (X.shape[0] - 1), 1)) / 2 or 1.0
    elif not sigma2 > 0:
        raise InputError(f"The RBF kernel's width sigma2 must be positive; got {sigma2}.")
    return np.exp(-distances / (2 * sigma2))
