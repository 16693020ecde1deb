"""The kernels of the greedy sparse LDA passes, private: the pivoted, left-looking elimination
whose forward and backward forms are the two greedy passes ([MWA07] Appendix), blocked so that
the trailing updates are one BLAS call per block, and the same passes on a low-rank scatter by
Woodbury's identity. :mod:`core.selection.slda` explains the algebra and calls them.

References
----------
.. [MWA07] B. Moghaddam, Y. Weiss and S. Avidan, "Fast pixel/part selection with sparse
   eigenvectors", ICCV 2007.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from ..errors import InputError
from ..progress import report_or_stop

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
