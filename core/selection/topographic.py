"""The topographical model of all relevant feature subsets ([SW04] Sec. 4, Fig. 2): rounds of
Q-alpha, each inhibiting the features the earlier rounds chose, and every feature placed in the
frame of each round's two leading eigenvectors.

References
----------
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import LinearOperator, eigsh

from ._spectral import LAM_MAX
from ._qalpha.problem import DENSE_LIMIT, Problem
from .qalpha import SideVariances, q_alpha
from ..errors import InputError
from ..matrix import dense_matrix
from ..matrix.normalised import DenseFeatures
from ..validation import check_positive_int as _check_positive_int
from ..validation import check_real as _check_real

__all__ = ["TopographicMap", "topographic_map"]


@dataclass(frozen=True, eq=False)
class TopographicMap:
    """Outcome of :func:`topographic_map` ([SW04] Sec. 4, Fig. 2).

    Attributes
    ----------
    alphas : ndarray, shape (rounds, n_features)
        The weight vector of each round.
    directions : ndarray, shape (rounds, n_features, 2)
        Per round, each feature's unit direction in the frame of the two leading eigenvectors
        of that round's G (the MDS-like coordinization of [SW04] Sec. 4); 0 for left-out features.
    coordinates : ndarray, shape (rounds, n_features)
        The same direction as an angle in radians: the 1-D coordinate of each feature per round.
    spectra : ndarray, shape (rounds, n_eigenvalues)
        Leading eigenvalues of each round's G.
    results : tuple of QAlphaResult
        The full result of each round.
    """

    alphas: np.ndarray
    directions: np.ndarray
    coordinates: np.ndarray
    spectra: np.ndarray
    results: tuple

    @property
    def stopped(self) -> bool:
        """The progress callback stopped a round: the rounds after it were not run."""
        return any(result.stopped for result in self.results)



def topographic_map(X, k, rounds=2, lam=0.01, *, n_eigenvalues=10, **options) -> TopographicMap:
    """Topographical model of all relevant feature subsets ([SW04] Sec. 4, Fig. 2).

    Round 1 is plain Q-alpha. Round ``r > 1`` runs Q-alpha with side information whose diagonal
    ``D`` is the sum of ``alpha^2`` over the earlier rounds, so that features already chosen are
    inhibited and another solution set can surface. Each round also places every feature in the
    frame of the two leading eigenvectors of that round's ``G`` (as in multi-dimensional
    scaling) and keeps only the direction of that 2-D point: one coordinate per feature and round.

    Parameters
    ----------
    X : array_like, shape (n_samples, n_features)
    k : int
        Number of clusters.
    rounds : int
        Number of rounds (``>= 1``).
    lam : float
        ``> 0``: the ridge of ``D + lam I`` (small values inhibit earlier features strongly).
    n_eigenvalues : int
        How many leading eigenvalues of each round's G to keep.
    **options
        Passed to :func:`q_alpha` (``init``, ``max_iter``, ``tol``, ``random_state``,
        ``progress``, ...). A round the progress callback stops is the last: the map holds the
        rounds done (``TopographicMap.stopped``).
    """
    rounds = _check_positive_int(rounds, "rounds")
    lam = _check_real(lam, "lam (the topographical map needs lam > 0)", low=0.0, high=LAM_MAX, low_open=True)
    for reserved in ("side", "pairs", "labels"):
        if reserved in options:
            raise InputError(f"topographic_map does not take {reserved!r}: each round's side "
                             "information is made from the earlier rounds.")
    X = dense_matrix(X)
    n_features = X.shape[1]
    accumulated = np.zeros(n_features)
    results, directions, spectra = [], [], []
    features = None
    for r in range(rounds):
        result = q_alpha(X, k, lam=lam, side=SideVariances(accumulated) if r > 0 else None, **options)
        if features is None:
            features = DenseFeatures(X)
            Mt, kept = features.Mt, features.kept
        accumulated = accumulated + result.alpha**2
        results.append(result)
        # The coordinate frame: leading eigenvectors of this round's G (not of its SI form).
        Pt = result.Q.T @ Mt
        n_kept = kept.size
        n_eig = min(max(n_eigenvalues, 2), n_kept)
        if n_kept <= 2 * DENSE_LIMIT:
            G = (Mt.T @ Mt) * (Pt.T @ Pt)
            values, vectors = linalg.eigh(G, subset_by_index=[n_kept - n_eig, n_kept - 1])
        else:
            problem = Problem(features, "sum")
            op = LinearOperator((n_kept, n_kept), dtype=Mt.dtype,
                                matvec=lambda v: problem.g_matvec(Pt, np.ravel(v)))
            values, vectors = eigsh(op, k=min(n_eig, n_kept - 1), which="LA",
                                    v0=np.ones(n_kept) / np.sqrt(n_kept))
        order = np.argsort(-values)
        values, vectors = values[order], vectors[:, order]
        frame = vectors[:, :2] * np.where(vectors[:, 0].sum() < 0, -1.0, 1.0)
        norms = np.linalg.norm(frame, axis=1, keepdims=True)
        unit = np.divide(frame, norms, out=np.zeros_like(frame), where=norms > 0)
        full = np.zeros((n_features, 2))
        full[kept] = unit
        directions.append(full)
        spectrum = np.full(n_eigenvalues, np.nan)
        spectrum[: values.size] = values[:n_eigenvalues]
        spectra.append(spectrum)
        if result.stopped:  # the callback asked to stop: no further round
            break
    directions = np.asarray(directions)
    return TopographicMap(
        alphas=np.asarray([res.alpha for res in results]),
        directions=directions,
        coordinates=np.arctan2(directions[..., 1], directions[..., 0]),
        spectra=np.asarray(spectra),
        results=tuple(results),
    )
