"""Haar wavelet features: exact inverse, band bookkeeping against PyWavelets, and the AR experiment."""

import numpy as np
import pytest
import pywt
from PIL import Image

from conftest import ARTEFACTS
from core.data.bundled import load_dataset
from core.errors import InputError
from core.selection.qalpha import q_alpha
from core.features.wavelets import ORIENTATIONS, haar_basis, to_haar

SHAPES_LEVELS = [((60, 40), 1), ((60, 40), 3), ((60, 40), 5), ((31, 17), 2), ((31, 17), 4),
                 ((55, 44), 3), ((8, 8), 3), ((7, 9), 2), ((2, 2), 1)]


@pytest.mark.parametrize("shape, levels", SHAPES_LEVELS)
def test_perfect_reconstruction_and_linearity(shape, levels):
    basis = haar_basis(shape, levels)
    rng = np.random.default_rng(0)
    images = rng.random((4,) + shape)
    ones = np.ones(basis.n_coefficients)
    assert np.abs(basis.reconstruct(images, ones) - images).max() <= 1e-10
    assert np.abs(basis.inverse(basis.transform(images)) - images).max() <= 1e-10
    # linearity in the images and in alpha
    x, y = images[0], images[1]
    assert np.allclose(basis.transform(2 * x - 3 * y), 2 * basis.transform(x) - 3 * basis.transform(y))
    alpha, beta = rng.random(basis.n_coefficients), rng.random(basis.n_coefficients)
    assert np.allclose(basis.reconstruct(x, alpha + beta), basis.reconstruct(x, alpha) + basis.reconstruct(x, beta))


def test_orthonormal_for_even_sizes():
    basis = haar_basis((16, 8), 3)
    eye = np.eye(16 * 8)
    W = basis.transform(eye.reshape(-1, 16, 8))  # rows: transforms of the pixel basis
    assert np.allclose(W @ W.T, np.eye(16 * 8), atol=1e-12)


def test_approximation_indicator_gives_the_coarse_image():
    shape, levels = (60, 40), 2
    basis = haar_basis(shape, levels)
    image = np.random.default_rng(1).random(shape)
    coarse = basis.reconstruct(image, basis.orientation == 0)[0]
    # the level-2 Haar approximation is the 4 x 4 block mean, repeated over each block
    blocks = image.reshape(15, 4, 10, 4).mean(axis=(1, 3))
    assert np.allclose(coarse, np.kron(blocks, np.ones((4, 4))), atol=1e-12)


@pytest.mark.parametrize("levels", [1, 2, 3, 4, 5])
def test_counts_levels_and_orientations_match_pywavelets(levels):
    shape = (60, 40)
    basis = haar_basis(shape, levels)
    image = np.random.default_rng(2).random(shape)
    reference = pywt.wavedec2(image, "haar", mode="periodization", level=levels)
    expected = [reference[0].ravel()]
    expected_level = [np.full(reference[0].size, levels)]
    expected_orientation = [np.zeros(reference[0].size, int)]
    for index, details in enumerate(reference[1:]):
        for ori, band in enumerate(details, start=1):
            expected.append(band.ravel())
            expected_level.append(np.full(band.size, levels - index))
            expected_orientation.append(np.full(band.size, ori))
    expected = np.concatenate(expected)
    assert basis.n_coefficients == expected.size
    coefficients = basis.transform(image)[0]
    # same multiset of values in the same bands: compare band by band
    for lvl in range(1, levels + 1):
        for ori in range(4):
            ours = basis.level == lvl
            ours &= basis.orientation == ori
            theirs = (np.concatenate(expected_level) == lvl) & (np.concatenate(expected_orientation) == ori)
            assert ours.sum() == theirs.sum()
            assert np.allclose(np.sort(coefficients[ours]), np.sort(expected[theirs]))
    counts = {1: 2400, 2: 2400, 3: 2410, 4: 2418, 5: 2422}
    assert basis.n_coefficients == counts[levels]


def test_footprints_and_pixel_map():
    basis = haar_basis((8, 8), 3)
    coarse = np.flatnonzero((basis.level == 3) & (basis.orientation == 0))
    assert np.array_equal(basis.footprint[coarse[0]], [0, 8, 0, 8])
    fine = np.flatnonzero((basis.level == 1) & (basis.orientation == 3))
    r, c = basis.position[fine[-1]]
    assert np.array_equal(basis.footprint[fine[-1]], [2 * r, 2 * r + 2, 2 * c, 2 * c + 2])
    alpha = np.zeros(basis.n_coefficients)
    alpha[fine[-1]] = 4.0
    picture = basis.pixel_map(alpha)
    assert np.isclose(picture.sum(), 4.0) and np.isclose(picture[2 * r, 2 * c], 1.0)
    # a coefficient only responds to pixels inside its footprint
    image = np.zeros((8, 8))
    image[0, 0] = 1.0
    assert basis.transform(image)[0][fine[-1]] == 0.0
    assert set(basis.names()[0].split()[:2]) == {"haar", "A3"} and ORIENTATIONS[3] == "diagonal"


def test_feature_family_dataset():
    faces = load_dataset("warpAR10P")
    haar = to_haar(faces, levels=3)
    assert haar.X.shape == (130, 2410) and haar.kind == "haar" and not haar.is_image
    assert np.array_equal(haar.labels, faces.labels)
    assert haar.feature_names[-1] == "haar L1 diagonal (29, 19)"
    basis = haar.family.basis
    assert np.allclose(basis.inverse(haar.X).reshape(130, -1), faces.X)


def test_bad_input():
    with pytest.raises(InputError, match="image data set"):
        to_haar(load_dataset("wine"))
    with pytest.raises(InputError, match="levels must be an integer from 1 to 5"):
        haar_basis((60, 40), 9)
    with pytest.raises(InputError, match="too small"):
        haar_basis((1, 5))
    with pytest.raises(InputError, match="2410 weights"):
        haar_basis((60, 40), 3).reconstruct(np.zeros((60, 40)), np.ones(7))


def _save(images, path):
    tiles = []
    for image in np.asarray(images):  # each tile on its own scale: weighted images are faint
        low, high = np.percentile(image, [1, 99])
        tiles.append(np.clip((image - low) / max(high - low, 1e-12), 0, 1))
    row = np.concatenate([np.pad(t, 1, constant_values=1) for t in tiles], axis=1)
    Image.fromarray((row * 255).astype(np.uint8)).resize((row.shape[1] * 3, row.shape[0] * 3),
                                                         Image.Resampling.NEAREST).save(path)


def test_ar_faces_side_information_on_haar_coefficients():
    """[SW04] Sec. 6 on warpAR10P: main = 5 people, side = a 6th; the analogue of its Fig. 3c, 3d."""
    faces = load_dataset("warpAR10P")
    haar = to_haar(faces, levels=3)
    basis = haar.family.basis
    folder = ARTEFACTS / "haar_ar"
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    approximation_share = (basis.orientation == 0).mean()
    report = []
    for run in range(3):
        people = rng.choice(faces.classes, 6, replace=False)
        main = np.isin(haar.labels, people[:5])
        result = q_alpha(haar.X[main], 5, side=haar.X[haar.labels == people[5]], lam=0.01)
        plain = q_alpha(haar.X[main], 5)
        assert result.converged
        assert result.alpha.min() >= -1e-6 * result.alpha.max()
        assert result.n_selected < 0.05 * basis.n_coefficients  # sparse
        informed_mass = basis.band_mass(result.alpha)["A3"]
        plain_mass = basis.band_mass(plain.alpha)["A3"]
        # the selection does not concentrate on illumination (the coarse approximation band)
        assert informed_mass < plain_mass and informed_mass <= 1.5 * approximation_share
        report.append((run, informed_mass, plain_mass))
        mean_face = faces.X[main].mean(axis=0)
        _save([mean_face.reshape(60, 40), basis.reconstruct(mean_face, result.alpha)[0],
               basis.pixel_map(result.alpha)], folder / f"run{run}_mean_face.png")
        for person in people[:5]:
            rows = faces.images()[faces.labels == person][:6]
            _save(np.concatenate([rows, basis.reconstruct(rows, result.alpha)]),
                  folder / f"run{run}_person{person}.png")
    (folder / "band_mass.txt").write_text(
        "run, alpha mass in approximation band (side info, lam=0.01), without side info, "
        f"uniform share {approximation_share:.4f}\n" +
        "\n".join(f"{r}, {a:.4f}, {p:.4f}" for r, a, p in report) + "\n")


def test_feature_family_entry_point():
    from core.features.families import to_feature_family
    faces = load_dataset("Yale")
    assert to_feature_family(faces, "pixels") is faces
    assert to_feature_family(faces, "haar", levels=2).kind == "haar"
    assert to_feature_family(faces, "haarlike", stride=4, scale_step=4, min_cell=4).kind == "haarlike"
    with pytest.raises(InputError, match="Unknown feature family"):
        to_feature_family(faces, "fourier")


def test_each_feature_family_answers_for_its_features():
    """Pixels, Haar coefficients and Haar-like rectangles behind one interface (Dataset.family):
    weights drawn on the images, the pixels a selection marks, the inverse where there is one;
    the images follow a sample subset, and a feature subset (no longer the whole family) and a
    table have none."""
    from core.data.dataset import Dataset, PixelFamily
    from core.features.families import FEATURE_FAMILIES, to_feature_family
    from core.features.haarlike import HaarLikeFamily
    from core.features.wavelets import HaarFamily

    faces = load_dataset("warpAR10P").subset_samples(range(12))
    rng = np.random.default_rng(5)
    assert {PixelFamily.name, HaarFamily.name, HaarLikeFamily.name} == set(FEATURE_FAMILIES)

    pixels = faces.family
    weights = rng.random(faces.n_features)
    assert pixels.images is faces and np.array_equal(pixels.pixel_map(weights), weights.reshape(faces.image_shape))
    assert list(pixels.marked_pixels([3, 1])) == [3, 1]
    assert np.array_equal(pixels.inverse(faces.X), faces.images())
    with pytest.raises(InputError, match="pixel values per image"):
        pixels.inverse(faces.X[:, :-1])

    haar = to_feature_family(faces, "haar", levels=2)
    family = haar.family
    assert family.name == "haar" and family.images is faces and family.marked_pixels([0]) is None
    assert np.allclose(family.inverse(haar.X), faces.images(), atol=1e-10)  # the exact inverse
    coefficient_weights = rng.random(haar.n_features)
    assert np.isclose(family.pixel_map(coefficient_weights).sum(), coefficient_weights.sum())  # spread, not lost

    rectangles = to_feature_family(faces, "haarlike", stride=6, scale_step=6, min_cell=6)
    family = rectangles.family
    chosen = np.zeros(rectangles.n_features)
    chosen[[0, 7]] = [2.0, -1.0]
    expected = 2.0 * family.features.selection_map([0]) - family.features.selection_map([7])
    assert np.allclose(family.pixel_map(chosen), expected)
    with pytest.raises(InputError, match="not a basis"):
        family.inverse(rectangles.X)
    with pytest.raises(InputError, match="one per feature"):
        family.pixel_map(chosen[:-1])

    first_people = haar.subset_samples(range(5))
    assert first_people.family.images.n_samples == first_people.n_samples < haar.n_samples
    assert np.allclose(first_people.family.inverse(first_people.X), first_people.family.images.images(), atol=1e-10)
    assert haar.subset_features(range(10)).family is None
    assert faces.subset_features(range(10)).family is None
    assert Dataset(rng.random((5, 3))).family is None
