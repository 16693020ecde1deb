"""What Q-alpha and kernel Q-alpha share: the checks of their common parameters, the scaling that
side information puts on the weights, the sign of alpha and what a result says about itself.

Private: :mod:`core.selection.qalpha` and :mod:`core.selection.kernel_qalpha` import it, and their docstrings hold the
references ([WS03]: Wolf & Shashua, ICCV 2003; [SW04]: Shashua & Wolf, ECCV 2004).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import ArpackNoConvergence, eigsh

from ..errors import InputError
from ..progress import report
from ..validation import check_positive_int, check_real

#: Largest weight of side information: beyond it only the side information counts (the same
#: alpha), and products with it approach the end of float64's range.
LAM_MAX = 1e12

INITS = ("uniform", "random")


def check_clusters(n_samples: int, k, what: str = "Q-alpha") -> int:
    """``k`` checked against the data: at least 2 samples and ``1 <= k < n_samples`` clusters."""
    if n_samples < 2:
        raise InputError(f"{what} needs at least 2 samples; got {n_samples}.")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k < n_samples:
        raise InputError(f"k (the number of clusters) must be an integer with 1 <= k < n_samples "
                         f"= {n_samples}; got {k!r}.")
    return int(k)


def check_settings(*, lam, init: str, n_init, max_iter):
    """``(lam, n_init, max_iter)`` checked as both algorithms take them, with no data needed:
    ``0 <= lam <= LAM_MAX``, a known ``init``, positive counts."""
    lam = check_real(lam, "lam", low=0.0, high=LAM_MAX)
    if init not in INITS:
        raise InputError(f"init must be 'uniform' or 'random'; got {init!r}.")
    return lam, check_positive_int(n_init, "n_init"), check_positive_int(max_iter, "max_iter")


def orient(alpha):
    """Eigenvectors have no sign: orient alpha so that its weights sum to a positive number."""
    return -alpha if alpha.sum() < 0 else alpha


def side_scaling(diagonal, lam) -> np.ndarray:
    """``diag(S)^(1/2)`` with ``S = (D + lam I)^-1`` ([SW04] Def. 3: alpha is the leading
    eigenvector of ``S G``, solved in the symmetric form ``S^1/2 G S^1/2``), refusing ``lam = 0``
    with a vanishing ``D``."""
    if lam == 0 and np.any(diagonal <= 0):
        raise InputError(f"{int(np.sum(diagonal <= 0))} feature(s) have zero side variance, "
                         "so lam = 0 is not admissible ([SW04] Def. 3); use lam > 0.")
    return 1.0 / np.sqrt(diagonal + lam)


def result_warnings(alpha, history, converged, failures=()) -> tuple[tuple, bool]:
    """What a result must say about itself, and whether it may count as converged.

    ``failures`` are ``(iteration, what failed)`` of inner solvers: any makes the result unconverged."""
    notes = []
    if failures:
        first, what = failures[0]
        notes.append(f"The inner eigensolver failed in {len(failures)} iteration(s), first in iteration {first}: "
                     f"{what}. The weights are not a converged solution.")
        converged = False
    if not np.isfinite(history).all():
        notes.append("The objective stopped being finite during the iteration; the weights are those of the "
                     "last iteration and are not a converged solution.")
        converged = False
    negative = float(-alpha[alpha < 0].sum())
    if negative > 1e-3 * float(np.abs(alpha).sum()):
        notes.append(f"{100 * negative / float(np.abs(alpha).sum()):.1f}% of the weights' mass is negative: the "
                     "positive weights of [WS03] do not come out for this operator (strong pairwise side "
                     "information or the gap criterion can do this). Rank by the weights with care.")
    return tuple(notes), converged


# ---------------------------------------------------------------------------- convergence
@functools.lru_cache(maxsize=None)
def lapack(name: str, dtype=np.float64):
    """SciPy's LAPACK routine ``name`` for ``dtype``, looked up once: the iterations call ``geqrf``,
    ``orgqr``, ``gesdd``, ``gelss``, ``syev`` and ``trtri`` on k x k and q x k arrays directly, where
    NumPy's wrappers cost several times the work (a step on 55 x 101: 92 against 132 us)."""
    return linalg.lapack.get_lapack_funcs(name, dtype=np.dtype(dtype))


def norm(x) -> float:
    """``np.linalg.norm(x)`` of a real array as NumPy computes it, the square root of the flattened
    array's dot product with itself, without its dispatch (0.6 against 1.6 us on 100 values): the
    iterations take its norms a hundred times a run."""
    flat = x.ravel(order="K")  # in memory order, as NumPy sums
    return math.sqrt(flat.dot(flat))


def eigen_residual(beta, image):
    """Rayleigh quotient ``theta = beta^T C beta`` of a unit ``beta`` and its relative eigen-residual
    ``||C beta - theta beta|| / ||C beta||`` (the sine of the angle between ``beta`` and ``C beta``).

    ``||C beta||`` is at most ``||C||_2``, so the residual relative to the operator's norm is at
    most this one: a test against it is never looser than one against ``||C||_2``."""
    theta = float(beta @ image)
    size = norm(image)
    if size == 0.0:  # beta in C's null space: an eigenvector, the leading one only if C = 0
        return theta, 1.0
    return theta, norm(image - theta * beta) / size


def subspace_residual(Q, Z):
    """``||Z - Q Q^T Z||_F / ||Z||_2`` for ``Z = A Q`` and orthonormal ``Q``: zero exactly when
    ``Q`` spans an invariant subspace of ``A``. ``||A Q||_2 <= ||A||_2``, so, as in
    :func:`eigen_residual`, the test is never looser than one relative to ``||A||_2``."""
    # the k x k Z^T Z's largest eigenvalue is ||Z||_2^2, cheaper than an SVD of Z; by LAPACK's syev
    # called directly (1.4 us at k = 2 against 8.8 by NumPy's eigvalsh, a tenth of a small step)
    gram = np.asarray(Z.T @ Z, dtype=np.float64)
    values, _, info = lapack("syev")(gram, compute_v=0)
    if info != 0:
        values = np.linalg.eigvalsh((gram + gram.T) / 2)
    size = float(np.sqrt(max(values[-1], 0.0)))
    if size == 0.0:
        return 1.0
    return norm(Z - Q @ (Q.T @ Z)) / size



def leading_lanczos(op, beta0, eig_tol):
    """ARPACK's leading eigenvector; on failure its best Ritz vector (or ``beta0``) and why."""
    n = op.shape[0]
    try:
        _, vectors = eigsh(op, k=1, which="LA", v0=beta0, tol=eig_tol, ncv=min(n, 20), maxiter=max(1000, 10 * n))
        return vectors[:, 0], None
    except ArpackNoConvergence as exc:
        found = exc.eigenvectors.shape[1] > 0
        return (exc.eigenvectors[:, 0] if found else beta0), f"ARPACK (eigsh) did not converge: {exc}"


class IterationTrace:
    """What one start records per iteration, and whether it ends: converged (both residuals at
    most ``tol`` and no inner solver failed), stopped by the progress callback, or out of iterations."""

    def __init__(self, handover=None):
        self.history, self.residuals, self.failures = [], [], []
        self.converged = self.stopped = self.handed_over = False
        self.n_iter, self.eigenvalue = 0, np.nan
        #: iterates that were an extrapolation of earlier ones (Q-alpha's Anderson mixing)
        self.mixed = 0
        #: ``handover(trace)``, asked after each unsettled iterate: True ends the run there so that
        #: another method goes on from it (Q-alpha's ascent after the alternation)
        self.handover = handover

    def record(self, n_iter, objective, eigenvalue, alpha_residual, Q_residual, tol, failure, progress, max_iter):
        """Note one iteration's iterate; True when the run ends with it."""
        self.n_iter, self.eigenvalue = n_iter, eigenvalue
        self.history.append(objective)
        self.residuals.append((alpha_residual, Q_residual))
        if failure is not None:
            self.failures.append((n_iter, failure))
        settled = max(alpha_residual, Q_residual) <= tol
        self.converged = settled and not self.failures
        if report(progress, n_iter, max_iter, objective) and not self.converged:
            self.stopped = True
        if not (settled or self.stopped or n_iter == max_iter) and self.handover is not None:
            self.handed_over = bool(self.handover(self))
        return settled or self.stopped or n_iter == max_iter or self.handed_over

    @classmethod
    def resumed(cls, run):
        """A trace that goes on from a run's record (its iterations count on)."""
        trace = cls()
        trace.history = list(run["history"])
        trace.residuals = [tuple(row) for row in run["residuals"]]
        trace.failures = list(run["failures"])
        trace.n_iter, trace.eigenvalue = run["n_iter"], run["eigenvalue"]
        trace.converged = run["converged"]
        trace.mixed = run.get("mixed", 0)
        return trace

    def revise(self, objective, eigenvalue, alpha_residual, Q_residual, tol):
        """Replace the last iterate's numbers by those recomputed another way (the certification of
        an accelerated run by products with the data); True when they pass ``tol``."""
        self.history[-1], self.eigenvalue = objective, eigenvalue
        self.residuals[-1] = (alpha_residual, Q_residual)
        settled = max(alpha_residual, Q_residual) <= tol
        self.converged = settled and not self.failures
        return settled

    def result(self, alpha, Q):
        return dict(alpha=alpha, Q=Q, history=np.asarray(self.history), n_iter=self.n_iter,
                    converged=self.converged, eigenvalue=self.eigenvalue, stopped=self.stopped,
                    handed_over=self.handed_over, mixed=self.mixed,
                    residuals=np.asarray(self.residuals).reshape(-1, 2), failures=tuple(self.failures))


def continued_note(dtype, tol, before, continued, against) -> str:
    """What a result says when its run, whose residuals passed in ``dtype`` after ``before``'s
    iterations but not in float64 ``against`` (the data, the kernel matrix), went on in float64."""
    more = continued["n_iter"] - before["n_iter"]
    outcome = "converged" if continued["converged"] else "did not converge"
    return (f"In {np.dtype(dtype).name} the residuals fell below tol = {tol:g} after {before['n_iter']} iteration(s), "
            f"but {against} in float64 they were {float(np.max(before['residuals'][-1])):.1e}: the run went on in "
            f"float64 and {outcome} in {more} more iteration(s).")


def checked_in_float64(run, *, residuals, eigenvalue, objective, Q, tol, dtype, against) -> tuple[dict, str | None]:
    """A run made in a lower precision, with its last iterate's ``residuals`` (alpha's, Q's),
    ``eigenvalue`` and ``objective`` recomputed in float64 (``against``: what they were computed
    with, for the note). Converged only if the residuals pass there too; the note says why not."""
    alpha_residual, Q_residual = residuals
    table = np.array(run["residuals"], dtype=np.float64)
    table[-1] = alpha_residual, Q_residual
    history = np.array(run["history"], dtype=np.float64)
    history[-1] = objective
    converged = max(alpha_residual, Q_residual) <= tol
    checked = dict(run, residuals=table, history=history, eigenvalue=eigenvalue, Q=Q, converged=converged)
    if converged:
        return checked, None
    return checked, (f"In {np.dtype(dtype).name} the residuals fell below tol = {tol:g}, but {against} in float64 "
                     f"they are {max(alpha_residual, Q_residual):.1e}: the working precision limits how far this "
                     "problem converges. Use dtype=np.float64 or a larger tol.")
