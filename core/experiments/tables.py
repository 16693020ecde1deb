"""Clustering experiments on tables: [000]'s UCI table (side information, k-means accuracy) and
an unsupervised feature-selection benchmark on the bundled real data sets."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ..baselines import CLUSTERING_SCORERS, make_projection, score_features
from ..bundled import load_dataset
from ..dataset import Dataset
from ..errors import InputError
from ..metrics import clustering_accuracy, pairwise_accuracy, projection_curves, selection_curves
from ..qalpha import feature_scaling, q_alpha
from ..validation import zscores
from . import Claim, ExperimentResult, _Steps, comparison_frame, register, summary_frame

#: [000]'s wine row: raw data, Q-alpha-SI, PCA, CPCA, OPCA.
PAPER_WINE = {"raw data": 0.7280, "Q-alpha-SI": 0.9635, "PCA": 0.7280, "CPCA": 0.7280, "OPCA": 0.9493}
#: Above this many features OPCA's n x n generalised eigenproblem is left out (cost O(n^3)).
OPCA_FEATURE_LIMIT = 3000
#: The projections of the UCI table by their names in it.
PROJECTION_KEYS = {"PCA": "pca", "CPCA": "cpca", "OPCA": "opca", "SDR-SI": "sdr_si"}
#: SDR-SI's weight of the side information on the UCI tables (fixed, as lambda is for Q-alpha-SI).
SDR_GAMMA = 2.0


def _kmeans_scores(Z, truth, n_clusters, runs, seed):
    """Hungarian and Xing et al.'s (balanced pairwise) accuracy of ``runs`` k-means clusterings."""
    from sklearn.cluster import KMeans

    scores = []
    for run in range(runs):
        found = KMeans(n_clusters, n_init=1, random_state=seed + run).fit_predict(Z)
        scores.append((run, clustering_accuracy(truth, found), pairwise_accuracy(truth, found)))
    return scores


@register("uci_side", "k-means accuracy with side information (UCI table)", "000 Sec. 6, UCI table",
          options=("dataset", "lam", "standardize"))
def uci_side(*, quick=False, random_state=0, progress=None, dataset: Dataset | None = None,
             lam: float = 0.1, standardize: bool = False) -> ExperimentResult:
    """[000] Sec. 6, the UCI table: each class in turn is the side data, the other classes the
    main data; k-means (as many clusters as main classes) on the raw main data, on PCA, CPCA and
    OPCA projections (the dimension that gives the best average accuracy, as in the paper), and
    on the main features weighted by Q-alpha-SI's alpha (lam = 0.1, k = number of main classes),
    and on SDR-SI's measurements (Globerson, Chechik & Tishby 2003; gamma = 2, the dimension
    chosen as for the PCA variants) when the table is non-negative: SDR-SI models each sample as
    a distribution over its features, so it always takes the data as given.
    Q-alpha normalises features internally, so the weights apply to the standardised features,
    scaled by ``sqrt(alpha)`` (:func:`core.qalpha.feature_scaling`: the geometry of A_alpha).

    Accuracy is reported two ways. Xing, Ng, Jordan & Russell (NIPS 2002), whom [000] follows
    ("similarly to [20]"), score a clustering over pairs of points: drawing pairs from the same
    class and from different classes with probability 1/2 each, the fraction the clustering
    treats correctly (together, or apart). Beside it, the Hungarian-matched accuracy (fraction of
    points in the cluster matched to their class). On wine the paper's raw-data and PCA values
    (0.7280) match the pairwise score of k-means on the unstandardised data (ours 0.731).

    Parameters
    ----------
    dataset : Dataset, optional
        A labelled table with at least 3 classes (default: the bundled wine data, the paper's).
    lam : float
        Weight of the side information (the paper fixed 0.1).
    standardize : bool
        Standardise every feature (z-scores over the main data) before every method, instead of
        using the data as given (the paper's raw numbers imply data as given).
    """
    data = dataset if dataset is not None else load_dataset("wine")
    if not isinstance(data, Dataset):
        raise InputError("dataset must be a core.Dataset (load a table first).")
    if data.labels is None or data.classes.size < 3:
        raise InputError("This protocol needs labels with at least 3 classes: each class in turn is the "
                         "side data and the others (at least 2) are clustered. Choose a data set with "
                         "3 or more classes.")
    counts = np.array([np.sum(data.labels == c) for c in data.classes])
    if counts.min() < 2:
        raise InputError("Every class needs at least 2 samples to serve as side data (a variance).")
    runs = 5 if quick else 20
    dims_grid = [d for d in (1, 2, 3, 4, 5, 6, 8, 10, 13, 15, 20) if d <= data.n_features]
    methods = ["PCA", "CPCA"] + (["OPCA"] if data.n_features <= OPCA_FEATURE_LIMIT else [])
    with_sdr = bool(data.X.min() >= 0)
    if with_sdr:
        methods.append("SDR-SI")
    step = _Steps(progress, data.classes.size * (2 + len(methods)))
    rows, alphas = [], []
    for side_class in data.classes:
        main, side = data.split_by_class([side_class])
        X_main, X_side, truth = main.X, side.X, main.labels
        if standardize:
            X_main, X_side = zscores(X_main), zscores(X_side, reference=X_main)
        n_clusters = main.classes.size
        seed = random_state + 1000 * int(np.flatnonzero(data.classes == side_class)[0])
        step(f"side class {side_class}: raw data")
        rows += [dict(side_class=str(side_class), method="raw data", dims=data.n_features, run=run,
                      hungarian=h, xing=x) for run, h, x in _kmeans_scores(X_main, truth, n_clusters, runs, seed)]
        step(f"side class {side_class}: Q-alpha-SI")
        result = q_alpha(X_main, n_clusters, side=X_side, lam=lam)
        alphas.append(result.alpha)
        weighted = zscores(X_main) * feature_scaling(result.alpha)
        rows += [dict(side_class=str(side_class), method="Q-alpha-SI", dims=data.n_features, run=run,
                      hungarian=h, xing=x) for run, h, x in _kmeans_scores(weighted, truth, n_clusters, runs, seed)]
        for method in methods:
            step(f"side class {side_class}: {method}")
            for dims in dims_grid:
                if method == "SDR-SI" and dims >= data.n_features:
                    continue  # it gives at most n_features - 1 dimensions
                model = make_projection(PROJECTION_KEYS[method], dims, **({"gamma": SDR_GAMMA} if method == "SDR-SI" else {}))
                fit_main, fit_side = (main.X, side.X) if model.models_counts else (X_main, X_side)
                model.fit(fit_main, side=fit_side if model.needs_side else None)
                features = model.transform(fit_main)
                rows += [dict(side_class=str(side_class), method=method, dims=dims, run=run, hungarian=h, xing=x)
                         for run, h, x in _kmeans_scores(features, truth, n_clusters, runs, seed)]
    table = pd.DataFrame(rows)
    # Each projection keeps the dimension with the best average (Hungarian) accuracy ([000]).
    by_dims = table.groupby(["method", "dims"], sort=False).hungarian.mean()
    best_dims = {method: int(by_dims[method].idxmax()) for method in table.method.unique()}
    chosen = table[[dims == best_dims[method] for method, dims in zip(table.method, table.dims)]]
    summary = summary_frame(chosen, ["method"], ["hungarian", "xing"])
    summary.insert(1, "dims", [best_dims[m] for m in summary.method])
    mean_of = summary.set_index("method")
    is_wine = data.name == "wine" and not standardize
    comparison = comparison_frame(
        [(f"{method}: accuracy (Hungarian / Xing pairwise)", PAPER_WINE.get(method) if is_wine else "—",
          f"{mean_of.hungarian_mean[method]:.4f} / {mean_of.xing_mean[method]:.4f}") for method in summary.method])
    mean_alpha = np.mean(alphas, axis=0)
    order = np.argsort(-mean_alpha)
    names = data.feature_names
    rest = np.delete(mean_alpha, order[:2]).mean()
    best_other = max(mean_of.hungarian_mean[m] for m in summary.method if m != "Q-alpha-SI")
    claims = [
        Claim("Q-alpha-SI gives the best k-means accuracy of the methods (Hungarian)",
              bool(mean_of.hungarian_mean["Q-alpha-SI"] >= best_other),
              f"{mean_of.hungarian_mean['Q-alpha-SI']:.4f} vs best other {best_other:.4f}"),
        Claim("Q-alpha-SI clusters better than the raw data (Xing pairwise)",
              bool(mean_of.xing_mean["Q-alpha-SI"] > mean_of.xing_mean["raw data"]),
              f"{mean_of.xing_mean['Q-alpha-SI']:.4f} vs {mean_of.xing_mean['raw data']:.4f}"),
    ]
    if data.name == "wine":
        comparison = pd.concat([comparison, comparison_frame([
            ("features with the largest alpha (mean over side classes)", "alcohol, proline: 3x the rest",
             f"{names[order[0]]}, {names[order[1]]}: {mean_alpha[order[0]] / rest:.1f}x and "
             f"{mean_alpha[order[1]] / rest:.1f}x the rest's mean")])], ignore_index=True)
        claims.append(Claim("On wine, Q-alpha-SI reaches at least 0.93 mean accuracy (paper 0.9635)",
                            bool(mean_of.hungarian_mean["Q-alpha-SI"] >= 0.93),
                            f"Hungarian {mean_of.hungarian_mean['Q-alpha-SI']:.4f}, Xing {mean_of.xing_mean['Q-alpha-SI']:.4f}"))
    return ExperimentResult(
        "uci_side", "k-means accuracy with side information", "000 Sec. 6, UCI table",
        f"{data.name} ({data.n_samples} samples, {data.n_features} features, {data.classes.size} classes)"
        + (", standardised" if standardize else ", as given") + ("" if "OPCA" in methods else "; OPCA left out (too many features)")
        + ("" if with_sdr else "; SDR-SI left out (it needs non-negative data)"),
        table, summary, comparison, tuple(claims),
        {"mean alpha": mean_alpha, "feature names": np.asarray(names)},
        dict(data=data.name, lam=lam, runs=runs, standardize=standardize, dims_grid=dims_grid,
             best_dims=best_dims, random_state=random_state))


# ------------------------------------------------------------------------------------------ 10
BENCHMARK_SETS = ["warpAR10P", "ORL", "COIL20", "colon", "GLIOMA", "TOX-171", "lymphoma", "PCMAC"]
QUICK_SETS = ["Yale", "colon"]
UNSUPERVISED = {"variance": "variance", "Laplacian score": "laplacian", "FSCA": "fsca", "SPEC": "spec", "MCFS": "mcfs",
                "UDFS": "udfs", "NDFS": "ndfs"}
#: Feature extraction placed beside the selections (the lecture's list), K = their dimension.
EXTRACTION = {"PCA (extracted)": "pca", "kernel PCA (extracted)": "kernel_pca", "LPP (extracted)": "lpp",
              "LLE (extracted)": "lle", "Isomap (extracted)": "isomap"}


@register("unsupervised_benchmark", "Unsupervised selection on the bundled real data sets", "beyond the papers",
          options=("datasets",))
def unsupervised_benchmark(*, quick=False, random_state=0, progress=None,
                           datasets: list[str] | None = None) -> ExperimentResult:
    """The protocol of the unsupervised feature-selection literature (e.g. He, Cai & Niyogi,
    NIPS 2005): rank the features without labels, keep the top K, cluster the samples by k-means
    with as many clusters as classes, score by clustering accuracy (Hungarian) and NMI, for
    several K. Q-alpha (k = number of classes) against the unsupervised baselines: variance,
    Laplacian score (5-NN heat kernel), FSCA, SPEC (phi2), MCFS, UDFS and NDFS (the last three
    with as many clusters as classes, as Q-alpha). k-means is started ``runs`` times and averaged
    (:func:`core.metrics.selection_curves`, standardised features).

    Beside the selections, feature extraction without labels (PCA, kernel PCA, LPP, LLE and
    Isomap, :func:`core.metrics.projection_curves`) with K dimensions instead of K features,
    scored the same way; they combine all the features, so they are a reference for what K
    numbers can carry rather than rivals of a selection. The claims compare selections only.

    Data: faces (warpAR10P, ORL), objects (COIL20), genes (colon, GLIOMA, TOX-171, lymphoma),
    text (PCMAC); quick: Yale and colon.
    """
    names = list(datasets) if datasets else (QUICK_SETS if quick else BENCHMARK_SETS)
    sizes = [10, 50] if quick else [10, 20, 50, 100, 200]
    runs = 2 if quick else 5
    step = _Steps(progress, len(names) * (len(UNSUPERVISED) + 3))
    rows = []
    for name in names:
        data = load_dataset(name)
        if data.labels is None or data.classes.size < 2:
            raise InputError(f"{name} has no labels with two or more classes to score clusterings against.")
        n_classes = int(data.classes.size)
        rankings, seconds = {}, {}
        step(f"{name}: Q-alpha")
        start = time.perf_counter()
        rankings["Q-alpha"] = q_alpha(data.X, min(n_classes, data.n_samples - 1)).ranking
        seconds["Q-alpha"] = time.perf_counter() - start
        for label, method in UNSUPERVISED.items():
            step(f"{name}: {label}")
            options = {"n_features_to_select": max(sizes)} if method in ("fsca", "mcfs") else {}
            if method in CLUSTERING_SCORERS:
                options["n_clusters"] = n_classes  # as Q-alpha's k
            scores = score_features(method, data.X, None, **options)
            rankings[label], seconds[label] = scores.ranking, scores.seconds
        step(f"{name}: k-means on the top features")
        usable = [k for k in sizes if k <= data.n_features]
        curves = selection_curves(data.X, data.labels, rankings, usable, n_runs=runs, random_state=random_state)
        step(f"{name}: feature extraction (PCA, kernel PCA, LPP, LLE, Isomap)")
        start = time.perf_counter()
        extracted = projection_curves(data.X, data.labels, EXTRACTION, usable, n_runs=runs, random_state=random_state)
        for method in extracted:
            seconds[method] = (time.perf_counter() - start) / len(extracted)  # the methods' mean
        for method, curve in {**curves, **extracted}.items():
            for k, accuracy, nmi, precision in zip(curve["size"], curve["accuracy"], curve["nmi"], curve["precision"]):
                rows.append(dict(dataset=name, method=method, K=k, accuracy=accuracy, nmi=nmi,
                                 precision_index=precision, seconds=seconds[method]))
    table = pd.DataFrame(rows)
    summary = summary_frame(table, ["dataset", "method"], ["accuracy", "nmi"])
    is_extraction = summary.method.isin(list(EXTRACTION))
    selections, extractions = summary[~is_extraction], summary[is_extraction]
    winners = selections.loc[selections.groupby("dataset", sort=False).accuracy_mean.idxmax()]
    extraction_winners = extractions.loc[extractions.groupby("dataset", sort=False).accuracy_mean.idxmax()]
    comparison = comparison_frame(
        [(f"{row.dataset}: best mean accuracy over K (selection)", "(not in the papers)",
          f"{row.method} {row.accuracy_mean:.3f}") for row in winners.itertuples()]
        + [(f"{row.dataset}: best mean accuracy over K (extraction)", "(not in the papers)",
            f"{row.method.removesuffix(' (extracted)')} {row.accuracy_mean:.3f}") for row in extraction_winners.itertuples()])
    by_set = selections.pivot(index="dataset", columns="method", values="accuracy_mean")
    beats_variance = int((by_set["Q-alpha"] >= by_set["variance"]).sum())
    best_gap = (by_set.max(axis=1) - by_set["Q-alpha"])
    claims = (
        Claim("Q-alpha is at least as good as ranking by variance on at least half the data sets (mean accuracy over K)",
              beats_variance * 2 >= len(by_set), f"{beats_variance} of {len(by_set)} data sets"),
        Claim("Q-alpha is within 0.05 of the best method's mean accuracy on at least half the data sets",
              int((best_gap <= 0.05).sum()) * 2 >= len(by_set),
              f"{int((best_gap <= 0.05).sum())} of {len(by_set)}; largest shortfall {best_gap.max():.3f}"),
    )
    return ExperimentResult(
        "unsupervised_benchmark", "Unsupervised selection on real data sets", "beyond the papers",
        ", ".join(names) + " (bundled)", table, summary, comparison, claims, {},
        dict(datasets=names, sizes=sizes, runs=runs, random_state=random_state))
