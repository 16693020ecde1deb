"""Sparse-learning baselines: multi-class models with an L2,1 penalty on the weights ``W``
(features x classes), whose row norms score the features; registered in
:data:`core.selection.scorers.SCORERS`.

- :func:`rfs`: robust feature selection, an L2,1 loss and an L2,1 penalty (Nie et al. 2010).
- :func:`l21_least_squares`: a squared (Frobenius) loss and an L2,1 penalty (Liu, Ji & Ye 2009).
- :func:`l21_logistic`: one-vs-rest logistic losses and an L2,1 penalty (Liu, Ji & Ye 2009).

Each runs until a certificate of optimality, not a small step, is below ``tol``: the relative
duality gap for the first two (the objective is then within ``tol`` of the optimum, relatively)
and the relative norm of the proximal gradient for the logistic one (zero exactly at the optimum).
The data are z-scored first, so the penalty ``gamma`` does not depend on the features' units.

The default ``tol`` of the first two, 1e-4, puts the objective within 0.01% of the optimum; the
top 50 then shares 49-50 features with a run to 1e-6 on colon and lung_small (iteratively
reweighted least squares closes the gap slowly: on colon 1e-4 takes 560 iterations, 1e-6 3,000).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from ..errors import InputError
from ..matrix.threads import blas_threads_for
from ..progress import warn_not_converged
from ..matrix import dense_matrix
from ..validation import as_labels, check_positive_int, check_real, zscores

__all__ = ["SparseModel", "rfs", "rfs_score", "l21_least_squares", "l21_score", "l21_logistic", "l21_logistic_score"]


@dataclass(frozen=True, eq=False)
class SparseModel:
    """A fitted L2,1 model: the weights, the scores (their row norms) and the convergence.

    Attributes
    ----------
    weights : ndarray, shape (n_features, n_classes)
    scores : ndarray, shape (n_features,)
        ``|w_i|``, the Euclidean norm of each feature's row.
    objective_history : ndarray
        The objective after each iteration.
    residual : float
        The final certificate: relative duality gap, or relative proximal-gradient norm.
    tol : float
    converged : bool
        ``residual <= tol``.
    """

    weights: np.ndarray
    scores: np.ndarray
    objective_history: np.ndarray
    residual: float
    tol: float
    converged: bool

    @property
    def n_iter(self) -> int:
        return int(self.objective_history.size)


def _checked(X, y, gamma, max_iter, tol):
    """The z-scored data, the one-hot labels and the checked options of every model here."""
    X = dense_matrix(X)
    classes, codes = np.unique(as_labels(y, X.shape[0], "y"), return_inverse=True)
    if classes.size < 2:
        raise InputError("These models need labels with at least two classes.")
    return (zscores(X), np.eye(classes.size)[codes], check_real(gamma, "gamma", low=0.0, low_open=True),
            check_positive_int(max_iter, "max_iter"), check_real(tol, "tol", low=0.0, low_open=True))


def _row_norms(M):
    return np.sqrt(np.einsum("ij,ij->i", M, M))


def _fit_reweighted(iterations, X, y, gamma, max_iter, tol) -> SparseModel:
    """A model whose ``iterations(Z, Y, gamma, max_iter, tol)`` solve a samples x samples system
    each (RFS, least squares) and return ``(W, history, gap)``: converged means gap <= tol."""
    Z, Y, gamma, max_iter, tol = _checked(X, y, gamma, max_iter, tol)
    q, n = Z.shape
    with blas_threads_for(q * q * n):  # thin products: one BLAS thread is faster (core.matrix.threads)
        W, history, gap = iterations(Z, Y, gamma, max_iter, tol)
    return SparseModel(W, _row_norms(W), history, gap, tol, gap <= tol)


def _finish(model, name):
    if not model.converged:
        warn_not_converged(name, model.n_iter, residual=model.residual, tol=model.tol, stacklevel=4)
    return model.scores


def rfs(X, y, gamma=1.0, max_iter=3000, tol=1e-4) -> SparseModel:
    """Robust feature selection (Nie, Huang, Cai & Ding, NIPS 2010, Eq. 3 and Algorithm 1).

    ``min_W ||X W - Y||_{2,1} + gamma ||W||_{2,1}``, ``Y`` the one-hot labels: an L2,1 loss (each
    sample's residual counts by its norm, so outliers weigh less than in a squared loss) and an
    L2,1 penalty (rows of ``W`` go to zero together). As the paper, with ``E = (Y - X W) / gamma``
    and ``U = [W; E]`` it solves ``min ||U||_{2,1}`` subject to ``A U = Y``, ``A = [X, gamma I]``, by
    ``U = D^-1 A^T (A D^-1 A^T)^-1 Y``, ``D_ii = 1 / (2 |u_i|)``: a samples x samples system per
    iteration, ``O(q^2 n)``.

    Convergence is the relative duality gap: ``V = 2 (A D^-1 A^T)^-1 Y``, scaled so that every row
    of ``A^T V`` has norm at most 1, is feasible for the dual ``max tr(Y^T V)``, and
    ``(|U|_{2,1} - tr(Y^T V)) / |U|_{2,1} <= tol``.
    """
    return _fit_reweighted(_rfs_iterations, X, y, gamma, max_iter, tol)


def _rfs_iterations(Z, Y, gamma, max_iter, tol):
    """The iterations of :func:`rfs`: the last ``W``, the objective after each iteration and the
    relative duality gap of that ``W``."""
    q, n = Z.shape
    weight_norms, error_norms = np.ones(n), np.ones(q)
    best_dual, history = -np.inf, []
    for iteration in range(max_iter):
        # D^-1 = 2 |u_i|, floored so that the system stays regular; the floor starts at the largest
        # row and falls tenfold every 20 iterations to 1e-12 of it, so that a row that went to
        # zero early (IRLS cannot bring it back fast) is not trapped there before the others settle
        floor = max(weight_norms.max(), error_norms.max()) * max(1e-12, 10.0 ** (-iteration / 20))
        system = (Z * (2 * np.maximum(weight_norms, floor))) @ Z.T
        system[np.diag_indices(q)] += gamma ** 2 * 2 * np.maximum(error_norms, floor)
        multipliers = linalg.cho_solve(linalg.cho_factor(system, check_finite=False), Y, check_finite=False)
        W = 2 * np.maximum(weight_norms, floor)[:, None] * (Z.T @ multipliers)
        E = 2 * np.maximum(error_norms, floor)[:, None] * (gamma * multipliers)
        weight_norms, error_norms = _row_norms(W), _row_norms(E)
        primal = weight_norms.sum() + error_norms.sum()
        dual_direction = 2 * multipliers
        largest = max(_row_norms(Z.T @ dual_direction).max(), gamma * _row_norms(dual_direction).max())
        # any feasible V bounds the optimum from below: keep the best bound met so far
        best_dual = max(best_dual, np.sum(Y * dual_direction) / max(largest, 1.0))
        gap = float((primal - best_dual) / primal)
        history.append(gamma * primal)
        if gap <= tol:
            break
    return W, np.asarray(history), gap


def rfs_score(X, y, **options):
    """RFS scores (:func:`rfs`); warns ``ConvergenceWarning`` if it did not converge."""
    return _finish(rfs(X, y, **options), "RFS")


def l21_least_squares(X, y, gamma=1.0, max_iter=3000, tol=1e-4) -> SparseModel:
    """L2,1-penalised least squares (Liu, Ji & Ye, UAI 2009, Eq. 2; Obozinski, Taskar & Jordan,
    Stat. Comput. 2010): ``min_W ||X W - Y||_F^2 + gamma ||W||_{2,1}``, ``Y`` the one-hot labels.

    Iteratively reweighted least squares in the sample space, ``W = D^-1 X^T (X D^-1 X^T + gamma
    I)^-1 Y`` with ``D^-1 = diag(2 |w_i|)``: ``O(q^2 n)`` per iteration. Convergence is the
    relative duality gap of the group lasso: with the residual ``R = Y - X W`` scaled to
    ``Theta`` so that ``max_i |x_i^T Theta| <= gamma / 2``, the dual value is
    ``|Y|^2 - |Y - Theta|^2``.
    """
    return _fit_reweighted(_least_squares_iterations, X, y, gamma, max_iter, tol)


def _least_squares_iterations(Z, Y, gamma, max_iter, tol):
    """The iterations of :func:`l21_least_squares`: the last ``W``, the objective after each
    iteration and the relative duality gap of that ``W``."""
    q, n = Z.shape
    norms, history = np.ones(n), []
    for _ in range(max_iter):
        spread = 2 * np.maximum(norms, 1e-12 * norms.max())
        system = (Z * spread) @ Z.T
        system[np.diag_indices(q)] += gamma
        W = spread[:, None] * (Z.T @ linalg.cho_solve(linalg.cho_factor(system, check_finite=False), Y,
                                                      check_finite=False))
        norms = _row_norms(W)
        residual = Y - Z @ W
        primal = np.sum(residual ** 2) + gamma * norms.sum()
        theta = residual * min(1.0, gamma / 2 / max(_row_norms(Z.T @ residual).max(), 1e-300))
        dual = np.sum(Y ** 2) - np.sum((Y - theta) ** 2)
        gap = float((primal - dual) / primal)
        history.append(primal)
        if gap <= tol:
            break
    return W, np.asarray(history), gap


def l21_score(X, y, **options):
    """Least-squares L2,1 scores (:func:`l21_least_squares`); warns if it did not converge."""
    return _finish(l21_least_squares(X, y, **options), "L2,1 least squares")


def _logistic_parts(Z, signs, W, b):
    """Mean one-vs-rest logistic loss and its gradients in ``W`` and ``b``."""
    margins = signs * (Z @ W + b)
    loss = np.mean(np.sum(np.logaddexp(0.0, -margins), axis=1))
    slope = -signs * np.exp(-np.logaddexp(0.0, margins)) / Z.shape[0]  # d loss / d (Z W + b)
    return loss, Z.T @ slope, slope.sum(axis=0)


def _group_shrink(V, threshold):
    norms = _row_norms(V)
    return V * np.maximum(0.0, 1.0 - threshold / np.maximum(norms, 1e-300))[:, None]


def l21_logistic(X, y, gamma=0.1, max_iter=5000, tol=1e-5) -> SparseModel:
    """L2,1-penalised logistic regression (Liu, Ji & Ye, UAI 2009, Eq. 3): one logistic task per
    class against the rest, ``min_{W, b} (1/q) sum_i sum_c log(1 + exp(-y_ic (x_i^T w_c + b_c)))
    + gamma_abs ||W||_{2,1}``, ``y_ic = +-1``, the intercepts ``b`` unpenalised.

    ``gamma`` is relative: ``gamma_abs = gamma * gamma_max``, ``gamma_max`` the smallest penalty
    at which every weight is zero (the largest row norm of the gradient at ``W = 0`` with the
    intercepts fitted), so ``gamma`` in ``(0, 1)`` keeps some features for any data. Solved by
    accelerated proximal gradient (FISTA, Beck & Teboulle 2009) with the step ``1 / L``,
    ``L = sigma_max([X, 1])^2 / (4 q)``, restarted when the objective rises (O'Donoghue & Candès
    2015). Converged when the proximal gradient's norm, relative to the gradient at zero, is at
    most ``tol``.
    """
    Z, Y, gamma, max_iter, tol = _checked(X, y, gamma, max_iter, tol)
    q, n = Z.shape
    signs = 2 * Y - 1
    if Y.shape[1] == 2:  # two classes: one task, the second is its mirror
        signs = signs[:, 1:]
    tasks = signs.shape[1]
    share = (signs > 0).mean(axis=0)
    b = np.log(share / (1 - share))  # the intercepts' optimum at W = 0
    _, gradient_at_zero, _ = _logistic_parts(Z, signs, np.zeros((n, tasks)), b)
    penalty = gamma * _row_norms(gradient_at_zero).max()
    reference = max(np.linalg.norm(gradient_at_zero), 1e-300)
    lipschitz = np.linalg.norm(np.hstack([Z, np.ones((q, 1))]), 2) ** 2 / (4 * q)
    with blas_threads_for(q * n * tasks):  # thin products: one BLAS thread is faster (core.matrix.threads)
        W, history, residual = _logistic_iterations(Z, signs, b, penalty, 1.0 / lipschitz, reference, max_iter, tol)
    return SparseModel(W, _row_norms(W), history, residual, tol, residual <= tol)


def _logistic_iterations(Z, signs, b, penalty, step, reference, max_iter, tol):
    """FISTA with restarts for :func:`l21_logistic`, from ``W = 0`` and the intercepts ``b``: the
    last ``W``, the objective after each iteration and the relative proximal-gradient norm of
    that ``W``."""
    W = np.zeros((Z.shape[1], signs.shape[1]))
    V, c, momentum = W, b, 1.0  # the extrapolated point and the momentum
    history, residual = [], np.inf
    for _ in range(max_iter):
        _, grad_W, grad_b = _logistic_parts(Z, signs, V, c)
        W_next = _group_shrink(V - step * grad_W, step * penalty)
        b_next = c - step * grad_b
        loss, grad_next_W, grad_next_b = _logistic_parts(Z, signs, W_next, b_next)
        objective = loss + penalty * _row_norms(W_next).sum()
        # optimality of the new point: its own proximal gradient
        mapped = (W_next - _group_shrink(W_next - step * grad_next_W, step * penalty)) / step
        residual = float(np.sqrt(np.sum(mapped ** 2) + np.sum(grad_next_b ** 2)) / reference)
        if history and objective > history[-1]:
            momentum = 1.0  # restart: the next point is not extrapolated
        history.append(objective)
        momentum_next = (1 + np.sqrt(1 + 4 * momentum ** 2)) / 2
        V = W_next + ((momentum - 1) / momentum_next) * (W_next - W)
        c = b_next + ((momentum - 1) / momentum_next) * (b_next - b)
        W, b, momentum = W_next, b_next, momentum_next
        if residual <= tol:
            break
    return W, np.asarray(history), residual


def l21_logistic_score(X, y, **options):
    """Logistic L2,1 scores (:func:`l21_logistic`); warns if it did not converge."""
    return _finish(l21_logistic(X, y, **options), "L2,1 logistic regression")
