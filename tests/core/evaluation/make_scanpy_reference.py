"""Writes ``data/scanpy_rank_genes_groups.npz``: scanpy's ``rank_genes_groups`` on a small table,
the reference that ``test_markers.py`` compares :func:`core.evaluation.markers.class_markers` with.

Run once by hand where scanpy is installed (``pip install scanpy``; it is not a dependency of the
project): ``python tests/core/evaluation/make_scanpy_reference.py``. Stored: the data (so that the
test does not depend on a random generator's stream), and per method and per feature set the
scores, p-values, adjusted p-values, log2 fold changes and the fractions of expressing cells.
"""

from pathlib import Path

import numpy as np


def table(random_state=0):
    """150 cells x 30 genes of three types; each type raises its own 5 genes; log1p of counts."""
    rng = np.random.default_rng(random_state)
    kinds = np.repeat(["B", "NK", "T"], [40, 50, 60])
    counts = rng.poisson(0.8, (kinds.size, 30)).astype(float)
    for k, kind in enumerate(["B", "NK", "T"]):
        counts[np.ix_(kinds == kind, range(5 * k, 5 * k + 5))] += rng.poisson(3.0, ((kinds == kind).sum(), 5))
    return np.log1p(counts), kinds


def main():
    import anndata
    import pandas as pd
    import scanpy as sc
    from importlib.metadata import version

    X, kinds = table()
    out = {"X": X, "labels": kinds, "scanpy_version": version("scanpy")}
    subset = np.array([0, 1, 2, 6, 11, 12, 17, 20, 25, 29])
    for method, options in (("t-test", {}), ("wilcoxon", {}), ("wilcoxon_ties", {"tie_correct": True})):
        for name, mask in (("all", None), ("subset", subset)):
            cells = anndata.AnnData(X.copy(), obs=pd.DataFrame({"kind": pd.Categorical(kinds)},
                                                               index=[f"c{i}" for i in range(kinds.size)]))
            cells.var_names = [f"g{j}" for j in range(X.shape[1])]
            mask_var = None
            if mask is not None:
                mask_var = np.zeros(X.shape[1], dtype=bool)
                mask_var[mask] = True
            sc.tl.rank_genes_groups(cells, "kind", method=method.split("_")[0], pts=True, mask_var=mask_var,
                                    corr_method="benjamini-hochberg", **options)
            result = cells.uns["rank_genes_groups"]
            genes = np.arange(X.shape[1]) if mask is None else mask
            for field in ("scores", "pvals", "pvals_adj", "logfoldchanges"):
                per_group = []
                for group in ("B", "NK", "T"):
                    names = np.asarray(result["names"][group])
                    values = np.asarray(result[field][group], dtype=np.float64)
                    order = np.array([int(n[1:]) for n in names])
                    back = dict(zip(order, values))
                    per_group.append([back[j] for j in genes])
                out[f"{method}/{name}/{field}"] = np.array(per_group)
            out[f"{method}/{name}/pts"] = result["pts"].loc[[f"g{j}" for j in genes], ["B", "NK", "T"]].to_numpy().T
            out[f"{method}/{name}/pts_rest"] = result["pts_rest"].loc[[f"g{j}" for j in genes],
                                                                      ["B", "NK", "T"]].to_numpy().T
    out["subset"] = subset
    path = Path(__file__).with_name("data") / "scanpy_rank_genes_groups.npz"
    np.savez_compressed(path, **out)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
