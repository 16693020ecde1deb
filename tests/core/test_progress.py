"""One contract for long computations (core.progress): every one reports a Progress after each
step, honours a callback's False at once (iterative solvers return what they have with
stopped=True; the rest raise Stopped), and an iterative solver that runs out of iterations warns
ConvergenceWarning besides converged=False -- but not when it was stopped on purpose."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from core import Progress, Stopped
from experiments import run_experiment
from core.selection.kernel_qalpha import kernel_q_alpha
from core.evaluation.metrics import projection_curves, stability_curve
from core.selection.methods import rank_features
from core.selection.lambda_path import q_alpha_path
from core.selection.qalpha import q_alpha
from core.selection.topographic import topographic_map
from core.selection.sdr import sdr_si
from core.selection.exact import exact_slda
from core.selection.slda import greedy_slda
from core.selection.spca import greedy_spca
from core.data.generators import weston_linear

STOP_AT = 2


class StopAtSecond:
    """A callback that keeps every report and asks to stop at the second."""

    def __init__(self):
        self.reports = []

    def __call__(self, report):
        assert isinstance(report, Progress)
        self.reports.append(report)
        return len(self.reports) < STOP_AT


def data():
    return weston_linear(60, random_state=0)


def counts():
    rng = np.random.default_rng(0)
    return rng.poisson(3.0, (30, 12)) + 1.0, rng.poisson(3.0, (10, 12)) + 1.0


def _last_round(topographic):
    """The map's last round; a stopped round is the last one run (the second is not)."""
    if topographic.stopped:
        assert len(topographic.results) == 1 and topographic.alphas.shape[0] == 1
    return topographic.results[-1]


ITERATIVE = {
    "q_alpha": lambda progress: q_alpha(data().X, 2, tol=1e-14, progress=progress),
    "kernel_q_alpha": lambda progress: kernel_q_alpha(data().X, 2, "rbf", tol=1e-14, progress=progress),
    "topographic_map": lambda progress: _last_round(topographic_map(data().X, 2, tol=1e-14, progress=progress)),
    "sdr_si": lambda progress: sdr_si(*counts(), 2, tol=1e-14, progress=progress),
}
WITHOUT_PARTIAL_RESULT = {
    "greedy_slda": lambda progress: greedy_slda(data().X, data().labels, progress=progress),
    "greedy_spca": lambda progress: greedy_spca(data().X[:, :12], progress=progress),
    "exact_slda": lambda progress: exact_slda(data().X[:, :8], data().labels, progress=progress),
    "stability_curve": lambda progress: stability_curve(
        data().X, data().labels, lambda X, y: rank_features("fisher", X, y), [3, 6], n_bootstrap=4, progress=progress),
    "projection_curves": lambda progress: projection_curves(
        data().X, data().labels, {"PCA": "pca"}, [1, 2, 3], progress=progress),
    "run_experiment": lambda progress: run_experiment("positivity", quick=True, progress=progress),
}


@pytest.mark.parametrize("name", sorted(ITERATIVE))
def test_iterative_solvers_stop_when_asked_and_keep_their_last_iterate(name):
    callback = StopAtSecond()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a deliberate stop is no convergence failure
        result = ITERATIVE[name](callback)
    assert result.stopped and not result.converged
    assert result.n_iter == STOP_AT == len(callback.reports)
    assert [report.done for report in callback.reports] == [1, 2]
    assert all(report.total and report.objective is not None and np.isfinite(report.objective)
               for report in callback.reports)
    assert callback.reports[-1].objective == pytest.approx(result.history[-1])


@pytest.mark.parametrize("name", sorted(WITHOUT_PARTIAL_RESULT))
def test_computations_without_a_partial_result_raise_stopped_at_once(name):
    callback = StopAtSecond()
    with pytest.raises(Stopped, match="Stopped by the progress callback"):
        WITHOUT_PARTIAL_RESULT[name](callback)
    assert len(callback.reports) == STOP_AT  # nothing ran past the step that asked to stop
    done = [report.done for report in callback.reports]
    assert done == sorted(done) and all(0 <= report.fraction <= 1 for report in callback.reports)


@pytest.mark.parametrize("name", sorted(ITERATIVE | WITHOUT_PARTIAL_RESULT))
def test_a_callback_that_never_stops_changes_nothing(name):
    """A callback that returns None sees every step: an iterative solver gives exactly the result
    it gives without one, and the others run to their last step."""
    everything = ITERATIVE | WITHOUT_PARTIAL_RESULT
    reports = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = everything[name](lambda report: reports.append(report))  # returns None: go on
        without = everything[name](None) if name in ITERATIVE else None
    assert reports
    if name in ITERATIVE:
        assert not result.stopped and result.n_iter == without.n_iter
        assert np.array_equal(np.asarray(result.history), np.asarray(without.history))
    else:  # the reproductions report before each of their steps, the others after
        assert reports[-1].done == reports[-1].total - (name == "run_experiment")
    if name == "topographic_map":  # every round ran
        assert len({report.objective for report in reports if report.done == 1}) == 2


def test_the_lambda_path_stops_between_points_and_keeps_those_done():
    """The path reports after each lambda; a stop keeps the points done (the largest lambdas,
    solved first), and a callback that never stops changes nothing."""
    main, side = data().X[:40], data().X[40:]
    callback = StopAtSecond()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        path = q_alpha_path(main, 2, side=side, lams=[0.01, 0.1, 1.0], progress=callback)
    assert path.stopped and list(path.lams) == [0.1, 1.0] and len(path.results) == 2
    assert [report.done for report in callback.reports] == [1, 2] and callback.reports[0].total == 3
    assert callback.reports[-1].objective == pytest.approx(path.results[0].objective)
    whole = q_alpha_path(main, 2, side=side, lams=[0.01, 0.1, 1.0], progress=lambda report: None)
    assert not whole.stopped
    assert np.array_equal(whole.weights, q_alpha_path(main, 2, side=side, lams=[0.01, 0.1, 1.0]).weights)


@pytest.mark.parametrize("run", [
    lambda: q_alpha(weston_linear(60, random_state=0).X, 2, max_iter=2, tol=1e-14),
    lambda: kernel_q_alpha(weston_linear(60, random_state=0).X, 2, "rbf", max_iter=2, tol=1e-14),
    lambda: sdr_si(*counts(), 2, max_iter=1, tol=1e-14)])
def test_running_out_of_iterations_warns_and_says_not_converged(run):
    with pytest.warns(ConvergenceWarning, match="did not converge in"):
        result = run()
    assert not result.converged and not result.stopped
