"""Markers over all features against scanpy's ``rank_genes_groups``: the same numbers, and the time,
side by side in one run.

    python -m benchmarks.bench_markers [--repeats 3]

scanpy (``benchmarks/requirements-tools.txt``) is installed by the script where pip can install it;
without it the agreement and scanpy's times are left out, and the output says so.

Agreement: on scanpy's bundled ``pbmc68k_reduced`` (700 cells x 765 genes of its log-normalised
``raw``, ten ``bulk_labels``), every cell type against the rest, Welch's t-test and the Wilcoxon
rank-sum test (with and without the tie correction), and every type against "CD4+/CD25 T Reg"
(scanpy's ``reference=``): the largest relative difference of the scores and of the
Benjamini-Hochberg adjusted p-values over every gene of every type (:func:`core.evaluation.markers.class_markers`
against ``rank_genes_groups(..., n_genes=all)``), both given the values in float64; then the t-test
on the file's float32 values, which scanpy sums in float32, with SciPy's float64 ``ttest_ind`` as
the arbiter.

Speed: seconds of each (the fastest of ``--repeats``), both given the same matrix: the 700 PBMC
cells drawn 68,000 times with replacement (68,000 x 765, as dense float32 and as CSR, scanpy's
usual input) and a table of 2,000 cells x 20,000 genes (log1p of Poisson counts, eight types with
40 raised genes each; dense, as the app loads a table, and CSR).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.results import run_recorded

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_TYPE = "CD4+/CD25 T Reg"


def scanpy_or_none():
    """scanpy, installed from ``benchmarks/requirements-tools.txt`` when it is missing and pip can
    install it; None when it cannot be had."""
    try:
        return importlib.import_module("scanpy")
    except ImportError:
        pass
    wanted = [line.split("#")[0].strip() for line in (ROOT / "benchmarks" / "requirements-tools.txt").read_text().splitlines()
              if line.strip().startswith("scanpy")]
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *wanted], capture_output=True, text=True)
    if done.returncode != 0:
        print(f"scanpy could not be installed ({done.stderr.strip().splitlines()[-1:]}): its columns are left out.")
        return None
    importlib.invalidate_caches()
    return importlib.import_module("scanpy")


def scanpy_table(sc, adata, method: str, reference: str = "rest", tie_correct: bool = False):
    """scanpy's scores and adjusted p-values as (groups x genes) arrays in the genes' own order."""
    names = np.asarray(adata.var_names)
    sc.tl.rank_genes_groups(adata, "bulk_labels", method=method, reference=reference, n_genes=names.size,
                            use_raw=False, tie_correct=tie_correct, pts=False)
    found = adata.uns["rank_genes_groups"]
    groups = list(found["names"].dtype.names)
    place = {name: j for j, name in enumerate(names)}
    scores, adjusted = np.zeros((len(groups), names.size)), np.zeros((len(groups), names.size))
    for g, group in enumerate(groups):
        columns = [place[name] for name in found["names"][group]]
        scores[g, columns] = np.asarray(found["scores"][group], dtype=np.float64)
        adjusted[g, columns] = np.asarray(found["pvals_adj"][group], dtype=np.float64)
    return groups, scores, adjusted


def relative_difference(ours, theirs) -> float:
    return float(np.max(np.abs(ours - theirs) / np.maximum(np.abs(theirs), 1e-300)))


def agreement(sc) -> list[tuple[str, float, float]]:
    """(test, largest relative difference of the scores, of the adjusted p-values) on pbmc68k_reduced:
    the raw values in float64 (as this library computes), and as the file stores them (float32,
    which scanpy's t-test sums in float32), with SciPy's float64 Welch t as the arbiter."""
    import anndata
    from scipy import stats

    from core.evaluation.markers import class_markers

    cells = sc.datasets.pbmc68k_reduced()
    stored = cells.raw.X.toarray() if hasattr(cells.raw.X, "toarray") else np.asarray(cells.raw.X)
    labels = cells.obs["bulk_labels"].astype(str).to_numpy()
    rows = []
    for dtype in (np.float64, np.float32):
        adata = anndata.AnnData(stored.astype(dtype))
        adata.var_names = list(cells.raw.var_names)
        adata.obs["bulk_labels"] = labels
        tests = (("t-test", "rest", False), ("wilcoxon", "rest", False), ("wilcoxon", "rest", True),
                 ("t-test", REFERENCE_TYPE, False), ("wilcoxon", REFERENCE_TYPE, False))
        for method, reference, ties in tests if dtype is np.float64 else tests[:1]:
            groups, scores, adjusted = scanpy_table(sc, adata, method, reference, ties)
            ours = class_markers(stored.astype(dtype), labels, method=method, reference=reference, tie_correct=ties)
            order = [list(map(str, ours.classes)).index(group) for group in groups]
            what = (f"{method}{' (ties corrected)' if ties else ''}, "
                    + ("each against the rest" if reference == "rest" else f"against {reference}")
                    + f", {np.dtype(dtype).name}")
            rows.append((what, relative_difference(ours.score[order], scores),
                         relative_difference(ours.p_adjusted[order], adjusted)))
    welch = np.vstack([stats.ttest_ind(stored[labels == group].astype(np.float64),
                                       stored[labels != group].astype(np.float64), equal_var=False).statistic
                       for group in np.unique(labels)])
    ours = class_markers(stored, labels, method="t-test")
    rows.append(("t-test against SciPy's ttest_ind (float64), float32 input", relative_difference(ours.score, welch),
                 float("nan")))
    return rows


def large_tables(sc):
    """{name: (X, labels)}: PBMC's cells drawn 68,000 times (dense float32 and CSR) and 2,000 x 20,000 (CSR)."""
    from scipy import sparse

    rng = np.random.default_rng(0)
    if sc is not None:
        adata = sc.datasets.pbmc68k_reduced()
        cells = adata.raw.X.toarray() if hasattr(adata.raw.X, "toarray") else np.asarray(adata.raw.X)
        types = adata.obs["bulk_labels"].astype(str).to_numpy()
    else:  # the same shape without scanpy's file: log1p of Poisson counts in ten types
        types = np.repeat([f"type {c}" for c in range(10)], 70)
        cells = np.log1p(rng.poisson(0.8, size=(700, 765))).astype(np.float32)
    drawn = rng.integers(0, cells.shape[0], size=68_000)
    pbmc = np.ascontiguousarray(cells[drawn], dtype=np.float32)
    counts = rng.poisson(0.3, size=(2_000, 20_000)).astype(np.float32)
    genes_types = np.repeat([f"type {c}" for c in range(8)], 250)
    for c in range(8):
        counts[c * 250:(c + 1) * 250, c * 40:(c + 1) * 40] += rng.poisson(2.0, size=(250, 40))
    genes = np.log1p(counts)
    return {"68,000 x 765 (PBMC drawn), dense": (pbmc, types[drawn]),
            "68,000 x 765 (PBMC drawn), CSR": (sparse.csr_matrix(pbmc), types[drawn]),
            "2,000 x 20,000 genes, dense": (genes, genes_types),
            "2,000 x 20,000 genes, CSR": (sparse.csr_matrix(genes), genes_types)}


def fastest(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    from core.evaluation.markers import class_markers

    sc = scanpy_or_none()
    versions = f"scanpy {importlib.metadata.version('scanpy')}" if sc is not None else "scanpy not installed"
    print(f"Markers over all features, this library against {versions}; fastest of {options.repeats}\n")
    if sc is not None:
        print(f"{'pbmc68k_reduced, 700 x 765 (raw), 10 types':<68} {'scores':>10} {'adjusted p':>11}")
        for what, score, adjusted in agreement(sc):
            print(f"{what:<68} {score:>10.1e} {adjusted:>11.1e}")
        print("the largest relative difference over every gene of every type\n")
    print(f"{'data':<40} {'test':<9} {'ours s':>8} {'scanpy s':>9} {'scanpy / ours':>13}")
    for name, (X, labels) in large_tables(sc).items():
        for method in ("t-test", "wilcoxon"):
            ours = fastest(lambda: class_markers(X, labels, method=method), options.repeats)
            theirs = float("nan")
            if sc is not None:
                import anndata

                adata = anndata.AnnData(X)
                adata.obs["bulk_labels"] = labels
                theirs = fastest(lambda: sc.tl.rank_genes_groups(adata, "bulk_labels", method=method,
                                                                 n_genes=X.shape[1], use_raw=False), options.repeats)
            print(f"{name:<40} {method:<9} {ours:>8.2f} {theirs:>9.2f} {theirs / ours:>13.2f}")
    print("both from the same matrix as given (float32 where it is float32; this library reads it in blocks of "
          "columns as float64); scanpy with n_genes = every gene, so both rank every gene of every type.")


if __name__ == "__main__":
    run_recorded(main, "bench_markers", __doc__)
