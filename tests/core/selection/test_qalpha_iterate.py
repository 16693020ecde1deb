"""The iterate stage of Q-alpha's solver (core.selection._qalpha.iterate): the record a start
keeps across its two methods, the warm start it is given, the float64 continuation's record."""

import numpy as np

from core.selection._qalpha.iterate import one_start
from core.selection._qalpha.prepare import prepare, problem_at
from core.selection._qalpha.start import Start
from core.selection.qalpha import q_alpha


def planted(seed=0, q=40, n=3000, shift=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((q, n))
    X[: q // 2, : n // 100] += shift
    return X


def prepared_for(X, accelerate=False):
    prepared = prepare(X, 2, labels=None, side=None, pairs=None, criterion="sum", method="power", max_iter=1000,
                       tol=1e-6, solver="auto", eig_tol=1e-10, power_steps=1, dtype=np.float64, memory_limit=None,
                       accelerate=accelerate)
    return prepared, problem_at(prepared, 0.0)


def test_a_start_at_the_fixed_point_stays_there():
    """Given the converged weights and subspace, the alternation's first iterate already passes: it
    starts from the weights given (a λ path's neighbour), not from equal weights."""
    X = planted()
    converged = q_alpha(X, 2, tol=1e-9)  # the ascent gets there; the alternation alone crawls here
    prepared, problem = prepared_for(X)
    run = one_start(problem, prepared, Start(converged.Q, alpha=converged.alpha[prepared.features.kept]), None)
    assert run["converged"] and run["n_iter"] == 1
    uniform = one_start(problem, prepared, Start(converged.Q), None)
    assert uniform["n_iter"] > 1


def test_the_record_spans_both_methods_when_the_alternation_goes_on_after_the_ascent():
    """Below the tolerance L-BFGS's line search can resolve, the ascent stops short and the
    alternation goes on from its iterate: the record keeps counting (one history value and one
    pair of residuals per iteration, the ascent's first) and says the ascent ran."""
    X = planted(1)
    result = q_alpha(X, 2, accelerate="always", tol=1e-12, max_iter=3000)
    assert result.evaluations > 0 and result.acceleration
    assert len(result.history) == len(result.residuals) == result.n_iter
    assert result.residuals[0].max() > 1e-4  # the record begins at the start, not where the ascent stopped
    assert result.converged and result.residual <= 1e-12


def test_the_float64_continuation_reports_its_iterations_and_keeps_the_ascents_count(monkeypatch):
    """A float32 run that passes its own test but not the float64 check goes on in float64: the
    progress callback hears those iterations too, and the evaluations of both parts are counted."""
    from core.selection._qalpha import ascent

    real, calls = ascent.run_ascent, []

    def says_converged_early(*args, **kwargs):
        run = real(*args, **(kwargs if calls else dict(kwargs, max_iter=2)))
        calls.append(run["evaluations"])
        if len(calls) > 1:
            return run
        return dict(run, converged=True, settled=True, residuals=np.zeros_like(run["residuals"]))

    monkeypatch.setattr(ascent, "run_ascent", says_converged_early)
    X = planted(2, n=400)
    heard = []
    result = q_alpha(X, 2, dtype=np.float32, accelerate="always", progress=heard.append)
    assert len(calls) == 2 and result.converged
    assert heard[-1].done == result.n_iter > 2  # the continuation's iterations were heard
    assert result.evaluations == sum(calls)  # the float32 part's and the continuation's
