"""The data set type shared by every loader, algorithm and page.

Orientation follows scikit-learn: ``X`` is ``n_samples x n_features``. The papers write the
transpose (their ``M`` is features x samples); algorithms convert internally.

Images are stored one per row in row-major (C) order, upright: ``X[i].reshape(image_shape)``
gives the picture. Loaders of column-major sources (the MATLAB benchmark files) convert once, at
load time, so nothing downstream has to know about Fortran order.

References
----------
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InputError
from ..validation import check_real_dtype

__all__ = ["Dataset", "FeatureFamily", "PixelFamily"]


def side_class_mask(labels, side_classes) -> np.ndarray:
    """The samples whose label is one of ``side_classes`` ([SW04] Sec. 6: they form the side data
    W, the others the main data), as a boolean mask; the classes are read in the labels' type (a
    link's "2" is the class 2). Refused when a class does not occur or no sample would be main data."""
    labels = np.asarray(labels).ravel()
    side_classes = list(np.atleast_1d(np.asarray(list(side_classes), dtype=labels.dtype)))
    classes = np.unique(labels)
    missing = [c for c in side_classes if c not in set(classes.tolist())]
    if missing:
        raise InputError(f"Side class(es) {missing} do not occur in the labels ({', '.join(map(str, classes[:20]))}).")
    is_side = np.isin(labels, side_classes)
    if is_side.all():
        raise InputError("Every sample would be side data; leave at least one class as main data.")
    return is_side


def _read_only(array: np.ndarray) -> np.ndarray:
    """A view of ``array`` that cannot be written through: a data set is shared (every session
    that loads a bundled set gets the same one, and caches key on its fingerprint), so an
    in-place change must raise rather than reach the others. No copy is made."""
    view = array.view()
    view.flags.writeable = False
    return view


def _checked_layouts(layouts, n_samples: int) -> ReadOnlyMeta:
    """``meta["layouts"]``: each a finite float64 (n_samples, 2) array, read-only."""
    checked = {}
    for name, values in dict(layouts).items():
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (n_samples, 2) or not np.isfinite(values).all():
            raise InputError(f"The layout {name!r} must hold two finite coordinates per sample "
                             f"({n_samples} x 2); it is {' x '.join(map(str, values.shape))}.")
        checked[str(name)] = _read_only(values)
    return ReadOnlyMeta(checked)


class ReadOnlyMeta(dict):
    """A data set's ``meta``: a dictionary that refuses changes (and pickles, which a
    ``types.MappingProxyType`` does not: Streamlit's caches pickle what they return)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("A data set's meta is read-only: make a new data set with dataclasses.replace(data, meta=...).")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __reduce__(self):
        return ReadOnlyMeta, (dict(self),)


def _as_name_tuple(names, expected: int, what: str) -> tuple[str, ...] | None:
    if names is None:
        return None
    names = tuple(str(n) for n in names)
    if len(names) != expected:
        raise InputError(f"{len(names)} {what} names were given for {expected} {what}s; "
                         f"give exactly one name per {what}.")
    return names


# ------------------------------------------------------------------ feature families
class FeatureFamily:
    """What the features of a data set derived from images are, in terms of those images.

    Pages and scripts ask a family -- never the data set's ``kind`` -- how to draw feature weights
    on the images (:meth:`pixel_map`), which pixels a selection marks, and whether the features
    can be turned back into images (:meth:`inverse`). ``Dataset.family`` gives a data set's family:
    :class:`PixelFamily` for an image set, the one its transform stored for Haar wavelet
    coefficients or Haar-like rectangles, None for a table.

    Attributes
    ----------
    name : str
        The family's key in :data:`core.features.families.FEATURE_FAMILIES`.
    images : Dataset
        The image set the features were computed from (its samples are the data set's).
    """

    name = ""

    def __init__(self, images: "Dataset"):
        self.images = images

    def pixel_map(self, weights) -> np.ndarray:
        """An ``image_shape`` picture of one weight per feature (for overlays)."""
        raise NotImplementedError

    def marked_pixels(self, selected) -> np.ndarray | None:
        """The pixels to mark for the selected features, or None when a feature is not a pixel."""
        return None

    def inverse(self, values) -> np.ndarray:
        """Images ``(n, h, w)`` from rows of feature values, where the family has an inverse."""
        raise InputError(f"{self.name} features cannot be turned back into images: they are not a basis.")

    def for_samples(self, index) -> "FeatureFamily":
        """The same family over the samples ``index`` of its images."""
        family = copy.copy(self)
        family.images = self.images.subset_samples(index)
        return family


class PixelFamily(FeatureFamily):
    """The grey values themselves: a feature is a pixel."""

    name = "pixels"

    def pixel_map(self, weights) -> np.ndarray:
        return self.images.to_image(np.asarray(weights, dtype=np.float64))

    def marked_pixels(self, selected) -> np.ndarray:
        return np.asarray(selected, dtype=np.intp)

    def inverse(self, values) -> np.ndarray:
        values = np.atleast_2d(np.asarray(values, dtype=np.float64))
        if values.shape[1] != self.images.n_features:
            raise InputError(f"Expected {self.images.n_features} pixel values per image; got {values.shape[1]}.")
        return values.reshape((-1,) + self.images.image_shape)


@dataclass(frozen=True, eq=False)
class Dataset:
    """A matrix of samples x features with what is known about it.

    A data set is read-only: ``X`` and ``labels`` are views that cannot be written through and
    ``meta`` a read-only mapping, since one data set is shared by every session that loads it
    and the caches key on its :attr:`fingerprint`. To change data, make a new data set
    (``dataclasses.replace(data, X=new_X)``, :meth:`subset_samples`, ...). An array handed in is
    not copied when it is already C-contiguous float64: it stays the caller's, and a change
    made through the caller's own reference would reach the data set, so hand over a copy of an
    array you will go on changing.

    Parameters
    ----------
    X : array_like, shape (n_samples, n_features)
        The measurements; stored as C-contiguous float64. Must be finite.
    labels : array_like, shape (n_samples,), optional
        One class label per sample (numbers or strings).
    image_shape : (int, int), optional
        ``(height, width)`` when every sample is an image of that size stored row-major.
    feature_names, sample_names : sequence of str, optional
        Generated on demand when not given (``"pixel (r, c)"`` for images, ``"feature j"``
        otherwise; ``"sample i"``).
    name : str
        Display name.
    source : str
        Where the data come from and how to cite them.
    kind : str
        ``"images"``, ``"table"``, ``"synthetic"``, or a feature family such as ``"haar"``.
    meta : mapping
        Anything a producer wants to keep alongside: ground truth of synthetic data (relevant
        features, solution sets), the basis of a feature transform, the original images.
    """

    X: np.ndarray
    labels: np.ndarray | None = None
    image_shape: tuple[int, int] | None = None
    feature_names_: tuple[str, ...] | None = field(default=None, repr=False)
    sample_names_: tuple[str, ...] | None = field(default=None, repr=False)
    name: str = "data set"
    source: str = ""
    kind: str = "table"
    meta: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self):
        X = np.asarray(self.X)
        check_real_dtype(X.dtype, "The data matrix")
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise InputError(f"The data matrix must be 2-D (samples x features); got {X.ndim}-D.")
        if X.shape[0] < 1 or X.shape[1] < 1:
            raise InputError(f"The data matrix is empty (shape {X.shape}).")
        if not np.isfinite(X).all():
            bad = int(np.count_nonzero(~np.isfinite(X)))
            raise InputError(f"The data matrix has {bad} NaN or infinite value(s); "
                             "impute or remove them before loading.")
        object.__setattr__(self, "X", _read_only(X))
        n, d = X.shape
        if self.labels is not None:
            labels = np.asarray(self.labels)
            if labels.ndim != 1 or labels.shape[0] != n:
                raise InputError(f"There are {labels.size} labels for {n} samples; "
                                 "give one label per sample.")
            if labels.dtype.kind == "f" and np.isnan(labels).any():
                raise InputError(f"{int(np.isnan(labels).sum())} sample(s) have a NaN label; drop them or give "
                                 "them a class.")
            object.__setattr__(self, "labels", _read_only(labels))
        if self.image_shape is not None:
            shape = tuple(int(s) for s in self.image_shape)
            if len(shape) != 2 or shape[0] * shape[1] != d:
                raise InputError(f"Image shape {self.image_shape} does not hold {d} features.")
            object.__setattr__(self, "image_shape", shape)
        object.__setattr__(self, "feature_names_",
                           _as_name_tuple(self.feature_names_, d, "feature"))
        object.__setattr__(self, "sample_names_",
                           _as_name_tuple(self.sample_names_, n, "sample"))
        meta = dict(self.meta)
        if "layouts" in meta:
            meta["layouts"] = _checked_layouts(meta["layouts"], n)
        object.__setattr__(self, "meta", ReadOnlyMeta(meta))

    # ------------------------------------------------------------------ shape and names
    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def is_image(self) -> bool:
        return self.image_shape is not None

    @property
    def family(self) -> FeatureFamily | None:
        """What the features are in terms of images (:class:`FeatureFamily`): pixels for an image
        set, the family a feature transform stored (``meta["family"]``), None for a table."""
        return PixelFamily(self) if self.is_image else self.meta.get("family")

    @cached_property
    def feature_names(self) -> tuple[str, ...]:
        if self.feature_names_ is not None:
            return self.feature_names_
        if self.image_shape is not None:
            w = self.image_shape[1]
            return tuple(f"pixel ({j // w}, {j % w})" for j in range(self.n_features))
        return tuple(f"feature {j}" for j in range(self.n_features))

    @cached_property
    def sample_names(self) -> tuple[str, ...]:
        if self.sample_names_ is not None:
            return self.sample_names_
        return tuple(f"sample {i}" for i in range(self.n_samples))

    @cached_property
    def fingerprint(self) -> str:
        """A hash of the data (X, labels, image shape): a cache key that does not sample the array."""
        digest = hashlib.blake2b(self.X.tobytes(), digest_size=16)
        digest.update(repr((self.X.shape, self.image_shape)).encode())
        if self.labels is not None:
            digest.update(np.asarray(self.labels).astype(str).tobytes())
        return digest.hexdigest()

    @property
    def classes(self) -> np.ndarray:
        """Sorted distinct labels (empty when the data set has none)."""
        if self.labels is None:
            return np.array([])
        return np.unique(self.labels)

    def summary(self) -> dict[str, Any]:
        """A small dictionary for display: name, sizes, classes, image shape, source."""
        return {
            "name": self.name,
            "kind": self.kind,
            "samples": self.n_samples,
            "features": self.n_features,
            "classes": int(self.classes.size) if self.labels is not None else None,
            "image shape": f"{self.image_shape[0]} x {self.image_shape[1]}" if self.is_image else None,
            "source": self.source,
        }

    # ------------------------------------------------------------------ subsets
    def _index(self, index, size: int, what: str) -> np.ndarray:
        index = np.asarray(index)
        if index.dtype == bool:
            if index.shape != (size,):
                raise InputError(f"A boolean {what} mask must have length {size}.")
            index = np.flatnonzero(index)
        index = index.astype(np.intp, copy=False).ravel()
        if index.size and (index.min() < -size or index.max() >= size):
            raise InputError(f"{what.capitalize()} index out of range (there are {size} {what}s).")
        return index

    def subset_samples(self, index, name: str | None = None) -> "Dataset":
        """The samples selected by ``index`` (integers or a boolean mask), all features kept."""
        index = self._index(index, self.n_samples, "sample")
        if index.size == 0:
            raise InputError("The sample selection is empty; select at least one sample.")
        meta = dict(self.meta)
        if "family" in meta:  # the images behind the features follow the samples
            meta["family"] = meta["family"].for_samples(index)
        if "layouts" in meta:  # so do the places the file gave them (AnnData's obsm)
            meta["layouts"] = {name: values[index] for name, values in meta["layouts"].items()}
        return replace(
            self,
            X=self.X[index],
            labels=None if self.labels is None else self.labels[index],
            sample_names_=tuple(self.sample_names[i] for i in index),
            name=name or self.name,
            meta=meta,
        )

    def subset_features(self, index, name: str | None = None) -> "Dataset":
        """The features selected by ``index``; the result is no longer an image set."""
        index = self._index(index, self.n_features, "feature")
        if index.size == 0:
            raise InputError("The feature selection is empty; select at least one feature.")
        return replace(
            self,
            X=self.X[:, index],
            image_shape=None,
            feature_names_=tuple(self.feature_names[j] for j in index),
            name=name or self.name,
            kind="table" if self.is_image else self.kind,
            # some of a family's features no longer map back to the images as a whole
            meta={key: value for key, value in self.meta.items() if key != "family"},
        )

    def split_by_class(self, side_classes: Sequence) -> tuple["Dataset", "Dataset"]:
        """Main/side split as in [SW04] Sec. 6: samples of ``side_classes`` form the side data.

        Returns ``(main, side)``. Raises :class:`InputError` when the data set has no labels,
        a requested class does not exist, or either part would be empty.
        """
        if self.labels is None:
            raise InputError("This data set has no labels; choose a label column first "
                             "or give the side data as a separate upload.")
        is_side = side_class_mask(self.labels, side_classes)
        return (self.subset_samples(~is_side, name=f"{self.name} (main)"),
                self.subset_samples(is_side, name=f"{self.name} (side)"))

    # ------------------------------------------------------------------ images
    def to_image(self, values) -> np.ndarray:
        """Turn a per-feature vector (alpha, a mask, a sample) into an ``image_shape`` array."""
        if self.image_shape is None:
            raise InputError("This data set is not an image set, so a feature vector has no image.")
        values = np.asarray(values)
        if values.shape != (self.n_features,):
            raise InputError(f"Expected a vector of {self.n_features} values, got shape {values.shape}.")
        return values.reshape(self.image_shape)

    def images(self) -> np.ndarray:
        """All samples as an ``(n_samples, height, width)`` array (a view of ``X``)."""
        if self.image_shape is None:
            raise InputError("This data set is not an image set.")
        return self.X.reshape((self.n_samples,) + self.image_shape)
