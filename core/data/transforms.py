"""The values of a data set transformed before selection, as expression tables usually are.

Scanpy's usual preparation of an expression matrix takes ``log(1 + x)`` (``scanpy.pp.log1p``),
keeps the most variable genes, and then takes each gene's z-score (``scanpy.pp.scale`` without
clipping); this module does the same to a :class:`~core.data.dataset.Dataset`. (Scanpy's
``highly_variable_genes`` ranks genes by a dispersion normalised within bins of mean expression;
here it is the plain variance, the library's ``variance`` baseline.)

What each step changes differs by method. Q-alpha centres every feature and scales it to unit
norm itself (Wolf & Shashua 2003, Sec. 2; :mod:`core.selection.qalpha`), so z-scores leave its
weights as they were; ``log1p`` changes the shape of each feature's values (a heavy tail of raw
counts), which it does see. The library's k-means, 1-NN and Fisher scores standardise the features
they judge, so z-scores leave them as they were too. What z-scores change are the methods that
read a feature's scale or build a graph from all the features at their scale: the variance
ranking (every variance becomes 1), the Laplacian score, SPEC (tests/core/data/test_transforms.py).
"""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral

import numpy as np

from ..errors import InputError
from ..validation import zscores
from .dataset import Dataset

__all__ = ["transform_values", "transform_steps"]


def transform_steps(transform: dict) -> list[str]:
    """The steps of a transform (``meta["transform"]`` of a transformed data set) as they are named
    in its name, in the order they were applied."""
    steps = ["log1p"] if transform.get("log1p") else []
    if transform.get("n_most_variable") is not None:
        steps.append(f"{transform['n_most_variable']:,} most variable")
    return steps + (["z-scores"] if transform.get("standardise") else [])


def transform_values(data: Dataset, *, log1p: bool = False, n_most_variable: int | None = None,
                     standardise: bool = False) -> Dataset:
    """``data`` with its values transformed: ``log(1 + x)``, the most variable features, z-scores.

    Parameters
    ----------
    data : Dataset
        The data set; its labels, names and (unless features are dropped) image shape are kept.
    log1p : bool
        Replace each value ``x`` by ``log(1 + x)`` (natural log, as ``scanpy.pp.log1p``). Needs
        every value non-negative (counts, intensities).
    n_most_variable : int, optional
        After ``log1p``: keep the ``n_most_variable`` features of largest variance, in their
        order (ties to the earlier feature), as scanpy keeps its highly variable genes before
        scaling. The result is no longer an image set.
    standardise : bool
        Last: centre each feature and divide it by its standard deviation (population,
        ``ddof=0``, as ``scanpy.pp.scale``); a constant feature becomes 0.

    Returns
    -------
    Dataset
        A new data set named ``"<name> (log1p, 2,000 most variable, z-scores)"`` (the steps
        taken, :func:`transform_steps`). Its ``meta`` keeps the steps (``"transform"``) and the
        data set they were applied to (``"transformed_from"``); a feature family's basis
        (``meta["family"]``) is dropped: the values are no longer its coefficients.

    Raises
    ------
    InputError
        When no step is asked for, ``log1p`` meets a negative value (the message names the
        smallest value and its feature), or ``n_most_variable`` is not a count from 1 to the
        number of features.
    """
    if not isinstance(data, Dataset):
        raise InputError(f"transform_values takes a Dataset; got {type(data).__name__}.")
    if n_most_variable is not None and (isinstance(n_most_variable, bool) or not isinstance(n_most_variable, Integral)
                                        or not 1 <= n_most_variable <= data.n_features):
        raise InputError(f"n_most_variable must be a whole number from 1 to {data.n_features:,} (the features); "
                         f"got {n_most_variable!r}.")
    if not (log1p or standardise or n_most_variable is not None):
        raise InputError("Choose a transform: log1p, the most variable features, z-scores, or several.")
    result, X = data, data.X
    if log1p:
        smallest = int(np.argmin(X))
        row, column = divmod(smallest, X.shape[1])
        if X[row, column] < 0:
            raise InputError(f"log1p needs non-negative values (counts or intensities); {data.feature_names[column]!r} "
                             f"holds {X[row, column]:.4g} (sample {data.sample_names[row]!r}). These values may be "
                             "already logged or centred: leave log1p off.")
        X = np.log1p(X)
    if n_most_variable is not None:
        kept = np.sort(np.argsort(-X.var(axis=0), kind="stable")[:int(n_most_variable)])
        result, X = data.subset_features(kept), X[:, kept]
    if standardise:
        X = zscores(X)
    transform = dict(log1p=bool(log1p), n_most_variable=None if n_most_variable is None else int(n_most_variable),
                     standardise=bool(standardise))
    meta = {key: value for key, value in result.meta.items() if key != "family"}
    meta.update(transform=transform, transformed_from=data)
    return replace(result, X=X, name=f"{data.name} ({', '.join(transform_steps(transform))})", meta=meta)
