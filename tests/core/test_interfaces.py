"""One convention for random_state, no parameter silently rewritten, wrong types named (issue 58,
points 7 and 12). Each test failed on the code before (e1e011a)."""

import warnings

import numpy as np
import pytest

from core.data.generators import weston_linear
from core.errors import InputError
from core.evaluation.metrics import kmeans_scores
from core.selection.automatic import choose_settings
from core.selection.qalpha import pairs_from_labels, q_alpha
from core.selection.selectors import QAlphaSelector
from core.validation import check_random_state, random_seed


def test_pairs_from_a_999_to_1_split_are_all_there_and_valid():
    labels = np.r_[np.zeros(999), 1]
    pairs = pairs_from_labels(labels, 50, random_state=0)
    assert pairs.shape == (50, 2) and len({tuple(p) for p in pairs}) == 50
    assert np.all(labels[pairs[:, 0]] != labels[pairs[:, 1]]) and np.all(pairs[:, 0] < pairs[:, 1])
    every = pairs_from_labels(labels, 999, random_state=1)
    assert len({tuple(p) for p in every}) == 999
    with pytest.raises(InputError, match="only 999 pairs"):
        pairs_from_labels(labels, 1000)


def test_pairs_are_uniform_over_the_pairs_with_different_labels():
    """Classes of 2, 3 and 5 samples: 6, 10 and 15 different-label pairs between them (31 in
    all); the pairs drawn fall between the classes in those proportions."""
    labels = np.array([0] * 2 + [1] * 3 + [2] * 5)
    counts = np.zeros(3)
    for seed in range(400):
        pair = pairs_from_labels(labels, 1, random_state=seed)[0]
        kinds = tuple(sorted(labels[pair]))
        counts[{(0, 1): 0, (0, 2): 1, (1, 2): 2}[kinds]] += 1
    expected = 400 * np.array([6, 10, 15]) / 31
    assert np.all(np.abs(counts - expected) <= 4 * np.sqrt(expected))


@pytest.mark.parametrize("value", [None, 3, np.int64(3), np.random.default_rng(0)])
def test_random_state_takes_none_an_integer_or_a_generator_everywhere(value):
    data = weston_linear(40, random_state=0)
    Z, labels = data.X[:, :6], data.labels
    accuracy, _ = kmeans_scores(Z, labels, n_runs=2, random_state=value)
    assert accuracy.shape == (2,)
    assert pairs_from_labels(labels, 5, random_state=value).shape == (5, 2)
    assert q_alpha(data.X, 2, init="random", random_state=value, max_iter=50).alpha.shape == (data.n_features,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chosen = choose_settings(data.X[:, :20], k=2, lam="auto", random_state=value)
    assert chosen.k == 2
    assert isinstance(check_random_state(value), np.random.Generator) and isinstance(random_seed(value), int)


@pytest.mark.parametrize("value", [1.5, "7", True, -1, np.random.RandomState(0)])
def test_a_random_state_of_another_kind_is_an_input_error_naming_it(value):
    data = weston_linear(40, random_state=0)
    for call in (lambda: kmeans_scores(data.X[:, :6], data.labels, random_state=value),
                 lambda: q_alpha(data.X, 2, random_state=value),
                 lambda: pairs_from_labels(data.labels, 3, random_state=value),
                 lambda: choose_settings(data.X[:, :20], k=2, lam="auto", random_state=value)):
        with pytest.raises(InputError, match="random_state"):
            call()


def test_the_same_integer_gives_the_same_result():
    data = weston_linear(40, random_state=0)
    assert np.array_equal(q_alpha(data.X, 2, init="random", random_state=5, max_iter=30).alpha,
                          q_alpha(data.X, 2, init="random", random_state=5, max_iter=30).alpha)
    first = kmeans_scores(data.X, data.labels, random_state=np.random.default_rng(9))
    second = kmeans_scores(data.X, data.labels, random_state=np.random.default_rng(9))
    assert np.array_equal(first[0], second[0])


def test_the_selector_refuses_a_supervised_k_that_q_alpha_refuses():
    data = weston_linear(40, random_state=0)
    with pytest.raises(InputError, match="number of classes minus one"):
        QAlphaSelector(k=3, supervised=True).fit(data.X, data.labels)
    assert QAlphaSelector(k=1, supervised=True).fit(data.X, data.labels).k_ == 1


def test_the_selector_says_when_it_uses_fewer_clusters_than_asked():
    X = weston_linear(6, random_state=0).X
    with pytest.warns(UserWarning, match="k = 5 was used"):
        selector = QAlphaSelector(k=8).fit(X)
    assert selector.k_ == 5 == selector.result_.k
