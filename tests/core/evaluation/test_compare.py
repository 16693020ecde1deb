"""The comparison protocol (core.evaluation.compare): one tidy table whose held-out rows are the
fold scores of held_out_curves, whose in-sample rows rank on every sample, whose unsupervised
methods never see labels, and whose summary picks the best size and the mean over sizes."""

import numpy as np
import pytest

from core import InputError, load_dataset
from core.evaluation.compare import (comparison_curves, comparison_folds, comparison_sizes, compare_methods,
                                     held_out_curves, summarise_comparison)
from core.selection.methods import rank_features


@pytest.fixture(scope="module")
def wine():
    return load_dataset("wine")


def test_the_table_holds_held_out_curves_fold_by_fold(wine):
    sizes = [2, 5, 13]
    table = compare_methods(wine.X, wine.labels, {"fisher": "fisher"}, sizes=sizes, n_splits=4,
                            protocols=("held-out", "in-sample"))
    assert set(table.columns) == {"method", "supervised", "protocol", "size", "fold", "measure", "value"}
    assert len(table) == 2 * 4 * len(sizes) * 4 and table.supervised.all()
    fisher = lambda X, y: rank_features("fisher", X, y)  # noqa: E731
    for protocol, within in (("held-out", True), ("in-sample", False)):
        expected = held_out_curves(wine.X, wine.labels, fisher, sizes, n_splits=4, select_within_folds=within)
        curves = comparison_curves(table, protocol)["fisher"]
        for measure in ("knn", "accuracy", "nmi", "precision"):
            np.testing.assert_allclose(curves[measure], expected[measure], atol=1e-12)
            np.testing.assert_allclose(curves[f"{measure}_sd"], expected[f"{measure}_sd"], atol=1e-12)


def test_unsupervised_methods_get_no_labels_and_callables_are_unsupervised_unless_said(wine):
    seen = []

    def record(X, y):
        seen.append(y is None)
        return np.arange(X.shape[1])

    compare_methods(wine.X, wine.labels, {"mine": record}, sizes=[3], n_splits=3)
    compare_methods(wine.X, wine.labels, {"mine": record}, sizes=[3], n_splits=3, supervised={"mine": True})
    assert seen == [True] * 3 + [False] * 3
    table = compare_methods(wine.X, wine.labels, {"variance": "variance"}, sizes=[3], n_splits=3)
    assert not table.supervised.any()


def test_the_summary_picks_the_best_size_beside_the_mean_over_sizes(wine):
    table = compare_methods(wine.X, wine.labels, {"variance": "variance"}, sizes=[1, 4, 13], n_splits=3)
    curve = comparison_curves(table)["variance"]
    row = summarise_comparison(table, "knn").iloc[0]
    at = int(np.argmax(curve["knn"]))
    assert row.best == curve["knn"][at] == max(curve["knn"]) and row.size_at_best == curve["size"][at]
    assert row.mean_over_sizes == pytest.approx(np.mean(curve["knn"]))
    with pytest.raises(InputError, match="measure"):
        summarise_comparison(table, "kuncheva")


def test_sizes_folds_and_refusals():
    assert comparison_sizes(7) == [1, 2, 3, 4, 5, 6, 7]
    assert comparison_sizes(2400) == [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2400]
    assert comparison_folds(np.repeat([0, 1], [3, 10])) == 3
    with pytest.raises(InputError, match="two samples of every class"):
        comparison_folds(np.array([0, 1, 1, 1]))
    X = np.random.default_rng(0).normal(size=(20, 4))
    with pytest.raises(InputError, match="protocols"):
        compare_methods(X, np.repeat([0, 1], 10), {"variance": "variance"}, protocols=("leave-one-out",))


def test_the_summary_puts_the_best_first_and_says_a_tie_is_a_tie():
    """Issue 59: rows were not sorted, no winner was marked, and four methods at 0.9426 on
    dermatology looked like a ranking."""
    from core.evaluation.compare import summarise_curves

    def curve(*values):
        return {"size": [1, 2, 4][:len(values)], "accuracy": list(values)}

    tied = summarise_curves({"a": curve(0.5, 0.7), "b": curve(0.94, 0.9), "c": curve(0.2, 0.94),
                             "pca": {"size": [1]}, "d": curve(0.94)}, "accuracy")
    assert list(tied["method"]) == ["b", "c", "d", "a", "pca"]  # best first, equals in given order, none last
    assert list(tied["standing"]) == ["tied for best"] * 3 + ["", ""]
    alone = summarise_curves({"a": curve(0.5, 0.7), "b": curve(0.9)}, "accuracy")
    assert list(alone["method"]) == ["b", "a"] and list(alone["standing"]) == ["best", ""]


def test_distances_grown_size_by_size_give_scikit_learns_1_nn_and_the_direct_precision_index(monkeypatch):
    """The folds grow their distance matrices from one size to the next (segmentation: 4.5 s a
    method before, 1 s after); scikit-learn's 1-NN and the precision index computed afresh at each
    size (the path kept beyond DISTANCE_VALUES) give the same scores, fold by fold."""
    from core.evaluation import compare

    rng = np.random.default_rng(5)
    y = np.repeat(np.arange(3), 40)
    X = rng.standard_normal((120, 9)) + 1.5 * np.eye(3)[y] @ rng.standard_normal((3, 9))  # continuous: no ties
    ranking = lambda X_, y_: np.argsort(-np.abs(X_[y_ == 0].mean(axis=0) - X_[y_ != 0].mean(axis=0)))
    sizes = [1, 2, 4, 9]
    grown = compare.fold_scores(X, y, ranking, sizes, n_splits=4)
    monkeypatch.setattr(compare, "DISTANCE_VALUES", 0)
    afresh = compare.fold_scores(X, y, ranking, sizes, n_splits=4)
    for name in ("knn", "accuracy", "nmi"):
        np.testing.assert_array_equal(grown[name], afresh[name])
    np.testing.assert_allclose(grown["precision"], afresh["precision"], rtol=0, atol=1e-12)


def test_a_stop_between_folds_ends_the_evaluation():
    from core.errors import Stopped
    from core.evaluation.compare import fold_scores

    reports = []
    y = np.repeat([0, 1], 20)
    X = np.random.default_rng(1).standard_normal((40, 4)) + y[:, None]
    with pytest.raises(Stopped):
        fold_scores(X, y, lambda X_, y_: np.arange(4), [1, 4], n_splits=4,
                    progress=lambda report: reports.append(report.done) or (False if report.done == 2 else None))
    assert reports == [1, 2]
