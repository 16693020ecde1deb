"""The iteration behind :func:`core.selection.qalpha.q_alpha`, private: the operator ``G`` of step 2
applied matrix-free, its leading eigenvector by dense, Lanczos or power steps, and the
power-embedded (and basic) alternation of [WS03] Definition 2 between alpha and Q.

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import LinearOperator

from ._spectral import IterationTrace, eigen_residual, leading_lanczos, orient, subspace_residual
from ..errors import InputError
from ..matrix import dense_matrix
from ..matrix.sample_vectors import krylov_sample_vectors, leading_sample_vectors

#: A start needs only to lie near the leading eigenvectors: above GRAM_LIMIT samples the
#: ``init="uniform"`` start is a block Krylov space of blocks of ``k +``
#: :data:`~core.matrix.sample_vectors.KRYLOV_OVERSAMPLING` columns
#: (:func:`core.matrix.sample_vectors.krylov_sample_vectors`) that stops at this eigen-residual
#: bound or after :data:`START_PASSES` passes over the data, whichever comes first; the run's own
#: residual test decides convergence, whatever the start.
START_RTOL = 1e-4
#: Where k exceeds the clusters the data hold, the last vectors lie in a bulk of near-equal
#: eigenvalues and never reach START_RTOL, and the run's fixed point depends on where in that bulk
#: the start lies. On 20,000 x 4,000 planted data (3 group directions, k = 4, tol 1e-10) the
#: two-pass Krylov start of 14-column blocks and the three-pass subspace iteration before it led
#: to the same weights (within 1.2e-11; objective 2.79019) in 145 and 156 iterations; the exact
#: eigenvectors (2.79051) and two passes of 8-column blocks, the start now (2.79059, 144
#: iterations), led to other fixed points 3e-2 away, all with the 80 planted features on top
#: (2-core Xeon, 2026-11-29).
START_PASSES = 2

#: Above this many features the leading eigenvector of G is not taken from a dense matrix.
DENSE_LIMIT = 600


#: Up to this many features the default solver decomposes G densely. Beyond it a Lanczos solve
#: per iteration is faster: 0.8 vs 0.8 ms at 100 features, 0.8 vs 5.9 ms at 400 and 1.3 vs 40 ms
#: at 600 (72 samples; Ben-Dor's 600 genes took 15 s instead of 0.45 s with dense steps).
AUTO_DENSE_LIMIT = 100


# ---------------------------------------------------------------------------- operators
class _Problem:
    """The eigenproblem of step 2 for one data set, matrix-free.

    Holds the normalised features (``q x n`` products, :mod:`core.matrix.normalised`) and what the
    variants add: the scaling ``s`` with ``S = diag(s)^2 = (D + lam I)^{-1}`` (side information,
    symmetric form ``S^1/2 G S^1/2``) or the pair matrix ``Wp`` with ``B = Wp Wp^T`` (pairwise side
    information).
    """

    def __init__(self, features, criterion, side_scale=None, pair_factor=None, lam=0.0):
        self.features = features
        self.Mt = features.Mt  # dense data only (the gap criterion)
        self.q, self.n = features.n_samples, features.n_kept
        self.criterion = criterion
        self.side_scale = side_scale
        self.pair_factor = pair_factor
        self.lam = lam
        self._gram = None

    # products with the pieces of G ------------------------------------------
    def g_matvec(self, Pt, v):
        """``G(Q) v`` for ``P = M Q`` stored as ``Pt`` (``k x n``)."""
        _, U = self.features.fused((Pt * v).T)  # T = M^T (p_l o v) (q x k), U = T^T M^T (k x n)
        return np.einsum("ln,ln->n", Pt, U)

    def square_matvec(self, v):
        """``((M M^T) o (M M^T)) v``: the ``trace(A_alpha^2)`` part of the gap criterion."""
        A = (self.Mt * v) @ self.Mt.T  # q x q affinity M^T diag(v) M
        return np.einsum("qn,qn->n", A @ self.Mt, self.Mt)

    def criterion_matvec(self, Pt, v):
        if self.criterion == "sum":
            return self.g_matvec(Pt, v)
        return 2.0 * self.g_matvec(Pt, v) - self.square_matvec(v)

    def operator_matvec(self, Pt, v):
        """The symmetric operator whose leading eigenvector gives alpha."""
        if self.side_scale is not None:
            return self.side_scale * self.criterion_matvec(Pt, self.side_scale * v)
        out = self.criterion_matvec(Pt, v)
        if self.pair_factor is not None:
            out -= self.lam * (self.pair_factor @ (self.pair_factor.T @ v))
        return out

    # dense forms -------------------------------------------------------------
    def gram(self):
        if self._gram is None:
            self._gram = self.features.gram()
        return self._gram

    def dense_operator(self, Pt):
        C = self.gram() * (Pt.T @ Pt)
        if self.criterion == "gap":
            C = 2.0 * C - self.gram() ** 2
        if self.side_scale is not None:
            C *= np.outer(self.side_scale, self.side_scale)
        elif self.pair_factor is not None:
            C -= self.lam * (self.pair_factor @ self.pair_factor.T)
        return C

    @property
    def is_psd(self):
        return self.criterion == "sum" and self.pair_factor is None

    # alpha from the operator's eigenvector ----------------------------------
    def to_alpha(self, beta):
        alpha = beta if self.side_scale is None else self.side_scale * beta
        return orient(alpha / np.linalg.norm(alpha))

    def to_beta(self, alpha):
        beta = alpha if self.side_scale is None else alpha / self.side_scale
        return beta / np.linalg.norm(beta)

    def objective(self, alpha, Z, Pt=None):
        """Criterion value at unit ``alpha``; ``Z = A_alpha Q`` gives ``alpha^T G alpha``."""
        value = float(np.sum(Z * Z))
        if self.criterion == "gap":
            value = 2.0 * value - float(alpha @ self.square_matvec(alpha))
        if self.side_scale is not None:
            value /= float(np.sum((alpha / self.side_scale) ** 2))
        elif self.pair_factor is not None:
            value -= self.lam * float(np.sum((self.pair_factor.T @ alpha) ** 2))
        return value


def _leading_eigvec(problem, Pt, beta0, solver, eig_tol, power_steps):
    """Leading (largest algebraic) eigenvector ``beta`` of the step-2 operator ``C``, ``C beta``
    (for its residual) and what failed, if the inner solver did (None when it did not)."""
    if solver == "dense":
        C = problem.dense_operator(Pt)
        if problem.n <= 2 * DENSE_LIMIT:
            _, vectors = linalg.eigh(C, subset_by_index=[problem.n - 1, problem.n - 1])
            return vectors[:, 0], C @ vectors[:, 0], None
        # Explicit G that is too large for a full decomposition: Lanczos on the stored matrix.
        beta, failure = leading_lanczos(C, beta0, eig_tol)
        return beta, C @ beta, failure
    if solver == "lanczos":
        op = LinearOperator((problem.n, problem.n), dtype=problem.features.dtype,
                            matvec=lambda v: problem.operator_matvec(Pt, np.ravel(v)))
        beta, failure = leading_lanczos(op, beta0, eig_tol)
        return beta, problem.operator_matvec(Pt, beta), failure
    # Power steps warm-started from the previous alpha: the fixed point is the same (alpha an
    # eigenvector of G(Q)), and the operator is positive semi-definite so no shift is needed.
    beta = beta0
    for _ in range(power_steps):
        image = problem.operator_matvec(Pt, beta)
        beta = image / np.linalg.norm(image)
    return beta, problem.operator_matvec(Pt, beta), None


def certify(problem, alpha, Q, fixed_Q):
    """The numbers of the iterate ``(alpha, Q)`` recomputed by products with the data, as the
    alternation computes them: ``(objective, eigenvalue, alpha_residual, Q_residual, Pt)`` with
    ``Q`` orthonormal. What decides ``converged`` for a run that did not compute them this way."""
    features = problem.features
    Pt = features.transposed_times(Q)
    beta = problem.to_beta(alpha)
    eigenvalue, alpha_residual = eigen_residual(beta, problem.operator_matvec(Pt, beta))
    Z = features.times((Pt * alpha).T)
    Q_residual = 0.0 if fixed_Q else subspace_residual(Q, Z)
    return problem.objective(alpha, Z), eigenvalue, alpha_residual, Q_residual, Pt


def _class_subspace(labels, q):
    """Orthonormal basis of the centred class-indicator matrix: the supervised Q (c - 1 columns)."""
    classes, codes = np.unique(labels, return_inverse=True)
    indicator = np.zeros((q, classes.size))
    indicator[np.arange(q), codes] = 1.0
    indicator -= indicator.mean(axis=0)
    Q, R = np.linalg.qr(indicator)
    keep = np.abs(np.diag(R)) > 1e-10 * np.sqrt(q)
    return Q[:, keep][:, : classes.size - 1]


# ---------------------------------------------------------------------------- the iteration
def _run(problem, Q0, *, method, fixed_Q, max_iter, tol, solver, eig_tol, power_steps, progress, alpha0=None,
         Pt0=None, trace=None):
    """One start of the alternation of [WS03] Definition 2 from ``Q0``.

    Each iteration makes the pair ``(alpha, Q)``: alpha the leading eigenvector of ``C(Q)`` (steps
    1-2), then ``Z = A_alpha Q`` (steps 3-4). The pair is a fixed point when alpha is an
    eigenvector of ``C(Q)`` and ``Q`` spans an invariant subspace of ``A_alpha``; the run stops
    when both residuals (:func:`eigen_residual`, :func:`subspace_residual`) are at most ``tol``
    (alpha's alone with Q fixed, the supervised mode) and returns that pair, its objective
    ``alpha^T C(Q) alpha`` and eigenvalue. Q moves on (step 5) only when another iteration follows.
    ``Pt0``, if given, is ``(M Q0)^T`` already computed (the start's last pass gives it). ``trace``,
    if given, holds the iterations before this one (an accelerated run that did not settle goes on
    here from its last iterate): the count goes on from there, to ``max_iter`` in all.
    """
    if solver == "power" and method == "power" and not fixed_Q and power_steps == 1:
        return _run_simultaneous(problem, Q0, max_iter=max_iter, tol=tol, progress=progress, alpha0=alpha0, Pt0=Pt0,
                                 trace=trace)
    features = problem.features
    Q = Q0
    Pt = features.transposed_times(Q) if Pt0 is None else Pt0  # k x n, rows p_l = M q_l
    beta, alpha = _start_weights(problem, alpha0)
    trace = IterationTrace() if trace is None else trace
    for n_iter in range(trace.n_iter + 1, max_iter + 1):
        # Steps 1-2: alpha = leading eigenvector of C(Q) (G(Q) or its side-information form).
        beta, image, failure = _leading_eigvec(problem, Pt, beta, solver, eig_tol, power_steps)
        eigenvalue, alpha_residual = eigen_residual(beta, image)
        alpha = problem.to_alpha(beta)
        beta = problem.to_beta(alpha)
        # Steps 3-4: Z = A_alpha Q = M^T (alpha o P); ||Z||_F^2 = alpha^T G(Q) alpha.
        Z = features.times((Pt * alpha).T)
        Q_residual = 0.0 if fixed_Q else subspace_residual(Q, Z)
        if trace.record(n_iter, problem.objective(alpha, Z), eigenvalue, alpha_residual, Q_residual, tol,
                        failure, progress, max_iter):
            break
        if fixed_Q:
            continue
        # Step 5 (power-embedded): one orthogonal-iteration step, Z -> Q R.
        if method == "power":
            Q, R = np.linalg.qr(Z)
            if np.min(np.abs(np.diag(R))) <= 1e-13 * np.max(np.abs(np.diag(R))):
                # A_alpha has rank below k: keep the columns it spans and complete the basis.
                Q = leading_sample_vectors(features, alpha, Q.shape[1]).vectors
        else:  # basic scheme: Q = the k leading eigenvectors of A_alpha
            Q = leading_sample_vectors(features, alpha, Q.shape[1]).vectors
        Pt = features.transposed_times(Q)
    return trace.result(alpha, Q)


#: The simultaneous iteration refreshes P = M Q exactly this often (P is otherwise updated as U R^-1).
_P_REFRESH = 10


def _run_simultaneous(problem, Q0, *, max_iter, tol, progress, alpha0=None, Pt0=None, trace=None):
    """Power-embedded Q-alpha with one power step on alpha, two passes over the data per iteration.

    Alpha and Q are updated from the same iterate: with ``T = M^T (alpha o P) = A_alpha Q`` and
    ``U = M T``, ``G(Q) alpha = sum_l p_l o u_l`` gives the power step on alpha, ``T -> Q R`` the
    orthogonal-iteration step on Q, and ``M Q_new = U R^{-1}`` the next ``P``: one product with
    ``M^T`` and one with ``M`` per iteration instead of four. The fixed points are those of
    Definition 2 (alpha an eigenvector of G(Q), Q spanning the leading eigenvectors of A_alpha).
    The same pass gives both residuals of the iterate ``(alpha, Q)`` it starts from, so the test
    costs no product: the run returns that iterate, its objective ``||T||_F^2`` (``alpha^T G(Q)
    alpha``, over the side quotient's denominator with side data) and its Rayleigh quotient.
    """
    features = problem.features
    Q = Q0
    Pt = features.transposed_times(Q) if Pt0 is None else Pt0
    beta, alpha = _start_weights(problem, alpha0)
    trace = IterationTrace() if trace is None else trace
    for n_iter in range(trace.n_iter + 1, max_iter + 1):
        # T = A_alpha Q (q x k) and U = (M T)^T (k x n): one pass over the data
        T, U = features.fused((Pt * alpha).T)
        image = np.einsum("ln,ln->n", Pt, U)  # G(Q) alpha
        if problem.side_scale is not None:
            # C beta = S^1/2 G S^1/2 beta with alpha = S^1/2 beta / ||S^1/2 beta||
            image *= problem.side_scale * float(np.linalg.norm(problem.side_scale * beta))
        eigenvalue, alpha_residual = eigen_residual(beta, image)
        if trace.record(n_iter, problem.objective(alpha, T), eigenvalue, alpha_residual, subspace_residual(Q, T),
                        tol, None, progress, max_iter):
            break
        alpha = problem.to_alpha(image / np.linalg.norm(image))
        beta = problem.to_beta(alpha)
        Q, R = np.linalg.qr(T)
        diag = np.abs(np.diag(R))
        if diag.min() <= 1e-10 * diag.max() or n_iter % _P_REFRESH == 0:
            if diag.min() <= 1e-13 * diag.max():
                Q = leading_sample_vectors(features, alpha, Q.shape[1]).vectors
            Pt = features.transposed_times(Q)
        else:
            # P_new = (M T) R^-1, i.e. Pt_new = R^-T U; R is k x k and well conditioned here.
            Pt = np.linalg.inv(R).T @ U
    return trace.result(alpha, Q)


def _start_weights(problem, alpha0=None):
    """The first iterate of the weights, in the operator's variable (``beta``) and as ``alpha``:
    every ``beta`` equal, or a warm start from ``alpha0`` (the weights at a neighbouring lambda)."""
    if alpha0 is None or not np.all(np.isfinite(alpha0)) or not np.any(alpha0):
        beta = np.full(problem.n, 1.0 / np.sqrt(problem.n), dtype=problem.features.dtype)
    else:
        beta = problem.to_beta(np.asarray(alpha0, dtype=problem.features.dtype))
    return beta, problem.to_alpha(beta)


def _initial_Q(problem, k, init, rng):
    """``Q^(0)`` for ``init``, the passes over the data it took (0 from the explicit Gram matrix or
    at random), and ``(M Q^(0))^T`` where the last pass gave it (else None): the run then starts
    without a pass of its own."""
    if init == "uniform":
        # Every alpha equal: A = M^T M (q x q); its k leading eigenvectors. With side
        # information "equal" is meant in the symmetric variable, alpha ~ (D + lam I)^{-1/2} 1,
        # so the start already discounts the structure the side data carry.
        alpha0 = problem.to_alpha(np.ones(problem.n, dtype=problem.features.dtype))
        start = krylov_sample_vectors(problem.features, alpha0, k, START_PASSES, rtol=START_RTOL)
        return start.vectors, start.passes, start.products
    Q, _ = np.linalg.qr(rng.standard_normal((problem.q, k)))
    return Q, 0, None


def _resolve_solver(solver, n, psd):
    solvers = ("auto", "dense", "lanczos", "power")
    if solver not in solvers:
        raise InputError(f"solver must be one of {solvers}; got {solver!r}.")
    if solver == "auto":
        # Positive semi-definite (the sum criterion without pairs): power steps reach the same
        # fixed point 7-18x sooner than Lanczos solves, whole runs (the bundled sets at tol 1e-6:
        # the same top 5%, objectives within 3e-10; benchmarks/bench_qalpha.py, bench_tools.py),
        # and on sparse and chunked data they need one pass per iteration where a Lanczos solve
        # needs tens. The same choice for every container and size (issue 75): a dense solve for
        # few features had taken small dense data along another path than the same data as CSR,
        # to another fixed point in 2 of 40 seeds of a 50 x 40, k = 4 problem.
        if psd:
            return "power"
        return "dense" if n <= AUTO_DENSE_LIMIT else "lanczos"
    if solver == "power" and not psd:
        raise InputError("The power solver needs a positive semi-definite operator; the gap "
                         "criterion and pairwise side information make it indefinite. "
                         "Use solver='lanczos' or 'auto'.")
    return solver


def _pair_factor(pairs, shape, features):
    """Columns ``x o y`` (one per pair) of the normalised features, so ``B = Wp Wp^T`` ([SW04] Sec. 5)."""
    n_samples, n_features = shape
    kept, mean, scale = features.kept, features.mean, features.scale
    if isinstance(pairs, tuple) and len(pairs) == 2 and np.ndim(pairs[0]) == 2:
        first = dense_matrix(pairs[0], "pairs[0]")
        second = dense_matrix(pairs[1], "pairs[1]")
        if first.shape != second.shape or first.shape[1] != n_features:
            raise InputError(f"The two arrays of pairs must both be (n_pairs x {n_features}); "
                             f"got {first.shape} and {second.shape}.")
        first = (first[:, kept] - mean) / scale
        second = (second[:, kept] - mean) / scale
    else:
        index = np.asarray(pairs)
        if index.ndim != 2 or index.shape[1] != 2 or index.shape[0] < 1:
            raise InputError("pairs must be an (n_pairs x 2) array of sample indices or a tuple "
                             "of two (n_pairs x n_features) arrays.")
        if not np.issubdtype(index.dtype, np.integer):
            raise InputError("Index pairs must be integers (sample indices).")
        if index.min() < 0 or index.max() >= n_samples:
            raise InputError(f"A pair refers to sample {int(index.max() if index.max() >= n_samples else index.min())}, "
                             f"but there are only {n_samples} samples (valid: 0 to {n_samples - 1}).")
        first, second = features.rows(index[:, 0]), features.rows(index[:, 1])
    return np.ascontiguousarray((first * second).T, dtype=features.dtype)
