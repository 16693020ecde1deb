"""What the Data page's transforms do to Q-alpha's selection on the bundled tables of raw values.

    python -m benchmarks.bench_transforms [--runs 20] [--top 100]

For each bundled table whose values are all non-negative (raw intensities or counts: log1p
applies), Q-alpha runs as the Q-alpha page runs it before anyone touches a setting (k = the number
of classes, the library's other defaults) on the values as bundled, after ``log1p``, and after
``log1p`` with the 2,000 most variable features kept (where there are more): by normalised
dispersion, as the Data page keeps them, and, as the reference, by the plain variance of the
logged values; and with every sample brought to the median total first (scanpy's
``normalize_total``). Where scanpy is installed (``benchmarks/requirements-tools.txt``) the last column
is the share of the page's 2,000 that ``scanpy.pp.highly_variable_genes(flavor="seurat")`` keeps
too, and, after equal totals, the largest difference from ``scanpy.pp.normalize_total``. z-scores
are not a row of their own: Q-alpha normalises every feature itself and the score
standardises the selection, so they give the same numbers (``tests/core/data/test_transforms.py``).

The score is the pages' own: k-means on the standardised top ``--top`` features, as many clusters as
classes, ``--runs`` starts (the same seeds in every column), Hungarian accuracy and NMI against the
labels (:func:`core.evaluation.metrics.kmeans_scores`). The labels are used only to score. The
reference in the same run is the variance ranking (scanpy's choice of genes, here the plain
variance) on the same values. Seconds: the transform, then Q-alpha.
"""

import argparse
import time
from pathlib import Path
from benchmarks.results import run_recorded

ROOT = Path(__file__).resolve().parents[1]


def main():
    import warnings

    import numpy as np

    from core import QAlphaParameters, list_datasets, load_dataset, rank_features, transform_values
    from core.evaluation.metrics import kmeans_scores, zscores

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="k-means starts per selection (the same seeds in each)")
    parser.add_argument("--top", type=int, default=100, help="features clustered")
    options = parser.parse_args()
    warnings.simplefilter("ignore")  # a ConvergenceWarning is reported in the table, not printed

    def scores(data, ranking):
        Z = zscores(data.X[:, ranking[:options.top]])
        accuracy, information = kmeans_scores(Z, data.labels, options.runs)
        return float(np.mean(accuracy)), float(np.mean(information))

    def same_as_scanpy(bundled, data):
        """The share of ``data``'s features that scanpy's seurat flavor keeps from the log1p of
        ``bundled`` (as many as ``data`` has), or "-" without scanpy or a subset."""
        if data.n_features == bundled.n_features:
            return "-"
        try:
            import anndata
            import scanpy
        except ImportError:
            return "-"
        logged = anndata.AnnData(bundled.X.copy())
        totals = ""
        if data.meta.get("transform", {}).get("normalise_total"):
            scanpy.pp.normalize_total(logged)
            ours = transform_values(bundled, normalise_total=True).X
            totals = f", totals differ by {np.abs(ours - logged.X).max():.1e}"
        scanpy.pp.log1p(logged)
        scanpy.pp.highly_variable_genes(logged, n_top_genes=data.n_features, flavor="seurat")
        kept = set(np.asarray(bundled.feature_names)[logged.var["highly_variable"].to_numpy()])
        return f"{len(kept & set(data.feature_names)) / data.n_features:.3f}{totals}"

    print(f"{'data set':12s} {'values':40s} {'features':>8s}   Q-alpha acc / NMI   variance acc / NMI"
          f"   converged   transform s   Q-alpha s   same as scanpy")
    for info in list_datasets():
        bundled = load_dataset(info.name)
        if bundled.is_image or bundled.labels is None or bundled.X.min() < 0:
            continue
        versions = [("as bundled", lambda: bundled), ("log1p", lambda: transform_values(bundled, log1p=True))]
        if bundled.n_features > 2000:
            versions.append(("log1p, 2,000 most variable",
                             lambda: transform_values(bundled, log1p=True, n_most_variable=2000)))
            versions.append(("totals, log1p, 2,000 most variable", lambda: transform_values(
                bundled, normalise_total=True, log1p=True, n_most_variable=2000)))
            versions.append(("log1p, 2,000 of largest plain variance", lambda: transform_values(bundled, log1p=True)
                             .subset_features(np.sort(np.argsort(-np.log1p(bundled.X).var(axis=0), kind="stable")[:2000]))))
        for label, make in versions:
            start = time.perf_counter()
            data = make()
            transformed = time.perf_counter() - start
            start = time.perf_counter()
            result = QAlphaParameters(k=int(min(max(data.classes.size, 2), 50))).run(data.X)
            solved = time.perf_counter() - start
            q_accuracy, q_nmi = scores(data, result.ranking)
            v_accuracy, v_nmi = scores(data, rank_features("variance", data.X))
            print(f"{info.name:12s} {label:40s} {data.n_features:8,d}   {q_accuracy:.3f} / {q_nmi:.3f}"
                  f"       {v_accuracy:.3f} / {v_nmi:.3f}        {str(bool(result.converged)):5s}"
                  f"   {transformed:11.3f}   {solved:9.2f}   {same_as_scanpy(bundled, data)}", flush=True)


if __name__ == "__main__":
    run_recorded(main, "bench_transforms", __doc__)
