"""The Dask cluster the Server data tab computes on (issue 62, item 5).

``QALPHA_DASK_SCHEDULER=tcp://host:port`` names a running ``dask scheduler``; ``=local`` makes the
app start a ``LocalCluster`` of its own (two worker processes, one thread each) the first time the
tab is opened. Unset, the tab computes in the app's process, as before.

The app connects once per process (a client every session shares, set as Dask's default, so that
the passes of Q-alpha and the one-pass filters go to the workers), when the tab is first opened,
never at start-up. A scheduler that does not answer within :data:`CONNECT_SECONDS` is said on the
tab and the work is done in the app's process; the next try is after :data:`RETRY_SECONDS` or
when the user asks.

Each run has a client of its own, current only in the thread that runs it (``Client.as_current``):
its futures are its own, so a Stop releases exactly that run's tasks (closing its client cancels
what has not run), whatever the other sessions run meanwhile.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from dataclasses import dataclass

from core import InputError
from core.matrix.cluster import connect_scheduler, local_cluster

#: The environment variable naming the scheduler (``tcp://host:port``) or ``local``
SCHEDULER_VARIABLE = "QALPHA_DASK_SCHEDULER"
#: How long the tab waits for the scheduler's answer: said within 10 s, the page drawn included
CONNECT_SECONDS = 6.0
#: A scheduler that did not answer is tried again after this long (or when asked)
RETRY_SECONDS = 60.0
#: How often the page looks at a run on the cluster: its reports, and whether Stop was pressed
POLL_SECONDS = 0.2

_LOCK = threading.Lock()
_FAILED: dict[str, tuple[float, InputError]] = {}


@dataclass(frozen=True)
class Cluster:
    """The cluster the app reached: its scheduler's address and what its workers offer."""

    address: str
    workers: int
    threads: int
    memory: int
    local: bool

    def describe(self) -> str:
        from dask.utils import format_bytes

        where = "a local cluster the app started" if self.local else f"the Dask cluster at {self.address}"
        return (f"Runs on {where}: {self.workers} worker{'s' if self.workers != 1 else ''}, {self.threads} "
                f"thread{'s' if self.threads != 1 else ''}" + (f", {format_bytes(self.memory)}" if self.memory else "")
                + " (QALPHA_DASK_SCHEDULER).")


def setting() -> str | None:
    """``QALPHA_DASK_SCHEDULER`` as set (None: compute in the app's process)."""
    value = os.environ.get(SCHEDULER_VARIABLE, "").strip()
    return value or None


#: The app's clients by setting, and the LocalCluster of ``local``: one per process, shared by the
#: sessions. Module state under :data:`_LOCK`, not ``st.cache_resource``, which takes a client
#: (awaitable) for the result of an ``async`` function and refuses it.
_CLIENTS: dict = {}
_LOCAL: dict = {}


def _connected(value: str):
    """The app's client of the scheduler ``value`` (set as Dask's default), made once per process
    (the caller holds :data:`_LOCK`)."""
    if value not in _CLIENTS:
        if value == "local":
            if "cluster" not in _LOCAL:
                _LOCAL["cluster"] = local_cluster(n_workers=2, threads_per_worker=1)
            address = _LOCAL["cluster"].scheduler_address
        else:
            address = value
        _CLIENTS[value] = connect_scheduler(address, timeout=CONNECT_SECONDS)
    return _CLIENTS[value]


def current() -> Cluster | InputError | None:
    """The cluster the tab computes on; the error that says why not (the work is then done in the
    app's process); None when no cluster is asked for. Waits at most :data:`CONNECT_SECONDS`
    the first time, then answers at once (a failure is kept :data:`RETRY_SECONDS`)."""
    value = setting()
    if value is None:
        return None
    with _LOCK:
        failed = _FAILED.get(value)
        if failed is not None and time.monotonic() - failed[0] < RETRY_SECONDS:
            return failed[1]
        try:
            client = _connected(value)
        except InputError as error:
            _FAILED[value] = (time.monotonic(), error)
            return error
        except Exception as error:  # a LocalCluster that could not start, a refused handshake
            _FAILED[value] = (time.monotonic(), InputError(
                f"The Dask cluster ({SCHEDULER_VARIABLE}={value}) could not be reached or started "
                f"({type(error).__name__}: {error}); the runs go on in the app's process."))
            return _FAILED[value][1]
        _FAILED.pop(value, None)
    workers = client.scheduler_info().get("workers", {})
    return Cluster(address=client.scheduler.address, workers=len(workers),
                   threads=sum(int(w.get("nthreads", 0)) for w in workers.values()),
                   memory=sum(int(w.get("memory_limit") or 0) for w in workers.values()), local=value == "local")


def try_again() -> None:
    """Forget a failed connection: the next look tries again."""
    with _LOCK:
        _FAILED.clear()


def disconnect() -> None:
    """Close the app's clients (Dask's default scheduler is the threaded one again) and a
    LocalCluster it started, and forget failures: the next look connects anew."""
    with _LOCK:
        _FAILED.clear()
        for client in _CLIENTS.values():
            client.close()
        _CLIENTS.clear()
        if "cluster" in _LOCAL:
            _LOCAL.pop("cluster").close()


def run_on(cluster: Cluster, work, progress):
    """``work(report)`` on ``cluster`` in a thread of its own with a client of its own, current
    there only; ``progress(report)`` (Streamlit's progress bar and Stop, which must run in the
    script's thread) is fed the reports here, every :data:`POLL_SECONDS` at most. Returns what
    ``work`` returned, or raises what it raised. If the script is interrupted (Stop, a rerun, a
    closed tab) or ``progress`` returns False, the run's client is closed, which cancels its
    tasks that have not run, and the interruption goes on."""
    from distributed import Client

    client = Client(cluster.address, set_as_default=False, timeout=CONNECT_SECONDS)
    reports, stopped, outcome = queue.Queue(), threading.Event(), {}

    def forward(report):
        reports.put(report)
        return not stopped.is_set()

    def target():
        try:
            with client.as_current():
                outcome["result"] = work(forward)
        except BaseException as error:  # handed to the script's thread
            outcome["error"] = error

    thread = threading.Thread(target=target, name="qalpha-cluster-run", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(POLL_SECONDS)
            while not reports.empty():
                if progress(reports.get()) is False:
                    stopped.set()
            progress(None)  # a look at the page: Streamlit interrupts here after a Stop
    finally:
        stopped.set()  # a run still going stops at its next report
        client.close()  # releases the run's futures: the scheduler cancels what has not run
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]
