"""Automatic k and λ for Q-alpha-SI against the baselines at their best, by the protocol of
``docs/protocol_automatic_settings.md`` (issue 35).

    python -m benchmarks.bench_auto_settings --sets tuning     # the sets the rule was designed on
    python -m benchmarks.bench_auto_settings --sets judging    # the twelve judging sets and AR

Each class in turn (at most the first 10) is the side data and the other classes the main data
(``experiments.tables._protocol_turns``; on 2 classes a random half of one class); k-means with as
many clusters as main classes, 10 runs. Per set and method: the mean over turns of the mean Xing
pairwise accuracy over runs (primary) and Hungarian accuracy, the sd over turns. Methods whose
settings are chosen with the labels ("at their best") take the setting with the best set-level
pairwise accuracy. Prints the table, the wins and losses of the automatic rule with sign tests,
and the rule's choice per turn; ``--out`` writes every per-turn row as CSV.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path


import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from benchmarks.results import run_recorded  # noqa: E402

TUNING = ["wine", "iris", "breast_cancer", "digits", "weston_linear", "ben_dor"]
JUDGING = ["GLIOMA", "lymphoma", "TOX-171", "nci9", "lung_small", "colon", "ALLAML", "Prostate-GE",
           "Yale", "warpPIE10P", "COIL20", "orlraws10P"]
BESIDE = ["warpAR10P"]
MAX_TURNS = 10
RUNS = 10
PERCENTS = (1, 5, 10, 20, 50)
SDR_FEATURE_LIMIT = 1000
TIE = 0.005
AUTO = "Q-alpha-SI, automatic"
ALWAYS = "Q-alpha-SI, automatic, always weighted"
BASELINES = ["raw data (z-scores)", "raw data (as given)", "Q-alpha-SI, best fixed rule", "PCA", "CPCA", "OPCA",
             "SDR-SI", "Laplacian score", "variance"]


def load(name: str):
    from core.data import generators
    from core.data.bundled import load_dataset

    if name == "weston_linear":
        return generators.weston_linear(200, random_state=0)
    if name == "ben_dor":
        return generators.ben_dor(random_state=0)
    return load_dataset(name)


def judge_set(name: str, runs: int = RUNS, random_state: int = 0, sdr: bool = True) -> tuple[list[dict], list[dict]]:
    """Per-turn rows ``(set, side_class, method, setting, xing, hungarian)`` and the rule's choices
    (``sdr=False`` leaves SDR-SI out: on digits' 1,600 main samples one fit takes minutes)."""
    from threadpoolctl import threadpool_limits

    from core.selection.automatic import choose_settings, shrunk_scaling
    from core.selection.projections import make_projection
    from core.selection.scorers import score_features
    from experiments.tables import (DIMS_GRID, OPCA_FEATURE_LIMIT, PROJECTION_KEYS, SDR_GAMMA, _alpha_features,
                                    _protocol_turns)

    data = load(name)
    rows, choices = [], []
    with threadpool_limits(1):
        for turn in _protocol_turns(data, random_state)[:MAX_TURNS]:
            started = time.perf_counter()
            main, side, c = turn.main, turn.side, turn.n_clusters
            Z, side_z = turn.inputs(True)

            def score(method, setting, features):
                found = turn.scores(features, runs)
                rows.append(dict(set=name, side_class=turn.side_class, method=method, setting=setting,
                                 xing=float(np.mean([r["xing"] for r in found])),
                                 hungarian=float(np.mean([r["hungarian"] for r in found]))))

            score("raw data (z-scores)", "", Z)
            score("raw data (as given)", "", main)
            auto = choose_settings(main, side=side, n_clusters=c, random_state=random_state, solver="power")
            chosen = auto.alphas[(auto.k, auto.lam)]
            score(AUTO, f"k={auto.k} λ={auto.lam:g} {auto.weighting}", auto.kmeans_features(main, chosen))
            score(ALWAYS, f"k={auto.k} λ={auto.lam:g}", Z * shrunk_scaling(chosen))
            choices.append(dict(set=name, side_class=turn.side_class, k=auto.k, lam=auto.lam, weighting=auto.weighting,
                                **{f"stability {cand.label}": round(cand.stability, 4) for cand in auto.candidates}))
            for (k, lam), alpha in auto.alphas.items():
                # the protocol's grid names k as c and 2c; k = 2c is capped below the samples
                for weighting, shown in (("sqrt_alpha", "sqrt(alpha)"), ("alpha", "alpha")):
                    score("Q-alpha-SI, best fixed rule", f"k={k} λ={lam:g} {shown}",
                          _alpha_features(main, alpha, weighting, weight_zscores=True))
            methods = ["PCA", "CPCA"] + (["OPCA"] if data.n_features <= OPCA_FEATURE_LIMIT else [])
            dims_grid = [d for d in DIMS_GRID if d <= data.n_features]
            for method in methods:
                for standardised, (fit_main, fit_side) in (("z-scores", (Z, side_z)), ("as given", (main, side))):
                    model = make_projection(PROJECTION_KEYS[method], max(dims_grid))
                    model.fit(fit_main, side=fit_side if model.needs_side else None)
                    projected = model.transform(fit_main)
                    for d in dims_grid:
                        if d <= projected.shape[1]:  # nested: the first d directions of the largest fit
                            score(method, f"{d} dims, {standardised}", projected[:, :d])
            if sdr and main.min() >= 0 and side.min() >= 0 and data.n_features <= SDR_FEATURE_LIMIT:
                for d in dims_grid:
                    if d < data.n_features:
                        model = make_projection("sdr_si", d, gamma=SDR_GAMMA).fit(main, side=side)
                        score("SDR-SI", f"{d} dims", model.transform(main))
            for method, key in (("Laplacian score", "laplacian"), ("variance", "variance")):
                order = score_features(key, main).ranking
                for percent in PERCENTS:
                    top = order[: max(1, int(round(percent * data.n_features / 100)))]
                    score(method, f"top {percent}%, z-scores", Z[:, top])
                    score(method, f"top {percent}%, as given", main[:, top])
            print(f"  {name} side {turn.side_class}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return rows, choices


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    """Per set and method: the setting with the best set-level pairwise accuracy (the only
    setting for the automatic rule and raw data), its mean and sd over turns."""
    rows = rows.fillna({"setting": ""})  # raw data have no setting (read back from CSV: NaN)
    by_setting = rows.groupby(["set", "method", "setting"], sort=False)
    means = by_setting.xing.mean().reset_index()
    out = []
    for (set_name, method), group in means.groupby(["set", "method"], sort=False):
        if method in (AUTO, ALWAYS):
            turns = rows[(rows.set == set_name) & (rows.method == method)]
            setting = "per turn"
        else:
            setting = group.loc[group.xing.idxmax(), "setting"]
            turns = rows[(rows.set == set_name) & (rows.method == method) & (rows.setting == setting)]
        out.append(dict(set=set_name, method=method, setting=setting, xing=turns.xing.mean(),
                        xing_sd=turns.xing.std(ddof=1) if len(turns) > 1 else 0.0, hungarian=turns.hungarian.mean()))
    return pd.DataFrame(out)


def decision(summary: pd.DataFrame) -> pd.DataFrame:
    """Wins, ties and losses of the automatic rule against each method over the sets, with a
    two-sided sign test on wins and losses."""
    from scipy.stats import binomtest

    wide = summary.pivot(index="set", columns="method", values="xing")
    out = []
    for method in [m for m in BASELINES + [ALWAYS] if m in wide.columns]:
        difference = (wide[AUTO] - wide[method]).dropna()
        wins, losses = int((difference > TIE).sum()), int((difference < -TIE).sum())
        p = binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
        out.append(dict(against=method, sets=len(difference), wins=wins, ties=len(difference) - wins - losses,
                        losses=losses, sign_test_p=p, worst=difference.min(), median=difference.median()))
    return pd.DataFrame(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="tuning", help="tuning, judging, or comma-separated names")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-sdr", action="store_true", help="leave SDR-SI out (slow on many samples)")
    parser.add_argument("--out", default=None, help="CSV of every per-turn row (and NAME_choices.csv)")
    parser.add_argument("--table", default=None, help="print the tables of a CSV written by --out, without running")
    args = parser.parse_args(argv)
    names = {"tuning": TUNING, "judging": JUDGING + BESIDE}.get(args.sets) or args.sets.split(",")
    started = time.perf_counter()
    if args.table:
        rows = pd.read_csv(args.table)
        choices = pd.read_csv(Path(args.table).with_name(Path(args.table).stem + "_choices.csv"))
        names = [name for name in names if name in set(rows.set)]
    else:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            outcomes = list(pool.map(partial(judge_set, sdr=not args.no_sdr), names))
        rows = pd.DataFrame([row for found, _ in outcomes for row in found])
        choices = pd.DataFrame([choice for _, found in outcomes for choice in found])
    if args.out:
        rows.to_csv(args.out, index=False)
        choices.to_csv(Path(args.out).with_name(Path(args.out).stem + "_choices.csv"), index=False)
    summary = summarise(rows)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 30)
    pd.set_option("display.max_rows", 400)
    wide = summary.pivot(index="set", columns="method", values="xing").reindex(names)
    wide = wide[[m for m in [AUTO, ALWAYS] + BASELINES if m in wide.columns]]
    print("Xing pairwise accuracy, mean over turns (k-means, 10 runs per turn):")
    print(wide.round(3).to_string())
    print("\nHungarian accuracy:")
    print(summary.pivot(index="set", columns="method", values="hungarian").reindex(names)[wide.columns].round(3).to_string())
    print("\nsd over turns of the pairwise accuracy:")
    print(summary.pivot(index="set", columns="method", values="xing_sd").reindex(names)[wide.columns].round(3).to_string())
    print("\nSettings chosen with the labels (the baselines at their best):")
    print(summary[~summary.method.isin([AUTO, ALWAYS])].pivot(index="set", columns="method", values="setting")
          .reindex(names).to_string())
    counted = summary[~summary.set.isin(BESIDE)]
    print(f"\nAutomatic rule against each method (win/loss beyond {TIE}), over {counted.set.nunique()} sets:")
    print(decision(counted).round(4).to_string(index=False))
    raw = wide[AUTO] - wide["raw data (z-scores)"]
    counted_raw = raw.drop([s for s in BESIDE if s in raw.index])
    print(f"\nAgainst standardised raw data: at or above on {int((counted_raw >= -TIE).sum())} of {counted_raw.size}; "
          f"largest shortfall {-counted_raw.min():.3f}")
    print("\nThe rule's choices (turns per setting):")
    print(choices.groupby("set", sort=False)[["k", "lam", "weighting"]].value_counts().to_string())
    print(f"\n{time.perf_counter() - started:.0f} s with {args.workers} workers")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    run_recorded(main, "bench_auto_settings", __doc__)
