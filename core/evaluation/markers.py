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

import functools
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..matrix import data_matrix
from ..matrix.moments import ColumnMoments, class_moments
from ..matrix.threads import map_on_cores
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

    Every array is (n_classes, n_features): row ``c`` compares class ``classes[c]`` with the rest,
    or with the class ``reference`` (which is then not among ``classes``).

    Attributes
    ----------
    classes : ndarray
    features : ndarray of int
        The columns of ``X`` tested.
    feature_names : tuple of str
    mean, mean_rest : ndarray
        Means in the class and in the other samples (the reference class's samples).
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
    reference : "rest" or a class label
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
    reference: object = "rest"

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
    # scipy.stats is imported where it is used: importing it took 0.57 s of the first visit of the
    # Q-alpha page, which imports this module and computes no marker until asked
    from scipy import stats

    p_values = np.asarray(p_values, dtype=np.float64)
    return stats.false_discovery_control(np.where(np.isnan(p_values), 1.0, p_values), method="bh")


#: Values of the data densified at once: the features are tested in blocks of columns of at most
#: this many values (32 MB in float64), so sparse and Dask data are never densified whole.
BLOCK_VALUES = 4_000_000


def _column_block(source, kind: str, columns) -> np.ndarray:
    """The ``columns`` of ``source`` (the data as :func:`_class_summaries` reads them) as a dense
    float64 array of all samples laid out feature by feature (Fortran order: each feature's values
    side by side, as the ranks sort them): a slice of dense data, the columns of sparse (CSC) data
    made dense, or the columns of a Dask array computed."""
    block = source[:, columns]
    if kind == "chunked":
        block = block.compute()
    if kind == "sparse":  # the transpose of a CSC slice is CSR: dense, it is feature by feature
        return np.asarray(block.T.toarray(), dtype=np.float64).T
    return np.asfortranarray(block, dtype=np.float64)


def _rank_sums(values, groups, n_groups: int, tie_correct: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per column of ``values`` (samples x features), each group's sum of the samples' ranks
    (average ranks over ties, as SciPy's ``rankdata``) and the tie correction ``1 - sum(t^3 - t) /
    (n^3 - n)`` over the runs of ``t`` equal values (SciPy's ``tiecorrect``; ones without
    ``tie_correct``). ``groups``: each sample's group, ``0 .. n_groups - 1``.

    Each feature's values are sorted once, as one contiguous row (a Fortran-ordered block's
    transpose; float32 values held as float64 sorted as float32, the same order): the runs of
    equal values give both the average ranks, summed by group where they fall, and the tie
    correction, which ``rankdata`` and ``tiecorrect`` would each sort for."""
    rows = np.ascontiguousarray(values.T)  # one feature per row
    narrow = rows.astype(np.float32)
    # float32 values held as float64: the same order, sorted in half the bytes (Wilcoxon on
    # 2,000 x 20,000 log counts: 0.78-0.84 s against 0.91 s sorting float64, one run, 2-core EPYC)
    if np.array_equal(narrow, rows):
        rows = narrow
    width, n = rows.shape
    order = np.argsort(rows, axis=1)  # the order within a run of equal values does not change its ranks
    ordered = np.take_along_axis(rows, order, axis=1)
    starts = np.ones((width, n), dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    first = np.flatnonzero(starts.ravel())  # where each run of equal values begins, row after row
    runs = np.diff(np.append(first, width * n))
    # the average rank of each run (1-based), given to every place it covers
    average = np.repeat((first % n) + (runs + 1) / 2.0, runs)
    in_group = groups[order].ravel() + n_groups * np.repeat(np.arange(width), n)
    sums = np.bincount(in_group, weights=average, minlength=width * n_groups).reshape(width, n_groups).T
    correction = np.ones(width)
    if tie_correct and n > 1:
        lengths = runs.astype(np.float64)
        correction = 1.0 - np.bincount(first // n, weights=lengths**3 - lengths, minlength=width) / (float(n) ** 3 - n)
    return sums, correction


def _rank_sum_z(values, groups, n_groups: int, tie_correct: bool) -> np.ndarray:
    """The rank-sum statistic of each group against the other samples of ``values`` (all the rows
    given), per column: ``(R - n1 (n + 1) / 2) / sqrt(n1 n2 (n + 1) / 12)``, ranks averaged over
    ties; ``groups``: each sample's group, ``0 .. n_groups - 1``."""
    n = values.shape[0]
    n_in = np.bincount(groups, minlength=n_groups)[:, None].astype(np.float64)
    sums, correction = _rank_sums(values, groups, n_groups, tie_correct)
    spread = np.sqrt(correction * n_in * (n - n_in) * (n + 1) / 12.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (sums - n_in * (n + 1) / 2.0) / spread
    return np.where(np.isnan(z), 0.0, z)


def _class_summaries(matrix, features, codes, n_classes: int, ranked=None) -> list:
    """``(start, moments, nonzero, scores)`` for consecutive blocks of the ``features`` (from
    position ``start``): each class's :class:`ColumnMoments` of the block, its count of non-zero
    values per feature (n_classes x block), and ``ranked(values)`` of the block's values (None
    without ``ranked``). Blocks of :data:`BLOCK_VALUES` values at most, one per core at a time
    (sorting for ranks releases the GIL); without ranks, sparse data give their moments and counts
    from the stored entries, nothing densified."""
    if matrix.kind == "sparse" and ranked is None:
        part = matrix.values if np.array_equal(features, np.arange(matrix.shape[1])) else matrix.values[:, features]
        part = part.tocsr()
        width = part.shape[1]
        cell = np.repeat(codes, np.diff(part.indptr)) * width + part.indices  # each stored entry's (class, feature)
        nonzero = np.bincount(cell, weights=part.data != 0, minlength=n_classes * width).reshape(n_classes, width)
        return [(0, class_moments(part, codes, n_classes), nonzero, None)]
    members = np.eye(n_classes)[codes]  # samples x classes, one-hot: counts per class as one product
    source = matrix.values.tocsc() if matrix.kind == "sparse" else matrix.values  # columns read cheaply
    width = max(1, BLOCK_VALUES // max(matrix.shape[0], 1))

    def summarise(start):
        values = _column_block(source, matrix.kind, features[start:start + width])
        return (start, class_moments(values, codes, n_classes), members.T @ (values != 0),
                None if ranked is None else ranked(values))
    return map_on_cores(summarise, range(0, features.size, width))


def _welch(group: ColumnMoments, other: ColumnMoments) -> tuple[np.ndarray, np.ndarray]:
    """Welch's t and its two-sided p-value from the two groups' moments (SciPy's
    ``ttest_ind_from_stats``, unbiased variances); no spread and equal means: t = 0, p = 1."""
    from scipy import stats  # here, not at the top: benjamini_hochberg says why

    with np.errstate(invalid="ignore", divide="ignore"):
        t, p = stats.ttest_ind_from_stats(group.mean, np.sqrt(group.centred / max(group.count - 1, 1)), group.count,
                                          other.mean, np.sqrt(other.centred / max(other.count - 1, 1)), other.count,
                                          equal_var=False)
    return np.where(np.isnan(t), 0.0, t), np.where(np.isnan(p), 1.0, p)


def _checked_features(features, n_total: int) -> np.ndarray:
    if features is None:
        return np.arange(n_total)
    features = np.asarray(features)
    if features.ndim != 1 or features.size == 0 or not np.issubdtype(features.dtype, np.integer) \
            or features.min() < 0 or features.max() >= n_total:
        raise InputError(f"features must be column indices between 0 and {n_total - 1}.")
    return features


def _groups(labels, n_samples: int, reference):
    """The classes, each sample's class code, the codes of the classes tested and the reference's
    code (None: each class against the rest)."""
    labels = as_labels(labels, n_samples)
    classes, codes, counts = np.unique(labels, return_inverse=True, return_counts=True)
    if classes.size < 2:
        raise InputError("Per-class statistics need at least two classes in the labels.")
    if counts.min() < 2:
        raise InputError(f"Class {str(classes[counts.argmin()])!r} has one sample: a class needs two to have a variance. "
                         "Merge it with another class or drop its sample, or pick other labels.")
    if isinstance(reference, str) and reference == "rest":
        return classes, codes, np.arange(classes.size), None
    found = np.flatnonzero(classes.astype(str) == str(reference))
    if found.size != 1:
        raise InputError(f"The reference class {reference!r} is not one of the classes "
                         f"({', '.join(map(str, classes[:10]))}{', ...' if classes.size > 10 else ''}).")
    return classes, codes, np.delete(np.arange(classes.size), found[0]), int(found[0])


def class_markers(X, labels, *, features=None, feature_names=None, method: str = "t-test", log1p: bool = True,
                  tie_correct: bool = False, reference="rest") -> ClassMarkers:
    """Per-class statistics and tests of features, each class against the rest (or against one
    reference class).

    Parameters
    ----------
    X : array_like, scipy.sparse matrix or dask.array.Array, shape (n_samples, n_features)
        The data (for expression data, log1p of normalised counts, as scanpy expects). Sparse and
        Dask data are read in blocks of columns (:data:`BLOCK_VALUES` values at a time), never
        densified whole.
    labels : array_like, shape (n_samples,)
        At least two classes, each of at least two samples.
    features : array_like of int, optional
        The columns to test (e.g. a selection); all by default. The p-values are corrected over these.
    feature_names : sequence of str, optional
        Names of all columns of ``X``.
    method : {"t-test", "wilcoxon"}
        Welch's t-test on the class and rest means and variances, or the Wilcoxon rank-sum test
        (normal approximation, ranks over the samples of the two groups, average ranks for ties).
    log1p : bool
        Whether ``X`` holds ``log1p`` values: the fold change then compares ``expm1`` of the
        mean logs (scanpy's definition); otherwise the means themselves (for non-negative data).
        Where the class's or the rest's (expanded) mean is negative the fold change is undefined
        and given as NaN.
    tie_correct : bool
        Wilcoxon only: correct the variance for ties.
    reference : "rest" or a class label
        What each class is compared with: the other samples, or the samples of one class (scanpy's
        ``reference=``); that class is then not tested itself, and the ``*_rest`` attributes hold
        its statistics.

    Returns
    -------
    ClassMarkers
    """
    matrix = data_matrix(X)
    n_samples, n_total = matrix.shape
    if method not in MARKER_TESTS:
        raise InputError(f"method must be one of {', '.join(MARKER_TESTS)}; got {method!r}.")
    classes, codes, tested, reference_code = _groups(labels, n_samples, reference)
    features = _checked_features(features, n_total)
    names = tuple(str(name) for name in feature_names) if feature_names is not None else \
        tuple(f"feature {j}" for j in range(n_total))
    if len(names) != n_total:
        raise InputError(f"feature_names has {len(names)} names for {n_total} features.")
    shape = (tested.size, features.size)
    mean, mean_rest, fraction, fraction_rest, score, p_value = (np.zeros(shape) for _ in range(6))
    def ranked(values):  # each tested class's rank-sum z against the rest (one ranking), or against the reference
        if reference_code is None:
            return _rank_sum_z(values, codes, classes.size, tie_correct)[tested]
        pairs = [(codes == c) | (codes == reference_code) for c in tested]
        return np.vstack([_rank_sum_z(values[pair], (codes[pair] == c).astype(np.intp), 2, tie_correct)[1]
                          for c, pair in zip(tested, pairs)])

    for start, moments, nonzero, z in _class_summaries(matrix, features, codes, classes.size,
                                                       ranked if method == "wilcoxon" else None):
        if not log1p and min(m.minimum.min() for m in moments) < 0:
            raise InputError("Fold changes of data as given need non-negative values; pass log1p=True for "
                             "log-transformed data.")
        block = slice(start, start + moments[0].mean.size)
        for row, c in enumerate(tested):
            # the rest's moments combined class by class (Chan et al.'s update: no cancellation)
            other = moments[reference_code] if reference_code is not None else \
                functools.reduce(ColumnMoments.combine, [m for d, m in enumerate(moments) if d != c])
            mean[row, block], mean_rest[row, block] = moments[c].mean, other.mean
            fraction[row, block] = nonzero[c] / moments[c].count
            fraction_rest[row, block] = ((nonzero.sum(axis=0) - nonzero[c]) if reference_code is None
                                         else nonzero[reference_code]) / other.count
            if method == "t-test":
                score[row, block], p_value[row, block] = _welch(moments[c], other)
        if z is not None:
            score[:, block] = z
    if method == "wilcoxon":
        from scipy import stats  # here, not at the top: benjamini_hochberg says why

        p_value = 2 * stats.norm.sf(np.abs(score))
    expand = np.expm1 if log1p else (lambda m: m)
    amount, amount_rest = expand(mean) + FOLD_EPSILON, expand(mean_rest) + FOLD_EPSILON
    # a fold change is a ratio of amounts: undefined (NaN, as documented) where a mean is negative
    log2_fold_change = np.log2(amount / amount_rest, out=np.full(amount.shape, np.nan),
                               where=(amount > 0) & (amount_rest > 0))
    p_adjusted = np.vstack([benjamini_hochberg(row) for row in p_value])
    return ClassMarkers(classes=classes[tested], features=features, feature_names=tuple(names[j] for j in features),
                        mean=mean, mean_rest=mean_rest, fraction=fraction, fraction_rest=fraction_rest,
                        log2_fold_change=log2_fold_change, score=score, p_value=p_value, p_adjusted=p_adjusted,
                        method=method, reference="rest" if reference_code is None else classes[reference_code])
