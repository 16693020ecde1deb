"""Sparse LDA and sparse PCA by greedy and exact search (Moghaddam, Weiss & Avidan).

Implemented
-----------
* :func:`greedy_slda` -- two-class sparse LDA: forward selection, backward elimination and the
  dual pass for every cardinality at once, Fisher thresholding with variational
  renormalisation, and the lower bound of Eq. (5) ([MWA07] Secs. 3-5).
* :func:`greedy_pair` -- the same greedy search on any symmetric pair (A, B) (multi-class LDA),
  with the generalised eigenvalue of each candidate subproblem ([MWA07] Eq. 1-2).
* :func:`greedy_spca` -- sparse PCA (B = I): variance captured per cardinality, and
  :func:`sparse_eigenvector` for a chosen cardinality (sparse eigenfaces, [MWA07] Sec. 6).
* :func:`exact_slda` -- branch-and-bound with the inclusion-principle bound (Theorem 1).
* With fewer samples than features, :func:`greedy_slda` runs both passes on the samples
  themselves (``B = U U^T + rho I``, Woodbury: :func:`_low_rank_pass`), ``O(n^2 m)`` instead of
  ``O(n^3)``, with the same choices.

The two-class objective of a subset ``s`` is ``f(s) = a_s^T B_ss^{-1} a_s`` (the only finite
eigenvalue of ``(a a^T, B)`` restricted to ``s``). Both greedy passes are one kernel: a pivoted,
left-looking Cholesky-type elimination on an SPD matrix ``M`` with a vector ``v``:

* Forward (``M = B``, ``v = a``): after choosing ``s`` the Schur complement
  ``S = B - B[:, s] B_ss^-1 B[s, :]`` and ``c = a - B[:, s] B_ss^-1 a_s`` give the gain
  ``f(s + j) - f(s) = c_j^2 / S_jj`` of every candidate at once ([MWA07] Appendix, first formula).
* Backward (``M = P = B^-1``, ``v = w = P a``): removing ``j`` loses ``w_j^2 / P_jj``, and the
  inverse of the remaining block is the Schur complement ``P - P[:, j] P[j, :] / P_jj``
  ([MWA07] Appendix, second formula).

A step needs only the diagonal of the current Schur complement, the current ``v`` and the
Schur column at its pivot, so the updates of the matrix can wait: :func:`_blocked_eliminate`
applies those of a block of steps at once, to the lower triangle only, as one matrix product
(the bookkeeping of LAPACK's blocked pivoted Cholesky). A full pass costs ``n^3 / 3`` flops and
reads the ``n x n`` matrix once per block, not once per step.

References
----------
.. [MWA07] B. Moghaddam, Y. Weiss and S. Avidan, "Fast pixel/part selection with sparse
   eigenvectors", ICCV 2007.
.. [ICML06] B. Moghaddam, Y. Weiss and S. Avidan, "Generalized spectral bounds for sparse LDA",
   ICML 2006 (exact branch-and-bound).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from ..errors import InputError
from ..matrix import dense_matrix
from ..limits import memory_limit_bytes
from ..progress import ProgressCallback, report_or_stop
from ..validation import as_labels as _as_labels
from ..validation import power_of_two_scale as _power_of_two_scale
from ..validation import require_finite as _require_finite


def _unit_free(X):
    """``X`` divided by a power of two when its squares would overflow (or underflow): the
    objectives ``a_s^T B_ss^-1 a_s``, the orders and the bounds do not depend on the unit, so
    they are exactly those of ``X``; ``a`` and ``B`` are then those of the rescaled data."""
    scale = _power_of_two_scale(X)
    return X if scale == 1.0 else X / scale

__all__ = ["SLDAPath", "PairPath", "SPCAPath", "ExactResult", "greedy_slda", "greedy_pair",
           "greedy_spca", "sparse_eigenvector", "exact_slda", "two_class_scatter", "scatter_matrices",
           "subset_objective", "slda_memory_bytes", "slda_solver", "EXACT_LIMIT", "ELIMINATION_BLOCK",
           "LOW_RANK_FRACTION"]

#: Largest number of features :func:`exact_slda` accepts by default (see its notes on cost).
EXACT_LIMIT = 32


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True, eq=False)
class SLDAPath:
    """Every cardinality's greedy, thresholded and bounding solution of two-class sparse LDA.

    Orders list features so that the subset of cardinality ``k`` is ``order[:k]``: the forward
    order is the order of selection, the backward order the reverse order of elimination.
    Objective arrays hold the value for ``k = 1 .. n`` at index ``k - 1``.

    Attributes
    ----------
    forward_order, forward_objective, backward_order, backward_objective : ndarray
    fisher_order, fisher_objective : ndarray
        Simple thresholding of the Fisher vector ``w = B^{-1} a`` (largest ``|w|`` first) with
        the variationally renormalised objective ``a_s^T B_ss^{-1} a_s``.
    dual_objective : ndarray
        The better of the two greedy passes for each ``k``.
    bound : ndarray
        The lower bound of Eq. (5), ``S_k / lambda_max(B)`` with ``S_k`` the sum of the ``k``
        largest ``a_j^2``. It bounds the *optimal* value of cardinality ``k`` (the subset of the
        ``k`` largest ``a_j^2`` already reaches it), not every subset: [MWA07] calls it a bound
        on "all possible solutions", but its chain ``Tr(a_k a_k^T) >= S_k`` holds only for that
        subset (measured: 1,313 of 2,000 (problem, k) cases had a subset below it).
    worst_case_bound : ndarray
        A bound that does hold for every subset of cardinality ``k``: the sum of the ``k``
        *smallest* ``a_j^2`` over ``lambda_max(B)``.
    lambda_max : float
        ``lambda_max(A, B) = a^T B^{-1} a`` of the full set.
    reg : float
        Ridge added to the diagonal of the within-class scatter (0 if none was needed).
    classes : tuple
        The two classes (``a`` = mean of the second minus mean of the first).
    a, B : ndarray
        The problem that was solved. With ``scatter_factor``, ``B`` (``n x n``) is formed on
        first use.
    scatter_factor : ndarray or None
        ``U`` (``n_features x n_samples``) with ``B = U U^T + reg I``, when the low-rank solver
        computed the path (``None`` otherwise).
    """

    forward_order: np.ndarray
    forward_objective: np.ndarray
    backward_order: np.ndarray
    backward_objective: np.ndarray
    fisher_order: np.ndarray
    fisher_objective: np.ndarray
    dual_objective: np.ndarray
    bound: np.ndarray
    worst_case_bound: np.ndarray
    lambda_max: float
    reg: float
    classes: tuple
    a: np.ndarray
    scatter_factor: np.ndarray | None = field(default=None, repr=False)
    _dense_scatter: np.ndarray | None = field(default=None, repr=False)

    @cached_property
    def B(self) -> np.ndarray:
        """The regularised within-class scatter, ``n x n``."""
        if self._dense_scatter is not None:
            return self._dense_scatter
        B = self.scatter_factor @ self.scatter_factor.T
        B[np.diag_indices_from(B)] += self.reg
        return B

    @property
    def n_features(self) -> int:
        return self.forward_order.size

    def subset(self, k: int, method: str = "dual") -> np.ndarray:
        """The feature indices of cardinality ``k`` found by ``method`` (sorted).

        ``method``: ``"dual"`` (the better greedy pass), ``"forward"``, ``"backward"`` or ``"fisher"``.
        """
        k = _check_cardinality(k, self.n_features)
        if method == "dual":
            method = "forward" if self.forward_objective[k - 1] >= self.backward_objective[k - 1] else "backward"
        orders = {"forward": self.forward_order, "backward": self.backward_order,
                  "fisher": self.fisher_order}
        if method not in orders:
            raise InputError(f"method must be 'dual', 'forward', 'backward' or 'fisher'; got {method!r}.")
        return np.sort(orders[method][:k])

    @property
    def best_single_feature(self) -> int:
        """The optimal single feature (pixel): the largest ``a_j^2 / B_jj``."""
        return int(self.forward_order[0])

    def discriminant(self, k: int, method: str = "dual") -> np.ndarray:
        """The sparse discriminant of cardinality ``k``: ``B_ss^{-1} a_s`` on its subset, 0 elsewhere."""
        s = self.subset(k, method)
        x = np.zeros(self.n_features)
        if self._dense_scatter is not None:
            x[s] = linalg.solve(self.B[np.ix_(s, s)], self.a[s], assume_a="pos")
            return x
        x[s] = _woodbury_solve(self.scatter_factor[s], self.reg, self.a[s])
        return x


@dataclass(frozen=True, eq=False)
class PairPath:
    """Greedy search on a general pair (A, B): ``lambda_max(A_s, B_s)`` per cardinality."""

    forward_order: np.ndarray
    forward_objective: np.ndarray
    backward_order: np.ndarray
    backward_objective: np.ndarray
    dual_objective: np.ndarray
    lower_bound: np.ndarray  # lambda_k(A, B) of Eq. (4)
    upper_bound: float  # lambda_max(A, B)

    def subset(self, k: int, method: str = "dual") -> np.ndarray:
        k = _check_cardinality(k, self.forward_order.size)
        if method == "dual":
            method = "forward" if self.forward_objective[k - 1] >= self.backward_objective[k - 1] else "backward"
        if method not in ("forward", "backward"):
            raise InputError(f"method must be 'dual', 'forward' or 'backward'; got {method!r}.")
        order = self.forward_order if method == "forward" else self.backward_order
        return np.sort(order[:k])


@dataclass(frozen=True, eq=False)
class SPCAPath(PairPath):
    """Greedy sparse PCA: the variance ``lambda_max(C_s)`` captured per cardinality ([MWA07] Fig. 3)."""

    total_variance: float = 0.0  # trace of the covariance
    covariance: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class ExactResult:
    """Global optimum of two-class sparse LDA for each cardinality (branch-and-bound)."""

    subsets: tuple  # subsets[k - 1]: sorted indices of the optimal k-subset
    objective: np.ndarray
    nodes: int  # subproblems evaluated


# ---------------------------------------------------------------------------- helpers
def _check_cardinality(k, n) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise InputError(f"The cardinality k must be an integer from 1 to {n}; got {k!r}.")
    return int(k)


def subset_objective(a, B, subset) -> float:
    """``a_s^T B_ss^{-1} a_s`` computed directly (a Cholesky solve of the subproblem)."""
    s = np.asarray(subset, dtype=np.intp)
    factor = linalg.cho_factor(B[np.ix_(s, s)])
    return float(a[s] @ linalg.cho_solve(factor, a[s]))


#: Samples per block when forming the within-class scatter
_SCATTER_ROWS = 2048

#: ``B`` counts as well conditioned when LAPACK's estimate of its reciprocal condition number
#: (1-norm, from the Cholesky factor) exceeds this
RCOND_MIN = 1e-10


def _column_abs_sums(B):
    """``max_j sum_i |B_ij|`` (the 1-norm) without a temporary of B's size."""
    sums = np.zeros(B.shape[1])
    for r0 in range(0, B.shape[0], _UPDATE_STRIP):
        sums += np.abs(B[r0:r0 + _UPDATE_STRIP]).sum(axis=0)
    return float(sums.max())


def _cholesky_into(work, B):
    """The lower Cholesky factor of the symmetric ``B`` in the Fortran-ordered ``work`` (no other
    copy), and LAPACK's info (0 when ``B`` is positive definite)."""
    np.copyto(work.T, B)  # B is symmetric: its C-ordered copy is its Fortran-ordered copy
    factor, info = lapack.dpotrf(work, lower=1, clean=0, overwrite_a=1)
    return factor, info


def _ridge(B, reg, work=None):
    """The ridge to add to the diagonal of ``B``: ``reg`` if given (checked), otherwise 0 when
    ``B`` is well conditioned and ``1e-3`` times its mean diagonal when it is (nearly) singular.

    Well conditioned: the Cholesky factorisation succeeds and LAPACK's condition estimate from
    the factor (``?pocon``, 1-norm) is above :data:`RCOND_MIN` -- one Cholesky and ``O(n^2)``,
    where a full spectrum costs several times more. (The 1-norm condition number lies between the
    2-norm one and ``n`` times it, so this is the stricter of the two tests.)
    """
    if reg is not None:
        if not (np.isfinite(reg) and reg >= 0):
            raise InputError(f"reg must be a non-negative number; got {reg!r}.")
        return float(reg)
    # on return with 0, ``work`` holds the lower Cholesky factor of B (callers may reuse it)
    work = np.empty(B.shape, order="F") if work is None else work
    factor, info = _cholesky_into(work, B)
    well_conditioned = False
    if info == 0:
        rcond, info = lapack.dpocon(factor, _column_abs_sums(B), uplo="L")
        well_conditioned = info == 0 and rcond > RCOND_MIN
    return 0.0 if well_conditioned else 1e-3 * max(float(np.diag(B).mean()), np.finfo(float).tiny)


def two_class_scatter(X, y, classes=None, reg=None):
    """``a`` (difference of class means) and the within-class scatter ``B`` of two classes.

    Parameters
    ----------
    X : array_like, shape (n_samples, n_features)
    y : array_like, shape (n_samples,)
    classes : pair of labels, optional
        Which two classes; required when ``y`` has more than two.
    reg : float or None
        Ridge added to the diagonal of ``B``. ``None``: none when ``B`` is well conditioned,
        otherwise ``1e-3`` times the mean of its diagonal (``B`` is singular whenever there are
        fewer samples than features, e.g. images).

    Returns
    -------
    a, B, reg, classes
    """
    a, B, classes = _class_pair_problem(X, y, classes)
    reg = _ridge(B, reg)
    if reg > 0:
        B[np.diag_indices_from(B)] += reg
    return a, B, float(reg), classes


def _class_pair_members(X, y, classes):
    """The data (unit-free), the rows of each class of the pair, their means and the pair."""
    X = _unit_free(dense_matrix(X))
    y = _as_labels(y, X.shape[0], "y")
    present = np.unique(y)
    if classes is None:
        if present.size != 2:
            raise InputError(f"Sparse LDA here separates two classes; y has {present.size} "
                             f"({', '.join(map(str, present[:10]))}). Choose two with classes=(c1, c2).")
        classes = tuple(present)
    else:
        classes = tuple(classes)
        if len(classes) != 2 or classes[0] == classes[1]:
            raise InputError(f"classes must name two different labels; got {classes!r}.")
        missing = [c for c in classes if c not in set(present.tolist())]
        if missing:
            raise InputError(f"Class(es) {missing} do not occur in y ({', '.join(map(str, present[:10]))}).")
    members = [np.flatnonzero(y == c) for c in classes]
    for c, rows in zip(classes, members):
        if rows.size < 2:
            raise InputError(f"Class {c!r} has {rows.size} sample(s); each class needs at least 2.")
    means = [sum(X[rows[i:i + _SCATTER_ROWS]].sum(axis=0) for i in range(0, rows.size, _SCATTER_ROWS)) / rows.size
             for rows in members]
    return X, members, means, classes


def _class_pair_problem(X, y, classes):
    """``a``, the within-class scatter ``B`` (no ridge) and the pair of classes."""
    X, members, means, classes = _class_pair_members(X, y, classes)
    a = means[1] - means[0]
    # the scatter of each class about its mean, a block of samples at a time: no centred copy of X
    # (forming it and stacking the classes took longer than the product at 12,288 x 4,096)
    B = np.zeros((X.shape[1], X.shape[1]))
    for rows, mean in zip(members, means):
        for i in range(0, rows.size, _SCATTER_ROWS):
            block = X[rows[i:i + _SCATTER_ROWS]] - mean
            B += block.T @ block
    return a, B, classes


def _class_pair_factor(X, y, classes):
    """``a``, the factor ``U`` (``n_features x n_samples``: each sample minus its class mean, as
    a column) with ``U U^T`` the within-class scatter, and the pair of classes."""
    X, members, means, classes = _class_pair_members(X, y, classes)
    U = np.concatenate([X[rows] - mean for rows, mean in zip(members, means)]).T.copy()
    return means[1] - means[0], U, classes


def _greedy_eliminate(M, v, pick_largest):
    """Pivoted left-looking elimination of the SPD matrix ``M`` with the vector ``v``, one rank-1
    step at a time: the reference that :func:`_blocked_eliminate` is tested and benchmarked against.

    At each step every remaining ``j`` scores ``v_j^2 / d_j`` (``d`` the diagonal of the current
    Schur complement); the largest (forward) or smallest (backward) is eliminated. Returns the
    pivot order and the scores at elimination.
    """
    n = M.shape[0]
    perm = np.arange(n)
    L = np.zeros((n, n))  # row r: the factor row of the feature now at position r
    d = np.diag(M).copy()
    v = v.copy()
    order = np.empty(n, dtype=np.intp)
    scores = np.empty(n)
    for m in range(n):
        rest = slice(m, n)
        gain = v[rest] ** 2 / d[rest]
        j = m + int(np.argmax(gain) if pick_largest else np.argmin(gain))
        # move the pivot to position m (rows of L, entries of d, v, perm)
        if j != m:
            perm[[m, j]] = perm[[j, m]]
            d[[m, j]] = d[[j, m]]
            v[[m, j]] = v[[j, m]]
            L[[m, j], :m] = L[[j, m], :m]
        pivot = d[m]
        order[m] = perm[m]
        scores[m] = v[m] ** 2 / pivot
        if m + 1 < n:
            below = slice(m + 1, n)
            # column of the current Schur complement at the pivot, for the remaining rows
            column = M[perm[below], perm[m]] - L[below, :m] @ L[m, :m]
            root = np.sqrt(pivot)
            L[below, m] = column / root
            L[m, m] = root
            v[below] -= column * (v[m] / pivot)
            d[below] -= column**2 / pivot
            # guard against round-off making a diagonal of an SPD Schur complement non-positive
            np.maximum(d[below], np.finfo(float).tiny, out=d[below])
    return order, scores


# ---------------------------------------------------------------------------- BLAS on sub-matrices
# NumPy's matmul has no in-place ``C -= A B^T`` and SciPy's f2py wrappers copy a strided
# sub-matrix, so the delayed update calls BLAS's ``dsyrk`` itself on the trailing triangle (with
# its leading dimension), as LAPACK would: SciPy exports its BLAS for compiled code as function
# pointers (``scipy.linalg.cython_blas``; LP64 integers), and ctypes calls them. At n = 4,096 the
# update took 0.25 s this way against 0.40 s as NumPy products into a temporary and a subtraction
# (1.97 against 2.70 s at 8,192). Without those pointers the NumPy form is used.


def _blas_function(name, *argtypes):
    """SciPy's BLAS routine ``name`` as a ctypes function, or None where SciPy does not export it."""
    import ctypes

    try:
        from scipy.linalg import cython_blas

        capsule = cython_blas.__pyx_capi__[name]
    except (ImportError, AttributeError, KeyError):
        return None
    capsule_name = ctypes.pythonapi.PyCapsule_GetName
    capsule_name.restype, capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    pointer = ctypes.pythonapi.PyCapsule_GetPointer
    pointer.restype, pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    if "int *" not in capsule_name(capsule).decode():  # an ILP64 build would need other integers
        return None
    return ctypes.CFUNCTYPE(None, *argtypes)(pointer(capsule, capsule_name(capsule)))


def _dsyrk():
    import ctypes

    flag, integer, real = ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_double)
    address = ctypes.c_void_p
    return _blas_function("dsyrk", flag, flag, integer, integer, real, address, integer, real, address, integer)


def _dgemv():
    import ctypes

    address = ctypes.c_void_p  # every argument: addresses of values the caller keeps
    return _blas_function("dgemv", *([address] * 11))


_DSYRK, _DGEMV = _dsyrk(), _dgemv()


class _PendingColumn:
    """``W[k+1:, k] -= panel[k+1:, :t] @ panel[k, :t]`` in place by SciPy's ``dgemv``: the same
    BLAS (and thread pool) as the block updates -- alternating NumPy's OpenBLAS with SciPy's made
    the two pools' threads spin against each other (a pass at n = 8,192 took 5.2 s with NumPy's
    products per step against 3.6 s) -- and no temporary. Its integer and real arguments live in
    ctypes values set per call."""

    def __init__(self, W, panel):
        import ctypes

        self.W, self.panel, self.n = W, panel, W.shape[0]
        self.rows, self.columns = ctypes.c_int(), ctypes.c_int()
        self.ld, self.one = ctypes.c_int(self.n), ctypes.c_int(1)
        self.minus, self.plus = ctypes.c_double(-1.0), ctypes.c_double(1.0)
        self.trans = ctypes.c_char(b"N")
        address = ctypes.addressof
        self.fixed = (address(self.trans), address(self.rows), address(self.columns), address(self.minus))
        self.ld_address, self.one_address, self.plus_address = address(self.ld), address(self.one), address(self.plus)

    def __call__(self, k, t):
        n = self.n
        self.rows.value, self.columns.value = n - k - 1, t
        panel, W = self.panel.ctypes.data, self.W.ctypes.data
        _DGEMV(*self.fixed, panel + 8 * (k + 1), self.ld_address, panel + 8 * k, self.ld_address,
               self.plus_address, W + 8 * (k + 1 + k * n), self.one_address)


def _numpy_pending_column(W, panel):
    """:class:`_PendingColumn`'s product by NumPy (a temporary, NumPy's BLAS): the fallback."""
    def subtract(k, t):
        W[k + 1:, k] -= panel[k + 1:, :t] @ panel[k, :t]
    return subtract


def _lower_update(W, panel, start, size, use_blas=True):
    """``W[start:, start:] -= P P^T`` on the lower triangle, ``P = panel[start:, :size]``, in place
    (``W`` and ``panel`` Fortran-ordered float64 with as many rows)."""
    n = W.shape[0]
    if n == start:
        return
    if _DSYRK is not None and use_blas:
        import ctypes

        if not (W.flags.f_contiguous and panel.flags.f_contiguous and W.dtype == panel.dtype == np.float64
                and panel.shape[0] == n and size <= panel.shape[1]):
            raise ValueError("_lower_update needs Fortran-ordered float64 matrices of one height")
        rows, ld = ctypes.c_int(n - start), ctypes.c_int(n)
        _DSYRK(b"L", b"N", ctypes.byref(rows), ctypes.byref(ctypes.c_int(size)), ctypes.byref(ctypes.c_double(-1.0)),
               ctypes.c_void_p(panel.ctypes.data + 8 * start), ctypes.byref(ld), ctypes.byref(ctypes.c_double(1.0)),
               ctypes.c_void_p(W.ctypes.data + 8 * start * (n + 1)), ctypes.byref(ld))
        return
    for c0 in range(start, n, _UPDATE_STRIP):
        c1 = min(c0 + _UPDATE_STRIP, n)
        # the product comes out C-ordered: its transpose matches W's column strip
        W[c0:, c0:c1] -= (panel[c0:c1, :size] @ panel[c0:, :size].T).T


#: Steps whose updates are delayed and applied as one matrix product. One forward pass, 2 cores
#: (symmetric kernel): blocks of 64 / 128 / 256 took 0.77 / 0.65 / 0.64 s at n = 4,096; 128 keeps
#: the pending panel (n x block) small
ELIMINATION_BLOCK = 128
#: Columns per matrix product of the delayed update (bounds its temporary to n x STRIP)
_UPDATE_STRIP = 256


def _swap_positions(W, k, j):
    """Exchange positions ``k < j`` of the symmetric matrix whose lower triangle (rows and
    columns from ``k`` on) is held in the Fortran-ordered ``W``, as LAPACK's ``?pstrf`` does.
    The diagonal is not touched: the elimination keeps its own copy of it."""
    between = W[j, k + 1:j].copy()  # row j, left of the diagonal: a strided run
    W[j, k + 1:j] = W[k + 1:j, k]
    W[k + 1:j, k] = between
    below = W[j + 1:, k].copy()
    W[j + 1:, k] = W[j + 1:, j]
    W[j + 1:, j] = below


def _blocked_eliminate(W, v, pick_largest, progress=None, offset=0, total=None, block=ELIMINATION_BLOCK,
                       use_blas=True):
    """:func:`_greedy_eliminate` with the Schur-complement updates delayed over ``block`` steps.

    ``W`` is Fortran-ordered and only its lower triangle is read (it is overwritten): the SPD
    matrix as LAPACK's ``?potrf``/``?potri`` leave it. As in LAPACK's blocked pivoted Cholesky
    (``?pstrf``), with another pivot rule: ``W`` holds the Schur complement as of the block's
    start; a step needs only the diagonal ``d`` and the vector ``v`` (kept current, O(n) per step)
    and the current column at its pivot, which is the column of ``W`` at the pivot minus the
    block's pending factor columns (``panel``). The pivot moves to the front by a symmetric
    exchange of rows and columns (:func:`_swap_positions`). At the block's end the pending updates
    are applied at once to the lower triangle of the rest, ``W -= panel panel^T``, by BLAS's
    ``dsyrk`` (:func:`_lower_update`; ``use_blas=False`` uses NumPy products): ``n^3 / 3`` flops in all, where rank-1 steps would make ``n``
    passes over memory. Same choices as the rank-1 kernel: the arithmetic differs only in
    rounding order.
    """
    if not W.flags.f_contiguous:
        raise ValueError("the elimination works on a Fortran-ordered matrix")  # an internal contract
    n = W.shape[0]
    perm = np.arange(n)
    d = np.diag(W).copy()
    v = v.copy()
    order = np.empty(n, dtype=np.intp)
    scores = np.empty(n)
    panel = np.zeros((n, block), order="F")  # its column slices feed matrix-vector products
    subtract_pending = (_PendingColumn(W, panel) if use_blas and _DGEMV is not None
                        else _numpy_pending_column(W, panel))
    tiny = np.finfo(float).tiny
    report_every = max(1, n // 50)
    m = 0
    while m < n:
        size = min(block, n - m)
        for t in range(size):
            k = m + t
            gain = v[k:] ** 2 / d[k:]
            j = k + int(np.argmax(gain) if pick_largest else np.argmin(gain))
            if j != k:
                perm[k], perm[j] = perm[j], perm[k]
                d[k], d[j] = d[j], d[k]
                v[k], v[j] = v[j], v[k]
                if t:
                    pending = panel[k, :t].copy()
                    panel[k, :t] = panel[j, :t]
                    panel[j, :t] = pending
                _swap_positions(W, k, j)
            pivot = d[k]
            order[k] = perm[k]
            scores[k] = v[k] ** 2 / pivot
            if k + 1 < n:
                if t:  # the current Schur column at the pivot, in W's column k (not read again)
                    subtract_pending(k, t)
                root = np.sqrt(pivot)
                scaled = panel[k + 1:, t]
                np.multiply(W[k + 1:, k], 1.0 / root, out=scaled)
                v[k + 1:] -= scaled * (v[k] / root)
                d[k + 1:] -= scaled ** 2
                # guard against round-off making a diagonal of an SPD Schur complement non-positive
                np.maximum(d[k + 1:], tiny, out=d[k + 1:])
            if progress is not None and (k % report_every == 0 or k == n - 1):
                report_or_stop(progress, offset + k + 1, total or n)
        end = m + size
        _lower_update(W, panel, end, size, use_blas)
        m = end
    return order, scores


def _nested_objectives(a, B, order, work=None):
    """``f(order[:k])`` for every k from one Cholesky of ``B`` in that order: prefix sums of
    ``z^2`` with ``L z = a`` (each term positive, so the sums are accurate). The lower triangle
    of the permuted ``B`` is gathered in ``work`` (Fortran-ordered, ``n x n``) when it is given."""
    n = order.size
    work = np.empty((n, n), order="F") if work is None else work
    rows = work.T  # C-ordered view: row r of it is column r of the permuted matrix
    for c0 in range(0, n, _UPDATE_STRIP):
        c1 = min(c0 + _UPDATE_STRIP, n)
        # B is symmetric: column c of the permuted lower triangle is row order[c] of B, from c on.
        # take() writing into its output was 3x faster than fancy indexing (the indices are valid,
        # so mode="clip" only spares take() a buffered copy)
        strip = np.take(B, order[c0:c1], axis=0)
        np.take(strip, order[c0:], axis=1, out=rows[c0:c1, c0:], mode="clip")
    factor, info = lapack.dpotrf(work, lower=1, clean=0, overwrite_a=1)
    if info != 0:
        raise InputError("The within-class scatter is not positive definite; give reg > 0.")
    z = linalg.solve_triangular(factor, a[order], lower=True, check_finite=False)
    return np.cumsum(z**2)


def _largest_eigenvalue(B):
    """``lambda_max(B)`` by Lanczos above 128 features, by a dense solver up to there (measured:
    0.5 ms dense against 0.7 ms Lanczos at 128, 1.7 against 1.2 ms at 256, 16 against 3.6 ms at
    512). The products read one triangle of ``B`` (BLAS ``?symv``): half the memory traffic of a
    general product, and at n = 4,096 the whole solve took 0.25 s against 0.58 s for ``eigsh(B)``."""
    n = B.shape[0]
    if n <= 128:
        return float(linalg.eigvalsh(B, subset_by_index=[n - 1, n - 1])[0])
    from scipy.linalg import blas
    from scipy.sparse.linalg import LinearOperator, eigsh

    lower = B.T  # Fortran-ordered view of the symmetric, C-ordered B: no copy
    operator = LinearOperator((n, n), matvec=lambda x: blas.dsymv(1.0, lower, x, lower=1), dtype=np.float64)
    # ARPACK's tolerance bounds the Ritz residual; the eigenvalue's error is about its square
    # (measured at n = 4,096: 1e-15 relative with tol 1e-8)
    return float(eigsh(operator, k=1, which="LA", v0=np.ones(n), tol=1e-8, return_eigenvectors=False)[0])


def slda_memory_bytes(n_features: int) -> int:
    """Working memory of :func:`greedy_slda` on ``n_features``: ``B`` and one work matrix of
    ``n x n`` float64 (a given ``B`` that needs a ridge takes one copy more)."""
    return int(8 * 2 * n_features**2)


# ---------------------------------------------------------------------------- two-class SLDA
def greedy_slda(X=None, y=None, classes=None, direction="both", reg=None,
                progress: ProgressCallback | None = None, *, a=None, B=None, solver="auto",
                memory_limit: int | None = None) -> SLDAPath:
    """Greedy sparse LDA for two classes: every cardinality from 1 to n at once ([MWA07]).

    Parameters
    ----------
    X : array_like, shape (n_samples, n_features)
    y : array_like, shape (n_samples,)
    classes : pair of labels, optional
        The two classes to separate (required when ``y`` has more than two).
    direction : {"both", "forward", "backward"}
        Which greedy passes to run; a pass not run has NaN objectives and an empty order.
    reg : float or None
        Ridge on the within-class scatter; see :func:`two_class_scatter`. The value used is
        reported in the result.
    progress : callable(report), optional
        Called about 50 times per pass with a :class:`core.progress.Progress` (steps done of
        both passes); returning False stops the run (:class:`core.errors.Stopped`).
    a, B : array_like, optional
        The problem itself instead of ``(X, y)``: the difference of the class means and the
        (symmetric, positive semi-definite) within-class scatter, as :func:`exact_slda` takes
        them. ``reg`` applies to ``B`` as to a scatter computed here (added to a copy).
    solver : {"auto", "dense", "low-rank"}
        ``"dense"``: the blocked Schur-complement elimination on ``B`` (``O(n^3)``, see Notes).
        ``"low-rank"`` (from data only): the passes on the factor ``U`` of ``B = U U^T + reg I``
        (the ``m`` samples of the pair less their class means), ``O(n^2 m)`` time and ``O(n m)``
        memory; it needs ``reg > 0`` (automatic when ``m - 2 < n``, where ``B`` is singular).
        ``"auto"``: low-rank when ``B`` is singular and ``m <= LOW_RANK_FRACTION * n``.
        Both give the same orders and objectives up to rounding (``tests/core/selection/test_slda.py``).
    memory_limit : int, optional
        Bytes the computation may use (default: half the machine's memory); ``n`` features need
        :func:`slda_memory_bytes` (``B`` and one ``n x n`` work matrix) with the dense solver,
        ``8 n (m + 4)`` with the low-rank one.

    Returns
    -------
    SLDAPath

    Notes
    -----
    Both passes delay their rank-1 updates over blocks of :data:`ELIMINATION_BLOCK` steps and
    apply them to the lower triangle as matrix products (:func:`_blocked_eliminate`); the
    choices are those of the rank-1 elimination. The backward pass consumes ``B^-1`` as LAPACK's
    ``?potri`` leaves it. The ridge test costs one Cholesky (reused for the Fisher direction) and
    a condition estimate, ``lambda_max(B)`` a Lanczos run on one triangle of ``B``: no spectrum
    is computed. Measured on 2 cores (``benchmarks/bench_slda.py``), the whole path costs 1.9,
    1.8 and 1.6 times ``scipy.linalg.cholesky(B)`` plus ``scipy.linalg.inv(B)`` at n = 2,048,
    4,096 and 8,192.
    """
    if direction not in ("both", "forward", "backward"):
        raise InputError(f"direction must be 'both', 'forward' or 'backward'; got {direction!r}.")
    if solver not in ("auto", "dense", "low-rank"):
        raise InputError(f"solver must be 'auto', 'dense' or 'low-rank'; got {solver!r}.")
    limit = memory_limit_bytes() if memory_limit is None else int(memory_limit)
    given = a is not None or B is not None
    if given:
        if X is not None or y is not None:
            raise InputError("Give the data (X, y) or the problem (a, B), not both.")
        if solver == "low-rank":
            raise InputError("solver='low-rank' works from the data (X, y); a given B is solved densely.")
        n_features = np.size(a)
    elif X is None or y is None:
        raise InputError("Give the data (X, y) or the problem (a, B).")
    else:
        n_features = np.shape(X)[1] if np.ndim(X) == 2 else 0
    if not given and solver != "dense":
        n_samples = _pair_size(y, classes)
        singular = n_samples - 2 < n_features
        if solver == "low-rank" or slda_solver(n_features, n_samples, reg) == "low-rank":
            needed = 8 * n_features * (n_samples + 4)
            if needed > limit:
                raise _too_large(n_features, needed, limit)
            a, U, classes = _class_pair_factor(X, y, classes)
            if reg is None:
                # rank(B) <= m - 2: singular below n features, as the dense test would find
                reg = (1e-3 * max(float(np.einsum("ij,ij->", U, U)) / n_features, np.finfo(float).tiny)
                       if singular else _ridge(U @ U.T, None))
                if reg == 0:
                    raise InputError("The within-class scatter is well conditioned here and needs no ridge, which "
                                     "the low-rank solver works with: use solver='dense' or give reg > 0.")
            elif not (np.isfinite(reg) and reg >= 0):
                raise InputError(f"reg must be a non-negative number; got {reg!r}.")
            elif reg == 0:
                raise InputError("The low-rank solver needs a ridge reg > 0 (B = U U^T has rank at most m - 2).")
            return _low_rank_path(a, U, float(reg), classes, direction, progress)
    needed = slda_memory_bytes(n_features)
    if needed > limit:
        raise _too_large(n_features, needed, limit)
    if given:
        a, B = _check_problem(a, B)
        classes = (0, 1)
    else:
        a, B, classes = _class_pair_problem(X, y, classes)
    work = np.empty(B.shape, order="F")
    automatic = reg is None
    reg = _ridge(B, reg, work)
    factored = automatic and reg == 0.0  # the test left B's Cholesky factor in work
    if reg > 0:
        if given:
            B = B.copy()  # the caller's B stays as it was
        B[np.diag_indices_from(B)] += reg
    return _path_from_problem(a, B, reg, classes, direction, progress, work, factored)


def slda_solver(n_features: int, n_samples: int, reg=None) -> str:
    """The solver ``greedy_slda(X, y, solver="auto")`` takes for a pair of ``n_samples`` samples
    on ``n_features`` features: ``"low-rank"`` when the within-class scatter is singular (fewer
    than ``n_features + 2`` samples) and gets a ridge, and the samples are at most
    :data:`LOW_RANK_FRACTION` of the features; ``"dense"`` otherwise."""
    singular = n_samples - 2 < n_features
    return "low-rank" if singular and n_samples <= LOW_RANK_FRACTION * n_features and reg != 0 else "dense"


def _pair_size(y, classes) -> int:
    """Samples of the pair (of all of ``y`` when no pair is named; invalid input: 0, for the
    validation that follows to report)."""
    try:
        labels = np.asarray(y).ravel()
        return int(labels.size if classes is None else np.isin(labels, list(classes)).sum())
    except (TypeError, ValueError):
        return 0


def _too_large(n, needed, limit):
    return InputError(f"Sparse LDA on {n:,} features needs about {needed / 2**30:.1f} GB for its {n:,} x {n:,} "
                      f"matrices, more than the limit of {limit / 2**30:.1f} GB. Select fewer features first "
                      "(e.g. by Fisher score or Q-alpha), or work on a downsampled image.")


def _check_problem(a, B):
    """``a`` as a finite vector and ``B`` as a finite symmetric matrix of its size."""
    a = np.asarray(a, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if a.ndim != 1 or a.size == 0:
        raise InputError(f"a must be a non-empty vector; got shape {a.shape}.")
    if B.shape != (a.size, a.size):
        raise InputError(f"B must be {a.size} x {a.size} for a of length {a.size}; got {B.shape}.")
    if not (np.isfinite(a).all() and np.isfinite(B).all()):
        raise InputError("a and B must be finite (no NaN or infinite values).")
    if not _symmetric(B):
        raise InputError("B must be symmetric (a within-class scatter is).")
    return a, np.ascontiguousarray(B)


#: Side of the square tiles in which a matrix is compared with its transpose
_TILE = 256


def _symmetric(M) -> bool:
    """``M`` equals its transpose up to rounding (1e-10 of its largest entry). Compared a pair of
    square tiles at a time, each pair read once while in cache: no temporary of ``M``'s size, and
    no pass down columns of a row-major matrix (that took 0.51 s at n = 4,096, the tiles 0.05 s)."""
    n = M.shape[0]
    largest, difference = 0.0, 0.0
    for r0 in range(0, n, _TILE):
        for c0 in range(r0, n, _TILE):
            upper = M[r0:r0 + _TILE, c0:c0 + _TILE]
            lower = M[c0:c0 + _TILE, r0:r0 + _TILE]
            largest = max(largest, float(np.abs(upper).max()), float(np.abs(lower).max()))
            difference = max(difference, float(np.abs(upper - lower.T).max()))
    return difference <= 1e-10 * largest


def _path_from_problem(a, B, reg, classes, direction, progress=None, work=None, factored=False):
    """Every output of :class:`SLDAPath` with one ``n x n`` work matrix besides ``B``: it holds in
    turn the Cholesky factor of ``B`` (Fisher direction, ``lambda_max(A, B)``), ``B^-1`` (then
    the backward pass), a copy of ``B`` (the forward pass) and ``B`` permuted in each order whose
    nested objectives are measured."""
    n = a.size
    work = np.empty((n, n), order="F") if work is None else work
    factor, info = (work, 0) if factored else _cholesky_into(work, B)
    if info != 0:
        raise InputError("The within-class scatter is not positive definite; give reg > 0.")
    fisher = lapack.dpotrs(factor, a, lower=1)[0]
    lambda_max = float(a @ fisher)
    total = n * (2 if direction == "both" else 1)
    nan = np.full(n, np.nan)
    forward_order = backward_order = np.zeros(0, dtype=np.intp)
    forward_objective = backward_objective = nan
    if direction in ("both", "backward"):
        # the lower triangle of B^-1, in place: all the elimination reads
        inverse, info = lapack.dpotri(factor, lower=1, overwrite_c=1)
        removal, _ = _blocked_eliminate(inverse, fisher, False, progress, 0, total)
        backward_order = removal[::-1].copy()
    if direction in ("both", "forward"):
        np.copyto(work.T, B)  # B is symmetric: its C-ordered copy is its Fortran-ordered copy
        forward_order, gains = _blocked_eliminate(work, a, True, progress, n if direction == "both" else 0, total)
        # the forward pass is a Cholesky of B in its own order: its gains are the terms z_k^2 of
        # the nested objectives, as accurate as a fresh factorisation (both 1e-13 against a
        # direct solve of each subset on the AR and warpPIE pairs)
        forward_objective = np.cumsum(gains)
    if direction in ("both", "backward"):
        backward_objective = _nested_objectives(a, B, backward_order, work)
    fisher_order = np.argsort(-np.abs(fisher), kind="stable")
    fisher_objective = _nested_objectives(a, B, fisher_order, work)
    return _finish_path(a, reg, classes, forward_order, forward_objective, backward_order, backward_objective,
                        fisher_order, fisher_objective, lambda_max, _largest_eigenvalue(B), dense_scatter=B)


def _finish_path(a, reg, classes, forward_order, forward_objective, backward_order, backward_objective,
                 fisher_order, fisher_objective, lambda_max, largest_eigenvalue, *, dense_scatter=None,
                 scatter_factor=None):
    """The :class:`SLDAPath` of the passes' orders and objectives: the dual curve and the bounds."""
    dual = np.fmax(forward_objective, backward_objective)
    squares = np.sort(a**2)
    bound = np.cumsum(squares[::-1]) / largest_eigenvalue
    worst_case_bound = np.cumsum(squares) / largest_eigenvalue
    for values, what in ((fisher_objective, "The Fisher-thresholding objectives"), (bound, "The bound of Eq. (5)"),
                         (np.fmax(dual, fisher_objective), "The greedy objectives")):
        _require_finite(values, what)
    return SLDAPath(forward_order=forward_order, forward_objective=forward_objective,
                    backward_order=backward_order, backward_objective=backward_objective,
                    fisher_order=fisher_order, fisher_objective=fisher_objective,
                    dual_objective=dual, bound=bound, worst_case_bound=worst_case_bound,
                    lambda_max=lambda_max, reg=reg, classes=classes, a=a,
                    scatter_factor=scatter_factor, _dense_scatter=dense_scatter)


# ---------------------------------------------------------------------------- low-rank scatter
# With fewer samples than features (images, genes) the within-class scatter is B = U U^T + rho I,
# U the n x m centred samples. By Woodbury, with S a set of features and M = (rho I + U_S^T U_S)^-1
# (m x m), the Schur complement of B_SS in B is rho I + rho U M U^T off S, and the part of a that
# B_SS does not explain is r = a - U M U_S^T a_S. So a greedy step needs, for every candidate j,
# r_j and s_j = rho (1 + u_j^T M u_j) (forward, gain r_j^2 / s_j) or s_j = rho (1 - u_j^T M u_j)
# (backward, loss r_j^2 / s_j): a rank-1 change of M per step keeps both current in O(n m), so a
# pass costs O(n^2 m) instead of O(n^3).

#: Steps between exact recomputations of M, r and s in a low-rank pass (at least m): the rank-1
#: updates' rounding does not accumulate over a whole pass
LOW_RANK_REFRESH = 64
#: ``solver="auto"`` takes the low-rank path when the pair has at most this fraction of the
#: features as samples (and B needs a ridge): at m / n = 1/16 it was 2-3x faster than the dense
#: solver at n = 512-2,048, at 1/4 3x slower (benchmarks/bench_slda.py, Table 4)
LOW_RANK_FRACTION = 1 / 16


def _woodbury_core(U_rows, rho):
    """``rho I + U_S^T U_S`` (m x m) of the features whose rows of ``U`` are ``U_rows``."""
    K = U_rows.T @ U_rows
    K[np.diag_indices_from(K)] += rho
    return K


def _symmetric_inverse(K):
    """``K^-1`` of the small SPD ``K``, made exactly symmetric (NumPy's BLAS throughout the pass:
    see ``_cholesky_upper`` in kernel_qalpha)."""
    M = np.linalg.inv(K)
    return (M + M.T) / 2


def _woodbury_solve(U_rows, rho, v, core=None):
    """``B_SS^-1 v`` for ``B_SS = U_S U_S^T + rho I`` by Woodbury, through the m x m ``core``
    (:func:`_woodbury_core`, formed here unless the caller has it)."""
    core = _woodbury_core(U_rows, rho) if core is None else core
    return (v - U_rows @ linalg.solve(core, U_rows.T @ v, assume_a="pos")) / rho


def _low_rank_state(a, U, rho, members, candidates, forward):
    """``(M, r, s)`` afresh: ``M`` of the features in ``members`` (a boolean mask), ``r`` and ``s``
    of the ``candidates`` (indices)."""
    inside = U[members]
    M = _symmetric_inverse(_woodbury_core(inside, rho))
    Y = U[candidates] @ M
    r = a[candidates] - Y @ (inside.T @ a[members])
    q = np.einsum("ij,ij->i", Y, U[candidates])
    s = rho * (1.0 + q) if forward else rho * (1.0 - q)
    return M, r, np.maximum(s, np.finfo(float).tiny)  # round-off must not make a Schur diagonal <= 0


def _low_rank_pass(a, U, rho, forward, progress=None, offset=0, total=None):
    """One greedy pass on ``B = U U^T + rho I``: ``(order, scores)`` as :func:`_blocked_eliminate`
    returns them for ``M = B`` (forward: gains, in the order of selection) or ``M = B^-1``
    (backward: losses, in the order of removal). Ties go to the lowest index, as there.

    Every :data:`LOW_RANK_REFRESH` (or ``m``) steps ``M``, ``r`` and ``s`` are recomputed and
    the arrays shrink to the features still in play, so later steps cost less.
    """
    n, m = U.shape
    members = np.zeros(n, dtype=bool) if forward else np.ones(n, dtype=bool)
    order = np.empty(n, dtype=np.intp)
    scores = np.empty(n)
    refresh = max(LOW_RANK_REFRESH, m)
    report_every = max(1, n // 50)
    sign = 1.0 if forward else -1.0
    tiny = np.finfo(float).tiny
    for k in range(n):
        if k % refresh == 0:
            candidates = np.flatnonzero(~members if forward else members)  # increasing: ties as before
            M, r, s = _low_rank_state(a, U, rho, members, candidates, forward)
            U_c = U[candidates]  # a copy: rows of taken features are zeroed
            taken = np.zeros(candidates.size)  # +inf where a candidate has been taken
            score, z = np.empty(candidates.size), np.empty(candidates.size)
        np.multiply(r, r, out=score)
        score /= s
        if forward:
            score -= taken
            p = int(np.argmax(score))
        else:
            score += taken
            p = int(np.argmin(score))
        feature = candidates[p]
        order[k], scores[k] = feature, score[p]
        taken[p] = np.inf
        members[feature] = forward
        if k + 1 < n:
            pivot, residual = s[p], r[p]
            root = np.sqrt(pivot)
            w = M @ U_c[p]
            np.matmul(U_c, w, out=z)
            z *= rho / root  # z_j = rho u_j^T M u_p / sqrt(s_p)
            # forward: r -= z r_p / sqrt(s_p), M -= rho w w^T / s_p; backward: both signs flip
            r -= z * (sign * residual / root)
            s -= z * z
            if not forward:  # s stays >= rho when adding features; removing them it may round to 0
                np.maximum(s, tiny, out=s)
            M -= np.outer(w, w * (sign * rho / pivot))
            # a taken feature's r and s mean nothing from now on: frozen at finite values
            U_c[p], r[p], s[p] = 0.0, 0.0, 1.0
        if progress is not None and (k % report_every == 0 or k == n - 1):
            report_or_stop(progress, offset + k + 1, total or n)
    return order, scores


def _low_rank_nested(a, U, rho, order, block=LOW_RANK_REFRESH):
    """``f(order[:k])`` for every k on ``B = U U^T + rho I``, a block of the order at a time: the
    block's part of a, less what the features before it explain, solved against the block's Schur
    complement ``rho I + rho U_C M U_C^T`` (``M`` of the features before it); prefix sums of the
    squares of that triangular solve, as :func:`_nested_objectives` takes them."""
    m = U.shape[1]
    K = rho * np.eye(m)
    explained = np.zeros(m)  # U_S^T a_S of the features S before the block
    terms = np.empty(order.size)
    for start in range(0, order.size, block):
        chosen = order[start:start + block]
        U_C = U[chosen]
        UM = U_C @ _symmetric_inverse(K)
        schur = rho * (UM @ U_C.T)
        schur[np.diag_indices_from(schur)] += rho
        factor = np.linalg.cholesky(schur)
        residual = a[chosen] - UM @ explained
        terms[start:start + chosen.size] = linalg.solve_triangular(factor, residual, lower=True,
                                                                   check_finite=False) ** 2
        K += U_C.T @ U_C
        explained += U_C.T @ a[chosen]
    return np.cumsum(terms)


def _low_rank_path(a, U, rho, classes, direction, progress=None):
    """Every output of :class:`SLDAPath` from ``a`` and the factor ``U`` of ``B - rho I``, in
    ``O(n^2 m)`` time and ``O(n m)`` memory (``B`` itself is formed only if the result is asked for it)."""
    n, m = U.shape
    K = _woodbury_core(U, rho)
    fisher = _woodbury_solve(U, rho, a, core=K)  # B^-1 a
    total = n * (2 if direction == "both" else 1)
    nan = np.full(n, np.nan)
    forward_order = backward_order = np.zeros(0, dtype=np.intp)
    forward_objective = backward_objective = nan
    if direction in ("both", "backward"):
        removal, _ = _low_rank_pass(a, U, rho, False, progress, 0, total)
        backward_order = removal[::-1].copy()
        backward_objective = _low_rank_nested(a, U, rho, backward_order)
    if direction in ("both", "forward"):
        forward_order, gains = _low_rank_pass(a, U, rho, True, progress, n if direction == "both" else 0, total)
        forward_objective = np.cumsum(gains)
    fisher_order = np.argsort(-np.abs(fisher), kind="stable")
    fisher_objective = _low_rank_nested(a, U, rho, fisher_order)
    largest_eigenvalue = float(np.linalg.eigvalsh(K)[-1])  # rho + the largest of U^T U: B's
    return _finish_path(a, rho, classes, forward_order, forward_objective, backward_order, backward_objective,
                        fisher_order, fisher_objective, float(a @ fisher), largest_eigenvalue, scatter_factor=U)


# ---------------------------------------------------------------------------- general pairs
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
    nan = np.full(n, np.nan)
    # the forward pass adds n features, the backward pass removes n - 1 (one is left)
    total = (n if direction in ("both", "forward") else 0) + (n - 1 if direction in ("both", "backward") else 0)
    done = 0
    forward_order = backward_order = np.zeros(0, dtype=np.intp)
    forward_objective = backward_objective = nan
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
                    dual_objective=np.fmax(forward_objective, backward_objective),
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


# ---------------------------------------------------------------------------- exact search
def exact_slda(X=None, y=None, *, classes=None, reg=None, a=None, B=None,
               max_features: int = EXACT_LIMIT, progress=None) -> ExactResult:
    """Globally optimal two-class sparse LDA for every cardinality, by branch-and-bound.

    Search tree: a node is a candidate set ``U`` from which features are removed in increasing
    index order (so every subset is reached once). Its bound is ``f(U)``: by the inclusion
    principle (Theorem 1 of [MWA07]) no subset of ``U`` exceeds ``lambda_max(A_U, B_U) = f(U)``.
    Nodes are expanded best bound first, so the search stops as soon as no open node beats the
    incumbent, which starts from the dual-pass greedy solution. The cost is exponential in the
    worst case: measured on random problems with a nearly singular ``B`` (n + 5 samples),
    0.3 s at n = 16 and 14 s at n = 24 for all cardinalities; with ``B`` from 3n samples,
    3 s at n = 24 and 134 s at n = 32 -- hence the limit of 32 features (``EXACT_LIMIT``),
    below the "n < 40" of [MWA07]. Give data (``X``, ``y``) or the
    problem (``a``, ``B``).

    Raises
    ------
    InputError
        Above ``max_features`` features (the search is exponential in the worst case).
    """
    if a is None or B is None:
        if X is None or y is None:
            raise InputError("Give the data (X, y) or the problem (a, B).")
        a, B, reg, classes = two_class_scatter(X, y, classes, reg)
    else:
        a, B = _check_problem(np.ravel(a), B)
    n = a.size
    if n > max_features:
        raise InputError(f"Exact search is limited to {max_features} features (it is exponential in "
                         f"the worst case); this problem has {n}. Use greedy_slda, or select fewer "
                         "features first.")
    greedy = _path_from_problem(a, B, 0.0, classes, "both")
    best_value = greedy.dual_objective.copy()
    best_subset = [tuple(greedy.subset(k)) for k in range(1, n + 1)]
    nodes = 0

    def bound(U):
        """f(U): by the inclusion principle (Theorem 1) no subset of U exceeds it."""
        nonlocal nodes
        nodes += 1
        return subset_objective(a, B, U)

    for k in range(1, n + 1):
        # best-first on the bound; a node: (-bound, U as tuple, first removable position)
        everything = tuple(range(n))
        heap = [(-bound(everything), everything, 0)]
        tolerance = 1e-12 * max(abs(best_value[k - 1]), 1e-300)
        while heap:
            negative_bound, U, first = heapq.heappop(heap)
            if -negative_bound <= best_value[k - 1] + tolerance:
                break  # best-first: no open node can beat the incumbent any more
            if len(U) == k:  # at a leaf the bound is the exact value
                best_value[k - 1], best_subset[k - 1] = -negative_bound, U
                continue
            # remove one more feature among positions >= first, leaving enough positions after it
            # for the removals still to come (every subset is reached once)
            to_remove = len(U) - k
            for position in range(first, len(U) - to_remove + 1):
                child = U[:position] + U[position + 1:]
                value = bound(child)
                if value > best_value[k - 1] + tolerance:
                    heapq.heappush(heap, (-value, child, position))
        report_or_stop(progress, k, n)
    return ExactResult(subsets=tuple(np.array(s) for s in best_subset),
                       objective=np.asarray(best_value), nodes=nodes)
