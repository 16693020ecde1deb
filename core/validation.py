"""Checks shared by the public entry points of the library (each raises InputError), and the
column standardisation that several methods and protocols share.

The range guards exist because float64 has limits a user's data can reach: values near 1e200
have squares that overflow (scatter matrices, variances, kernels), and values offset by 1e16
have no spread left at float64 resolution. Algorithms whose result does not depend on the unit of
the data (Q-alpha normalises every feature; sparse LDA's objective is invariant under a common
scale; every scorer's ranking is) rescale by a power of two instead of refusing, which is exact.
"""

from __future__ import annotations

import numbers

import numpy as np

from .errors import InputError

__all__ = ["as_dense_array", "as_labels", "check_random_state", "random_seed", "check_matrix_shape", "check_real_dtype", "check_positive_int", "check_real", "power_of_two_scale",
           "require_finite", "zscores", "SQUARE_SAFE"]

#: Largest magnitude whose squares, summed over a million terms, stay finite in float64.
SQUARE_SAFE = 1e150


def check_real_dtype(dtype, what: str) -> None:
    """Refuse data that are not real measurements, whatever a cast to float64 would make of them:
    complex numbers (a cast drops the imaginary part silently), dates and times (a cast counts
    nanoseconds), text and other objects."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        raise InputError(f"{what} holds complex numbers; feature selection needs real values. Pass the "
                         "magnitude (numpy.abs) or the real and imaginary parts as separate features.")
    if dtype.kind in "mM":
        raise InputError(f"{what} holds dates or times (dtype {dtype}), not numeric measurements; convert them "
                         "to numbers first (e.g. days since an event).")
    if dtype.kind in "US":
        raise InputError(f"{what} holds text (dtype {dtype}), not numeric values; convert it to numbers first.")
    if dtype.kind not in "biuf":
        raise InputError(f"{what} is not numeric (dtype {dtype}); it needs real numbers.")


def check_matrix_shape(shape, what: str = "X") -> None:
    """Refuse a shape that is not 2-D (samples x features) or that is empty; for any array type
    (NumPy, SciPy sparse, Dask), before anything is read."""
    if len(shape) != 2:
        raise InputError(f"{what} must be 2-D (samples x features); got {len(shape)}-D.")
    if shape[0] == 0 or shape[1] == 0:
        raise InputError(f"{what} is empty (shape {tuple(shape)}).")


def as_dense_array(X, what: str = "X", keep_float32: bool = False) -> np.ndarray:
    """``X``, array-like, as a finite 2-D float64 array (samples x features): the validation of the
    dense kind of :func:`core.matrix.data_matrix` (which tells sparse and chunked data apart first).

    With ``keep_float32`` a float32 array is kept as it is, not copied to float64 (the caller
    converts what it reads; :class:`core.matrix.DataMatrix` does, slice by slice).

    Refused: what :func:`check_real_dtype` refuses (an object array of numbers is accepted), NaN and
    infinities, anything not 2-D or empty.
    """
    values = np.asarray(X)
    if values.dtype != object:
        check_real_dtype(values.dtype, what)
    target = np.float32 if keep_float32 and values.dtype == np.float32 else np.float64
    try:
        X = np.asarray(values, dtype=target)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a numeric matrix (samples x features).") from None
    check_matrix_shape(X.shape, what)
    if not _all_finite(X):
        raise InputError(f"{what} contains NaN or infinite values; impute or remove them first.")
    return X


def _all_finite(X) -> bool:
    """Whether every value of a float matrix is finite. A column's sum is NaN or infinite where the
    column holds a NaN or an infinity, and a product with a vector of ones reads the matrix at
    BLAS speed without a mask the size of the data (60,000 x 4,000 float32: 0.05 s against 0.2-0.5 s
    for ``np.isfinite(X).all()``, 2-core Xeon); only where a sum overflows does the exact test run."""
    return bool(np.isfinite(np.ones(X.shape[0], dtype=X.dtype) @ X).all()) or bool(np.isfinite(X).all())


def as_labels(labels, n_samples: int, what: str = "labels") -> np.ndarray:
    """One class label per sample, as a 1-D array.

    Refused: missing labels (NaN, None), numbers that are not whole (a label names a class: 0.5
    is a measurement), complex numbers, and a count other than ``n_samples``.
    """
    values = np.asarray(labels)
    if values.ndim == 2 and 1 in values.shape:
        values = values.ravel()
    if values.ndim != 1 or values.shape[0] != n_samples:
        raise InputError(f"{what} must hold one label per sample ({n_samples}); got shape {values.shape}.")
    if np.iscomplexobj(values):
        raise InputError(f"{what} hold complex numbers; labels name classes (integers or text).")
    if values.dtype == object:
        missing = [i for i, v in enumerate(values) if v is None or (isinstance(v, float) and np.isnan(v))]
        if missing:
            raise InputError(f"{what}: {len(missing)} sample(s) have no label (the first: sample {missing[0]}); "
                             "drop those samples or give them a class.")
        try:
            values = values.astype(str) if any(isinstance(v, str) for v in values) else values
        except (TypeError, ValueError):
            raise InputError(f"{what} must be numbers or text.") from None
    if values.dtype.kind == "f":
        if np.isnan(values).any():
            first = int(np.flatnonzero(np.isnan(values))[0])
            raise InputError(f"{what}: {int(np.isnan(values).sum())} sample(s) have a NaN label (the first: "
                             f"sample {first}); drop those samples or give them a class.")
        if not np.isfinite(values).all() or not np.all(values == np.round(values)):
            odd = values[~np.isfinite(values) | (values != np.round(values))][0]
            raise InputError(f"{what}: values that are not whole numbers (e.g. {odd:g}); labels name classes "
                             "(integers or text).")
    if values.dtype.kind == "b":
        values = values.astype(np.int64)
    return values


def check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name} must be a positive integer; got {value!r}.")
    return int(value)


def check_real(value, name: str, *, low: float | None = None, high: float | None = None,
               low_open: bool = False) -> float:
    """A real number (not a string, a boolean or NaN) within ``[low, high]`` (``(low, high]``
    with ``low_open``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise InputError(f"{name} must be a number; got {value!r} ({type(value).__name__}).")
    value = float(value)
    if not np.isfinite(value):
        raise InputError(f"{name} must be a finite number; got {value!r}.")
    if low is not None and (value < low or (low_open and value == low)):
        raise InputError(f"{name} must be {'greater than' if low_open else 'at least'} {low:g}; got {value!r}.")
    if high is not None and value > high:
        raise InputError(f"{name} must be at most {high:g}; got {value!r}.")
    return value


def check_random_state(random_state, name: str = "random_state") -> np.random.Generator:
    """The library's one convention for randomness, at every entry point that takes it:

    * ``None``: fresh randomness from the operating system (a result you cannot repeat);
    * a non-negative integer: a seed (the same seed, the same result);
    * a :class:`numpy.random.Generator`: used as it is (and advanced).

    Anything else (a float, a string, a boolean, a legacy ``RandomState``) is an
    :class:`~core.errors.InputError` naming the parameter. Returns the Generator to draw from."""
    if random_state is None or isinstance(random_state, np.random.Generator):
        return np.random.default_rng(random_state)
    return np.random.default_rng(random_seed(random_state, name))


def random_seed(random_state, name: str = "random_state") -> int:
    """An integer seed under :func:`check_random_state`'s convention, for what is seeded by
    integers (the k-means starts, seeded ``s, s + 1, ...`` so that two feature sets get paired
    runs): an integer is itself, a Generator or ``None`` gives one drawn from it or fresh."""
    if isinstance(random_state, (bool, np.bool_)) or not (
            random_state is None or isinstance(random_state, (int, np.integer, np.random.Generator))):
        raise InputError(f"{name} must be None, a non-negative integer or a numpy Generator; "
                         f"got {random_state!r} ({type(random_state).__name__}).")
    if isinstance(random_state, (int, np.integer)):
        if random_state < 0:
            raise InputError(f"{name} must be None, a non-negative integer or a numpy Generator; got {random_state}.")
        return int(random_state)
    return int(np.random.default_rng(random_state).integers(2**31 - 1))


def power_of_two_scale(X: np.ndarray) -> float:
    """A power of two near the largest ``|X|`` when the data's squares would overflow (or their
    spread underflow); 1 otherwise. Dividing by it is exact in binary floating point."""
    magnitude = float(np.max(np.abs(X))) if X.size else 0.0
    if magnitude == 0.0 or 1e-100 <= magnitude <= SQUARE_SAFE:
        return 1.0
    return float(2.0 ** np.round(np.log2(magnitude)))


def require_finite(values, what: str) -> None:
    """The last check of a public function: a result with NaN or infinities is never returned."""
    values = np.asarray(values, dtype=np.float64)
    if not np.isfinite(values).all():
        raise InputError(f"{what} came out NaN or infinite: the data or parameters push float64 past its range. "
                         "Rescale the data or choose milder parameters.")


def column_scales(reference) -> tuple[np.ndarray, np.ndarray]:
    """The means and the scales :func:`zscores` divides by: the columns' standard deviations, 1
    for a constant column.

    A column counts as constant when its spread is within float64's rounding of its mean (at most
    ``n * eps * |mean|``, scikit-learn's ``StandardScaler`` bound): ``log1p(5)`` twelve times has a
    computed spread of 2e-16, and dividing by it would turn rounding into values of ±1."""
    mean, spread = reference.mean(axis=0), reference.std(axis=0)
    constant = spread <= reference.shape[0] * np.finfo(np.float64).eps * np.abs(mean)
    return mean, np.where(constant, 1.0, spread)


def zscores(X, reference=None) -> np.ndarray:
    """z-scores of the columns of ``X``, with the means and standard deviations of ``reference``
    (``X`` itself by default); a constant column is centred and left unscaled
    (:func:`column_scales`)."""
    mean, scale = column_scales(X if reference is None else reference)
    return (X - mean) / scale
