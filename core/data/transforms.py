"""The values of a data set transformed before selection, as expression tables usually are.

Scanpy's usual preparation of an expression matrix takes ``log(1 + x)`` (``scanpy.pp.log1p``)
and then each gene's z-score (``scanpy.pp.scale`` without clipping); this module does the same
to a :class:`~core.data.dataset.Dataset`.

What each step changes differs by method. Q-alpha centres every feature and scales it to unit
norm itself (Wolf & Shashua 2003, Sec. 2; :mod:`core.selection.qalpha`), so z-scores leave its
weights as they were; ``log1p`` changes the shape of each feature's values (a heavy tail of raw
counts), which it does see. The methods that read a feature's scale (the variance ranking, the
Laplacian score, k-means on the selected features, PCA) change with both.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import InputError
from ..validation import zscores
from .dataset import Dataset

__all__ = ["transform_values", "STEP_NAMES"]

#: How each step is named in a transformed data set's name, in the order they are applied.
STEP_NAMES = {"log1p": "log1p", "standardise": "z-scores"}


def transform_values(data: Dataset, *, log1p: bool = False, standardise: bool = False) -> Dataset:
    """``data`` with its values transformed: ``log(1 + x)``, then each feature's z-score.

    Parameters
    ----------
    data : Dataset
        The data set; its labels, names and image shape are kept.
    log1p : bool
        Replace each value ``x`` by ``log(1 + x)`` (natural log, as ``scanpy.pp.log1p``). Needs
        every value non-negative (counts, intensities).
    standardise : bool
        After ``log1p`` if both: centre each feature and divide it by its standard deviation
        (population, ``ddof=0``, as ``scanpy.pp.scale``); a constant feature becomes 0.

    Returns
    -------
    Dataset
        A new data set named ``"<name> (log1p, z-scores)"`` (the steps taken). Its ``meta`` keeps
        the steps (``"transform"``) and the data set they were applied to
        (``"transformed_from"``); a feature family's basis (``meta["family"]``) is dropped: the
        values are no longer its coefficients.

    Raises
    ------
    InputError
        When neither step is asked for, or ``log1p`` meets a negative value (the message names
        the smallest value and its feature).
    """
    if not isinstance(data, Dataset):
        raise InputError(f"transform_values takes a Dataset; got {type(data).__name__}.")
    if not (log1p or standardise):
        raise InputError("Choose a transform: log1p, standardise or both.")
    X = data.X
    if log1p:
        smallest = int(np.argmin(X)) if X.size else 0
        row, column = divmod(smallest, X.shape[1])
        if X[row, column] < 0:
            raise InputError(f"log1p needs non-negative values (counts or intensities); {data.feature_names[column]!r} "
                             f"holds {X[row, column]:.4g} (sample {data.sample_names[row]!r}). These values may be "
                             "already logged or centred: leave log1p off.")
        X = np.log1p(X)
    if standardise:
        X = zscores(X)
    transform = dict(log1p=bool(log1p), standardise=bool(standardise))
    meta = {key: value for key, value in data.meta.items() if key != "family"}
    meta.update(transform=transform, transformed_from=data)
    steps = ", ".join(STEP_NAMES[step] for step, done in transform.items() if done)
    return replace(data, X=X, name=f"{data.name} ({steps})", meta=meta)
