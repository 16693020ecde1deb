"""Exact sparse LDA for small numbers of features: branch-and-bound over subsets with the
inclusion-principle bound ([ICML06] Theorem 1), the reference the greedy passes are judged by.

References
----------
.. [ICML06] B. Moghaddam, Y. Weiss and S. Avidan, "Generalized spectral bounds for sparse LDA",
   ICML 2006.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..progress import report_or_stop
from .slda import _check_problem, _path_from_problem, subset_objective, two_class_scatter

__all__ = ["EXACT_LIMIT", "ExactResult", "exact_slda"]


#: Largest number of features :func:`exact_slda` accepts by default (see its notes on cost).
EXACT_LIMIT = 32


@dataclass(frozen=True, eq=False)
class ExactResult:
    """Global optimum of two-class sparse LDA for each cardinality (branch-and-bound)."""

    subsets: tuple  # subsets[k - 1]: sorted indices of the optimal k-subset
    objective: np.ndarray
    nodes: int  # subproblems evaluated


def exact_slda(X=None, y=None, *, classes=None, reg=None, a=None, B=None,
               max_features: int = EXACT_LIMIT, progress=None) -> ExactResult:
    """Globally optimal two-class sparse LDA for every cardinality, by branch-and-bound.

    Search tree: a node is a candidate set ``U`` from which features are removed in increasing
    index order (so every subset is reached once). Its bound is ``f(U)``: by the inclusion
    principle (Theorem 1 of [MWA07]) no subset of ``U`` exceeds ``lambda_max(A_U, B_U) = f(U)``.
    Nodes are expanded best bound first, so the search stops as soon as no open node beats the
    incumbent, which starts from the dual-pass greedy solution. The cost is exponential in the
    worst case: measured on random problems with a nearly singular ``B`` (n + 5 samples),
    0.3 s at n = 16 and 14 s at n = 24 for all cardinalities; with ``B`` from 3n samples,
    3 s at n = 24 and 134 s at n = 32 -- hence the limit of 32 features (``EXACT_LIMIT``),
    below the "n < 40" of [MWA07]. Give data (``X``, ``y``) or the
    problem (``a``, ``B``).

    Raises
    ------
    InputError
        Above ``max_features`` features (the search is exponential in the worst case).
    """
    if a is None or B is None:
        if X is None or y is None:
            raise InputError("Give the data (X, y) or the problem (a, B).")
        a, B, reg, classes = two_class_scatter(X, y, classes, reg)
    else:
        a, B = _check_problem(np.ravel(a), B)
    n = a.size
    if n > max_features:
        raise InputError(f"Exact search is limited to {max_features} features (it is exponential in "
                         f"the worst case); this problem has {n}. Use greedy_slda, or select fewer "
                         "features first.")
    greedy = _path_from_problem(a, B, 0.0, classes, "both")
    best_value = greedy.dual_objective.copy()
    best_subset = [tuple(greedy.subset(k)) for k in range(1, n + 1)]
    nodes = 0

    def bound(U):
        """f(U): by the inclusion principle (Theorem 1) no subset of U exceeds it."""
        nonlocal nodes
        nodes += 1
        return subset_objective(a, B, U)

    for k in range(1, n + 1):
        # best-first on the bound; a node: (-bound, U as tuple, first removable position)
        everything = tuple(range(n))
        heap = [(-bound(everything), everything, 0)]
        tolerance = 1e-12 * max(abs(best_value[k - 1]), 1e-300)
        while heap:
            negative_bound, U, first = heapq.heappop(heap)
            if -negative_bound <= best_value[k - 1] + tolerance:
                break  # best-first: no open node can beat the incumbent any more
            if len(U) == k:  # at a leaf the bound is the exact value
                best_value[k - 1], best_subset[k - 1] = -negative_bound, U
                continue
            # remove one more feature among positions >= first, leaving enough positions after it
            # for the removals still to come (every subset is reached once)
            to_remove = len(U) - k
            for position in range(first, len(U) - to_remove + 1):
                child = U[:position] + U[position + 1:]
                value = bound(child)
                if value > best_value[k - 1] + tolerance:
                    heapq.heappush(heap, (-value, child, position))
        report_or_stop(progress, k, n)
    return ExactResult(subsets=tuple(np.array(s) for s in best_subset),
                       objective=np.asarray(best_value), nodes=nodes)
