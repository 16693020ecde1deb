"""Writes ``data/scanpy_pbmc_five_genes.npz``: scanpy's ``rank_genes_groups`` on its own
``pbmc68k_reduced`` (700 cells, ``bulk_labels``, the log-normalised ``raw.X`` scanpy tests by
default), for five named marker genes: the reference the feature lookup of the Q-alpha page
(:meth:`core.evaluation.markers.ClassMarkers.of_feature` over every gene) is checked against.

Run once by hand where scanpy is installed (``benchmarks/requirements-tools.txt``; it is not a
dependency of the project): ``python tests/core/evaluation/make_pbmc_reference.py``. Stored: the
five genes' values and the cells' labels (so that the test needs neither scanpy nor its data),
scanpy's scores, p-values, adjusted p-values, log2 fold changes and fractions of expressing cells
for them per group, and every gene's p-values per group (the adjustment is over all 765 genes).
The data are 10x Genomics' PBMC 68k as scanpy ships them (``scanpy.datasets.pbmc68k_reduced``).
"""

from pathlib import Path

import numpy as np

GENES = ("CD79A", "NKG7", "FCER1A", "CST3", "MS4A1")


def main():
    import scanpy as sc
    from importlib.metadata import version

    cells = sc.datasets.pbmc68k_reduced()
    sc.tl.rank_genes_groups(cells, "bulk_labels", method="t-test", pts=True, corr_method="benjamini-hochberg")
    result = cells.uns["rank_genes_groups"]
    groups = list(cells.obs["bulk_labels"].cat.categories)
    genes = list(cells.raw.var_names)
    columns = [genes.index(g) for g in GENES]
    raw = cells.raw.X
    raw = raw.toarray() if hasattr(raw, "toarray") else np.asarray(raw)
    out = {"X": raw[:, columns].astype(np.float64), "labels": np.asarray(cells.obs["bulk_labels"]).astype(str),
           "genes": np.array(GENES), "columns": np.array(columns), "groups": np.array(groups), "n_genes": len(genes),
           "scanpy_version": version("scanpy")}
    for field in ("scores", "pvals", "pvals_adj", "logfoldchanges"):
        per_group, every = [], []
        for group in groups:
            names = list(np.asarray(result["names"][group]))
            values = np.asarray(result[field][group], dtype=np.float64)
            per_group.append([values[names.index(g)] for g in GENES])
            if field == "pvals":
                every.append(values[np.argsort([genes.index(n) for n in names])])
        out[field] = np.array(per_group)
        if field == "pvals":
            out["pvals_every_gene"] = np.array(every)
    out["pts"] = np.array([[result["pts"].loc[g, group] for g in GENES] for group in groups])
    np.savez_compressed(Path(__file__).with_name("data") / "scanpy_pbmc_five_genes.npz", **out)


if __name__ == "__main__":
    main()
