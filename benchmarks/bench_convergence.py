"""Q-alpha's convergence: the quasi-Newton ascent (``accelerate=True``, the default) beside the
alternation of [WS03] Definition 2 alone (``accelerate=False``, the iteration before issue 75),
both run in this process on the same data.

    python -m benchmarks.bench_convergence [--quick] [--parts 1234]

Part 1. Ten bundled sets at k = 2, 5, 8, tol 1e-6: iterations (and the ascent's evaluations, each
a pass for ``A_alpha`` and a thin one for ``M Q``), converged, seconds; the largest weight
difference of each from a reference run of the alternation to tol 1e-12, and whether the top 50
equal the reference's. Median and largest iterations.

Part 2. Planted data: 100 samples, 1 % of the features shifted by 1.0 in half of them, the rest
N(0, 1): 20,000 features at k = 2 and 3, 200,000 at k = 2 (two draws). Iterations, converged,
seconds, and the share of the planted features among the top 1 % of weights. ``--quick`` leaves
the alternation out at 200,000 features (40-110 s a run).

Part 3. The audit's problems (``benchmarks.bench_solvers.planted``: 25-60 samples, 15-150
features, 2-4 clusters; plain, side data, pairs, gap criterion; k = 2 and 3): each solved by both
at tol 1e-6 and by the alternation at tol 1e-12 (the reference). Reported: the largest weight
difference from the reference of each at 1e-6, whether the top 10 equal the reference's, the
objectives, and the median ratio of the times to converge.

Part 4. What users wait for: the λ path (13 values, warm-started) and automatic k and λ
(``choose_settings``) on a table of PBMC's size (700 cells x 765 genes, 10 cell types, log1p of
negative-binomial counts; the last type is the side data) and on 600 of the bundled digit images
(digit 0 as side data), each by both, seconds and their ratio.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from benchmarks.results import run_recorded

SETS = ("colon", "TOX-171", "warpAR10P", "GLIOMA", "lung_small", "ORL", "COIL20", "Yale", "ALLAML", "warpPIE10P")
KS = (2, 5, 8)


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = function(*args, **kwargs)
    return value, time.perf_counter() - start


def same_top(a, b, count):
    return set(a.top(count)) == set(b.top(count))


def part_sets():
    from core import load_dataset, q_alpha

    print("\nPart 1. Bundled sets, tol 1e-6: the alternation alone (before) and with the ascent (now); "
          "|d alpha| against the alternation at tol 1e-12")
    print("| set | samples x features | k | before: iterations | s | now: iterations (evaluations) | s | "
          "both converged | now / before time | now |d alpha| | before |d alpha| | top 50 as the reference |")
    print("|" + "---|" * 12)
    before_iters, now_iters, ratios = [], [], []
    for name in SETS:
        X = load_dataset(name).X
        for k in KS:
            before, before_s = timed(q_alpha, X, k, accelerate=False)
            now, now_s = timed(q_alpha, X, k)
            reference, _ = timed(q_alpha, X, k, accelerate=False, tol=1e-12, max_iter=50_000)
            before_iters.append(before.n_iter)
            now_iters.append(now.n_iter)
            ratios.append(now_s / before_s)
            print(f"| {name} | {X.shape[0]} x {X.shape[1]:,} | {k} | {before.n_iter} | {before_s:.3f} | "
                  f"{now.n_iter} ({now.evaluations}) | {now_s:.3f} | {before.converged and now.converged} | "
                  f"{now_s / before_s:.2f} | {np.abs(now.alpha - reference.alpha).max():.1e} | "
                  f"{np.abs(before.alpha - reference.alpha).max():.1e} | "
                  f"{same_top(now, reference, 50)}{'' if reference.converged else ' (reference unconverged)'} |",
                  flush=True)
    print(f"\nIterations: before median {np.median(before_iters):.0f}, largest {max(before_iters)}; "
          f"now median {np.median(now_iters):.0f}, largest {max(now_iters)}. "
          f"Time now / before: median {np.median(ratios):.2f}, largest {max(ratios):.2f}.")


def planted(n_features, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((100, n_features))
    chosen = rng.choice(n_features, n_features // 100, replace=False)
    X[50:, chosen] += 1.0
    return X, chosen


def part_planted(quick):
    from core import q_alpha

    print("\nPart 2. Planted: 100 samples, 1% of the features shifted by 1.0 in half of them; tol 1e-6")
    print("| features | k | draw | run | iterations (evaluations) | converged | residual | s | planted in the top 1% |")
    print("|" + "---|" * 9)
    for n_features, k, seed in ((20_000, 2, 0), (20_000, 3, 0), (200_000, 2, 0), (200_000, 2, 1)):
        X, chosen = planted(n_features, seed)
        runs = [("now", True)] + ([] if quick and n_features > 20_000 else [("before", False)])
        for label, accelerate in runs:
            result, seconds = timed(q_alpha, X, k, accelerate=accelerate)
            share = np.isin(result.top(n_features // 100), chosen).mean()
            print(f"| {n_features:,} | {k} | {seed} | {label} | {result.n_iter} ({result.evaluations}) | "
                  f"{result.converged} | {result.residual:.1e} | {seconds:.2f} | {share:.1%} |", flush=True)


def audit_cases(count):
    """``(name, X, options)`` over the audit's random problems and the variants of Q-alpha."""
    from benchmarks.bench_solvers import planted as audit_planted
    from core import pairs_from_labels

    variants = ("plain", "side", "pairs", "gap")
    for seed in range(count):
        X, side, labels = audit_planted(seed)
        variant = variants[seed % len(variants)]
        options = dict(k=2 + seed % 2)
        if variant == "side":
            options.update(side=side, lam=0.1)
        elif variant == "pairs":
            options.update(pairs=pairs_from_labels(labels, 20, random_state=seed), lam=0.5)
        elif variant == "gap":
            options.update(criterion="gap")
        yield f"{seed}: {variant}", X, options


def part_audit(count):
    from core import q_alpha

    print(f"\nPart 3. The audit's problems ({count}): both at tol 1e-6 against the alternation at tol 1e-12")
    ratios, now_gaps, before_gaps, top_equal, converged, objective_gaps = [], [], [], 0, 0, []
    for name, X, options in audit_cases(count):
        q_alpha(X, **options)  # warm the caches of this shape once
        reference, _ = timed(q_alpha, X, accelerate=False, tol=1e-12, max_iter=50_000, **options)
        before, before_s = timed(q_alpha, X, accelerate=False, **options)
        now, now_s = timed(q_alpha, X, **options)
        ratios.append(now_s / before_s)
        now_gaps.append(np.abs(now.alpha - reference.alpha).max())
        before_gaps.append(np.abs(before.alpha - reference.alpha).max())
        objective_gaps.append((now.objective - reference.objective) / abs(reference.objective))
        top_equal += same_top(now, reference, 10)
        converged += now.converged
    print("| measure | value |\n|---|---|")
    print(f"| converged now | {converged} of {count} |")
    print(f"| top 10 equal to the reference's | {top_equal} of {count} |")
    print(f"| now: largest / median |d alpha| from the reference | {max(now_gaps):.1e} / {np.median(now_gaps):.1e} |")
    print(f"| before: largest / median |d alpha| from the reference | {max(before_gaps):.1e} / {np.median(before_gaps):.1e} |")
    print(f"| now: objective - reference's, relative, lowest / highest | {min(objective_gaps):+.1e} / {max(objective_gaps):+.1e} |")
    print(f"| time to converge now / before: median (lowest - highest) | {np.median(ratios):.2f} "
          f"({min(ratios):.2f} - {max(ratios):.2f}) |")


def pbmc_sized(seed=0):
    """700 cells x 765 genes in 10 types of 70: log1p of negative-binomial counts whose means rise
    4-fold on 20 marker genes per type."""
    rng = np.random.default_rng(seed)
    types = np.repeat(np.arange(10), 70)
    base = rng.gamma(0.6, 1.5, size=765)
    means = np.tile(base, (10, 1))
    for t in range(10):
        means[t, rng.choice(765, 20, replace=False)] *= 4.0
    counts = rng.negative_binomial(2, 2 / (2 + means[types]))
    return np.log1p(counts.astype(np.float64)), types


def part_waits():
    from core import choose_settings, load_dataset, q_alpha_path

    print("\nPart 4. What users wait for, seconds (the alternation alone / with the ascent)")
    print("| data | λ path before | now | ratio | automatic k and λ before | now | ratio |")
    print("|" + "---|" * 7)
    X, types = pbmc_sized()
    digits = load_dataset("digits")
    cases = [("PBMC-sized 700 x 765", X[types != 9], X[types == 9]),
             ("digits, 600 images", digits.X[:600][digits.labels[:600] != 0], digits.X[:600][digits.labels[:600] == 0])]
    for name, main, side in cases:
        row = [name]
        for function, options in ((q_alpha_path, dict(k=2)), (choose_settings, dict(random_state=0))):
            _, before_s = timed(function, main, side=side, accelerate=False, **options)
            _, now_s = timed(function, main, side=side, **options)
            row += [f"{before_s:.2f}", f"{now_s:.2f}", f"{before_s / now_s:.1f}x"]
        print("| " + " | ".join(row) + " |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="leave out the alternation at 200,000 features")
    parser.add_argument("--parts", default="1234")
    parser.add_argument("--audit", type=int, default=48, help="audit problems in part 3")
    args = parser.parse_args()
    if "1" in args.parts:
        part_sets()
    if "2" in args.parts:
        part_planted(args.quick)
    if "3" in args.parts:
        part_audit(args.audit)
    if "4" in args.parts:
        part_waits()


if __name__ == "__main__":
    run_recorded(main, "bench_convergence", __doc__)
