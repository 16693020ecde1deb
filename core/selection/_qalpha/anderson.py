"""Anderson extrapolation of the alternation's iterates: the iterate stage's acceleration that
costs no pass over the data (:func:`.iterate.alternate`, the power-embedded alternation).

One step of the alternation of [WS03] Definition 2 is a map ``x -> g(x)`` on ``x = (alpha, Q)``
(``P = M Q`` carried along, linear in ``Q``), two thin passes over the data; its fixed points are
Q-alpha's, and its rate is linear and slow where a few directions settle slowly (TOX-171 at k = 5:
202 steps). Anderson's mixing [WN11] takes as the next iterate the combination of the last
``m + 1`` images whose residuals ``f = g(x) - x`` combine to the least norm,
``x_next = g_k - sum_i gamma_i (g_{i+1} - g_i)`` with
``gamma = argmin || f_k - sum_i gamma_i (f_{i+1} - f_i) ||``: a fixed point of the map is one of
the mixing, and the least-squares problem has ``m`` columns. Each step costs the same two passes.
The alternation fixes Q's span, not its basis, and the QR basis of ``A_alpha Q`` turns within the
span at the ratios of ``A_alpha``'s leading eigenvalues, a slow mode the mixing would spend its
memory on; so each image's basis is turned to the last iterate's (orthogonal Procrustes): the
bundled sets' median fell from 18 iterations to 15, ORL at k = 8 from 32 to 17.

A mixed iterate can leave the basin the alternation is in: the alternation's steps raise the
criterion, and on TOX-171 and ALLAML at k = 8 unguarded mixing settled at lower fixed points
(objective 223.67 against 224.06, 412.48 against 412.73). So a mixed iterate whose criterion lies
below the last accepted one's (by more than rounding) is discarded, the run goes on from the plain
image of the last accepted iterate and the memory is cleared (:meth:`Mixing.discarded`).

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
.. [WN11] H. F. Walker and P. Ni, "Anderson acceleration for fixed-point iterations", SIAM J.
   Numer. Anal. 49(4), 1715-1735, 2011.
"""

from __future__ import annotations

import functools

import numpy as np

from .._spectral import lapack

#: Earlier images the mixing combines (``m``).
MEMORY = 5
#: The mixing keeps ``m + 1`` residuals and images; above this many bytes the alternation goes on
#: unmixed (about 1 million features at k = 8).
MEMORY_BYTES = 512 * 2 ** 20
#: A mixed iterate whose criterion is below the last accepted one's by more than this share of it
#: is discarded: rounding moves the criterion by about 1e-15 of itself near a fixed point.
DROP_RTOL = 1e-10
#: Mixing begins once the iterate's larger residual is at most this: further out, the mixing
#: found other stationary points than the alternation's (a PBMC-sized table at k = 4: objective
#: 1.2387 against 1.2449, with the downhill guard of DROP_RTOL).
START_BELOW = 1e-2
#: Singular values of the residuals' differences below this share of the largest are cut (nearly
#: dependent differences would give huge coefficients).
RCOND = 1e-10


def fits(n_features: int, n_samples: int, k: int) -> bool:
    """Whether the mixing's memory for ``n_features`` weights and ``n_samples x k`` vectors stays
    within :data:`MEMORY_BYTES`: per kept image, its residual (``n + q k``) and the image with
    ``P`` (``n + q k + k n``)."""
    per_image = 2 * (n_features + n_samples * k) + k * n_features
    return (MEMORY + 1) * per_image * 8 <= MEMORY_BYTES


@functools.lru_cache(maxsize=None)
def _upper(k: int, dtype) -> np.ndarray:
    """Ones on and above the diagonal of a ``k x k`` matrix (read-only): ``R`` out of ``geqrf``'s
    factored form by one product, where ``np.triu`` takes 6 us."""
    mask = np.triu(np.ones((k, k), dtype=dtype))
    mask.flags.writeable = False
    return mask


def signed_qr(T):
    """``T = Q R`` (``T`` tall, ``q x k``) with ``R``'s diagonal non-negative: a mixed ``Q``, nearly
    orthonormal, keeps its columns' directions when it is made orthonormal again. LAPACK's
    ``geqrf`` and ``orgqr`` called directly: 12 us a call on 55 x 3 (9 on 200 x 1, 14 on 30 x 8)
    against 31 by NumPy's ``qr`` and the signs, where a whole step of the alternation took 160 us."""
    factored, tau, _, _ = lapack("geqrf", T.dtype)(T)
    k = T.shape[1]
    signs = np.where(factored.diagonal()[:k] < 0, -1.0, 1.0).astype(factored.dtype, copy=False)
    R = factored[:k] * (_upper(k, factored.dtype) * signs[:, None])
    return lapack("orgqr", T.dtype)(factored, tau, overwrite_a=True)[0] * signs, R


def turned_to_last(cross):
    """The rotation ``W`` (k x k, orthogonal) that turns a new basis ``B`` to the last one ``L``
    (orthogonal Procrustes): ``B W`` closest to ``L``, from ``cross = B^T L`` in the inner product
    the bases are orthonormal in. The alternation fixes a span, not a basis, and a QR basis drifts
    within the span at the ratios of ``A_alpha``'s leading eigenvalues: a slow mode the mixing
    would spend its memory on. By LAPACK's ``gesdd`` called directly: 2.5 us on 2 x 2 against 9.5
    by NumPy's SVD and 110 by SciPy's ``orthogonal_procrustes`` (2-core AMD EPYC)."""
    left, _, right, info = lapack("gesdd")(np.asarray(cross, dtype=np.float64))
    if info != 0:  # LAPACK's own failure to converge, on a k x k matrix: NumPy raises it
        left, _, right = np.linalg.svd(np.asarray(cross, dtype=np.float64))
    return left @ right


def least_squares(matrix, target):
    """``argmin ||target - matrix gamma||`` of least norm, singular values below :data:`RCOND` of the
    largest cut: LAPACK's ``gelss`` called directly (6 us on 5 x 5 against 17 by NumPy's
    ``lstsq``, which cuts at the same ``rcond``)."""
    rows, columns = matrix.shape
    if rows >= columns:  # gelss wants the target as long as the longer side
        _, solution, _, _, _, info = lapack("gelss")(matrix, target, cond=RCOND)
        if info == 0:
            return solution[:columns]
    return np.linalg.lstsq(matrix, target, rcond=RCOND)[0]


class Mixing:
    """The differences between the last ``m + 1`` residuals and images of the map, the last of
    each, and their combination. Images are kept flat (their parts laid end to end) and the
    differences as rows of two arrays filled in turn, the oldest overwritten, so a mixed iterate is
    one product with them (55 x 101 at k = 2: 32 us a call against 72 part by part with NumPy's
    ``lstsq``, 2-core AMD EPYC)."""

    def __init__(self, memory: int = MEMORY):
        self.memory = memory
        self.last = None  # the last (residual, flat image)
        # differences of consecutive residuals and images, row by row in turn; the residuals' last
        # row holds the newest residual itself, so that the least squares problem is one copy
        self.residual_rows = self.image_rows = None
        self.differences = 0  # taken since the memory was last cleared; the rows hold the last `memory`
        self.discards, self.pause = 0, 0

    def discarded(self):
        """A mixed iterate was discarded: the memory is cleared and the next images go unmixed,
        1 after the first discard, 2 after the second, 4, 8, ..., so a run whose mixing keeps
        failing loses few steps to it (a PBMC-sized table at k = 4 went downhill at every third
        step)."""
        self.last, self.differences = None, 0
        self.pause = 2 ** self.discards
        self.discards += 1

    def next(self, residual, point, image, parts):
        """The next iterate after ``point`` (a vector), whose larger residual is ``residual`` and
        whose image is ``image`` (the same layout), as the tuple of arrays ``parts`` is laid out
        (the image in full: ``(alpha, Q, Pt)``); None where nothing is mixed (the image itself is
        next): too far from a fixed point (:data:`START_BELOW`), too few images, or a pause."""
        new_residual = image - point
        flat = np.concatenate([np.ravel(part) for part in parts]).astype(np.float64, copy=False)
        if self.last is not None:
            if self.residual_rows is None:
                self.residual_rows = np.empty((self.memory + 1, new_residual.size))
                self.image_rows = np.empty((self.memory, flat.size))
            last_residual, last_flat = self.last
            row = self.differences % self.memory  # the oldest kept, once all are filled
            np.subtract(new_residual, last_residual, out=self.residual_rows[row])
            np.subtract(flat, last_flat, out=self.image_rows[row])
            self.differences += 1
        self.last = (new_residual, flat)
        if self.pause > 0:
            self.pause -= 1
            return None
        if not self.differences or residual > START_BELOW:
            return None
        # gamma = argmin ||f - D gamma|| from the R of [D f] = QR: R's leading block is D's and has
        # its singular values, its last column is Q^T f; no Q is formed. LAPACK's own call on a
        # copy in Fortran order (the rows taken, transposed): 100 x 200,000 at k = 2, 5 ms against
        # 11 by SciPy's qr and 22 for D stacked by columns and its SVD; 47 against 89 us on 1,500 values
        columns = min(self.differences, self.memory)
        self.residual_rows[self.memory] = new_residual
        stacked = self.residual_rows[_taken_rows(columns, self.memory)].T
        R = lapack("geqrf")(stacked, overwrite_a=True)[0][: columns + 1]
        R = R * _upper(columns + 1, R.dtype)[: R.shape[0]]  # fewer rows than columns on tiny problems
        gamma = least_squares(R[:columns, :columns], R[:columns, columns])
        return _laid_out(flat - gamma @ self.image_rows[:columns], parts)


@functools.lru_cache(maxsize=None)
def _taken_rows(columns: int, memory: int) -> np.ndarray:
    """The rows of :attr:`Mixing.residual_rows` that hold ``columns`` differences and the newest
    residual (the last row), in this order (read-only)."""
    rows = np.append(np.arange(columns), memory)
    rows.flags.writeable = False
    return rows


def _laid_out(flat, parts):
    """``flat`` cut into arrays of the shapes and types of ``parts``, which it lays end to end."""
    pieces, offset = [], 0
    for part in parts:
        part = np.asarray(part)
        piece = flat[offset: offset + part.size].reshape(part.shape)
        pieces.append(piece.astype(part.dtype, copy=False))
        offset += part.size
    return tuple(pieces)
