"""Clustering experiments on tables: the UCI table of Shashua & Wolf 2004 (side information, k-means accuracy) and
an unsupervised feature-selection benchmark on the bundled real data sets."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.selection.scorers import CLUSTERING_SCORERS, score_features
from core.selection.projections import make_projection
from core.data.bundled import load_dataset
from core.data.dataset import Dataset
from core.errors import InputError
from core.evaluation.metrics import (clustering_accuracy, pairwise_accuracy, projection_curves, seeded_kmeans,
                                     selection_curves)
from core.plots import bar_figure, curves_figure, heatmap_table_figure
from core.selection.qalpha import feature_scaling, q_alpha
from core.selection.sparsity import sparsity_gap
from core.validation import zscores
from .registry import Claim, ExperimentResult, _Steps, comparison_frame, figures_of, register, series_by, summary_frame

#: The wine row of Shashua & Wolf 2004: raw data, Q-alpha-SI, PCA, CPCA, OPCA.
PAPER_WINE = {"raw data": 0.7280, "Q-alpha-SI": 0.9635, "PCA": 0.7280, "CPCA": 0.7280, "OPCA": 0.9493}
#: Above this many features OPCA's n x n generalised eigenproblem is left out (cost O(n^3)).
OPCA_FEATURE_LIMIT = 3000
#: The projections of the UCI table by their names in it.
PROJECTION_KEYS = {"PCA": "pca", "CPCA": "cpca", "OPCA": "opca", "SDR-SI": "sdr_si"}
#: The UCI protocol's open choices as :func:`uci_side` makes them by default: the rule fixed by
#: the sensitivity study (:func:`uci_sensitivity`, README "Sensitivity of the UCI protocol").
UCI_RULE = dict(weighting="sqrt_alpha", k="2c", lam=10.0, weight_zscores=True, standardize=("raw data", "PCA", "CPCA"))
#: The methods whose features ``standardize`` may name.
STANDARDISABLE = ("raw data", "PCA", "CPCA", "OPCA")
#: Q-alpha's k relative to the number of clusters c, by name.
K_RULES = ("1", "c-1", "c", "2c")
#: The projections' dimensions tried on a table (those up to its number of features).
DIMS_GRID = (1, 2, 3, 4, 5, 6, 8, 10, 13, 15, 20)
#: SDR-SI's weight of the side information on the UCI tables (fixed, as lambda is for Q-alpha-SI).
SDR_GAMMA = 2.0


@dataclass(frozen=True)
class _Turn:
    """One turn of the protocol of Shashua & Wolf 2004: the side data, the main data and their true clusters."""

    side_class: str
    main: np.ndarray
    side: np.ndarray
    truth: np.ndarray
    n_clusters: int
    seed: int

    def inputs(self, standardise: bool) -> tuple[np.ndarray, np.ndarray]:
        """``(main, side)`` as given, or as z-scores with the main data's statistics."""
        if not standardise:
            return self.main, self.side
        return zscores(self.main), zscores(self.side, reference=self.main)

    def scores(self, features: np.ndarray, runs: int, **labels) -> list[dict]:
        """One row per k-means run (seeds ``seed``, ``seed + 1``, ...) on ``features`` with as many
        clusters as main classes: Hungarian accuracy and Xing et al.'s balanced pairwise accuracy,
        tagged with the side class and ``labels``."""
        rows = []
        for run, found in enumerate(seeded_kmeans(features, self.n_clusters, runs, self.seed)):
            rows.append(dict(**labels, side_class=self.side_class, run=run,
                             hungarian=clustering_accuracy(self.truth, found), xing=pairwise_accuracy(self.truth, found)))
        return rows


def _protocol_turns(data: Dataset, random_state: int) -> list[_Turn]:
    """Shashua & Wolf 2004 Sec. 6: "at turns, each class served as side information and the other classes were
    taken to be the main dataset". That needs 3 classes (2 left to cluster); on a 2-class table
    we use a stated variant: at turns, a random half of one class is the side data and every
    other sample (both classes) the main data, clustered in 2. The side data then describe
    variation within a class, which is the structure to suppress."""
    if data.labels is None or data.classes.size < 2:
        raise InputError("This protocol needs labels with at least 2 classes: each class in turn gives the "
                         "side data and the samples are clustered by class. Choose a labelled data set.")
    counts = np.array([np.sum(data.labels == c) for c in data.classes])
    needed = 2 if data.classes.size >= 3 else 4
    if counts.min() < needed:
        raise InputError(f"Every class needs at least {needed} samples to give side data with a variance "
                         f"(the smallest has {counts.min()}).")
    rng = np.random.default_rng(random_state)
    turns = []
    for position, side_class in enumerate(data.classes):
        is_side = data.labels == side_class
        if data.classes.size == 2:
            members = np.flatnonzero(is_side)
            is_side = np.zeros(data.n_samples, dtype=bool)
            is_side[rng.permutation(members)[: members.size // 2]] = True
        truth = data.labels[~is_side]
        turns.append(_Turn(str(side_class), data.X[~is_side], data.X[is_side], truth,
                           int(np.unique(truth).size), random_state + 1000 * position))
    return turns


def _resolve_k(k, n_clusters: int) -> int:
    """Q-alpha's k as a number: an int, or a rule in the number of clusters c (:data:`K_RULES`)."""
    rules = dict(zip(K_RULES, (1, max(n_clusters - 1, 1), n_clusters, 2 * n_clusters)))
    if isinstance(k, str):
        if k not in rules:
            raise InputError(f"k must be a positive integer or one of {', '.join(rules)}; got {k!r}.")
        return rules[k]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be a positive integer or one of {', '.join(rules)}; got {k!r}.")
    return int(k)


#: How Q-alpha's weights enter k-means (Shashua & Wolf 2004 says only "the features were weighted").
WEIGHTINGS = {"sqrt_alpha": "sqrt(alpha)-weighted features",  # A_alpha's geometry
              "alpha": "alpha-weighted features",
              "gap": "features above the sparsity gap"}


def _alpha_features(X: np.ndarray, alpha: np.ndarray, weighting: str, weight_zscores: bool) -> np.ndarray:
    """The main data as k-means sees them after Q-alpha: z-scores (``weight_zscores``) or the data
    as given, weighted by alpha as ``weighting`` says (:data:`WEIGHTINGS`)."""
    base = zscores(X) if weight_zscores else X
    if weighting == "sqrt_alpha":
        return base * feature_scaling(alpha)
    if weighting == "alpha":
        return base * np.clip(alpha, 0.0, None)
    if weighting == "gap":
        return base[:, np.argsort(-alpha, kind="stable")[: sparsity_gap(alpha)]]
    raise InputError(f"weighting must be one of {', '.join(WEIGHTINGS)}; got {weighting!r}.")


def _check_protocol(weighting, k, lam, weight_zscores, standardize):
    if weighting not in WEIGHTINGS:
        raise InputError(f"weighting must be one of {', '.join(WEIGHTINGS)}; got {weighting!r}.")
    _resolve_k(k, 2)
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.number)) or not np.isfinite(lam) or lam < 0:
        raise InputError(f"lam must be a non-negative number; got {lam!r}.")
    if not isinstance(weight_zscores, (bool, np.bool_)):
        raise InputError(f"weight_zscores must be true or false; got {weight_zscores!r}.")
    return _standardised(standardize)


def _standardised(standardize) -> tuple:
    """The baselines fitted on z-scores: ``standardize`` is true (all), false (none) or a list of
    names from :data:`STANDARDISABLE`."""
    if isinstance(standardize, (bool, np.bool_)):
        return STANDARDISABLE if standardize else ()
    if isinstance(standardize, (list, tuple)) and all(name in STANDARDISABLE for name in standardize):
        return tuple(name for name in STANDARDISABLE if name in standardize)
    raise InputError(f"standardize must be true, false or a list of {', '.join(STANDARDISABLE)}; got {standardize!r}.")


def _qalpha_alpha(turn: _Turn, k, lam: float) -> np.ndarray:
    """Q-alpha-SI's weights on one turn; ``lam = 0`` means no side data (plain Q-alpha: a zero
    weight on side variances that vanish would be undefined)."""
    k = min(_resolve_k(k, turn.n_clusters), turn.main.shape[0] - 1)
    side = turn.side if lam > 0 else None
    return q_alpha(turn.main, k, side=side, lam=float(lam)).alpha


def _projection_scores(turn, method, dims_grid, inputs, runs) -> list[dict]:
    """k-means scores of one turn of :func:`uci_side` on a projection at every dimension of the
    grid, fitted on ``inputs`` (the main and side data as the method takes them; SDR-SI, which
    models counts, on the data as given)."""
    rows = []
    n_features = inputs[0].shape[1]
    for dims in dims_grid:
        if method == "SDR-SI" and dims >= n_features:
            continue  # it gives at most n_features - 1 dimensions
        model = make_projection(PROJECTION_KEYS[method], dims, **({"gamma": SDR_GAMMA} if method == "SDR-SI" else {}))
        fit_main, fit_side = inputs
        model.fit(fit_main, side=fit_side if model.needs_side else None)
        rows += turn.scores(model.transform(fit_main), runs, method=method, dims=dims)
    return rows


@register("uci_side", "k-means accuracy with side information (UCI table)", "Shashua & Wolf 2004 Sec. 6, UCI table",
          options=("dataset", "lam", "k", "weighting", "weight_zscores", "standardize"))
def uci_side(*, quick=False, random_state=0, progress=None, dataset: Dataset | None = None,
             lam: float = UCI_RULE["lam"], k=UCI_RULE["k"], weighting: str = UCI_RULE["weighting"],
             weight_zscores: bool = UCI_RULE["weight_zscores"], standardize=UCI_RULE["standardize"]) -> ExperimentResult:
    """Shashua & Wolf 2004 Sec. 6, the UCI table: each class in turn is the side data, the other classes the
    main data; k-means (as many clusters as main classes) on the raw main data, on PCA, CPCA and
    OPCA projections (the dimension that gives the best average accuracy, as in the paper), and
    on the main features weighted by Q-alpha-SI's alpha, and on SDR-SI's measurements (Globerson,
    Chechik & Tishby 2003; gamma = 2, the dimension chosen as for the PCA variants) when the
    table is non-negative: SDR-SI models each sample as a distribution over its features, so it
    always takes the data as given. On a 2-class table a random half of each class in turn is the
    side data (see :func:`_protocol_turns`).

    Accuracy is reported two ways. Xing, Ng, Jordan & Russell (NIPS 2002), whom Shashua & Wolf 2004 follows
    ("similarly to [20]"), score a clustering over pairs of points: drawing pairs from the same
    class and from different classes with probability 1/2 each, the fraction the clustering
    treats correctly (together, or apart). Beside it, the Hungarian-matched accuracy (fraction of
    points in the cluster matched to their class). On wine the paper's raw-data and PCA values
    (0.7280) match the pairwise score of k-means on the unstandardised data (ours 0.731).

    Parameters
    ----------
    dataset : Dataset, optional
        A labelled table with at least 2 classes (default: the bundled wine data, the paper's).
    lam : float
        Weight of the side information (the paper fixed 0.1); 0 runs Q-alpha without side data.
    k : int or {"c", "c-1", "2c", "1"}
        Q-alpha's number of eigenvectors, as a number or relative to the number of clusters c.
    weighting : {"sqrt_alpha", "alpha", "gap"}
        How alpha enters k-means (:data:`WEIGHTINGS`).
    weight_zscores : bool
        The weights multiply the standardised features (Q-alpha normalises the features
        internally, so alpha is a weight of z-scores), or the data as given.
    standardize : bool or list of {"raw data", "PCA", "CPCA", "OPCA"}
        Which baselines see z-scores (over the main data) instead of the data as given: all
        (true), none (false, which the paper's raw numbers imply) or those named. SDR-SI always
        takes the data as given.

    The defaults are :data:`UCI_RULE`, the rule fixed by :func:`uci_sensitivity` on wine, iris,
    breast cancer and digits: sqrt(alpha) on z-scores, k = 2c, lambda = 10; raw data, PCA and
    CPCA standardised, OPCA as given.
    """
    data = dataset if dataset is not None else load_dataset("wine")
    if not isinstance(data, Dataset):
        raise InputError("dataset must be a core.Dataset (load a table first).")
    standardised = _check_protocol(weighting, k, lam, weight_zscores, standardize)
    turns = _protocol_turns(data, random_state)
    runs = 5 if quick else 20
    dims_grid = [d for d in DIMS_GRID if d <= data.n_features]
    methods = ["PCA", "CPCA"] + (["OPCA"] if data.n_features <= OPCA_FEATURE_LIMIT else [])
    with_sdr = bool(data.X.min() >= 0)
    if with_sdr:
        methods.append("SDR-SI")
    step = _Steps(progress, len(turns) * (2 + len(methods)))
    rows, alphas = [], []
    for turn in turns:
        given, zscored = turn.inputs(False), turn.inputs(True)

        def inputs(method):
            return zscored if method in standardised else given

        step(f"side class {turn.side_class}: raw data")
        rows += turn.scores(inputs("raw data")[0], runs, method="raw data", dims=data.n_features)
        step(f"side class {turn.side_class}: Q-alpha-SI")
        alpha = _qalpha_alpha(turn, k, lam)
        alphas.append(alpha)
        rows += turn.scores(_alpha_features(turn.main, alpha, weighting, weight_zscores), runs,
                            method="Q-alpha-SI", dims=data.n_features)
        for method in methods:
            step(f"side class {turn.side_class}: {method}")
            rows += _projection_scores(turn, method, dims_grid, given if method == "SDR-SI" else inputs(method), runs)
    table = pd.DataFrame(rows)
    # Each projection keeps the dimension with the best average (Hungarian) accuracy (Shashua & Wolf 2004).
    by_dims = table.groupby(["method", "dims"], sort=False).hungarian.mean()
    best_dims = {method: int(by_dims[method].idxmax()) for method in table.method.unique()}
    chosen = table[[dims == best_dims[method] for method, dims in zip(table.method, table.dims)]]
    summary = summary_frame(chosen, ["method"], ["hungarian", "xing"])
    summary.insert(1, "dims", [best_dims[m] for m in summary.method])
    mean_of = summary.set_index("method")
    is_wine = data.name == "wine"
    comparison = comparison_frame(
        [(f"{method}: accuracy (Hungarian / Xing pairwise)", PAPER_WINE.get(method, "—") if is_wine else "—",
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
        "uci_side", "k-means accuracy with side information", "Shashua & Wolf 2004 Sec. 6, UCI table",
        f"{data.name} ({data.n_samples} samples, {data.n_features} features, {data.classes.size} classes)"
        + (f"; standardised: {', '.join(standardised)}" if standardised else "; every method on the data as given")
        + f"; Q-alpha-SI: {WEIGHTINGS[weighting]} ({'z-scores' if weight_zscores else 'data as given'}), k = {k}, "
          f"lambda = {lam:g}" + ("" if "OPCA" in methods else "; OPCA left out (too many features)")
        + ("" if with_sdr else "; SDR-SI left out (it needs non-negative data)")
        + ("; 2 classes: a random half of each class in turn is the side data" if data.classes.size == 2 else ""),
        table, summary, comparison, tuple(claims),
        {"mean alpha": mean_alpha, "feature names": np.asarray(names)},
        dict(data=data.name, lam=lam, k=k, weighting=weighting, weight_zscores=weight_zscores, runs=runs,
             standardize=list(standardised), dims_grid=dims_grid, best_dims=best_dims, random_state=random_state))


#: The tables of the sensitivity study: wine (the paper's) and scikit-learn's labelled tables.
SENSITIVITY_SETS = ["wine", "iris", "breast_cancer", "digits"]
#: Where every variation of the study starts: the paper's lambda, k = c, sqrt(alpha) on z-scores.
BASE_PROTOCOL = dict(weighting="sqrt_alpha", k="c", lam=0.1, weight_zscores=True)
#: One open choice of Q-alpha-SI changed at a time ("weight_zscores": the weights multiply
#: z-scores or the data as given; lam = 0: no side data).
PROTOCOL_VARIATIONS = {"weighting": ["alpha", "gap"], "k": ["1", "c-1", "2c"], "lam": [0.0, 0.01, 1.0, 10.0],
                       "weight_zscores": [False]}


def _setting_label(choice: str, value) -> str:
    if choice == "lam":
        return "lambda = 0 (no side data)" if value == 0 else f"lambda = {value:g}"
    if choice == "weight_zscores":
        return "weights on z-scores" if value else "weights on the data as given"
    return f"{choice} = {value}"


def _qalpha_rows(turn: _Turn, settings: dict, runs: int, alphas: dict) -> list[dict]:
    """k-means scores of Q-alpha-SI on one turn for each named setting; ``alphas`` caches the
    weights by (k, lam), which the other choices do not change."""
    rows = []
    for label, setting in settings.items():
        key = (_resolve_k(setting["k"], turn.n_clusters), float(setting["lam"]))
        if key not in alphas:
            alphas[key] = _qalpha_alpha(turn, *key)
        features = _alpha_features(turn.main, alphas[key], setting["weighting"], setting["weight_zscores"])
        rows += turn.scores(features, runs, method="Q-alpha-SI", setting=label, dims=features.shape[1])
    return rows


@register("uci_sensitivity", "How the UCI table depends on the protocol's open choices", "Shashua & Wolf 2004 Sec. 6, UCI table",
          options=("datasets",))
def uci_sensitivity(*, quick=False, random_state=0, progress=None, datasets: list[str] | None = None) -> ExperimentResult:
    """How the numbers of the UCI protocol of Shashua & Wolf 2004 (:func:`uci_side`) depend on the choices the
    paper leaves open, on wine, iris, breast cancer (2 classes: the variant of
    :func:`_protocol_turns`) and digits.

    Q-alpha-SI: starting from :data:`BASE_PROTOCOL`, one choice at a time
    (:data:`PROTOCOL_VARIATIONS`): how alpha enters k-means (sqrt(alpha), alpha, the features
    above the sparsity gap), k, lambda, and whether the weights multiply z-scores or the data as
    given. The baselines: raw data, PCA, CPCA and OPCA on the data as given and standardised,
    with the dimension chosen as the paper did (the best average accuracy, in hindsight) or fixed
    at the number of clusters c.

    Each cell is the mean and the standard deviation over ``runs`` k-means runs (seeds) of the
    accuracy averaged over the turns (side classes). The rule is the combination of settings
    with the largest Hungarian accuracy averaged over the tables, among every combination of
    each choice's two best settings (:func:`_second_stage`) that uses the side data
    (lambda > 0); for each baseline, the standardisation with the larger average accuracy.
    """
    names = list(datasets) if datasets else (["wine", "iris"] if quick else list(SENSITIVITY_SETS))
    runs = 3 if quick else 20
    settings = {"base": dict(BASE_PROTOCOL)}
    for choice, values in PROTOCOL_VARIATIONS.items():
        for value in values:
            settings[_setting_label(choice, value)] = {**BASE_PROTOCOL, choice: value}
    step = _Steps(progress, len(names) * 2 + 1)
    rows, turns_of, alphas_of = [], {}, {}
    for name in names:
        data = load_dataset(name)
        turns = turns_of[name] = _protocol_turns(data, random_state)
        # Q-alpha's weights depend only on (k, lam): kept per turn for the second stage
        alphas_of[name] = [{} for _ in turns]
        dims_grid = sorted({d for d in DIMS_GRID if d <= data.n_features} | {turns[0].n_clusters})
        step(f"{name}: Q-alpha-SI, {len(settings)} settings")
        for turn, alphas in zip(turns, alphas_of[name]):
            rows += [dict(dataset=name, **row) for row in _qalpha_rows(turn, settings, runs, alphas)]
        step(f"{name}: raw data, PCA, CPCA, OPCA")
        for turn in turns:
            for standardise in (False, True):
                X_main, X_side = turn.inputs(standardise)
                label = "standardised" if standardise else "as given"
                rows += turn.scores(X_main, runs, dataset=name, method="raw data", setting=label, dims=data.n_features)
                for method in ("PCA", "CPCA", "OPCA"):
                    for dims in dims_grid:
                        model = make_projection(PROJECTION_KEYS[method], dims).fit(X_main, side=X_side)
                        rows += turn.scores(model.transform(X_main), runs, dataset=name, method=method,
                                            setting=label, dims=dims)
    table = pd.DataFrame(rows)
    clusters = {name: turns_of[name][0].n_clusters for name in names}
    summary = _sensitivity_summary(table, clusters)

    # the rule, by the criterion fixed in the docstring
    def averaged(method, setting):
        return summary[(summary.method == method) & (summary.setting == setting)].hungarian_mean.mean()

    base_score = averaged("Q-alpha-SI", "base")
    step("the combinations of the best settings")
    combinations = _second_stage(summary)
    stage_two = pd.DataFrame([dict(dataset=name, **row) for name in names
                              for turn, alphas in zip(turns_of[name], alphas_of[name])
                              for row in _qalpha_rows(turn, combinations, runs, alphas)])
    table = pd.concat([table, stage_two], ignore_index=True)
    summary = pd.concat([summary, _sensitivity_summary(stage_two, clusters)], ignore_index=True)
    # lambda = 0 is the reference without side data, not a setting of Q-alpha-SI
    with_side = [label for label, setting in combinations.items() if setting["lam"] > 0]
    chosen_label = max(with_side, key=lambda label: averaged("Q-alpha-SI", label))
    rule = combinations[chosen_label]
    baseline_scaling = {method: max(("as given", "standardised"), key=lambda s: (
        averaged(method, f"{s}, best dims") if method != "raw data" else averaged(method, s)))
        for method in ("raw data", "PCA", "CPCA", "OPCA")}

    described = ", ".join(f"{key} = {value}" for key, value in rule.items())
    comparison_rows = [(f"Q-alpha-SI rule ({described}): mean accuracy over the tables", "(open in the paper)",
                        f"{averaged('Q-alpha-SI', chosen_label):.4f} (base setting {base_score:.4f})")]
    comparison_rows += [(f"{method}: standardisation", "as given (implied)", scaling)
                        for method, scaling in baseline_scaling.items()]
    claims = []
    for name in names:
        of_set = summary[summary.dataset == name]
        ours = of_set[(of_set.method == "Q-alpha-SI") & (of_set.setting == chosen_label)].hungarian_mean.iloc[0]
        others = of_set[(of_set.method != "Q-alpha-SI") & ~of_set.setting.str.endswith("dims = c")]
        best = others.loc[others.hungarian_mean.idxmax()]
        claims.append(Claim(f"{name}: Q-alpha-SI (the rule) clusters at least as well as the best baseline "
                            "(any standardisation, dimension in hindsight)", bool(ours >= best.hungarian_mean),
                            f"{ours:.4f} vs {best.method} ({best.setting}) {best.hungarian_mean:.4f}"))
    return ExperimentResult(
        "uci_sensitivity", "How the UCI table depends on the protocol's open choices", "Shashua & Wolf 2004 Sec. 6, UCI table",
        ", ".join(names) + " (bundled; breast cancer: half of a class as side data)", table, summary,
        comparison_frame(comparison_rows), tuple(claims), {},
        dict(datasets=names, runs=runs, base=BASE_PROTOCOL, variations=PROTOCOL_VARIATIONS, rule=rule,
             baseline_scaling=baseline_scaling, random_state=random_state))


def _combination_label(setting: dict) -> str:
    return "combination: " + ", ".join(_setting_label(choice, setting[choice]) for choice in BASE_PROTOCOL)


def _second_stage(summary: pd.DataFrame) -> dict:
    """The second stage of the study: the choices interact (on digits a small lambda ruins
    Q-alpha-SI, which makes the data as given look better than z-scores), so the settings picked
    one at a time need not be best together. For each choice its two best settings in the first
    stage (Q-alpha-SI's accuracy averaged over the tables) are kept, and every combination of
    them is run."""
    q = summary[summary.method == "Q-alpha-SI"].groupby("setting", sort=False).hungarian_mean.mean()
    kept = []
    for choice, values in PROTOCOL_VARIATIONS.items():
        scores = {BASE_PROTOCOL[choice]: q["base"], **{value: q[_setting_label(choice, value)] for value in values}}
        kept.append(sorted(scores, key=lambda value: -scores[value])[:2])
    combinations = [dict(zip(BASE_PROTOCOL, values)) for values in itertools.product(*kept)]
    return {_combination_label(setting): setting for setting in combinations}


def _sensitivity_summary(table: pd.DataFrame, n_clusters: dict) -> pd.DataFrame:
    """One row per (data set, method, setting): mean and standard deviation over runs of the
    accuracy averaged over the turns. A projection's setting gains its dimension rule: the best
    average accuracy (in hindsight, the paper's) or ``c``."""
    keys = ["dataset", "method", "setting"]
    is_projection = table.method.isin(["PCA", "CPCA", "OPCA"])
    # the features above the gap differ between turns: a Q-alpha cell is averaged over them whatever its size
    pieces = [table[~is_projection].groupby(keys + ["run"], sort=False).agg(
        dims=("dims", "mean"), hungarian=("hungarian", "mean"), xing=("xing", "mean")).reset_index()]
    per_dims = table[is_projection].groupby(keys + ["dims", "run"], sort=False)[["hungarian", "xing"]].mean().reset_index()
    for (dataset, method, setting), group in per_dims.groupby(keys, sort=False):
        by_dims = group.groupby("dims").hungarian.mean()
        for rule, dims in (("best dims", int(by_dims.idxmax())), ("dims = c", n_clusters[dataset])):
            pieces.append(group[group.dims == dims].assign(setting=f"{setting}, {rule}"))
    cells = pd.concat(pieces, ignore_index=True)
    summary = cells.groupby(keys, sort=False).agg(
        dims=("dims", "first"), hungarian_mean=("hungarian", "mean"), hungarian_std=("hungarian", "std"),
        xing_mean=("xing", "mean"), xing_std=("xing", "std"), runs=("run", "size"))
    return summary.reset_index()


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
    (:func:`core.evaluation.metrics.selection_curves`, standardised features).

    Beside the selections, feature extraction without labels (PCA, kernel PCA, LPP, LLE and
    Isomap, :func:`core.evaluation.metrics.projection_curves`) with K dimensions instead of K features,
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


# ---------------------------------------------------------------------------- figures
@figures_of("uci_side")
def uci_side_figures(result: ExperimentResult) -> list:
    summary, data = result.summary, result.parameters["data"]
    return [bar_figure(summary.method, summary.hungarian_mean, summary.hungarian_std,
                       f"Shashua & Wolf 2004, UCI table: k-means accuracy (Hungarian) on {data}", "accuracy",
                       paper=PAPER_WINE if data == "wine" else None),
            bar_figure(summary.method, summary.xing_mean, summary.xing_std, "Xing et al.'s pairwise accuracy", "accuracy")]


@figures_of("uci_sensitivity")
def uci_sensitivity_figures(result: ExperimentResult) -> list:
    cells = result.summary.assign(cell=result.summary.method + ": " + result.summary.setting)
    means = cells.pivot(index="cell", columns="dataset", values="hungarian_mean")
    spreads = cells.pivot(index="cell", columns="dataset", values="hungarian_std")
    order, columns = list(dict.fromkeys(cells.cell)), list(dict.fromkeys(cells.dataset))
    return [heatmap_table_figure(order, columns, means.loc[order, columns].to_numpy(), spreads.loc[order, columns].to_numpy(),
                                 "The UCI protocol's open choices: k-means accuracy (Hungarian), mean ± std over runs",
                                 "accuracy")]


@figures_of("unsupervised_benchmark")
def unsupervised_benchmark_figures(result: ExperimentResult) -> list:
    table = result.table
    return [curves_figure(series_by(table, "method", "K", "accuracy", lambda t, d=dataset: t.dataset == d),
                          "K (features kept, or dimensions extracted)", "k-means accuracy", dataset, log_x=True)
            for dataset in table.dataset.unique()]
