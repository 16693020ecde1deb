"""The iterate stage of Q-alpha's solver: one start from its first iterate to the fixed point.

:func:`one_start` runs the alternation of [WS03] Definition 2 between alpha and Q (:func:`alternate`:
the operator ``C(Q)``'s leading eigenvector by dense, Lanczos or power steps, then one
orthogonal-iteration step on Q, or the exact leading eigenvectors in the basic scheme) and, where the
quasi-Newton ascent applies, hands over to it (:mod:`.ascent`) once the alternation's linear rate
predicts it slower; where the ascent stops short of ``tol`` the alternation goes on from its last
iterate. Every iterate is recorded in an :class:`core.selection._spectral.IterationTrace`.

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import LinearOperator

from . import anderson, ascent
from .problem import DENSE_LIMIT
from .start import Start
from .._spectral import IterationTrace, eigen_residual, lapack, leading_lanczos, norm, subspace_residual
from ...matrix.sample_vectors import leading_sample_vectors


def one_start(problem, prepared, start: Start, progress, trace=None):
    """One start of the iteration on ``problem`` from ``start`` (:class:`.start.Start`): the
    alternation first (``start.beta`` None), handing over to the ascent where its rate predicts it
    slower (:class:`.ascent.Handover`), or the ascent from ``start.beta``; where the ascent's last
    iterate, measured by products with the data, does not pass ``tol`` (and was not stopped, found
    undetermined or out of iterations), the alternation goes on from it, to ``max_iter`` in all.
    ``trace``, if given, holds iterations before these (a run that goes on in float64).

    Returns the run's record (:meth:`~core.selection._spectral.IterationTrace.result`) with
    the ascent's counts (:func:`ascent_counts`) and ``undetermined`` (:class:`.problem.Undetermined` or None)."""
    settings = prepared.settings
    common = dict(max_iter=settings["max_iter"], tol=settings["tol"], progress=progress)
    alternation = dict(common, method=prepared.method, solver=prepared.solver, eig_tol=settings["eig_tol"],
                       power_steps=settings["power_steps"], extrapolate=bool(prepared.accelerate))
    dtype = problem.features.dtype
    if start.beta is None:
        if trace is None:
            trace = IterationTrace(ascent.Handover(ascent.cost_ratio(problem, prepared.k), settings["tol"],
                                                   settings["max_iter"]) if prepared.accelerated else None)
        run = alternate(problem, start.Q.astype(dtype), fixed_Q=prepared.fixed_Q, alpha0=start.alpha,
                        Pt0=None if start.Pt is None else start.Pt.astype(dtype), trace=trace, **alternation)
        if not run["handed_over"]:
            return dict(run, **ascent_counts(), undetermined=None)
        beta0, trace = problem.to_beta(np.asarray(run["alpha"], dtype=np.float64)), IterationTrace.resumed(run)
    else:
        beta0 = start.beta
    run = ascent.run_ascent(problem, prepared.k, beta0, trace=trace, **common)
    if run["settled"] or run["stopped"] or run["undetermined"] is not None or run["n_iter"] >= settings["max_iter"]:
        return run
    continued = alternate(problem, run["Q"], fixed_Q=False, alpha0=run["alpha"], Pt0=run["Pt"],
                          trace=IterationTrace.resumed(run), **alternation)
    return dict(continued, **ascent_counts(run), undetermined=None)


def continue_in_float64(problem64, prepared, run, progress):
    """A lower-precision run whose residuals passed there but not in float64 (:mod:`.certify`) goes
    on in float64 on ``problem64`` from its last iterate, to ``max_iter`` iterations in all: the
    precision, not the problem, stopped it."""
    alpha = np.asarray(run["alpha"], dtype=np.float64)
    start = Start(np.asarray(run["Q"], dtype=np.float64), alpha=alpha,
                  beta=problem64.to_beta(alpha) if prepared.accelerated else None)
    continued = one_start(problem64, prepared, start, progress, trace=IterationTrace.resumed(run))
    return dict(continued, **ascent_counts(run, continued))


def ascent_counts(*runs) -> dict:
    """The ascent's evaluations and Hessian products over ``runs`` (records of one start and of
    its continuation), 0 where none ran."""
    return {name: sum(run.get(name, 0) for run in runs) for name in ("evaluations", "hessian_products")}


def leading_eigvec(problem, Pt, beta0, solver, eig_tol, power_steps):
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


def alternate(problem, Q0, *, method, fixed_Q, max_iter, tol, solver, eig_tol, power_steps, progress, alpha0=None,
              Pt0=None, trace=None, extrapolate=False):
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
        return _alternate_simultaneously(problem, Q0, max_iter=max_iter, tol=tol, progress=progress, alpha0=alpha0,
                                         Pt0=Pt0, trace=trace, extrapolate=extrapolate)
    features = problem.features
    Q = Q0
    Pt = features.transposed_times(Q) if Pt0 is None else Pt0  # k x n, rows p_l = M q_l
    beta, alpha = _first_weights(problem, alpha0)
    trace = IterationTrace() if trace is None else trace
    for n_iter in range(trace.n_iter + 1, max_iter + 1):
        # Steps 1-2: alpha = leading eigenvector of C(Q) (G(Q) or its side-information form).
        beta, image, failure = leading_eigvec(problem, Pt, beta, solver, eig_tol, power_steps)
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


def _alternate_simultaneously(problem, Q0, *, max_iter, tol, progress, alpha0=None, Pt0=None, trace=None,
                              extrapolate=False):
    """Power-embedded Q-alpha with one power step on alpha, two passes over the data per iteration.

    Alpha and Q are updated from the same iterate: with ``T = M^T (alpha o P) = A_alpha Q`` and
    ``U = M T``, ``G(Q) alpha = sum_l p_l o u_l`` gives the power step on alpha, ``T -> Q R`` the
    orthogonal-iteration step on Q, and ``M Q_new = U R^{-1}`` the next ``P``: one product with
    ``M^T`` and one with ``M`` per iteration instead of four. The fixed points are those of
    Definition 2 (alpha an eigenvector of G(Q), Q spanning the leading eigenvectors of A_alpha).
    The same pass gives both residuals of the iterate ``(alpha, Q)`` it starts from, so the test
    costs no product: the run returns that iterate, its objective ``||T||_F^2`` (``alpha^T G(Q)
    alpha``, over the side quotient's denominator with side data) and its Rayleigh quotient.
    ``extrapolate``: the next iterate is Anderson's mixing of the last images (:mod:`.anderson`),
    where its memory fits; a mixed point whose criterion is below the last iterate's is not taken
    (one step's passes, not counted as an iteration) and the run goes on from that iterate's image.
    """
    features = problem.features
    Q = Q0
    Pt = features.transposed_times(Q) if Pt0 is None else Pt0
    beta, alpha = _first_weights(problem, alpha0)
    trace = IterationTrace() if trace is None else trace
    k = Q.shape[1]
    mixing = anderson.Mixing() if extrapolate and anderson.fits(problem.n, problem.q, k) else None
    accepted, fallback = -np.inf, None  # the last iterate's objective; its image, while a mixed point is tried
    tested_image = None  # A_alpha Q of the iterate returned, where the run ended at a test of it
    n_iter = trace.n_iter
    while n_iter < max_iter:
        # T = A_alpha Q (q x k) and U = (M T)^T (k x n): one pass over the data
        T, U = features.fused((Pt * alpha).T)
        objective = problem.objective(alpha, T)
        if fallback is not None and objective < accepted - anderson.DROP_RTOL * abs(accepted):
            alpha, Q, Pt = fallback  # the mixed point went downhill: not taken
            beta, fallback = problem.to_beta(alpha), None
            mixing.discarded()
            continue
        n_iter += 1
        image = np.einsum("ln,ln->n", Pt, U)  # G(Q) alpha
        if problem.side_scale is not None:
            # C beta = S^1/2 G S^1/2 beta with alpha = S^1/2 beta / ||S^1/2 beta||
            image *= problem.side_scale * norm(problem.side_scale * beta)
        eigenvalue, alpha_residual = eigen_residual(beta, image)
        Q_residual = subspace_residual(Q, T)
        if trace.record(n_iter, objective, eigenvalue, alpha_residual, Q_residual, tol, None, progress, max_iter):
            tested_image = T
            break
        accepted = objective
        new_alpha = problem.to_alpha(image / norm(image))
        new_Q, R = anderson.signed_qr(T)  # one orthogonal-iteration step, T -> Q R
        if R.diagonal().min() <= 1e-13 * R.diagonal().max():
            # A_alpha has rank below k: keep the columns it spans and complete the basis
            new_Q = leading_sample_vectors(features, new_alpha, k).vectors
            new_Pt = features.transposed_times(new_Q)
        else:
            new_Pt = _following_P(features, new_Q, R, U, n_iter)
        if mixing is not None:
            rotation = anderson.turned_to_last(new_Q.T @ Q)
            new_Q, new_Pt = new_Q @ rotation, rotation.T @ new_Pt
            # mixed in the operator's variable, beta, whose image the power step gives: alpha is
            # S^1/2 beta normalised with side data, and a mix of alphas read as a beta was scaled
            # twice (digits' λ path: 51 mixed points discarded in 264 iterations, none gained)
            new_beta = problem.to_beta(new_alpha)
            mixed = mixing.next(max(alpha_residual, Q_residual), np.concatenate([beta, Q.ravel()]),
                                np.concatenate([new_beta, new_Q.ravel()]), (new_beta, new_Q, new_Pt))
        else:
            mixed = None
        if mixed is None:
            alpha, Q, Pt, fallback = new_alpha, new_Q, new_Pt, None
        else:
            trace.mixed += 1
            fallback = (new_alpha, new_Q, new_Pt)
            alpha = problem.to_alpha(mixed[0])
            Q, R = anderson.signed_qr(mixed[1])  # orthonormal again; P = M Q follows as R^-T P
            Pt = _following_P(features, Q, R, mixed[2], n_iter)
        beta = problem.to_beta(alpha)
    # the certification reads the Ritz values of Q from A_alpha Q without another pass
    return dict(trace.result(alpha, Q), image=tested_image)


def _following_P(features, Q, R, image, n_iter):
    """``P^T = (M Q)^T`` for ``Q = Z R^-1`` where ``image`` is ``(M Z)^T``: ``R^-T image``, or from the
    data every :data:`_P_REFRESH` steps and where ``R`` is ill-conditioned (rounding in the update
    would grow)."""
    diag = R.diagonal()  # non-negative (anderson.signed_qr)
    if diag.min() <= 1e-10 * diag.max() or n_iter % _P_REFRESH == 0:
        return features.transposed_times(Q)
    # R is k x k with its diagonal clear of 0 (above): LAPACK's inverse, 2 us against NumPy's 7
    return lapack("trtri", R.dtype)(R)[0].T @ image


def _first_weights(problem, alpha0=None):
    """The alternation's first weights, in the operator's variable (``beta``) and as ``alpha``:
    every ``beta`` equal, or ``alpha0`` (a warm start, or the iterate another method left)."""
    dtype = problem.features.dtype
    beta = problem.given_beta(alpha0, dtype)
    if beta is None:
        beta = problem.equal_beta(dtype)
    return beta, problem.to_alpha(beta)
