"""Every run of a page through ``app.py``, and the release of closed browser tabs' sessions."""

from __future__ import annotations

import gc
import importlib
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

# ---------------------------------------------------------------------------- threads
_THREADS_SET = threading.Lock()
_threads_left = False  # leave_a_core has run in this process
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def leave_a_core() -> None:
    """Once per process: the numerical libraries (BLAS, OpenMP) use one core fewer than the
    machine has, unless the environment sets their threads already.

    The browser usually runs on the same machine, and the server's own event loop must send
    each progress message: with BLAS on both cores of a 2-core machine, a kernel Q-alpha step
    on the AR faces took 3.0 s from key press to settled page; on one, 1.6 s
    (docs/benchmarks.md at 98003b7). OpenMP's count is read when scikit-learn first loads it, so it is set
    in the environment; the BLAS libraries are loaded already and are limited in place.

    Every run waits here until the limit is set: a run that went on meanwhile could enter a
    ``threadpool_limits`` context (core.matrix.threads.one_blas_thread, scikit-learn's k-means)
    that found BLAS on all cores and put them back on leaving, after the limit. With ten people
    opening the app at once that happened in 5 of 8 runs of ``benchmarks.bench_users`` (0 of 8
    with the wait): OpenBLAS's idle thread then spun after every product, 0.10 CPU seconds a K
    step against 0.03 (docs/deployment.md).
    """
    global _threads_left
    with _THREADS_SET:  # uncontended after the first run: a lock taken and given back
        if _threads_left:
            return
        try:
            if not any(name in os.environ for name in _THREAD_VARIABLES):
                from threadpoolctl import threadpool_limits
                import scipy.linalg  # noqa: F401 - loads SciPy's BLAS, so that the limit reaches it too

                threads = max(1, (os.cpu_count() or 1) - 1)
                os.environ["OMP_NUM_THREADS"] = str(threads)
                threadpool_limits(threads, user_api="blas")
        finally:
            _threads_left = True


_WARMED = threading.Lock()
#: Seconds after the first run of the process that the background imports start.
WARM_AFTER = 3.0
#: The modules warmed, one at a time (each 0.2-1 s), in the order the pages' computations need them.
WARM_MODULES = ("scipy.stats", "sklearn.utils", "sklearn.metrics", "sklearn.cluster", "core.evaluation.metrics",
                "core.selection.methods", "core.selection.qalpha")
#: Each module waits until no run of ``app.py`` has been in progress for this long.
QUIET_FOR = 0.5


def warm_imports() -> None:
    """Once per process, in a background thread: import what the pages' computations need
    (scikit-learn's k-means and metrics, which bring SciPy's statistics and pandas, and the
    library's solvers), so that the first page that clusters does not wait for them: they took
    1.2 s of the Q-alpha page's first open in a fresh server (docs/benchmarks.md at 98003b7).

    An import holds the interpreter for its whole length: one module at a time, each when the
    app has been quiet for :data:`QUIET_FOR` (no run in progress, :func:`app_run`). Imported
    while a page opened, they had made the Data page's first open 1.2 s slower.
    """
    if not _WARMED.acquire(blocking=False):
        return

    def load():
        for name in WARM_MODULES:
            while not _quiet():
                time.sleep(0.1)
            importlib.import_module(name)

    # later than the first page's drawing, which they would otherwise slow (Home by 1 s)
    timer = threading.Timer(WARM_AFTER, load)
    timer.name, timer.daemon = "warm-imports", True
    timer.start()


# ---------------------------------------------------------------------------- every page through app.py
_RUN = threading.local()  # per script thread: did this run start in app.py?


_RUNS_CHANGED = threading.Lock()
_RUNS = {"in progress": 0, "last ended": float("-inf")}  # runs of app.py, for the warm imports


@contextmanager
def app_run():
    """``app.py``'s every run, the page's included: marks it as started there (:func:`page_start`)
    and counts it while it runs (:func:`warm_imports` waits for quiet)."""
    _RUN.through_app = True
    with _RUNS_CHANGED:
        _RUNS["in progress"] += 1
    try:
        yield
    finally:  # st.stop and st.rerun end a run by exceptions
        with _RUNS_CHANGED:
            _RUNS["in progress"] -= 1
            _RUNS["last ended"] = time.monotonic()


def _quiet() -> bool:
    with _RUNS_CHANGED:
        return _RUNS["in progress"] == 0 and time.monotonic() - _RUNS["last ended"] >= QUIET_FOR


def page_start() -> None:
    """The first line of every page: make sure the run went through ``app.py``.

    Streamlit decides once per process, when the first session starts, that an app with a
    ``pages/`` folder is a "version 1" multipage app; until a session has run ``st.navigation``,
    a page's own URL (a shared view, a bookmark, a reload) runs that page's file alone: no
    sidebar, no navigation, no data set. Such a run is recognised here (``app.py`` did not mark
    it) and started again through ``app.py``, after clearing Streamlit's own switch
    (``PagesManager.uses_pages_directory``, which ``st.navigation`` clears the same way; the
    version is pinned in requirements.txt). A page run on its own as the main script (AppTest)
    is left alone.
    """
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if getattr(_RUN, "through_app", False):
        _RUN.through_app = False
        return
    context = get_script_run_ctx()
    if context is not None and Path(context.main_script_path).name == "app.py":
        PagesManager.uses_pages_directory = False
        st.rerun()


# ---------------------------------------------------------------------------- releasing closed tabs
# Streamlit keeps a disconnected session (its data sets, its parsed upload, its uploaded files) in
# a TTL cache that expires entries only when the cache is next written to, and then drops them
# without shutting them down: with nobody connecting, a closed tab's gigabytes stayed for good
# (benchmarks/bench_sessions.py). Each script run records its session here; a daemon thread closes
# the sessions that have been disconnected longer than server.disconnectedSessionTTL.
_SEEN: dict[str, float] = {}
_SEEN_LOCK = threading.Lock()
_REAPER: list[threading.Thread] = []


def _reap_closed_sessions(period: float) -> None:
    from streamlit import runtime

    while True:
        time.sleep(period)
        if not runtime.exists():
            continue
        instance = runtime.get_instance()
        ttl = float(st.get_option("server.disconnectedSessionTTL"))
        now = time.monotonic()
        closed = 0
        with _SEEN_LOCK:
            for session_id, seen in list(_SEEN.items()):
                if instance.is_active_session(session_id):
                    _SEEN[session_id] = now
                elif now - seen > ttl:
                    del _SEEN[session_id]
                    instance.close_session(session_id)
                    closed += 1
        if closed:
            _give_back_memory()


def _give_back_memory() -> None:
    """Collect the closed sessions' objects now: they hold reference cycles, and without a
    collection their arrays outlived the close (bench_sessions.py: 13% of the memory back 30 s
    after closing without it, 54-63% with it; glibc's malloc_trim and Arrow's pool release
    added nothing measurable there)."""
    gc.collect()


def track_session() -> None:
    """Record this run's session for the reaper (started once per process)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    context = get_script_run_ctx()
    if context is None:
        return
    with _SEEN_LOCK:
        _SEEN[context.session_id] = time.monotonic()
        if not _REAPER:
            _REAPER.append(threading.Thread(target=_reap_closed_sessions, args=(10.0,), daemon=True,
                                            name="release-closed-sessions"))
            _REAPER[0].start()
