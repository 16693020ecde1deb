"""Wrapper and embedded baselines: scores read off models fitted to the labels (an SVM in
recursive elimination or forward / backward search, the Lasso, L1 logistic regression, AdaBoost
stumps; the L2,1 models are in :mod:`.sparse_learning`); registered in :data:`core.selection.scorers.SCORERS`.
"""

from __future__ import annotations

import numpy as np

from ..validation import zscores
from ._scoring import _ranked_scores
from .filters import fisher_score

__all__ = ["rfe_svm_score", "forward_wrapper_score", "backward_wrapper_score", "lasso_score", "l1_logistic_score",
           "adaboost_score"]


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

    fisher = fisher_score(X, y)
    candidates = np.argsort(-fisher, kind="stable")[:max_candidates]
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
    return _ranked_scores(order, X.shape[1], then=fisher)


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


def l1_logistic_score(X, y, C=0.1, random_state=0):
    """|coefficients| of an L1-penalised logistic regression (largest over classes). SAGA visits
    the samples in a random order: ``random_state`` fixes it, so that two runs agree (unseeded,
    two runs on lung_small's first 60 genes differed by 3% in a coefficient)."""
    from sklearn.linear_model import LogisticRegression

    Z = zscores(X)
    model = LogisticRegression(l1_ratio=1.0, C=C, solver="saga", max_iter=5000, tol=1e-3,
                               random_state=random_state).fit(Z, y)
    return np.abs(model.coef_).max(axis=0)


def adaboost_score(X, y, n_estimators=100, random_state=0):
    """Feature importances of AdaBoost with decision stumps, the Viola-Jones selector (lecture)."""
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier

    model = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=n_estimators,
                               random_state=random_state).fit(X, y)
    return model.feature_importances_
