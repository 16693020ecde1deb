"""The competitors of Q-alpha and sparse LDA, behind two common interfaces.

* Feature scores (a score per feature, higher = more relevant, and the ranking it implies):
  :func:`score_features(method, X, y, **options) <score_features>` with ``method`` in
  :data:`SCORERS` -- filters, wrappers and embedded selectors.
* Feature combinations (projections fitted on training data and applied to new data), as [000]
  Sec. 6 compares against: :func:`make_projection(method, n_components, **options)
  <make_projection>` with ``method`` in :data:`PROJECTIONS`; each object has
  ``fit(X, side=None)`` and ``transform(X)`` and learns only from what ``fit`` is given.

Every method carries a :class:`BaselineInfo`: whether it needs labels, what it costs and where
it comes from. scikit-learn does the work where it already does it well.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import linalg, stats

from .errors import InputError
from .validation import as_data_matrix, as_labels, power_of_two_scale, require_finite, zscores

__all__ = ["BaselineInfo", "FeatureScores", "SCORERS", "PROJECTIONS", "score_features", "rank_features",
           "make_projection", "PCAProjection", "CPCA", "OPCA", "KernelPCAProjection", "LPP"]


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


# ---------------------------------------------------------------------------- helpers
def _one_vs_rest(y):
    classes = np.unique(y)
    if classes.size < 2:
        raise InputError("These scores need labels with at least two classes.")
    return [(y == c) for c in (classes[1:] if classes.size == 2 else classes)]


def _safe_divide(a, b):
    return np.divide(a, b, out=np.zeros_like(a, dtype=np.float64), where=b > 0)


# ---------------------------------------------------------------------------- filters
def variance_score(X, y=None):
    return X.var(axis=0)


def pearson_score(X, y):
    centred = X - X.mean(axis=0)
    spread = np.sqrt(np.einsum("ij,ij->j", centred, centred))
    best = np.zeros(X.shape[1])
    for member in _one_vs_rest(y):
        target = member - member.mean()
        correlation = _safe_divide(np.abs(centred.T @ target), spread * np.linalg.norm(target))
        best = np.maximum(best, correlation)
    return best


def fisher_score(X, y):
    """Fisher score / FDR: between-class over within-class variance, per feature."""
    mean = X.mean(axis=0)
    between = np.zeros(X.shape[1])
    within = np.zeros(X.shape[1])
    for c in np.unique(y):
        group = X[y == c]
        between += group.shape[0] * (group.mean(axis=0) - mean) ** 2
        within += group.shape[0] * group.var(axis=0)
    return _safe_divide(between, within)


def mutual_information_score(X, y, random_state=0):
    from sklearn.feature_selection import mutual_info_classif

    return mutual_info_classif(X, y, random_state=random_state)


def ks_score(X, y):
    """Two-sample Kolmogorov-Smirnov statistic (one class against the rest, the largest)."""
    best = np.zeros(X.shape[1])
    for member in _one_vs_rest(y):
        statistic = stats.ks_2samp(X[member], X[~member], axis=0).statistic
        best = np.maximum(best, np.nan_to_num(statistic))
    return best


def _knn_heat_graph(X, n_neighbors):
    squared = np.einsum("ij,ij->i", X, X)
    distances = np.maximum(squared[:, None] + squared[None, :] - 2 * X @ X.T, 0)
    np.fill_diagonal(distances, np.inf)
    neighbours = np.argsort(distances, axis=1)[:, :n_neighbors]
    rows = np.repeat(np.arange(X.shape[0]), n_neighbors)
    width = np.mean(distances[rows, neighbours.ravel()]) or 1.0
    S = np.zeros_like(distances)
    S[rows, neighbours.ravel()] = np.exp(-distances[rows, neighbours.ravel()] / width)
    return np.maximum(S, S.T)


def laplacian_score(X, y=None, n_neighbors=5):
    """He, Cai & Niyogi (NIPS 2005): features that respect the k-NN graph score low; returned
    negated so that higher is better, like every other score here."""
    S = _knn_heat_graph(X, min(n_neighbors, X.shape[0] - 1))
    d = S.sum(axis=1)
    L = np.diag(d) - S
    centred = X - (d @ X) / d.sum()
    numerator = np.einsum("ij,ij->j", centred, L @ centred)
    denominator = np.einsum("ij,i,ij->j", centred, d, centred)
    return -_safe_divide(numerator, denominator) - (denominator <= 0) * 1e300


def relieff_score(X, y, n_neighbors=10, random_state=None, n_samples=None):
    """ReliefF (Kononenko 1994): features that differ on nearest misses and agree on nearest hits.

    Differences are scaled by each feature's range; misses of each other class are weighted by
    its prior. ``n_samples`` reference samples (all by default).
    """
    rng = np.random.default_rng(random_state)
    span = X.max(axis=0) - X.min(axis=0)
    span[span == 0] = 1.0
    Z = X / span
    classes, codes = np.unique(y, return_inverse=True)
    prior = np.bincount(codes) / codes.size
    chosen = np.arange(X.shape[0]) if n_samples is None else rng.choice(X.shape[0], n_samples, replace=False)
    squared = np.einsum("ij,ij->i", Z, Z)
    weights = np.zeros(X.shape[1])
    for i in chosen:
        distance = squared + squared[i] - 2 * Z @ Z[i]
        distance[i] = np.inf
        for c in range(classes.size):
            members = np.flatnonzero(codes == c)
            members = members[members != i]
            if members.size == 0:
                continue
            nearest = members[np.argsort(distance[members])[:n_neighbors]]
            difference = np.abs(Z[nearest] - Z[i]).mean(axis=0)
            if c == codes[i]:
                weights -= difference
            else:
                weights += prior[c] / (1 - prior[codes[i]]) * difference
    return weights / chosen.size


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
    # the features outside the search tie below every ranked one (finite: no score is -inf)
    scores = np.full(X.shape[1], -float(len(order)))
    scores[np.asarray(order)] = -np.arange(len(order), dtype=np.float64)
    return scores


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


def adaboost_score(X, y, n_estimators=100, random_state=0):
    """Feature importances of AdaBoost with decision stumps, the Viola-Jones selector (lecture)."""
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier

    model = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=n_estimators,
                               random_state=random_state).fit(X, y)
    return model.feature_importances_


_REF_LECTURE = "lecture on feature extraction and selection (seed 003)"
SCORERS: dict[str, tuple[BaselineInfo, Callable]] = {
    "variance": (BaselineInfo("variance", "filter", False, "O(q n)", _REF_LECTURE), variance_score),
    "pearson": (BaselineInfo("Pearson correlation", "filter", True, "O(q n)", "Wolf & Shashua ICCV 2003 (seed 002), Sec. 5"), pearson_score),
    "fisher": (BaselineInfo("Fisher score (FDR)", "filter", True, "O(q n)", "seed 002 Sec. 5; " + _REF_LECTURE), fisher_score),
    "mutual_information": (BaselineInfo("mutual information", "filter", True, "O(q log q n)", "Kraskov et al. 2004 via scikit-learn", min_per_class=2), mutual_information_score),
    "ks": (BaselineInfo("Kolmogorov-Smirnov", "filter", True, "O(q log q n)", "seed 002 Sec. 5", min_per_class=2), ks_score),
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
}


def score_features(method: str, X, y=None, **options) -> FeatureScores:
    """Run one scoring baseline (see :data:`SCORERS`) and rank the features by it."""
    if method not in SCORERS:
        raise InputError(f"Unknown baseline {method!r}; choose one of {', '.join(SCORERS)}.")
    info, function = SCORERS[method]
    X = as_data_matrix(X)
    if X.shape[0] < 2:
        raise InputError("X must be a samples x features matrix with at least two samples.")
    if not (X.max(axis=0) > X.min(axis=0)).any():
        raise InputError("Every feature is constant over the samples: there is nothing to rank.")
    # every ranking is unchanged by a common factor; scores of unit-dependent methods (variance,
    # the embedded models) are then in the units of X / scale
    scale = power_of_two_scale(X)
    if scale != 1.0:
        X = X / scale
    if info.supervised:
        if y is None:
            raise InputError(f"{info.name} is supervised: give the labels y.")
        y = as_labels(y, X.shape[0], "y")
        classes, counts = np.unique(y, return_counts=True)
        if classes.size < 2:
            raise InputError(f"{info.name} needs at least two classes in y; got {classes.size}.")
        if counts.min() < info.min_per_class:
            raise InputError(f"{info.name} needs at least {info.min_per_class} samples of each class; class "
                             f"{np.asarray(classes)[counts.argmin()].tolist()!r} has {counts.min()}.")
    elif y is not None:
        y = as_labels(y, X.shape[0], "y")
    start = time.perf_counter()
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


#: Rankers of :func:`rank_features` beyond the scoring baselines: the methods of the seeds.
SPECTRAL_RANKERS = ("Q-alpha", "Q-alpha (supervised)", "sparse LDA")


def rank_features(method: str, X, y=None, n_clusters: int = 2) -> np.ndarray:
    """Feature indices, best first, by ``method``: one of :data:`SPECTRAL_RANKERS` or of :data:`SCORERS`.

    ``"Q-alpha"`` is unsupervised Q-alpha with ``n_clusters`` ([002] Eq. 1), ``"Q-alpha
    (supervised)"`` fixes Q to the class indicators, and ``"sparse LDA"`` orders the features
    by the greedy backward elimination of [001] Sec. 4 (two classes). One signature for all
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
    return score_features(method, X, y).ranking


# ---------------------------------------------------------------------------- projections
class _Projection:
    """Base: ``fit(X, side=None)`` learns ``mean_`` and ``components_`` (d x n_features)."""

    info: BaselineInfo
    needs_side = False

    def __init__(self, n_components: int = 10):
        if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or n_components < 1:
            raise InputError(f"n_components must be a positive integer; got {n_components!r}.")
        self.n_components = int(n_components)

    def _check(self, X, side):
        X = as_data_matrix(X)
        if X.shape[0] < 2:
            raise InputError("fit needs a samples x features matrix with at least two samples.")
        if self.needs_side:
            if side is None:
                raise InputError(f"{self.info.name} needs side data: fit(X, side=...).")
            side = as_data_matrix(side, "side")
            if side.shape[1] != X.shape[1] or side.shape[0] < 2:
                raise InputError(f"The side data must have at least 2 samples and {X.shape[1]} features.")
        return X, side

    def transform(self, X):
        if not hasattr(self, "components_"):
            raise InputError("Call fit before transform.")
        return (as_data_matrix(X) - self.mean_) @ self.components_.T

    def fit_transform(self, X, side=None):
        return self.fit(X, side).transform(X)


def _leading_directions(C, d):
    values, vectors = linalg.eigh(C, subset_by_index=[C.shape[0] - d, C.shape[0] - 1])
    return vectors[:, ::-1].T, values[::-1]


class PCAProjection(_Projection):
    """Principal component analysis of the main data."""

    info = BaselineInfo("PCA", "combination", False, "O(q n min(q, n))", "Pearson 1901; seed 000 Sec. 6")

    def fit(self, X, side=None):
        X, _ = self._check(X, None)
        self.mean_ = X.mean(axis=0)
        _, _, Vt = np.linalg.svd(X - self.mean_, full_matrices=False)
        self.components_ = Vt[: min(self.n_components, Vt.shape[0])]
        return self


class CPCA(_Projection):
    """Constrained PCA: PCA of the main data after projecting out the side data's principal
    subspace of dimension ``side_components`` (Diamantaras & Kung 1996, as in [000] Sec. 6)."""

    info = BaselineInfo("CPCA", "combination", False, "O((q + p) n min(q, n))", "Diamantaras & Kung 1996; seed 000 Sec. 6")
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

    info = BaselineInfo("OPCA", "combination", False, "O((q + p)^2 n)", "Diamantaras & Kung 1996; seed 000 Sec. 6")
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
        S = _knn_heat_graph(Z, min(self.n_neighbors, X.shape[0] - 1))
        d = S.sum(axis=1)
        L = np.diag(d) - S
        left, right = Z.T @ L @ Z, Z.T @ (d[:, None] * Z)
        right[np.diag_indices_from(right)] += 1e-9 * np.trace(right) / right.shape[0]
        k = min(self.n_components, Z.shape[1])
        _, vectors = linalg.eigh(left, right, subset_by_index=[0, k - 1])
        self.mean_ = pca.mean_
        self.components_ = vectors.T @ pca.components_
        return self


PROJECTIONS: dict[str, type] = {"pca": PCAProjection, "cpca": CPCA, "opca": OPCA,
                                "kernel_pca": KernelPCAProjection, "lpp": LPP}


def make_projection(method: str, n_components: int = 10, **options):
    """A feature-combination baseline by name (see :data:`PROJECTIONS`)."""
    if method not in PROJECTIONS:
        raise InputError(f"Unknown projection {method!r}; choose one of {', '.join(PROJECTIONS)}.")
    return PROJECTIONS[method](n_components, **options)
