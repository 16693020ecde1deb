"""Checks shared by the public entry points of the library (each raises InputError), and the
column standardisation that several methods and protocols share."""

from __future__ import annotations

import numpy as np

from .errors import InputError

__all__ = ["as_data_matrix", "check_positive_int", "zscores"]


def as_data_matrix(X, what: str = "X") -> np.ndarray:
    """``X`` as a finite 2-D float64 array (samples x features)."""
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a numeric matrix (samples x features).") from None
    if X.ndim != 2:
        raise InputError(f"{what} must be 2-D (samples x features); got {X.ndim}-D.")
    if not np.isfinite(X).all():
        raise InputError(f"{what} contains NaN or infinite values; impute or remove them first.")
    return X


def check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name} must be a positive integer; got {value!r}.")
    return int(value)


def zscores(X, reference=None) -> np.ndarray:
    """z-scores of the columns of ``X``, with the means and standard deviations of ``reference``
    (``X`` itself by default); a constant column is centred and left unscaled."""
    reference = X if reference is None else reference
    spread = reference.std(axis=0)
    return (X - reference.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
