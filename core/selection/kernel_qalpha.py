"""Kernel Q-alpha ([SW04] Sec. 2, Definition 2).

The rows ``m_i`` of ``M`` (the features, centred and of unit norm as in :func:`core.selection.qalpha.q_alpha`)
are mapped by a kernel, and the algorithm runs on the ``n x n`` kernel matrix ``V`` of the
features alone: ``Q = Phi^T E`` is represented by an ``n x k`` matrix ``E`` with
``E^T V E = I``, ``G = V o (V E E^T V)`` (``G_ij = k(m_i, m_j) v_i^T E E^T v_j``), and the
orthogonal-iteration step uses ``Z^T Z = E^T V D V D V E`` (never ``Z``) and its Cholesky factor
``R`` (the kernel Gram-Schmidt).

A correction to the printed Definition 2: with ``Z = Phi^T D V E`` and ``Z = Q R``,
``Q = Phi^T (D V E R^{-1})``, so the new ``E`` is ``D V E R^{-1}``. The printed step 5,
``E <- E R^{-1}``, would only rescale the old ``Q`` and does not reproduce linear Q-alpha; the
test suite checks that the corrected update does.

What a kernel can and cannot add. ``G`` and ``E`` are functions of ``V`` (and of ``alpha``)
only, and for dot-product kernels (polynomial) and RBF on unit vectors ``V_ij`` is a function of
the correlation ``m_i^T m_j``. So the kernel reshapes *pairwise* affinities -- a polynomial of
high degree favours a few strongly coupled features over many weakly coupled ones -- but when
the features are exactly decorrelated (``M M^T = I``) ``V`` treats every feature alike and no
such kernel can single out a group: higher-order cumulants among three or more features do not
enter ``V``. ``tests/core/selection/test_kernel_qalpha.py`` demonstrates both.

References
----------
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004, Sec. 2.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import ArpackNoConvergence, eigsh

from ._spectral import (IterationTrace, check_clusters, check_settings, checked_in_float64, continued_note,
                        eigen_residual, leading_lanczos, orient, result_warnings, side_scaling)
from ..errors import InputError
from ..matrix import dense_matrix
from ..matrix.threads import blas_threads_for
from ..limits import memory_limit_bytes
from ..progress import ProgressCallback, warn_not_converged
from ._qalpha import anderson
from ._qalpha.prepare import AUTO_DENSE_LIMIT
from .qalpha import DEFAULT_MAX_ITER, QAlphaResult, preprocess_features, side_variance
from ..validation import check_positive_int, check_random_state
from ..validation import check_real as _check_real
from ..validation import require_finite as _require_finite

__all__ = ["kernel_q_alpha", "kernel_matrix", "kernel_memory_bytes", "memory_limit_bytes", "KERNELS"]

KERNELS = ("linear", "poly", "rbf")
#: A float32 run iterates in float32 until its residuals are at most this (or tol, if larger), its
#: iterates mixed as float64 ones are, and goes on in float64 from there, with the float64 kernel
#: matrix kept for it. Below it the float32 images' rounding, about 1e-7 of them, is a
#: visible share of the differences the mixing fits: mixed to tol 1e-6 in float32, lung_small at
#: gamma 5 took 501 iterations and TOX-171 at 0.5 broke down.
FLOAT32_RESIDUAL = 1e-4


def kernel_memory_bytes(n_features: int) -> int:
    """Working memory of kernel Q-alpha for ``n_features``: about four ``n x n`` float64 arrays
    (V, G, the outer product P P^T and the eigen-solver's copy)."""
    return int(4 * 8 * n_features**2)


def kernel_matrix(Mt, kernel="linear", degree=2, coef0=0.0, gamma=None) -> np.ndarray:
    """``V_ij = k(m_i, m_j)`` for the normalised features (columns of ``Mt``, unit norm).

    ``"linear"``: ``m_i^T m_j``; ``"poly"``: ``(m_i^T m_j + coef0)^degree``; ``"rbf"``:
    ``exp(-gamma ||m_i - m_j||^2)`` (``= exp(-2 gamma (1 - m_i^T m_j))`` for unit vectors);
    a callable is called as ``kernel(M, M)`` with ``M`` the ``n x q`` feature rows and must
    return a symmetric ``n x n`` matrix.
    """
    n = Mt.shape[1]
    if callable(kernel):
        M = np.ascontiguousarray(Mt.T)
        try:
            V = np.asarray(kernel(M, M), dtype=np.float64)
        except InputError:
            raise
        except Exception as exc:  # a user's function: report what it raised
            raise InputError(f"The kernel function failed: {exc}") from None
        if V.shape != (n, n):
            raise InputError(f"The kernel function must return a {n} x {n} matrix (features x "
                             f"features); it returned shape {V.shape}.")
        if not np.isfinite(V).all():
            raise InputError("The kernel function returned NaN or infinite values.")
        if not np.allclose(V, V.T, rtol=1e-8, atol=1e-10 * max(np.abs(V).max(), 1e-300)):
            raise InputError("The kernel function returned a matrix that is not symmetric; a kernel "
                             "must satisfy k(x, y) = k(y, x).")
        return (V + V.T) / 2
    # in place: each n x n temporary is fresh memory whose first touch costs more than the
    # arithmetic (on the AR faces a first call took 0.24 s and 135 MB with the temporaries, 0.10 s
    # and 47 MB in place)
    gram = Mt.T @ Mt
    if kernel == "linear":
        return gram
    if kernel == "poly":
        gram += coef0
        return np.power(gram, degree, out=gram)
    gram -= 1.0
    gram *= 2.0 * gamma
    return np.exp(gram, out=gram)


def _check_kernel(kernel, degree, coef0, gamma):
    if callable(kernel):
        return kernel, degree, coef0, gamma
    if kernel not in KERNELS:
        raise InputError(f"kernel must be one of {KERNELS} or a callable; got {kernel!r}.")
    if kernel == "poly":
        if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 1:
            raise InputError(f"The polynomial degree must be an integer of at least 1; got {degree!r}.")
        coef0 = _check_real(coef0, "coef0")
        # the kernel's values reach (1 + |coef0|)^degree on unit vectors; past 1e100 the sums
        # of products that follow leave float64's range
        if degree * np.log10(1.0 + abs(coef0)) > 100:
            raise InputError(f"A polynomial kernel of degree {degree} with coef0 = {coef0:g} reaches "
                             f"(1 + |coef0|)^degree = 1e{degree * np.log10(1.0 + abs(coef0)):.0f}, beyond float64's "
                             "working range; lower the degree or coef0.")
    if kernel == "rbf":
        gamma = _check_real(5.0 if gamma is None else gamma, "gamma", low=0.0, low_open=True)
    return kernel, degree, coef0, gamma


def _check_solver(solver, power_steps, kernel, coef0, dtype):
    """``(power, power_steps, dtype)`` checked: the power solver only on a positive semi-definite kernel."""
    if solver not in ("eigen", "power"):
        raise InputError(f"solver must be 'eigen' or 'power'; got {solver!r}.")
    power_steps = check_positive_int(power_steps, "power_steps")
    semi_definite = isinstance(kernel, str) and not (kernel == "poly" and coef0 < 0)
    if solver == "power" and not semi_definite:
        raise InputError("solver='power' needs a positive semi-definite kernel (a built-in one; polynomial with "
                         "coef0 >= 0): use solver='eigen'.")
    dtype = np.dtype(dtype)
    if dtype not in (np.float64, np.float32):
        raise InputError(f"dtype must be float64 or float32; got {dtype}.")
    return solver == "power", power_steps, dtype


def _check_memory(n_features, memory_limit):
    limit = memory_limit_bytes() if memory_limit is None else int(memory_limit)
    needed = kernel_memory_bytes(n_features)
    if needed > limit:
        raise InputError(f"Kernel Q-alpha on {n_features:,} features needs about {needed / 2**30:.1f} GB "
                         f"for its {n_features:,} x {n_features:,} matrices, more than the limit of "
                         f"{limit / 2**30:.1f} GB. Select fewer features first (e.g. with linear Q-alpha).")


def _leading(C, beta0):
    """The leading eigenvector of ``C`` and what failed (None when nothing did)."""
    n = C.shape[0]
    # a full decomposition only for small matrices: warm-started Lanczos on the stored matrix
    # is far faster beyond (Yale's 1,024 features: 0.107 s per iteration with eigh)
    if n <= AUTO_DENSE_LIMIT:
        _, vectors = linalg.eigh(C, subset_by_index=[n - 1, n - 1])
        return vectors[:, 0], None
    return leading_lanczos(C, beta0, 1e-10)


def _initial_E(V, scaling, k, init, rng):
    """``E^(0)`` with ``E^T V E = I`` (so ``Q^(0) = Phi^T E^(0)`` is orthonormal).

    ``"uniform"``: the k leading eigenvectors of the affinity with equal weights (in the
    symmetric side-information variable), as in :func:`core.selection.qalpha.q_alpha`: with
    ``S^1/2 V S^1/2 = U mu U^T``, ``E = S^1/2 U mu^-1/2``. ``"random"``: a random ``n x k``
    matrix orthonormalised in the metric ``V``.
    """
    n = V.shape[0]
    if init == "uniform":
        # V in float64 (the run's float64 matrix, not copied: 0.4 s and 800 MB at 10,000 features);
        # without side data the scaling is 1 and its n x n outer product is skipped
        weighted = np.asarray(V, dtype=np.float64) if np.all(scaling == 1.0) else V * np.outer(scaling, scaling)
        if n <= AUTO_DENSE_LIMIT or k >= n - 1:
            values, vectors = linalg.eigh(weighted, subset_by_index=[n - k, n - 1])
        else:  # Lanczos: 0.13 s instead of 0.42 s for the AR faces' 2,400 x 2,400 matrix
            try:
                values, vectors = eigsh(weighted, k=k, which="LA", v0=np.ones(n), tol=1e-12)
            except ArpackNoConvergence:  # the dense decomposition always ends, at its higher cost
                values, vectors = linalg.eigh(weighted, subset_by_index=[n - k, n - 1])
        values = np.maximum(values, np.finfo(float).eps * values.max())
        return scaling[:, None] * vectors / np.sqrt(values)
    E = rng.standard_normal((n, k))
    return E @ linalg.inv(_cholesky_upper(E.T @ V @ E))


def _cholesky_upper(S, dtype=np.float64):
    """Upper Cholesky factor of a small SPD matrix made of products in ``dtype``, with a ridge at
    that precision's rounding if it is singular there (1e-12 of the trace in float64, 1e-6 in
    float32: a float32 Gram matrix of nearly dependent columns has eigenvalues of -1e-7 of it,
    digits at k = 10, RBF gamma 5).

    NumPy's, not SciPy's: the iteration's products run in NumPy's OpenBLAS, and a call into
    SciPy's own OpenBLAS between them leaves two thread pools spinning on two cores (on the AR
    faces the iteration took 17 ms instead of 8, ``benchmarks/bench_kernel_qalpha.py``)."""
    try:
        return np.linalg.cholesky(S).T
    except np.linalg.LinAlgError:
        share = 1e-12 if np.dtype(dtype) == np.float64 else 1e-6
        ridge = share * max(np.trace(S), np.finfo(float).tiny)
        return np.linalg.cholesky(S + ridge * np.eye(S.shape[0])).T


def _objective(gram_Z, alpha, scaling, side) -> float:
    """``alpha^T G alpha = trace(Z^T Z)``, over ``|S^-1/2 alpha|^2`` with side data."""
    objective = float(np.trace(gram_Z))
    if side is not None:
        objective /= float(np.sum((alpha / scaling) ** 2))
    return objective


def kernel_q_alpha(X, k, kernel="linear", degree=2, coef0=0.0, gamma=None, *, side=None,
                   lam=0.0, init="uniform", n_init=1, random_state=None, max_iter=DEFAULT_MAX_ITER, tol=1e-6,
                   solver="eigen", power_steps=1, progress: ProgressCallback | None = None,
                   dtype=np.float64, memory_limit: int | None = None) -> QAlphaResult:
    """Kernel Q-alpha: Q-alpha on the kernel matrix of the features ([SW04] Definition 2).

    Parameters
    ----------
    X : array_like, shape (n_samples, n_features)
    k : int
        Number of clusters, ``1 <= k < n_samples`` (and ``k <= n_features``).
    kernel : {"linear", "poly", "rbf"} or callable
        See :func:`kernel_matrix`. ``"linear"`` reproduces :func:`core.selection.qalpha.q_alpha`.
    degree, coef0 : polynomial kernel parameters (``degree >= 1``; default 2 and 0, the
        homogeneous kernel). A large ``coef0`` adds a constant to every affinity and flattens
        the weights: on Weston's data (seeds 0-1) ``coef0 = 1`` gave min/max weight 0.5-0.86
        (positive, not sparse), ``coef0 = 0`` gave 3e-9 and the three relevant features on top.
    gamma : RBF width (``> 0``, default 5). On unit vectors ``gamma = 1`` is nearly flat
        (min/max weight 0.6); ``gamma = 5`` gave 1e-10 with the relevant features on top.
    side, lam : side information as in :func:`core.selection.qalpha.q_alpha`: alpha is the leading
        eigenvector of ``(D + lam I)^{-1} G``.
    init, n_init, random_state, max_iter, tol, progress
        As in :func:`core.selection.qalpha.q_alpha`; the uniform start is documented in ``_initial_E``.
    solver : {"eigen", "power"}
        How step 3 of Definition 2 takes the leading eigenvector of ``G`` (or of ``S^1/2 G S^1/2``
        with side data). ``"eigen"``: formed and solved to convergence at every iteration
        (``eigh`` up to 100 features, Lanczos beyond). ``"power"``: ``power_steps`` products
        ``G beta = sum_l p_l o (V (p_l o beta))`` from the previous iteration's vector, never
        forming ``G`` (as ``solver="power"`` of :func:`~core.selection.qalpha.q_alpha`); the
        first product, ``V D V E`` up to scale, also serves the orthogonal-iteration step, which
        then takes the weights the iteration started from (one ``n x n x k`` product per
        iteration instead of two; on the AR faces at gamma = 5, 126 iterations in 0.76 s against
        118 in 1.2 s, the same weights to 6e-8). The
        fixed points are the same (at one, beta is the leading eigenvector either way); the
        power iteration is valid because ``G`` is positive semi-definite whenever ``V`` is (Schur's
        product theorem), which holds for the built-in kernels (polynomial with ``coef0 >= 0``).
        Where the problem has several maxima the two may settle in different ones (on the AR
        faces with RBF gamma = 5, the power iteration found the larger objective: 21.33 vs
        20.90), and the power iteration needs more iterations (126 against 55 there), each far
        cheaper (``benchmarks/bench_kernel_qalpha.py``). ``"eigen"`` (the default) is step 3 as
        printed. In float64 the power iteration's iterates are extrapolated by Anderson's mixing
        near a fixed point, as :func:`~core.selection.qalpha.q_alpha`'s alternation
        (``acceleration`` in the result): four bundled sets at RBF gamma 0.5-20, median 30
        iterations against 65 for the same weights (within 1.4e-5 of a run to tol 1e-10, the
        objective within 3e-11). float32 runs are mixed down to :data:`FLOAT32_RESIDUAL` and go on
        in float64 from there (``solver`` says where): below it their images' rounding misled the
        mixing.
    power_steps : int
        Products per iteration with ``solver="power"``.
    dtype : {numpy.float64, numpy.float32}
        Working precision of the kernel matrix's products (float64 by default). float32 halves
        the time of every product (on the AR faces with RBF gamma = 5 and ``solver="power"``:
        3.9 ms per iteration against 7.5 with two BLAS threads,
        ``benchmarks/bench_kernel_qalpha.py``); the matrix is computed in float64 and kept for
        the check, so the memory is not lower (1.5 float64 matrices). A float32 run iterates in
        float32 to a residual of :data:`FLOAT32_RESIDUAL` (or ``tol``, if larger), is checked with
        the float64 kernel matrix and goes on in float64 where it is short of ``tol``: the float64
        run's fixed point in about its iterations (lung_small, warpAR10P, TOX-171, ORL at gamma
        0.5-20: 16-40 iterations against 12-39; 219 against 151 at lung_small's gamma 5; unmixed to
        tol in float32 they had taken 44-537).
    memory_limit : int, optional
        Refuse problems whose ``n x n`` matrices need more bytes than this (default: half the
        physical memory); see :func:`kernel_memory_bytes`.

    Returns
    -------
    QAlphaResult
        ``Q`` holds ``E`` (``n_kept x k``, the representation of Q in the span of the mapped
        features) since Q itself lives in the kernel's feature space; ``solver`` is "kernel".
    """
    X = dense_matrix(X)
    n_samples, n_features = X.shape
    k = check_clusters(n_samples, k, what="Kernel Q-alpha")
    lam, n_init, max_iter = check_settings(lam=lam, init=init, n_init=n_init, max_iter=max_iter)
    kernel, degree, coef0, gamma = _check_kernel(kernel, degree, coef0, gamma)
    power, power_steps, dtype = _check_solver(solver, power_steps, kernel, coef0, dtype)
    _check_memory(n_features, memory_limit)
    Mt, kept, mean, scale = preprocess_features(X)
    if kept.size == 0:
        raise InputError("Every feature is constant over the samples: there is nothing to select.")
    n = kept.size
    clamp_note = None
    if k > n:
        clamp_note = (f"k = {k} is more than the {n} feature(s) that vary over the samples, and E (n x k) "
                      f"cannot have more independent columns than that: kernel Q-alpha ran with k = {n}.")
        warnings.warn(clamp_note, UserWarning, stacklevel=2)
        k = n
    exact = kernel_matrix(Mt, kernel, degree, coef0, gamma)
    _require_finite(exact, "The kernel matrix")
    V = exact.astype(dtype, copy=False)  # float64 kept for the check and the tail: the cast's peak
    scaling = np.ones(n)
    diagonal_full = None
    if side is not None:
        diagonal = side_variance(side, kept, scale, n_samples, n_features)
        scaling = side_scaling(diagonal, lam)
        diagonal_full = np.zeros(n_features)
        diagonal_full[kept] = diagonal
    rng = check_random_state(random_state)

    best, objectives = None, []
    # float32 runs go as far as their rounding lets the mixing see, float64 ones to tol
    phase_tol = tol if dtype == np.float64 else max(tol, FLOAT32_RESIDUAL)
    # one BLAS thread where threads cost more than they save (core.matrix.threads): by the work of
    # one product, n x n x k for the power step, an n x n matrix-vector product for the eigensolver
    with blas_threads_for(n * n * (k if power else 1)):
        for start in range(n_init):
            E = _initial_E(exact, scaling, k, init if start == 0 else "random", rng)
            run = _one_start(V, scaling, E, side=side, power=power, power_steps=power_steps, max_iter=max_iter,
                             tol=phase_tol, progress=progress, dtype=dtype)
            objectives.append(run["history"][-1])
            if best is None or run["history"][-1] > best["history"][-1]:
                best = run
            if run["stopped"]:
                break
    precision_note, float64_from = None, None
    if best["converged"] and dtype != np.float64:
        best, precision_note = _checked_in_float64(exact, scaling, best, side=side, tol=tol, dtype=dtype)
        if precision_note is not None and best["n_iter"] < max_iter:
            float64_from = best["n_iter"]
            with blas_threads_for(n * n * (k if power else 1)):
                best, precision_note = _continued_in_float64(exact, scaling, best, side=side, power=power,
                                                             power_steps=power_steps, max_iter=max_iter, tol=tol,
                                                             progress=progress, dtype=dtype)
        if phase_tol > tol:  # the float32 phase ends above tol by design: the solver says where, no note
            precision_note = None
    history, n_iter, stopped = best["history"], best["n_iter"], best["stopped"]
    full = np.zeros(n_features)
    full[kept] = best["alpha"]
    _require_finite(full, "Kernel Q-alpha's weights")
    notes, converged = result_warnings(full, history, best["converged"], best["failures"])
    notes = notes + tuple(note for note in (precision_note, clamp_note) if note)
    if not converged and not stopped:
        warn_not_converged("Kernel Q-alpha", n_iter, failures=best["failures"], residual=best["residuals"][-1].max(),
                           tol=tol)
    name = kernel if isinstance(kernel, str) else "callable"
    return QAlphaResult(alpha=full, Q=np.asarray(best["Q"], dtype=np.float64), objective=float(history[-1]),
                        history=np.asarray(history, dtype=np.float64), n_iter=n_iter, converged=converged,
                        eigenvalue=float(best["eigenvalue"]), residuals=best["residuals"], tol=float(tol),
                        method=f"kernel ({name})", criterion="sum",
                        solver=_solver_name(power, best.get("exact_from"), float64_from), k=k,
                        lam=float(lam), constant_features=np.setdiff1d(np.arange(n_features), kept),
                        side_diagonal=diagonal_full, restart_objectives=np.asarray(objectives),
                        stopped=bool(stopped), warnings=notes,
                        acceleration="Anderson extrapolation" if best.get("mixed", 0) else "")


def _solver_name(power, exact_from, float64_from) -> str:
    """What :attr:`QAlphaResult.solver` says of a kernel run: power or exact steps, where the power
    run went on with exact steps, and where a float32 run went on in float64."""
    name = "kernel power" if power else "kernel"
    if exact_from:
        name += f", then exact steps from iteration {exact_from + 1}"
    if float64_from:
        name += f"; float32 products to iteration {float64_from}, float64 from iteration {float64_from + 1}"
    return name


def _run_start(V, scaling, E, *, side, power, power_steps, max_iter, tol, progress, dtype, alpha0=None, trace=None):
    """One start of the iteration of [SW04] Definition 2 on the kernel matrix ``V`` from ``E``.

    Each iteration makes the pair ``(alpha, E)`` (``Q = Phi E``, ``E^T V E = I``) and tests it as
    :func:`core.selection._qalpha.iterate.alternate` does: alpha's eigen-residual for
    ``C = S^1/2 G S^1/2``, ``G = V o (P P^T)``, ``P = V E``, and Q's subspace residual for
    ``A_alpha = Phi D Phi^T``, both from the iteration's one ``n x n x k`` product ``V T``,
    ``T = D V E``. With ``power`` alpha and E move from the same iterate (one power step on alpha,
    one orthogonal-iteration step on E), the next iterate Anderson's mixing of the last images
    (:mod:`core.selection._qalpha.anderson`, as the linear alternation's: in ``beta``, ``E``'s basis
    turned to the last one's, a mixed point whose objective falls not taken); otherwise alpha is
    the exact leading eigenvector of ``C(E)`` and the pair is tested before E moves. Returns the
    tested pair and its record (:meth:`core.selection._spectral.IterationTrace.result`). ``alpha0``
    and ``trace``, if given, are the weights and the record of iterations before this one, which
    the count goes on from."""
    n = V.shape[0]
    beta = np.full(n, 1.0 / np.sqrt(n)) if alpha0 is None else np.asarray(alpha0, dtype=np.float64) / scaling
    alpha = _alpha_of(beta, scaling)
    beta = _beta_of(alpha, scaling)
    trace = IterationTrace() if trace is None else trace
    E = E.astype(dtype, copy=False)
    P = V @ E  # columns v_i^T E: G = V o (P P^T)
    # float32 runs end at FLOAT32_RESIDUAL, above the residuals where their rounding misled the mixing
    mixing = anderson.Mixing() if power and anderson.fits(n, n, E.shape[1]) else None
    accepted, fallback = -np.inf, None  # the last iterate's objective; its image, while a mixed point is tried
    n_iter = trace.n_iter
    while n_iter < max_iter:
        failure = None
        if power:
            T = alpha[:, None].astype(dtype) * P  # D V E
            VT = V @ T
            # C beta = S^1/2 G S^1/2 beta, alpha = S^1/2 beta / ||S^1/2 beta||; G alpha = sum_l p_l o (V T)_l
            image = scaling * np.einsum("ij,ij->i", VT, P).astype(np.float64) * float(np.linalg.norm(scaling * beta))
        else:
            G = P @ P.T
            G *= V
            C = (G * np.outer(scaling, scaling) if side is not None else G).astype(np.float64, copy=False)
            beta, failure = _leading(C, beta)
            image = C @ beta
            alpha = _alpha_of(beta, scaling)
            T = alpha[:, None].astype(dtype) * P
            VT = V @ T
        gram_Z = (T.T @ VT).astype(np.float64)  # Z^T Z = E^T V D V D V E, Z = A_alpha Q in Phi's space
        objective = _objective(gram_Z, alpha, scaling, side)
        if fallback is not None and objective < accepted - anderson.DROP_RTOL * abs(accepted):
            alpha, E, P = fallback  # the mixed point went downhill: not taken
            beta, fallback = _beta_of(alpha, scaling), None
            mixing.discarded()
            continue
        n_iter += 1
        eigenvalue, alpha_residual = eigen_residual(beta, image)
        Q_residual = _kernel_subspace_residual(T, VT, E, P, gram_Z)
        if trace.record(n_iter, objective, eigenvalue, alpha_residual, Q_residual, tol, failure, progress, max_iter):
            break
        accepted, last = objective, (beta, E, P)
        if power:
            beta = image / np.linalg.norm(image)
            for _ in range(power_steps - 1):  # beta <- S^1/2 G S^1/2 beta, G never formed
                weighted = scaling * beta
                beta = scaling * np.einsum("ij,ij->i", V @ (P * weighted[:, None].astype(dtype)), P)
                beta /= np.linalg.norm(beta)
            alpha = _alpha_of(beta, scaling)
        beta = _beta_of(alpha, scaling)
        # R^-1 of the k x k factor, then two n x k products (in NumPy, see _cholesky_upper)
        inverse_R = np.linalg.inv(_cholesky_upper(gram_Z, dtype)).astype(dtype)
        E = T @ inverse_R  # D V E R^-1
        # V E for the next iteration from the product just made: V (T R^-1) = (V T) R^-1
        P = VT @ inverse_R
        if mixing is not None:
            alpha, E, P, fallback = _mixed(mixing, max(alpha_residual, Q_residual), scaling, last, (beta, E, P), trace)
            beta = _beta_of(alpha, scaling)
    return trace.result(alpha, E)


def _alpha_of(beta, scaling):
    """The weights of the operator's eigenvector ``beta``: ``S^1/2 beta``, unit, summing to a
    positive number (as :meth:`core.selection._qalpha.problem.Problem.to_alpha`)."""
    return orient(scaling * beta / np.linalg.norm(scaling * beta))


def _beta_of(alpha, scaling):
    """The operator's unit vector ``beta`` of the weights ``alpha`` (:func:`_alpha_of` undone)."""
    return alpha / scaling / np.linalg.norm(alpha / scaling)


def _mixed(mixing, residual, scaling, last, image, trace):
    """The next iterate of the kernel power iteration after ``last = (beta, E, P)``, whose image is
    ``image`` (the same), by :class:`~core.selection._qalpha.anderson.Mixing`: ``(alpha, E, P,
    fallback)``, ``fallback`` the image's ``(alpha, E, P)`` where a mixed point is tried, else None.
    The image's ``E`` is turned to the last one's in ``V``'s inner product (``E_new^T V E =
    E_new^T P``: orthogonal Procrustes), as Q's basis is in the linear alternation; a mixed ``E``
    is made ``V``-orthonormal again with ``P = V E`` following (both are linear in ``E``)."""
    beta, E, P = last
    new_beta, new_E, new_P = image
    rotation = anderson.turned_to_last(new_E.T @ P).astype(new_E.dtype)  # new_E^T V E = new_E^T P
    new_E, new_P = new_E @ rotation, new_P @ rotation
    new_alpha = _alpha_of(new_beta, scaling)
    mixed = mixing.next(residual, np.concatenate([beta, E.ravel()]), np.concatenate([new_beta, new_E.ravel()]),
                        (new_beta, new_E, new_P))
    if mixed is None:
        return new_alpha, new_E, new_P, None
    trace.mixed += 1
    mixed_beta, mixed_E, mixed_P = mixed
    gram = (mixed_E.T @ mixed_P).astype(np.float64)
    inverse_R = np.linalg.inv(_cholesky_upper((gram + gram.T) / 2, mixed_E.dtype)).astype(mixed_E.dtype)
    alpha = _alpha_of(mixed_beta, scaling)
    return alpha, mixed_E @ inverse_R, mixed_P @ inverse_R, (new_alpha, new_E, new_P)


def _one_start(V, scaling, E, *, side, power, power_steps, max_iter, tol, progress, dtype):
    """One start from ``E``: the power run, and exact steps after it where it has not arrived by
    half of ``max_iter``, or the exact run."""
    # a power run hands over only once half of max_iter has passed without arriving: an exact step
    # costs 8 to 25 power steps (the features, the precision), and a rate read earlier mistook slow
    # runs for failing ones (the AR faces at gamma 5 settle in 134 power steps, 0.67 s; handed over
    # at 52, they took 5.9 s)
    trace = IterationTrace(lambda done: done.n_iter >= max(1, max_iter // 2)) if power else None
    run = _run_start(V, scaling, E, side=side, power=power, power_steps=power_steps, max_iter=max_iter, tol=tol,
                     progress=progress, dtype=dtype, trace=trace)
    if run["handed_over"]:
        run = _exact_steps_after(V, scaling, run, side=side, max_iter=max_iter, tol=tol, progress=progress)
    return run


def _exact_steps_after(V, scaling, run, *, side, max_iter, tol, progress):
    """The exact step of Definition 2 (alpha the leading eigenvector of ``G``), in float64, from
    where a power run handed over because it would not arrive (on a PBMC-shaped table, 765 genes
    at k = 10, 1,000 power steps ended unconverged at a residual of 4.6e-4 where 8 exact ones
    converged). Their fixed points are the same; the run goes on from its last iterate, to
    ``max_iter`` iterations in all."""
    V = V.astype(np.float64, copy=False)
    E = np.asarray(run["Q"], dtype=np.float64)
    E = E @ linalg.inv(_cholesky_upper(E.T @ V @ E))
    continued = _run_start(V, scaling, E, side=side, power=False, power_steps=1, max_iter=max_iter, tol=tol,
                           progress=progress, dtype=np.float64, alpha0=run["alpha"], trace=IterationTrace.resumed(run))
    return dict(continued, exact_from=run["n_iter"])


def _continued_in_float64(V, scaling, run, *, side, power, power_steps, max_iter, tol, progress, dtype):
    """A float32 run whose residuals passed there but not with the float64 kernel matrix ``V``
    goes on in float64 from its last iterate, to ``max_iter`` iterations in all: the precision,
    not the problem, stopped it. Returns the run and a note that says what happened."""
    E = np.asarray(run["Q"], dtype=np.float64)
    continued = _run_start(V, scaling, E @ linalg.inv(_cholesky_upper(E.T @ V @ E)), side=side, power=power,
                           power_steps=power_steps, max_iter=max_iter, tol=tol, progress=progress, dtype=np.float64,
                           alpha0=run["alpha"], trace=IterationTrace.resumed(run))
    return continued, continued_note(dtype, tol, run, continued, "with the kernel matrix")


def _checked_in_float64(V, scaling, run, *, side, tol, dtype):
    """A float32 run whose residuals passed, checked with the float64 kernel matrix ``V``: its
    residuals, eigenvalue and objective recomputed there (``E`` first made ``V``-orthonormal in
    float64). Returns the run, not converged where they exceed ``tol``, and a note (or None)."""
    alpha = np.asarray(run["alpha"], dtype=np.float64)
    E = np.asarray(run["Q"], dtype=np.float64)
    E = E @ linalg.inv(_cholesky_upper(E.T @ V @ E))
    P = V @ E
    beta = _beta_of(alpha, scaling)
    T = alpha[:, None] * P
    VT = V @ T
    image = scaling * np.einsum("ij,ij->i", VT, P) * float(np.linalg.norm(scaling * beta))
    eigenvalue, alpha_residual = eigen_residual(beta, image)
    gram_Z = T.T @ VT
    Q_residual = _kernel_subspace_residual(T, VT, E, P, gram_Z)
    return checked_in_float64(run, residuals=(alpha_residual, Q_residual), eigenvalue=eigenvalue,
                              objective=_objective(gram_Z, alpha, scaling, side), Q=E, tol=tol, dtype=dtype,
                              against="with the kernel matrix")


def _kernel_subspace_residual(T, VT, E, P, gram_Z) -> float:
    """:func:`core.selection._spectral.subspace_residual` of ``Q = Phi E`` in feature space, from
    ``Z = Phi T``: ``Q^T Z = E^T V T = P^T T`` and ``V (T - E W) = V T - P W``, so no ``n x n``
    product more (and no difference of squares, which float32 would lose)."""
    W = (P.T @ T).astype(np.float64)
    rest = (T - E @ W).astype(np.float64)
    squared = float(np.sum(rest * (VT - P @ W)))
    size = float(np.sqrt(max(np.linalg.eigvalsh(gram_Z)[-1], 0.0)))
    return float(np.sqrt(max(squared, 0.0))) / size if size > 0 else 1.0
