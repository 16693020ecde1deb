"""Q-alpha's fixed point by a quasi-Newton or Newton ascent over alpha alone: the iterate stage of the solver
(:mod:`core.selection._qalpha`) beside the alternation (:mod:`.iterate`), where the samples are few
enough for ``A_alpha`` (q x q).

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
``q^2 n`` multiply-adds; from a few hundred samples on, ARPACK's products with the data instead),
its eigenvectors, and ``P^T = Q^T M^T`` (a second, thin pass). Its
residuals are those of the alternation: alpha's eigen-residual ``||C beta - theta beta|| / ||C beta||``
(the relative gradient) and Q's from the eigensolver.

On many features and few samples (:func:`takes_newton_steps`) the ascent takes Newton steps
instead, in a trust region (SciPy's ``trust-krylov``: the subproblem by Lanczos, [GLRT99];
[NW06] Ch. 4), with the Hessian's exact products
(:meth:`.problem.Evaluation.hessian_times`: the derivative of ``Q`` by first-order perturbation
over all of ``A_alpha``'s eigenpairs, two thin passes a product). L-BFGS's curvature pairs cannot
follow the long curved ridge these problems put between a saddle and the maximum (planted 100 x
200,000, k = 2: 45 of its 83 evaluations climb the last 2.5e-4 of the criterion), which the
exact Hessian crosses in 15-20 steps; and near the maximum the steps converge quadratically, so
the run ends far inside ``tol`` (residuals 1e-8 to 1e-9).

Where ``|lambda_k|`` and ``|lambda_{k+1}|`` are equal to working precision ``Q`` is not determined
and neither is the problem at this k: the ascent stops early and says so (:class:`.problem.Undetermined`).

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
.. [NW06] J. Nocedal and S. J. Wright, "Numerical Optimization", 2nd ed., Springer 2006, Ch. 4
   (trust regions) and 7 (L-BFGS).
.. [GLRT99] N. I. M. Gould, S. Lucidi, M. Roma and Ph. L. Toint, "Solving the trust-region
   subproblem using the Lanczos method", SIAM J. Optim. 9(2), 1999.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from .problem import DENSE_EIGEN_LIMIT, UNDETERMINED_AFTER, Evaluation, evaluates_dual, evaluates_matrix_free
from .._spectral import IterationTrace
from ...matrix.threads import one_blas_thread

#: Corrections L-BFGS keeps. On planted 100 x 200,000 data (k = 2) memories of 5, 10, 20 and 40
#: took 76, 75, 80 and 87 iterations; on 100 x 20,000, 33-34 for all; on five bundled sets at
#: k = 2, 5, 8, 5 and 10 the same but for one iteration (2-core AMD EPYC). SciPy keeps about
#: 28 float64 values per feature at 5 and 38 at 10.
MEMORY = 5

#: From this many features on (and at most :data:`.problem.DENSE_EIGEN_LIMIT` samples) the ascent
#: takes Newton steps (:func:`takes_newton_steps`). A Newton iteration costs about two of L-BFGS's
#: (an evaluation and 4-5 Hessian products, each two thin passes) and takes half as many: on
#: planted 100 x n (1% shifted, draw 0), iterations L-BFGS / Newton and seconds in two alternating
#: rounds: n = 2,000 k = 2 75 / 63 (0.11-0.14 / 0.15-0.16 s), k = 3 95 / 63 (0.20-0.21 / 0.15-0.18);
#: 5,000 50 / 40 and 57 / 40 (the same times); 20,000 45 / 24 (0.64-0.77 / 0.69-0.74) and 53 / 35
#: (0.72-0.82 / 0.97-1.16); 50,000 50 / 28 and 69 / 36 (1.3-2.0 s both); 200,000 draw 1 53 / 25
#: (6.1-6.9 / 6.2-6.7 s), draw 0 80 / 42 (9.3-10.7 / 10.6-11.3 s). As Dask arrays and CSR, where
#: each evaluation's Gram matrix costs more, Newton took 0.4-0.75 of the time (2-core AMD EPYC).
#: On the audit's problems (15-150 features) it took 1.09x L-BFGS's time (median), 740 iterations
#: against 771.
NEWTON_FROM = 2000
#: The Newton ascent's first trust radius, for unit ``x``: on planted 100 x 200,000 (k = 2, draw 0),
#: SciPy's default 1, 0.1 and 0.01 took 32, 35 and 31 iterations after the handover.
TRUST_RADIUS = 0.01


#: The ascent's evaluations on a typical problem (the bundled sets: 8-12; planted 100 x 20,000: 36),
#: for the cost model that decides when the alternation hands over to it.
TYPICAL_EVALUATIONS = 15
#: What a step of the alternation and an evaluation of the ascent cost beyond their arithmetic, in
#: multiply-adds at the BLAS rate (measured on 55 x 101: a step 50 us, an evaluation 300 us).
STEP_OVERHEAD, EVALUATION_OVERHEAD = 1e6, 6e6
#: A thin pass (k columns) reads every value of the data and does k multiply-adds with it: reading
#: costs as much as this many, so thin passes cost about the same at k = 2 and 8 (0.9-1.2 ns a
#: value on 2-core AMD EPYC, against 15-20 multiply-adds a ns in a Gram matrix).
READ_COST = 14
#: The ascent's work per feature beside its products, in multiply-adds: L-BFGS's vectors, the
#: gradient, the line search's trial points (about 0.2 us a feature on 100 x 20,000 and 200,000).
FEATURE_COST = 3000
#: The alternation's rate is judged once its larger residual is at most this: further out it passes
#: saddles and plateaus, and its rate predicts little (the tour's 700 x 765 table at k = 2: 1e-2 to
#: 3e-2 for 50 steps, then 7e-3 to 5e-7 in 10).
JUDGED_BELOW = 1e-2
#: The alternation's linear rate is read off at least this many iterations, and only after twice as many.
RATE_WINDOW = 5


def cost_ratio(problem, k) -> float:
    """An evaluation of the ascent over a step of the alternation, in multiply-adds: ``A_alpha``
    (``q^2 n / 2``, or ``n^2`` for the features' Gram matrix where there are fewer features than
    samples), its leading eigenpairs (``2 r^3 / 3`` for ``r = min(q, n)`` by LAPACK, about
    ``40 (k + 1) r^2`` by ARPACK beyond :data:`DENSE_EIGEN_LIMIT`), ``M Q`` (a thin pass,
    ``q n (k +`` :data:`READ_COST` ``)``) and :data:`FEATURE_COST` per feature, against two thin
    passes. Measured over modelled on nine shapes (100 x 2,000 to 200,000, five bundled sets, a
    PBMC-sized table; k = 2 and 8; ``benchmarks.bench_convergence`` part 5): 0.5-2.4, against
    0.1-0.9 when thin passes were counted at ``q n k`` (planted 100 x 200,000 at k = 2: 2.0
    measured, 12.9 modelled then, 3.0 now; the alternation went on for 93 steps then, where now it
    hands over and the ascent takes 46 evaluations, 2 s less).

    It counts a formed ``A_alpha`` also where the evaluation goes without
    (:data:`.problem.MATRIX_FREE_FROM`, about a quarter of the work on a PBMC-sized table): with
    that cost the alternation handed over earlier and the ascent went on longer, so the λ path
    took 0.77 s against 0.91 s, but single runs took longer (PBMC-sized 700 x 765, k = 4 and 8: 0.23
    and 0.28 s against 0.19 and 0.21) and k = 8 settled at a lower fixed point (objective 1.36206
    against 1.36304). Same sitting, 2-core AMD EPYC."""
    q, n = problem.features.n_samples, problem.features.n_kept
    small = min(q, n)
    # LAPACK's tridiagonal reduction up to DENSE_EIGEN_LIMIT, else ARPACK's products (tens of them)
    eigen = 2 * small ** 3 / 3 if small <= DENSE_EIGEN_LIMIT else 40 * (k + 1) * small ** 2
    thin_pass = q * n * (k + READ_COST)
    evaluation = (n * n if n < q else q * q * n / 2) + eigen + thin_pass + FEATURE_COST * n + EVALUATION_OVERHEAD
    return evaluation / (2.0 * thin_pass + STEP_OVERHEAD)


class Handover:
    """When the alternation of Definition 2 hands over to the ascent: once its iterations, or
    those its linear rate predicts to ``tol``, exceed what :data:`TYPICAL_EVALUATIONS` of the
    ascent cost (:func:`cost_ratio`), or half of ``max_iter``, or once it stops contracting. The
    rate is read off the later half of the iterations so far (at least :data:`RATE_WINDOW`), of
    those since the residual last was above :data:`JUDGED_BELOW`, and only after a fifth of the
    budget: the residuals stall
    for a few steps and drop again (a PBMC-sized table at k = 2 and 4: plateaus of 5-10 steps in
    runs that settle in 71-109), and a window of the last five took them for a crawl. Near a saddle
    they fall slowly, rise while the iterate leaves it and fall fast after (the tour's PBMC-shaped
    table, 700 x 765 at k = 2: 5.8e-3 at step 50, 6.5e-2 at 72, tol at 121); judged after a tenth
    of the budget, that run handed over at step 58 and the ascent took 21 evaluations, 1.06 s
    against 0.21 s for the alternation alone. Waiting for a fifth costs planted 100 x 20,000 at
    k = 2 eight more steps (66 iterations against 58, the same 1.0 s; both before the mixing and
    the cost model's reads). Decided on the residuals alone, so a run is reproducible."""

    def __init__(self, ratio, tol, max_iter):
        # the alternation may not take the whole of max_iter: the ascent needs iterations left
        self.budget = min(int(np.ceil(TYPICAL_EVALUATIONS * ratio)), max(1, max_iter // 2))
        self.tol = tol

    def __call__(self, trace) -> bool:
        done = trace.n_iter
        if done >= self.budget:
            return True
        if done <= max(2 * RATE_WINDOW, self.budget // 5):
            return False  # a fifth of the budget (3 evaluations' cost) before the rate is judged
        residuals = np.max(np.asarray(trace.residuals), axis=1)
        above = np.flatnonzero(residuals > JUDGED_BELOW)
        settling = residuals[above[-1] + 1:] if above.size else residuals  # since it last was above
        window = min(max(RATE_WINDOW, done // 2), settling.size - 1)
        if window < RATE_WINDOW:
            return False
        first, last = settling[-window - 1], settling[-1]
        if first <= 0 or last <= 0:
            return False
        rate = (last / first) ** (1.0 / window)
        if rate >= 1.0:
            return True  # not contracting over half its run: it will not arrive in the budget
        return done + np.log(self.tol / last) / np.log(rate) > self.budget


def takes_newton_steps(problem, k) -> bool:
    """Whether the ascent takes Newton steps (:func:`ascend`): ``A_alpha`` formed and small enough
    for all its eigenpairs (:data:`.problem.DENSE_EIGEN_LIMIT` samples), which the Hessian's
    products need, on at least :data:`NEWTON_FROM` features. Not in the features' dual form or
    matrix-free (L-BFGS there)."""
    features = problem.features
    return (features.n_kept >= NEWTON_FROM and features.n_samples <= DENSE_EIGEN_LIMIT
            and not evaluates_dual(features, k) and not evaluates_matrix_free(problem, k))


def ascend(problem, k, x0, *, max_iter, tol, trace, progress):
    """L-BFGS, or Newton steps in a trust region (:func:`takes_newton_steps`), on
    ``-theta(x / ||x||)`` from ``x0`` (in the operator's variable ``beta``), recording
    each iterate in ``trace`` (:class:`core.selection._spectral.IterationTrace`) until both its
    residuals are at most ``tol``, the progress callback stops it, ``max_iter`` iterations pass, the
    line search (or the trust region's model) can go no further, or ``Q`` is found undetermined.

    Returns ``(alpha, Q, evaluations, hessian_products, undetermined)``: the last accepted iterate
    (alpha oriented, unit norm), its ``Q``, the number of evaluations (each a pass for ``A_alpha``
    and a thin one for ``P``) and of the Hessian's products (two thin passes each), and an
    :class:`.problem.Undetermined` where the last iterate's ``Q`` is not determined (the ascent
    stops once that has held for :data:`UNDETERMINED_AFTER` evaluations
    in a row without the residuals passing), else None.
    """
    newton = takes_newton_steps(problem, k)
    evaluation = Evaluation(problem, k, spectrum=newton)

    def callback(intermediate_result):
        e = evaluation.at(intermediate_result.x)
        ended = trace.record(trace.n_iter + 1, e.theta, e.theta, e.alpha_residual, e.Q_residual, tol, None,
                             progress, max_iter)
        if ended or evaluation.low_gap_run >= UNDETERMINED_AFTER:
            raise StopIteration  # SciPy's way to end from a callback: result.x is this iterate

    x0 = np.asarray(x0, dtype=np.float64)
    remaining = max_iter - trace.n_iter
    if newton:
        # every iteration, a step taken or refused, is one evaluation and is recorded as one
        result = optimize.minimize(evaluation.objective, x0, jac=evaluation.gradient, hessp=evaluation.hessian_times,
                                   method="trust-krylov", callback=callback,
                                   options=dict(maxiter=remaining, gtol=0.0, initial_trust_radius=TRUST_RADIUS))
    else:
        result = optimize.minimize(evaluation.objective, x0, jac=evaluation.gradient, method="L-BFGS-B",
                                   callback=callback,
                                   options=dict(maxiter=remaining, maxfun=4 * remaining + 20, maxcor=MEMORY,
                                                ftol=0.0, gtol=0.0, maxls=40))
    e = evaluation.at(result.x)
    undetermined = e.gap
    if trace.n_iter == 0:  # ended before its first iteration (the line search found nothing better than x0)
        trace.record(1, e.theta, e.theta, e.alpha_residual, e.Q_residual, tol, None, progress, max_iter)
    alpha = problem.to_alpha(e.beta)
    return alpha, e.Q(), evaluation.count, evaluation.hessian_products, undetermined


def run_ascent(problem, k, beta0, *, max_iter, tol, progress, trace=None):
    """One start of Q-alpha by the ascent (:func:`ascend`) from ``beta0``, its last iterate measured
    by products with the data (:meth:`.problem.Problem.measure`), which decide whether it settled.
    Returns the run's record (as :func:`.iterate.alternate`) with ``evaluations``,
    ``hessian_products``, ``undetermined`` and ``settled``, and ``Pt`` (``(M Q)^T`` of the last iterate), from which the alternation goes on
    where the measured residuals do not pass (the line search stopped short of ``tol``, rounding in
    ``A_alpha``). ``trace``, if given, holds iterations before this one, which count towards ``max_iter``."""
    trace = IterationTrace() if trace is None else trace
    # BLAS on one thread throughout: the weighted Gram matrix splits its columns over the cores
    # itself, and OpenBLAS's threads, woken by a product between two of its parts, spun on the
    # cores the parts ran on (100 x 200,000: 118 ms a Gram matrix against 43)
    with one_blas_thread():
        alpha, Q, evaluations, hessian_products, undetermined = ascend(problem, k, beta0, max_iter=max_iter, tol=tol,
                                                                       trace=trace, progress=progress)
    objective, eigenvalue, alpha_residual, Q_residual, Pt = problem.measure(alpha, Q, fixed_Q=False)
    settled = trace.revise(objective, eigenvalue, alpha_residual, Q_residual, tol)
    return dict(trace.result(alpha, Q), evaluations=evaluations, hessian_products=hessian_products,
                undetermined=undetermined, settled=settled, Pt=Pt)
