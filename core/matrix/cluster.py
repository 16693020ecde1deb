"""Where the passes over chunked data run: the ``dask.distributed`` cluster, if any, and the data
held in its memory.

* :func:`hold_in_memory` decides whether a Dask array is held in the workers' (or this process's)
  memory for the passes to come, and says why; :func:`held_row_blocks` cuts it into the blocks
  it is held in;
* :func:`local_cluster` starts a ``LocalCluster`` whose workers run without what slows a pass
  (:data:`SLOW_WORKER_ENVIRONMENT`);
* :func:`connect_scheduler` connects to a running scheduler, or says within a timeout why not;
* :func:`pass_over_blocks` maps a function over a Dask array's row blocks and combines the
  results in a tree on the workers, as plain tasks on the active scheduler.

``distributed`` is imported only where a function needs it: data in memory, sparse matrices and
Dask's threaded scheduler never load it.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import InputError
from ..limits import format_bytes
from .kinds import RowBlocks, local_threads
from .threads import one_blas_thread

__all__ = ["HELD_BLOCK_BYTES", "HELD_BLOCKS_PER_THREAD", "PERSIST_SHARE", "SLOW_WORKER_ENVIRONMENT", "TREE_FAN_IN",
           "WHOLE_CHUNKS_PER_BLOCK", "connect_scheduler", "hold_in_memory", "held_block_count", "held_row_blocks",
           "local_cluster", "pass_over_blocks", "worker_environment"]

#: On a ``dask.distributed`` cluster the data are held in the workers' memory by default when they
#: take at most this share of it: a worker starts spilling to disk at 60% of its memory limit
#: (``distributed.worker.memory.target``), and the passes' block copies and partial products need
#: room beside the data.
PERSIST_SHARE = 0.5
#: Data held in memory are cut into this many row blocks of equal size per worker thread: on a
#: LocalCluster every block of a pass costs the scheduler and the client about 1.6 ms and the
#: reduction tree a level per 16 blocks, and a block's products run faster in long slices of one
#: array than over many small ones. Two per thread leave the scheduler room to balance them.
HELD_BLOCKS_PER_THREAD = 2
#: ... and into blocks of at most this many bytes: a worker moves, spills and recomputes a block whole.
HELD_BLOCK_BYTES = 256 << 20
#: Stored in at least this many row chunks per held block, the chunks are merged whole rather than
#: cut: cutting them into 4 blocks of 15,000 rows held 60,000 x 4,000 float32 from Zarr chunks of
#: 2,000 in 1.3-1.6 s against 1.0-1.2 s for blocks of 14,000 and 16,000 (1 worker x 2 threads).
WHOLE_CHUNKS_PER_BLOCK = 4


def _active_client():
    """The ``dask.distributed`` client that computes Dask arrays now, or None. Only looked up when
    ``distributed`` is already imported: without it there is no client to find."""
    import sys

    distributed = sys.modules.get("distributed")
    if distributed is None:
        return None
    try:
        return distributed.default_client()
    except ValueError:
        return None


def hold_in_memory(blocks: RowBlocks, persist: bool | None = None) -> tuple[RowBlocks, str]:
    """The row blocks held in memory for the passes to come, where that pays, and why.

    On a ``dask.distributed`` cluster (an active client), ``persist=None`` holds the data in the
    workers' memory when they take at most :data:`PERSIST_SHARE` of it: every later pass then
    reads them from memory, not from their source. Without a client, ``None`` leaves them where
    they are (the threaded scheduler reads them per pass, as for data larger than memory).
    ``True`` holds them wherever the array computes; ``False`` never does. Held data are cut into
    :data:`HELD_BLOCKS_PER_THREAD` row blocks per worker thread (:func:`held_row_blocks`), and
    on several workers the blocks are dealt to them in turn.

    Returns the blocks (persisted or as they were) and a sentence saying where the passes read
    the data and why, for the result to carry.
    """
    if persist not in (None, True, False):
        raise InputError(f"persist must be True, False or None (decide by the cluster's memory); got {persist!r}.")
    array = blocks.array
    size = format_bytes(int(array.nbytes))
    client = _active_client()
    if persist is None:
        if client is None:
            return blocks, (f"Read from their source at every pass ({size}; no dask.distributed cluster: "
                            "persist=True holds them in this process's memory).")
        workers = client.scheduler_info().get("workers", {})
        memory = sum(int(worker.get("memory_limit") or 0) for worker in workers.values())
        persist = bool(memory) and array.nbytes <= PERSIST_SHARE * memory
        if not persist:
            room = f"{format_bytes(memory)} of the workers' memory" if memory else "no memory limit the workers report"
            return blocks, (f"Read from their source at every pass: {size} against {room} (held in memory when "
                            f"at most {PERSIST_SHARE:.0%} of it; persist=True to hold them anyway).")
        reason = f"{size} of the workers' {format_bytes(memory)}, within {PERSIST_SHARE:.0%}"
    elif not persist:
        return blocks, f"Read from their source at every pass ({size}; persist=False)."
    else:
        reason = f"{size}; persist=True"
    if client is not None:
        nthreads = client.nthreads()
        held = _spread_over_workers(client, held_row_blocks(array, sum(nthreads.values())), nthreads)
        where = "the workers' memory"
    else:
        held = held_row_blocks(array, local_threads()).persist()
        where = "this process's memory"
    return RowBlocks(array=held), f"Held in {where} for every pass, in {held.numblocks[0]} row blocks ({reason})."


def _spread_over_workers(client, array, nthreads):
    """``array`` held in the workers' memory, its row blocks dealt to the worker threads in turn
    (``nthreads``: each worker's address and threads, ``client.nthreads()``).

    Persisted whole, the blocks land where the scheduler ran their reads: 3 of 4 on one of two
    workers, whose passes then took 3 blocks' time where 2 would do. On several workers each
    block is therefore held on its worker (allowed elsewhere should that worker be lost), then
    the blocks as one array. That costs more than a plain persist (60,000 x 4,000 float32 from
    Zarr on 2 workers: 1.3-3.6 s against 1.0-1.5 s), so one worker takes the plain one."""
    import dask.array as da
    from distributed import wait

    if len(nthreads) == 1:
        held = client.persist(array)
    else:
        slots = [address for address, threads in sorted(nthreads.items()) for _ in range(threads)]
        pieces = [client.persist(array.blocks[i], workers=[slots[i % len(slots)]], allow_other_workers=True)
                  for i in range(array.numblocks[0])]
        held = client.persist(da.concatenate(pieces, axis=0))
    wait(held)
    return held


def held_block_count(n_bytes: int, n_rows: int, threads: int) -> int:
    """How many row blocks data of ``n_bytes`` in ``n_rows`` rows are held in on ``threads`` worker
    threads: :data:`HELD_BLOCKS_PER_THREAD` per thread, more where a block would exceed
    :data:`HELD_BLOCK_BYTES`, never more than the rows."""
    return min(int(n_rows), max(threads * HELD_BLOCKS_PER_THREAD, -(-int(n_bytes) // HELD_BLOCK_BYTES)))


def held_row_blocks(array, threads: int):
    """``array`` in the row blocks it is held in memory in: :data:`HELD_BLOCKS_PER_THREAD` per
    worker thread and at most :data:`HELD_BLOCK_BYTES` each, of about equal rows. Stored in at
    least :data:`WHOLE_CHUNKS_PER_BLOCK` chunks per block, whole chunks are merged (the blocks
    equal within a chunk); else the rows are cut into equal blocks (within one row). Chunks that
    are sparse matrices are left as they are."""
    from scipy import sparse

    if sparse.issparse(getattr(array, "_meta", None)):
        return array
    n_rows, sizes = array.shape[0], array.chunks[0]
    n_blocks = held_block_count(array.nbytes, n_rows, threads)
    if len(sizes) >= WHOLE_CHUNKS_PER_BLOCK * n_blocks:
        ends = np.cumsum(sizes)
        shares = n_rows * np.arange(1, n_blocks) / n_blocks
        cuts = ends[np.abs(ends[None, :] - shares[:, None]).argmin(axis=1)]
        rows = tuple(int(r) for r in np.diff(np.unique(np.concatenate(([0], cuts, [n_rows])))))
    else:
        size, longer = divmod(n_rows, n_blocks)
        rows = (size + 1,) * longer + (size,) * (n_blocks - longer)
    return array if rows == sizes else array.rechunk((rows, array.chunks[1]))


#: What dask.distributed's nanny puts in a worker process's environment that the passes pay for:
#: ``MALLOC_TRIM_THRESHOLD_`` fixes glibc's mmap threshold at 128 kB, so every buffer of a chunk's
#: size is mapped afresh and its pages faulted in at each read. Measured on a 2-core Xeon: a
#: 2,000 x 4,000 float32 Zarr chunk read and summed in 110 ms with it against 60 ms without, in
#: the worker and in a plain process alike (glibc's adaptive thresholds reuse the freed buffers).
SLOW_WORKER_ENVIRONMENT = ("MALLOC_TRIM_THRESHOLD_",)


def worker_environment() -> dict:
    """dask.distributed's environment for the worker processes a nanny starts
    (``distributed.nanny.pre-spawn-environ``) without :data:`SLOW_WORKER_ENVIRONMENT`."""
    import dask
    import distributed  # noqa: F401  (its defaults enter dask.config on import)

    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
    for name in SLOW_WORKER_ENVIRONMENT:
        environ.pop(name, None)
    return environ


def local_cluster(n_workers: int = 2, threads_per_worker: int = 1, **options):
    """A ``distributed.LocalCluster`` of worker processes started with :func:`worker_environment`
    (a nanny restarts a killed worker with the same environment); ``options`` go to LocalCluster.

    A worker process inherits this process's environment, where a nanny of any earlier cluster
    has put dask.distributed's settings (its docs: they leak into the nanny's process), and a
    variable set there overrides the configuration. :data:`SLOW_WORKER_ENVIRONMENT` is therefore
    taken out of this process's ``os.environ`` too; glibc read this process's own setting when
    it started, so only the processes it starts from now on see the change.
    """
    import dask
    from distributed import LocalCluster

    environ = worker_environment()
    for name in SLOW_WORKER_ENVIRONMENT:
        os.environ.pop(name, None)
    with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
        return LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker, processes=True,
                            **{"dashboard_address": None, **options})


def connect_scheduler(address: str, timeout: float = 10.0):
    """A ``dask.distributed.Client`` of the scheduler at ``address``, or a clear error within ``timeout``.

    Parameters
    ----------
    address : str
        ``tcp://host:port`` (or ``host:port``) of a running ``dask scheduler``.
    timeout : float
        Seconds to wait for the connection.
    """
    if not isinstance(address, str) or not address.strip():
        raise InputError("The scheduler address must be text such as tcp://10.0.0.5:8786.")
    address = address.strip()
    from distributed import Client

    def unreachable(reason: str) -> InputError:
        return InputError(f"Could not reach a Dask scheduler at {address} within {timeout:g} s ({reason}). Check the "
                          "address and that `dask scheduler` runs there, or leave the scheduler out to compute on this "
                          "machine.")

    # asked for its identity first, within ``timeout``: a port that accepts the connection and
    # never answers (a wrong service, a hung scheduler) kept Client() waiting past its own timeout
    # for good, already registered as the default client that every computation then waited on
    reason = _identity_within(address, timeout)
    if reason is not None:
        raise unreachable(reason)
    try:
        return Client(address, timeout=timeout, set_as_default=True)
    except (OSError, TimeoutError, ValueError) as exc:
        raise unreachable(type(exc).__name__) from None


def _identity_within(address: str, timeout: float) -> str | None:
    """None if the scheduler at ``address`` tells its identity within ``timeout`` seconds, else why
    not (the error's kind, or "no answer"). In a thread of its own with an event loop of its own,
    given up at ``timeout`` whatever the connection does."""
    import asyncio
    import threading

    from distributed.core import rpc

    async def identity():
        async with rpc(address, timeout=timeout) as scheduler:
            return await scheduler.identity()

    outcome = {}

    def ask():
        try:
            outcome["identity"] = asyncio.run(asyncio.wait_for(identity(), timeout))
        except Exception as exc:  # the caller says why
            outcome["error"] = exc

    thread = threading.Thread(target=ask, name="dask-identity", daemon=True)
    thread.start()
    thread.join(timeout + 0.5)
    if "identity" in outcome:
        return None
    error = outcome.get("error")
    return "no answer" if error is None or isinstance(error, (TimeoutError, asyncio.TimeoutError)) else type(error).__name__


#: Partial products of the row blocks are summed in a tree of this fan-in, on the workers: a pass
#: sends back one k x n array rather than one per block (on a cluster with 10^3 blocks and
#: n = 20,000, 0.8 MB per pass instead of 0.8 GB). Each level of the tree is a round trip to the
#: scheduler after the last block: at 16 (one level for 10 blocks) the tail of a pass on data
#: held in a LocalCluster's worker took 13 ms against 18 ms at 8 (2-core Xeon, medians of 9).
TREE_FAN_IN = 16


def pass_over_blocks(blocks: RowBlocks, function, combine, shared=(), arguments=lambda block: (),
                     label="qalpha-pass"):
    """One pass over the row blocks of a Dask array: ``function(pieces, *arguments(b, *shared_keys))``
    for every row block ``b`` (``pieces``: its column chunks, :meth:`RowBlocks.blocks`), combined
    in order as a tree of :data:`TREE_FAN_IN`-way ``combine`` tasks, computed by the active
    scheduler. The tasks are keyed ``(label-<unique>, level, index)``: the blocks' at level 0.

    The graph is written as plain tasks on the array's keys, the ``shared`` arrays entered once
    each: ``dask.delayed`` calls unpacked and tokenised every block's chunks at each pass, 0.6-0.9
    ms of the client's time per block (18-28 ms a pass on 30 blocks), on the cores the workers
    use. An iteration's cost per block on a LocalCluster (``benchmarks/bench_cluster.py``, part 1)
    fell from 2.5-2.7 ms to 1.6 ms, half of Dask's own ``X.sum()``.
    """
    import uuid

    import dask
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph

    name = f"{label}-{uuid.uuid4().hex}"
    layer = {(name, -1, i): value for i, value in enumerate(shared)}
    shared_keys = [(name, -1, i) for i in range(len(shared))]
    keys = []
    for block, pieces in enumerate(blocks.blocks()):
        keys.append((name, 0, block))
        layer[keys[-1]] = (function, list(pieces), *arguments(block, *shared_keys))
    level = 0
    while len(keys) > 1:
        level += 1
        keys, parts = [], keys
        for start in range(0, len(parts), TREE_FAN_IN):
            keys.append((name, level, start // TREE_FAN_IN))
            layer[keys[-1]] = (combine, *parts[start:start + TREE_FAN_IN])
    graph = HighLevelGraph.from_collections(name, layer, dependencies=[blocks.array])
    # one BLAS thread per Dask thread while a pass runs in this process: Dask already runs a block
    # per core, and OpenBLAS's own threads would spin against the other blocks' reading and
    # decompression (dask.distributed's workers start with one BLAS thread already)
    with one_blas_thread():
        return dask.compute(Delayed(keys[0], graph, layer=name))[0]
