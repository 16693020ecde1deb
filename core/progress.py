"""One contract for the progress of long computations, and for what they say when they stop.

Every long-running function of the library takes ``progress=None`` or a callable
``progress(report)``, where ``report`` is a :class:`Progress`; it is called after each step
(iteration, greedy step, fit). Returning ``False`` asks the computation to stop at once:

* iterative solvers (:func:`core.selection.qalpha.q_alpha`, :func:`core.selection.kernel_qalpha.kernel_q_alpha`,
  :func:`core.selection.sdr.sdr_si`, :func:`core.selection.topographic.topographic_map`) return what they have, marked
  ``stopped=True`` and not converged; :func:`core.selection.lambda_path.q_alpha_path` returns the
  lambda values it has solved, ``stopped=True``;
* computations without a meaningful partial result (greedy sparse LDA/PCA paths, exact search,
  stability and selection curves, the reproductions) raise :class:`core.errors.Stopped`.

Why one report object rather than positional arguments: the callers are as different as an
eigen-solver (an objective per iteration) and a greedy pass (steps of a known total), and one
progress bar serves them all. SciPy's ``callback(intermediate_result)`` is the model (a single
argument that can grow new fields without breaking callbacks); stopping by a ``False`` return
rather than by raising ``StopIteration`` keeps a one-line ``lambda`` callback enough.

Iterative solvers that end at ``max_iter`` without meeting their tolerance say so twice: the
result's ``converged`` is False and a :class:`sklearn.exceptions.ConvergenceWarning` is issued
(as scikit-learn's estimators do), unless the run was stopped on purpose.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

from .errors import Stopped

__all__ = ["Progress", "ProgressCallback", "report", "report_or_stop", "warn_not_converged"]


@dataclass(frozen=True)
class Progress:
    """What a long computation reports after each step.

    Attributes
    ----------
    done : int
        Steps done so far (iterations, greedy steps, fits).
    total : int or None
        Steps the computation will take at most (None where it is not known).
    objective : float or None
        The objective after this step, for iterative solvers.
    message : str
        What is running, in words (for experiments with several stages).
    """

    done: int
    total: int | None = None
    objective: float | None = None
    message: str = ""

    @property
    def fraction(self) -> float | None:
        """``done / total`` in [0, 1], or None when the total is not known."""
        if not self.total:
            return None
        return min(max(self.done / self.total, 0.0), 1.0)


ProgressCallback = Callable[[Progress], object]


def report(progress: ProgressCallback | None, done: int, total: int | None = None,
           objective: float | None = None, message: str = "") -> bool:
    """Hand a :class:`Progress` to ``progress``; True when the callback asked to stop."""
    return progress is not None and progress(Progress(done, total, objective, message)) is False


def report_or_stop(progress: ProgressCallback | None, done: int, total: int | None = None,
                   message: str = "") -> None:
    """:func:`report` for computations without a partial result: raise :class:`Stopped` when asked."""
    if report(progress, done, total, message=message):
        raise Stopped(f"Stopped by the progress callback after {done:,} of {total:,} steps."
                      if total else f"Stopped by the progress callback after {done:,} steps.")


def warn_not_converged(what: str, n_iter: int, advice: str = "raise max_iter or loosen tol", stacklevel: int = 3,
                       *, failures=(), residual: float | None = None, tol: float | None = None) -> None:
    """The :class:`ConvergenceWarning` of an iterative solver that did not converge (``stacklevel``
    3: the line that called the solver that calls this). ``failures``, ``(iteration, what)`` of
    inner solvers that failed, are named; ``residual`` and ``tol`` say how far it got."""
    from sklearn.exceptions import ConvergenceWarning

    if failures:
        first, failed = failures[0]
        message = (f"{what} did not converge: its inner eigensolver failed in {len(failures)} of {n_iter} "
                   f"iterations (first in iteration {first}: {failed})")
    else:
        message = f"{what} did not converge in {n_iter} iterations"
    if residual is not None and tol is not None:
        message += f"; residual {residual:.2e} against tol {tol:.0e}"
    warnings.warn(f"{message}; {advice}.", ConvergenceWarning, stacklevel=stacklevel)
