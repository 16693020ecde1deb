"""stable_nearest against the full stable sort it replaces, ties included."""

import numpy as np
import pytest

from core.matrix.neighbours import stable_nearest


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("count", [1, 3, 10, 40])
def test_stable_nearest_is_the_stable_sorts_first_columns(seed, count):
    rng = np.random.default_rng(seed)
    # integer distances tie often (a discrete feature's), continuous ones rarely; infinities too
    distances = rng.integers(0, 6, (50, 40)).astype(float) if seed % 2 else rng.random((50, 40))
    distances[rng.random(distances.shape) < 0.05] = np.inf
    expected = np.argsort(distances, axis=1, kind="stable")[:, :count]
    np.testing.assert_array_equal(stable_nearest(distances, count), expected)
