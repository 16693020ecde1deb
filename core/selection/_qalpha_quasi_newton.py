"""Q-alpha's fixed point by a quasi-Newton ascent over alpha alone, private: the iterate stage of
:func:`core.selection.qalpha.q_alpha` where the samples are few enough for ``A_alpha`` (q x q).

For a given alpha the best ``Q`` is the ``k`` leading eigenvectors of ``A_alpha = M^T diag(alpha) M``
([WS03] Sec. 3, the basic scheme), so the criterion is a function of alpha alone,
``phi(alpha) = sum_{l<=k} lambda_l(A_alpha)^2`` ([WS03] Eq. 1), and, by the derivative of a simple
eigenvalue, ``d lambda_l / d alpha_i = (m_i^T q_l)^2``: its gradient is ``2 G(Q) alpha`` with
``G(Q) alpha = sum_l lambda_l p_l o p_l`` (``p_l = M q_l``), no derivative of ``Q`` needed. The fixed
points of Definition 2 (alpha the leading eigenvector of ``G(Q)``, ``Q`` the leading eigenvectors of
``A_alpha``) are the stationary points of ``theta(beta) = beta^T C(Q(beta)) beta`` on the unit sphere,
and every variant's operator ``C`` keeps this form: ``S^1/2 G S^1/2`` with side data ([SW04]
Def. 3), ``G - lam B`` with pairs ([SW04] Eq. 3), ``2 G - (M M^T) o (M M^T)`` for the gap criterion
([WS03] Sec. 2); in each, the gradient of ``theta`` at a unit ``beta`` is ``2 (C beta - theta beta)``.

The alternation of Definition 2 is one ascent method for ``theta``: a first-order one, whose rate
is linear and slow where alpha and Q are strongly coupled (many features, a few planted: hundreds
of iterations). L-BFGS (SciPy's ``L-BFGS-B``, no bounds) on ``-theta(x / ||x||)`` reaches the same
stationary points in tens of iterations, each one evaluation: ``A_alpha`` (one pass over the data,
``q^2 n`` multiply-adds), its eigenvectors, and ``P^T = Q^T M^T`` (a second, thin pass). Its
residuals are those of the alternation: alpha's eigen-residual ``||C beta - theta beta|| / ||C beta||``
(the relative gradient) and Q's from the eigensolver.

Where ``|lambda_k|`` and ``|lambda_{k+1}|`` are equal to working precision ``Q`` is not determined
and neither is the problem at this k: the ascent stops early and says so (:class:`Undetermined`).

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
.. [NW06] J. Nocedal and S. J. Wright, "Numerical Optimization", 2nd ed., Springer 2006, Ch. 7
   (L-BFGS).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize
from scipy.sparse.linalg import ArpackNoConvergence, eigsh

from ..matrix import sample_vectors
from ..matrix.threads import one_blas_thread
from ._qalpha_iteration import _run, certify
from ._spectral import IterationTrace, eigen_residual, subspace_residual

#: Up to this order the leading eigenpairs of ``A_alpha`` (or of its dual) come from a dense
#: decomposition (LAPACK's ``syevr``, the leading ``k + 1`` where every weight is positive); beyond
#: it from ARPACK on the explicit matrix, warm-started from the previous evaluation's leading
#: vector. Four leading pairs on one thread of a 2-core AMD EPYC, LAPACK's subset / ARPACK:
#: 0.27 / 0.58 ms at 100, 0.62 / 0.50 at 150, 1.7 / 0.7 at 250, 4.9 / 1.2 at 400, 15 / 2.4 at 630
#: (all of them by LAPACK, for weights of both signs: 0.8 to 50 ms).
DENSE_EIGEN_LIMIT = 150

#: Corrections L-BFGS keeps. On planted 100 x 200,000 data (k = 2) memories of 5, 10, 20 and 40
#: took 76, 75, 80 and 87 iterations; on 100 x 20,000, 33-34 for all; on five bundled sets at
#: k = 2, 5, 8, 5 and 10 the same but for one iteration (2-core AMD EPYC). SciPy keeps about
#: 28 float64 values per feature at 5 and 38 at 10.
MEMORY = 5

#: ``|lambda_k| - |lambda_{k+1}|`` at most this multiple of ``eps |lambda_1|`` is "equal to
#: working precision": ``Q`` is not determined. The ascent stops when it has been so for
#: UNDETERMINED_AFTER evaluations in a row without the residuals passing.
UNDETERMINED_GAP_EPS = 1e3
UNDETERMINED_AFTER = 10


@dataclass(frozen=True)
class Undetermined:
    """``|lambda_k| = |lambda_{k+1}|`` of ``A_alpha`` to working precision: Q is not determined.
    ``lambda_k`` and ``lambda_next`` are the two magnitudes; ``determined`` the nearest numbers of
    clusters below and above ``k`` whose last eigenvalue stands apart from the next."""

    k: int
    lambda_k: float
    lambda_next: float
    determined: tuple

    @property
    def message(self) -> str:
        others = " or ".join(f"k = {j}" for j in self.determined)
        advice = f" The eigenvalues of A_alpha separate at {others}: use that k." if others else ""
        return (f"A_alpha's eigenvalues {self.k} and {self.k + 1} are equal to working precision "
                f"(magnitudes {self.lambda_k:.12g} and {self.lambda_next:.12g}), so Q, its {self.k} leading "
                f"eigenvectors, is not determined at k = {self.k}: its last column is one arbitrary choice "
                "among directions of equal eigenvalue, and the fixed point with it." + advice)


def _leading_pairs(A, count, previous, positive):
    """The ``count`` eigenpairs of the symmetric ``A`` of largest magnitude, largest first, and
    the magnitudes of those found (at least ``count + 1`` where ``A`` has them), for the gap
    diagnosis. ``positive``: ``A`` is positive semi-definite (every weight non-negative)."""
    q = A.shape[0]
    if q <= DENSE_EIGEN_LIMIT:
        values, vectors = sample_vectors.leading_eigenpairs(A, count + 1, positive)
        return values[:count], vectors[:, :count], np.abs(values)
    wanted = min(count + 1, q - 1)
    try:
        values, vectors = eigsh(A, k=wanted, which="LM", v0=previous, tol=0.0, ncv=min(q, max(2 * wanted + 1, 20)))
    except ArpackNoConvergence:
        values, vectors = linalg.eigh(A)
    order = np.argsort(-np.abs(values), kind="stable")
    return values[order[:count]], vectors[:, order[:count]], np.abs(values[order])


class _Evaluation:
    """``theta``, ``C beta`` and the eigenpairs of ``A_alpha`` at the unit ``beta`` of an iterate,
    computed once per point and shared by the objective, the gradient and the callback.

    With fewer features than samples (``n < q``) and no negative weight, the eigenpairs come from
    the ``n x n`` matrix ``B = D^1/2 K D^1/2`` (``K = M M^T`` the features' Gram matrix, formed once;
    ``D = diag(alpha)``), whose nonzero eigenvalues are ``A_alpha``'s: for ``B y = w y``,
    ``q = M^T D^1/2 y / sqrt(w)`` is an eigenvector of ``A_alpha`` and ``M q = K D^1/2 y / sqrt(w)``,
    so an evaluation reads no data at all (600 digit images, 64 pixels: a 64 x 64 problem instead of
    600 x 600)."""

    def __init__(self, problem, k):
        self.problem, self.k = problem, k
        self.key = None
        self.count = 0
        self.low_gap_run = 0
        self.gap = None
        self.vectors = None
        features = problem.features if problem is not None else None
        self.dual = features is not None and k + 1 < features.n_kept < features.n_samples
        self._gram_squared = None

    def at(self, x):
        key = x.tobytes()
        if key == self.key:
            return self
        self.key = key
        self.count += 1
        problem, k = self.problem, self.k
        size = float(np.linalg.norm(x))
        beta = x / size
        alpha = beta if problem.side_scale is None else problem.side_scale * beta
        positive = bool(np.all(alpha >= 0))
        previous = self.vectors[:, 0] if self.vectors is not None else None
        if self.dual and positive:
            values, Pt, magnitudes, self.Q_residual = self._dual_pairs(alpha, previous)
            if problem.criterion == "gap" and self._gram_squared is None:
                self._gram_squared = problem.gram() ** 2
            diagonal = self._gram_squared @ alpha if problem.criterion == "gap" else None
        else:
            A = problem.features.weighted_gram(alpha)
            with one_blas_thread():  # a q x q decomposition: threads cost more than they save
                values, vectors, magnitudes = _leading_pairs(A, k, None if self.dual else previous, positive)
            Pt = problem.features.transposed_times(vectors)  # rows p_l = M q_l
            self.Q_residual = subspace_residual(vectors, A @ vectors)
            self.sample_vectors, self.vectors = vectors, (None if self.dual else vectors)
            # ((M M^T) o (M M^T)) alpha = diag(M A_alpha M^T)
            diagonal = np.einsum("qn,qn->n", A @ problem.Mt, problem.Mt) if problem.criterion == "gap" else None
        g_alpha = np.einsum("l,ln,ln->n", values, Pt, Pt)  # G(Q) alpha, Q exact
        image = g_alpha if diagonal is None else 2.0 * g_alpha - diagonal
        if problem.side_scale is not None:
            image = problem.side_scale * image
        elif problem.pair_factor is not None:
            image = image - problem.lam * (problem.pair_factor @ (problem.pair_factor.T @ beta))
        self.size, self.beta, self.alpha, self.image = size, beta, alpha, image
        self.theta, self.alpha_residual = eigen_residual(beta, image)
        self.values, self.Pt = values, Pt
        self._note_gap(magnitudes)
        return self

    def _dual_pairs(self, alpha, previous):
        """The leading eigenvalues of ``A_alpha``, ``P^T = (M Q)^T``, the magnitudes found and Q's
        residual, from ``B = D^1/2 K D^1/2``; the eigenvectors ``Y`` of ``B`` are kept for :meth:`Q`."""
        K, k = self.problem.gram(), self.k
        root = np.sqrt(alpha)
        B = root[:, None] * K * root[None, :]
        with one_blas_thread():
            values, Y, magnitudes = _leading_pairs(B, k, previous, True)
        scale = np.sqrt(np.clip(values, 0.0, None))
        live = scale > 0
        Pt = np.zeros((k, K.shape[0]))
        Pt[live] = (K @ (root[:, None] * Y[:, live])).T / scale[live, None]
        self.vectors, self.sample_vectors, self.root = Y, None, root
        # ||A q - w q|| = ||M^T D^1/2 (B y - w y)|| / sqrt(w) <= ||B y - w y|| sqrt(||B||_2 / w): the
        # record's Q residual (the returned iterate's is recomputed from the data)
        return values, Pt, magnitudes, subspace_residual(Y, B @ Y)

    def Q(self):
        """The ``k`` leading eigenvectors of ``A_alpha`` at the current point, orthonormal (``q x k``):
        from the dual form, ``M^T D^1/2 Y / sqrt(w)`` (one thin pass), completed where ``w = 0``."""
        if self.sample_vectors is not None:
            return self.sample_vectors
        return sample_vectors.from_feature_side(self.problem.features, self.root, self.values, self.vectors, self.k)

    def _note_gap(self, magnitudes):
        """Whether ``|lambda_k| = |lambda_{k+1}|`` to working precision at this point (``self.gap``,
        an :class:`Undetermined` or None), and for how many evaluations in a row."""
        k = self.k
        self.gap = None
        if magnitudes.size <= k or magnitudes[0] == 0:
            self.low_gap_run = 0
            return
        resolution = UNDETERMINED_GAP_EPS * np.finfo(np.float64).eps * magnitudes[0]
        if magnitudes[k - 1] - magnitudes[k] > resolution:
            self.low_gap_run = 0
            return
        self.low_gap_run += 1
        separated = magnitudes[:-1] - magnitudes[1:] > resolution  # separated[j - 1]: k = j is determined
        below = [j for j in range(k - 1, 0, -1) if separated[j - 1]][:1]
        above = [j for j in range(k + 1, magnitudes.size) if separated[j - 1]][:1]
        self.gap = Undetermined(k, float(magnitudes[k - 1]), float(magnitudes[k]), tuple(below + above))

    def objective(self, x):
        return -self.at(x).theta

    def gradient(self, x):
        e = self.at(x)
        return -(2.0 / e.size) * (e.image - e.theta * e.beta)


#: The ascent's evaluations on a typical problem (the bundled sets: 8-12; planted 100 x 20,000: 36),
#: for the cost model that decides when the alternation hands over to it.
TYPICAL_EVALUATIONS = 15
#: What a step of the alternation and an evaluation of the ascent cost beyond their arithmetic, in
#: multiply-adds at the BLAS rate (measured on 55 x 101: a step 50 us, an evaluation 300 us).
STEP_OVERHEAD, EVALUATION_OVERHEAD = 1e6, 6e6
#: The alternation's linear rate is read off at least this many iterations, and only after twice as many.
RATE_WINDOW = 5


def cost_ratio(problem, k) -> float:
    """An evaluation of the ascent over a step of the alternation, in multiply-adds: ``A_alpha``
    (``q^2 n / 2``, or ``n^2`` for the features' Gram matrix where there are fewer features than
    samples), its leading eigenpairs (``2 r^3 / 3`` for ``r = min(q, n)`` by LAPACK, about
    ``40 (k + 1) r^2`` by ARPACK beyond :data:`DENSE_EIGEN_LIMIT`) and ``M Q``, against two thin
    passes (``2 q n k``)."""
    q, n = problem.features.n_samples, problem.features.n_kept
    small = min(q, n)
    # LAPACK's tridiagonal reduction up to DENSE_EIGEN_LIMIT, else ARPACK's products (tens of them)
    eigen = 2 * small ** 3 / 3 if small <= DENSE_EIGEN_LIMIT else 40 * (k + 1) * small ** 2
    evaluation = (n * n if n < q else q * q * n / 2) + eigen + q * n * k + EVALUATION_OVERHEAD
    return evaluation / (2.0 * q * n * k + STEP_OVERHEAD)


class Handover:
    """When the alternation of Definition 2 hands over to the ascent: once its iterations, or
    those its linear rate predicts to ``tol``, exceed what :data:`TYPICAL_EVALUATIONS` of the
    ascent cost (:func:`cost_ratio`), or half of ``max_iter``, or once it stops contracting. The
    rate is read off the later half of the iterations so far (at least :data:`RATE_WINDOW`), and
    only after a tenth of the budget: the residuals stall
    for a few steps and drop again (a PBMC-sized table at k = 2 and 4: plateaus of 5-10 steps in
    runs that settle in 71-109), and a window of the last five took them for a crawl. Decided on
    the residuals alone, so a run is reproducible."""

    def __init__(self, ratio, tol, max_iter):
        # the alternation may not take the whole of max_iter: the ascent needs iterations left
        self.budget = min(int(np.ceil(TYPICAL_EVALUATIONS * ratio)), max(1, max_iter // 2))
        self.tol = tol

    def __call__(self, trace) -> bool:
        done = trace.n_iter
        if done >= self.budget:
            return True
        window = max(RATE_WINDOW, done // 2)
        if done <= max(2 * RATE_WINDOW, self.budget // 10):
            return False  # a tenth of the budget (1.5 evaluations' cost) before the rate is judged
        residuals = np.max(np.asarray(trace.residuals), axis=1)
        first, last = residuals[-window - 1], residuals[-1]
        if first <= 0 or last <= 0:
            return False
        rate = (last / first) ** (1.0 / window)
        if rate >= 1.0:
            return True  # not contracting over half its run: it will not arrive in the budget
        return done + np.log(self.tol / last) / np.log(rate) > self.budget


def diagnose(problem, alpha, Q, k, converged):
    """An :class:`Undetermined` where ``A_alpha``'s k-th and (k+1)-th eigenvalues are equal to working
    precision at the returned weights, else None: one evaluation, made where the run did not
    converge or where the Ritz values of ``Q`` say ``lambda_k`` is 0 to working precision (a k
    beyond the data's rank); a converged run with ``lambda_k`` standing clear needs none."""
    if converged:
        features = problem.features
        Z = features.times((features.transposed_times(Q) * alpha).T)
        ritz = np.abs(np.linalg.eigvalsh((Q.T @ Z + Z.T @ Q) / 2))
        if ritz.min() > UNDETERMINED_GAP_EPS * np.finfo(np.float64).eps * ritz.max():
            return None
    evaluation = _Evaluation(problem, k)
    evaluation.at(problem.to_beta(np.asarray(alpha, dtype=np.float64)))
    return evaluation.gap


def applies(problem, fixed_Q) -> bool:
    """Whether the ascent serves this problem: Q not fixed, and ``A_alpha`` small enough to form."""
    return not fixed_Q and problem.features.n_samples <= sample_vectors.GRAM_LIMIT


def ascend(problem, k, x0, *, max_iter, tol, trace, progress):
    """L-BFGS on ``-theta(x / ||x||)`` from ``x0`` (in the operator's variable ``beta``), recording
    each iterate in ``trace`` (:class:`core.selection._spectral.IterationTrace`) until both its
    residuals are at most ``tol``, the progress callback stops it, ``max_iter`` iterations pass, the
    line search can go no further, or ``Q`` is found undetermined.

    Returns ``(alpha, Q, evaluations, undetermined)``: the last accepted iterate (alpha oriented,
    unit norm), its ``Q``, the number of evaluations (each a pass for ``A_alpha`` and a thin one
    for ``P``), and an :class:`Undetermined` where the last iterate's ``Q`` is not
    determined (the ascent stops once that has held for :data:`UNDETERMINED_AFTER` evaluations
    in a row without the residuals passing), else None.
    """
    evaluation = _Evaluation(problem, k)

    def callback(intermediate_result):
        e = evaluation.at(intermediate_result.x)
        ended = trace.record(trace.n_iter + 1, e.theta, e.theta, e.alpha_residual, e.Q_residual, tol, None,
                             progress, max_iter)
        if ended or evaluation.low_gap_run >= UNDETERMINED_AFTER:
            raise StopIteration  # SciPy's way to end from a callback: result.x is this iterate

    x0 = np.asarray(x0, dtype=np.float64)
    remaining = max_iter - trace.n_iter
    result = optimize.minimize(evaluation.objective, x0, jac=evaluation.gradient, method="L-BFGS-B",
                               callback=callback,
                               options=dict(maxiter=remaining, maxfun=4 * remaining + 20, maxcor=MEMORY,
                                            ftol=0.0, gtol=0.0, maxls=40))
    e = evaluation.at(result.x)
    undetermined = e.gap
    if trace.n_iter == 0:  # ended before its first iteration (the line search found nothing better than x0)
        trace.record(1, e.theta, e.theta, e.alpha_residual, e.Q_residual, tol, None, progress, max_iter)
    alpha = problem.to_alpha(e.beta)
    return alpha, e.Q(), evaluation.count, undetermined


def run_accelerated(problem, k, beta0, *, method, max_iter, tol, solver, eig_tol, power_steps, progress, trace=None):
    """One start of Q-alpha by the ascent (:func:`ascend`) from ``beta0``, certified by products
    with the data (:func:`core.selection._qalpha_iteration.certify`). Where the certified residuals
    do not pass (the line search stopped short of ``tol``, rounding in ``A_alpha``), the
    alternation of Definition 2 goes on from the last iterate, to ``max_iter`` iterations in all.
    Where ``Q`` is not determined (:class:`Undetermined`) and the residuals did not pass, the run
    ends there, unconverged, rather than run the alternation to ``max_iter``: no iteration can
    settle what the problem leaves open. Returns the run's record (as
    :func:`core.selection._qalpha_iteration._run`) with ``evaluations`` and ``undetermined``.
    ``trace``, if given, holds iterations before this one, which count towards ``max_iter``."""
    trace = IterationTrace() if trace is None else trace
    # BLAS on one thread throughout: the weighted Gram matrix splits its columns over the cores
    # itself, and OpenBLAS's threads, woken by a product between two of its parts, spun on the
    # cores the parts ran on (100 x 200,000: 118 ms a Gram matrix against 43)
    with one_blas_thread():
        alpha, Q, evaluations, undetermined = ascend(problem, k, beta0, max_iter=max_iter, tol=tol, trace=trace,
                                                     progress=progress)
    objective, eigenvalue, alpha_residual, Q_residual, Pt = certify(problem, alpha, Q, fixed_Q=False)
    settled = trace.revise(objective, eigenvalue, alpha_residual, Q_residual, tol)
    if settled or trace.stopped or undetermined is not None or trace.n_iter >= max_iter:
        run = trace.result(alpha, Q)
    else:
        run = _run(problem, Q, method=method, fixed_Q=False, max_iter=max_iter, tol=tol, solver=solver,
                   eig_tol=eig_tol, power_steps=power_steps, progress=progress, alpha0=alpha, Pt0=Pt, trace=trace)
    return dict(run, evaluations=evaluations, undetermined=undetermined)
