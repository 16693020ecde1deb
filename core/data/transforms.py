"""The values of a data set transformed before selection, as expression tables usually are.

Scanpy's usual preparation of an expression matrix brings every sample to the same total
(``scanpy.pp.normalize_total``), takes ``log(1 + x)`` (``scanpy.pp.log1p``),
keeps the highly variable genes (``scanpy.pp.highly_variable_genes``: dispersion normalised
within bins of mean expression, Satija et al. 2015), and then takes each gene's z-score
(``scanpy.pp.scale`` without clipping); this module does the same to a
:class:`~core.data.dataset.Dataset`. The plain variance of logged values is no substitute: on
TOX-171 its 2,000 genes left Q-alpha's k-means an NMI of 0.018, against 0.237 with the
dispersion's (``benchmarks/bench_transforms.py``).

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

__all__ = ["transform_values", "transform_steps", "dispersion_ranking", "nonzero_share", "RARE_SHARE"]

#: A feature non-zero in fewer than this share of the samples is near-empty: Q-alpha (and every
#: method that scales features to unit norm) gives it the weight of a full one, so that a border
#: pixel inked in 2 of 535 digits ranked above the strokes. Pages name such features where they
#: rank high; :func:`transform_values` removes them when asked (``min_nonzero_share``).
RARE_SHARE = 0.01


def nonzero_share(X) -> np.ndarray:
    """The share of the samples (rows) in which each feature is not zero (scanpy's
    ``filter_genes`` counts cells; this is that count over the number of samples)."""
    X = np.asarray(X)
    return np.count_nonzero(X, axis=0) / max(X.shape[0], 1)


def transform_steps(transform: dict) -> list[str]:
    """The steps of a transform (``meta["transform"]`` of a transformed data set) as they are named
    in its name, in the order they were applied."""
    share = transform.get("min_nonzero_share")
    steps = [f"features non-zero in < {share:.3g} of samples {'blanked' if transform.get('blanked') else 'dropped'}"] \
        if share else []
    steps += ["totals normalised"] if transform.get("normalise_total") else []
    steps += ["log1p"] if transform.get("log1p") else []
    if transform.get("n_most_variable") is not None:
        steps.append(f"{transform['n_most_variable']:,} most variable")
    return steps + (["z-scores"] if transform.get("standardise") else [])


def dispersion_ranking(X, n_bins: int = 20) -> np.ndarray:
    """Features ranked by normalised dispersion, the highly variable genes of Satija et al. 2015
    (Seurat; scanpy's ``highly_variable_genes(flavor="seurat")``), most variable first.

    The dispersion of a feature is ``log(variance / mean)`` of its values (``ddof=1``); the features
    are put in ``n_bins`` bins of equal width in ``log(1 + mean)`` (right-closed, as ``pandas.cut``),
    and each dispersion is z-scored within its bin, so that a feature is variable for its level of
    expression, not because it is expressed highly. A feature alone in its bin scores 1; one whose
    dispersion is undefined (mean 0, or variance 0) ranks last. Ties go to the earlier feature.

    ``X`` holds non-negative values on their own scale: scanpy takes logged values and undoes the
    log (``expm1``) before these statistics, so this function on counts ranks as scanpy on their
    ``log1p``.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.size == 0 or not np.isfinite(X).all() or (X < 0).any():
        raise InputError("dispersion_ranking takes a non-empty 2-D array (samples x features) of finite, "
                         "non-negative values (counts or intensities, not logged or centred).")
    if isinstance(n_bins, bool) or not isinstance(n_bins, Integral) or n_bins < 1:
        raise InputError(f"n_bins must be a whole number of at least 1; got {n_bins!r}.")
    mean = X.mean(axis=0)
    variance = X.var(axis=0, ddof=1) if X.shape[0] > 1 else np.zeros(X.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        dispersion = np.log(variance / mean)
    defined = np.isfinite(dispersion)
    level = np.log1p(mean)
    edges = np.linspace(level.min(), level.max(), n_bins + 1)
    bins = np.clip(np.searchsorted(edges, level, side="left") - 1, 0, n_bins - 1)
    normalised = np.full(X.shape[1], -np.inf)
    for b in np.unique(bins[defined]):
        members = np.flatnonzero((bins == b) & defined)
        values = dispersion[members]
        if values.size == 1:  # scanpy's convention for a feature alone in its bin
            normalised[members] = 1.0
            continue
        spread = values.std(ddof=1)
        normalised[members] = (values - values.mean()) / spread if spread > 0 else 0.0
    return np.argsort(-normalised, kind="stable")


def transform_values(data: Dataset, *, normalise_total: bool = False, log1p: bool = False,
                     n_most_variable: int | None = None, standardise: bool = False,
                     min_nonzero_share: float | None = None) -> Dataset:
    """``data`` with its values transformed: near-empty features removed, equal totals,
    ``log(1 + x)``, the most variable features, z-scores (in that order, each when asked for).

    Parameters
    ----------
    data : Dataset
        The data set; its labels, names and (unless features are dropped) image shape are kept.
    min_nonzero_share : float, optional
        First: the features non-zero in fewer than this share of the samples (in (0, 1]) are
        removed, as ``scanpy.pp.filter_genes(min_cells=ceil(share * n_samples))`` does: dropped
        from a table; in an image set set to 0 instead, so that the images keep their grid (a
        feature of zeros gets weight 0 from Q-alpha). Off by default: the papers' results are
        on the features as published.
    normalise_total : bool
        First: scale each sample so that its values sum to the median of the samples' sums, as
        ``scanpy.pp.normalize_total`` with its default target (library-size normalisation of
        counts). A sample whose values are all 0 stays 0. Needs non-negative values.
    log1p : bool
        Replace each value ``x`` by ``log(1 + x)`` (natural log, as ``scanpy.pp.log1p``). Needs
        every value non-negative (counts, intensities).
    n_most_variable : int, optional
        Keep the ``n_most_variable`` features of largest normalised dispersion
        (:func:`dispersion_ranking` of the values before ``log1p``, after ``normalise_total``:
        the genes scanpy's ``highly_variable_genes(flavor="seurat")`` keeps from their ``log1p``),
        in their order.
        Needs non-negative values. The result is no longer an image set.
    standardise : bool
        Last: centre each feature and divide it by its standard deviation (population,
        ``ddof=0``, as ``scanpy.pp.scale``); a constant feature becomes 0.

    Returns
    -------
    Dataset
        A new data set named ``"<name> (totals normalised, log1p, 2,000 most variable, z-scores)"`` (the steps
        taken, :func:`transform_steps`). Its ``meta`` keeps the steps (``"transform"``) and the
        data set they were applied to (``"transformed_from"``); a feature family's basis
        (``meta["family"]``) is dropped: the values are no longer its coefficients.

    Raises
    ------
    InputError
        When no step is asked for, a step other than z-scores meets a negative value (the
        message names the smallest value and its feature), or ``n_most_variable`` is not a count
        from 1 to the number of features.
    """
    if not isinstance(data, Dataset):
        raise InputError(f"transform_values takes a Dataset; got {type(data).__name__}.")
    if n_most_variable is not None and (isinstance(n_most_variable, bool) or not isinstance(n_most_variable, Integral)
                                        or not 1 <= n_most_variable <= data.n_features):
        raise InputError(f"n_most_variable must be a whole number from 1 to {data.n_features:,} (the features); "
                         f"got {n_most_variable!r}.")
    if min_nonzero_share is not None and (isinstance(min_nonzero_share, bool) or not 0 < min_nonzero_share <= 1):
        raise InputError(f"min_nonzero_share must be a share of the samples in (0, 1]; got {min_nonzero_share!r}.")
    if not (normalise_total or log1p or standardise or n_most_variable is not None or min_nonzero_share):
        raise InputError("Choose a transform: near-empty features removed, equal totals, log1p, the most variable "
                         "features, z-scores, or several.")
    result, X = data, data.X
    blanked = False
    if min_nonzero_share:
        rare = nonzero_share(X) < min_nonzero_share
        if rare.all():
            raise InputError(f"Every feature is non-zero in fewer than {min_nonzero_share:.3g} of the samples: "
                             "nothing would be left. Choose a smaller share.")
        if data.is_image:
            X, blanked = np.where(rare, 0.0, X), True
        else:
            result = data.subset_features(np.flatnonzero(~rare))
            X = result.X
    if normalise_total or log1p or n_most_variable is not None:
        row, column = divmod(int(np.argmin(X)), X.shape[1])
        if X[row, column] < 0:
            # the first step asked for that needs counts is the one named
            if normalise_total:
                step, instead = "Equal totals", "leave them off"
            elif log1p:
                step, instead = "log1p", "leave log1p off"
            else:
                step, instead = "The most variable features (by dispersion, variance over mean)", "keep every feature"
            raise InputError(f"{step} needs non-negative values (counts or intensities); {result.feature_names[column]!r} "
                             f"holds {X[row, column]:.4g} (sample {data.sample_names[row]!r}). These values may be "
                             f"already logged or centred: {instead}.")
    if normalise_total:
        totals = X.sum(axis=1)
        expressed = totals > 0  # a sample of zeros has no total to scale: it stays zero
        factors = np.ones_like(totals)
        if expressed.any():
            factors[expressed] = np.median(totals[expressed]) / totals[expressed]
        X = X * factors[:, None]
    counts = X  # the dispersion is a statistic of counts: taken before log1p, as scanpy undoes it
    if log1p:
        X = np.log1p(X)
    if n_most_variable is not None:
        if n_most_variable > X.shape[1]:
            raise InputError(f"n_most_variable is {n_most_variable:,} but {X.shape[1]:,} features are left after "
                             "the near-empty ones were dropped; keep fewer.")
        kept = np.sort(dispersion_ranking(counts)[:int(n_most_variable)])
        result, X = result.subset_features(kept), X[:, kept]
    if standardise:
        X = zscores(X)
    transform = dict(normalise_total=bool(normalise_total), log1p=bool(log1p),
                     n_most_variable=None if n_most_variable is None else int(n_most_variable),
                     standardise=bool(standardise),
                     min_nonzero_share=float(min_nonzero_share) if min_nonzero_share else None, blanked=blanked)
    meta = {key: value for key, value in result.meta.items() if key != "family"}
    meta.update(transform=transform, transformed_from=data)
    return replace(result, X=X, name=f"{data.name} ({', '.join(transform_steps(transform))})", meta=meta)
