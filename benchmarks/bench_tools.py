"""Against the tools users already know: genes chosen without labels by scanpy, scikit-learn and
this library, judged by k-means on the chosen genes, and timed, in one run.

    pip install -r benchmarks/requirements-tools.txt   # scanpy, for this script only
    python -m benchmarks.bench_tools [--k 100] [--runs 5]

A user with an expression table and no labels picks genes before clustering. In scanpy that is
``sc.pp.highly_variable_genes`` (flavors "seurat" and "cell_ranger": dispersion normalised within
bins of mean expression; Satija et al. 2015, Zheng et al. 2017); in scikit-learn, a variance
ranking (``VarianceThreshold``'s ``variances_``); here, unsupervised Q-alpha with k the number of
clusters sought ([WS03] Eq. 1; the default solver, power steps, and Lanczos, the default before) and the
Laplacian score (He, Cai & Niyogi 2005). Each picks the top K genes; k-means (as many clusters as
cell types or classes, ``--runs`` starts, each scored and averaged) on the standardised top K is
scored against the labels, which nothing else sees: Hungarian accuracy and NMI
(:func:`core.evaluation.metrics.selection_curves`, the Compare page's measure). "all genes" is
k-means on every gene. Seconds: the fastest of three rankings.

Data: scanpy's bundled PBMC subset (``pbmc68k_reduced``: 700 cells x 765 genes, log-normalised
``raw``, 10 cell types); the bundled expression sets with continuous values (GLIOMA and
Prostate-GE as given, log10; ALLAML as given, centred; TOX-171, raw intensities, log1p as a user
would); and the 100 x 20,000 table of ``bench_app.py`` (log1p of lognormal counts, four planted
cell types of 50 genes each).
"""

import argparse
import sys
import time
from pathlib import Path
from benchmarks.results import run_recorded

ROOT = Path(__file__).resolve().parents[1]


def tables():
    """{name: (X, labels)}, each as a user would hand it to the tools."""
    import io

    import numpy as np
    import pandas as pd
    import scanpy as sc

    from benchmarks.bench_app import genes_parquet
    from core.data.bundled import load_dataset

    pbmc = sc.datasets.pbmc68k_reduced()
    out = {"PBMC 68k subset (scanpy)": (np.asarray(pbmc.raw.X.todense() if hasattr(pbmc.raw.X, "todense")
                                                   else pbmc.raw.X, dtype=np.float64),
                                         pbmc.obs["bulk_labels"].astype(str).to_numpy())}
    for name in ("GLIOMA", "Prostate-GE", "ALLAML", "TOX-171"):
        data = load_dataset(name)
        X = np.log1p(data.X) if name == "TOX-171" else data.X
        out[name + (" (log1p)" if name == "TOX-171" else "")] = (np.asarray(X, dtype=np.float64), data.labels)
    frame = pd.read_parquet(io.BytesIO(genes_parquet()))
    out["20,000 genes (bench_app)"] = (frame.drop(columns="cell_type").to_numpy(np.float64),
                                       frame["cell_type"].to_numpy())
    return out


def rankers(n_clusters: int, k: int) -> dict:
    """{method: X -> the chosen genes, best first (at least ``k``)}."""
    import numpy as np
    import scanpy as sc
    from anndata import AnnData
    from sklearn.feature_selection import VarianceThreshold

    from core.selection.methods import rank_features
    from core.selection.qalpha import q_alpha

    def highly_variable(flavor):
        def rank(X):
            adata = AnnData(X.copy())
            sc.pp.highly_variable_genes(adata, flavor=flavor, n_top_genes=k)
            # scanpy's own choice of K first (its flag), then the rest by normalised dispersion
            score = np.nan_to_num(adata.var["dispersions_norm"].to_numpy(np.float64), nan=-np.inf)
            return np.lexsort((-score, ~adata.var["highly_variable"].to_numpy()))
        return rank

    return {
        "scanpy HVG, seurat": highly_variable("seurat"),
        "scanpy HVG, cell_ranger": highly_variable("cell_ranger"),
        "scikit-learn variance": lambda X: np.argsort(-VarianceThreshold().fit(X).variances_, kind="stable"),
        "Q-alpha (default)": lambda X: q_alpha(X, n_clusters).ranking,
        "Q-alpha (Lanczos)": lambda X: q_alpha(X, n_clusters, solver="lanczos").ranking,
        "Laplacian score": lambda X: rank_features("laplacian", X),
    }


def main():
    import warnings

    import numpy as np

    from core.evaluation.metrics import selection_curves

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=100, help="genes chosen by each method")
    parser.add_argument("--runs", type=int, default=5, help="k-means starts scored per selection")
    options = parser.parse_args()
    try:
        import scanpy  # noqa: F401
    except ImportError:
        sys.exit("bench_tools.py compares with scanpy: pip install -r benchmarks/requirements-tools.txt")
    warnings.simplefilter("ignore")  # scanpy's and the solvers' notes; every number is printed

    print(f"{'data':<26} {'method':<26} {'K':>5} {'accuracy':>9} {'NMI':>6} {'seconds':>8} {'x scanpy seurat':>16}")
    for name, (X, labels) in tables().items():
        n_clusters = np.unique(labels).size
        k = min(options.k, X.shape[1] // 2)
        rows, reference = [], None
        for method, rank in rankers(n_clusters, k).items():
            times = []
            for _ in range(3):
                start = time.perf_counter()
                ranking = rank(X)
                times.append(time.perf_counter() - start)
            seconds = min(times)
            reference = seconds if reference is None else reference
            scores = selection_curves(X, labels, {method: ranking}, [k], n_runs=options.runs)[method]
            rows.append((method, k, scores["accuracy"][0], scores["nmi"][0], seconds))
        everything = selection_curves(X, labels, {"all": np.arange(X.shape[1])}, [X.shape[1]], n_runs=options.runs)["all"]
        rows.append(("all genes", X.shape[1], everything["accuracy"][0], everything["nmi"][0], float("nan")))
        for method, size, accuracy, information, seconds in rows:
            ratio = f"{seconds / reference:>16.1f}" if seconds == seconds else f"{'-':>16}"
            shown = f"{seconds:>8.3f}" if seconds == seconds else f"{'-':>8}"
            print(f"{name:<26} {method:<26} {size:>5} {accuracy:>9.3f} {information:>6.3f} {shown} {ratio}", flush=True)


if __name__ == "__main__":
    run_recorded(main, "bench_tools", __doc__)
