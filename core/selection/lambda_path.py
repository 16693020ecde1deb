"""Q-alpha along a grid of lambda values, each solve warm-started from its neighbour.

With side information ([SW04] Def. 3: ``alpha`` the leading eigenvector of ``(D + lam I)^-1 G``;
Sec. 5: of ``G - lam B`` for pairs) the weights change with ``lam`` continuously between two ends:
at large ``lam`` the side data hardly count and Q-alpha is the unsupervised method of [WS03]; at
small ``lam`` the features the side data also vary in are suppressed. :func:`q_alpha_path`
solves the whole range once, from the largest ``lam`` (a cold start, as :func:`~core.selection.qalpha.q_alpha`
makes) down, each ``lam`` starting from the ``Q`` and ``alpha`` of the one before, the way glmnet
computes a lasso path (Friedman, Hastie & Tibshirani, J. Stat. Softw. 2010): a neighbour's fixed
point is close, so each solve takes a few iterations where a cold one takes tens. A user
interface then answers a move of the lambda slider with a lookup (:meth:`QAlphaPath.at`).

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..progress import ProgressCallback, report
from ..validation import check_real
from ._spectral import LAM_MAX, check_settings
from .qalpha import DEFAULT_MAX_ITER, QAlphaResult, _prepare, _solve

__all__ = ["QAlphaPath", "q_alpha_path", "DEFAULT_LAMS"]

#: The default grid: half-decade steps from 1e-4 to 100 (13 values). Measured with the last class
#: as side data on wine, the AR faces, GLIOMA and lung_small: the side variances ``D`` have medians
#: 0.4-0.9 (5-95% between 0.09 and 1.7), so 1e-4 lies far below them and 100 far above; at 100
#: the weights are within 0.008 of unsupervised Q-alpha's, and they differ from those at 1e-4 by
#: 0.41-1.39 (Euclidean distance of unit vectors).
DEFAULT_LAMS = np.geomspace(1e-4, 1e2, 13)
#: Relative distance (in lambda) within which a requested lambda is a grid point.
GRID_RTOL = 1e-9


@dataclass(frozen=True, eq=False)
class QAlphaPath:
    """Q-alpha solved along a grid of ``lam`` (from :func:`q_alpha_path`).

    Attributes
    ----------
    lams : ndarray
        The grid, ascending.
    results : tuple of QAlphaResult
        One per ``lam``, in the grid's order: the same type :func:`~core.selection.qalpha.q_alpha` returns.
    seconds : float
        Wall time of the whole path.
    stopped : bool
        Whether the progress callback stopped the path (then ``lams`` holds the values done:
        the largest ones, solved first).
    """

    lams: np.ndarray
    results: tuple
    seconds: float
    stopped: bool
    _prepared: object = field(repr=False)
    _options: dict = field(repr=False)

    @property
    def weights(self) -> np.ndarray:
        """``alpha`` at every ``lam``: shape (n_lams, n_features)."""
        return np.stack([result.alpha for result in self.results])

    @property
    def n_iter(self) -> np.ndarray:
        """Iterations each ``lam`` took (the first from a cold start, the others warm)."""
        return np.array([result.n_iter for result in self.results])

    @property
    def converged(self) -> bool:
        return all(result.converged for result in self.results)

    @property
    def gap_strength(self) -> np.ndarray:
        """How clearly the sorted weights break at each ``lam``: the share of their variance the
        best two-group split explains (:class:`~core.selection.qalpha.SparsityGap` ``separability``)."""
        return np.array([result.gap.separability for result in self.results])

    def nearest(self, lam: float) -> int:
        """Index of the grid point nearest ``lam`` on a log scale."""
        lam = _check_lam(lam)
        return int(np.argmin(np.abs(np.log(self.lams) - np.log(lam))))

    def at(self, lam: float, progress: ProgressCallback | None = None) -> QAlphaResult:
        """The result at ``lam``: looked up when ``lam`` is a grid point, else solved exactly,
        warm-started from the nearest grid point (a few iterations)."""
        index = self.nearest(lam)
        lam = float(lam)
        if abs(self.lams[index] - lam) <= GRID_RTOL * lam:
            return self.results[index]
        return _solve(self._prepared, lam, progress=progress, warm=self.results[index], **self._options)

    def top_features(self, n: int) -> np.ndarray:
        """The ``n`` features of largest weight anywhere on the path (what a path plot draws)."""
        peak = self.weights.max(axis=0)
        return np.argsort(-peak, kind="stable")[:n]


def _check_lam(lam) -> float:
    return check_real(lam, "lam", low=0.0, high=LAM_MAX, low_open=True)


def q_alpha_path(X, k=None, *, side=None, pairs=None, labels=None, lams=None, criterion="sum", method="power",
                 init="uniform", random_state=None, max_iter=DEFAULT_MAX_ITER, tol=1e-6, solver="auto", eig_tol=1e-10,
                 power_steps=1, progress: ProgressCallback | None = None, dtype=np.float64,
                 memory_limit: int | None = None, persist: bool | None = None, accelerate: bool = True) -> QAlphaPath:
    """Q-alpha with side information at every ``lam`` of a grid, warm-started along it.

    The data are normalised and the side variances ``D`` (or the pairs' factor) computed once;
    then each ``lam`` from the largest down is solved from the previous one's ``Q`` and ``alpha``
    (the largest from ``init``, as :func:`~core.selection.qalpha.q_alpha` starts). Each point
    is a fixed point of [SW04] Def. 3 (or Sec. 5) at its ``lam``, reached from a nearby start:
    where the problem has one maximum it is the cold solve's answer (tested); where it has
    several, the path follows the branch it is on, as warm-started lasso paths do.

    Parameters
    ----------
    X, k, side, pairs, labels, criterion, method, init, random_state, max_iter, tol, solver,
    eig_tol, power_steps, dtype, memory_limit, persist, accelerate
        As for :func:`~core.selection.qalpha.q_alpha`; ``side`` or ``pairs`` is required (without
        side information ``lam`` changes nothing).
    lams : array_like of float, optional
        Positive values (sorted, duplicates dropped); :data:`DEFAULT_LAMS` by default.
    progress : callable, optional
        Called with a :class:`core.progress.Progress` after each ``lam`` (``done`` of ``total``
        grid points, ``objective`` of that point). Returning ``False`` stops the path: the
        ``lam`` values done so far are returned (``QAlphaPath.lams`` is then shorter and
        ``stopped`` is True).

    Returns
    -------
    QAlphaPath
    """
    if side is None and pairs is None:
        raise InputError("The lambda path needs side information (side data or pairs): without it lambda "
                         "changes nothing. Use q_alpha for a single run.")
    grid = DEFAULT_LAMS if lams is None else lams
    try:
        grid = np.unique(np.asarray(grid, dtype=np.float64).ravel())
    except (TypeError, ValueError):
        raise InputError(f"lams must be a list of positive numbers; got {lams!r}.") from None
    if grid.size == 0:
        raise InputError("lams is empty: give at least one positive lambda.")
    for value in grid:
        _check_lam(value)
    check_settings(lam=float(grid[0]), init=init, n_init=1, max_iter=max_iter)
    start = time.perf_counter()
    prepared = _prepare(X, k, labels=labels, side=side, pairs=pairs, criterion=criterion,
                        method=method, max_iter=max_iter, tol=tol, solver=solver, eig_tol=eig_tol,
                        power_steps=power_steps, dtype=dtype, memory_limit=memory_limit, persist=persist,
                        accelerate=accelerate)
    options = dict(init=init, random_state=random_state)
    results, previous, stopped = [], None, False
    for done, lam in enumerate(grid[::-1], start=1):
        previous = _solve(prepared, float(lam), warm=previous, **options)
        results.append(previous)
        if report(progress, done, grid.size, previous.objective, f"lambda = {lam:g}"):
            stopped = done < grid.size
            break
    return QAlphaPath(lams=grid[grid.size - len(results):], results=tuple(results[::-1]),
                      seconds=time.perf_counter() - start, stopped=stopped, _prepared=prepared, _options=options)
