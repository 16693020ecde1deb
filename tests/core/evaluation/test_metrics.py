"""Metrics against hand-computed cases."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InputError
from core.evaluation.metrics import (accuracy_curve, adjusted_rand, clustering_accuracy, jaccard_index, kuncheva_index, nmi,
                          normalized_precision_index, pairwise_accuracy, selection_stability,
                          stability_curve, test_information)


def test_permuted_labelling_scores_one():
    truth = np.array([0, 0, 1, 1, 2, 2, 2])
    found = np.array([5, 5, 9, 9, 7, 7, 7])  # same partition, other names
    assert clustering_accuracy(truth, found) == 1.0
    assert pairwise_accuracy(truth, found) == 1.0 and pairwise_accuracy(truth, found, balanced=False) == 1.0
    assert np.isclose(nmi(truth, found), 1.0)


def test_hand_computed_values():
    truth = np.array([0, 0, 0, 1, 1, 1])
    found = np.array([0, 0, 1, 1, 1, 1])
    assert np.isclose(clustering_accuracy(truth, found), 5 / 6)
    # pairs: 15 in all; same-class pairs 6 (3 + 3), of which together: (0,1) and the 3 in class 1 -> 4
    # different-class pairs 9, of which apart: samples 0,1 vs 3,4,5 -> 6
    assert np.isclose(pairwise_accuracy(truth, found), 0.5 * 4 / 6 + 0.5 * 6 / 9)
    assert np.isclose(pairwise_accuracy(truth, found, balanced=False), (4 + 6) / 15)
    assert np.isclose(clustering_accuracy([0, 1, 0, 1], [0, 0, 0, 0]), 0.5)


def test_precision_index_pure_and_random():
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(4), 30)
    pure = np.eye(4)[labels] * 10 + rng.normal(0, 0.1, (120, 4))
    assert np.isclose(normalized_precision_index(pure, labels, range(1, 11)), 1.0)
    noise = rng.standard_normal((120, 5))
    scores = [normalized_precision_index(rng.standard_normal((120, 5)), labels) for _ in range(10)]
    assert abs(np.mean(scores)) < 0.05
    # tiny example by hand: points on a line, labels a a b b; 1-NN of each shares its label
    X = np.array([[0.0], [1.0], [10.0], [11.0]])
    chance = (2 * 1 + 2 * 1) / (4 * 3)
    assert np.isclose(normalized_precision_index(X, ["a", "a", "b", "b"], [1]), (1 - chance) / (1 - chance))
    assert np.isclose(normalized_precision_index(X, ["a", "a", "b", "b"], [2]), (0.5 - chance) / (1 - chance))


def test_precision_index_of_some_samples_against_a_loop():
    """``samples`` averages those samples' neighbourhoods (over all samples) against their own
    chance levels; all the samples give the plain index."""
    rng = np.random.default_rng(4)
    X, labels = rng.normal(size=(15, 3)), np.repeat([0, 1, 2], [4, 5, 6])
    rows = np.array([0, 3, 7, 12])
    scores, chances = [], []
    for i in rows:
        distances = np.linalg.norm(X - X[i], axis=1)
        distances[i] = np.inf
        nearest = np.argsort(distances, kind="stable")
        scores.append(np.mean([np.mean(labels[nearest[:k]] == labels[i]) for k in (1, 2, 3)]))
        chances.append((np.sum(labels == labels[i]) - 1) / 14)
    expected = (np.mean(scores) - np.mean(chances)) / (1 - np.mean(chances))
    assert np.isclose(normalized_precision_index(X, labels, [1, 2, 3], samples=rows), expected, atol=1e-12)
    assert normalized_precision_index(X, labels, [1, 2], samples=np.arange(15)) == pytest.approx(
        normalized_precision_index(X, labels, [1, 2]), abs=1e-12)
    for wrong in ([], [15], [0.5]):
        with pytest.raises(InputError, match="samples must be indices"):
            normalized_precision_index(X, labels, [1], samples=wrong)


def test_test_information_in_bits():
    y = np.array([0, 1, 0, 1])
    perfect = np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=float)
    assert np.isclose(test_information(y, perfect, [0, 1]), 1.0)
    chance = np.full((4, 2), 0.5)
    assert np.isclose(test_information(y, chance, [0, 1]), 0.0)
    assert test_information(y, perfect[::-1][[1, 0, 3, 2]][::-1], [0, 1]) <= 1.0


def test_stability_indices():
    assert kuncheva_index([1, 2, 3], [1, 2, 3], 10) == 1.0
    assert np.isclose(kuncheva_index([1, 2], [3, 4], 10), (0 - 4) / (2 * 8))
    assert jaccard_index([1, 2, 3], [2, 3, 4]) == 0.5
    rng = np.random.default_rng(0)
    random = [kuncheva_index(rng.choice(100, 10, replace=False), rng.choice(100, 10, replace=False), 100)
              for _ in range(400)]
    assert abs(np.mean(random)) < 0.03
    X = rng.standard_normal((80, 20))
    X[:, :3] *= 5  # three features of much larger variance: a variance ranking is stable
    result = selection_stability(X, None, lambda A, y: np.argsort(-A.var(axis=0)), top_k=3,
                                 n_bootstrap=10, random_state=0)
    assert result.kuncheva == 1.0 and np.array_equal(np.flatnonzero(result.frequency == 1), [0, 1, 2])
    with pytest.raises(InputError, match="top_k"):
        selection_stability(X, None, lambda A, y: np.arange(20), top_k=0)


def test_stability_curve_matches_the_single_size_measure_and_drops_past_the_stable_block():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 30))
    X[:, :4] *= np.array([8.0, 6.0, 5.0, 4.0])  # a stable top 4; the rest ranked by noise
    by_variance = lambda A, y: np.argsort(-A.var(axis=0))  # noqa: E731
    calls = []
    curve = stability_curve(X, None, by_variance, [2, 4, 10], n_bootstrap=8, random_state=3,
                            progress=lambda report: calls.append((report.done, report.total)))
    single = selection_stability(X, None, by_variance, top_k=10, n_bootstrap=8, random_state=3)
    assert np.isclose(curve["kuncheva"][2], single.kuncheva) and np.isclose(curve["jaccard"][2], single.jaccard)
    assert curve["kuncheva"][1] == 1.0 and curve["kuncheva"][2] < 0.9
    assert calls[-1] == (8, 8) and len(calls) == 8
    with pytest.raises(InputError, match="size"):
        stability_curve(X, None, by_variance, [30])


def test_accuracy_curve_improves_with_relevant_features():
    from core.data.generators import weston_linear
    data = weston_linear(300, random_state=0)
    curve = accuracy_curve(data.X[:200], data.labels[:200], data.X[200:], data.labels[200:],
                           ranking=np.r_[0:6, 6:202], sizes=[1, 6, 202])
    assert curve.error[1] < 0.1 and curve.error[1] < curve.error[2]
    assert curve.information[1] > 0.5 >= curve.information[0] - 0.5


def test_selection_curves_reward_the_relevant_features():
    from core.evaluation.metrics import selection_curves
    from core.data.generators import weston_linear
    data = weston_linear(200, random_state=0)
    curves = selection_curves(data.X, data.labels,
                              {"relevant first": np.arange(202), "noise first": np.arange(202)[::-1]},
                              sizes=[3, 6], n_runs=3)
    assert curves["relevant first"]["size"] == [3, 6]
    for metric in ("accuracy", "nmi", "precision"):
        assert curves["relevant first"][metric][0] > curves["noise first"][metric][0]
    assert curves["relevant first"]["accuracy"][0] > 0.8


def test_kmeans_scores_are_the_runs_selection_curves_average_and_repeat_with_the_seed():
    """One score per k-means start, paired by seed (the same starts on any feature set), and the
    means are what selection_curves reports."""
    from sklearn.cluster import KMeans

    from core.evaluation.metrics import kmeans_scores, selection_curves, zscores
    from core.data.generators import weston_linear
    data = weston_linear(120, random_state=1)
    Z = zscores(data.X)[:, :6]
    accuracy, information = kmeans_scores(Z, data.labels, n_runs=4, random_state=2)
    assert accuracy.shape == information.shape == (4,)
    again = kmeans_scores(Z, data.labels, n_runs=4, random_state=2)
    assert np.array_equal(accuracy, again[0]) and np.array_equal(information, again[1])
    by_hand = [clustering_accuracy(data.labels, KMeans(2, n_init=1, random_state=2 + run).fit_predict(Z))
               for run in range(4)]
    assert np.array_equal(accuracy, by_hand)
    curves = selection_curves(data.X, data.labels, {"first six": np.arange(data.n_features)}, [6], n_runs=4,
                              random_state=2)["first six"]
    assert curves["accuracy"][0] == pytest.approx(accuracy.mean()) and curves["nmi"][0] == pytest.approx(information.mean())


def test_zscores_match_scipy_and_use_the_reference_statistics():
    from scipy import stats

    from core.validation import zscores

    rng = np.random.default_rng(4)
    X = rng.normal(3.0, 2.0, size=(30, 4))
    expected = stats.zscore(X, axis=0)
    X[:, 2] = 7.0  # constant: centred, not divided by zero
    expected[:, 2] = 0.0
    assert np.allclose(zscores(X), expected)
    other = rng.normal(size=(5, 4))
    spread = X.std(axis=0)
    spread[2] = 1.0
    assert np.allclose(zscores(other, reference=X), (other - X.mean(axis=0)) / spread)


def test_projection_curves_score_extracted_features_as_selection_curves_score_selected_ones():
    """PCA with every component is a rotation of the standardised data: it groups the samples
    exactly as all the features do (distances are kept), so both curves agree there."""
    from core.evaluation.metrics import projection_curves, selection_curves

    rng = np.random.default_rng(0)
    labels = np.repeat([0, 1, 2], 20)
    X = rng.standard_normal((60, 6)) + labels[:, None] * [2, 0, 0, 1, 0, 0]
    extracted = projection_curves(X, labels, {"PCA": "pca"}, [1, 2, 6, 10], n_runs=3)["PCA"]
    selected = selection_curves(X, labels, {"all": np.arange(6)}, [6], n_runs=3)["all"]
    assert extracted["size"] == [1, 2, 6]  # no more dimensions than features
    assert extracted["precision"][-1] == pytest.approx(selected["precision"][0], abs=1e-12)
    assert extracted["accuracy"][-1] == pytest.approx(selected["accuracy"][0], abs=1e-12)
    with pytest.raises(InputError, match="CPCA needs side data"):
        projection_curves(X, labels, {"CPCA": "cpca"}, [2])
    with pytest.raises(InputError, match="Unknown projection 'ica'"):
        projection_curves(X, labels, {"ICA": "ica"}, [2])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 7)), min_size=1, max_size=80))
def test_nmi_equals_scikit_learns_on_any_pair_of_labellings(pairs):
    """The NMI computed from the contingency table is scikit-learn's normalized_mutual_info_score
    (arithmetic mean of the entropies), its limits included: labellings that do not split the
    samples (1) and independent ones (0)."""
    from sklearn.metrics import normalized_mutual_info_score

    truth, found = np.array(pairs).T
    assert nmi(truth, found) == pytest.approx(normalized_mutual_info_score(truth, found), abs=1e-12)
    assert nmi(found, truth) == pytest.approx(nmi(truth, found), abs=1e-12)  # symmetric


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 7)), min_size=1, max_size=80))
def test_adjusted_rand_equals_scikit_learns_on_any_pair_of_labellings(pairs):
    """The adjusted Rand index from the contingency table's pair counts is scikit-learn's
    adjusted_rand_score, its limits included (both labellings keep all samples together, or
    each sample alone: 1)."""
    from sklearn.metrics import adjusted_rand_score

    truth, found = np.array(pairs).T
    assert adjusted_rand(truth, found) == pytest.approx(adjusted_rand_score(truth, found), abs=1e-12)
    assert adjusted_rand(found, truth) == pytest.approx(adjusted_rand(truth, found), abs=1e-12)


def test_adjusted_rand_by_hand():
    # pairs of 4 samples: 6; together in both: none; truth together only: (0,1), (2,3); found
    # together only: (0,2), (1,3); apart in both: 2. ARI = 2 (0 * 2 - 2 * 2) / ((0 + 2)(2 + 2) * 2) = -0.5
    assert adjusted_rand([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(-0.5)
    assert adjusted_rand([0, 0, 1, 1], [5, 5, 2, 2]) == 1.0
    assert adjusted_rand([0, 1, 2], [0, 0, 0]) == 0.0
    assert adjusted_rand([4, 4, 4], [1, 1, 1]) == 1.0 and adjusted_rand([0, 1, 2], [2, 0, 1]) == 1.0


def test_nmi_limits():
    assert nmi([3, 3, 3], [1, 1, 1]) == 1.0  # neither splits the samples
    assert nmi([0, 0, 1, 1], [0, 0, 0, 0]) == 0.0  # one labelling carries nothing
    assert nmi([0, 0, 1, 1], [0, 1, 0, 1]) == 0.0  # independent
    assert nmi([0, 0, 1, 1], [1, 1, 0, 0]) == pytest.approx(1.0, abs=1e-15)
