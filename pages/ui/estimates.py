"""How long the pages' long runs will take, said before they start.

Cost models measured on the 2-core machine the app is built on, with the BLAS the app keeps (one
core short of the machine: :func:`.session.leave_a_core`). ``benchmarks/bench_estimates.py``
checks each against measured runs on the bundled data sets (the issue's bar: within 2x). A page
replaces a first figure with its own last run's as soon as it has one.
"""

from __future__ import annotations

# greedy sparse LDA (benchmarks/bench_slda.py, 2 cores): the whole path costs about
# 4.5e-11 s x n^3 at n = 4,096 and 3.4e-11 s x n^3 at 8,192; forming the scatter about
# 1e-11 s x samples x n^2; and each of the 2n steps about 50 us of its own (without it the
# estimate was 3x too low at 1,024 features: benchmarks/bench_estimates.py)
SLDA_SECONDS_PER_CUBE = 4.5e-11
SLDA_SECONDS_PER_SCATTER_ENTRY = 1e-11
SLDA_SECONDS_PER_STEP = 5e-5
# with fewer samples m than features n (core.selection.slda.slda_solver), each of the 2n steps
# of the low-rank solver costs about 40 us and 0.3 ns per entry of the n x m samples (one matrix-
# vector product over those still in play; fitted on the bundled pairs, 0.1-2.8 s,
# benchmarks/bench_estimates.py)
SLDA_LOW_RANK_SECONDS_PER_STEP = 4e-5
SLDA_LOW_RANK_SECONDS_PER_ENTRY = 3e-10
# greedy sparse PCA (benchmarks/bench_spca.py Table 2): 4.0 s at 256 features, 7.0 s at 320,
# 8.1 s at 340 and 12.3 s at 384 on 2n samples; about 2.2e-7 s x n^3 in that range
SPCA_SECONDS_PER_CUBE = 2.2e-7
# kernel Q-alpha, per iteration and kernel entry: 6 ms (fast step) and 75 ms (exact step) on the
# AR faces' 2,400 x 2,400 kernel with one BLAS thread; 40-250 iterations there before a run of its
# own says more
KERNEL_SECONDS_PER_ENTRY = {"power": 1e-9, "eigen": 1.3e-8}
KERNEL_FIRST_GUESS_ITERATIONS = 100


#: The Q-alpha λ path: seconds per λ value, sample and feature, each λ warm-started from its
#: neighbour (power steps): 25 values on the AR faces' main data (117 x 2,400) took 1.84 s on this
#: 2-core machine beside the test suite (0.35 s for the 13 values of the earlier grid alone).
PATH_SECONDS_PER_ENTRY = 2.6e-7
#: The λ path is computed after the first result without a click when its estimate is at most this.
AUTO_PATH_SECONDS = 4.0


def path_seconds(n_samples: int, n_features: int, n_lams: int) -> float:
    """The λ path's estimated seconds (:data:`PATH_SECONDS_PER_ENTRY`)."""
    return PATH_SECONDS_PER_ENTRY * n_lams * n_samples * n_features


def slda_seconds(n_features: int, n_samples: int, per_cube: float = SLDA_SECONDS_PER_CUBE, reg=None) -> float:
    """Sparse LDA's whole path on ``n_features`` features and ``n_samples`` samples of the pair,
    by the solver ``greedy_slda`` takes for them."""
    from core.selection.slda import slda_solver

    if slda_solver(n_features, n_samples, reg) == "low-rank":
        return 2 * n_features * (SLDA_LOW_RANK_SECONDS_PER_STEP
                                 + SLDA_LOW_RANK_SECONDS_PER_ENTRY * n_features * n_samples)
    return (per_cube * n_features**3 + SLDA_SECONDS_PER_SCATTER_ENTRY * n_samples * n_features**2
            + SLDA_SECONDS_PER_STEP * 2 * n_features)


def spca_seconds(n_features: int, per_cube: float = SPCA_SECONDS_PER_CUBE) -> float:
    """Greedy sparse PCA's forward and backward passes."""
    return per_cube * n_features**3


def kernel_seconds(n_features: int, solver: str, last: tuple[float, int] | None = None) -> tuple[float, float, int]:
    """``(seconds, seconds per iteration, iterations)`` of kernel Q-alpha with ``solver``: from
    ``last`` (the seconds per iteration and iterations of this data set's last run with that
    solver) when there is one, else from the cost per kernel entry and a first guess of 100."""
    per_iteration, iterations = last if last is not None else (
        KERNEL_SECONDS_PER_ENTRY[solver] * n_features**2, KERNEL_FIRST_GUESS_ITERATIONS)
    return per_iteration * iterations, per_iteration, iterations


class RestOfRun:
    """The rest of a run of like steps at the rate of the steps since the first report: for runs
    without a cost model, whose steps (Q-alpha solves) take as many iterations as the data need
    (choosing k and λ, the λ path). The first step is left out of the rate: in choosing k and λ it
    scores the unweighted data (k-means only), on the λ path it is the one cold solve before the
    warm-started ones. ``benchmarks/bench_estimates.py`` checks it against the actual rest."""

    def __init__(self):
        self._since = None  # (elapsed, done) at the first report
        self._last = None  # (elapsed, done) when done last grew

    def seconds(self, elapsed: float, done: int, total: int) -> float | None:
        """Seconds left after ``done`` of ``total`` steps in ``elapsed`` seconds (None: no rate yet).
        Reports inside a step (the iterations of a solve, with the same ``done``) take the time
        already spent on that step off the rest."""
        if self._since is None:
            if done >= 1:
                self._since = self._last = (elapsed, done)
            return None
        if done > self._last[1]:
            self._last = (elapsed, done)
        since_elapsed, since_done = self._since
        last_elapsed, last_done = self._last
        if last_done <= since_done or done >= total:
            return None
        per_step = (last_elapsed - since_elapsed) / (last_done - since_done)
        return max(per_step * (total - last_done) - (elapsed - last_elapsed), 0.0)
