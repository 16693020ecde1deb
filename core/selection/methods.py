"""Every selection method by name: the scoring baselines and the papers' own rankers (Q-alpha,
supervised Q-alpha, sparse LDA, sparse PCA) behind one signature, which of them use labels, and Q-alpha as
a ranker for the evaluation protocols.

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
.. [MWA07] B. Moghaddam, Y. Weiss and S. Avidan, "Fast pixel/part selection with sparse
   eigenvectors", ICCV 2007.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .modules import ranking_across_modules
from .qalpha import QAlphaParameters, q_alpha
from .scorers import CLUSTERING_SCORERS, SCORERS, score_features
from .side import SideInformation
from .slda import greedy_slda
from .spca import greedy_spca

__all__ = ["SPECTRAL_RANKERS", "MethodInfo", "METHODS", "is_supervised", "offered_methods", "rank_features",
           "q_alpha_ranker"]

#: Rankers of :func:`rank_features` beyond the scoring baselines: the methods of the papers this library implements.
SPECTRAL_RANKERS = ("Q-alpha", "Q-alpha (supervised)", "Q-alpha (across modules)", "sparse LDA", "sparse PCA")
#: Sparse PCA's forward pass costs about n^3 per step on n features (2.6 s on 256 features, 70 s on
#: 765, on a 2-core Xeon): the protocols rank once per fold, so it is offered up to this many.
SPARSE_PCA_MAX_FEATURES = 512


@dataclass(frozen=True)
class MethodInfo:
    """What a protocol must know of a method before it runs it.

    Attributes
    ----------
    name : str
        What a reader is shown.
    supervised : bool
        Whether it reads the labels (then a protocol hands it only the training fold's).
    two_classes : bool
        Whether it needs exactly two classes (sparse LDA).
    models_counts : bool
        Whether it models counts or intensities and needs values without negatives.
    max_features : int, optional
        The most features it is offered on (its cost grows too fast beyond).
    """

    name: str
    supervised: bool
    two_classes: bool = False
    models_counts: bool = False
    max_features: int | None = None


#: Every method :func:`rank_features` runs, by the name it takes.
METHODS: dict[str, MethodInfo] = {
    "Q-alpha": MethodInfo("Q-alpha", supervised=False),
    "Q-alpha (supervised)": MethodInfo("Q-alpha (supervised)", supervised=True),
    "Q-alpha (across modules)": MethodInfo("Q-alpha, the best of each module in turn", supervised=False),
    "sparse LDA": MethodInfo("sparse LDA", supervised=True, two_classes=True),
    "sparse PCA": MethodInfo("sparse PCA (greedy forward)", supervised=False, max_features=SPARSE_PCA_MAX_FEATURES),
    **{key: MethodInfo(info.name, info.supervised, models_counts=info.models_counts)
       for key, (info, _) in SCORERS.items()},
}


def is_supervised(method: str, side: SideInformation | None = None) -> bool:
    """Whether ``method`` uses the labels; Q-alpha does when its side information comes from them
    (side classes or pairs), so that a protocol judges it as a supervised method."""
    if method not in METHODS:
        raise InputError(f"Unknown method {method!r}; choose one of {', '.join(METHODS)}.")
    return METHODS[method].supervised or (method in ("Q-alpha", "Q-alpha (across modules)") and side is not None
                                          and side.uses_labels)


def offered_methods(n_classes: int, non_negative: bool, n_features: int | None = None) -> list[str]:
    """The methods that apply to data with ``n_classes`` classes (fewer than two: no labels to
    read, so the unsupervised methods only), (``non_negative``) no negative values and
    ``n_features`` features (None: any number)."""
    return [name for name, info in METHODS.items()
            if (not info.supervised or n_classes >= 2) and (not info.two_classes or n_classes == 2)
            and (non_negative or not info.models_counts)
            and (n_features is None or info.max_features is None or n_features <= info.max_features)]


def rank_features(method: str, X, y=None, n_clusters: int = 2) -> np.ndarray:
    """Feature indices, best first, by ``method``: one of :data:`SPECTRAL_RANKERS` or of :data:`SCORERS`.

    ``"Q-alpha"`` is unsupervised Q-alpha with k = ``n_clusters`` ([WS03] Eq. 1; the clustering
    scorers of :data:`CLUSTERING_SCORERS` get it too), ``"Q-alpha (supervised)"`` fixes Q to the
    class indicators, ``"Q-alpha (across modules)"`` takes Q-alpha's first 300 features across their
    modules of correlated features (:func:`core.selection.modules.ranking_across_modules`, issue 77), ``"sparse LDA"`` orders the features by the greedy backward elimination
    of [MWA07] Sec. 4 (two classes), and ``"sparse PCA"`` by the order in which the greedy forward
    search of [MWA07] Sec. 6 adds them (each step the feature whose addition gives the largest
    leading eigenvalue of the covariance restricted to the chosen set; no labels). One signature for all methods, so that comparisons and
    bootstrap stability call them alike.
    """
    if method == "Q-alpha":
        return q_alpha(X, n_clusters).ranking
    if method == "Q-alpha (supervised)":
        return q_alpha(X, labels=y).ranking
    if method == "Q-alpha (across modules)":
        return ranking_across_modules(X, q_alpha(X, n_clusters).ranking)
    if method == "sparse LDA":
        return greedy_slda(X, y).backward_order
    if method == "sparse PCA":
        return greedy_spca(X, direction="forward").forward_order
    if method not in SCORERS:
        raise InputError(f"Unknown method {method!r}; choose one of {', '.join(SPECTRAL_RANKERS + tuple(SCORERS))}.")
    return score_features(method, X, y, **({"n_clusters": n_clusters} if method in CLUSTERING_SCORERS else {})).ranking


def q_alpha_ranker(params: QAlphaParameters, *, side=None, side_classes=None, n_pairs: int | None = None):
    """A ranking function ``rank(X, y)`` for the evaluation protocols (:func:`core.held_out_curves`,
    stability and accuracy curves) that runs Q-alpha with ``params`` and takes its side
    information ([SW04] Def. 3, Sec. 5) from the samples it is handed, so that a protocol that
    hands it a training fold keeps the held-out labels out of the side information too.

    Parameters
    ----------
    params : QAlphaParameters
        The run (k, criterion, λ, starts, tolerance, seed, supervised or not).
    side : array_like, shape (n_side, n_features), or SideInformation, optional
        A fixed side data set W (it uses no labels), or the side information named once
        (:class:`core.selection.side.SideInformation`).
    side_classes : sequence, optional
        The samples of ``X`` whose label in ``y`` is one of these classes form W; the others
        are the main data.
    n_pairs : int, optional
        Pairs of samples of ``X`` with different labels in ``y`` that must stay apart
        (:func:`pairs_from_labels` with ``params.random_state``).

    At most one of ``side``, ``side_classes`` and ``n_pairs``. ``rank`` returns the features'
    indices by decreasing alpha.
    """
    information = side if isinstance(side, SideInformation) else SideInformation.from_options(
        side=side, side_classes=side_classes, n_pairs=n_pairs)

    def rank(X, y=None):
        X = np.asarray(X, dtype=np.float64)
        if (information.uses_labels or params.supervised) and y is None:
            raise InputError("This ranking takes its side information or its Q from the labels: pass y.")
        main, labels, side_X, pairs = information.split(X, y, random_state=params.random_state)
        return params.run(main, labels=labels, side=side_X, pairs=pairs).ranking

    return rank
