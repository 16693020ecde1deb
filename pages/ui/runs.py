"""Heavy calls into ``core``: cached on the data's fingerprint and the parameters, with a progress
bar fed by the library's progress callback, and a Stop button."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import asdict, replace

import numpy as np
import streamlit as st

from core import Dataset, Stopped

from . import estimates
from .shared_results import SharedResults, budget_bytes
from .datasets import current_dataset
from core.selection.lambda_path import QAlphaPath, q_alpha_path
from core.selection.qalpha import QAlphaParameters, QAlphaResult


def stop_control(name: str, message: str | None = None) -> None:
    """The stopped state of a page's long computation: a note and a Resume button, drawn only
    after a Stop (there is no Stop while nothing runs: :func:`run_with_progress` draws it beside
    its progress bar, for as long as the work runs).

    Clicking Stop makes Streamlit start a new script run, which interrupts the computation at its
    next progress report; the flag set then keeps the page from starting it again, and the page
    shows its last complete result, until the user presses Resume. ``message`` replaces what the
    note says is on the page (for pages whose result is built in parts).
    """
    flag_key = f"{name}_stopped"
    if st.session_state.get(flag_key):
        kept = st.session_state.get(f"{name}_last")
        shown = kept is not None and kept[0] == current_dataset().fingerprint
        if message is None:
            message = ("The result below is the last complete one; it may belong to other settings than those "
                       "above. " if shown else "Nothing was computed yet. ")
        st.warning(f"Stopped. {message}Press Resume to compute the current settings.", icon=":material/stop_circle:")
        st.button("Resume", key=f"{name}_resume", on_click=lambda: st.session_state.update({flag_key: False}),
                  help="Start the computation again with the current parameters.")


def is_stopped(name: str) -> bool:
    """Whether the Stop of ``name`` was pressed and Resume not yet."""
    return bool(st.session_state.get(f"{name}_stopped"))


def _runners():
    from core.selection.methods import rank_features
    from core.selection.scorers import score_features
    from core.selection.kernel_qalpha import kernel_q_alpha
    from core.evaluation.markers import class_markers
    from core.evaluation.metrics import kmeans_scores
    from core.selection.qalpha import q_alpha
    from core.selection.topographic import topographic_map
    from core.selection.exact import exact_slda
    from core.selection.slda import greedy_slda
    from core.selection.spca import greedy_spca
    from core.features.wavelets import to_haar
    from core.validation import zscores

    def kmeans_of_columns(X, labels, columns, **options):
        """k-means scores of these columns of ``X``, standardised (each column by itself)."""
        return kmeans_scores(zscores(X[:, columns]), labels, **options)

    return {"greedy_slda": greedy_slda, "exact_slda": exact_slda, "greedy_spca": greedy_spca,
            "topographic_map": topographic_map, "kernel_q_alpha": kernel_q_alpha, "to_haar": to_haar,
            "q_alpha": q_alpha, "score_features": score_features, "kmeans_scores": kmeans_of_columns,
            "rank_features": rank_features, "class_markers": class_markers}


# Every session's results, in caches of the server (pages/ui/shared_results.py: computed once,
# read-only, bounded in bytes by their share of $QALPHA_CACHE_MB). Not st.cache_data: it pickles
# each result and unpickles a copy for every hit (an SLDA path's n x n scatter on every rerun), and
# bounds its entries by count, not bytes.
_RUNS = SharedResults("runs", budget_bytes(0.40))
_SMALL_RUNS = SharedResults("k-means scores", budget_bytes(0.05))
_MISSING = object()


def run_cached(name: str, key: dict, *args, small: bool = False, **kwargs):
    """Call a ``core`` function through the server's cache. ``key`` must determine the result (data
    fingerprints and parameters); the arrays themselves are passed unhashed. ``small``: a few
    numbers per key and one key per K (k-means scores), kept in a cache of their own so that
    moving K does not push the runs out of theirs. The result is shared: read-only."""
    cache = _SMALL_RUNS if small else _RUNS
    text = f"{name}:{json.dumps(key, sort_keys=True, default=str)}"
    found = cache.find(text, _MISSING)
    if found is not _MISSING:  # the spinner only on a miss: its element and timer cost a K report 0.5 ms
        return found
    with st.spinner("Computing…"):
        return cache.compute_once(text, lambda: _runners()[name](*args, **kwargs))


# Runs that report progress: a cached function that updates an element created outside it (the
# progress bar) could not be replayed by st.cache_data on a hit.
_PROGRESS_CACHE = SharedResults("runs with progress", budget_bytes(0.40))
_PROGRESS_LOCK = _PROGRESS_CACHE.lock

# Results a page asks for ahead of the user (the Kernel page's other γ's), computed after its run
# by one background thread for the process, so that the page settles with its own result and this
# work takes at most one core however many sessions ask for it. Kept as memoised() keeps results.
_LATER_CHANGED = threading.Condition(_PROGRESS_LOCK)
_LATER_WAITING: OrderedDict = OrderedDict()  # key -> compute, oldest first
_LATER_RUNNING: dict = {}  # key -> threading.Event set when its computation ends
_LATER_THREAD: list = []
#: Computations waiting at most; older ones are dropped (asked for again, they are computed then).
LATER_QUEUE = 12


def memoised(key: str, compute, keep=lambda value: True):
    """``compute()`` once per ``key`` for every session (kept within the cache's byte budget, least
    recently used dropped, read-only). A session asking while another computes ``key`` waits for it.
    A ``key`` waiting in :func:`memoise_later`'s queue is computed here instead; one being computed
    there is waited for, not computed twice.

    For runs that draw a progress bar: st.cache_data cannot replay a function that updates an
    element created outside it."""
    with _PROGRESS_LOCK:
        if key in _PROGRESS_CACHE:
            return _PROGRESS_CACHE.get(key)
        _LATER_WAITING.pop(key, None)
        running = _LATER_RUNNING.get(key)
    if running is not None:
        running.wait()
        with _PROGRESS_LOCK:
            if key in _PROGRESS_CACHE:
                return _PROGRESS_CACHE.get(key)
    return _PROGRESS_CACHE.compute_once(key, compute, keep)


def memoise_later(key: str, compute) -> None:
    """``compute()`` in the background, kept for :func:`memoised` ``(key, ...)``, unless ``key`` is
    kept, waiting or being computed already. ``compute`` must not call Streamlit: it runs outside
    any session, after the run that asked for it. At most :data:`LATER_QUEUE` wait."""
    with _LATER_CHANGED:
        if key in _PROGRESS_CACHE or key in _LATER_WAITING or key in _LATER_RUNNING or _PROGRESS_CACHE.running(key):
            return
        _LATER_WAITING[key] = compute
        while len(_LATER_WAITING) > LATER_QUEUE:
            _LATER_WAITING.popitem(last=False)
        if not _LATER_THREAD:  # a daemon: a server stopping does not wait for work asked for ahead
            _LATER_THREAD.append(threading.Thread(target=_compute_later, name="computed-later", daemon=True))
            _LATER_THREAD[0].start()
        _LATER_CHANGED.notify()


def _compute_later() -> None:
    while True:
        with _LATER_CHANGED:
            while not _LATER_WAITING:
                _LATER_CHANGED.wait()
            key, compute = _LATER_WAITING.popitem(last=False)
            if key in _PROGRESS_CACHE:
                continue
            ended = _LATER_RUNNING[key] = threading.Event()
        try:
            _PROGRESS_CACHE.put(key, compute())
        except Exception:  # noqa: BLE001 - asked for ahead of the user: if the user asks, it runs again and says why
            logging.getLogger(__name__).warning("a computation asked for ahead failed: %s", key, exc_info=True)
        finally:
            with _LATER_CHANGED:
                del _LATER_RUNNING[key]
            ended.set()


#: What the pages derive from a result to draw it and that does not change with K or λ: the
#: scrubber's encoded weights, names and mean image, the ranking table. A report of the hand's K
#: reruns the view; hashing the arrays again for st.cache_data cost it 5-8 ms, and building the
#: ranking table again 2 ms.
_KEPT = SharedResults("views", budget_bytes(0.15))


def kept(key: str, make):
    """``make()`` once per ``key`` (within the cache's byte budget, least recently used dropped,
    read-only): for what a rerun would otherwise derive again from the same result. ``key`` must
    determine the value."""
    return _KEPT.compute_once(key, make)


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


def progress_with_stop(stop: str, key: str, text: str, help_text: str):
    """A progress bar starting with ``text`` and the Stop button of ``stop`` beside it (its click
    sets the flag :func:`is_stopped` reads), in one slot: ``(slot, bar)``; ``slot.empty()``
    removes both once the work is done, so that Stop is shown only while work runs."""
    slot = st.empty()
    with slot.container():
        bar = st.progress(0.0, text=text)
        st.button("Stop", key=key, on_click=lambda: st.session_state.update({f"{stop}_stopped": True}), help=help_text)
    return slot, bar


#: Seconds between two updates of a progress bar: each is a message the browser redraws, and on
#: two cores that drawing competes with the computation it reports.
PROGRESS_INTERVAL = 0.25


def run_with_progress(key: str, run, *, stop: str, text: str, status, every: int = 1,
                      keep=lambda result: not result.stopped, last: bool = True):
    """``run(progress)`` once per ``key`` (:func:`memoised`) with a progress bar that starts with
    ``text`` and a Stop button beside it while the work runs. Every ``every``-th call of the
    ``progress(report)`` callback handed to ``run`` (:mod:`core.progress`) shows
    ``status(elapsed, calls, report) -> (fraction, text)``, at most every ``PROGRESS_INTERVAL``
    seconds (one browser message per call would slow fast runs), and returns False once Stop was
    pressed; Streamlit also interrupts the run at the
    bar's next update. Results failing ``keep`` (by default stopped ones) are not kept.

    After a Stop (until Resume, :func:`stop_control`) nothing new is started: a result kept for
    ``key`` is returned, else the last complete result of ``stop`` (None if there is none, and
    always None with ``last=False``: for runs that are not the page's main result, such as a
    comparison). A run stopped before it had a result (:class:`core.errors.Stopped`) gives the
    same."""
    flag_key, last_key = f"{stop}_stopped", f"{stop}_last"
    data_set = current_dataset().fingerprint  # a last result is shown only with the data it came from

    def fallback():
        kept = st.session_state.get(last_key) if last else None
        return kept[1] if kept is not None and kept[0] == data_set else None

    if st.session_state.get(flag_key) and not is_memoised(key):
        return fallback()

    def compute():
        # keyed by the run: a page may run two computations under one Stop (a comparison)
        slot, bar = progress_with_stop(stop, f"{stop}_stop_{hashlib.sha1(key.encode()).hexdigest()[:12]}", text,
                                       "Interrupt this computation; the last complete result stays on the page.")
        start = time.perf_counter()
        calls = {"n": 0, "shown": -PROGRESS_INTERVAL, "fraction": 0.0, "text": text}

        def progress(report):
            elapsed = time.perf_counter() - start
            if report is None:
                # a look while the work runs in another thread (pages/ui/cluster.run_on): the bar
                # drawn again, at which Streamlit interrupts the run after a Stop
                if elapsed - calls["shown"] >= PROGRESS_INTERVAL:
                    calls["shown"] = elapsed
                    bar.progress(calls["fraction"], text=calls["text"])
                return not st.session_state.get(flag_key, False)
            calls["n"] += 1
            if (calls["n"] - 1) % every == 0 and elapsed - calls["shown"] >= PROGRESS_INTERVAL:
                calls["shown"] = elapsed
                fraction, message = status(elapsed, calls["n"], report)
                calls.update(fraction=min(fraction, 1.0), text=message)
                bar.progress(calls["fraction"], text=message)
            return not st.session_state.get(flag_key, False)

        try:
            return run(progress)
        except Stopped:
            return None
        finally:
            slot.empty()

    result = memoised(key, compute, keep=lambda result: result is not None and keep(result))
    if result is None:
        return fallback()
    if last and keep(result):
        st.session_state[last_key] = (data_set, result)
    return result


def q_alpha_solver(params: QAlphaParameters, pairs) -> str:
    """The eigen-solver the pages run Q-alpha with: power steps where the operator allows them
    (sum criterion, no pairs: positive semi-definite), as the automatic solver does beyond 100
    features, and below too, where the automatic one decomposes G densely (power steps were 1.2x
    faster per iteration at 20-100 features and 72 or 500 samples); else the automatic one."""
    return "power" if params.criterion == "sum" and pairs is None else "auto"


def run_q_alpha(main: Dataset, side: Dataset | None, pairs, params: QAlphaParameters, *, stop: str = "qalpha",
                last: bool = True) -> QAlphaResult | None:
    """Q-alpha with ``params`` on ``main`` with a progress bar and Stop, cached on (data, side,
    pairs, parameters): pages that mean the same run share its result. ``stop`` and ``last`` as
    for :func:`run_with_progress` (a page that compares with this run passes its own ``stop`` and
    ``last=False``); None after a Stop with nothing to show."""
    return run_with_progress(_q_alpha_key(main, side, pairs, params), lambda progress: params.run(
        main.X, labels=main.labels, side=None if side is None else side.X, pairs=pairs, progress=progress,
        solver=q_alpha_solver(params, pairs)),
        stop=stop, last=last, text="Q-alpha", status=iteration_status(params.max_iter * params.n_init), every=5)


def _q_alpha_key(main: Dataset, side: Dataset | None, pairs, params: QAlphaParameters) -> str:
    return json.dumps(dict(
        main=main.fingerprint, side=side.fingerprint if side is not None else None,
        pairs=None if pairs is None else np.asarray(pairs).tolist(), params=params.key), sort_keys=True)


def run_auto_settings(main: Dataset, side: Dataset | None, pairs, params: QAlphaParameters, n_clusters: int | None):
    """Q-alpha's k and λ chosen from the data (:func:`core.selection.automatic.choose_settings`) with
    the other settings of ``params``, a progress bar per candidate and Stop; kept per (data, side,
    pairs, settings), and its run at the chosen (k, λ) kept as :func:`run_q_alpha`'s. None when
    stopped."""
    from core.selection.automatic import choose_settings

    settings = {name: value for name, value in asdict(params).items() if name not in ("k", "lam")}
    key = json.dumps(dict(auto=True, main=main.fingerprint, side=side.fingerprint if side is not None else None,
                          pairs=None if pairs is None else np.asarray(pairs).tolist(), params=settings,
                          n_clusters=n_clusters), sort_keys=True)

    rest = estimates.RestOfRun()

    def status(elapsed, calls, report):
        return report.fraction, (f"Choosing k and λ: {report.done} of {report.total} settings scored "
                                 f"({report.message}), {elapsed:.1f} s so far{_left(rest, elapsed, report)}")

    auto = run_with_progress(
        key, lambda progress: choose_settings(
            main.X, side=None if side is None else side.X, pairs=pairs, n_clusters=n_clusters,
            random_state=params.random_state or 0, progress=progress, criterion=params.criterion, init=params.init,
            n_init=params.n_init, max_iter=params.max_iter, tol=params.tol, solver=q_alpha_solver(params, pairs)),
        stop="qalpha", last=False, text="Choosing k and λ", status=status, keep=lambda settings: True)
    if auto is not None:
        # the choice solved Q-alpha at the chosen (k, λ) with these settings: the page's run there
        # is that result, not a second solve
        chosen = replace(params, k=int(auto.k), lam=float(auto.lam))
        memoised(_q_alpha_key(main, side, pairs, chosen), lambda: auto.results[(auto.k, auto.lam)])
    return auto


def _left(rest: estimates.RestOfRun, elapsed: float, report) -> str:
    """", about N s left" at the rate of the steps so far (:class:`.estimates.RestOfRun`), or nothing."""
    left = rest.seconds(elapsed, report.done, report.total)
    return "" if left is None else f", about {max(left, 1):.0f} s left"


def _path_key(main: Dataset, side: Dataset | None, pairs, params: QAlphaParameters, lams) -> str:
    settings = {name: value for name, value in asdict(params).items() if name != "lam"}
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
    rest = estimates.RestOfRun()

    def status(elapsed, calls, report):
        return report.fraction, (f"λ path: {report.done} of {report.total} values ({report.message}), "
                                 f"{elapsed:.1f} s so far{_left(rest, elapsed, report)}")

    return run_with_progress(
        _path_key(main, side, pairs, params, lams),
        lambda progress: q_alpha_path(
            main.X, params.k, labels=main.labels if params.supervised else None,
            side=None if side is None else side.X, pairs=pairs, lams=lams, criterion=params.criterion,
            init=params.init, random_state=params.random_state, max_iter=params.max_iter, tol=params.tol,
            solver=q_alpha_solver(params, pairs), progress=progress),
        stop="qalpha", last=False, text="λ path", status=status, keep=lambda path: not path.stopped)
