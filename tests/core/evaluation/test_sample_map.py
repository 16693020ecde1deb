"""The server's map of the samples against scikit-learn's PCA of the same standardised columns."""

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler

from core import InputError
from core.evaluation.sample_map import sample_map

RNG = np.random.default_rng(3)


def _signs(reference, coordinates):
    """Each axis's sign that makes ``coordinates`` agree with ``reference``."""
    return np.where(np.sum(reference * coordinates, axis=0) < 0, -1.0, 1.0)


@pytest.mark.parametrize("shape, columns", [((40, 300), [5, 17, 200, 3, 99, 150]),  # fewer columns than samples
                                            ((12, 80), list(range(0, 80, 2)))])  # more columns than samples
def test_coordinates_and_side_equal_sklearn_pca(shape, columns):
    X = RNG.normal(size=shape) * RNG.uniform(0.5, 20, size=shape[1]) + RNG.normal(size=shape[1]) * 5
    side = RNG.normal(size=(7, shape[1])) * 3
    result = sample_map(X, np.array(columns), side=side)
    scaler = StandardScaler().fit(X[:, columns])
    pca = PCA(n_components=2, svd_solver="full").fit(scaler.transform(X[:, columns]))
    expected = pca.transform(scaler.transform(X[:, columns]))
    signs = _signs(expected, result.coordinates)
    np.testing.assert_allclose(result.coordinates * signs, expected, atol=1e-9)
    np.testing.assert_allclose(result.side_coordinates * signs, pca.transform(scaler.transform(side[:, columns])),
                               atol=1e-9)
    np.testing.assert_allclose(result.explained, pca.explained_variance_ratio_, rtol=1e-9)
    # the sign convention: each axis's entry of largest magnitude is positive
    assert all(result.coordinates[np.abs(result.coordinates[:, i]).argmax(), i] > 0 for i in range(2))
    assert not result.sampled and result.n_columns == len(columns)


def test_one_column_is_its_z_scores_with_a_zero_second_axis():
    X = RNG.normal(size=(30, 4))
    result = sample_map(X, np.array([2]))
    z = (X[:, 2] - X[:, 2].mean()) / X[:, 2].std()
    np.testing.assert_allclose(np.abs(result.coordinates[:, 0]), np.abs(z), atol=1e-12)
    assert np.all(result.coordinates[:, 1] == 0) and result.explained[1] == 0
    np.testing.assert_allclose(result.explained[0], 1.0)


def test_a_sample_of_rows_is_seeded_sorted_and_mapped_on_its_own_statistics():
    X = RNG.normal(size=(500, 20))
    first = sample_map(X, np.arange(10), max_rows=60, random_state=4)
    again = sample_map(X, np.arange(10), max_rows=60, random_state=4)
    assert first.sampled and first.rows.size == 60 and np.all(np.diff(first.rows) > 0)
    np.testing.assert_array_equal(first.rows, again.rows)
    direct = sample_map(X[first.rows], np.arange(10))
    np.testing.assert_allclose(first.coordinates, direct.coordinates, atol=1e-12)


@pytest.mark.parametrize("columns, message", [(np.array([], dtype=int), "at least one feature"),
                                              (np.array([0, 9]), "below 5"), (np.array([0.5]), "by index")])
def test_bad_columns_are_refused(columns, message):
    with pytest.raises(InputError, match=message):
        sample_map(RNG.normal(size=(6, 5)), columns)


def test_side_with_other_features_is_refused():
    with pytest.raises(InputError, match="side data have 4 features"):
        sample_map(RNG.normal(size=(6, 5)), np.array([0, 1]), side=RNG.normal(size=(3, 4)))
