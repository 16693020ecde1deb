"""Loading data: the bundled sets, and users' tables against pandas on the same bytes.

    python -m benchmarks.bench_load            # everything
    python -m benchmarks.bench_load tables     # users' tables only

Bundled: every bundled set, cold, against reading the same ``.npz`` with ``np.load`` alone
(target: all of them under 2 s).

Tables (each figure against a reference measured in the same run):
- ``load_table`` on a 100 x 20,000 gene-expression CSV against ``pandas.read_csv`` on the same
  bytes (target: within 1.5x), and the same table written genes x samples (must give the same
  matrix);
- a 2 x 200,000 CSV (target: under 5 s; pandas' own time beside it);
- a 300 x 50,000 CSV (about 150 MB): peak memory of ``load_table`` in a fresh process, above
  the process's size with the file's bytes already read (target: at most 3x the float64 matrix);
- the same 100 x 20,000 table gzip-compressed and as Parquet.
"""

import gzip
import io
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

from core.data import bundled  # noqa: E402
from benchmarks.timing import best_of  # noqa: E402
from benchmarks.results import run_recorded  # noqa: E402


def bundled_table(repeats: int = 3):
    infos = bundled.list_datasets()
    rows = []
    for info in infos:
        ours, raw = [], []
        for _ in range(repeats):
            bundled.load_dataset.cache_clear()
            start = time.perf_counter()
            bundled.load_dataset(info.name)
            ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            with np.load(bundled.ASSETS / f"{info.name}.npz") as stored:
                stored["X"], stored["y"]
            raw.append(time.perf_counter() - start)
        rows.append((info.name, info.n_samples, info.n_features, min(ours), min(raw)))
    print(f"{'data set':>12} {'samples':>8} {'features':>9} {'load s':>8} {'np.load s':>10} {'ratio':>6}")
    for name, n, d, ours, raw in rows:
        print(f"{name:>12} {n:>8} {d:>9} {ours:>8.4f} {raw:>10.4f} {ours / raw:>6.1f}")
    total, total_raw = sum(r[3] for r in rows), sum(r[4] for r in rows)
    print(f"{'total':>12} {'':>8} {'':>9} {total:>8.3f} {total_raw:>10.3f} {total / total_raw:>6.1f}")
    print(f"target: total under 2 s -> {'met' if total < 2 else 'NOT met'}")


def expression_csv(n_samples: int, n_genes: int, *, genes_as_rows: bool = False, seed: int = 0) -> bytes:
    """A gene-expression table as a user would bring it: IDs first, names in the header."""
    rng = np.random.default_rng(seed)
    values = np.round(rng.lognormal(2.0, 1.0, size=(n_samples, n_genes)), 4)
    genes = [f"ENSG{100000 + j:011d}" for j in range(n_genes)]
    samples = [f"patient_{i:04d}" for i in range(n_samples)]
    buffer = io.StringIO()
    if genes_as_rows:
        buffer.write("gene_id," + ",".join(samples) + "\n")
        for j, gene in enumerate(genes):
            buffer.write(gene + "," + ",".join(f"{v:g}" for v in values[:, j]) + "\n")
    else:
        buffer.write("sample," + ",".join(genes) + "\n")
        for i, sample in enumerate(samples):
            buffer.write(sample + "," + ",".join(f"{v:g}" for v in values[i]) + "\n")
    return buffer.getvalue().encode()


def _high_water_mark() -> int:
    """Peak resident bytes of this process (VmHWM: reset at exec, unlike ru_maxrss, which a
    child inherits from the parent that started it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _peak_child(path: str) -> None:
    """Run in a fresh process: the peak resident size that load_table adds to the file's bytes."""
    from core.data.loaders import load_table

    data = Path(path).read_bytes()
    before = _high_water_mark()
    start = time.perf_counter()
    dataset = load_table("big.csv", data)
    seconds = time.perf_counter() - start
    peak = _high_water_mark()
    print(json.dumps(dict(bytes=len(data), matrix=dataset.X.nbytes, added=peak - before, seconds=seconds)))


def tables(repeats: int = 3):
    import pandas as pd

    from core.data.loaders import load_table

    print(f"\n{'table':<34} {'MB':>6} {'load_table s':>13} {'reference s':>12} {'ratio':>6}  note")
    wide = expression_csv(100, 20_000)
    ours = best_of(lambda: load_table("expr.csv", wide), repeats)
    reference = best_of(lambda: pd.read_csv(io.BytesIO(wide)), repeats)
    print(f"{'100 x 20,000 CSV':<34} {len(wide) / 2**20:>6.1f} {ours:>13.2f} {reference:>12.2f} "
          f"{ours / reference:>6.2f}  line reader (>= 10,000 columns) vs pandas.read_csv; target <= 1.5 -> "
          f"{'met' if ours <= 1.5 * reference else 'NOT met'}")

    transposed = expression_csv(100, 20_000, genes_as_rows=True)
    as_rows = load_table("expr.csv", wide)
    as_columns = load_table("expr_t.csv", transposed)
    seconds = best_of(lambda: load_table("expr_t.csv", transposed), repeats)
    reference = best_of(lambda: pd.read_csv(io.BytesIO(transposed)), repeats)
    same = (np.array_equal(as_rows.X, as_columns.X) and as_rows.feature_names == as_columns.feature_names
            and as_rows.sample_names == as_columns.sample_names)
    print(f"{'20,000 x 100 CSV (genes as rows)':<34} {len(transposed) / 2**20:>6.1f} {seconds:>13.2f} {reference:>12.2f} "
          f"{seconds / reference:>6.2f}  pandas' reader; orientation {as_columns.meta['table']['orientation']}; "
          f"same matrix and names as samples x genes: {same}")

    packed = gzip.compress(wide, compresslevel=6)
    ours = best_of(lambda: load_table("expr.csv.gz", packed), repeats)
    reference = best_of(lambda: pd.read_csv(io.BytesIO(packed), compression="gzip"), repeats)
    print(f"{'100 x 20,000 CSV.gz':<34} {len(packed) / 2**20:>6.1f} {ours:>13.2f} {reference:>12.2f} "
          f"{ours / reference:>6.2f}  vs pandas.read_csv(compression='gzip')")

    buffer = io.BytesIO()
    pd.read_csv(io.BytesIO(wide)).to_parquet(buffer)
    parquet = buffer.getvalue()
    ours = best_of(lambda: load_table("expr.parquet", parquet), repeats)
    reference = best_of(lambda: pd.read_parquet(io.BytesIO(parquet)), repeats)
    print(f"{'100 x 20,000 Parquet':<34} {len(parquet) / 2**20:>6.1f} {ours:>13.2f} {reference:>12.2f} "
          f"{ours / reference:>6.2f}  vs pandas.read_parquet")

    short = expression_csv(2, 200_000)
    ours = best_of(lambda: load_table("short.csv", short), 1)
    reference = best_of(lambda: pd.read_csv(io.BytesIO(short)), 1)
    print(f"{'2 x 200,000 CSV':<34} {len(short) / 2**20:>6.1f} {ours:>13.2f} {reference:>12.2f} "
          f"{ours / reference:>6.2f}  target under 5 s -> {'met' if ours < 5 else 'NOT met'}")

    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.csv"
        path.write_bytes(expression_csv(300, 50_000))
        start = time.perf_counter()
        pd.read_csv(path)
        reference = time.perf_counter() - start
        output = subprocess.run([sys.executable, "-m", "benchmarks.bench_load", "_peak", str(path)], capture_output=True, text=True,
                                check=True, cwd=ROOT).stdout
    peak = json.loads(output.strip().splitlines()[-1])
    ratio = peak["added"] / peak["matrix"]
    print(f"{'300 x 50,000 CSV':<34} {peak['bytes'] / 2**20:>6.1f} {peak['seconds']:>13.2f} {reference:>12.2f} "
          f"{peak['seconds'] / reference:>6.2f}  "
          f"peak added {peak['added'] / 2**20:,.0f} MB = {ratio:.2f}x the {peak['matrix'] / 2**20:,.0f} MB matrix; "
          f"target <= 3x -> {'met' if ratio <= 3 else 'NOT met'}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["_peak"]:
        _peak_child(sys.argv[2])
    elif sys.argv[1:2] == ["tables"]:
        run_recorded(tables, "bench_load", __doc__)
    else:
        run_recorded(lambda: (bundled_table(), tables()), "bench_load", __doc__)
