"""Q-alpha beyond dense memory: a sparse matrix in memory and a Zarr array on disk read by Dask.

Run ``python -m benchmarks.bench_scale`` (about 15-25 minutes on 2 cores, 14 GB of disk for the
Zarr store, which is kept in ``--data-dir`` and reused; ``--quick`` for a small run). Each part
runs in its own process so that its peak memory is its own.

Part 1, sparse in memory: cells x genes at 3 % density (CSR, float64), 5 planted cell groups
whose 20 marker genes each are expressed in 60 % of the group's cells with higher counts.
Reference: the plain sparse products ``X.T @ (X @ V)`` with a random ``V`` of k = 5 columns, best
of 3. Q-alpha (k = 5, power solver, one pass per iteration) is timed per iteration from its
progress callback; its extra memory is the peak of tracemalloc (which sees NumPy's and SciPy's
arrays) during the call. (The resident size is no measure here: the allocator reuses the memory
that generating the data freed, so it does not grow.)

Part 2, out of core: a float32 Zarr array of cells x genes on disk (chunks 1,024 x 4,096,
Zstandard), 5 planted groups with 20 marker genes each shifted by 1.5 over N(0, 1) noise. Reference:
one Dask pass reading the whole array, ``X.sum()``, in the same process. Q-alpha runs 20
iterations from a random start (the uniform start costs up to 30 further passes beyond 4,096
samples); per-iteration times and the process's peak resident memory (``ru_maxrss``) are reported.

Marker recovery in both parts: the share of the 100 planted marker genes among the 100 largest
weights.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from benchmarks.results import run_recorded

ROOT = Path(__file__).resolve().parents[1]

N_GROUPS = 5
MARKERS_PER_GROUP = 20
K = 5


def markers():
    return np.arange(N_GROUPS * MARKERS_PER_GROUP).reshape(N_GROUPS, MARKERS_PER_GROUP) * 7 + 3


def sparse_cells(n_cells, n_genes, density, rng, block=4000):
    """CSR counts: background entries by geometric gaps (distinct, sorted), plus marker entries."""
    from scipy import sparse

    groups = rng.integers(0, N_GROUPS, n_cells)
    marker_genes = markers()
    parts = []
    per_row = int(density * n_genes + 8 * np.sqrt(density * n_genes) + 16)
    for start in range(0, n_cells, block):
        rows = min(block, n_cells - start)
        gaps = rng.geometric(density, size=(rows, per_row))
        columns = np.cumsum(gaps, axis=1) - 1
        keep = columns < n_genes
        row_index = np.repeat(np.arange(rows), keep.sum(axis=1))
        cols = columns[keep]
        values = rng.poisson(2.0, cols.size) + 1.0
        # markers of each cell's group: expressed in 60 % of the cells, with higher counts
        chosen = marker_genes[groups[start:start + rows]]
        expressed = rng.random(chosen.shape) < 0.6
        marker_rows = np.repeat(np.arange(rows), expressed.sum(axis=1))
        marker_cols = chosen[expressed]
        marker_values = rng.poisson(6.0, marker_cols.size) + 1.0
        chunk = sparse.csr_matrix((np.r_[values, marker_values], (np.r_[row_index, marker_rows],
                                                                   np.r_[cols, marker_cols])), shape=(rows, n_genes))
        chunk.sum_duplicates()
        parts.append(chunk)
    return sparse.vstack(parts, format="csr"), groups


def recovered(alpha):
    top = np.argsort(-alpha)[:N_GROUPS * MARKERS_PER_GROUP]
    return len(set(top.tolist()) & set(markers().ravel().tolist())) / (N_GROUPS * MARKERS_PER_GROUP)


def part_sparse(n_cells, n_genes, density, iterations):
    from core.selection.qalpha import q_alpha

    rng = np.random.default_rng(0)
    start = time.perf_counter()
    X, _ = sparse_cells(n_cells, n_genes, density, rng)
    made = time.perf_counter() - start
    csr_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    V = rng.standard_normal((n_genes, K))
    reference = []
    for _ in range(3):
        start = time.perf_counter()
        X.T @ (X @ V)
        reference.append(time.perf_counter() - start)
    stamps = []

    def progress(report):
        stamps.append(time.perf_counter())

    tracemalloc.start()
    tracemalloc.reset_peak()
    start = time.perf_counter()
    result = q_alpha(X, K, solver="power", init="random", random_state=0, max_iter=iterations, progress=progress)
    total = time.perf_counter() - start
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    per_iteration = np.diff(stamps)
    return dict(part="sparse", n_cells=n_cells, n_genes=n_genes, nnz=int(X.nnz), density=X.nnz / (n_cells * n_genes),
                csr_bytes=csr_bytes, generate_seconds=made, reference_seconds=min(reference),
                iteration_seconds=float(np.median(per_iteration)), first_iteration_seconds=stamps[0] - start,
                total_seconds=total, n_iter=result.n_iter, traced_extra_bytes=traced_peak, recovered=recovered(result.alpha),
                n_selected=int(result.n_selected), objective=result.objective)


def make_zarr(path, n_cells, n_genes, rows=1024, columns=4096):
    import zarr

    rng = np.random.default_rng(1)
    groups = rng.integers(0, N_GROUPS, n_cells)
    store = zarr.create_array(str(path), shape=(n_cells, n_genes), chunks=(rows, columns), dtype="float32",
                              overwrite=True)
    marker_genes = markers()
    for start in range(0, n_cells, rows):
        stop = min(n_cells, start + rows)
        block = rng.standard_normal((stop - start, n_genes), dtype=np.float32)
        for g in range(N_GROUPS):
            members = np.flatnonzero(groups[start:stop] == g)
            block[np.ix_(members, marker_genes[g])] += 1.5
        store[start:stop] = block
    return groups


def part_zarr(path, iterations):
    import dask
    import dask.array as da

    from core.matrix.kinds import as_chunked_array
    from core.selection.qalpha import q_alpha

    X = da.from_zarr(str(path))
    start = time.perf_counter()
    X.sum().compute()
    read_first = time.perf_counter() - start
    stamps = []

    def progress(report):
        stamps.append(time.perf_counter())
        print(f"  iteration {report.done}: {stamps[-1] - (stamps[-2] if len(stamps) > 1 else start_run):.1f} s",
              file=sys.stderr, flush=True)

    start_run = time.perf_counter()
    result = q_alpha(X, K, solver="power", init="random", random_state=0, max_iter=iterations, tol=1e-12,
                     progress=progress)
    total = time.perf_counter() - start_run
    start = time.perf_counter()
    X.sum().compute()
    read_again = time.perf_counter() - start
    per_iteration = np.diff(stamps)
    return dict(part="zarr", shape=list(X.shape), stored_bytes=int(sum(p.stat().st_size for p in Path(path).rglob("*")
                                                                       if p.is_file())),
                dense_bytes=int(X.nbytes), threads=int(dask.config.get("num_workers", None) or os.cpu_count()),
                pass_seconds=min(read_first, read_again), first_pass_seconds=read_first,
                iteration_seconds=float(np.median(per_iteration)), iteration_max=float(per_iteration.max()),
                setup_seconds=stamps[0] - start_run, total_seconds=total, n_iter=result.n_iter,
                peak_rss_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                recovered=recovered(result.alpha), n_blocks=len(as_chunked_array(X).blocks()))


def child(arguments):
    options = json.loads(arguments)
    if options["part"] == "sparse":
        record = part_sparse(options["n_cells"], options["n_genes"], options["density"], options["iterations"])
    else:
        record = part_zarr(options["path"], options["iterations"])
    print(json.dumps(record))


def run_child(options):
    done = subprocess.run([sys.executable, "-m", "benchmarks.bench_scale", "--child", json.dumps(options)],
                          capture_output=True, text=True,
                          cwd=ROOT)
    sys.stderr.write(done.stderr[-3000:])
    if done.returncode != 0:
        raise SystemExit(f"the {options['part']} part failed")
    return json.loads(done.stdout.strip().splitlines()[-1])


def gb(n_bytes):
    return f"{n_bytes / 2**30:.2f} GB"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20,000 x 5,000 sparse, 15,000 x 5,000 Zarr")
    parser.add_argument("--data-dir", default="/tmp/bench_scale", help="where the Zarr store is kept")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--part", choices=("sparse", "zarr", "both"), default="both")
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    cells_sparse, genes = (20_000, 5_000) if args.quick else (200_000, 20_000)
    cells_zarr = 15_000 if args.quick else 150_000
    if args.part in ("sparse", "both"):
        s = run_child(dict(part="sparse", n_cells=cells_sparse, n_genes=genes, density=0.03, iterations=12))
        print(f"\nTable 1. Sparse in memory: {s['n_cells']:,} cells x {s['n_genes']:,} genes, {s['nnz']:,} stored values "
              f"({100 * s['density']:.2f}%), CSR arrays {gb(s['csr_bytes'])}")
        print("| quantity | value |\n|---|---|")
        print(f"| X.T @ (X @ V), k = {K} (best of 3) | {s['reference_seconds']:.2f} s |")
        print(f"| one Q-alpha iteration (median of {s['n_iter'] - 1}) | {s['iteration_seconds']:.2f} s |")
        print(f"| ratio | {s['iteration_seconds'] / s['reference_seconds']:.2f} |")
        print(f"| moments + start + first iteration | {s['first_iteration_seconds']:.2f} s |")
        print(f"| extra memory, tracemalloc peak | {gb(s['traced_extra_bytes'])} "
              f"({s['traced_extra_bytes'] / s['csr_bytes']:.2f} x CSR) |")
        print(f"| peak with the data | {(s['csr_bytes'] + s['traced_extra_bytes']) / s['csr_bytes']:.2f} x CSR |")
        print(f"| marker genes in the top 100 after {s['n_iter']} iterations | {100 * s['recovered']:.0f}% |")
    if args.part in ("zarr", "both"):
        folder = Path(args.data_dir)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"cells_{cells_zarr}x{genes}.zarr"
        if not (path / "zarr.json").exists():
            print(f"writing {path} ...", file=sys.stderr, flush=True)
            start = time.perf_counter()
            make_zarr(path, cells_zarr, genes)
            print(f"  written in {time.perf_counter() - start:.0f} s", file=sys.stderr)
        z = run_child(dict(part="zarr", path=str(path), iterations=20))
        print(f"\nTable 2. Out of core: float32 Zarr {z['shape'][0]:,} x {z['shape'][1]:,} ({gb(z['dense_bytes'])} as "
              f"float32, {gb(z['stored_bytes'])} on disk), {z['n_blocks']} row blocks, {z['threads']} Dask threads")
        print("| quantity | value |\n|---|---|")
        print(f"| one Dask pass, X.sum() (best of 2) | {z['pass_seconds']:.1f} s |")
        print(f"| one Q-alpha iteration (median of {z['n_iter'] - 1}) | {z['iteration_seconds']:.1f} s "
              f"(slowest {z['iteration_max']:.1f} s) |")
        print(f"| ratio | {z['iteration_seconds'] / z['pass_seconds']:.2f} |")
        print(f"| moments + start + first iteration | {z['setup_seconds']:.1f} s |")
        print(f"| {z['n_iter']} iterations in all | {z['total_seconds']:.0f} s |")
        print(f"| peak resident memory of the process | {gb(z['peak_rss_bytes'])} |")
        print(f"| marker genes in the top 100 | {100 * z['recovered']:.0f}% |")
        print(f"| per row block per iteration | {z['iteration_seconds'] * z['threads'] / z['n_blocks']:.2f} s of a thread |")


if __name__ == "__main__":
    if "--child" in sys.argv:  # a part measured in a process of its own: it prints one JSON line
        main()
    else:
        run_recorded(main, "bench_scale", __doc__)
