"""Every bundled data set loads as the manifest says, upright, and matches its source file."""

from pathlib import Path

import numpy as np
import pytest
import scipy.io

from core import InputError
from core.data.bundled import ASSETS, list_datasets, load_dataset

SHARED_DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
NAMES = [info.name for info in list_datasets()]
SCIKIT_LEARN_SETS = {"digits", "wine", "iris", "breast_cancer"}  # no .mat source
REQUIRED = {"warpAR10P", "Yale", "ORL", "warpPIE10P", "COIL20", "colon", "leukemia", "ALLAML",
            "GLIOMA", "lymphoma", "TOX-171", "PCMAC", "madelon"} | SCIKIT_LEARN_SETS


def test_required_sets_are_bundled_and_small():
    assert REQUIRED <= set(NAMES)
    size = sum(p.stat().st_size for p in ASSETS.iterdir() if p.is_file())
    assert size < 25e6, f"assets/ holds {size / 1e6:.1f} MB; keep it under about 25 MB"


@pytest.mark.parametrize("info", list_datasets(), ids=NAMES)
def test_loads_as_described(info):
    data = load_dataset(info.name)
    assert data.X.shape == (info.n_samples, info.n_features)
    assert data.X.dtype == np.float64 and np.isfinite(data.X).all()
    assert data.labels.shape == (info.n_samples,) and data.classes.size == info.n_classes
    assert data.image_shape == info.image_shape and data.name == info.name and data.source
    assert len(data.feature_names) == info.n_features
    if info.image_shape is not None:
        assert data.X.min() >= 0 and data.X.max() <= 1
    assert load_dataset(info.name) is data  # cached


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="the benchmark .mat files (../shared/data) "
                    "are not next to this checkout, so there is no source to compare with")
@pytest.mark.parametrize("name", [n for n in NAMES if n not in SCIKIT_LEARN_SETS])
def test_matches_source_file(name):
    data = load_dataset(name)
    mat = scipy.io.loadmat(SHARED_DATA / f"{name}.mat")
    X = np.asarray(mat["X"], dtype=np.float64)
    if data.is_image:
        h, w = data.image_shape
        X = X.reshape(-1, h, w, order="F").reshape(X.shape[0], -1)  # upright, as documented
        X = X / (255.0 if X.max() > 1 else 1.0)
    assert np.array_equal(data.X, X)
    assert np.array_equal(data.labels, np.asarray(mat["Y"]).ravel())


@pytest.mark.parametrize("name", ["warpAR10P", "Yale", "ORL", "warpPIE10P", "orlraws10P", "pixraw10P"])
def test_faces_are_upright(name):
    """An upright mean face is mirror-symmetric left-right, much more than top-bottom; reading
    the rows in the wrong (column-major) order scrambles it and breaks that symmetry."""
    data = load_dataset(name)
    mean = data.images().mean(axis=0)

    def symmetry(a, b):
        return np.corrcoef(a.ravel(), b.ravel())[0, 1]

    left_right, top_bottom = symmetry(mean, mean[:, ::-1]), symmetry(mean, mean[::-1])
    assert left_right >= 0.75 and left_right > top_bottom + 0.04
    scrambled = data.X.reshape((-1,) + data.image_shape, order="F").mean(axis=0)
    assert symmetry(scrambled, scrambled[:, ::-1]) < left_right


def test_unknown_name_lists_the_valid_ones():
    with pytest.raises(InputError, match="warpAR10P"):
        load_dataset("no such set")
