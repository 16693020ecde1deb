"""Sufficient dimensionality reduction, alone and with side information (SDR, SDR-SI).

SDR (Globerson & Tishby, JMLR 2003) treats a non-negative samples x features table as a joint
distribution ``P(i, j)`` of a sample ``i`` and a feature ``j`` (for images: a picture as a
distribution of intensity over its pixels). It looks for ``d`` functions of the features,
``phi_j`` in ``R^d``, whose expectations under each sample's distribution over the features,
``<phi>_i = sum_j P(j | i) phi_j``, keep as much information about the samples as possible. That
information is the mutual information of the maximum-entropy distribution that agrees with
``P`` on both marginals and on every measurement ``<phi>_i``, which has the log-bilinear form

    p~(j | i) = exp(psi_i . phi_j + b_j) / Z_i                                   (1)

and, by the Pythagorean property of that projection,

    I_M(phi; P) = I[P] - min_{psi, b} KL[P || p~].                               (2)

SDR with irrelevance statistics (Globerson, Chechik & Tishby, UAI 2003; "SDR-SI" in Shashua &
Wolf, ECCV 2004, Sec. 6, who compare against it on the AR faces) shares ``phi`` between a main
table ``P+`` and a side table ``P-`` over the same features and maximises

    L(phi) = I_M(phi; P+) - gamma I_M(phi; P-),                                  (3)

keeping the structure of the main data that the side data do not have. A sample is represented by
its measurement ``<phi>_i`` (:meth:`SDRResult.transform`): a linear combination of its features
normalised to sum one.

How it is solved here: the inner minimum of (2) is convex in ``(psi, b)`` for fixed ``phi``;
(3) is minimised as ``KL[P+ || p~+] - gamma min KL[P- || p~-]`` jointly over ``(phi, psi+, b+)``
by L-BFGS, with the side minimum solved to a tight tolerance (warm-started) at every evaluation,
so that its gradient in ``phi`` is ``G-^T psi-`` at the side optimum (the envelope theorem). That
inner minimum is solved by Newton's method (exact Hessian, the samples' blocks eliminated) up to
1,000 features, and by L-BFGS above. The model depends on ``(phi, psi)`` only through
``psi phi^T``, so L-BFGS is free to drift to a ``phi`` whose columns are nearly dependent (there
the side minima cannot be solved to working precision): whenever ``phi``'s condition passes
REBALANCE_CONDITION the same model is restated with ``phi`` centred and orthonormal and L-BFGS
goes on from there. The
sample weights ``P(i)`` are kept as given by the data (the row sums), which removes the row
normalisers of the joint model. ``phi`` starts from the maximiser of (3) in the limit of weak
dependence (a correspondence analysis of the main table against the side table), so the result
is deterministic and, on data as weakly dependent as images, the start is close to the end.

References
----------
.. A. Globerson and N. Tishby, "Sufficient dimensionality reduction", JMLR 3:1307-1331, 2003.
.. A. Globerson, G. Chechik and N. Tishby, "Sufficient dimensionality reduction with irrelevance
   statistics", UAI 2003.
.. A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral approach",
   ECCV 2004 (compares against SDR-SI on AR faces).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize, special

from ..errors import InputError
from ..matrix import dense_matrix
from ..matrix.threads import blas_threads_for
from ..progress import ProgressCallback, report, warn_not_converged
from ..validation import check_positive_int, check_real

__all__ = ["SDRResult", "sdr_si", "conditional_table", "mutual_information"]

#: The side minimum's gradient tolerance, relative to the size of its starting gradient: the
#: envelope gradient in ``phi`` is only as accurate as that minimum.
INNER_GTOL = 1e-11
#: A side minimum that stops short of INNER_GTOL (the line search meets rounding) still counts
#: as solved when its gradient is this small relative to the independent model's.
INNER_ACCEPT = 1e-5
INNER_MAX_ITER = 2000
#: Newton steps at most for one inner minimum (it converges quadratically: 5-30 on tables).
NEWTON_MAX_ITER = 200
#: Up to this many features the inner minimum is solved by Newton's method on an n x n system
#: (the samples' blocks eliminated); above it, by L-BFGS, whose steps cost O(q n d) only. On
#: sparse count tables L-BFGS needed its 2,000 iterations per minimum and still stopped short.
NEWTON_FEATURE_LIMIT = 1000
#: The condition number of phi (centred, in the feature marginal's metric) past which the outer
#: iteration restates the model with phi orthonormal (:func:`_balanced`).
REBALANCE_CONDITION = 1e3


def conditional_table(X, what: str = "X"):
    """``(P(i), P(j | i))`` of a non-negative samples x features table: the row weights (summing
    to one) and each row divided by its sum. Refuses negative entries and rows that sum to zero."""
    X = dense_matrix(X, what)
    if X.min(initial=0.0) < 0:
        i, j = np.unravel_index(int(np.argmin(X)), X.shape)
        raise InputError(
            f"SDR models {what} as co-occurrence counts or intensities and needs non-negative values; "
            f"{what} has {X[i, j]:.4g} at sample {i}, feature {j}. Shift or rescale the features first "
            f"(for example subtract each feature's minimum over the training data).")
    totals = X.sum(axis=1)
    if np.any(totals <= 0):
        raise InputError(f"Sample {int(np.flatnonzero(totals <= 0)[0])} of {what} is all zeros: it has no "
                         f"distribution over the features. Remove it.")
    return totals / totals.sum(), X / totals[:, None]


def mutual_information(weights, conditional) -> float:
    """``I[P]`` in nats of the joint ``P(i, j) = weights_i conditional_ij``."""
    marginal = weights @ conditional
    ratio = np.divide(conditional, marginal, out=np.ones_like(conditional), where=conditional > 0)
    return float(weights @ special.xlogy(conditional, ratio).sum(axis=1))


def _fit_terms(phi, psi, b, table):
    """``KL[P || p~]`` of model (1) and its gradients in ``(phi, psi, b)``, for ``table``'s
    ``P``. In one q-wide array, overwritten in place: the inner L-BFGS calls this thousands of
    times, and the version with a new array per step took 4x as long (12 against 3 ms at 130 x
    2,400, d = 3)."""
    logits = psi @ phi.T
    logits += b
    logits -= logits.max(axis=1, keepdims=True)
    # the rows of P(j | i) sum to one: sum_j P(j | i) log p~(j | i) = sum_j P(j | i) logit_ij - log total_i
    fitted = np.einsum("ij,ij->i", table.conditional, logits)
    np.exp(logits, out=logits)
    totals = logits.sum(axis=1)
    kl = float(table.entropy_term - table.weights @ (fitted - np.log(totals)))
    logits *= (table.weights / totals)[:, None]  # P(i) p~(j | i)
    logits -= table.weighted  # G = P(i) (p~(j | i) - P(j | i))
    return kl, logits.T @ psi, logits @ phi, logits.sum(axis=0)


class _Table:
    """One table's constants: row weights, conditional rows, ``sum P log P(j|i)`` and ``I[P]``."""

    def __init__(self, X, what):
        self.weights, self.conditional = conditional_table(X, what)
        self.weighted = self.weights[:, None] * self.conditional  # P(i, j)
        self.entropy_term = float(self.weights @ special.xlogy(self.conditional, self.conditional).sum(axis=1))
        self.marginal = self.weights @ self.conditional  # P(j)
        self.information = mutual_information(self.weights, self.conditional)
        self.n_rows = self.conditional.shape[0]
        # L-BFGS works in variables scaled by the curvature's diagonal (P(i) for psi_i, P(j) for
        # b_j and phi_j): image pixels each carry ~1/n of the mass and would otherwise crawl
        self.row_scale = 1.0 / np.sqrt(self.weights)
        self.column_scale = 1.0 / np.sqrt(np.maximum(self.marginal, 1e-12 / self.conditional.shape[1]))

    def start(self, d):
        """``psi = 0`` and ``b = log P(j)``: the independent model, ``p~(j | i) = P(j)``."""
        return np.zeros((self.n_rows, d)), np.log(np.maximum(self.marginal, 1e-300))


INNER_SOLVERS = ("auto", "newton", "lbfgs")


def _maximum_entropy_fit(phi, table: _Table, psi=None, b=None, inner: str = "auto"):
    """The convex inner problem of (2): ``min over (psi, b)`` of ``KL[P || p~]`` for fixed ``phi``.
    Returns ``(kl, psi, b, converged)``. ``inner``: Newton's method, L-BFGS, or ("auto") Newton
    up to NEWTON_FEATURE_LIMIT features and L-BFGS above."""
    if inner == "newton" or (inner == "auto" and phi.shape[0] <= NEWTON_FEATURE_LIMIT):
        return _newton_fit(phi, table, psi, b)
    return _lbfgs_fit(phi, table, psi, b)


def _log_model(phi, psi, b):
    """``log p~(j | i)`` of model (1) and ``p~`` itself."""
    logits = psi @ phi.T + b
    logits -= logits.max(axis=1, keepdims=True)
    logits -= np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return logits, np.exp(logits)


def _newton_fit(phi, table: _Table, psi=None, b=None):
    """:func:`_maximum_entropy_fit` by damped Newton steps.

    With ``H_i = P(i) (diag(p_i) - p_i p_i^T)`` the curvature of row ``i``'s logits, the Hessian
    in ``(psi_i, b)`` has blocks ``A_i = phi^T H_i phi`` (d x d), ``U_i = H_i phi`` and ``sum_i
    H_i``; the ``psi_i`` are eliminated row by row, leaving one n x n Schur complement for ``b``.
    A small ridge covers the model's gauge (``b`` plus a constant, and ``psi`` along a ``phi``
    constant over the features) and is raised when the system is not positive definite; each
    step is backtracked until the divergence decreases."""
    from scipy import linalg

    weights, conditional = table.weights, table.conditional
    d, (q, n) = phi.shape[1], conditional.shape
    warm = None if psi is None else (np.array(psi, dtype=np.float64), np.array(b, dtype=np.float64))
    outer = phi[:, :, None] * phi[:, None, :]  # phi_j phi_j^T, one per feature

    def divergence(psi, b):
        log_p, p = _log_model(phi, psi, b)
        return float(table.entropy_term - weights @ (conditional * log_p).sum(axis=1)), p

    def gradient(p):
        """The gradient in ``(psi, b)`` and its largest entry."""
        G = weights[:, None] * (p - conditional)
        g_psi, g_b = G @ phi, G.sum(axis=0)
        return g_psi, g_b, max(float(np.abs(g_psi).max()), float(np.abs(g_b).max()))

    cold = table.start(d)
    kl, p = divergence(*cold)
    gtol = INNER_GTOL * max(gradient(p)[2], 1e-300)
    psi, b = cold
    if warm is not None:
        # a warm start from another phi can be far worse than the independent model (whose
        # divergence is I[P]): Newton then starts from whichever is better
        warm_kl, warm_p = divergence(*warm)
        if warm_kl < kl:
            (psi, b), kl, p = warm, warm_kl, warm_p
    ridge, converged = 1e-12, False
    for _ in range(NEWTON_MAX_ITER):
        g_psi, g_b, largest = gradient(p)
        if largest <= gtol:
            converged = True
            break
        m = p @ phi  # each row's model mean of phi
        A = weights[:, None, None] * (np.tensordot(p, outer, axes=1) - m[:, :, None] * m[:, None, :])
        U = weights[:, None, None] * p[:, :, None] * (phi[None, :, :] - m[:, None, :])  # H_i phi
        scale = max(float(np.abs(A).max(initial=0.0)), float((weights @ p).max()), 1e-300)
        step = None
        while step is None and ridge < 1.0:
            try:
                A_inv = np.linalg.inv(A + ridge * scale * np.eye(d))
                V = U @ A_inv  # U_i A_i^-1, row by row
                # sum_i V_i U_i^T as one matrix product over the samples' blocks (BLAS, not einsum)
                S = (np.diag(weights @ p) - (weights[:, None] * p).T @ p
                     - V.transpose(1, 0, 2).reshape(n, q * d) @ U.transpose(1, 0, 2).reshape(n, q * d).T)
                rhs = g_b - (V * g_psi[:, None, :]).sum(axis=(0, 2))
                delta_b = linalg.solve(S + ridge * scale * np.eye(n), rhs, assume_a="pos")
                delta_psi = (A_inv @ (g_psi - (U * delta_b[None, :, None]).sum(axis=1))[:, :, None])[:, :, 0]
                step = (delta_psi, delta_b)
            except (np.linalg.LinAlgError, linalg.LinAlgError):
                ridge *= 100.0
        if step is None:
            break
        slope = float(np.vdot(g_psi, step[0]) + np.vdot(g_b, step[1]))  # the Newton decrement, squared
        if slope <= 8 * np.finfo(float).eps * max(abs(kl), 1e-300):
            break  # the decrease left is below the divergence's rounding: a minimum to working precision
        t = 1.0
        while t > 1e-10:
            trial = divergence(psi - t * step[0], b - t * step[1])
            if trial[0] <= kl - 1e-4 * t * slope:
                break
            t *= 0.5
        if t <= 1e-10 or trial[0] > kl:  # no decrease left in floating point
            break
        psi, b = psi - t * step[0], b - t * step[1]
        kl, p = trial
    converged = converged or gradient(p)[2] <= INNER_ACCEPT / INNER_GTOL * gtol
    return kl, psi, b, converged


def _lbfgs_fit(phi, table: _Table, psi=None, b=None):
    """:func:`_maximum_entropy_fit` by L-BFGS in variables scaled by the curvature's diagonal."""
    d = phi.shape[1]
    scaling = np.concatenate([np.repeat(table.row_scale, d), table.column_scale])

    def fun(u):
        v = u * scaling
        kl, _, g_psi, g_b = _fit_terms(phi, v[: table.n_rows * d].reshape(table.n_rows, d), v[table.n_rows * d:], table)
        return kl, np.concatenate([g_psi.ravel(), g_b]) * scaling

    cold = np.concatenate([part.ravel() for part in table.start(d)]) / scaling
    # tolerances relative to the gradient of the independent model, whatever the start
    gtol = INNER_GTOL * max(float(np.abs(fun(cold)[1]).max()), 1e-300)
    u0 = cold if psi is None else np.concatenate([psi.ravel(), b]) / scaling
    result = optimize.minimize(fun, u0, jac=True, method="L-BFGS-B",
                               options=dict(maxiter=INNER_MAX_ITER, gtol=gtol, ftol=1e-14, maxcor=20))
    v = result.x * scaling
    converged = bool(result.success or np.abs(result.jac).max() <= INNER_ACCEPT / INNER_GTOL * gtol)
    return float(result.fun), v[: table.n_rows * d].reshape(table.n_rows, d), v[table.n_rows * d:], converged


@dataclass(frozen=True, eq=False)
class SDRResult:
    """Outcome of :func:`sdr_si`.

    Attributes
    ----------
    feature_directions : ndarray, shape (n_features, d)
        ``phi``: the functions of the features whose expectations represent a sample.
    main_coordinates, side_coordinates : ndarray
        ``psi+`` (main samples x d) and ``psi-`` (side samples x d, empty without side data) of
        the maximum-entropy models (1).
    relevant_information, irrelevant_information : float
        ``I_M(phi; P+)`` and ``I_M(phi; P-)`` in nats (2); ``irrelevant_information`` is 0
        without side data.
    main_information, side_information : float
        ``I[P+]`` and ``I[P-]``, the most either could be.
    objective : float
        ``L = relevant_information - gamma irrelevant_information`` (3).
    gamma : float
    n_iter : int
        Outer L-BFGS iterations.
    converged : bool
        The outer iteration met its tolerance (and every side minimum met its own).
    stopped : bool
        The ``progress`` callback asked to stop (by returning ``False``).
    history : tuple of float
        ``L`` after every outer iteration.
    message : str
        The optimiser's message.
    """

    feature_directions: np.ndarray
    main_coordinates: np.ndarray
    side_coordinates: np.ndarray
    relevant_information: float
    irrelevant_information: float
    main_information: float
    side_information: float
    objective: float
    gamma: float
    n_iter: int
    converged: bool
    stopped: bool
    history: tuple
    message: str

    def transform(self, X) -> np.ndarray:
        """Each sample's measurement ``<phi>_i = sum_j P(j | i) phi_j`` (samples x d)."""
        X = dense_matrix(X)
        if X.shape[1] != self.feature_directions.shape[0]:
            raise InputError(f"X has {X.shape[1]} features; the reduction was fitted on "
                             f"{self.feature_directions.shape[0]}.")
        return conditional_table(X)[1] @ self.feature_directions


def _initial_directions(main: _Table, side: _Table | None, gamma, d):
    """The maximiser of (3) in the limit of weak dependence, where ``I_M`` is half the chi-square
    of the table projected on ``phi`` (correspondence analysis, and its side-data analogue): the
    leading eigenvectors of ``D^-1/2 (A+ - gamma A-) D^-1/2`` with ``A = R^T diag(P(i)) R``, ``R``
    the conditional rows minus the feature marginal and ``D`` the main feature marginal. The
    product is low rank, so the eigenproblem is of the samples' size."""
    root = np.sqrt(np.maximum(main.marginal, 1e-300))

    def whitened_rows(table):
        centred = table.conditional - table.marginal
        return np.sqrt(table.weights)[:, None] * centred / root

    blocks, signs = [whitened_rows(main)], [np.ones(main.n_rows)]
    if side is not None and gamma > 0:
        blocks.append(whitened_rows(side))
        signs.append(np.full(side.n_rows, -gamma))
    basis, triangle = np.linalg.qr(np.vstack(blocks).T)
    values, vectors = np.linalg.eigh(triangle @ (np.concatenate(signs)[:, None] * triangle.T))
    leading = basis @ vectors[:, ::-1][:, :d]
    directions = np.zeros((main.conditional.shape[1], d))
    # phi^T D phi = I; a feature no main sample has (P(j) = 0) gets phi_j = 0: dividing by its
    # root of 1e-150 gave it phi of 1e133, and the fit nothing (I_M = 0)
    present = main.marginal > 0
    directions[present, : leading.shape[1]] = leading[present] / root[present, None]
    return directions


def _condition(phi, marginal) -> float:
    """The condition number of ``phi``'s columns centred over the features, in the main feature
    marginal's metric (infinite when they are dependent)."""
    weighted = np.sqrt(marginal)[:, None] * (phi - marginal @ phi)
    # from the d x d Gram matrix (checked every iteration: an SVD of the n x d matrix cost 8 % of
    # the AR faces' SDR-SI fits); its eigenvalues are the squared singular values
    eigenvalues = np.linalg.eigvalsh(weighted.T @ weighted)
    return float(np.sqrt(eigenvalues[-1] / eigenvalues[0])) if eigenvalues[0] > 0 else np.inf


def _balanced(phi, marginal):
    """The same model (1) restated: ``phi`` centred (by the marginal's mean; a shift of every
    ``phi_j`` changes each row's logits by a constant) and made orthonormal in the marginal's
    metric, ``phi_new = phi_c R^-1``; returns it and ``R^T``, with which ``psi_new = psi R^T``
    keeps ``psi phi^T``. Dependent columns cannot be restated: ``(phi, None)``."""
    centred = phi - marginal @ phi
    _, R = np.linalg.qr(np.sqrt(marginal)[:, None] * centred)
    if not np.all(np.abs(np.diag(R)) > 1e-12 * np.abs(R).max(initial=0.0)):
        return phi, None
    return linalg.solve_triangular(R, centred.T, trans="T").T, R.T


def _restated(phi, psi, marginal, state):
    """``(phi, psi)`` with phi centred and orthonormal (the same model, the side's warm start in
    ``state`` restated too), or None while phi's condition is within REBALANCE_CONDITION, and
    where its columns are dependent (a start with fewer directions than asked for keeps zero
    columns): restarting from the same point would only cost L-BFGS its memory."""
    if _condition(phi, marginal) <= REBALANCE_CONDITION:
        return None
    phi, to_new = _balanced(phi, marginal)
    if to_new is None:
        return None
    state["side"] = None if state["side"] is None else (state["side"][0] @ to_new, state["side"][1])
    return phi, psi @ to_new


def _rebalanced_lbfgs(fun, start, after_iteration, restated, history, max_iter, options):
    """L-BFGS-B on ``fun`` from ``start``, in rounds: after each iteration ``restated(v)`` gives
    the iterate with phi centred and orthonormal once phi's condition passed REBALANCE_CONDITION
    (None before), and a new round starts from it. SciPy ends a round when the callback raises
    StopIteration and returns the last iterate.

    The model depends on ``(phi, psi)`` only through ``psi phi^T``: L-BFGS drifts along that
    freedom (``phi M``, ``psi M^-T``) until a combination of phi's columns is nearly constant over
    the features, where the side minimum's Newton steps crawl (on the UCI wine turns, phi's
    condition 1e8: 200 steps, the divergence still falling and 1.8-3.5 times the minimum a solve
    on an orthonormal basis of phi finds, counted as converged; the run's objective 2.3 times its
    true value, reported as converged)."""
    pending = {"start": None}

    def callback(v):
        after_iteration(v)
        pending["start"] = restated(v)
        if pending["start"] is not None:
            raise StopIteration

    while True:
        result = optimize.minimize(fun, start, jac=True, method="L-BFGS-B", callback=callback,
                                   options=dict(options, maxiter=max_iter - len(history)))
        if pending["start"] is None or len(history) >= max_iter:
            result.success = result.success and pending["start"] is None
            return result
        start, pending["start"] = pending["start"], None


def _checked(X, side, n_components, gamma, max_iter, tol, inner):
    """The checks of :func:`sdr_si`: ``(main table, side table or None, d, gamma, max_iter, tol)``,
    gamma 0 without side data."""
    main = _Table(X, "X")
    side_table = _Table(side, "side") if side is not None else None
    n = main.conditional.shape[1]
    if side_table is not None and side_table.conditional.shape[1] != n:
        raise InputError(f"The side data have {side_table.conditional.shape[1]} features; X has {n}.")
    d = check_positive_int(n_components, "n_components")
    if d >= n:
        raise InputError(f"n_components must be below the number of features ({n}); got {d}.")
    gamma = check_real(gamma, "gamma", low=0.0)
    if side_table is None:
        gamma = 0.0
    max_iter = check_positive_int(max_iter, "max_iter")
    tol = check_real(tol, "tol", low=0.0, low_open=True)
    if inner not in INNER_SOLVERS:
        raise InputError(f"inner must be one of {', '.join(INNER_SOLVERS)}; got {inner!r}.")
    return main, side_table, d, gamma, max_iter, tol


def sdr_si(X, side=None, n_components: int = 2, gamma: float = 1.0, max_iter: int = 500, tol: float = 1e-5,
           progress: ProgressCallback | None = None, inner: str = "auto") -> SDRResult:
    """Sufficient dimensionality reduction (``side=None``) or SDR with side information.

    Maximises ``I_M(phi; P+) - gamma I_M(phi; P-)`` (Eq. 3 of the module docstring; Globerson,
    Chechik & Tishby, UAI 2003), with ``P+`` the main table ``X`` and ``P-`` the side table.

    Parameters
    ----------
    X : array_like, shape (n_samples, n_features)
        Non-negative main data (counts, intensities); every sample needs a positive sum.
    side : array_like, shape (n_side, n_features), optional
        Non-negative side data over the same features, whose structure is to be left out.
    n_components : int
        ``d``, the number of functions ``phi`` (at most ``n_features - 1``).
    gamma : float
        Weight of the side information, ``>= 0`` (0: plain SDR of the main data).
    max_iter : int
        Most outer L-BFGS iterations.
    tol : float
        Outer stopping tolerance: the run stops when an iteration improves ``L`` by less than
        ``tol * I[P+]`` (L-BFGS's ``ftol``) or the gradient falls below ``tol`` times its start.
    progress : callable(report), optional
        Called after every outer iteration with a :class:`core.progress.Progress` whose
        ``objective`` is ``L``; returning ``False`` stops the run. A run that ends unconverged
        (and was not stopped) warns ``ConvergenceWarning``.
    inner : {"auto", "newton", "lbfgs"}
        How each inner minimum of (2) is solved: damped Newton steps on the exact Hessian (the
        samples' blocks eliminated, an n x n system per step; to ~1e-11 of the gradient in 5-30
        steps), L-BFGS (O(q n d) per step; on sparse count tables it can need thousands of
        steps per minimum), or "auto": Newton up to 1,000 features, L-BFGS above.
        ``benchmarks/bench_sdr.py`` compares the two.

    Returns
    -------
    SDRResult
    """
    main, side_table, d, gamma, max_iter, tol = _checked(X, side, n_components, gamma, max_iter, tol, inner)
    n = main.conditional.shape[1]
    side_information = side_table.information if side_table is not None else 0.0

    phi0 = _initial_directions(main, side_table, gamma, d)
    psi0, b0 = main.start(d)
    q = main.n_rows
    # the side's last minimum (a warm start), whether every side minimum was solved, and the
    # objective L at the last evaluated point (read by the iteration callback)
    state = {"side": None, "side_converged": True, "objective": None, "at": None}

    scaling = np.concatenate([np.repeat(main.column_scale, d), np.repeat(main.row_scale, d), main.column_scale])

    def unpack(u):
        v = u * scaling
        return v[: n * d].reshape(n, d), v[n * d: n * d + q * d].reshape(q, d), v[n * d + q * d:]

    def side_term(phi):
        if side_table is None or gamma == 0.0:
            return 0.0, np.zeros_like(phi)
        warm = state["side"] or (None, None)
        kl, psi, b, ok = _maximum_entropy_fit(phi, side_table, *warm, inner=inner)
        state["side"], state["side_converged"] = (psi, b), state["side_converged"] and ok
        return kl, _fit_terms(phi, psi, b, side_table)[1]

    def fun(v):
        phi, psi, b = unpack(v)
        kl, g_phi, g_psi, g_b = _fit_terms(phi, psi, b, main)
        side_kl, side_g_phi = side_term(phi)
        value = kl - gamma * side_kl
        state["at"] = v.copy()
        state["objective"] = (main.information - kl) - gamma * (side_information - side_kl)
        return value, np.concatenate([(g_phi - gamma * side_g_phi).ravel(), g_psi.ravel(), g_b]) * scaling

    v0 = np.concatenate([phi0.ravel(), psi0.ravel(), b0]) / scaling
    gtol = tol * max(float(np.abs(fun(v0)[1]).max()), 1e-300)
    history, stop = [], {"asked": False}

    def after_iteration(v):
        if state["at"] is None or not np.array_equal(state["at"], v):
            fun(v)  # L-BFGS-B accepts its last evaluation, so this is rarely needed
        history.append(float(state["objective"]))
        if report(progress, len(history), max_iter, history[-1]):
            stop["asked"] = True
            raise StopIteration

    def restated(v):
        phi, psi, b = unpack(v)
        new = _restated(phi, psi, main.marginal, state)
        return None if new is None else np.concatenate([new[0].ravel(), new[1].ravel(), b]) / scaling

    # the tables' products are small enough for one BLAS thread (core.matrix.threads)
    with blas_threads_for(q * n * d):
        result = _rebalanced_lbfgs(fun, v0, after_iteration, restated, history, max_iter,
                                   dict(ftol=tol * main.information, gtol=gtol, maxcor=20))
    v, n_iter = result.x, len(history)
    message = "stopped by the progress callback" if stop["asked"] else str(result.message)
    phi, psi, b = unpack(v)
    # the main coordinates are L-BFGS's; refit them exactly so I_M is the maximum-entropy value of (2)
    relevant_kl, psi, _, _ = _maximum_entropy_fit(phi, main, psi, b, inner=inner)
    if side_table is not None:
        side_kl, side_psi, _, side_ok = _maximum_entropy_fit(phi, side_table, *(state["side"] or (None, None)),
                                                             inner=inner)
        irrelevant = side_table.information - side_kl
    else:
        side_psi, irrelevant, side_ok = np.zeros((0, d)), 0.0, True
    relevant = main.information - relevant_kl
    converged = bool(result.success) and side_ok and state["side_converged"] and not stop["asked"]
    if not converged and not stop["asked"]:
        warn_not_converged("SDR-SI", n_iter, f"{message}; raise max_iter or tol")
    return SDRResult(
        feature_directions=phi, main_coordinates=psi, side_coordinates=side_psi,
        relevant_information=float(relevant), irrelevant_information=float(irrelevant),
        main_information=main.information, side_information=side_information,
        objective=float(relevant - gamma * irrelevant), gamma=float(gamma), n_iter=n_iter,
        converged=converged, stopped=stop["asked"], history=tuple(history),
        message=message)
