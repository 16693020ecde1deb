"""The scoring baselines by name: a score per feature (higher = more relevant) and the ranking it
implies, :func:`score_features(method, X, y, **options) <score_features>` with ``method`` in
:data:`SCORERS`. The scorers themselves live by kind: :mod:`.filters`, :mod:`.embedded` (wrappers
and embedded models) and :mod:`.clustering_scores`; the feature combinations are in
:mod:`.projections`, and every method with the papers' own rankers in :mod:`.methods`.

Every scorer carries a :class:`BaselineInfo`: whether it needs labels, what it costs and where it
comes from. scikit-learn does the work where it already does it well.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Callable

import numpy as np

from ..errors import InputError
from ..matrix import data_matrix
from ..matrix.normalised import no_spread
from ..validation import as_labels, require_finite
from ._scoring import _REF_LECTURE, BaselineInfo, FeatureScores, IterativeScores
from .clustering_scores import mcfs_score, ndfs_score, spec_score, udfs_score
from .embedded import (adaboost_score, backward_wrapper_score, forward_wrapper_score, l1_logistic_score, lasso_score,
                       rfe_svm_score)
from .filters import (_fisher_of, _moments_by_class, _pearson_of, _variance_of, dispersion_score, fisher_score,
                      fsca_score, ks_score, laplacian_score, multisurf_score, mutual_information_score, pearson_score,
                      relieff_score, surf_score, variance_score)
from .information import INFORMATION_CRITERIA, cfs_score, fcbf_score, information_score, mrmr_score
from .sparse_learning import l21_logistic_score, l21_score, rfs_score
from .statistical import (_chi_square_of, _t_of, _trace_ratio_of, chi_square_score, gini_score, t_score,
                          trace_ratio_score)

__all__ = ["BaselineInfo", "FeatureScores", "IterativeScores", "SCORERS", "CLUSTERING_SCORERS", "ONE_PASS_SCORERS",
           "score_features", "ScoreFunction"]


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
    "l21": (BaselineInfo("L2,1 least squares", "embedded", True, "O(q^2 n) per iteration",
                         "Liu, Ji & Ye, UAI 2009; Obozinski, Taskar & Jordan, Stat. Comput. 2010"), l21_score),
    "rfs": (BaselineInfo("RFS (L2,1 loss and penalty)", "embedded", True, "O(q^2 n) per iteration",
                         "Nie, Huang, Cai & Ding, NIPS 2010"), rfs_score),
    "l21_logistic": (BaselineInfo("L2,1 logistic regression", "embedded", True, "O(q n c) per iteration",
                                  "Liu, Ji & Ye, UAI 2009"), l21_logistic_score),
    "fsca": (BaselineInfo("FSCA", "filter", False, "O(k q n^2)", "Puggini & McLoone, Eng. Appl. AI 2017"), fsca_score),
    "adaboost": (BaselineInfo("AdaBoost stumps", "embedded", True, "O(T q n log q)", "Viola & Jones, IJCV 2004; " + _REF_LECTURE), adaboost_score),
    "surf": (BaselineInfo("SURF", "filter", True, "O(q^2 n)", "Greene et al., EvoBIO 2009", min_per_class=2), surf_score),
    "multisurf": (BaselineInfo("MultiSURF", "filter", True, "O(q^2 n)", "Urbanowicz et al., J. Biomed. Inform. 2018", min_per_class=2), multisurf_score),
    "mrmr": (BaselineInfo("mRMR", "filter", True, "O(k q n)", "Peng, Long & Ding, TPAMI 2005"), mrmr_score),
    **{key: (BaselineInfo(criterion.name, "filter", True, "O(q n)" if key == "mim" else "O(k q n)",
                          criterion.citation), partial(information_score, criterion=key))
       for key, criterion in INFORMATION_CRITERIA.items() if key != "mrmr"},
    "fcbf": (BaselineInfo("FCBF", "filter", True, "O(k q n), k predominant", "Yu & Liu, ICML 2003"), fcbf_score),
    "cfs": (BaselineInfo("CFS", "filter", True, "O(k q n)", "Hall, PhD thesis, Waikato 1999"), cfs_score),
    "chi_square": (BaselineInfo("chi-square", "filter", True, "O(q n)", "Yang & Pedersen, ICML 1997",
                                models_counts=True), chi_square_score),
    "t_score": (BaselineInfo("t-score (Welch)", "filter", True, "O(q n)", "Welch, Biometrika 1947",
                             min_per_class=2), t_score),
    "gini": (BaselineInfo("Gini index", "filter", True, "O(q log q n)", "Breiman et al., CART 1984"), gini_score),
    "trace_ratio": (BaselineInfo("trace ratio (Fisher graphs)", "filter", True, "O(q n)",
                                 "Nie et al., AAAI 2008"), trace_ratio_score),
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
ONE_PASS_SCORERS = {"variance": _variance_of, "pearson": _pearson_of, "fisher": _fisher_of,
                    "chi_square": _chi_square_of, "t_score": _t_of, "trace_ratio": _trace_ratio_of}


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
        raise InputError(f"X must be a samples x features matrix with at least two samples; got "
                         f"n_samples={data.shape[0]}.")
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
        constant = no_spread(overall.maximum, overall.minimum)
        if constant.all():
            raise InputError("Every feature is constant over the samples: there is nothing to rank.")
        scores = np.asarray(ONE_PASS_SCORERS[method](overall, groups, **options), dtype=np.float64)
    else:
        X = data.dense()
        constant = no_spread(X.max(axis=0), X.min(axis=0))
        if constant.all():
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
    # a feature without spread tells no sample from another, whatever a score's formula makes of
    # it (the Laplacian score's 0 / 0 came out best, -1e-18, for a column of 9s): last, as Q-alpha
    # leaves it out with weight 0
    scores = np.where(constant, -np.inf, scores)
    ranking = np.argsort(-scores, kind="stable")
    return FeatureScores(method=method, scores=scores, ranking=ranking, seconds=seconds, info=info, scale=scale,
                         constant_features=np.flatnonzero(constant))


class ScoreFunction:
    """A scorer of :data:`SCORERS` as scikit-learn's ``score_func``: ``ScoreFunction(method,
    **options)(X, y)`` returns the scores of :func:`score_features`, so that
    ``SelectKBest(ScoreFunction("jmi"), k=50)`` or ``SelectPercentile(ScoreFunction("laplacian"))``
    selects by it in a pipeline. Unsupervised scorers take ``y=None`` (``SelectKBest.fit(X)``);
    supervised ones refuse it. Picklable, and equal when method and options are.
    """

    #: a pipeline hands sparse matrices (text counts) to every step: the scorers that need dense
    #: data get them densified up to this many values (400 MB); beyond, :func:`score_features`
    #: refuses them with what to do
    DENSIFY_LIMIT = 50_000_000

    def __init__(self, method: str, **options):
        if method not in SCORERS:
            raise InputError(f"Unknown baseline {method!r}; choose one of {', '.join(SCORERS)}.")
        self.method, self.options = method, options

    def __call__(self, X, y=None) -> np.ndarray:
        import scipy.sparse

        if (scipy.sparse.issparse(X) and self.method not in ONE_PASS_SCORERS
                and X.shape[0] * X.shape[1] <= self.DENSIFY_LIMIT):
            X = X.toarray()
        return score_features(self.method, X, y, **self.options).scores

    def __eq__(self, other):
        return isinstance(other, ScoreFunction) and (self.method, self.options) == (other.method, other.options)

    def __hash__(self):
        return hash((self.method, tuple(sorted(self.options))))

    def __repr__(self):
        options = "".join(f", {key}={value!r}" for key, value in self.options.items())
        return f"ScoreFunction({self.method!r}{options})"
