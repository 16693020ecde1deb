"""Greedy search on a general symmetric pair (A, B) ([MWA07] Eq. 1-2): multi-class sparse LDA, and
sparse PCA (B = I) with the variance captured at every cardinality and the sparse eigenvector of
a chosen one (sparse eigenfaces, [MWA07] Sec. 6). Each candidate's generalised eigenvalue comes
from the secular equation of a rank-one change, not a fresh eigen-solve.

References
----------
.. [MWA07] B. Moghaddam, Y. Weiss and S. Avidan, "Fast pixel/part selection with sparse
   eigenvectors", ICCV 2007.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from ..errors import InputError
from ..matrix import dense_matrix
from ..progress import report_or_stop
from ..validation import as_labels as _as_labels
from dataclasses import dataclass

from ..validation import power_of_two_scale as _power_of_two_scale
from .slda import GreedyPasses, _check_cardinality, _ridge, _symmetric, _unit_free, dual_curve

__all__ = ["PairPath", "SPCAPath", "greedy_pair", "greedy_spca", "sparse_eigenvector", "scatter_matrices"]


@dataclass(frozen=True, eq=False)
class PairPath(GreedyPasses):
    """Greedy search on a general pair (A, B): ``lambda_max(A_s, B_s)`` per cardinality."""

    forward_order: np.ndarray
    forward_objective: np.ndarray
    backward_order: np.ndarray
    backward_objective: np.ndarray
    dual_objective: np.ndarray
    lower_bound: np.ndarray  # lambda_k(A, B) of Eq. (4)
    upper_bound: float  # lambda_max(A, B)

    def subset(self, k: int, method: str = "dual") -> np.ndarray:
        k = _check_cardinality(k, self.lower_bound.size)
        if method not in ("dual", "forward", "backward"):
            raise InputError(f"method must be 'dual', 'forward' or 'backward'; got {method!r}.")
        return np.sort(self._pass_order(k, method)[:k])


@dataclass(frozen=True, eq=False)
class SPCAPath(PairPath):
    """Greedy sparse PCA: the variance ``lambda_max(C_s)`` captured per cardinality ([MWA07] Fig. 3)."""

    total_variance: float = 0.0  # trace of the covariance
    covariance: np.ndarray | None = None


def _check_pair(A, B):
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape != B.shape:
        raise InputError(f"A and B must be square matrices of the same size; got {A.shape} and {B.shape}.")
    if not (np.isfinite(A).all() and np.isfinite(B).all()):
        raise InputError("A and B contain NaN or infinite values.")
    if not (_symmetric(A) and _symmetric(B)):
        raise InputError("A and B must be symmetric.")
    try:
        linalg.cholesky(B)
    except linalg.LinAlgError:
        raise InputError("B must be positive definite (regularise it: B + eps I).") from None
    return (A + A.T) / 2, (B + B.T) / 2


def scatter_matrices(X, y, reg=None):
    """Between-class (``A``) and within-class (``B``) scatter of any number of classes.

    ``reg`` as in :func:`two_class_scatter` (ridge on ``B``; automatic when ``B`` is singular).
    Returns ``A, B, reg``.
    """
    X = _unit_free(dense_matrix(X))
    y = _as_labels(y, X.shape[0], "y")
    classes = np.unique(y)
    if classes.size < 2:
        raise InputError("Sparse LDA needs at least two classes in y.")
    mean = X.mean(axis=0)
    A = np.zeros((X.shape[1], X.shape[1]))
    B = np.zeros_like(A)
    for c in classes:
        group = X[y == c]
        if group.shape[0] < 2:
            raise InputError(f"Class {c!r} has {group.shape[0]} sample(s); each class needs at least 2.")
        shift = group.mean(axis=0) - mean
        A += group.shape[0] * np.outer(shift, shift)
        centred = group - group.mean(axis=0)
        B += centred.T @ centred
    reg = _ridge(B, reg)
    B[np.diag_indices_from(B)] += reg
    return A, B, float(reg)


def _lambda_max(A, B, s):
    s = np.asarray(s, dtype=np.intp)
    if s.size == 1:
        return float(A[s[0], s[0]] / B[s[0], s[0]])
    return float(linalg.eigh(A[np.ix_(s, s)], B[np.ix_(s, s)], eigvals_only=True,
                             subset_by_index=[s.size - 1, s.size - 1])[0])


#: Candidate subproblems solved in one stacked LAPACK call are limited to about this many bytes.
_BATCH_BYTES = 64 << 20


def _lambda_max_batch(A, B, subsets):
    """``lambda_max(A_s, B_s)`` for every row ``s`` of ``subsets`` (all of one size).

    The candidates of one greedy step differ by one feature, so they stack into ``(c, m, m)``
    arrays that NumPy's batched LAPACK routines solve without a Python loop per candidate:
    ``L = chol(B_s)`` and the largest eigenvalue of ``L^-1 A_s L^-T``. (With ``B = I`` the
    secular equations below are cheaper still.)
    """
    subsets = np.asarray(subsets, dtype=np.intp)
    count, m = subsets.shape
    chunk = max(1, _BATCH_BYTES // (8 * m * m * 3))
    values = np.empty(count)
    for start in range(0, count, chunk):
        part = subsets[start:start + chunk]
        rows, cols = part[:, :, None], part[:, None, :]
        inverse_factor = np.linalg.inv(np.linalg.cholesky(B[rows, cols]))
        stacked = inverse_factor @ A[rows, cols] @ np.swapaxes(inverse_factor, 1, 2)
        values[start:start + chunk] = np.linalg.eigvalsh(stacked)[:, -1]
    return values


#: Bisection steps of the secular equations: the bracket shrinks by 2^-80, far below rounding.
_SECULAR_STEPS = 80


def _spca_add_scores(C, chosen, remaining):
    """``lambda_max(C_{s+j})`` for every candidate ``j`` of a forward step of sparse PCA.

    With ``C_s = U diag(mu) U^T`` (one eigendecomposition per step) and ``z = U^T C[s, j]``, the
    bordered matrix ``[[C_s, c], [c^T, d]]`` has its largest eigenvalue at the root above
    ``max(mu_max, d)`` of the decreasing secular function ``d - lam + sum z_k^2 / (lam - mu_k)``,
    and below ``max(mu_max, d) + ||z||`` (Weyl). Bisection solves every candidate at once.
    """
    diagonal = np.diag(C)[remaining]
    if not chosen:
        return diagonal.copy()
    # divide and conquer: the full decomposition in half the time of the default driver at 512
    mu, U = linalg.eigh(C[np.ix_(chosen, chosen)], driver="evd")
    z2 = (U.T @ C[np.ix_(chosen, remaining)]) ** 2  # (m, candidates)
    low = np.maximum(mu[-1], diagonal)
    high = low + np.sqrt(z2.sum(axis=0)) + 1e-300
    for step in range(_SECULAR_STEPS):
        middle = 0.5 * (low + high)
        # 0/0 only where the bracket has collapsed onto mu_max with z_k = 0 (a candidate that
        # does not couple to it): the root is mu_max itself, and NaN > 0 keeps it there
        with np.errstate(divide="ignore", invalid="ignore"):
            value = diagonal - middle + np.sum(z2 / (middle[None, :] - mu[:, None]), axis=0)
        above = value > 0  # the root lies above the middle
        low = np.where(above, middle, low)
        high = np.where(above, high, middle)
        if step % 8 == 7 and _collapsed(low, high):
            break
    return 0.5 * (low + high)


def _collapsed(low, high):
    """Every bracket within a few units in the last place: further bisection changes nothing."""
    return bool(np.all(high - low <= 4 * np.finfo(float).eps * np.abs(high)))


def _spca_remove_scores(C, current):
    """``lambda_max`` of ``C_s`` without feature ``i``, for every ``i`` of a backward step.

    With ``C_s = U diag(mu) U^T``, the principal submatrix without ``i`` has eigenvalue ``lam``
    where ``[(C_s - lam I)^-1]_ii = sum_k U_ik^2 / (mu_k - lam) = 0``; by interlacing its largest
    one lies in ``[mu_(m-1), mu_m]``, where that function increases. Bisection, all ``i`` at once;
    a vanishing ``U_ik`` puts the root at the bracket's end, as it should.
    """
    if len(current) == 1:
        return np.zeros(1)
    mu, U = linalg.eigh(C[np.ix_(current, current)], driver="evd")
    u2 = U**2  # (candidates, m)
    low = np.full(len(current), mu[-2])
    high = np.full(len(current), mu[-1])
    for step in range(_SECULAR_STEPS):
        middle = 0.5 * (low + high)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.sum(u2 / (mu[None, :] - middle[:, None]), axis=1)
        below = ~(value >= 0)  # negative (or undefined at a collapsed bracket): root above
        low = np.where(below & (high > low), middle, low)
        high = np.where(below, high, middle)
        if step % 8 == 7 and _collapsed(low, high):
            break
    return 0.5 * (low + high)


def greedy_pair(A, B, direction="both", progress=None) -> PairPath:
    """Greedy sparse generalised eigenvalue search on a symmetric pair (A, B) ([MWA07] Eq. 1).

    Forward selection adds, and backward elimination removes, the feature that maximises
    ``lambda_max(A_s, B_s)`` of the candidate subproblem, each candidate solved exactly (a
    generalised symmetric eigenproblem; the candidates of a step are solved together in stacked
    LAPACK calls, ``O(n^2 k^3)`` per pass). This covers multi-class LDA (A the between-class
    scatter of full rank) and, with ``B = I``, sparse PCA, where one eigendecomposition per step
    and a secular equation per candidate give every candidate's value (``O(n^4)`` per pass).
    """
    A, B = _check_pair(A, B)
    if direction not in ("both", "forward", "backward"):
        raise InputError(f"direction must be 'both', 'forward' or 'backward'; got {direction!r}.")
    n = A.shape[0]
    identity_B = bool(np.array_equal(B, np.eye(n)))
    # the forward pass adds n features, the backward pass removes n - 1 (one is left)
    total = (n if direction in ("both", "forward") else 0) + (n - 1 if direction in ("both", "backward") else 0)
    done = 0
    forward_order = backward_order = np.zeros(0, dtype=np.intp)
    forward_objective = backward_objective = np.zeros(0)
    if direction in ("both", "forward"):
        chosen, values, remaining = [], [], list(range(n))
        for _ in range(n):
            if identity_B:
                scores = _spca_add_scores(A, chosen, remaining)
            else:
                candidates = np.column_stack([np.tile(np.asarray(chosen, dtype=np.intp), (len(remaining), 1)),
                                              remaining])
                scores = _lambda_max_batch(A, B, candidates)
            best = int(np.argmax(scores))
            chosen.append(remaining.pop(best))
            values.append(scores[best])
            done += 1
            report_or_stop(progress, done, total)
        forward_order, forward_objective = np.array(chosen), np.array(values)
    if direction in ("both", "backward"):
        current = list(range(n))
        values = [_lambda_max(A, B, current)]
        removed = []
        while len(current) > 1:
            if identity_B:
                scores = _spca_remove_scores(A, current)
            else:
                m = len(current)
                keep = ~np.eye(m, dtype=bool)  # row i: every position but i
                candidates = np.broadcast_to(np.asarray(current, dtype=np.intp), (m, m))[keep].reshape(m, m - 1)
                scores = _lambda_max_batch(A, B, candidates)
            best = int(np.argmax(scores))
            removed.append(current.pop(best))
            values.append(scores[best])
            done += 1
            report_or_stop(progress, done, total)
        backward_order = np.array(current + removed[::-1])
        backward_objective = np.array(values[::-1])
    spectrum = linalg.eigh(A, B, eigvals_only=True)  # increasing, as in [MWA07]
    return PairPath(forward_order=forward_order, forward_objective=forward_objective,
                    backward_order=backward_order, backward_objective=backward_objective,
                    dual_objective=dual_curve(forward_objective, backward_objective),
                    lower_bound=spectrum.copy(), upper_bound=float(spectrum[-1]))


def greedy_spca(X, direction="both", progress=None) -> SPCAPath:
    """Greedy sparse PCA ([MWA07] Sec. 6, Fig. 3): the variance captured by the leading sparse
    eigenvector of every cardinality, by forward and backward search on ``(C, I)``.

    Parameters
    ----------
    X : array_like, shape (n_samples, n_features)
        Data; ``C`` is its covariance (features centred, divided by ``n_samples - 1``).
    """
    X = dense_matrix(X)
    if X.shape[0] < 2:
        raise InputError("Sparse PCA needs at least 2 samples.")
    if _power_of_two_scale(X) != 1.0:
        raise InputError(f"The data reach {np.abs(X).max():.3g}: their variances, which sparse PCA reports, "
                         "lie outside float64's range. Divide the data by a common factor first.")
    C = np.cov(X, rowvar=False).reshape(X.shape[1], X.shape[1])
    path = greedy_pair(C, np.eye(C.shape[0]), direction=direction, progress=progress)
    return SPCAPath(**{f: getattr(path, f) for f in PairPath.__dataclass_fields__},
                    total_variance=float(np.trace(C)), covariance=C)


def sparse_eigenvector(path: SPCAPath, k: int, method: str = "dual") -> np.ndarray:
    """The leading eigenvector of the covariance restricted to the cardinality-``k`` subset
    (unit norm, zero elsewhere): a sparse eigenface when the features are pixels."""
    s = path.subset(k, method)
    C = path.covariance
    values, vectors = linalg.eigh(C[np.ix_(s, s)])
    x = np.zeros(C.shape[0])
    leading = vectors[:, -1]
    x[s] = leading if leading.sum() >= 0 else -leading
    return x
