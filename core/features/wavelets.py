"""Haar wavelet coefficients of images, their exact inverse and alpha-weighted reconstructions.

[SW04] Sec. 6 runs Q-alpha with side information on the Haar wavelet coefficients of face
images and shows the selection by reconstructing images from the coefficients multiplied by
alpha (its Fig. 3c, 3d). :class:`HaarBasis` gives that transform for any image size.

The transform is PyWavelets' 2-D multilevel Haar decomposition in ``"periodization"`` mode: for
even sizes it is orthonormal (each level halves the size), and an odd side is extended by one
sample before halving, so the inverse is exact after cropping back to the image size.

References
----------
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004, Sec. 6.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pywt

from ..data.dataset import Dataset, FeatureFamily
from ..errors import InputError

__all__ = ["HaarFamily", "HaarBasis", "haar_basis", "to_haar", "ORIENTATIONS"]

ORIENTATIONS = ("approximation", "horizontal", "vertical", "diagonal")
_MODE = "periodization"


@dataclass(frozen=True, eq=False)
class HaarBasis:
    """The Haar decomposition of images of one shape, with what each coefficient is.

    Attributes
    ----------
    image_shape : (int, int)
    levels : int
    level : ndarray of int, shape (n_coefficients,)
        Scale of each coefficient: 1 for the finest details, ``levels`` for the coarsest
        details and for the approximation.
    orientation : ndarray of int
        Index into :data:`ORIENTATIONS` (0 approximation, 1 horizontal, 2 vertical, 3 diagonal
        detail; PyWavelets' cH, cV, cD).
    footprint : ndarray of int, shape (n_coefficients, 4)
        ``(row0, row1, col0, col1)``: the pixels whose values the coefficient depends on
        (half-open, clipped to the image).
    position : ndarray of int, shape (n_coefficients, 2)
        Row and column of the coefficient within its band.
    """

    image_shape: tuple[int, int]
    levels: int
    level: np.ndarray = field(repr=False)
    orientation: np.ndarray = field(repr=False)
    footprint: np.ndarray = field(repr=False)
    position: np.ndarray = field(repr=False)
    _slices: list = field(repr=False)
    _array_shape: tuple = field(repr=False)
    _cells: np.ndarray = field(repr=False)  # cells of the packed array that hold coefficients

    @property
    def n_coefficients(self) -> int:
        return self.level.size

    def names(self) -> list[str]:
        """A name per coefficient, e.g. ``"haar L2 horizontal (3, 5)"``, ``"haar A3 (0, 1)"``."""
        names = []
        for lvl, ori, (r, c) in zip(self.level, self.orientation, self.position):
            if ori == 0:
                names.append(f"haar A{lvl} ({r}, {c})")
            else:
                names.append(f"haar L{lvl} {ORIENTATIONS[ori]} ({r}, {c})")
        return names

    def _images(self, images) -> np.ndarray:
        images = np.asarray(images, dtype=np.float64)
        if images.ndim == 1 and images.size == self.image_shape[0] * self.image_shape[1]:
            images = images.reshape((1,) + self.image_shape)
        if images.ndim == 2 and images.shape == self.image_shape:
            images = images[None]
        elif images.ndim == 2 and images.shape[1] == self.image_shape[0] * self.image_shape[1]:
            images = images.reshape((-1,) + self.image_shape)
        if images.ndim != 3 or images.shape[1:] != self.image_shape:
            raise InputError(f"Expected images of shape {self.image_shape} (or rows of "
                             f"{self.image_shape[0] * self.image_shape[1]} pixels); got {images.shape}.")
        return images

    def transform(self, images) -> np.ndarray:
        """Coefficients of a stack of images (or rows of pixels): ``(n_images, n_coefficients)``."""
        images = self._images(images)
        coefficients = pywt.wavedec2(images, "haar", mode=_MODE, level=self.levels, axes=(-2, -1))
        array, _ = pywt.coeffs_to_array(coefficients, axes=(-2, -1))
        return array.reshape(images.shape[0], -1)[:, self._cells]

    def inverse(self, coefficients) -> np.ndarray:
        """Images ``(n, h, w)`` from coefficient rows (the exact inverse of :meth:`transform`)."""
        coefficients = np.asarray(coefficients, dtype=np.float64)
        if coefficients.ndim == 1:
            coefficients = coefficients[None]
        if coefficients.shape[1] != self.n_coefficients:
            raise InputError(f"Expected {self.n_coefficients} coefficients per image; got "
                             f"{coefficients.shape[1]}.")
        packed = np.zeros((coefficients.shape[0], int(np.prod(self._array_shape))))
        packed[:, self._cells] = coefficients
        arrays = packed.reshape((-1,) + self._array_shape)
        every = (slice(None),)  # all images
        structured = [arrays[every + self._slices[0]]] + [
            tuple(arrays[every + band[key]] for key in ("da", "ad", "dd"))  # (cH, cV, cD)
            for band in self._slices[1:]]
        images = pywt.waverec2(structured, "haar", mode=_MODE, axes=(-2, -1))
        h, w = self.image_shape
        return images[:, :h, :w]

    def reconstruct(self, images, alpha) -> np.ndarray:
        """Images rebuilt from their coefficients multiplied by ``alpha`` ([SW04] Fig. 3c, 3d)."""
        alpha = self._weights(alpha)
        return self.inverse(self.transform(images) * alpha)

    def _weights(self, alpha) -> np.ndarray:
        alpha = np.asarray(alpha, dtype=np.float64).ravel()
        if alpha.size != self.n_coefficients:
            raise InputError(f"Expected {self.n_coefficients} weights, one per coefficient; got {alpha.size}.")
        return alpha

    def pixel_map(self, alpha) -> np.ndarray:
        """A pixel-space picture of coefficient weights, for overlays.

        Each coefficient's weight is spread evenly over its footprint (weight / area per pixel),
        so the map sums to the sum of the weights and coarse coefficients do not swamp fine ones.
        """
        alpha = self._weights(alpha)
        h, w = self.image_shape
        # 2-D cumulative "difference array": add each box in O(1), then integrate once
        canvas = np.zeros((h + 1, w + 1))
        r0, r1, c0, c1 = self.footprint.T
        density = alpha / ((r1 - r0) * (c1 - c0))
        np.add.at(canvas, (r0, c0), density)
        np.add.at(canvas, (r0, c1), -density)
        np.add.at(canvas, (r1, c0), -density)
        np.add.at(canvas, (r1, c1), density)
        return canvas.cumsum(axis=0).cumsum(axis=1)[:h, :w]

    def band_mass(self, alpha) -> dict[str, float]:
        """Share of ``|alpha|`` in each band, keyed ``"A3"``, ``"L1 horizontal"``, ...."""
        weights = np.abs(self._weights(alpha))
        total = weights.sum() or 1.0
        mass = {}
        for lvl in range(self.levels, 0, -1):
            for ori in range(4):
                if ori == 0 and lvl != self.levels:
                    continue
                chosen = (self.level == lvl) & (self.orientation == ori)
                key = f"A{lvl}" if ori == 0 else f"L{lvl} {ORIENTATIONS[ori]}"
                mass[key] = float(weights[chosen].sum() / total)
        return mass


def _max_levels(image_shape) -> int:
    return max(1, pywt.dwt_max_level(min(image_shape), pywt.Wavelet("haar").dec_len))


def haar_basis(image_shape, levels: int | None = None) -> HaarBasis:
    """The Haar basis of ``image_shape`` (height, width) with ``levels`` decomposition levels.

    ``levels=None`` takes 3, or fewer when the image is too small.
    """
    try:
        h, w = (int(s) for s in image_shape)
    except (TypeError, ValueError):
        raise InputError(f"image_shape must be (height, width); got {image_shape!r}.") from None
    if h < 2 or w < 2:
        raise InputError(f"Images of {h} x {w} pixels are too small for a wavelet transform (2 x 2 at least).")
    limit = _max_levels((h, w))
    if levels is None:
        levels = min(3, limit)
    if isinstance(levels, bool) or not isinstance(levels, (int, np.integer)) or not 1 <= levels <= limit:
        raise InputError(f"levels must be an integer from 1 to {limit} for {h} x {w} images; got {levels!r}.")
    levels = int(levels)
    probe = pywt.wavedec2(np.zeros((h, w)), "haar", mode=_MODE, level=levels)
    array, slices = pywt.coeffs_to_array(probe)
    # coeffs_to_array packs the bands into one rectangle, which can leave unused cells when a
    # side is odd at some level: only the covered cells are coefficients
    covered = np.zeros(array.shape, dtype=bool)
    covered[slices[0]] = True
    for detail in slices[1:]:
        for key in ("da", "ad", "dd"):
            covered[detail[key]] = True
    cells = np.flatnonzero(covered)
    level = np.empty(array.shape, dtype=np.int64)
    orientation = np.empty(array.shape, dtype=np.int64)
    rows, cols = np.indices(array.shape)
    position = np.empty(array.shape + (2,), dtype=np.int64)
    scale_of = np.empty(array.shape, dtype=np.int64)
    # approximation
    band = slices[0]
    level[band], orientation[band] = levels, 0
    position[band] = np.stack([rows[band] - (band[0].start or 0), cols[band] - (band[1].start or 0)], axis=-1)
    scale_of[band] = 2**levels
    # details: slices[1] is the coarsest (level = levels), slices[-1] the finest (level 1)
    for index, detail in enumerate(slices[1:]):
        lvl = levels - index
        for ori, key in enumerate(("da", "ad", "dd"), start=1):  # cH, cV, cD
            band = detail[key]
            level[band], orientation[band] = lvl, ori
            position[band] = np.stack([rows[band] - (band[0].start or 0), cols[band] - (band[1].start or 0)], axis=-1)
            scale_of[band] = 2**lvl
    position = position.reshape(-1, 2)[cells]
    scale = scale_of.ravel()[cells]
    footprint = np.stack([position[:, 0] * scale, np.minimum((position[:, 0] + 1) * scale, h),
                          position[:, 1] * scale, np.minimum((position[:, 1] + 1) * scale, w)], axis=1)
    return HaarBasis(image_shape=(h, w), levels=levels, level=level.ravel()[cells],
                     orientation=orientation.ravel()[cells], footprint=footprint, position=position,
                     _slices=slices, _array_shape=array.shape, _cells=cells)


class HaarFamily(FeatureFamily):
    """Haar wavelet coefficients of images (the family of :func:`to_haar`): a coefficient's weight
    is drawn spread over the pixels it depends on, and the coefficients invert exactly.

    Attributes
    ----------
    basis : HaarBasis
        What each coefficient is (scale, orientation, footprint).
    """

    name = "haar"

    def __init__(self, images: Dataset, basis: HaarBasis):
        super().__init__(images)
        self.basis = basis

    def pixel_map(self, weights) -> np.ndarray:
        return self.basis.pixel_map(weights)

    def inverse(self, values) -> np.ndarray:
        return self.basis.inverse(values)


def to_haar(dataset: Dataset, levels: int | None = None) -> Dataset:
    """The Haar coefficients of an image data set as a new data set (one feature per coefficient).

    The result keeps the labels and sample names; its feature names say what each coefficient
    is; its ``family`` (:class:`HaarFamily`) maps weights back to pixels and holds the images.
    """
    if not dataset.is_image:
        raise InputError("Haar wavelet features need an image data set (this one has no image shape).")
    basis = haar_basis(dataset.image_shape, levels)
    coefficients = basis.transform(dataset.images())
    return Dataset(coefficients, labels=dataset.labels, feature_names_=basis.names(),
                   sample_names_=dataset.sample_names, name=f"{dataset.name} (Haar, {basis.levels} levels)",
                   source=dataset.source, kind="haar", meta={"family": HaarFamily(dataset, basis)})
