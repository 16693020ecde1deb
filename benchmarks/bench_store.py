"""The server's store of data sets against reading the upload again: restore time and disk used.

    python -m benchmarks.bench_store [--mb 100]

A table of about ``--mb`` MB of values (float64, 1,000 samples with a label column) is written as
the CSV a user would upload, then loaded as the app loads an upload (``core.load_table`` on the
file's bytes: pandas' C reader and the library's checks), kept in a ``ContentStore`` (its first
``put``), and restored from it (``get``: the ``.npz`` read and checked against its key). Reported,
best of ``--repeats`` each: seconds to parse the CSV, to keep the set, to restore it; the ratio
parse / restore (the store must be faster than the file); and the bytes on disk per data set
against its size in memory (the matrix, labels and names) and against the CSV's size. The same for
the bundled AR faces (an image set) and a 2,000-gene table (colon).
"""

import argparse
import io
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.results import run_recorded


def _best(function, repeats):
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return min(times), value


def _memory(data) -> int:
    names = sum(len(name.encode()) for name in data.feature_names) + sum(len(n.encode()) for n in data.sample_names)
    return data.X.nbytes + (0 if data.labels is None else np.asarray(data.labels).nbytes) + names


def case(label, data, csv_bytes, store, repeats):
    from core import load_table

    parse = _best(lambda: load_table("upload.csv", csv_bytes, label_column="label"), repeats)[0] if csv_bytes else None
    keep, key = _best(lambda: store.put(data), 1)  # the first put writes; later ones find the entry
    restore, back = _best(lambda: store.get(key), repeats)
    assert back.fingerprint == data.fingerprint
    disk = (store.folder / f"{key}.npz").stat().st_size
    memory = _memory(data)
    parse_text = f"{parse:>9.2f}" if parse is not None else f"{'-':>9}"
    ratio = f"{parse / restore:>8.1f}x" if parse is not None else f"{'-':>9}"
    csv_size = f"{len(csv_bytes) / 1e6:>8.1f}" if csv_bytes else f"{'-':>8}"
    print(f"{label:<32} {data.n_samples:>6} x {data.n_features:<7,} {csv_size} {parse_text} {keep:>8.2f} "
          f"{restore:>9.3f} {ratio} {disk / 1e6:>9.1f} {memory / 1e6:>10.1f} {disk / memory:>10.2f}", flush=True)


def main():
    import pandas as pd

    from core import Dataset, load_dataset
    from core.data.content_store import ContentStore

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0, help="MB of float64 values in the large table")
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    n_samples = 1000
    n_features = max(2, int(options.mb * 1e6 / 8 / n_samples))
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(n_samples, n_features)), columns=[f"g{j}" for j in range(n_features)])
    frame.insert(0, "label", np.repeat(["a", "b"], n_samples // 2))
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    large_csv = buffer.getvalue().encode()
    print(f"{'data set':<32} {'samples x features':>17} {'CSV MB':>8} {'parse s':>9} {'keep s':>8} {'restore s':>9} "
          f"{'parse/restore':>9} {'disk MB':>9} {'memory MB':>10} {'disk/memory':>10}")
    with tempfile.TemporaryDirectory() as folder:
        store = ContentStore(Path(folder) / "store", quota=10**11)
        from core import load_table

        table = load_table("upload.csv", large_csv, label_column="label")
        case(f"{options.mb:g} MB table (uploaded CSV)", table, large_csv, store, options.repeats)
        colon = load_dataset("colon")
        colon_frame = pd.DataFrame(colon.X, columns=colon.feature_names)
        colon_frame.insert(0, "label", colon.labels)
        colon_csv = colon_frame.to_csv(index=False).encode()
        colon_table = load_table("upload.csv", colon_csv, label_column="label")
        case("colon, 2,000 genes (as a CSV)", colon_table, colon_csv, store, options.repeats)
        faces = load_dataset("warpAR10P")
        images = Dataset(faces.X, labels=faces.labels, image_shape=faces.image_shape, name="faces.zip", kind="images")
        case("AR faces (an image set)", images, None, store, options.repeats)
    print("\nparse: core.load_table on the CSV's bytes, as the app reads an upload; keep: the first put (writes "
          "the .npz); restore: get, the file read and checked against its SHA-256. disk/memory: the entry's bytes "
          "over the data set's matrix, labels and names in memory.")


if __name__ == "__main__":
    run_recorded(main, "bench_store", __doc__)
