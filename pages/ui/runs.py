"""Heavy calls into ``core``: cached on the data's fingerprint and the parameters, with a progress
bar fed by the library's progress callback, and a Stop button."""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict

import numpy as np
import streamlit as st

from core import Dataset, Stopped
from core.selection.lambda_path import QAlphaPath, q_alpha_path
from core.selection.qalpha import QAlphaParameters, QAlphaResult


def stop_control(name: str) -> None:
    """A Stop button for a page's long computation, and the stopped state it leaves.

    Clicking Stop while a run is in progress makes Streamlit start a new script run, which
    interrupts the computation at its next progress report; the flag set here then keeps the
    page from starting it again until the user presses Resume (what was loaded stays).
    """
    flag_key = f"{name}_stopped"
    if st.session_state.get(flag_key):
        st.warning("Stopped. The weights of an unfinished run are not kept; press Resume to run again.",
                   icon=":material/stop_circle:")
        st.button("Resume", key=f"{name}_resume", on_click=lambda: st.session_state.update({flag_key: False}),
                  help="Start the computation again with the current parameters.")
        st.stop()
    st.button("Stop", key=f"{name}_stop", on_click=lambda: st.session_state.update({flag_key: True}),
              help="Interrupt a long computation; press Resume to start it again.")


def _runners():
    from core.selection.baselines import rank_features, score_features
    from core.selection.kernel_qalpha import kernel_q_alpha
    from core.evaluation.metrics import selection_curves
    from core.selection.qalpha import q_alpha, topographic_map
    from core.selection.slda import exact_slda, greedy_slda, greedy_spca
    from core.features.wavelets import to_haar

    return {"greedy_slda": greedy_slda, "exact_slda": exact_slda, "greedy_spca": greedy_spca,
            "topographic_map": topographic_map, "kernel_q_alpha": kernel_q_alpha, "to_haar": to_haar,
            "q_alpha": q_alpha, "score_features": score_features, "selection_curves": selection_curves,
            "rank_features": rank_features}


@st.cache_data(show_spinner=False, max_entries=32)
def _cached_run(name: str, key: str, _args: tuple, _kwargs: dict):
    return _runners()[name](*_args, **_kwargs)


def run_cached(name: str, key: dict, *args, **kwargs):
    """Call a ``core`` function through the cache. ``key`` must determine the result (data
    fingerprints and parameters); the arrays themselves are passed unhashed."""
    with st.spinner("Computing…"):
        return _cached_run(name, json.dumps(key, sort_keys=True, default=str), args, kwargs)


# Runs that report progress are cached here rather than with st.cache_data: a cached function
# that updates an element created outside it (the progress bar) cannot be replayed on a hit.
_PROGRESS_CACHE: OrderedDict = OrderedDict()
_PROGRESS_LOCK = threading.Lock()
_PROGRESS_ENTRIES = 32


def memoised(key: str, compute, keep=lambda value: True):
    """``compute()`` once per ``key`` (a few dozen results kept, least recently used dropped).

    For runs that draw a progress bar: st.cache_data cannot replay a function that updates an
    element created outside it."""
    with _PROGRESS_LOCK:
        if key in _PROGRESS_CACHE:
            _PROGRESS_CACHE.move_to_end(key)
            return _PROGRESS_CACHE[key]
    value = compute()
    if not keep(value):
        return value
    with _PROGRESS_LOCK:
        _PROGRESS_CACHE[key] = value
        while len(_PROGRESS_CACHE) > _PROGRESS_ENTRIES:
            _PROGRESS_CACHE.popitem(last=False)
    return value


def is_memoised(key: str) -> bool:
    """Whether :func:`memoised` holds a result for ``key`` (then nothing long will run)."""
    with _PROGRESS_LOCK:
        return key in _PROGRESS_CACHE


def iteration_status(total: int):
    """Progress text of an iterative solver (``report.done`` its iteration, ``report.objective``):
    the share of ``total`` iterations over every start, the objective, the time so far and per
    iteration."""
    def status(elapsed, calls, report):
        return calls / total, (f"iteration {report.done}, objective {report.objective:.6g}, {elapsed:.1f} s so far "
                               f"({elapsed / calls:.2g} s per iteration; at most {total})")
    return status


def run_with_progress(key: str, run, *, stop: str, text: str, status, every: int = 1,
                      keep=lambda result: not result.stopped):
    """``run(progress)`` once per ``key`` (:func:`memoised`) with a progress bar that starts with
    ``text``. Every ``every``-th call of the ``progress(report)`` callback handed to ``run``
    (:mod:`core.progress`) shows ``status(elapsed, calls, report) -> (fraction, text)`` (one
    browser message per call would slow fast runs), and returns False once the page's Stop
    button (:func:`stop_control` named ``stop``) was pressed; Streamlit also interrupts the run
    at the bar's next update. Results failing ``keep`` (by default stopped ones) are not kept; a
    run stopped before it had a result (:class:`core.errors.Stopped`) gives None."""
    def compute():
        bar = st.progress(0.0, text=text)
        start = time.perf_counter()
        calls = {"n": 0}

        def progress(report):
            calls["n"] += 1
            if (calls["n"] - 1) % every == 0:
                fraction, message = status(time.perf_counter() - start, calls["n"], report)
                bar.progress(min(fraction, 1.0), text=message)
            return not st.session_state.get(f"{stop}_stopped", False)

        try:
            return run(progress)
        except Stopped:
            return None
        finally:
            bar.empty()

    return memoised(key, compute, keep=lambda result: result is not None and keep(result))


def run_q_alpha(main: Dataset, side: Dataset | None, pairs, params: QAlphaParameters) -> QAlphaResult:
    """Q-alpha with ``params`` on ``main`` with a progress bar and Stop, cached on (data, side,
    pairs, parameters): pages that mean the same run share its result."""
    key = json.dumps(dict(
        main=main.fingerprint, side=side.fingerprint if side is not None else None,
        pairs=None if pairs is None else np.asarray(pairs).tolist(), params=params.key), sort_keys=True)
    return run_with_progress(key, lambda progress: params.run(
        main.X, labels=main.labels, side=None if side is None else side.X, pairs=pairs, progress=progress,
        # the same fixed point, and per iteration 1.2-12x faster than the automatic solver (dense
        # up to 100 features, Lanczos beyond) at 20-600 features and 72 or 500 samples, where the
        # operator allows power steps (sum criterion, no pairs: positive semi-definite)
        solver="power" if params.criterion == "sum" and pairs is None else "auto"),
        stop="qalpha", text="Q-alpha", status=iteration_status(params.max_iter * params.n_init), every=5)


def _path_key(main: Dataset, side: Dataset | None, pairs, params: QAlphaParameters, lams) -> str:
    settings = {name: value for name, value in json.loads(params.key).items() if name != "lam"}
    return json.dumps(dict(
        path=True, main=main.fingerprint, side=side.fingerprint if side is not None else None,
        pairs=None if pairs is None else np.asarray(pairs).tolist(), params=settings,
        lams=[float(lam) for lam in lams]), sort_keys=True)


def has_q_alpha_path(main: Dataset, side: Dataset | None, pairs, params: QAlphaParameters, lams) -> bool:
    """Whether the λ path of these data and settings is computed (then a λ step is a lookup)."""
    return is_memoised(_path_key(main, side, pairs, params, lams))


def run_q_alpha_path(main: Dataset, side: Dataset | None, pairs, params: QAlphaParameters, lams) -> QAlphaPath | None:
    """Q-alpha with ``params`` at every λ of ``lams`` (:func:`core.selection.lambda_path.q_alpha_path`),
    with a progress bar per λ and Stop, kept per (data, side, pairs, settings but λ). None when
    stopped (a stopped path is not kept)."""
    def status(elapsed, calls, report):
        return report.fraction, (f"λ path: {report.done} of {report.total} values ({report.message}), "
                                 f"{elapsed:.1f} s so far")

    return run_with_progress(
        _path_key(main, side, pairs, params, lams),
        lambda progress: q_alpha_path(
            main.X, params.k, labels=main.labels if params.supervised else None,
            side=None if side is None else side.X, pairs=pairs, lams=lams, criterion=params.criterion,
            init=params.init, random_state=params.random_state, max_iter=params.max_iter, tol=params.tol,
            solver="power" if params.criterion == "sum" and pairs is None else "auto", progress=progress),
        stop="qalpha", text="λ path", status=status, keep=lambda path: not path.stopped)
