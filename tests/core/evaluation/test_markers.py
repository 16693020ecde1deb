"""Per-class statistics of features equal scanpy's rank_genes_groups (stored reference), and the
Benjamini-Hochberg correction equals its definition."""

from pathlib import Path

import numpy as np
import pytest

from core import InputError
from core.evaluation.markers import FOLD_EPSILON, benjamini_hochberg, class_markers

REFERENCE = Path(__file__).with_name("data") / "scanpy_rank_genes_groups.npz"


@pytest.fixture(scope="module")
def reference():
    with np.load(REFERENCE) as stored:
        return {key: stored[key] for key in stored.files}


@pytest.mark.parametrize("method", ["t-test", "wilcoxon", "wilcoxon_ties"])
@pytest.mark.parametrize("features", ["all", "subset"])
def test_equals_scanpy_rank_genes_groups(reference, method, features):
    X, labels = reference["X"], reference["labels"]
    chosen = None if features == "all" else reference["subset"]
    markers = class_markers(X, labels, features=chosen, method=method.split("_")[0],
                            tie_correct=method.endswith("ties"))
    assert markers.classes.tolist() == ["B", "NK", "T"]
    expected = {field: reference[f"{method}/{features}/{field}"]
                for field in ("scores", "pvals", "pvals_adj", "logfoldchanges", "pts", "pts_rest")}
    assert np.allclose(markers.score, expected["scores"], rtol=1e-6, atol=1e-6)
    assert np.allclose(markers.p_value, expected["pvals"], rtol=1e-6, atol=1e-12)
    assert np.allclose(markers.p_adjusted, expected["pvals_adj"], rtol=1e-6, atol=1e-12)
    # scanpy keeps the fold changes in float32
    assert np.allclose(markers.log2_fold_change, expected["logfoldchanges"], rtol=1e-6, atol=1e-5)
    assert np.array_equal(markers.fraction, expected["pts"]) and np.array_equal(markers.fraction_rest, expected["pts_rest"])


def test_planted_markers_mark_their_class(reference):
    markers = class_markers(reference["X"], reference["labels"])
    # genes 0-4 raised in B, 5-9 in NK, 10-14 in T
    assert markers.marked_class()[:15].tolist() == [0] * 5 + [1] * 5 + [2] * 5
    table = markers.table()
    top = table.groupby("class").head(5)
    assert table.shape == (3 * 30, 12) and [sorted(top["index"][top["class"] == c]) for c in ("B", "NK", "T")] == \
        [list(range(5 * k, 5 * k + 5)) for k in range(3)]
    own = [markers.p_adjusted[k, 5 * k:5 * k + 5] for k in range(3)]  # each class's own markers
    assert max(p.max() for p in own) < 1e-6


def test_benjamini_hochberg_by_its_definition():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=40) ** 3
    adjusted = benjamini_hochberg(p)
    n = p.size
    # adjusted p_(i) = min over j >= i of p_(j) n / j, capped at 1
    ordered = np.sort(p)
    direct = np.array([min(1.0, min(ordered[j] * n / (j + 1) for j in range(i, n))) for i in range(n)])
    assert np.allclose(np.sort(adjusted), direct)
    assert np.all(adjusted >= p) and benjamini_hochberg([np.nan, 0.01])[0] == 1.0


def test_plain_fold_changes_and_bad_input():
    X = np.array([[0.0, 1.0], [0.0, 3.0], [2.0, 1.0], [4.0, 1.0]])
    markers = class_markers(X, [0, 0, 1, 1], log1p=False)
    assert markers.log2_fold_change[1, 0] == pytest.approx(np.log2((3.0 + 1e-9) / 1e-9))
    assert markers.log2_fold_change[0, 1] == pytest.approx(np.log2(2.0))
    # feature 0 is zero throughout class 0: its fold changes are the offset's, and say so
    assert markers.zero_mean().tolist() == [["class", ""], ["rest", ""]]
    table = markers.table()
    assert table.set_index(["class", "feature"]).loc[(1, "feature 0"), "mean_zero_in"] == "rest"
    with pytest.raises(InputError, match="at least two classes"):
        class_markers(X, [0, 0, 0, 0])
    with pytest.raises(InputError, match="has one sample"):
        class_markers(X, [0, 0, 0, 1])
    with pytest.raises(InputError, match="method must be one of"):
        class_markers(X, [0, 0, 1, 1], method="logreg")
    with pytest.raises(InputError, match="non-negative"):
        class_markers(-X, [0, 0, 1, 1], log1p=False)
    with pytest.raises(InputError, match="column indices"):
        class_markers(X, [0, 0, 1, 1], features=[2])


def test_fold_change_is_nan_exactly_where_a_mean_is_negative():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    X[:, :3] = np.abs(X[:, :3]) + 1.0  # positive columns: fold changes defined
    labels = np.repeat([0, 1], 20)
    markers = class_markers(X, labels, log1p=True)  # expm1 of a negative mean log is negative
    means = np.expm1(np.vstack([X[labels == c].mean(axis=0) for c in (0, 1)]))
    rest = np.expm1(np.vstack([X[labels != c].mean(axis=0) for c in (0, 1)]))
    undefined = (means + FOLD_EPSILON <= 0) | (rest + FOLD_EPSILON <= 0)
    assert np.array_equal(np.isnan(markers.log2_fold_change), undefined)
    assert np.isfinite(markers.log2_fold_change[:, :3]).all()


def test_five_named_genes_of_scanpys_pbmc_as_rank_genes_groups_gives_them():
    """Issue 60's feature lookup: CD79A, NKG7, FCER1A, CST3 and MS4A1 of scanpy's own
    pbmc68k_reduced (raw.X, 10 bulk labels), each class against the rest, as scanpy 1.11.5's
    rank_genes_groups gives them (make_pbmc_reference.py): score, p-value, log2 fold change and
    fraction of expressing cells per class to 1e-6 (p-values in logs); the adjusted p-value over all 765 genes (the
    lookup's correction) from scanpy's p-values of every gene."""
    with np.load(REFERENCE.with_name("scanpy_pbmc_five_genes.npz")) as stored:
        reference = {key: stored[key] for key in stored.files}
    markers = class_markers(reference["X"], reference["labels"], feature_names=list(reference["genes"]), log1p=True)
    rows = [list(markers.classes).index(group) for group in reference["groups"]]  # scanpy's order of the groups
    np.testing.assert_allclose(markers.score[rows], reference["scores"], rtol=1e-6, atol=1e-9)
    # in logs: a p-value of 5e-35 follows the score's last digits (scanpy sums float32 values)
    np.testing.assert_allclose(np.log(markers.p_value[rows]), np.log(reference["pvals"]), rtol=1e-6)
    np.testing.assert_allclose(markers.log2_fold_change[rows], reference["logfoldchanges"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(markers.fraction[rows], reference["pts"], atol=1e-12)
    adjusted = np.array([benjamini_hochberg(p)[reference["columns"]] for p in reference["pvals_every_gene"]])
    np.testing.assert_allclose(np.log(adjusted), np.log(reference["pvals_adj"]), rtol=1e-6)
    # the lookup's rows for one gene: the same numbers, one row per class
    looked_up = markers.of_feature(1)  # NKG7
    np.testing.assert_allclose(looked_up["score"].to_numpy()[rows], reference["scores"][:, 1], rtol=1e-6)
    assert list(looked_up["class"]) == list(markers.classes)


def test_each_classes_top_markers_and_how_far_down_a_selection_reaches_them():
    """top_per_class against a sort by hand, and selection_reach against a loop over the ranking:
    the first of each class's best markers the selection ranks, and where."""
    from core.evaluation.markers import class_markers, selection_reach

    rng = np.random.default_rng(3)
    labels = np.repeat(["B", "T", "mono"], 30)
    X = rng.normal(size=(90, 40))
    X[labels == "B", 5] += 3.0
    X[labels == "T", 12] += 3.0
    X[labels == "mono", 20:23] += 3.0
    markers = class_markers(X, labels, method="t-test", log1p=True)
    top = markers.top_per_class(4)
    for c in range(3):
        assert list(top[c]) == list(np.argsort(-markers.score[c], kind="stable")[:4])
    ranking = np.array([20, 21, 22, 30, 31, 12, 5] + [j for j in range(40) if j not in (20, 21, 22, 30, 31, 12, 5)])
    reach = {row["class"]: row for row in selection_reach(markers, ranking, n_markers=3)}
    for c, label in enumerate(markers.classes):
        best = [int(markers.features[j]) for j in top[c][:3]]
        first = min(best, key=lambda column: list(ranking).index(column))
        assert reach[label]["index"] == first
        assert reach[label]["selection_rank"] == list(ranking).index(first) + 1
        assert reach[label]["marker_rank"] == best.index(first) + 1
    assert reach["mono"]["selection_rank"] == 1 and reach["T"]["index"] == 12 and reach["B"]["selection_rank"] == 7
    with pytest.raises(InputError):
        markers.top_per_class(0)


def _counts_with_ties(seed=3, n=90, p=14):
    """Log counts (many zeros and equal values: ties) in three classes of unequal size."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(["a", "b", "c"], [25, 40, 25])
    X = np.log1p(rng.poisson(1.2, size=(n, p)).astype(float))
    X[labels == "b", :4] += 1.0
    return X, labels


@pytest.mark.parametrize("tie_correct", [False, True])
def test_one_class_against_another_equals_scipy(tie_correct):
    """Issue 77 (2): with ``reference="a"`` each other class is tested against class a alone:
    Welch's t as SciPy's ``ttest_ind(equal_var=False)`` on the two classes' samples, the rank sum as
    ``mannwhitneyu`` (normal approximation without continuity; ranks over the two classes only;
    SciPy always corrects for ties, so the uncorrected z is checked against the formula on
    ``rankdata``), and BH over all features by its formula."""
    from scipy import stats

    X, labels = _counts_with_ties()
    welch = class_markers(X, labels, method="t-test", reference="a")
    ranked = class_markers(X, labels, method="wilcoxon", reference="a", tie_correct=tie_correct)
    assert welch.classes.tolist() == ["b", "c"] and welch.reference == "a"
    for row, group in enumerate(["b", "c"]):
        inside, ref = X[labels == group], X[labels == "a"]
        t, p = stats.ttest_ind(inside, ref, equal_var=False)
        np.testing.assert_allclose(welch.score[row], t, rtol=1e-10)
        np.testing.assert_allclose(welch.p_value[row], p, rtol=1e-10)
        np.testing.assert_allclose(welch.mean_rest[row], ref.mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(welch.fraction_rest[row], (ref != 0).mean(axis=0))
        both = np.vstack([inside, ref])
        n1, n2 = len(inside), len(ref)
        ranks = stats.rankdata(both, axis=0)[:n1].sum(axis=0)
        correction = np.array([stats.tiecorrect(both[:, j]) for j in range(X.shape[1])]) if tie_correct else 1.0
        z = (ranks - n1 * (n1 + n2 + 1) / 2) / np.sqrt(correction * n1 * n2 * (n1 + n2 + 1) / 12)
        np.testing.assert_allclose(ranked.score[row], z, rtol=1e-10)
        if tie_correct:
            _, p_scipy = stats.mannwhitneyu(inside, ref, method="asymptotic", use_continuity=False, axis=0)
            np.testing.assert_allclose(ranked.p_value[row], p_scipy, rtol=1e-8)
        order = np.argsort(ranked.p_value[row])
        m = X.shape[1]
        bh = np.minimum.accumulate((ranked.p_value[row][order] * m / np.arange(1, m + 1))[::-1])[::-1]
        np.testing.assert_allclose(ranked.p_adjusted[row][order], np.minimum(bh, 1.0), rtol=1e-12)


def test_sparse_and_dask_data_give_the_dense_answer_block_by_block(monkeypatch):
    """Issue 77 (2): the same statistics from a SciPy sparse matrix and a Dask array as from the
    dense array, the features read a few columns at a time (the block budget made small: five
    blocks of three columns), never the whole matrix densified."""
    import dask.array as da
    from scipy import sparse

    import core.evaluation.markers as markers_module

    X, labels = _counts_with_ties()
    monkeypatch.setattr(markers_module, "BLOCK_VALUES", 3 * X.shape[0])
    densified = []
    for kind in (sparse.csr_matrix, sparse.csc_matrix):  # whatever the block is made dense from
        monkeypatch.setattr(kind, "toarray", lambda self, *a, real=kind.toarray, **k: densified.append(self.shape) or
                            real(self, *a, **k))
    for method, reference in (("t-test", "rest"), ("wilcoxon", "rest"), ("wilcoxon", "c")):
        dense = class_markers(X, labels, method=method, reference=reference, tie_correct=True)
        for other in (sparse.csr_matrix(X), da.from_array(X, chunks=(30, 14))):
            found = class_markers(other, labels, method=method, reference=reference, tie_correct=True)
            for field in ("score", "p_value", "p_adjusted", "mean", "mean_rest", "fraction", "fraction_rest",
                          "log2_fold_change"):
                np.testing.assert_allclose(getattr(found, field), getattr(dense, field), rtol=1e-10, atol=1e-12,
                                           err_msg=f"{method} {reference} {type(other).__name__} {field}")
    assert densified and max(min(shape) for shape in densified) <= 3  # never more than three features at once


def test_rank_sums_and_tie_correction_of_a_block_are_scipys_per_column():
    """The rank sums per group of every column at once equal SciPy's ``rankdata`` (average ranks
    over ties) summed by group, and the tie correction SciPy's ``tiecorrect``."""
    from scipy import stats

    from core.evaluation.markers import _rank_sums

    X, labels = _counts_with_ties()
    groups = np.unique(labels, return_inverse=True)[1]
    sums, correction = _rank_sums(np.asfortranarray(X), groups, 3, tie_correct=True)
    ranks = stats.rankdata(X, axis=0)
    np.testing.assert_allclose(sums, [ranks[groups == g].sum(axis=0) for g in range(3)], rtol=1e-12)
    np.testing.assert_allclose(correction, [stats.tiecorrect(X[:, j]) for j in range(X.shape[1])], rtol=1e-12)
    assert np.all(_rank_sums(X, groups, 3, tie_correct=False)[1] == 1.0)


def test_a_reference_that_is_no_class_and_a_class_of_one_sample_are_refused_with_what_to_do():
    X, labels = _counts_with_ties()
    with pytest.raises(InputError, match="The reference class 'z' is not one of the classes \\(a, b, c\\)"):
        class_markers(X, labels, reference="z")
    with pytest.raises(InputError, match="has one sample"):
        class_markers(X[:26], labels[:26])
