"""Run time of every baseline, and the baselines against the implementations of their peers.

    python -m benchmarks.bench_baselines                      # every baseline on AR faces and colon
    [PYTHONPATH=DIR] python -m benchmarks.bench_baselines --peers

The first table exists so that the app can warn before something slow: default options of each
baseline; the reference row is Q-alpha (unsupervised, matrix-free) on the same data in the
same run.

The second runs, in the same process and on the same data, the peer implementation of each
method where one is installed (``skrebate``, ``mrmr-selection``, scikit-learn; scikit-feature has
its own, ``benchmarks/bench_peers.py``), and prints the time ratio (peer / ours), Spearman's rho between
the two rankings' positions and the overlap of their top 50. The peers are not dependencies of
the project: install them anywhere (``pip install --target DIR ...``) and name that folder in ``PYTHONPATH``.
"""

import argparse
import time
import warnings

import numpy as np


from core.selection.projections import PROJECTIONS, make_projection
from core.selection.scorers import SCORERS, score_features  # noqa: E402
from core.data.bundled import load_dataset  # noqa: E402
from core.selection.qalpha import q_alpha  # noqa: E402
from benchmarks.results import run_recorded  # noqa: E402


def run_times():
    sets = {name: load_dataset(name) for name in ("warpAR10P", "colon")}
    print(f"{'baseline':<44} {'kind':<12} " + " ".join(f"{n + ' s':>13}" for n in sets))
    row = []
    for name, data in sets.items():
        t = time.perf_counter()
        q_alpha(data.X, min(data.classes.size, 10))
        row.append(time.perf_counter() - t)
    print(f"{'Q-alpha (reference)':<44} {'':<12} " + " ".join(f"{s:>13.2f}" for s in row))
    for method, (info, _) in SCORERS.items():
        # a scorer of counts (the dispersion) has no time on colon's discretised values (-2 to 2)
        row = [f"{score_features(method, data.X, data.labels).seconds:>13.2f}"
               if not info.models_counts or data.X.min() >= 0 else f"{'-':>13}" for data in sets.values()]
        print(f"{info.name:<44} {info.family:<12} " + " ".join(row))
    for method, cls in PROJECTIONS.items():
        row = []
        for data in sets.values():
            if cls.models_counts and data.X.min() < 0:  # SDR-SI models counts: no time on colon's -2 to 2
                row.append(f"{'-':>13}")
                continue
            main_part, side_part = data.split_by_class([data.classes[-1]])
            t = time.perf_counter()
            make_projection(method, 10).fit(main_part.X, side=side_part.X)
            row.append(f"{time.perf_counter() - t:>13.2f}")
        print(f"{cls.info.name:<44} {'combination':<12} " + " ".join(row))


def positions(order):
    """Rank position of each feature from a best-first order."""
    order = np.asarray(order, dtype=np.int64)
    place = np.empty(order.size, dtype=np.int64)
    place[order] = np.arange(order.size)
    return place


def best_first(scores):
    scores = np.nan_to_num(np.asarray(scores, dtype=np.float64), nan=-np.inf)
    return np.argsort(-scores, kind="stable")


def peer_pairs(k):
    """(our method, our options, peer name, peer function returning a best-first order) for each
    peer that imports."""
    pairs = []
    from sklearn.feature_selection import f_classif, mutual_info_classif
    pairs += [("fisher", {}, "scikit-learn f_classif", lambda X, y: best_first(f_classif(X, y)[0])),
              ("mutual_information", {}, "scikit-learn mutual_info_classif",
               lambda X, y: best_first(mutual_info_classif(X, y, random_state=0)))]
    try:
        from skrebate import MultiSURF, ReliefF, SURF

        pairs += [(ours, {}, f"skrebate {peer.__name__}", lambda X, y, peer=peer, options=options:
                   best_first(peer(**options).fit(X, y).feature_importances_))
                  for ours, peer, options in (("relieff", ReliefF, {"n_neighbors": 10}), ("surf", SURF, {}),
                                              ("multisurf", MultiSURF, {}))]
    except ImportError:
        print("(skrebate is not installed)")
    try:
        import pandas as pd
        from mrmr import mrmr_classif

        pairs.append(("mrmr", {"n_features_to_select": 50}, "mrmr-selection mrmr_classif (F-test / correlation)",
                      lambda X, y: np.asarray(mrmr_classif(pd.DataFrame(X), pd.Series(y), K=50, show_progress=False))))
    except ImportError:
        print("(mrmr-selection is not installed)")
    return pairs


def against_peers(dataset):
    from scipy.stats import spearmanr

    data = load_dataset(dataset)
    k = int(data.classes.size)
    print(f"\n{dataset}: {data.n_samples} samples x {data.n_features} features, {k} classes")
    print(f"{'ours':<20} {'peer':<52} {'features':>8} {'ours s':>8} {'peer s':>8} {'peer/ours':>9} "
          f"{'rho':>6} {'top-50':>6}")
    for method, options, peer_name, peer in peer_pairs(k):
        X = data.X
        ours = score_features(method, X, data.labels, **options)
        start = time.perf_counter()
        # copies: scikit-feature's construct_W normalises the rows of X in place
        order = np.asarray(peer(X.copy(), data.labels.copy()))
        peer_seconds = time.perf_counter() - start
        overlap = len(set(ours.ranking[:50]) & set(order[:50].tolist()))
        rho = (spearmanr(positions(ours.ranking), positions(order)).statistic if order.size == X.shape[1]
               else float("nan"))
        print(f"{method:<20} {peer_name:<52} {X.shape[1]:>8} {ours.seconds:>8.2f} {peer_seconds:>8.2f} "
              f"{peer_seconds / ours.seconds:>9.1f} {rho:>6.2f} {overlap:>6}")


def seed_stability(datasets):
    """Spearman's rho between the mutual-information scores of two seeds, ours and scikit-learn's
    continuous estimator (what the baseline called before it treated discrete features exactly)."""
    from scipy.stats import spearmanr
    from sklearn.feature_selection import mutual_info_classif

    print(f"\n{'mutual information, seed 0 vs 1':<34} {'ours rho':>9} {'scikit-learn continuous rho':>28}")
    for name in datasets:
        data = load_dataset(name)
        ours = [score_features("mutual_information", data.X, data.labels, random_state=s).scores for s in (0, 1)]
        theirs = [mutual_info_classif(data.X, data.labels, random_state=s) for s in (0, 1)]
        print(f"{name:<34} {spearmanr(*ours).statistic:>9.3f} {spearmanr(*theirs).statistic:>28.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peers", action="store_true", help="compare with the peer implementations")
    parser.add_argument("--datasets", nargs="+", default=["colon", "warpAR10P"])
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if not args.peers:
        run_times()
        return
    for name in args.datasets:
        against_peers(name)
    seed_stability(["colon", "lymphoma"])


if __name__ == "__main__":
    run_recorded(main, "bench_baselines", __doc__)
