"""The samples seen through a selection: each sample's place on the first two principal components
of the selected features, standardised as k-means sees them (:func:`core.validation.zscores`).

This is the map the Q-alpha page redraws in the browser as K and λ move (pages/ui/sample_map.js
computes the same coordinates there, matrix-free, from the standardised data sent once); this
module is the server's version, for data too large to send (a stated sample of the rows), and the
reference the browser's coordinates are tested against. A principal component analysis of the
columns ``Z[:, top K]`` (Pearson 1901; as scanpy's ``pl.pca`` and scikit-learn's ``PCA`` draw it):
the coordinates are ``U_i * s_i``, the left singular vectors scaled by the singular values, and
side samples are placed by the same loadings after standardising them with the main samples'
statistics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..validation import as_dense_array, check_random_state, zscores

__all__ = ["SampleMap", "sample_map", "BROWSER_VALUES", "SERVER_ROWS"]

#: The most standardised values (samples x features, float32) sent to the browser for it to
#: redraw the map itself: 16 MB, 21 MB as base64. Larger data get the server's map on a sample of
#: rows, redrawn when the hand stops.
BROWSER_VALUES = 4_000_000
#: The most main samples the server's map draws (a seeded sample of the rows beyond it). Its cost
#: grows as rows² x K (the Gram matrix of the smaller side): 1.3 s at 2,000 rows x K = 8,000 on a
#: 2-core Xeon, once per K report; 5,000 rows would take six times as long.
SERVER_ROWS = 2_000


@dataclass(frozen=True)
class SampleMap:
    """Samples on two principal axes of the selected features.

    Attributes
    ----------
    coordinates : ndarray of shape (n_rows, 2)
        The main samples drawn (``rows``) on the two axes; each axis's sign makes its entry of
        largest magnitude positive. Fewer than two components (one column, two samples) leave the
        second axis at zero.
    rows : ndarray of int
        Which main samples are drawn, in order: all of them, or a seeded sample.
    explained : ndarray of shape (2,)
        Each axis's share of the columns' total variance.
    side_coordinates : ndarray of shape (n_side, 2) or None
        The side samples placed by the main samples' loadings.
    n_columns : int
        The selected features the map is drawn from.
    n_samples : int
        The main samples there are (``rows`` may be a sample of them).
    """

    coordinates: np.ndarray
    rows: np.ndarray
    explained: np.ndarray
    side_coordinates: np.ndarray | None
    n_columns: int
    n_samples: int

    @property
    def sampled(self) -> bool:
        """Whether only a sample of the main rows is drawn."""
        return self.rows.size < self.n_samples


def _leading_pair(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two leading right singular vectors of ``Z`` (columns of the returned ``(K, 2)``
    array, zero where ``Z`` has fewer than two non-zero singular values) and their squared
    singular values, from the eigendecomposition of the smaller of the two Gram matrices (LAPACK's
    ``syevr`` for the last two eigenpairs only)."""
    from scipy.linalg import eigh

    m, K = Z.shape
    loadings, power = np.zeros((K, 2)), np.zeros(2)
    wanted = min(2, m, K)
    if m <= K:
        gram = Z @ Z.T
        values, vectors = eigh(gram, subset_by_index=[m - wanted, m - 1])
        values, vectors = values[::-1], vectors[:, ::-1]
        for i, value in enumerate(values):
            if value > 1e-12 * max(values[0], 1e-300):
                direction = Z.T @ vectors[:, i]
                loadings[:, i] = direction / np.linalg.norm(direction)
                power[i] = value
    else:
        values, vectors = eigh(Z.T @ Z, subset_by_index=[K - wanted, K - 1])
        for i, value in enumerate(values[::-1]):
            if value > 1e-12 * max(values[-1], 1e-300):
                loadings[:, i] = vectors[:, -1 - i]
                power[i] = value
    return loadings, power


def sample_map(X, columns, side=None, *, max_rows: int | None = None, random_state=0) -> SampleMap:
    """The samples of ``X`` on the first two principal components of its columns ``columns``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The main samples (the data the selection was made on).
    columns : array-like of int
        The selected features (the top K of a ranking), at least one.
    side : array-like of shape (n_side, n_features), optional
        Side samples (Shashua & Wolf 2004's side data), placed by the main samples' loadings and
        standardised with the main samples' means and standard deviations.
    max_rows : int, optional
        Draw at most this many main samples: a sample of the rows (seeded by ``random_state``,
        kept in their order) when there are more; the standardisation and the axes are then the
        sample's.
    random_state : int or numpy Generator
        Seeds the sample of rows.

    Returns
    -------
    SampleMap
    """
    X = as_dense_array(X)
    columns = np.asarray(columns)
    if columns.ndim != 1 or columns.size == 0 or not np.issubdtype(columns.dtype, np.integer):
        raise InputError("columns must name at least one feature, by index.")
    if columns.min() < -X.shape[1] or columns.max() >= X.shape[1]:
        raise InputError(f"columns must be feature indices below {X.shape[1]:,}.")
    if X.shape[0] < 2:
        raise InputError("A map of the samples needs at least two samples.")
    rows = np.arange(X.shape[0])
    if max_rows is not None and X.shape[0] > int(max_rows):
        if int(max_rows) < 2:
            raise InputError("max_rows must be at least 2.")
        rows = np.sort(check_random_state(random_state).choice(X.shape[0], int(max_rows), replace=False))
    chosen = X[np.ix_(rows, columns)]
    Z = zscores(chosen)
    loadings, power = _leading_pair(Z)
    coordinates = Z @ loadings
    # each axis's sign: its entry of largest magnitude positive (the browser matches it up to sign)
    flip = np.where(coordinates[np.abs(coordinates).argmax(axis=0), [0, 1]] < 0, -1.0, 1.0)
    coordinates *= flip
    total = float(np.sum(Z * Z))
    side_coordinates = None
    if side is not None:
        side = as_dense_array(side, "side")
        if side.shape[1] != X.shape[1]:
            raise InputError(f"The side data have {side.shape[1]:,} features, the main data {X.shape[1]:,}.")
        side_coordinates = (zscores(side[:, columns], reference=chosen) @ loadings) * flip
    return SampleMap(coordinates=coordinates, rows=rows, explained=power / total if total > 0 else power * 0,
                     side_coordinates=side_coordinates, n_columns=int(columns.size), n_samples=X.shape[0])
