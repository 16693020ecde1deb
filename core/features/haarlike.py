"""Haar-like rectangle features (Viola & Jones) computed with an integral image.

A feature is a weighted sum of the pixel sums of two, three or four adjacent rectangles of equal
size (the lecture, "Haar features" and "integral image"):

* ``"two-horizontal"``: left minus right; ``"two-vertical"``: top minus bottom;
* ``"three-horizontal"`` / ``"three-vertical"``: the centre minus the two outer rectangles;
* ``"four"``: the diagonal pair minus the other diagonal pair.

With the integral image every rectangle sum costs four look-ups, whatever its size.

References
----------
.. [VJ] P. Viola and M. Jones, "Robust real-time object detection", IJCV 2004 (162,336 features
   of these five types in a 24 x 24 window).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..data.dataset import Dataset, FeatureFamily
from ..errors import InputError

__all__ = ["HaarLikeFamily", "FEATURE_TYPES", "HaarLikeFeatures", "integral_image", "rectangle_sums",
           "haar_like_features", "to_haar_like"]

# type: (rows of cells, columns of cells, weight of each cell in row-major order)
FEATURE_TYPES = {
    "two-horizontal": (1, 2, (1.0, -1.0)),
    "two-vertical": (2, 1, (1.0, -1.0)),
    "three-horizontal": (1, 3, (-1.0, 1.0, -1.0)),
    "three-vertical": (3, 1, (-1.0, 1.0, -1.0)),
    "four": (2, 2, (1.0, -1.0, -1.0, 1.0)),
}


def integral_image(images) -> np.ndarray:
    """Summed-area tables with a zero first row and column: ``ii[..., r, c] = sum(img[..., :r, :c])``."""
    images = np.asarray(images, dtype=np.float64)
    if images.ndim < 2:
        raise InputError("integral_image needs an image (height x width) or a stack of images.")
    padded = np.zeros(images.shape[:-2] + (images.shape[-2] + 1, images.shape[-1] + 1))
    padded[..., 1:, 1:] = images.cumsum(axis=-2).cumsum(axis=-1)
    return padded


def rectangle_sums(integral, rows0, rows1, cols0, cols1) -> np.ndarray:
    """Sums over ``[r0, r1) x [c0, c1)`` for arrays of rectangles (``..., n_rectangles``)."""
    return (integral[..., rows1, cols1] - integral[..., rows0, cols1]
            - integral[..., rows1, cols0] + integral[..., rows0, cols0])


@dataclass(frozen=True, eq=False)
class HaarLikeFeatures:
    """A set of rectangle features for one image shape.

    Attributes
    ----------
    image_shape : (int, int)
    kind : ndarray of str, shape (n_features,)
    top, left, height, width : ndarray of int
        The feature's bounding box (each cell is ``height / rows`` x ``width / columns``).
    """

    image_shape: tuple[int, int]
    kind: np.ndarray = field(repr=False)
    top: np.ndarray = field(repr=False)
    left: np.ndarray = field(repr=False)
    height: np.ndarray = field(repr=False)
    width: np.ndarray = field(repr=False)

    @property
    def n_features(self) -> int:
        return self.kind.size

    def names(self) -> list[str]:
        return [f"{k} {h}x{w} at ({t}, {l})" for k, t, l, h, w in
                zip(self.kind, self.top, self.left, self.height, self.width)]

    def rectangles(self, index) -> list[tuple[int, int, int, int, float]]:
        """The weighted rectangles ``(row0, row1, col0, col1, weight)`` of feature ``index``."""
        kind = str(self.kind[index])
        rows, cols, weights = FEATURE_TYPES[kind]
        cell_h, cell_w = self.height[index] // rows, self.width[index] // cols
        out = []
        for cell, weight in enumerate(weights):
            r, c = divmod(cell, cols)
            r0, c0 = self.top[index] + r * cell_h, self.left[index] + c * cell_w
            out.append((int(r0), int(r0 + cell_h), int(c0), int(c0 + cell_w), weight))
        return out

    def values(self, images, chunk: int = 20_000) -> np.ndarray:
        """Feature values of a stack of images (or rows of pixels): ``(n_images, n_features)``."""
        images = np.asarray(images, dtype=np.float64)
        h, w = self.image_shape
        if images.ndim == 2 and images.shape[1] == h * w and images.shape != (h, w):
            images = images.reshape(-1, h, w)
        elif images.ndim == 2:
            images = images[None]
        if images.ndim != 3 or images.shape[1:] != (h, w):
            raise InputError(f"Expected images of shape {self.image_shape}; got {images.shape}.")
        integral = integral_image(images).reshape(images.shape[0], -1)
        width_ii = w + 1
        out = np.zeros((images.shape[0], self.n_features))
        for kind, (rows, cols, weights) in FEATURE_TYPES.items():
            chosen = np.flatnonzero(self.kind == kind)
            for start in range(0, chosen.size, chunk):
                part = chosen[start:start + chunk]
                cell_h, cell_w = self.height[part] // rows, self.width[part] // cols
                for cell, weight in enumerate(weights):
                    r, c = divmod(cell, cols)
                    r0 = self.top[part] + r * cell_h
                    c0 = self.left[part] + c * cell_w
                    r1, c1 = r0 + cell_h, c0 + cell_w
                    out[:, part] += weight * (integral[:, r1 * width_ii + c1] - integral[:, r0 * width_ii + c1]
                                              - integral[:, r1 * width_ii + c0] + integral[:, r0 * width_ii + c0])
        return out

    def selection_map(self, indices, weights=None) -> np.ndarray:
        """A picture of selected features: each adds its signed cell weights (times its own weight)."""
        h, w = self.image_shape
        picture = np.zeros((h, w))
        indices = np.atleast_1d(np.asarray(indices, dtype=np.intp))
        weights = np.ones(indices.size) if weights is None else np.asarray(weights, dtype=np.float64)
        for index, strength in zip(indices, weights):
            for r0, r1, c0, c1, sign in self.rectangles(index):
                picture[r0:r1, c0:c1] += strength * sign
        return picture


def haar_like_features(image_shape, types=tuple(FEATURE_TYPES), stride: int = 1,
                       scale_step: int = 1, min_cell: int = 1, max_features: int = 2_000_000) -> HaarLikeFeatures:
    """Enumerate rectangle features of the given types over an image of ``image_shape``.

    Every cell size from ``min_cell`` up (in steps of ``scale_step`` pixels) and every position on
    a grid of ``stride`` pixels is used, as in [VJ] when ``stride = scale_step = min_cell = 1``.

    Raises
    ------
    InputError
        For unknown types, non-positive steps, or more than ``max_features`` features (choose a
        larger stride or scale step).
    """
    try:
        h, w = (int(s) for s in image_shape)
    except (TypeError, ValueError):
        raise InputError(f"image_shape must be (height, width); got {image_shape!r}.") from None
    unknown = [t for t in types if t not in FEATURE_TYPES]
    if unknown or not types:
        raise InputError(f"Unknown feature type(s) {unknown}; choose from {', '.join(FEATURE_TYPES)}.")
    for name, value in (("stride", stride), ("scale_step", scale_step), ("min_cell", min_cell)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InputError(f"{name} must be a positive integer; got {value!r}.")
    parts = {key: [] for key in ("kind", "top", "left", "height", "width")}
    count = 0
    for kind in types:
        rows, cols, _ = FEATURE_TYPES[kind]
        for cell_h in range(min_cell, h // rows + 1, scale_step):
            for cell_w in range(min_cell, w // cols + 1, scale_step):
                height, width = cell_h * rows, cell_w * cols
                tops = np.arange(0, h - height + 1, stride)
                lefts = np.arange(0, w - width + 1, stride)
                count += tops.size * lefts.size
                if count > max_features:
                    raise InputError(f"More than {max_features:,} features for {h} x {w} images; "
                                     "use a larger stride, scale step or minimum cell size.")
                top, left = np.meshgrid(tops, lefts, indexing="ij")
                parts["top"].append(top.ravel())
                parts["left"].append(left.ravel())
                parts["height"].append(np.full(top.size, height))
                parts["width"].append(np.full(top.size, width))
                parts["kind"].append(np.full(top.size, kind, dtype=object))
    if count == 0:
        raise InputError(f"No feature fits in {h} x {w} images with these settings.")
    arrays = {key: np.concatenate(values) for key, values in parts.items()}
    return HaarLikeFeatures(image_shape=(h, w), kind=arrays["kind"].astype(str),
                            top=arrays["top"], left=arrays["left"], height=arrays["height"],
                            width=arrays["width"])


class HaarLikeFamily(FeatureFamily):
    """Haar-like rectangle features of images (the family of :func:`to_haar_like`): a feature's
    weight is drawn on its signed rectangles. They overlap and are not a basis: no inverse.

    Attributes
    ----------
    features : HaarLikeFeatures
        The geometry of every feature.
    """

    name = "haarlike"

    def __init__(self, images: Dataset, features: HaarLikeFeatures):
        super().__init__(images)
        self.features = features

    def pixel_map(self, weights) -> np.ndarray:
        weights = np.asarray(weights, dtype=np.float64).ravel()
        if weights.size != self.features.n_features:
            raise InputError(f"Expected {self.features.n_features} weights, one per feature; got {weights.size}.")
        drawn = np.flatnonzero(weights)
        return self.features.selection_map(drawn, weights[drawn])


def to_haar_like(dataset: Dataset, **options) -> Dataset:
    """Rectangle-feature values of an image data set as a new data set (one feature per rectangle
    feature; its ``family``, :class:`HaarLikeFamily`, keeps the geometry and the images)."""
    if not dataset.is_image:
        raise InputError("Haar-like features need an image data set (this one has no image shape).")
    features = haar_like_features(dataset.image_shape, **options)
    values = features.values(dataset.images())
    return Dataset(values, labels=dataset.labels, feature_names_=features.names(),
                   sample_names_=dataset.sample_names, name=f"{dataset.name} (Haar-like)",
                   source=dataset.source, kind="haarlike",
                   meta={"family": HaarLikeFamily(dataset, features)})
