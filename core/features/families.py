"""Feature families of an image data set: pixels, Haar wavelet coefficients, Haar-like rectangles.

One entry point, so that a page or a script can switch family with one argument and every
selection algorithm then runs on the result alike.
"""

from __future__ import annotations

from ..data.dataset import Dataset
from ..errors import InputError
from .haarlike import to_haar_like
from .wavelets import to_haar

__all__ = ["FEATURE_FAMILIES", "to_feature_family"]

FEATURE_FAMILIES = {
    "pixels": "the grey values themselves",
    "haar": "Haar wavelet coefficients at several scales (Shashua & Wolf, ECCV 2004, Sec. 6)",
    "haarlike": "Viola-Jones rectangle features from an integral image (as in the lecture on feature selection)",
}


def to_feature_family(dataset: Dataset, family: str, **options) -> Dataset:
    """The data set in another feature family (``options`` go to the family's transform:
    ``levels`` for "haar"; ``types``, ``stride``, ``scale_step``, ``min_cell`` for "haarlike")."""
    if family not in FEATURE_FAMILIES:
        raise InputError(f"Unknown feature family {family!r}; choose one of {', '.join(FEATURE_FAMILIES)}.")
    if family == "pixels":
        if options:
            raise InputError("The pixel family takes no options.")
        return dataset
    return to_haar(dataset, **options) if family == "haar" else to_haar_like(dataset, **options)
