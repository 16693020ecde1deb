"""Reproductions of the papers' figures and tables, each a function returning a tidy table.

Every experiment is a function ``f(*, quick=False, random_state=0, progress=None, **options)``
registered in :data:`EXPERIMENTS` and returning an :class:`ExperimentResult`: a long-format
table (one row per measurement), the arrays its figure needs, the paper's numbers beside ours,
and the qualitative claims of the paper checked on our numbers. ``quick=True`` runs a smaller
version (fewer repetitions and grid points) that finishes in well under a minute; the test suite
runs those. Run one from the command line with::

    python -m experiments list
    python -m experiments run NAME [--quick] [--seed N] [--out DIR]

Where a paper's data are not available the closest bundled set is used; each function's
docstring and ``ExperimentResult.data`` say which and how it differs.

References
----------
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
.. [MWA07] B. Moghaddam, Y. Weiss and S. Avidan, "Fast pixel/part selection with sparse
   eigenvectors", ICCV 2007.
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
.. [Sha] A. Shashua, "A new paradigm for feature selection" (talk).
"""

from __future__ import annotations

import time

import numpy as np

from core.errors import InputError
from core.progress import ProgressCallback

from .registry import FIGURES, EXPERIMENTS, Claim, Experiment, ExperimentResult, figures_of, save_result

__all__ = ["Claim", "Experiment", "ExperimentResult", "EXPERIMENTS", "experiment_figures", "figures_of",
           "load_experiments", "run_experiment", "save_result"]


def run_experiment(name: str, *, quick: bool = False, random_state: int = 0,
                   progress: ProgressCallback | None = None, **options) -> ExperimentResult:
    """Run a registered experiment by name (see :data:`EXPERIMENTS`)."""
    load_experiments()
    if name not in EXPERIMENTS:
        raise InputError(f"Unknown experiment {name!r}; choose one of {', '.join(EXPERIMENTS)}.")
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)) or random_state < 0:
        raise InputError(f"random_state must be a non-negative integer; got {random_state!r}.")
    unknown = set(options) - set(EXPERIMENTS[name].options)
    if unknown:
        raise InputError(f"Experiment {name!r} does not take {', '.join(sorted(unknown))}; it takes "
                         f"{', '.join(EXPERIMENTS[name].options) or 'no options'} besides quick and random_state.")
    start = time.perf_counter()
    result = EXPERIMENTS[name].function(quick=bool(quick), random_state=int(random_state),
                                        progress=progress, **options)
    object.__setattr__(result, "seconds", time.perf_counter() - start)
    return result


#: The order of the reproductions: paper by paper, figure by figure (the app lists them so).
ORDER = ("positivity", "sparsity", "weston_svm", "topographic", "ar_faces", "ar_faces_automatic", "face_sets_label_free",
         "uci_side", "uci_sensitivity", "slda_pixels", "spca_faces", "ben_dor", "unsupervised_benchmark")


def load_experiments() -> None:
    """Fill :data:`EXPERIMENTS` (in the order of :data:`ORDER`: paper by paper, figure by figure) by importing the modules that register
    them: done on first use rather than at import, to keep ``import experiments`` light."""
    from . import faces, simulated, sparse, tables  # noqa: F401

    ordered = sorted(EXPERIMENTS.items(), key=lambda item: ORDER.index(item[0]) if item[0] in ORDER else len(ORDER))
    EXPERIMENTS.clear()
    EXPERIMENTS.update(ordered)


def experiment_figures(result: ExperimentResult) -> list:
    """The figures of a reproduction's result (Plotly), as its paper draws them."""
    load_experiments()
    if result.name not in FIGURES:
        raise InputError(f"No figures are registered for the experiment {result.name!r}.")
    return FIGURES[result.name](result)
