"""scikit-learn selectors wrapping the library's feature-selection functions.

Each selector follows scikit-learn's ``SelectorMixin`` contract (``fit``, ``transform``,
``get_support``, ``inverse_transform``) so that it can sit in a ``Pipeline`` and be tuned with
``GridSearchCV``. The heavy lifting stays in the functions they wrap.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (check_consistent_length, check_is_fitted, column_or_1d,
                                      validate_data)

from ..errors import InputError
from .sparsity import default_k
from .qalpha import DEFAULT_K, DEFAULT_LAM, DEFAULT_MAX_ITER, q_alpha
from .spca import greedy_pair, scatter_matrices
from .slda import greedy_slda

__all__ = ["QAlphaSelector", "GreedySLDASelector"]


def _selection_size(wanted, n_features: int, accepted: str) -> int:
    """A count (capped at ``n_features``) or a fraction in (0, 1] as a number of features."""
    if isinstance(wanted, (float, np.floating)) and 0 < wanted <= 1:
        return max(1, int(round(wanted * n_features)))
    if isinstance(wanted, (int, np.integer)) and not isinstance(wanted, bool) and wanted >= 1:
        return min(int(wanted), n_features)
    raise InputError(f"n_features_to_select must be {accepted}; got {wanted!r}.")


class QAlphaSelector(SelectorMixin, BaseEstimator):
    """Q-alpha feature selection as a scikit-learn selector (wraps :func:`core.selection.qalpha.q_alpha`).

    Parameters
    ----------
    k : int, optional
        The number of clusters whose coherence the weights maximise (:func:`core.selection.qalpha.q_alpha`'s
        ``k``; :data:`core.selection.qalpha.DEFAULT_K` when left out). Ignored (taken as ``c - 1``)
        when ``supervised=True``.
    n_features_to_select : int, float in (0, 1], or "auto"
        How many of the largest weights to keep: a count, a fraction of the features, or
        ``"auto"`` for the pages' default (:func:`core.selection.sparsity.default_k`): the count above the
        sparsity gap where it is clear, else the fewest features holding half of the squared weight.
    supervised : bool
        Use ``y`` in ``fit`` (the supervised mode of :func:`core.selection.qalpha.q_alpha`); otherwise
        ``y`` is ignored.
    lam : float
        Weight of the side information given to ``fit`` (``side=`` or ``pairs=``;
        :data:`core.selection.qalpha.DEFAULT_LAM` when left out).
    criterion, method, init, n_init, max_iter, tol, solver, random_state
        As in :func:`core.selection.qalpha.q_alpha`.

    Attributes
    ----------
    alpha_ : ndarray, shape (n_features,)
        The feature weights.
    ranking_ : ndarray, shape (n_features,)
        Rank of each feature (1 = largest weight), as in scikit-learn's ``RFE``.
    result_ : QAlphaResult
        The full result (history, convergence, ...).
    k_ : int
        The number of clusters used: ``k``, the number of classes minus one when supervised, or
        ``n_samples - 1`` (with a warning) when ``k`` asks for more clusters than the samples allow.
    n_features_in_ : int
    """

    def __init__(self, k=None, n_features_to_select="auto", *, supervised=False, lam=DEFAULT_LAM,
                 criterion="sum", method="power", init="uniform", n_init=1, max_iter=DEFAULT_MAX_ITER,
                 tol=1e-6, solver="auto", random_state=None):
        self.k = k
        self.n_features_to_select = n_features_to_select
        self.supervised = supervised
        self.lam = lam
        self.criterion = criterion
        self.method = method
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.random_state = random_state

    def fit(self, X, y=None, *, side=None, pairs=None):
        """Compute the weights on ``X`` (and ``y`` when supervised; side data or pairs optional)."""
        X = validate_data(self, X, ensure_min_samples=2, dtype=np.float64)
        if self.supervised:
            if y is None:
                raise InputError("supervised=True needs the labels y in fit(X, y).")
            y = column_or_1d(y, warn=True)
            check_consistent_length(X, y)
            check_classification_targets(y)
            labels, k = y, self.k  # q_alpha refuses a k other than the number of classes minus one
        else:
            labels, k = None, DEFAULT_K if self.k is None else self.k
            if isinstance(k, (int, np.integer)) and not isinstance(k, bool) and X.shape[0] >= 2 and k >= X.shape[0]:
                # fewer samples than clusters: use as many as the data allow, and say so
                warnings.warn(f"k = {k} clusters need more than {X.shape[0]} samples; k = {X.shape[0] - 1} was "
                              "used (k_ records it).", UserWarning, stacklevel=2)
                k = X.shape[0] - 1
        constant = np.ptp(X, axis=0) == 0
        if constant.all():
            # Nothing varies: every feature weighs the same (zero); keep the contract of fit.
            self.result_ = None
            self.alpha_ = np.zeros(X.shape[1])
            self.n_iter_ = 0
        else:
            self.result_ = q_alpha(
                X, k, labels=labels, side=side, pairs=pairs, lam=self.lam,
                criterion=self.criterion, method=self.method, init=self.init,
                n_init=self.n_init, max_iter=self.max_iter, tol=self.tol, solver=self.solver,
                random_state=self.random_state)
            self.alpha_ = self.result_.alpha
            self.n_iter_ = self.result_.n_iter
        self.k_ = self.result_.k if self.result_ is not None else k
        order = np.argsort(-self.alpha_, kind="stable")
        self.ranking_ = np.empty(X.shape[1], dtype=np.intp)
        self.ranking_[order] = np.arange(1, X.shape[1] + 1)
        self.n_selected_ = self._count(X.shape[1])
        return self

    def _count(self, n_features):
        if isinstance(self.n_features_to_select, str) and self.n_features_to_select == "auto":
            return default_k(self.alpha_).k if np.any(self.alpha_) else n_features
        return _selection_size(self.n_features_to_select, n_features, "an int, a fraction or 'auto'")

    def _get_support_mask(self):
        check_is_fitted(self, "ranking_")
        return self.ranking_ <= self.n_selected_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.allow_nan = False
        return tags


class GreedySLDASelector(SelectorMixin, BaseEstimator):
    """Greedy sparse LDA as a scikit-learn selector (wraps :func:`core.selection.slda.greedy_slda`).

    Two classes use the fast rank-1 path (every cardinality at once); more classes use
    :func:`core.selection.spca.greedy_pair` on the between/within-class scatter pair, which solves a
    generalised eigenproblem per candidate and suits up to a few hundred features.

    Parameters
    ----------
    n_features_to_select : int or float in (0, 1]
        Cardinality of the subset (a count or a fraction of the features).
    direction : {"both", "forward", "backward"}
        Greedy pass; "both" keeps the better of the two for the chosen cardinality.
    classes : pair of labels, optional
        With more than two classes in ``y``, restrict to these two (fast path).
    reg : float or None
        Ridge on the within-class scatter (automatic when it is singular).
    solver : {"auto", "dense", "low-rank"}
        How the two-class path is computed (:func:`~core.selection.slda.greedy_slda`): on the
        scatter, or on the samples when they are far fewer than the features; the same choices.

    Attributes
    ----------
    path_ : SLDAPath or PairPath
    ranking_ : ndarray
        Position of each feature in the order of the pass used (1 = chosen first).
    objective_ : float
        The class separability ``lambda_max(A_s, B_s)`` of the selected subset.
    """

    def __init__(self, n_features_to_select=10, *, direction="both", classes=None, reg=None, solver="auto"):
        self.n_features_to_select = n_features_to_select
        self.direction = direction
        self.classes = classes
        self.reg = reg
        self.solver = solver

    def fit(self, X, y):
        X, y = validate_data(self, X, y, ensure_min_samples=2, dtype=np.float64)
        check_classification_targets(y)
        n_features = X.shape[1]
        k = _selection_size(self.n_features_to_select, n_features, "a positive int or a fraction in (0, 1]")
        labels = np.unique(y)
        if self.classes is not None or labels.size == 2:
            self.path_ = greedy_slda(X, y, classes=self.classes, direction=self.direction, reg=self.reg,
                                     solver=self.solver)
        else:
            A, B, _ = scatter_matrices(X, y, reg=self.reg)
            self.path_ = greedy_pair(A, B, direction=self.direction)
        chosen = self.path_.dual_pass(k)
        order = getattr(self.path_, f"{chosen}_order")
        self.objective_ = float(getattr(self.path_, f"{chosen}_objective")[k - 1])
        self.ranking_ = np.empty(n_features, dtype=np.intp)
        self.ranking_[order] = np.arange(1, n_features + 1)
        self.n_selected_ = k
        return self

    def _get_support_mask(self):
        check_is_fitted(self, "ranking_")
        return self.ranking_ <= self.n_selected_
