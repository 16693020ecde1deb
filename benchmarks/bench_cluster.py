"""Q-alpha on a Dask cluster beyond this machine: the measured inputs of a model of an iteration's
time, and the model's answer for 10^6 cells x 20,000 genes on 8, 32 and 128 workers.

Run ``python -m benchmarks.bench_cluster`` (about 7 minutes on 2 cores; ``--quick`` for a smaller
run, part 0 on 20,000 rows). Four parts, all in one run:

0. **Issue 62's targets** on a float32 Zarr of 60,000 x 4,000 (``--rows``) with 80 planted
   features in 4 sample groups (chunks of 2,000 rows, in a temporary folder): ``q_alpha(X, 4)``
   from the uniform start on NumPy in memory, on Dask's threaded scheduler from disk, on a
   ``LocalCluster`` (1 worker x 2 threads, :func:`core.matrix.cluster.local_cluster`) from disk and
   with the data held in the worker, and on a LocalCluster with dask.distributed's own worker
   environment (``MALLOC_TRIM_THRESHOLD_`` set) from disk. The start-up is the time from the call
   to the first progress report (after a run on small data, so that imports are not counted), an
   iteration the median between reports after it; beside them a plain pass, ``X.sum()`` (best of
   3), the weights' largest difference from NumPy's and the planted features among the 80 largest
   weights. Then what one pass on the held data is made of, from Dask's task stream, against the
   same blocks' arithmetic in this process.

1. **The scheduler's cost.** On a ``LocalCluster`` of 2 worker processes x 1 thread, Q-alpha
   (``q_alpha(X, 2)``, power steps, the data held in the workers' memory by ``X.persist()`` in
   their own blocks, ``persist=False``, which would cut them into two per thread) on
   arrays of 100 to 2,000 row blocks so small (20 x 100) that their arithmetic is negligible: an
   iteration's time is then the scheduler's. The line through those times gives its cost per row
   block (the block's task and its share of the reduction tree). ``X.sum()`` on
   the same held array is plain Dask's pass, measured beside it.
2. **A block's cost.** One row block of the size ``bench_scale`` reads (1,024 x 20,000 float32,
   82 MB): Q-alpha's products on it in memory (an iteration on 8 such blocks with one thread,
   divided by 8), and reading it from a Zarr store on the local disk (Zstandard, as
   ``bench_scale`` writes it; ``X.sum()`` from disk minus the same in memory).
3. **The model.** An iteration over B blocks on W workers of 2 cores each: the workers' share,
   ``B (compute + read) / 2W``; the storage's, ``B x block bytes / bandwidth``; the scheduler's,
   ``B x cost per block`` (the median over part 1's sizes). The slowest sets the pace (the three overlap: Dask
   reads, computes and schedules different blocks at once). The storage's bandwidth is not
   measured here: the table gives it for 1 GB/s (one file server or one local NVMe disk) and for
   10 GB/s (a parallel file system or object store read by many clients).
"""

from __future__ import annotations

import argparse
import logging
import math
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from benchmarks.results import run_recorded
from benchmarks.timing import best_of, times_of

#: The row block of part 2 (bench_scale's Zarr chunks) and of the model.
BLOCK_ROWS, BLOCK_COLUMNS = 1024, 20_000
#: The model's data set and cluster.
MODEL_CELLS, MODEL_GENES, CORES_PER_WORKER = 10**6, 20_000, 2
WORKERS = (8, 32, 128)
STORAGE_BANDWIDTHS = (1e9, 10e9)


def timed_q_alpha(X, k: int, iterations: int, **options):
    """Q-alpha's start-up (from the call to its first progress report), an iteration (the median
    time between reports after the first) and its result."""
    from core import q_alpha

    stamps = []
    start = time.perf_counter()
    result = q_alpha(X, k, solver="power", max_iter=iterations, tol=1e-14,
                     progress=lambda report: stamps.append(time.perf_counter()), **options)
    return stamps[0] - start, statistics.median(np.diff(stamps)[1:]), result


def plain_pass(X) -> float:
    """The fastest of 3 plain Dask passes, ``X.sum()``."""
    return best_of(lambda: X.sum().compute(), 3)


def keep_blocks_of(rows: int, columns: int) -> int:
    """The memory limit under which Q-alpha keeps row blocks of ``rows`` as they are: it merges
    smaller ones up to the limit's share of a block (``core.matrix.kinds.as_chunked_array``)."""
    from core.matrix.kinds import BLOCK_COPIES, local_threads

    return BLOCK_COPIES * local_threads() * 8 * columns * rows


def scheduler_costs(block_counts, iterations: int) -> list[dict]:
    """Part 1: per block count, an iteration and a plain pass on a LocalCluster, data held."""
    import dask.array as da
    from dask.distributed import Client

    from core.matrix.cluster import local_cluster

    rows = []
    # a worker's heartbeat cut by the cluster's shutdown is logged with its traceback: not a result
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    with local_cluster(n_workers=2, threads_per_worker=1) as cluster, \
            Client(cluster):
        for blocks in block_counts:
            X = da.random.default_rng(0).standard_normal((blocks * 20, 100), chunks=(20, 100)).persist()
            X.sum().compute()
            passes = times_of(lambda: X.sum().compute(), 5)
            # held already, in its own blocks: persist=True would cut it into two blocks per thread
            iteration = timed_q_alpha(X, 2, iterations, init="random", random_state=0, persist=False,
                                      memory_limit=keep_blocks_of(20, 100))[1]
            rows.append(dict(blocks=blocks, iteration=iteration, plain_pass=statistics.median(passes)))
    return rows


def line_through(xs, ys) -> tuple[float, float]:
    """Least-squares slope and intercept."""
    slope, intercept = np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)
    return float(slope), float(intercept)


def block_costs(n_blocks: int, iterations: int) -> dict:
    """Part 2: one 1,024 x 20,000 float32 block's products in memory, and its reading from Zarr."""
    import dask
    import dask.array as da
    import zarr

    rng = np.random.default_rng(1)
    values = rng.standard_normal((n_blocks * BLOCK_ROWS, BLOCK_COLUMNS), dtype=np.float32)
    values[:, :80] += rng.integers(0, 2, (values.shape[0], 1)).astype(np.float32)  # some structure
    in_memory = da.from_array(values, chunks=(BLOCK_ROWS, BLOCK_COLUMNS))
    with tempfile.TemporaryDirectory() as folder, dask.config.set(scheduler="threads", num_workers=1):
        path = Path(folder) / "blocks.zarr"
        store = zarr.create_array(str(path), shape=values.shape, chunks=(BLOCK_ROWS, BLOCK_COLUMNS),
                                  dtype="float32", compressors=zarr.codecs.ZstdCodec(level=3))
        store[:] = values
        stored_bytes = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
        on_disk = da.from_zarr(str(path))
        iteration = timed_q_alpha(in_memory, 2, iterations, init="random", random_state=0)[1]
        # the page cache holds the file after the first read: this is decompression and the copy
        # out of the cache, the least a read can cost; a cold disk or a network adds its transfer
        read = plain_pass(on_disk) - plain_pass(in_memory)
    return dict(compute=iteration / n_blocks, read=max(read, 0.0) / n_blocks, stored=stored_bytes / n_blocks,
                dense=BLOCK_ROWS * BLOCK_COLUMNS * 4)


#: Issue 62's targets measured on planted data: samples, features, planted features, row chunk.
#: (The issue's table is on 60,000 rows; ``--rows`` sets them, ``--quick`` takes 20,000.)
TARGET_ROWS, TARGET_FEATURES, TARGET_PLANTED, TARGET_CHUNK_ROWS, TARGET_GROUPS = 60_000, 4_000, 80, 2_000, 4


def planted_zarr(path, shape, planted: int, groups: int, chunk_rows: int):
    """A float32 Zarr of N(0, 1) noise in which each of ``groups`` sample groups has its own
    ``planted / groups`` features shifted by 1.5; returns the array in memory too."""
    import zarr

    rng = np.random.default_rng(2)
    values = rng.standard_normal(shape, dtype=np.float32)
    group = rng.integers(0, groups, shape[0])
    per_group = planted // groups
    for g in range(groups):
        values[np.ix_(group == g, range(g * per_group, (g + 1) * per_group))] += 1.5
    store = zarr.create_array(str(path), shape=shape, chunks=(chunk_rows, shape[1]), dtype="float32",
                              compressors=zarr.codecs.ZstdCodec(level=3))
    store[:] = values
    return values


def timed_run(X, iterations: int, **options) -> dict:
    """Part 0's run: Q-alpha with k = groups from the uniform start, timed, and what it found."""
    startup, iteration, result = timed_q_alpha(X, TARGET_GROUPS, iterations, **options)
    found = len(set(np.argsort(-result.alpha)[:TARGET_PLANTED]) & set(range(TARGET_PLANTED)))
    return dict(startup=startup, iteration=iteration, alpha=result.alpha, found=found,
                start_passes=result.start_passes, placement=result.data_placement)


def held_pass_anatomy(on_disk, values, repeats: int = 7) -> dict:
    """What one of Q-alpha's passes on the data held in a cluster's worker is made of (medians of
    ``repeats``, read from Dask's task stream): from the call to the first block's start (the
    client's graph, the scheduler), the blocks (first start to last stop), the tail (the last
    block to the client's result), and the blocks' own time per worker thread. Beside it the same
    blocks' arithmetic in this process on as many threads, from an array in memory: the floor."""
    from dask.distributed import get_client, get_task_stream

    from core.matrix import data_matrix
    from core.matrix.normalised import _block_products
    from core.matrix.threads import map_on_cores

    threads = sum(get_client().nthreads().values())
    features = data_matrix(on_disk, persist=True).normalised()
    W = np.random.default_rng(0).standard_normal((features.n_kept, TARGET_GROUPS))
    features.fused(W)
    parts = {"call to the first block": [], "the blocks": [], "the last block to the result": [],
             "block time per thread": [], "the whole pass": []}
    for _ in range(repeats):
        with get_task_stream() as stream:
            start = time.time()
            features.fused(W)
            end = time.time()
        # a pass's block tasks are keyed (qalpha-pass-..., 0, block); its reduction (..., level >= 1, j)
        blocks = [span for task in stream.data if str(task["key"][0]).startswith("qalpha-pass") and task["key"][1] == 0
                  for span in task["startstops"] if span["action"] == "compute"]
        first, last = min(b["start"] for b in blocks), max(b["stop"] for b in blocks)
        parts["call to the first block"].append(first - start)
        parts["the blocks"].append(last - first)
        parts["the last block to the result"].append(end - last)
        parts["block time per thread"].append(sum(b["stop"] - b["start"] for b in blocks) / threads)
        parts["the whole pass"].append(end - start)
    raw, shift = features._raw_weights(W)
    columns = np.array([0, values.shape[1]])
    bounds = features.blocks.row_starts  # the held blocks' rows
    floor = times_of(lambda: map_on_cores(lambda a, b: _block_products([values[a:b]], columns, raw, shift, True),
                                          bounds[:-1], bounds[1:]), repeats)
    medians = {name: statistics.median(times) for name, times in parts.items()}
    medians["the same blocks in this process"] = statistics.median(floor)
    return medians


def issue_targets(iterations: int, rows: int = TARGET_ROWS) -> list[tuple[str, dict]]:
    """Part 0: NumPy in memory, Dask's threaded scheduler from disk, a LocalCluster (1 worker x
    2 threads, :func:`core.matrix.cluster.local_cluster`) from disk and with the data held in the
    worker, and the same cluster with dask.distributed's own worker environment, from disk."""
    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    from core import q_alpha
    from core.matrix.cluster import local_cluster

    # the first call's imports are not the start-up's: a run on a small matrix first
    q_alpha(np.random.default_rng(0).standard_normal((300, 40)), 2, max_iter=3, tol=1e-3)
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "planted.zarr"
        values = planted_zarr(path, (rows, TARGET_FEATURES), TARGET_PLANTED, TARGET_GROUPS, TARGET_CHUNK_ROWS)
        runs.append(("NumPy, in memory", dict(timed_run(values, iterations), plain_pass=float("nan"))))
        on_disk = da.from_zarr(str(path))
        with dask.config.set(scheduler="threads"):
            runs.append(("Dask threaded, from disk", dict(timed_run(on_disk, iterations),
                                                          plain_pass=plain_pass(on_disk))))
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        with local_cluster(n_workers=1, threads_per_worker=2) as cluster, Client(cluster):
            runs.append(("LocalCluster 1 x 2, from disk", dict(timed_run(on_disk, iterations, persist=False),
                                                               plain_pass=plain_pass(on_disk))))
            runs.append(("LocalCluster 1 x 2, held in the worker", dict(timed_run(on_disk, iterations, persist=True),
                                                                        plain_pass=float("nan"),
                                                                        anatomy=held_pass_anatomy(on_disk, values))))
        del values
        with LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as cluster, \
                Client(cluster):
            runs.append(("the same, dask.distributed's worker environment, from disk",
                         dict(timed_run(on_disk, iterations, persist=False), plain_pass=plain_pass(on_disk))))
    return runs


def print_targets(runs, iterations: int, rows: int = TARGET_ROWS):
    numpy_run = runs[0][1]
    print(f"Part 0. Issue 62's targets: float32 {rows:,} x {TARGET_FEATURES:,}, {TARGET_PLANTED} planted "
          f"features in {TARGET_GROUPS} groups, Zarr chunks of {TARGET_CHUNK_ROWS:,} rows; q_alpha(X, {TARGET_GROUPS}), "
          f"the uniform start, {iterations} iterations (an iteration: the median after the first)")
    print("| run | start-up | in iterations | an iteration | x NumPy's | X.sum() | iteration / pass "
          "| largest weight difference from NumPy | planted found | start passes |\n|" + "---|" * 10)
    for name, run in runs:
        measured = run["plain_pass"] == run["plain_pass"]  # no pass where the data are not read from disk
        plain = f"{run['plain_pass']:.2f} s | {run['iteration'] / run['plain_pass']:.2f}" if measured else "— | —"
        print(f"| {name} | {run['startup']:.2f} s | {run['startup'] / run['iteration']:.1f} | {run['iteration']:.3f} s "
              f"| {run['iteration'] / numpy_run['iteration']:.2f} | {plain} "
              f"| {np.abs(run['alpha'] - numpy_run['alpha']).max():.1e} | {run['found']}/{TARGET_PLANTED} "
              f"| {run['start_passes']} |")
    threaded, cluster = runs[1][1], runs[2][1]
    print(f"A pass on the LocalCluster against the threaded one: {cluster['plain_pass'] / threaded['plain_pass']:.2f}x "
          "(target 1.3). Targets of issue 62: start-up within 5 iterations; from disk an iteration within 1.3 passes; "
          "held in the worker within 1.2x NumPy's iteration; weights within 1e-12 of NumPy's.")
    print(f"Where held: {runs[3][1]['placement']}")
    anatomy = runs[3][1]["anatomy"]
    print("\nA pass on the data held in the worker (q_alpha's fused product, k = 4), from Dask's task stream; "
          "medians of 7\n| part | ms |\n|---|---|")
    for name, seconds in anatomy.items():
        print(f"| {name} | {seconds * 1e3:.0f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer block counts and iterations, 20,000 rows in part 0")
    parser.add_argument("--rows", type=int, default=None, help=f"rows of part 0's data (default {TARGET_ROWS:,})")
    args = parser.parse_args()
    block_counts = (100, 400, 1000) if args.quick else (100, 250, 500, 1000, 2000)
    iterations = 5 if args.quick else 8
    rows = args.rows or (20_000 if args.quick else TARGET_ROWS)

    print_targets(issue_targets(iterations + 4, rows), iterations + 4, rows)
    print()

    print("Part 1. The scheduler's cost: LocalCluster, 2 workers x 1 thread, blocks of 20 x 100 held in "
          f"the workers' memory; Q-alpha's iteration (median of {iterations - 2}) and X.sum() (median of 5)")
    scheduler = scheduler_costs(block_counts, iterations)
    print("| row blocks | Q-alpha iteration | per block | X.sum() | per block |\n|---|---|---|---|---|")
    for row in scheduler:
        print(f"| {row['blocks']:,} | {row['iteration'] * 1e3:.0f} ms | {row['iteration'] / row['blocks'] * 1e3:.2f} ms "
              f"| {row['plain_pass'] * 1e3:.0f} ms | {row['plain_pass'] / row['blocks'] * 1e3:.2f} ms |")
    slope, intercept = line_through([r["blocks"] for r in scheduler], [r["iteration"] for r in scheduler])
    plain_slope, plain_intercept = line_through([r["blocks"] for r in scheduler], [r["plain_pass"] for r in scheduler])
    per_block = statistics.median(r["iteration"] / r["blocks"] for r in scheduler)
    print(f"Least squares: an iteration {slope * 1e3:.2f} ms per block {intercept * 1e3:+.0f} ms, a plain pass "
          f"{plain_slope * 1e3:.2f} ms per block {plain_intercept * 1e3:+.0f} ms. The model takes the median cost per "
          f"block of an iteration, {per_block * 1e3:.2f} ms, and no fixed cost (the line's is within its noise). "
          "The scheduler, the client and the two workers share this machine's 2 cores: a scheduler on a core "
          "of its own costs less.")

    n_blocks = 4 if args.quick else 8
    block = block_costs(n_blocks, iterations)
    print(f"\nPart 2. A block of {BLOCK_ROWS:,} x {BLOCK_COLUMNS:,} float32 ({block['dense'] / 1e6:.0f} MB; "
          f"{block['stored'] / 1e6:.0f} MB in Zarr with Zstandard), one thread, {n_blocks} blocks")
    print("| quantity | per block |\n|---|---|")
    print(f"| Q-alpha's products, in memory | {block['compute'] * 1e3:.0f} ms |")
    print(f"| reading it from Zarr (page cache: decompression and copy) | {block['read'] * 1e3:.0f} ms |")

    from core.matrix.cluster import HELD_BLOCK_BYTES, HELD_BLOCKS_PER_THREAD, held_block_count

    blocks = math.ceil(MODEL_CELLS / BLOCK_ROWS)
    total_bytes = blocks * block["stored"]
    print(f"\nPart 3. The model: {MODEL_CELLS:,} x {MODEL_GENES:,} float32 ({MODEL_CELLS * MODEL_GENES * 4 / 1e9:.0f} GB, "
          f"{total_bytes / 1e9:.0f} GB stored), {blocks:,} row blocks, workers of {CORES_PER_WORKER} cores; "
          "seconds per iteration")
    scheduler_share = blocks * per_block
    header = "| workers | compute, held in memory | compute + read | " + " | ".join(
        f"storage at {b / 1e9:g} GB/s" for b in STORAGE_BANDWIDTHS) + " | scheduler | from storage at " + \
        " / ".join(f"{b / 1e9:g}" for b in STORAGE_BANDWIDTHS) + " GB/s: iteration, paced by | held: iteration, paced by |"
    print(header + "\n|" + "---|" * (header.count("|") - 1))
    for workers in WORKERS:
        cores = workers * CORES_PER_WORKER
        held = blocks * block["compute"] / cores
        reading = blocks * (block["compute"] + block["read"]) / cores
        storage = [total_bytes / bandwidth for bandwidth in STORAGE_BANDWIDTHS]
        from_storage = []
        for seconds in storage:
            shares = {"workers": reading, "storage": seconds, "scheduler": scheduler_share}
            pace = max(shares, key=shares.get)
            from_storage.append(f"{shares[pace]:.1f} ({pace})")
        held_blocks = held_block_count(MODEL_CELLS * MODEL_GENES * 4, MODEL_CELLS, cores)
        held_shares = {"workers": held, "scheduler": held_blocks * per_block}
        held_pace = max(held_shares, key=held_shares.get)
        print(f"| {workers} | {held:.2f} | {reading:.2f} | " + " | ".join(f"{s:.1f}" for s in storage)
              + f" | {scheduler_share:.2f} | " + " / ".join(from_storage)
              + f" | {held_shares[held_pace]:.2f} ({held_pace}; {held_blocks:,} blocks) |")
    print(f"Held, the data are cut into {HELD_BLOCKS_PER_THREAD} row blocks per worker thread of at most "
          f"{HELD_BLOCK_BYTES >> 20} MB (core.matrix.cluster.held_row_blocks): the scheduler's share is theirs. "
          f"Held in memory the data need {MODEL_CELLS * MODEL_GENES * 4 / 1e9 / WORKERS[0]:.0f} GB per worker on "
          f"{WORKERS[0]} workers (float32; the iteration casts a block at a time).")


if __name__ == "__main__":
    run_recorded(main, "bench_cluster", __doc__)
