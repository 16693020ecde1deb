"""The start stage of Q-alpha's solver: where each start begins. ``Q^(0)`` ([WS03] Sec. 3: the k
leading eigenvectors of ``M^T M``, every weight equal, or at random; the class subspace in the
supervised mode; a neighbouring λ's result on a λ path) and, where the ascent runs from the start,
its first weights.

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...matrix import sample_vectors
from ...matrix.sample_vectors import krylov_sample_vectors

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



@dataclass(frozen=True)
class Start:
    """Where one start begins: ``Q`` (``Q^(0)``, None where the ascent begins from equal weights),
    ``alpha`` (the kept features' weights of a warm start, else None), ``Pt`` (``(M Q^(0))^T`` where
    the start's last pass gave it), ``beta`` (the ascent's first weights where it runs from the
    start, else None) and the passes over the data the start took."""

    Q: np.ndarray | None
    alpha: np.ndarray | None = None
    Pt: np.ndarray | None = None
    beta: np.ndarray | None = None
    passes: int = 0


def first_iterate(problem, prepared, index, init, rng, warm=None, uniform=None) -> Start:
    """Start number ``index`` (0 first) of a run on ``problem``: the labels' class subspace in the
    supervised mode; ``warm`` (a result at a neighbouring λ) for the first; the ascent's equal
    weights where it runs alone from the uniform start (it needs no ``Q``); else :func:`initial_Q`
    (``init`` for the first start, random for the others), whose uniform ``Q^(0)`` is the first
    columns of ``uniform`` where a caller gives them (:func:`uniform_vectors`).

    The ascent runs from the first iterate where asked (``accelerate="always"``) and where each
    step of the alternation would solve the operator's eigenproblem (dense or Lanczos steps: the
    gap criterion, pairs), which costs an evaluation of the ascent or more (the audit's pairs and
    gap problems: 1-6 ms a step against 0.7 ms an evaluation, 2-core AMD EPYC)."""
    ascent_first = _ascent_first(prepared)
    if prepared.fixed_Q:
        start = Start(class_subspace(prepared.labels, problem.q))
    elif index == 0 and warm is not None:
        start = Start(warm.Q, alpha=warm.alpha[prepared.features.kept])
    elif ascent_first and index == 0 and init == "uniform":
        start = Start(None)
    elif index == 0 and init == "uniform" and uniform is not None:
        start = Start(uniform[:, : prepared.k])
    else:
        Q, passes, Pt = initial_Q(problem, prepared.k, init if index == 0 else "random", rng)
        start = Start(Q, Pt=Pt, passes=passes)
    if not ascent_first:
        return start
    return replace(start, beta=first_weights(problem, start.Q, start.alpha, start.Pt))


def _ascent_first(prepared) -> bool:
    return prepared.accelerated and (prepared.accelerate == "always" or prepared.solver != "power")


def uniform_vectors(problem, prepared, init):
    """The uniform ``Q^(0)`` of ``prepared.k`` columns that runs with ``init`` on ``problem`` at
    that ``k`` or fewer start from, for a caller that solves several ``k`` at one λ to compute once
    (:func:`first_iterate`'s ``uniform``): the leading eigenvectors at equal weights, whose first
    columns are the fewer's own where they come from the explicit matrix (up to
    :data:`~core.matrix.sample_vectors.GRAM_LIMIT` samples; 20 ms at 630 x 630, one thread of a
    2-core AMD EPYC). None where no such run starts from them (``init`` random, the supervised
    mode, the ascent from equal weights) or their columns depend on ``k`` (a Krylov start)."""
    if (init != "uniform" or prepared.fixed_Q or _ascent_first(prepared)
            or problem.q > sample_vectors.GRAM_LIMIT):
        return None
    return initial_Q(problem, prepared.k, init, None)[0]


def class_subspace(labels, q):
    """Orthonormal basis of the centred class-indicator matrix: the supervised Q (c - 1 columns)."""
    classes, codes = np.unique(labels, return_inverse=True)
    indicator = np.zeros((q, classes.size))
    indicator[np.arange(q), codes] = 1.0
    indicator -= indicator.mean(axis=0)
    Q, R = np.linalg.qr(indicator)
    keep = np.abs(np.diag(R)) > 1e-10 * np.sqrt(q)
    return Q[:, keep][:, : classes.size - 1]


def initial_Q(problem, k, init, rng):
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


def first_weights(problem, Q0, alpha0, Pt0):
    """Where the ascent begins, in the operator's variable ``beta``: the given weights (a warm
    start), every ``beta`` equal (``Q0`` None: the uniform start), or, from a ``Q0`` (a random
    start), one step of Definition 2 from equal weights, ``C(Q0) 1``."""
    given = problem.given_beta(alpha0)
    if given is not None:
        return given
    uniform = problem.equal_beta()
    if Q0 is None:
        return uniform
    Pt = problem.features.transposed_times(Q0) if Pt0 is None else Pt0
    image = problem.operator_matvec(Pt, uniform)
    size = np.linalg.norm(image)
    return image / size if size > 0 and np.all(np.isfinite(image)) else uniform
