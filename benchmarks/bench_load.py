"""Time to load every bundled data set, cold (target: under 2 s in total).

    python benchmarks/bench_load.py

Reference: reading the same ``.npz`` files with ``np.load`` alone, measured in the same run, so
the table shows what our wrapper (validation, scaling to [0, 1], names) adds.
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import bundled  # noqa: E402


def main(repeats: int = 3):
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


if __name__ == "__main__":
    main()
