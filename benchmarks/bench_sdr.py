"""SDR-SI (Globerson, Chechik & Tishby 2003): its inner maximum-entropy minimum solved by Newton's
method against L-BFGS (the solver before issue 35), in the same run on the same fits.

    python -m benchmarks.bench_sdr [--repeats 3]

Every fit is SDR-SI with 2 dimensions and gamma = 2 (the UCI protocol's setting), the library's
start and outer L-BFGS, ``inner="newton"`` against ``inner="lbfgs"``; the best of ``--repeats``
times. Tables with more rows than features, as the UCI protocol fits them (the main data and one
class as side data):

* count tables of 366 rows x 34 features in 3 classes, Poisson counts at three rates (2, 0.5,
  0.2 per cell on average: the sparser, the harder the maximum-entropy fit; most cells 0 at 0.2);
* a table whose 34 columns span six decades of scale (1e-3 to 1e3);
* wine, breast cancer and iris (scikit-learn's copies), each column shifted to start at 1e-3,
  the first class as side data.

Reported: both times and their ratio, the outer iterations, the objective L of each, their
difference, and whether each converged (a fit whose inner minima stopped short reports
not converged, and its L is then not the maximum-entropy value).

A second table repeats the sparse count tables over seeds 3-11 at 0.5 and 0.3 counts per cell
(18 fits, one run each) and summarises: the slowest and the median time of each solver, how
many fits converged, and how the objectives compare where both converged.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from benchmarks.results import run_recorded

ROOT = Path(__file__).resolve().parents[1]


def count_table(rng, rate, labels=None, profile=None):
    """``(main, side)`` of a 366 x 34 Poisson count table in 3 classes, ``rate`` counts per cell on
    average; class 0 is the side data. ``labels`` and ``profile`` (the classes' mean profiles)
    are drawn from ``rng`` unless given."""
    labels = rng.integers(0, 3, 366) if labels is None else labels
    profile = rng.gamma(0.5, 2, (3, 34)) if profile is None else profile
    counts = rng.poisson(rate * profile[labels]).astype(float)
    counts[counts.sum(axis=1) == 0, 0] = 1  # every row needs some mass
    return counts[labels != 0], counts[labels == 0]


def timed_fit(main_data, side_data, inner, repeats=1):
    """The fastest of ``repeats`` SDR-SI fits (2 dimensions, gamma = 2) and its result."""
    from core.selection.sdr import sdr_si

    times = []
    for _ in range(repeats):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence is reported in the tables
            start = time.perf_counter()
            result = sdr_si(main_data, side_data, 2, gamma=2.0, inner=inner)
            times.append(time.perf_counter() - start)
    return min(times), result


def cases():
    """``(name, main, side)`` of every fit."""
    from core import load_dataset

    rng = np.random.default_rng(3)
    for rate in (2.0, 0.5, 0.2):
        yield (f"counts, rate {rate:g}", *count_table(rng, rate))
    scaled = np.abs(rng.normal(size=(366, 34))) * np.logspace(-3, 3, 34)
    yield "six decades of scale", scaled[:300], scaled[300:]
    for name in ("wine", "breast_cancer", "iris"):
        data = load_dataset(name)
        X = data.X - data.X.min(axis=0) + 1e-3
        side = data.labels == data.classes[0]
        yield name, X[~side], X[side]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per fit; the fastest counts")
    options = parser.parse_args()
    print(f"{'fit':22s} {'main':>8s} {'side':>7s}   {'L-BFGS s':>8s} {'Newton s':>8s} {'ratio':>6s}   "
          f"{'iterations':>10s}   {'L, L-BFGS':>10s} {'L, Newton':>10s} {'difference':>10s}   converged")
    for name, main_data, side_data in cases():
        runs = {inner: timed_fit(main_data, side_data, inner, options.repeats) for inner in ("lbfgs", "newton")}
        (slow, old), (fast, new) = runs["lbfgs"], runs["newton"]
        print(f"{name:22s} {'x'.join(map(str, main_data.shape)):>8s} {side_data.shape[0]:7d}   {slow:8.2f} {fast:8.2f} "
              f"{slow / fast:5.1f}x   {old.n_iter:4d} / {new.n_iter:<4d}   {old.objective:10.7f} {new.objective:10.7f} "
              f"{new.objective - old.objective:+10.1e}   {'yes' if old.converged else 'NO'} / {'yes' if new.converged else 'NO'}",
              flush=True)
    sweep()


def sweep():
    """The sparse count tables over seeds: a summary of the two solvers."""
    rows = []
    for seed in range(3, 12):
        rng = np.random.default_rng(seed)
        labels, profile = rng.integers(0, 3, 366), rng.gamma(0.5, 2, (3, 34))
        for rate in (0.5, 0.3):
            main_data, side_data = count_table(rng, rate, labels, profile)
            rows.append({inner: timed_fit(main_data, side_data, inner) for inner in ("lbfgs", "newton")})
    print(f"\nsparse count tables, seeds 3-11 x 0.5 and 0.3 counts per cell ({len(rows)} fits):")
    for inner, name in (("lbfgs", "L-BFGS"), ("newton", "Newton")):
        times = np.array([row[inner][0] for row in rows])
        converged = sum(row[inner][1].converged for row in rows)
        print(f"  {name:7s} median {np.median(times):6.2f} s, slowest {times.max():6.2f} s, over 1 s: "
              f"{int((times > 1).sum()):2d}, converged {converged} of {len(rows)}")
    both = [row["newton"][1].objective - row["lbfgs"][1].objective for row in rows
            if row["newton"][1].converged and row["lbfgs"][1].converged]
    both = np.array(both)
    print(f"  where both converged ({both.size}): L(Newton) - L(L-BFGS) median {np.median(both):+.1e}, "
          f"from {both.min():+.1e} to {both.max():+.1e}; within 1e-4: {int((np.abs(both) <= 1e-4).sum())}, "
          f"Newton higher: {int((both > 1e-4).sum())}, lower: {int((both < -1e-4).sum())}")


if __name__ == "__main__":
    run_recorded(main, "bench_sdr", __doc__)
