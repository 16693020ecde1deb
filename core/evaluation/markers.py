"""Which class a selected feature marks, by how much, and how sure: per-class statistics of features.

For each class against the rest of the samples: the means, the fraction of samples in which the
feature is non-zero (expressed), the log2 fold change, and a two-sided test per feature and class
-- Welch's t-test or the Wilcoxon rank-sum test (normal approximation) -- with the p-values
corrected for the features tested by Benjamini & Hochberg (J. R. Stat. Soc. B 1995). The
definitions are those of scanpy's ``rank_genes_groups`` with ``reference="rest"`` (Wolf, Angerer
& Theis, Genome Biology 2018), which single-cell users know; the numbers agree with it to 1e-6
(tests/core/evaluation/test_markers.py, against a stored reference that scanpy produced).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..errors import InputError
from ..matrix import dense_matrix
from ..matrix.moments import column_moments
from ..validation import as_labels

__all__ = ["ClassMarkers", "class_markers", "benjamini_hochberg", "selection_reach", "MARKER_TESTS"]

#: The tests :func:`class_markers` offers.
MARKER_TESTS = ("t-test", "wilcoxon")
#: Added to both means before their ratio (scanpy's constant), so that a feature absent from a
#: class has a finite fold change.
FOLD_EPSILON = 1e-9


@dataclass(frozen=True, eq=False)
class ClassMarkers:
    """Per-class statistics of features (from :func:`class_markers`).

    Every array is (n_classes, n_features): row ``c`` compares class ``classes[c]`` with the rest.

    Attributes
    ----------
    classes : ndarray
    features : ndarray of int
        The columns of ``X`` tested.
    feature_names : tuple of str
    mean, mean_rest : ndarray
        Means in the class and in the other samples.
    fraction, fraction_rest : ndarray
        Share of samples in which the feature is not zero.
    log2_fold_change : ndarray
        ``log2((f(mean) + 1e-9) / (f(mean_rest) + 1e-9))``, ``f = expm1`` for log1p data (as
        scanpy computes it), the identity otherwise. Where one of the two means is zero this is
        the offset's ±30 (about ``log2(1e-9)``), not a measured ratio: :meth:`zero_mean` says where.
    score, p_value, p_adjusted : ndarray
        The test statistic (Welch's t, or the rank-sum z), its two-sided p-value, and the p-value
        corrected over the features tested (Benjamini-Hochberg, per class).
    method : str
    """

    classes: np.ndarray
    features: np.ndarray
    feature_names: tuple
    mean: np.ndarray
    mean_rest: np.ndarray
    fraction: np.ndarray
    fraction_rest: np.ndarray
    log2_fold_change: np.ndarray
    score: np.ndarray
    p_value: np.ndarray
    p_adjusted: np.ndarray
    method: str

    def table(self):
        """One row per class and feature (a tidy pandas DataFrame), the features of each class by
        score; ``mean_zero_in`` names the mean that is zero where the fold change is the offset's."""
        import pandas as pd

        rows, zero = [], self.zero_mean()
        for c, label in enumerate(self.classes):
            for j in np.argsort(-self.score[c], kind="stable"):
                rows.append({"class": label, "feature": self.feature_names[j], "index": int(self.features[j]),
                             "score": self.score[c, j], "log2_fold_change": self.log2_fold_change[c, j],
                             "p_value": self.p_value[c, j], "p_adjusted": self.p_adjusted[c, j],
                             "mean": self.mean[c, j], "mean_rest": self.mean_rest[c, j],
                             "fraction": self.fraction[c, j], "fraction_rest": self.fraction_rest[c, j],
                             "mean_zero_in": zero[c, j]})
        return pd.DataFrame(rows)

    def of_feature(self, column: int):
        """The rows of :meth:`table` for one tested column of ``X`` (one per class, in the classes'
        order), without building the whole table: a feature looked up among 20,000."""
        import pandas as pd

        found = np.flatnonzero(self.features == int(column))
        if found.size == 0:
            raise InputError(f"Feature {column} was not among the features tested.")
        j, zero = int(found[0]), self.zero_mean()
        return pd.DataFrame({"class": self.classes, "score": self.score[:, j], "mean": self.mean[:, j],
                             "mean_rest": self.mean_rest[:, j], "fraction": self.fraction[:, j],
                             "fraction_rest": self.fraction_rest[:, j], "log2_fold_change": self.log2_fold_change[:, j],
                             "p_value": self.p_value[:, j], "p_adjusted": self.p_adjusted[:, j],
                             "mean_zero_in": zero[:, j]})

    def zero_mean(self) -> np.ndarray:
        """Where a mean is zero, so that the fold change is scanpy's offset rather than a ratio:
        ``"class"``, ``"rest"``, ``"both"`` or ``""`` per class and feature."""
        in_class, in_rest = self.mean == 0, self.mean_rest == 0
        return np.select([in_class & in_rest, in_class, in_rest], ["both", "class", "rest"], "").astype(object)

    def marked_class(self) -> np.ndarray:
        """For each feature, the index of the class it marks most (the largest score)."""
        return np.argmax(self.score, axis=0)

    def top_per_class(self, n: int) -> np.ndarray:
        """``(n_classes, n)``: positions (into :attr:`features`) of each class's ``n`` highest
        scores, best first (ties in column order), as scanpy's ``rank_genes_groups`` lists its
        ``names``."""
        n = min(int(n), self.features.size)
        if n < 1:
            raise InputError(f"Ask for at least one marker per class; got {n}.")
        return np.argsort(-self.score, axis=1, kind="stable")[:, :n]


def selection_reach(markers: ClassMarkers, ranking, n_markers: int = 10) -> list[dict]:
    """How far down a selection each class's markers first appear: for each class, among its
    ``n_markers`` best markers over every feature tested (:meth:`ClassMarkers.top_per_class`),
    the one the selection ranks first, its place there (1 = the selection's first feature) and its
    place among the class's markers. A class whose markers all sit far down is one the top of the
    selection leaves out (issue 77: unsupervised Q-alpha's top 20 on PBMC cells were one myeloid
    group; B cells' first marker, CD79A, came at 88).

    Parameters
    ----------
    markers : ClassMarkers
        Statistics over the features of ``ranking`` (any subset: a marker not ranked is skipped).
    ranking : array_like of int
        The selection's feature indices (columns of ``X``), best first.
    n_markers : int
        How many of each class's best markers are looked for.

    Returns
    -------
    list of dict
        One per class, in the classes' order: ``class``, ``feature`` (its name), ``index`` (its
        column), ``selection_rank`` (1-based; None where none of the markers is ranked),
        ``marker_rank`` (1 = the class's best marker) and ``score``.
    """
    ranking = np.asarray(ranking, dtype=np.intp).ravel()
    place = np.full(int(max(ranking.max(initial=-1), markers.features.max(initial=-1))) + 1, -1)
    place[ranking] = np.arange(ranking.size)
    reach = []
    for c, best in enumerate(markers.top_per_class(n_markers)):
        columns = markers.features[best]
        ranked = place[columns]
        if not np.any(ranked >= 0):
            reach.append({"class": markers.classes[c], "feature": None, "index": None, "selection_rank": None,
                          "marker_rank": None, "score": None})
            continue
        first = int(np.argmin(np.where(ranked >= 0, ranked, np.iinfo(np.intp).max)))
        reach.append({"class": markers.classes[c], "feature": markers.feature_names[best[first]],
                      "index": int(columns[first]), "selection_rank": int(ranked[first]) + 1,
                      "marker_rank": first + 1, "score": float(markers.score[c, best[first]])})
    return reach


def benjamini_hochberg(p_values) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (SciPy's ``false_discovery_control``); NaN counts as 1."""
    p_values = np.asarray(p_values, dtype=np.float64)
    return stats.false_discovery_control(np.where(np.isnan(p_values), 1.0, p_values), method="bh")


def _mean_var(X):
    """Means and unbiased variances of the columns, from the library's one-pass moments."""
    moments = column_moments(X)
    return moments.mean, moments.centred / max(X.shape[0] - 1, 1)


def class_markers(X, labels, *, features=None, feature_names=None, method: str = "t-test", log1p: bool = True,
                  tie_correct: bool = False) -> ClassMarkers:
    """Per-class statistics and tests of features, each class against the rest.

    Parameters
    ----------
    X : array_like, shape (n_samples, n_features)
        Dense data (for expression data, log1p of normalised counts, as scanpy expects).
    labels : array_like, shape (n_samples,)
        At least two classes, each of at least two samples.
    features : array_like of int, optional
        The columns to test (e.g. a selection); all by default. The p-values are corrected over these.
    feature_names : sequence of str, optional
        Names of all columns of ``X``.
    method : {"t-test", "wilcoxon"}
        Welch's t-test on the class and rest means and variances, or the Wilcoxon rank-sum test
        (normal approximation, ranks over all samples, average ranks for ties).
    log1p : bool
        Whether ``X`` holds ``log1p`` values: the fold change then compares ``expm1`` of the
        mean logs (scanpy's definition); otherwise the means themselves (for non-negative data).
        Where the class's or the rest's (expanded) mean is negative the fold change is undefined
        and given as NaN.
    tie_correct : bool
        Wilcoxon only: correct the variance for ties.

    Returns
    -------
    ClassMarkers
    """
    X = dense_matrix(X)
    n_samples, n_total = X.shape
    labels = as_labels(labels, n_samples)
    if method not in MARKER_TESTS:
        raise InputError(f"method must be one of {', '.join(MARKER_TESTS)}; got {method!r}.")
    classes, codes, counts = np.unique(labels, return_inverse=True, return_counts=True)
    if classes.size < 2:
        raise InputError("Per-class statistics need at least two classes in the labels.")
    if counts.min() < 2:
        raise InputError(f"Class {classes[counts.argmin()]!r} has one sample: a class needs two to have a variance.")
    if features is None:
        features = np.arange(n_total)
    features = np.asarray(features)
    if features.ndim != 1 or features.size == 0 or not np.issubdtype(features.dtype, np.integer) \
            or features.min() < 0 or features.max() >= n_total:
        raise InputError(f"features must be column indices between 0 and {n_total - 1}.")
    names = tuple(str(name) for name in feature_names) if feature_names is not None else \
        tuple(f"feature {j}" for j in range(n_total))
    if len(names) != n_total:
        raise InputError(f"feature_names has {len(names)} names for {n_total} features.")
    if not log1p and X[:, features].min() < 0:
        raise InputError("Fold changes of data as given need non-negative values; pass log1p=True for "
                         "log-transformed data.")
    values = X[:, features]
    shape = (classes.size, features.size)
    mean, var, mean_rest, var_rest, fraction, fraction_rest, score, p_value = (np.zeros(shape) for _ in range(8))
    ranks = stats.rankdata(values, axis=0) if method == "wilcoxon" else None
    for c in range(classes.size):
        inside = codes == c
        group, rest = values[inside], values[~inside]
        mean[c], var[c] = _mean_var(group)
        mean_rest[c], var_rest[c] = _mean_var(rest)
        fraction[c] = np.count_nonzero(group, axis=0) / group.shape[0]
        fraction_rest[c] = np.count_nonzero(rest, axis=0) / rest.shape[0]
        n_in, n_out = group.shape[0], rest.shape[0]
        if method == "t-test":
            with np.errstate(invalid="ignore", divide="ignore"):
                t, p = stats.ttest_ind_from_stats(mean[c], np.sqrt(var[c]), n_in, mean_rest[c], np.sqrt(var_rest[c]),
                                                  n_out, equal_var=False)
            score[c] = np.where(np.isnan(t), 0.0, t)  # no spread and equal means: no evidence
            p_value[c] = np.where(np.isnan(p), 1.0, p)
        else:
            correction = 1.0
            if tie_correct:
                correction = np.array([stats.tiecorrect(ranks[:, j]) for j in range(features.size)])
            spread = np.sqrt(correction * n_in * n_out * (n_samples + 1) / 12.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                z = (ranks[inside].sum(axis=0) - n_in * (n_samples + 1) / 2.0) / spread
            score[c] = np.where(np.isnan(z), 0.0, z)
            p_value[c] = 2 * stats.norm.sf(np.abs(score[c]))
    expand = np.expm1 if log1p else (lambda m: m)
    amount, amount_rest = expand(mean) + FOLD_EPSILON, expand(mean_rest) + FOLD_EPSILON
    # a fold change is a ratio of amounts: undefined (NaN, as documented) where a mean is negative
    log2_fold_change = np.log2(amount / amount_rest, out=np.full(amount.shape, np.nan),
                               where=(amount > 0) & (amount_rest > 0))
    p_adjusted = np.vstack([benjamini_hochberg(row) for row in p_value])
    return ClassMarkers(classes=classes, features=features, feature_names=tuple(names[j] for j in features),
                        mean=mean, mean_rest=mean_rest, fraction=fraction, fraction_rest=fraction_rest,
                        log2_fold_change=log2_fold_change, score=score, p_value=p_value, p_adjusted=p_adjusted,
                        method=method)
