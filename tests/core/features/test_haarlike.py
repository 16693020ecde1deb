"""Haar-like rectangle features: integral image, counts, values against direct pixel sums."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from core.data.bundled import load_dataset
from core.errors import InputError
from core.features.haarlike import (FEATURE_TYPES, haar_like_features, integral_image, rectangle_sums,
                           to_haar_like)


@settings(max_examples=60, deadline=None)
@given(image=arrays(np.float64, st.tuples(st.integers(1, 12), st.integers(1, 12)),
                    elements=st.floats(-100, 100)),
       data=st.data())
def test_integral_image_rectangle_sums_equal_direct_sums(image, data):
    h, w = image.shape
    r0 = data.draw(st.integers(0, h - 1))
    r1 = data.draw(st.integers(r0 + 1, h))
    c0 = data.draw(st.integers(0, w - 1))
    c1 = data.draw(st.integers(c0 + 1, w))
    integral = integral_image(image)
    total = rectangle_sums(integral, np.array([r0]), np.array([r1]), np.array([c0]), np.array([c1]))[0]
    assert np.isclose(total, image[r0:r1, c0:c1].sum(), atol=1e-9)


def brute_force_count(h, w, rows, cols):
    """Count every placement of a rows x cols grid of equal cells by plain enumeration."""
    count = 0
    for cell_h in range(1, h + 1):
        for cell_w in range(1, w + 1):
            for top in range(h):
                for left in range(w):
                    if top + rows * cell_h <= h and left + cols * cell_w <= w:
                        count += 1
    return count


def test_counts_in_a_24x24_window():
    features = haar_like_features((24, 24))
    expected = {kind: brute_force_count(24, 24, rows, cols) for kind, (rows, cols, _) in FEATURE_TYPES.items()}
    assert expected == {"two-horizontal": 43200, "two-vertical": 43200, "three-horizontal": 27600,
                        "three-vertical": 27600, "four": 20736}
    for kind, count in expected.items():
        assert np.sum(features.kind == kind) == count
    assert features.n_features == 162_336  # Viola & Jones' total for these five types


def test_values_equal_weighted_pixel_sums():
    rng = np.random.default_rng(0)
    images = rng.random((3, 9, 7))
    features = haar_like_features((9, 7), stride=2)
    values = features.values(images)
    for index in rng.choice(features.n_features, 40, replace=False):
        direct = sum(weight * images[:, r0:r1, c0:c1].sum(axis=(1, 2))
                     for r0, r1, c0, c1, weight in features.rectangles(index))
        assert np.allclose(values[:, index], direct)
    # a constant image gives zero on every two- and four-rectangle feature (equal areas)
    flat = features.values(np.ones((9, 7)))[0]
    balanced = np.isin(features.kind, ["two-horizontal", "two-vertical", "four"])
    assert np.allclose(flat[balanced], 0)


def test_selection_drawn_back_and_dataset_transform():
    features = haar_like_features((6, 6), types=("two-horizontal",))
    index = int(np.flatnonzero((features.height == 2) & (features.width == 4) & (features.top == 1)
                               & (features.left == 1))[0])
    picture = features.selection_map([index])
    assert picture[1:3, 1:3].sum() == 4 and picture[1:3, 3:5].sum() == -4 and picture[0].sum() == 0
    faces = load_dataset("warpAR10P")
    data = to_haar_like(faces, stride=4, scale_step=4, min_cell=4)
    assert data.kind == "haarlike" and data.n_samples == 130 and not data.is_image
    assert data.feature_names[0].startswith("two-horizontal 4x8 at (0, 0)")
    assert np.array_equal(data.labels, faces.labels)


def test_bad_input():
    with pytest.raises(InputError, match="Unknown feature type"):
        haar_like_features((24, 24), types=("five",))
    with pytest.raises(InputError, match="stride must be a positive integer"):
        haar_like_features((24, 24), stride=0)
    with pytest.raises(InputError, match="More than 1,000 features"):
        haar_like_features((24, 24), max_features=1000)
    with pytest.raises(InputError, match="image data set"):
        to_haar_like(load_dataset("wine"))
    with pytest.raises(InputError, match="No feature fits"):
        haar_like_features((1, 1), types=("four",))
