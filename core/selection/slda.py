"""Sparse LDA and sparse PCA by greedy and exact search (Moghaddam, Weiss & Avidan).

Implemented
-----------
* :func:`greedy_slda` -- two-class sparse LDA: forward selection, backward elimination and the
  dual pass for every cardinality at once, Fisher thresholding with variational
  renormalisation, and the lower bound of Eq. (5) ([MWA07] Secs. 3-5).
* With fewer samples than features, :func:`greedy_slda` runs both passes on the samples
  themselves (``B = U U^T + rho I``, Woodbury: ``_slda_kernels._low_rank_pass``), ``O(n^2 m)``
  instead of ``O(n^3)``, with the same choices.

Beside it: :mod:`.spca` (the same greedy search on any symmetric pair (A, B), multi-class LDA and
sparse PCA, [MWA07] Eq. 1-2 and Sec. 6), :mod:`.exact` (branch-and-bound with the
inclusion-principle bound, [ICML06] Theorem 1) and the private kernels of both passes
(:mod:`._slda_kernels`: blocked elimination, BLAS on sub-matrices, Woodbury).

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
Schur column at its pivot, so the updates of the matrix can wait: ``_blocked_eliminate``
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

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from ..errors import InputError
from ..matrix import dense_matrix
from ..limits import memory_limit_bytes
from ..progress import ProgressCallback
from ..validation import as_labels as _as_labels
from ..validation import power_of_two_scale as _power_of_two_scale
from ..validation import require_finite as _require_finite
from ..validation import check_real
from ._slda_kernels import (_UPDATE_STRIP, ELIMINATION_BLOCK, LOW_RANK_FRACTION, _blocked_eliminate, _low_rank_nested, _low_rank_pass,
                            _nested_objectives, _woodbury_core, _woodbury_solve)


def _unit_free(X):
    """``X`` divided by a power of two when its squares would overflow (or underflow): the
    objectives ``a_s^T B_ss^-1 a_s``, the orders and the bounds do not depend on the unit, so
    they are exactly those of ``X``; ``a`` and ``B`` are then those of the rescaled data."""
    scale = _power_of_two_scale(X)
    return X if scale == 1.0 else X / scale


__all__ = ["SLDAPath", "greedy_slda", "two_class_scatter", "subset_objective", "slda_memory_bytes", "slda_solver",
           "ELIMINATION_BLOCK", "LOW_RANK_FRACTION"]


class GreedyPasses:
    """What the paths of greedy passes share (:class:`SLDAPath`, :class:`core.selection.spca.PairPath`):
    which passes were run and which one the dual curve takes at each cardinality."""

    @property
    def directions(self) -> tuple:
        """The greedy passes this path holds: ``("forward", "backward")`` or one of them."""
        return tuple(name for name, order in (("forward", self.forward_order), ("backward", self.backward_order))
                     if order.size)

    def dual_pass(self, k: int) -> str:
        """The pass whose subset of cardinality ``k`` the dual curve takes: the better of the two
        (forward on a tie), or the one pass run."""
        if len(self.directions) == 1:
            return self.directions[0]
        return "forward" if self.forward_objective[k - 1] >= self.backward_objective[k - 1] else "backward"

    def _pass_order(self, k: int, method: str) -> np.ndarray:
        if method == "dual":
            method = self.dual_pass(k)
        elif method in ("forward", "backward") and method not in self.directions:
            raise InputError(f"This path has no {method} pass (it was computed with direction="
                             f"{self.directions[0]!r}); use method='dual' or compute the path with direction='both'.")
        return {"forward": self.forward_order, "backward": self.backward_order}[method]


def dual_curve(forward_objective, backward_objective) -> np.ndarray:
    """The better of the two passes' objectives at every cardinality, or the one pass run (a pass
    not run has empty objectives)."""
    run = [objective for objective in (forward_objective, backward_objective) if objective.size]
    return np.maximum(*run) if len(run) == 2 else run[0]


@dataclass(frozen=True, eq=False)
class SLDAPath(GreedyPasses):
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
        return self.a.size

    def subset(self, k: int, method: str = "dual") -> np.ndarray:
        """The feature indices of cardinality ``k`` found by ``method`` (sorted).

        ``method``: ``"dual"`` (the better greedy pass), ``"forward"``, ``"backward"`` or ``"fisher"``.
        """
        k = _check_cardinality(k, self.n_features)
        if method not in ("dual", "forward", "backward", "fisher"):
            raise InputError(f"method must be 'dual', 'forward', 'backward' or 'fisher'; got {method!r}.")
        return np.sort((self.fisher_order if method == "fisher" else self._pass_order(k, method))[:k])

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
        return check_real(reg, "reg", low=0.0)
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


def _largest_eigenvalue(B):
    """``lambda_max(B)`` by Lanczos above 128 features, by a dense solver up to there (measured:
    0.5 ms dense against 0.7 ms Lanczos at 128, 1.7 against 1.2 ms at 256, 16 against 3.6 ms at
    512). The products read one triangle of ``B`` (BLAS ``?symv``): half the memory traffic of a
    general product, and at n = 4,096 the whole solve took 0.25 s against 0.58 s for ``eigsh(B)``."""
    n = B.shape[0]
    if n <= 128:
        return float(linalg.eigvalsh(B, subset_by_index=[n - 1, n - 1])[0])
    from scipy.linalg import blas
    from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

    lower = B.T  # Fortran-ordered view of the symmetric, C-ordered B: no copy
    operator = LinearOperator((n, n), matvec=lambda x: blas.dsymv(1.0, lower, x, lower=1), dtype=np.float64)
    # ARPACK's tolerance bounds the Ritz residual; the eigenvalue's error is about its square
    # (measured at n = 4,096: 1e-15 relative with tol 1e-8)
    try:
        return float(eigsh(operator, k=1, which="LA", v0=np.ones(n), tol=1e-8, return_eigenvectors=False)[0])
    except ArpackNoConvergence:  # the dense solver always answers; B is in memory already
        return float(linalg.eigvalsh(B, subset_by_index=[n - 1, n - 1])[0])


def slda_memory_bytes(n_features: int) -> int:
    """Working memory of :func:`greedy_slda` on ``n_features``: ``B`` and one work matrix of
    ``n x n`` float64 (a given ``B`` that needs a ridge takes one copy more)."""
    return int(8 * 2 * n_features**2)


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
        Which greedy passes to run; a pass not run has an empty order and empty objectives
        (:attr:`SLDAPath.directions` lists those run), and the dual curve is the one pass run.
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
            elif check_real(reg, "reg", low=0.0) == 0:
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
    forward_order = backward_order = np.zeros(0, dtype=np.intp)
    forward_objective = backward_objective = np.zeros(0)
    if direction in ("both", "backward"):
        # the lower triangle of B^-1, in place: all the elimination reads
        inverse, info = lapack.dpotri(factor, lower=1, overwrite_c=1)
        if info != 0:
            raise InputError(f"Inverting the within-class scatter failed (LAPACK dpotri info = {info}): it is singular "
                             "to working precision. Give a larger reg.")
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
    dual = dual_curve(forward_objective, backward_objective)
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


def _low_rank_path(a, U, rho, classes, direction, progress=None):
    """Every output of :class:`SLDAPath` from ``a`` and the factor ``U`` of ``B - rho I``, in
    ``O(n^2 m)`` time and ``O(n m)`` memory (``B`` itself is formed only if the result is asked for it)."""
    n, m = U.shape
    K = _woodbury_core(U, rho)
    fisher = _woodbury_solve(U, rho, a, core=K)  # B^-1 a
    total = n * (2 if direction == "both" else 1)
    forward_order = backward_order = np.zeros(0, dtype=np.intp)
    forward_objective = backward_objective = np.zeros(0)
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

