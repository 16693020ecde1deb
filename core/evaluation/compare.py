"""The comparison protocol: selection methods judged on samples they did not see.

Each method ranks the features on the training folds of a stratified cross-validation (a
supervised method with the training labels, an unsupervised one with none); the top ``k``
features are judged on the held-out fold only: a 1-nearest-neighbour classifier fitted on the
training fold (``"knn"``), k-means on the held-out samples (as many clusters as classes there,
seeded starts averaged: :func:`core.evaluation.metrics.kmeans_scores`) scored by Hungarian
accuracy (``"accuracy"``) and NMI (``"nmi"``), and the normalised precision index of Shashua &
Wolf 2004 Sec. 6 (``"precision"``). Ranked once on every sample instead (the ``"in-sample"``
protocol), a supervised method is graded on the labels it was chosen with: the selection bias of
Ambroise & McLachlan (PNAS 99(10), 2002), which the held-out protocol does not have.

:func:`compare_methods` returns one tidy table (a row per method, protocol, size, fold and
measure); :func:`summarise_comparison` the per-method summary the Compare page shows (the best
mean over the sizes, picked after the fact, beside the mean over all sizes, which picks nothing);
:func:`comparison_curves` the means and spreads per size for a figure. The Compare page and
``benchmarks/bench_selection_bias.py`` call them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Mapping

import numpy as np

from ..errors import InputError
from ..matrix.threads import cores
from ..progress import Progress, ProgressCallback, report_or_stop
from ..validation import zscores
from .metrics import kmeans_scores, normalized_precision_index, precision_from_distances

__all__ = ["MEASURES", "PROTOCOLS", "DEFAULT_FOLDS", "comparison_sizes", "comparison_folds", "fold_scores",
           "held_out_curves", "compare_methods", "summarise_comparison", "summarise_curves",
           "comparison_curves"]

#: The measures of a selection on held-out samples, by the name the table gives them.
MEASURES = {"accuracy": "k-means accuracy", "knn": "1-NN accuracy", "nmi": "NMI",
            "precision": "normalised precision index"}
#: Where the features are chosen: on each training fold, or once on every sample.
PROTOCOLS = ("held-out", "in-sample")
#: Folds of the cross-validation (fewer when the smallest class has fewer samples).
DEFAULT_FOLDS = 5
#: The sizes judged on a table of more than 30 features: a log grid up to all of them.
SIZE_GRID = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


def comparison_sizes(n_features: int) -> list[int]:
    """Every size on a small table (a 7-feature table would otherwise get only 1, 2 and 5), a log
    grid up to all the features otherwise."""
    if n_features <= 30:
        return list(range(1, n_features + 1))
    return [size for size in SIZE_GRID if size < n_features] + [int(n_features)]


def comparison_folds(labels, folds: int = DEFAULT_FOLDS) -> int:
    """``folds``, or fewer when the smallest class has fewer samples (refused below two)."""
    counts = np.unique(np.asarray(labels).ravel(), return_counts=True)[1]
    n_splits = int(min(folds, counts.min()))
    if n_splits < 2:
        raise InputError("Held-out evaluation needs at least two samples of every class: a class here has one. "
                         "Choose another data set, or merge or drop that class.")
    return n_splits


def _checked(X, labels, sizes, n_splits):
    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels).ravel()
    if X.ndim != 2 or labels.size != X.shape[0]:
        raise InputError(f"labels must have one entry per sample ({X.shape[0]}); got {labels.size}.")
    classes, counts = np.unique(labels, return_counts=True)
    if classes.size < 2:
        raise InputError("Held-out evaluation needs labels with at least two classes.")
    n_splits = int(n_splits)
    if n_splits < 2 or counts.min() < n_splits:
        raise InputError(f"Stratified {n_splits}-fold cross-validation needs at least {max(n_splits, 2)} samples "
                         f"of every class; the smallest class has {counts.min()}. Use fewer folds.")
    sizes = [int(size) for size in sizes]
    if not sizes or min(sizes) < 1 or max(sizes) > X.shape[1]:
        raise InputError(f"sizes must be between 1 and the {X.shape[1]} features.")
    return X, labels, sizes, n_splits


def fold_scores(X, labels, rank: Callable, sizes, *, n_splits: int = DEFAULT_FOLDS, n_runs: int = 3,
                select_within_folds: bool = True, random_state=0,
                progress: ProgressCallback | None = None) -> dict[str, np.ndarray]:
    """Every measure of :data:`MEASURES` on every held-out fold and size: ``{measure: array of
    shape (n_splits, len(sizes))}``. ``rank(X_train, y_train)`` orders the features on each
    training fold (or once on every sample, labels included, when ``select_within_folds`` is
    False); the data are standardised with the training fold's means and spreads. ``progress``
    reports each fold (``False`` stops with :class:`core.errors.Stopped`)."""
    from sklearn.model_selection import StratifiedKFold
    from sklearn.neighbors import KNeighborsClassifier

    X, labels, sizes, n_splits = _checked(X, labels, sizes, n_splits)
    folds = list(StratifiedKFold(n_splits, shuffle=True, random_state=random_state).split(X, labels))
    everywhere = None if select_within_folds else np.asarray(rank(X, labels), dtype=np.intp)
    codes = np.unique(labels, return_inverse=True)[1]
    scores = {name: np.zeros((n_splits, len(sizes))) for name in ("knn", "accuracy", "nmi", "precision")}

    def judged(train, test):
        """Every measure at every size on one fold: ``{measure: row over the sizes}``."""
        ranking = everywhere if everywhere is not None else np.asarray(rank(X[train], labels[train]), dtype=np.intp)
        Z_train, Z_test = zscores(X[train]), zscores(X[test], X[train])
        neighbours = range(1, min(10, test.size - 1) + 1)
        distances = _GrowingDistances(Z_test, Z_train) if test.size * X.shape[0] <= DISTANCE_VALUES else None
        row = {name: np.zeros(len(sizes)) for name in scores}
        for column, size in enumerate(sizes):
            top = ranking[:size]
            if distances is not None:
                among_test, to_train = distances.up_to(ranking, size)
                # the first nearest of equals (sklearn's 1-NN may take another where distances tie)
                predicted = labels[train][np.argmin(to_train, axis=1)]
                row["precision"][column] = precision_from_distances(among_test, codes[test], neighbours)
            else:
                predicted = KNeighborsClassifier(1).fit(Z_train[:, top], labels[train]).predict(Z_test[:, top])
                row["precision"][column] = normalized_precision_index(Z_test[:, top], labels[test], neighbours)
            row["knn"][column] = np.mean(predicted == labels[test])
            accuracy, information = kmeans_scores(Z_test[:, top], labels[test], n_runs, random_state)
            row["accuracy"][column], row["nmi"][column] = accuracy.mean(), information.mean()
        return row

    # the folds run side by side, one per core (segmentation's 2,310 samples: a method's five folds
    # in 0.72-0.73 s against 0.91-0.95 s one after another, 2 cores), each reported in order from this thread
    # (a progress bar is drawn by the thread that runs the page); a stop cancels the folds not begun
    with ThreadPoolExecutor(max_workers=min(cores(), n_splits), thread_name_prefix="folds") as pool:
        pending = [pool.submit(judged, train, test) for train, test in folds]
        try:
            for fold, future in enumerate(pending):
                for name, values in future.result().items():
                    scores[name][fold] = values
                report_or_stop(progress, fold + 1, n_splits)
        finally:
            for future in pending:
                future.cancel()
    return scores


#: Held-out x all samples up to which a fold keeps its squared distances and grows them with the
#: sizes (80 MB); beyond, each size computes its own (scikit-learn's 1-NN, in chunks).
DISTANCE_VALUES = 10_000_000


class _GrowingDistances:
    """Squared distances among the held-out samples and from them to the training samples over the
    top ``size`` features, grown from one size to the next by the features added (a size of
    segmentation's 19 features computed all of them again: 95 one-NN fits and distance matrices
    were three quarters of Fisher's 2.2 s on 2,310 samples; with them grown, 0.78 s in all)."""

    def __init__(self, Z_test, Z_train):
        self.Z_test, self.Z_train = Z_test, Z_train
        self.among_test = np.zeros((Z_test.shape[0], Z_test.shape[0]))
        self.to_train = np.zeros((Z_test.shape[0], Z_train.shape[0]))
        self.size = 0

    def up_to(self, ranking, size):
        """The two matrices over ``ranking[:size]`` (sizes asked in increasing order); the first a copy."""
        added = ranking[self.size:size]
        if added.size:
            test, train = self.Z_test[:, added], self.Z_train[:, added]
            test_norms, train_norms = np.einsum("ij,ij->i", test, test), np.einsum("ij,ij->i", train, train)
            # in place: three passes over each matrix and no temporaries of its size
            for grown, norms, other, other_norms in ((self.among_test, test_norms, test, test_norms),
                                                     (self.to_train, test_norms, train, train_norms)):
                grown -= 2.0 * (test @ other.T)
                grown += norms[:, None]
                grown += other_norms[None, :]
            self.size = size
        return self.among_test.copy(), self.to_train


def held_out_curves(X, labels, rank: Callable, sizes, *, n_splits: int = DEFAULT_FOLDS, n_runs: int = 3,
                    select_within_folds: bool = True, random_state=0,
                    progress: ProgressCallback | None = None) -> dict:
    """How well the top-``k`` features group and classify samples that played no part in choosing
    them: :func:`fold_scores` as means over the folds.

    ``select_within_folds=False`` ranks once on every sample, labels included, and judges the same
    way: the features have then seen the held-out labels, the optimistic estimate that Ambroise &
    McLachlan (PNAS 99(10), 2002) call selection bias. On labels that carry no information the
    held-out score stays at chance and this one does not (tested).

    Returns ``{"size": [...], "knn": [...], "knn_sd": [...], "accuracy": ..., "accuracy_sd": ...,
    "nmi": ..., "nmi_sd": ..., "precision": ..., "precision_sd": ..., "n_splits": n_splits}``.
    """
    scores = fold_scores(X, labels, rank, sizes, n_splits=n_splits, n_runs=n_runs,
                         select_within_folds=select_within_folds, random_state=random_state, progress=progress)
    curves = {"size": [int(size) for size in sizes], "n_splits": int(n_splits)}
    for name, values in scores.items():
        curves[name] = values.mean(axis=0).tolist()
        curves[f"{name}_sd"] = values.std(axis=0).tolist()
    return curves


def compare_methods(X, labels, methods: Mapping, *, sizes=None, n_splits: int | None = None,
                    supervised: Mapping[str, bool] | None = None, protocols=("held-out",), n_runs: int = 3,
                    n_clusters: int | None = None, random_state=0, progress: ProgressCallback | None = None):
    """Judge each method's selection on held-out samples (and, asked for, in-sample): one tidy table.

    Parameters
    ----------
    X : array_like, shape (n_samples, n_features)
    labels : array_like, shape (n_samples,)
    methods : mapping of name to a method name or a ranker
        A name of :data:`core.selection.methods.METHODS` (run by
        :func:`core.selection.methods.rank_features`) or a callable ``rank(X, y)`` returning the
        features best first (e.g. :func:`core.selection.methods.q_alpha_ranker`).
    sizes : sequence of int, optional
        Numbers of top features judged (:func:`comparison_sizes` by default).
    n_splits : int, optional
        Folds (:func:`comparison_folds` by default).
    supervised : mapping of name to bool, optional
        Whether each method is handed the labels. By default the registry says so for named
        methods; a callable is unsupervised unless said otherwise.
    protocols : sequence of {"held-out", "in-sample"}
    n_runs : int
        k-means starts averaged per fold and size.
    n_clusters : int, optional
        The clusters of Q-alpha and the clustering scorers for named methods (the number of
        classes by default).
    random_state : int
        Seeds the folds and k-means; the table is deterministic given it.
    progress : callable, optional
        Called after each fold of each method and protocol (``done`` counts them); ``False`` stops
        (:class:`core.errors.Stopped`).

    Returns
    -------
    pandas.DataFrame
        Columns ``method``, ``supervised``, ``protocol``, ``size``, ``fold``, ``measure``, ``value``.
    """
    import pandas as pd

    from ..selection.methods import is_supervised, rank_features

    X, labels, _, _ = _checked(X, labels, [1], 2)
    sizes = comparison_sizes(X.shape[1]) if sizes is None else [int(size) for size in sizes]
    n_splits = comparison_folds(labels) if n_splits is None else int(n_splits)
    unknown = [protocol for protocol in protocols if protocol not in PROTOCOLS]
    if unknown or not protocols:
        raise InputError(f"protocols must be some of {', '.join(PROTOCOLS)}; got {list(protocols)!r}.")
    n_clusters = int(np.unique(labels).size) if n_clusters is None else int(n_clusters)
    supervised = dict(supervised or {})
    total, done, frames = len(methods) * len(protocols) * n_splits, 0, []
    for name, method in methods.items():
        uses_labels = supervised.get(name, is_supervised(method) if isinstance(method, str) else False)
        rank = (lambda X_, y_, m=method: rank_features(m, X_, y_, n_clusters=n_clusters)) \
            if isinstance(method, str) else method
        for protocol in protocols:
            def fold_done(report, offset=done):
                return None if progress is None else progress(Progress(offset + report.done, total,
                                                                      message=f"{name}, {protocol}"))
            scores = fold_scores(X, labels, lambda X_, y_: rank(X_, y_ if uses_labels else None), sizes,
                                 n_splits=n_splits, n_runs=n_runs, select_within_folds=protocol == "held-out",
                                 random_state=random_state, progress=fold_done)
            done += n_splits
            for measure, values in scores.items():
                folds, columns = np.indices(values.shape)
                frames.append(pd.DataFrame({"method": name, "supervised": bool(uses_labels), "protocol": protocol,
                                            "size": np.asarray(sizes)[columns.ravel()], "fold": folds.ravel(),
                                            "measure": measure, "value": values.ravel()}))
    return pd.concat(frames, ignore_index=True)


def comparison_curves(table, protocol: str = "held-out") -> dict:
    """``{method: {"size": [...], measure: means over folds, measure + "_sd": their spread}}`` of
    one protocol of a :func:`compare_methods` table, as :func:`held_out_curves` gives them."""
    part = table[table.protocol == protocol]
    curves = {}
    for method, rows in part.groupby("method", sort=False):
        stats = rows.groupby(["measure", "size"]).value.agg(["mean", lambda v: float(np.std(v))])
        stats.columns = ["mean", "sd"]
        sizes = sorted(rows["size"].unique())
        entry = {"size": [int(size) for size in sizes], "n_splits": int(rows.fold.nunique())}
        for measure in rows.measure.unique():
            entry[measure] = [float(stats.loc[(measure, size), "mean"]) for size in sizes]
            entry[f"{measure}_sd"] = [float(stats.loc[(measure, size), "sd"]) for size in sizes]
        curves[method] = entry
    return curves


#: Best scores closer than this are a tie (held-out means of fractions of the same samples are
#: equal exactly when the same samples are placed right; this leaves room for rounding only).
TIE_TOLERANCE = 1e-9


def summarise_curves(curves: Mapping[str, dict], measure: str = "accuracy"):
    """A row per curve, the best first: the best mean of ``measure`` over the sizes, its spread over
    the folds and the size it was reached at (picked after the fact: it flatters every method),
    beside the mean over all the sizes (which picks nothing; on the log grid, an area on the log
    axis). Empty cells where a curve has no such measure (feature extraction has no stability),
    those rows last. ``standing`` marks the winner ("best") and every curve whose best equals it
    within ``TIE_TOLERANCE`` ("tied for best"): on dermatology four methods reach the same 0.9426,
    the same samples placed right, and no one of them wins."""
    import pandas as pd

    rows = []
    for name, curve in curves.items():
        best = sd = size = mean = None
        if measure in curve:
            values = curve[measure]
            at = int(np.argmax(values))
            best, size, mean = values[at], curve["size"][at], float(np.mean(values))
            sd = curve[f"{measure}_sd"][at] if f"{measure}_sd" in curve else None
        rows.append(dict(method=name, best=best, sd_at_best=sd, size_at_best=size, mean_over_sizes=mean))
    # the best first; a stable sort keeps the given order among equals, and rows without the measure last
    rows.sort(key=lambda row: (row["best"] is None, -(row["best"] if row["best"] is not None else 0.0)))
    scores = [row["best"] for row in rows if row["best"] is not None]
    top = max(scores, default=None)
    tied = top is not None and sum(abs(score - top) <= TIE_TOLERANCE for score in scores) > 1
    for row in rows:
        at_top = row["best"] is not None and abs(row["best"] - top) <= TIE_TOLERANCE
        row["standing"] = ("tied for best" if tied else "best") if at_top else ""
    return pd.DataFrame(rows, columns=["method", "best", "sd_at_best", "size_at_best", "mean_over_sizes", "standing"])


def summarise_comparison(table, measure: str = "accuracy", protocol: str = "held-out"):
    """:func:`summarise_curves` of one protocol of a :func:`compare_methods` table."""
    if measure not in MEASURES:
        raise InputError(f"measure must be one of {', '.join(MEASURES)}; got {measure!r}.")
    return summarise_curves(comparison_curves(table, protocol), measure)
