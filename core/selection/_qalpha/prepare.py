"""The prepare stage of Q-alpha's solver: the checks of :func:`core.selection.qalpha.q_alpha` and
everything of a run that λ does not change (:class:`Prepared`: the normalised features, the side
variances or the pairs' factor, the solver and whether the ascent applies), then the eigenproblem at
one λ (:func:`problem_at`). Built once for a λ path.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .problem import Problem, SideVariances, pair_factor, side_variance
from .._spectral import check_clusters, side_scaling
from ...errors import InputError
from ...matrix import data_matrix, sample_vectors
from ...validation import as_labels, check_positive_int, check_real

#: Up to this many features the default solver decomposes G densely. Beyond it a Lanczos solve
#: per iteration is faster: 0.8 vs 0.8 ms at 100 features, 0.8 vs 5.9 ms at 400 and 1.3 vs 40 ms
#: at 600 (72 samples; Ben-Dor's 600 genes took 15 s instead of 0.45 s with dense steps).
AUTO_DENSE_LIMIT = 100

#: Q-alpha's criteria, by the value ``criterion`` takes, with the name a reader is shown:
#: Eq. (1) of [WS03] (the sum of the k largest squared eigenvalues of A_alpha) and the gap form
#: (that sum minus the rest).
CRITERION_NAMES = {"sum": "sum of eigenvalues²", "gap": "spectral gap"}


def check_criterion(criterion) -> None:
    if criterion not in CRITERION_NAMES:
        raise InputError(f"criterion must be 'sum' or 'gap'; got {criterion!r}.")


@dataclass(frozen=True, eq=False)  # built once, shared by a λ path's solves (and cached with it)
class Prepared:
    """What a Q-alpha run needs that does not depend on ``lam``: the normalised features, the side
    variances ``D`` or the pairs' factor, the checked settings, the solver of step 2 and whether the
    quasi-Newton ascent runs (``accelerated``: asked for, Q not fixed, ``A_alpha`` small enough)."""

    features: object
    n_features: int
    constant: np.ndarray
    criterion: str
    method: str
    fixed_Q: bool
    labels: object
    k: int
    side_diagonal: np.ndarray | None  # D of the kept features
    side_diagonal_full: np.ndarray | None
    pair_factor: np.ndarray | None
    settings: dict  # max_iter, tol, eig_tol, power_steps
    dtype: object
    solver: str
    accelerated: bool
    data: object = None  # the validated data, to check a float32 run in float64
    side: object = None
    pairs: object = None
    accelerate: object = True  # True, False or "always", as asked


def prepare(X, k, *, labels, side, pairs, criterion, method, max_iter, tol, solver, eig_tol, power_steps,
            dtype, memory_limit, persist=None, accelerate=True) -> Prepared:
    """The checks of :func:`core.selection.qalpha.q_alpha` and everything of a run that ``lam`` does not change."""
    data = data_matrix(X, memory_limit=memory_limit, persist=persist)
    n_samples, n_features = data.shape
    check_criterion(criterion)
    if criterion == "gap":
        data.dense("The gap criterion needs q x q products per feature and runs on dense in-memory data "
                   "only; use criterion='sum' on sparse or chunked data, or pass a dense subset.")
    if method not in ("power", "basic"):
        raise InputError(f"method must be 'power' or 'basic'; got {method!r}.")
    if side is not None and pairs is not None:
        raise InputError("Give side information either as a side data set or as pairs, not both.")
    power_steps = check_positive_int(power_steps, "power_steps")
    if not (accelerate is True or accelerate is False or accelerate == "always"):
        raise InputError(f"accelerate must be True, False or 'always'; got {accelerate!r}.")
    tol = check_real(tol, "tol", low=0.0, low_open=True)
    eig_tol = check_real(eig_tol, "eig_tol", low=0.0)

    fixed_Q = labels is not None
    if fixed_Q:
        labels = as_labels(labels, n_samples)
        n_classes = np.unique(labels).size
        if n_classes < 2:
            raise InputError("The supervised mode needs at least two classes in the labels.")
        if k is not None and k != n_classes - 1:
            raise InputError(f"With labels, k is the number of classes minus one ({n_classes - 1}); "
                             f"got k={k}. Leave k out or set it to {n_classes - 1}.")
        k = n_classes - 1
    if k is None:
        raise InputError("Give k, the number of clusters, or labels for the supervised mode.")
    k = check_clusters(n_samples, k)

    features = data.normalised(dtype, stored=criterion == "gap")
    kept, scale = features.kept, features.scale
    if kept.size == 0:
        raise InputError("Every feature is constant over the samples (or varies only by rounding at its "
                         "magnitude, e.g. values near 1e16 that differ by less than 1): there is nothing to "
                         "select. Check that the right columns were loaded; subtract a common offset first.")
    varies = np.zeros(n_features, dtype=bool)
    varies[kept] = True
    constant = np.flatnonzero(~varies)

    diagonal = side_diagonal_full = None
    if side is not None:
        if isinstance(side, SideVariances):
            diagonal = side.diagonal[kept]
        else:
            diagonal = side_variance(side, kept, scale, n_samples, n_features)
        side_diagonal_full = np.zeros(n_features)
        side_diagonal_full[kept] = diagonal

    factor = None if pairs is None else pair_factor(pairs, data.shape, features)
    psd = criterion == "sum" and pairs is None
    solver = resolve_solver(solver, kept.size, psd)
    # the ascent needs Q free and A_alpha (q x q) small enough to form
    accelerated = bool(accelerate) and not fixed_Q and n_samples <= sample_vectors.GRAM_LIMIT
    if accelerate and fixed_Q and solver == "power":
        # Q fixed: alpha is one leading eigenvector, which power steps reach at G's slow rate
        solver = "dense" if kept.size <= AUTO_DENSE_LIMIT else "lanczos"
    return Prepared(features=features, n_features=n_features, constant=constant, criterion=criterion,
                    method=method, fixed_Q=fixed_Q, labels=labels, k=k, side_diagonal=diagonal,
                    side_diagonal_full=side_diagonal_full, pair_factor=factor, dtype=dtype, data=data,
                    side=side, pairs=pairs, accelerate=accelerate, solver=solver, accelerated=accelerated,
                    settings=dict(max_iter=max_iter, tol=tol, eig_tol=eig_tol, power_steps=power_steps))


def with_k(prepared, k) -> Prepared:
    """``prepared`` for another ``k``: the same data, side information and settings, for a search
    over k (:func:`core.selection.automatic.choose_settings`) that prepares them once."""
    if prepared.fixed_Q:
        raise InputError("In the supervised mode k is the number of classes minus one; it cannot be changed.")
    return replace(prepared, k=check_clusters(prepared.data.shape[0], k))


def problem_at(prepared, lam) -> Problem:
    """The eigenproblem of step 2 at ``lam``: the side scaling ``(D + lam I)^-1/2`` where there are side data."""
    side_scale = None
    if prepared.side_diagonal is not None:
        side_scale = side_scaling(prepared.side_diagonal, lam).astype(prepared.dtype)
    return Problem(prepared.features, prepared.criterion, side_scale=side_scale,
                   pair_factor=prepared.pair_factor, lam=lam)


def resolve_solver(solver, n, psd):
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
