"""The certify stage of Q-alpha's solver: what the run's last iterate may claim. A run made in a
lower precision is measured again against the data in float64 (:func:`checked_in_float64`); an
inner solver's failure or an objective that stopped being finite makes it unconverged
(:func:`core.selection._spectral.result_warnings`); where ``A_alpha``'s k-th and (k+1)-th eigenvalues
are equal to working precision, Q is not determined and the result says so (:func:`diagnose`); an
unconverged run warns.
"""

from __future__ import annotations

import warnings

import numpy as np

from .problem import UNDETERMINED_GAP_EPS, Evaluation
from .._spectral import checked_in_float64 as _checked, result_warnings
from ...progress import warn_not_converged
from ...validation import require_finite


def checked_in_float64(problem64, prepared, run):
    """A run made in a lower precision whose residuals passed, measured against the data in float64
    (``problem64``, :func:`.problem.float64_problem`): its residuals, eigenvalue and objective
    recomputed by products with them. Where they exceed ``tol`` the run is not converged there.
    Returns the run and a note (or None)."""
    alpha = np.asarray(run["alpha"], dtype=np.float64)
    Q, _ = np.linalg.qr(np.asarray(run["Q"], dtype=np.float64))  # orthonormal in float64, the same span
    _, eigenvalue, alpha_residual, Q_residual, _ = problem64.measure(alpha, Q, prepared.fixed_Q)
    run = dict(run, image=None)  # A_alpha Q in the lower precision says too little of a zero eigenvalue
    # alpha^T C alpha at the unit beta is the objective of every variant
    return _checked(run, residuals=(alpha_residual, Q_residual), eigenvalue=eigenvalue, objective=eigenvalue,
                    Q=Q, tol=prepared.settings["tol"], dtype=prepared.dtype, against="against the data")


def diagnose(problem, alpha, Q, k, converged, image=None):
    """An :class:`.problem.Undetermined` where ``A_alpha``'s k-th and (k+1)-th eigenvalues are equal
    to working precision at the returned weights, else None: one evaluation, made where the run did
    not converge or where the Ritz values of ``Q`` say ``lambda_k`` is 0 to working precision (a k
    beyond the data's rank); a converged run with ``lambda_k`` standing clear needs none.
    ``image``, ``A_alpha Q`` where the run computed it (the alternation's last test), saves a pass."""
    if converged:
        features = problem.features
        Z = features.times((features.transposed_times(Q) * alpha).T) if image is None else image
        ritz = np.abs(np.linalg.eigvalsh((Q.T @ Z + Z.T @ Q) / 2))
        if ritz.min() > UNDETERMINED_GAP_EPS * np.finfo(np.float64).eps * ritz.max():
            return None
    evaluation = Evaluation(problem, k)
    evaluation.at(problem.to_beta(np.asarray(alpha, dtype=np.float64)))
    return evaluation.gap


def verdict(problem, prepared, run, precision_note=None, stopped=False):
    """``(notes, converged)`` of a run's last iterate: converged only where its residuals passed and
    nothing in :func:`~core.selection._spectral.result_warnings` speaks against it; the notes say
    what the caller should know (``precision_note`` from :func:`checked_in_float64` among them).
    Warns ``ConvergenceWarning`` where Q is not determined, or where the run ended unconverged
    and the progress callback had not ``stopped`` it."""
    require_finite(run["alpha"], "Q-alpha's weights")
    notes, converged = result_warnings(run["alpha"], run["history"], run["converged"], run["failures"])
    notes = notes + ((precision_note,) if precision_note else ())
    undetermined = run.get("undetermined")
    if undetermined is None and prepared.accelerated:
        undetermined = diagnose(problem, run["alpha"], np.asarray(run["Q"], dtype=np.float64), prepared.k,
                                run["converged"], run.get("image"))
    if undetermined is not None:
        from sklearn.exceptions import ConvergenceWarning

        notes = notes + (undetermined.message,)
        # 4: the line that called q_alpha (or q_alpha_path, or a path's at), past _solve and this
        warnings.warn(undetermined.message, ConvergenceWarning, stacklevel=4)
    elif not converged and not stopped:
        warn_not_converged("Q-alpha", run["n_iter"], stacklevel=5,  # the same caller; it adds a frame of its own
                           failures=run["failures"], residual=run["residuals"][-1].max(), tol=prepared.settings["tol"])
    return notes, converged
