"""The shared Dataset type and the synthetic generators."""

import subprocess
import sys

import numpy as np
import pytest

from core import Dataset, InputError
from core.data import generators as synthetic


def make_images():
    X = np.arange(4 * 6, dtype=float).reshape(4, 6)
    return Dataset(X, labels=np.array(["a", "b", "a", "c"]), image_shape=(2, 3), name="tiny")


def test_core_imports_no_streamlit():
    code = "import core, core.selection.qalpha, core.data.generators, core.plots, core.selection.selectors, sys; " \
           "assert 'streamlit' not in sys.modules, 'core imported streamlit'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_dataset_stores_float64_and_generates_names():
    data = make_images()
    assert data.X.dtype == np.float64 and data.X.flags["C_CONTIGUOUS"]
    assert data.feature_names[:4] == ("pixel (0, 0)", "pixel (0, 1)", "pixel (0, 2)", "pixel (1, 0)")
    assert data.sample_names[0] == "sample 0"
    assert list(data.classes) == ["a", "b", "c"]
    summary = data.summary()
    assert summary["samples"] == 4 and summary["features"] == 6 and summary["image shape"] == "2 x 3"


def test_images_round_trip():
    data = make_images()
    assert np.array_equal(data.images()[1], data.X[1].reshape(2, 3))
    assert np.array_equal(data.to_image(np.arange(6)), np.arange(6).reshape(2, 3))
    with pytest.raises(InputError, match="Expected a vector of 6"):
        data.to_image(np.arange(5))


def test_subsets_keep_what_belongs_to_them():
    data = make_images()
    main, side = data.split_by_class(["b"])
    assert main.n_samples == 3 and side.n_samples == 1
    assert list(side.labels) == ["b"] and side.sample_names == ("sample 1",)
    assert main.image_shape == (2, 3)
    features = data.subset_features([5, 0])
    assert features.image_shape is None and features.feature_names == ("pixel (1, 2)", "pixel (0, 0)")
    assert np.array_equal(features.X, data.X[:, [5, 0]])
    mask = data.subset_samples(np.array([True, False, False, True]))
    assert mask.sample_names == ("sample 0", "sample 3")


@pytest.mark.parametrize("kwargs, message", [
    (dict(X=np.array([[1.0, np.nan]])), "NaN or infinite"),
    (dict(X=np.ones(3)), "2-D"),
    (dict(X=np.zeros((0, 3))), "empty"),
    (dict(X=np.array([["a", "b"]])), "numeric"),
    (dict(X=np.ones((3, 2)), labels=[1, 2]), "2 labels for 3 samples"),
    (dict(X=np.ones((3, 6)), image_shape=(2, 2)), "does not hold 6"),
    (dict(X=np.ones((3, 2)), feature_names_=["a"]), "1 feature names"),
])
def test_bad_datasets(kwargs, message):
    with pytest.raises(InputError, match=message):
        Dataset(**kwargs)


def test_bad_splits():
    data = make_images()
    with pytest.raises(InputError, match="do not occur"):
        data.split_by_class(["z"])
    with pytest.raises(InputError, match="Every sample would be side"):
        data.split_by_class(["a", "b", "c"])
    with pytest.raises(InputError, match="no labels"):
        Dataset(np.ones((3, 2))).split_by_class([1])
    with pytest.raises(InputError, match="out of range"):
        data.subset_features([6])
    with pytest.raises(InputError, match="empty"):
        data.subset_samples([])


# ------------------------------------------------------------------ synthetic generators
def test_generators_are_deterministic_and_carry_ground_truth():
    for make in (synthetic.weston_linear, synthetic.weston_nonlinear, synthetic.topographic_data,
                 synthetic.ben_dor, synthetic.random_matrix):
        first, second = make(random_state=3), make(random_state=3)
        assert np.array_equal(first.X, second.X)
        assert not np.array_equal(first.X, make(random_state=4).X)
        assert "relevant" in first.meta and first.source


def test_weston_linear_follows_the_description():
    data = synthetic.weston_linear(20000, random_state=0)
    X, y = data.X, data.labels
    assert X.shape == (20000, 202) and set(np.unique(y)) == {-1, 1}
    # E[y x_i] = 0.7 i for i = 1..3 and 0.3 (i - 3) for i = 4..6; noise has std 20
    correlation = (y[:, None] * X[:, :6]).mean(axis=0)
    assert np.allclose(correlation, [0.7, 1.4, 2.1, 0.3, 0.6, 0.9], atol=0.06)
    assert np.allclose(X[:, 6:].std(axis=0).mean(), 20.0, rtol=0.02)


def test_weston_nonlinear_is_xor_like():
    data = synthetic.weston_nonlinear(4000, random_state=0)
    X, y = data.X, data.labels
    # no single relevant feature separates the classes, their product does
    assert abs(np.corrcoef(X[:, 0], y)[0, 1]) < 0.1 and abs(np.corrcoef(X[:, 1], y)[0, 1]) < 0.1
    assert np.corrcoef(X[:, 0] * X[:, 1], y)[0, 1] < -0.5


def test_topographic_data_structure():
    data = synthetic.topographic_data(random_state=0)
    assert data.X.shape == (150, 20)
    assert data.feature_names[:9] == ("1", "2", "3", "A", "B", "C", "1A", "2B", "3C")
    assert np.allclose(data.X[:, 6], data.X[:, 0] + data.X[:, 3])
    for j in range(9, 20):  # permutations of feature 1
        assert np.allclose(np.sort(data.X[:, j]), np.sort(data.X[:, 0]))
    first, second = data.meta["partitions"]
    assert np.bincount(first).tolist() == [50, 50, 50]
    assert abs(np.corrcoef(first, second)[0, 1]) < 0.3  # two different partitions


def test_ben_dor_parameters():
    data = synthetic.ben_dor(a=10, b=15, m=100, e=0.8, d=10.0, s=0.5, random_state=0)
    assert data.X.shape == (25, 100) and data.meta["relevant"].size == 20
    assert list(np.unique(data.labels)) == ["A", "B"]
    with pytest.raises(InputError, match="e"):
        synthetic.ben_dor(e=1.5)
    with pytest.raises(InputError, match="n_samples"):
        synthetic.weston_linear(1)
