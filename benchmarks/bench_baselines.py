"""Run time of every baseline on the AR faces (2,400 pixels) and on a gene set (colon, 2,000 genes).

    python benchmarks/bench_baselines.py

So that the app can warn before something slow. Default options of each baseline; the
reference row is Q-alpha (unsupervised, matrix-free) on the same data in the same run.
"""

import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.baselines import PROJECTIONS, SCORERS, make_projection, score_features  # noqa: E402
from core.bundled import load_dataset  # noqa: E402
from core.qalpha import q_alpha  # noqa: E402


def main():
    warnings.simplefilter("ignore")
    sets = {name: load_dataset(name) for name in ("warpAR10P", "colon")}
    print(f"{'baseline':<34} {'kind':<12} " + " ".join(f"{n + ' s':>13}" for n in sets))
    start = {}
    row = []
    for name, data in sets.items():
        t = time.perf_counter()
        q_alpha(data.X, min(data.classes.size, 10))
        row.append(time.perf_counter() - t)
    print(f"{'Q-alpha (reference)':<34} {'':<12} " + " ".join(f"{s:>13.2f}" for s in row))
    for method, (info, _) in SCORERS.items():
        row = [score_features(method, data.X, data.labels).seconds for data in sets.values()]
        print(f"{info.name:<34} {info.family:<12} " + " ".join(f"{s:>13.2f}" for s in row))
    for method, cls in PROJECTIONS.items():
        row = []
        for data in sets.values():
            main_part, side_part = data.split_by_class([data.classes[-1]])
            t = time.perf_counter()
            make_projection(method, 10).fit(main_part.X, side=side_part.X)
            row.append(time.perf_counter() - t)
        print(f"{cls.info.name:<34} {'combination':<12} " + " ".join(f"{s:>13.2f}" for s in row))


if __name__ == "__main__":
    main()
