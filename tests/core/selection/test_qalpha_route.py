"""Q-alpha's solver takes one direction (issue 75, item 6): a run enters the stages of
``core.selection._qalpha`` in order -- prepare, then for each start its first iterate and the
iteration, then certify -- and no stage calls back into one before it. Traced, not read off the
imports: every call a run makes into a stage's module is recorded."""

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from core.selection.qalpha import pairs_from_labels, q_alpha

STAGES = {"prepare.py": "P", "start.py": "S", "iterate.py": "I", "ascent.py": "I", "certify.py": "C"}
SOLVER = Path(__file__).resolve().parents[3] / "core" / "selection" / "_qalpha"


def stage_walk(run):
    """The stages the calls made by ``run()`` entered, in order, each repeat collapsed into one."""
    walk = []

    def profile(frame, event, arg):
        if event != "call":
            return
        path = Path(frame.f_code.co_filename)
        if path.parent == SOLVER and path.name in STAGES:
            stage = STAGES[path.name]
            if not walk or walk[-1] != stage:
                walk.append(stage)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return "".join(walk)


def data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((60, 120))
    X[:30, :6] += 2.0
    return X, np.repeat([0, 1, 2], 20)


VARIANTS = {
    "plain": lambda X, y: dict(),
    "ascent alone": lambda X, y: dict(accelerate="always"),
    "alternation alone": lambda X, y: dict(accelerate=False),
    "side data": lambda X, y: dict(side=X[:10] + 1.0, lam=0.5),
    "pairs": lambda X, y: dict(pairs=pairs_from_labels(y, 40, random_state=0), lam=0.1),
    "labels": lambda X, y: dict(labels=y, k=None),
    "gap criterion": lambda X, y: dict(criterion="gap"),
    "three starts": lambda X, y: dict(n_init=3, random_state=0),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_a_run_enters_the_stages_in_order(variant):
    X, y = data()
    options = dict(k=2, max_iter=300)
    options.update(VARIANTS[variant](X, y))
    walk = stage_walk(lambda: q_alpha(X, **options))
    assert re.fullmatch(r"P(SI)+C", walk), walk
    assert walk.count("S") == options.get("n_init", 1)


def test_the_ascent_and_the_alternation_are_both_the_iterate_stage():
    """The handover (alternation, then ascent, then the alternation again where the ascent stops
    short) stays inside the iterate stage: the walk is still P S I C when the ascent ran."""
    X = np.random.default_rng(1).standard_normal((40, 4000))
    X[:20, :40] += 1.0
    holder = {}
    walk = stage_walk(lambda: holder.update(result=q_alpha(X, 2)))
    assert holder["result"].evaluations > 0  # the ascent ran: the alternation handed over to it
    assert walk == "PSIC"


def test_a_float32_run_that_fails_its_float64_check_goes_back_once(monkeypatch):
    """The one way back: a lower-precision run whose float64 check fails goes on iterating in
    float64 (certify, then iterate again, then certify)."""
    from core.selection._qalpha import iterate

    real, calls = iterate.alternate, []

    def says_converged_early(*args, **kwargs):
        calls.append(1)
        if len(calls) > 1:
            return real(*args, **kwargs)
        run = real(*args, **dict(kwargs, max_iter=2))
        return dict(run, converged=True, residuals=np.zeros_like(run["residuals"]))

    monkeypatch.setattr(iterate, "alternate", says_converged_early)
    X = np.random.default_rng(5).standard_normal((30, 200))
    holder = {}
    walk = stage_walk(lambda: holder.update(result=q_alpha(X, 2, dtype=np.float32, accelerate=False)))
    assert holder["result"].converged and len(calls) == 2
    assert walk == "PSICIC"
