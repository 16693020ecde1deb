"""k-means in NumPy against scikit-learn's KMeans, the clusterings it must give."""

import warnings

import numpy as np
import pytest
from sklearn.cluster import KMeans

from core.data.bundled import load_dataset
from core.errors import InputError
from core.matrix.kmeans import _lloyd, seeded_kmeans
from core.validation import zscores


def _scikit_learn(Z, n_clusters, seed, **options):
    with warnings.catch_warnings():  # duplicates: fewer distinct clusters than asked, said by a warning
        warnings.simplefilter("ignore")
        return KMeans(n_clusters, n_init=1, random_state=seed, **options).fit_predict(Z)


def _cases():
    rng = np.random.default_rng(0)
    faces = load_dataset("warpAR10P")
    for size in (1, 3, 20, 420, 2400):  # the top K of the Q-alpha page, one pixel to every one
        yield f"faces top {size}", zscores(faces.X[:, rng.choice(faces.n_features, size, replace=False)]), 10
    for name in ("iris", "wine", "ALLAML"):  # other shapes and numbers of classes, raw and standardised
        data = load_dataset(name)
        yield name, data.X[:, :300], data.classes.size
        yield f"{name} z-scores", zscores(data.X)[:, :300], data.classes.size
    yield "as many clusters as samples", rng.standard_normal((12, 3)), 12
    yield "one cluster", rng.standard_normal((30, 4)), 1
    yield "duplicated samples", np.repeat(rng.standard_normal((5, 2)), 4, axis=0), 8
    yield "heavy tails", rng.standard_normal((60, 5)) ** 3, 7


@pytest.mark.parametrize("name, Z, n_clusters", list(_cases()), ids=[case[0] for case in _cases()])
def test_each_start_gives_the_clustering_kmeans_of_scikit_learn_gives_with_its_seed(name, Z, n_clusters):
    found = seeded_kmeans(Z, n_clusters, n_runs=6, random_state=4)
    assert len(found) == 6
    for run, labels in enumerate(found):
        assert np.array_equal(labels, _scikit_learn(Z, n_clusters, 4 + run)), f"{name}, start {run}"


def _subset_cases():
    for name, Z, n_clusters in _cases():
        if Z.shape[0] >= 40 and n_clusters <= 10:
            yield name, Z, n_clusters


@pytest.mark.parametrize("name, Z, n_clusters", list(_subset_cases()), ids=[case[0] for case in _subset_cases()])
def test_starts_on_subsets_give_what_kmeans_of_scikit_learn_fitted_on_each_subset_gives(name, Z, n_clusters):
    """Clustering stability's resamples: start ``run`` on ``Z[rows[run]]`` alone, side by side on
    the whole array, labels as scikit-learn's KMeans fitted on the subset with seed ``4 + run``,
    and -1 outside the subset."""
    rng = np.random.default_rng(len(name))
    rows = [np.sort(rng.choice(Z.shape[0], size, replace=False)) for size in (Z.shape[0] * 4 // 5,) * 5 + (40,)]
    found = seeded_kmeans(Z, n_clusters, random_state=4, rows=rows)
    assert len(found) == len(rows)
    for run, (labels, chosen) in enumerate(zip(found, rows)):
        assert np.array_equal(labels[chosen], _scikit_learn(Z[chosen], n_clusters, 4 + run)), f"{name}, start {run}"
        assert np.all(np.delete(labels, chosen) == -1)


def test_subsets_with_empty_clusters_and_their_own_stopping_shift():
    """Duplicated samples leave clusters empty, and each subset stops at its own variances' shift
    (a subset of one tight group beside one that spans both)."""
    rng = np.random.default_rng(5)
    duplicated = np.repeat(rng.standard_normal((6, 2)), 5, axis=0)
    groups = np.vstack([rng.normal(0.0, 0.01, (30, 3)), rng.normal(50.0, 5.0, (30, 3))])
    for Z, rows, n_clusters in ((duplicated, [np.arange(0, 30, 2), np.arange(30)], 8),
                                (groups, [np.arange(30), np.arange(15, 60)], 4)):
        for run, (labels, chosen) in enumerate(zip(seeded_kmeans(Z, n_clusters, random_state=2, rows=rows), rows)):
            assert np.array_equal(labels[chosen], _scikit_learn(Z[chosen], n_clusters, 2 + run))


@pytest.mark.parametrize("tol", [1e-2, 10.0])
def test_the_stopping_shift_is_relative_to_the_features_variances_as_scikit_learns(tol):
    """Loose tolerances stop on the centres' shift, relative to the mean of the features'
    variances (raw wine: variances from 0.01 to 99,000), for the whole array and for subsets."""
    X = load_dataset("wine").X
    rows = [np.arange(0, 178, 2), np.arange(40, 178)]
    for run, labels in enumerate(seeded_kmeans(X, 3, n_runs=3, random_state=6, tol=tol)):
        assert np.array_equal(labels, _scikit_learn(X, 3, 6 + run, tol=tol))
    for run, (labels, chosen) in enumerate(zip(seeded_kmeans(X, 3, random_state=6, tol=tol, rows=rows), rows)):
        assert np.array_equal(labels[chosen], _scikit_learn(X[chosen], 3, 6 + run, tol=tol))


def test_integer_samples_are_clustered_as_floats():
    Z = np.random.default_rng(7).integers(0, 20, size=(50, 3))
    for run, labels in enumerate(seeded_kmeans(Z, 4, n_runs=3, random_state=1)):
        assert np.array_equal(labels, _scikit_learn(Z.astype(float), 4, 1 + run))


def test_subsets_are_refused_when_they_cannot_be_clustered():
    Z = np.random.default_rng(0).standard_normal((10, 2))
    with pytest.raises(InputError, match="between 1 and 3 clusters"):
        seeded_kmeans(Z, 4, rows=[np.arange(3), np.arange(10)])
    with pytest.raises(InputError, match="distinct samples among the 10"):
        seeded_kmeans(Z, 2, rows=[np.array([0, 0, 1])])
    with pytest.raises(InputError, match="distinct samples among the 10"):
        seeded_kmeans(Z, 2, rows=[np.array([3, 12])])
    with pytest.raises(InputError, match="distinct samples among the 10"):
        seeded_kmeans(Z, 2, rows=[np.array([0, 10])])
    with pytest.raises(InputError, match="0 to 9"):
        seeded_kmeans(Z, 2, rows=[np.array([-1, 9])])  # the same sample twice
    with pytest.raises(InputError, match="one non-empty array"):
        seeded_kmeans(Z, 2, rows=[np.array([], dtype=int)])


def test_an_empty_cluster_takes_the_farthest_sample_as_kmeans_of_scikit_learn_does():
    """Started with centres far from every sample, those clusters are empty after the first
    assignment and take the samples farthest from their centres (k-means++ seeding, which
    starts each centre on a sample, seldom leaves a cluster empty)."""
    for seed in range(10):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((40, 3))
        start = np.vstack([X[rng.choice(40, 4, replace=False)], [[50.0, 50.0, 50.0], [-60.0, 0.0, 0.0]]])
        centred = X - X.mean(axis=0)
        ours = _lloyd(centred, (start - X.mean(axis=0))[None].copy(), 1e-4 * np.var(centred, axis=0).mean(), 300)[0]
        assert np.array_equal(ours, KMeans(6, init=start, n_init=1).fit_predict(X))
        assert np.unique(ours).size == 6


def test_the_labels_are_a_fixed_point_of_lloyd_and_repeat_with_the_seed():
    """Independently of scikit-learn: each sample is in the cluster of the nearest of the clusters'
    means (up to ties), and the same seeds give the same clusterings."""
    rng = np.random.default_rng(3)
    Z = np.vstack([rng.normal(centre, 1.0, (25, 4)) for centre in (-6.0, 0.0, 6.0)])
    found = seeded_kmeans(Z, 3, n_runs=4, random_state=9)
    for labels in found:
        means = np.array([Z[labels == cluster].mean(axis=0) for cluster in range(3)])
        distances = ((Z[:, None, :] - means[None]) ** 2).sum(axis=2)
        assert np.all(distances[np.arange(Z.shape[0]), labels] <= distances.min(axis=1) + 1e-9)
    again = seeded_kmeans(Z, 3, n_runs=4, random_state=9)
    assert all(np.array_equal(a, b) for a, b in zip(found, again))


def test_no_start_asked_for_gives_no_clustering():
    assert seeded_kmeans(np.arange(12.0).reshape(6, 2), 2, n_runs=0) == []


def test_bad_input_is_refused_with_what_to_do():
    with pytest.raises(InputError, match="between 1 and 5 clusters"):
        seeded_kmeans(np.zeros((5, 2)), 6)
    with pytest.raises(InputError, match="finite"):
        seeded_kmeans(np.array([[0.0, np.nan], [1.0, 2.0]]), 1)
    with pytest.raises(InputError, match="2-D"):
        seeded_kmeans(np.zeros(5), 2)
