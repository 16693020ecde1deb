"""What Q-alpha and kernel Q-alpha share: the checks of their common parameters, the scaling that
side information puts on the weights, the sign of alpha and what a result says about itself.

Private: :mod:`core.selection.qalpha` and :mod:`core.selection.kernel_qalpha` import it, and their docstrings hold the
references ([WS03]: Wolf & Shashua, ICCV 2003; [SW04]: Shashua & Wolf, ECCV 2004).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
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


def result_warnings(alpha, history, converged) -> tuple[tuple, bool]:
    """What a result must say about itself, and whether it may count as converged."""
    notes = []
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
