"""Compare's default run on a segmentation-shaped table, as the user waits for it (issue 76).

    python -m benchmarks.bench_compare [--repeats 3] [--no-browser]

The table: 2,310 samples x 19 features in 7 classes, the UCI image-segmentation set's shape, with
one constant column (its region_pixel_count); random values around class centres, not the UCI
numbers (the waits depend on the shape). Two parts:

1. The library: each of the page's four default methods (Q-alpha, Fisher, Laplacian score,
   variance) through ``compare_methods`` (five folds, sizes 1-19), best of ``--repeats``: the
   protocol as it is, against the same protocol as it was before issue 76 in the same process
   (scikit-learn's 1-NN and the precision index computed afresh at every size, the folds one after
   another: ``DISTANCE_VALUES = 0`` and one worker).
2. The page in Chromium (unless ``--no-browser``): the CSV uploaded, Compare opened, "Run 4
   method(s)" pressed, timed from the click to the settled page and to the first progress bar;
   beside the bare page's slider step in the same run (the floor Streamlit allows).
"""

import argparse
import io
import time

import numpy as np

from benchmarks.results import run_recorded

METHODS = ("Q-alpha", "fisher", "laplacian", "variance")


def segmentation_like(seed: int = 0):
    """2,310 x 19, 7 classes of 330, a constant column (index 2, 9 everywhere)."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(7), 330)
    centres = rng.normal(size=(7, 19)) * 2
    X = centres[labels] + rng.normal(size=(2310, 19)) * np.linspace(0.5, 3, 19)
    X[:, 2] = 9.0
    return X, labels


def library_times(repeats: int):
    from unittest import mock

    from core.evaluation import compare
    from core.selection.methods import q_alpha_ranker, rank_features
    from core.selection.qalpha import QAlphaParameters

    X, y = segmentation_like()
    sizes, folds = compare.comparison_sizes(X.shape[1]), compare.comparison_folds(y)
    rankers = {"Q-alpha": (lambda X_, y_: q_alpha_ranker(QAlphaParameters(k=2))(X_, None), False),
               "fisher": (lambda X_, y_: rank_features("fisher", X_, y_), True),
               "laplacian": (lambda X_, y_: rank_features("laplacian", X_, None), False),
               "variance": (lambda X_, y_: rank_features("variance", X_, None), False)}

    def timed(method):
        rank, supervised = rankers[method]
        best = np.inf
        for _ in range(repeats):
            start = time.perf_counter()
            compare.compare_methods(X, y, {method: rank}, sizes=sizes, n_splits=folds,
                                    supervised={method: supervised}, random_state=0)
            best = min(best, time.perf_counter() - start)
        return best

    timed("variance")  # imports and first calls are not a method's time
    print(f"{'method':12s} {'now (s)':>8s} {'before (s)':>11s} {'ratio':>6s}")
    total_now = total_before = 0.0
    for method in METHODS:
        now = timed(method)
        with mock.patch.object(compare, "DISTANCE_VALUES", 0), mock.patch.object(compare, "cores", lambda: 1):
            before = timed(method)
        total_now, total_before = total_now + now, total_before + before
        print(f"{method:12s} {now:8.2f} {before:11.2f} {before / now:6.1f}x")
    print(f"{'all four':12s} {total_now:8.2f} {total_before:11.2f} {total_before / total_now:6.1f}x")


def browser_times():
    import pandas as pd

    from benchmarks.bench_app import app_and_bare_page, settled, slider_steps, timed_step, upload

    X, y = segmentation_like()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    frame.insert(0, "class", [f"c{label}" for label in y])
    csv = frame.to_csv(index=False).encode()
    with app_and_bare_page() as (context, bare_url, url):
        page = context().new_page()
        page.goto(bare_url)
        settled(page, 0)
        floor = slider_steps(page, "value", 4)
        page.context.close()
        page = context().new_page()
        upload(page, url, "Upload a table", "A table: samples x features", "segmentation.csv", csv, "Load table",
               "Loaded segmentation.csv")
        page.locator("[data-testid='stSidebar']").get_by_role("link", name="Compare", exact=True).click()
        run = page.get_by_role("button", name="Run 4 method(s)")
        run.wait_for(timeout=300_000)
        settled(page, 0)
        run.click()
        since = page.evaluate("() => window.__input")
        page.locator("[data-testid='stProgress']").first.wait_for(timeout=300_000)
        progress = (page.evaluate("() => performance.now()") - since) / 1000.0
        step = timed_step(page, True)
        rows = page.locator("[data-testid='stDataFrame']").count()
        print(f"\nbare page, slider step (floor): median {float(np.median(floor)):.2f} s settled")
        print(f"Compare, 'Run 4 method(s)' on 2,310 x 19: {float(step):.2f} s settled, {step.painted:.2f} s painted; "
              f"first progress bar at {progress:.2f} s (upper bound: polled); tables drawn: {rows}")
        page.context.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-browser", action="store_true")
    options = parser.parse_args()
    library_times(options.repeats)
    if not options.no_browser:
        browser_times()


if __name__ == "__main__":
    run_recorded(main, "bench_compare", __doc__)
