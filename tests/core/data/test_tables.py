"""Users' own tables: formats, orientation, labels, missing values and the messages for bad input.

Every file is built in memory; expected values come from independent computations (NumPy on the
matrix that was written, ``np.nanmedian``) rather than from the loader itself.
"""

import bz2
import gzip
import io
import lzma
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from PIL import Image

from core import InputError
from core.data import text_tables
from core.limits import LoadLimits
from core.data.loaders import load_images, load_table, read_table

RNG = np.random.default_rng(7)
GENES = [f"ENSG{j:011d}" for j in range(40)]
SAMPLES = [f"patient_{i}" for i in range(9)]
MATRIX = np.round(RNG.normal(size=(9, 40)), 5)
CLASSES = ["tumour" if i % 3 else "normal" for i in range(9)]


def csv_bytes(matrix=MATRIX, *, genes_as_rows=False, labels=CLASSES, sep=","):
    """The matrix as a user's CSV: samples x genes with a label column, or genes x samples with
    a label row; NaN written as an empty cell."""
    cell = lambda v: "" if np.isnan(v) else repr(float(v))
    lines = []
    if genes_as_rows:
        lines.append(sep.join(["gene"] + SAMPLES))
        if labels is not None:
            lines.append(sep.join(["class"] + list(labels)))
        lines += [sep.join([gene] + [cell(v) for v in matrix[:, j]]) for j, gene in enumerate(GENES)]
    else:
        lines.append(sep.join(["sample"] + (["class"] if labels is not None else []) + GENES))
        lines += [sep.join([s] + ([labels[i]] if labels is not None else []) + [cell(v) for v in matrix[i]])
                  for i, s in enumerate(SAMPLES)]
    return ("\n".join(lines) + "\n").encode()


def zip_of(entries):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def h5ad_bytes(X, obs, var_names=GENES):
    import tempfile
    from pathlib import Path

    import anndata

    with tempfile.TemporaryDirectory() as folder:  # AnnData writes to a path only
        path = Path(folder) / "data.h5ad"
        anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=var_names)).write_h5ad(path)
        return path.read_bytes()


# ---------------------------------------------------------------------------- orientation
def test_genes_as_rows_and_samples_as_rows_give_the_same_data():
    as_rows = load_table("rows.csv", csv_bytes(), label_column="class")
    as_columns = load_table("cols.csv", csv_bytes(genes_as_rows=True), label_column="class")
    assert np.array_equal(as_rows.X, MATRIX) and np.array_equal(as_columns.X, MATRIX)
    assert as_rows.feature_names == as_columns.feature_names == tuple(GENES)
    assert as_rows.sample_names == as_columns.sample_names == tuple(SAMPLES)
    assert list(as_rows.labels) == list(as_columns.labels) == CLASSES
    assert as_columns.meta["table"]["orientation"] == "samples_as_columns"
    assert any("row(s) 'class' hold text across the numeric columns" in note and
               "read as 9 samples (columns) of 40 features" in note for note in as_columns.meta["load_report"])
    # without a label row, the first column's name decides; without that, the gene-like IDs and the shape
    guess = read_table("cols.csv", csv_bytes(genes_as_rows=True, labels=None)).guess_orientation()
    assert guess[0] == "samples_as_columns" and "the first column is named 'gene'" in guess[1]
    unnamed = csv_bytes(genes_as_rows=True, labels=None).replace(b"gene", b"id", 1)
    guess = read_table("cols.csv", unnamed).guess_orientation()
    assert guess[0] == "samples_as_columns" and "gene-like row IDs ('ENSG00000000000'" in guess[1]


def _expression_csv(first: str, cell_names, n_genes=765, n_cells=700) -> bytes:
    """A PBMC-shaped genes x cells table: more genes than cells, but only by 765 to 700."""
    rng = np.random.default_rng(3)
    genes = ["CST3", "NKG7", "MS4A1", "CD79A"] + [f"RPL{i}" for i in range(n_genes - 4)]
    counts = rng.poisson(1.0, (n_genes, n_cells))
    lines = [",".join([first, *cell_names])] + [",".join([g, *map(str, row)]) for g, row in zip(genes, counts)]
    return "\n".join(lines).encode()


def test_genes_as_rows_are_read_by_what_a_person_would_read_them_by():
    """Issue 76: a first column named "gene" over 765 rows and 700 cell barcodes as the header was
    read as 765 samples of 700 features (the rule wanted three times as many rows as numeric
    columns). Its name, or the header's barcodes, decide; the reason says which."""
    import gzip

    barcodes = [f"AAAC{''.join('ACGT'[(i >> (2 * b)) & 3] for b in range(8))}CA-1" for i in range(700)]
    plain = [f"c{i}" for i in range(700)]
    for first, cells, why in (("gene", barcodes, "the first column is named 'gene'"),
                              ("Gene Symbol", plain, "the first column is named 'Gene Symbol'"),
                              ("", barcodes, "the numeric columns are named like samples")):
        table = _expression_csv(first, cells)
        for name, data in (("pbmc.csv", table), ("pbmc.csv.gz", gzip.compress(table))):
            orientation, reason = read_table(name, data).guess_orientation()
            assert orientation == "samples_as_columns" and why in reason, (first, reason)
            assert "700 samples (columns) of 765 features (rows)" in reason
    loaded = load_table("pbmc.csv", _expression_csv("gene", barcodes))
    assert loaded.X.shape == (700, 765) and loaded.feature_names[:2] == ("CST3", "NKG7")
    # the other way round: a first column named for samples keeps samples in rows
    rows = read_table("cells.csv", _expression_csv("barcode", plain[:12], n_genes=40, n_cells=12)).guess_orientation()
    assert rows[0] == "samples_as_rows" and "named 'barcode'" in rows[1]
    # nothing to go by (an unnamed first column, plain headers, as many rows as columns): samples in rows
    assert read_table("t.csv", _expression_csv("", plain)).guess_orientation()[0] == "samples_as_rows"


def test_orientation_guess_and_explicit_choice():
    parsed = read_table("cols.csv", csv_bytes(genes_as_rows=True))
    assert parsed.guess_orientation()[0] == "samples_as_columns"
    assert parsed.label_choices() == ["class"] and parsed.suggested_label() == "class"
    # a UCI-like table (no IDs, a class column) stays samples as rows
    uci = read_table("uci.csv", b"a,b,label\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n9,1,x\n2,2,y\n")
    assert uci.guess_orientation()[0] == "samples_as_rows" and uci.suggested_label() == "label"
    # explicit choice overrides the guess
    forced = load_table("rows.csv", csv_bytes(labels=None), orientation="samples_as_columns")
    assert forced.X.shape == (40, 9) and np.array_equal(forced.X, MATRIX.T)
    with pytest.raises(InputError, match="orientation must be one of auto, samples_as_rows, samples_as_columns"):
        load_table("rows.csv", csv_bytes(), orientation="sideways")


def test_a_label_row_of_a_features_x_samples_table_may_be_numeric_or_absent():
    table = csv_bytes(genes_as_rows=True, labels=[str(i % 2) for i in range(9)])
    data = load_table("cols.csv", table, orientation="samples_as_columns", label_column="class")
    assert list(data.labels) == [i % 2 for i in range(9)] and data.labels.dtype == np.int64
    data = load_table("cols.csv", csv_bytes(genes_as_rows=True, labels=None))
    assert data.labels is None and np.array_equal(data.X, MATRIX)


# ---------------------------------------------------------------------------- formats
@pytest.mark.parametrize("name, pack", [
    ("t.csv.gz", gzip.compress), ("t.csv.bz2", bz2.compress), ("t.csv.xz", lzma.compress),
    ("t.zip", lambda data: zip_of({"folder/t.csv": data, "__MACOSX/._t.csv": b"junk"})),
    ("t.tsv", None)])
def test_compressed_zipped_and_tab_separated_tables(name, pack):
    data = csv_bytes(sep="\t") if name.endswith(".tsv") else csv_bytes()
    data = pack(data) if pack else data
    loaded = load_table(name, data, label_column="class")
    assert np.array_equal(loaded.X, MATRIX) and list(loaded.labels) == CLASSES


def test_gzip_detected_by_its_bytes_without_the_extension():
    loaded = load_table("t.csv", gzip.compress(csv_bytes()), label_column="class")
    assert np.array_equal(loaded.X, MATRIX)


def test_parquet_with_index_and_label_column():
    frame = pd.DataFrame(MATRIX, columns=GENES, index=pd.Index(SAMPLES, name="sample"))
    frame.insert(0, "class", CLASSES)
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    parsed = read_table("t.parquet", buffer.getvalue())
    assert parsed.suggested_label() == "class"
    loaded = load_table("t.parquet", buffer.getvalue(), label_column="class")
    assert np.array_equal(loaded.X, MATRIX) and loaded.sample_names == tuple(SAMPLES)


@pytest.mark.parametrize("sparse", [False, True])
def test_h5ad_dense_or_sparse_with_obs_labels(sparse):
    X = MATRIX.copy()
    X[X < 0] = 0
    obs = pd.DataFrame({"cell_type": pd.Categorical(CLASSES), "n_counts": X.sum(axis=1)}, index=SAMPLES)
    data = h5ad_bytes(sp.csr_matrix(X) if sparse else X, obs)
    parsed = read_table("cells.h5ad", data)
    assert parsed.label_choices() == ["cell_type", "n_counts"] and parsed.suggested_label() == "cell_type"
    loaded = load_table("cells.h5ad", data, label_column="cell_type")
    assert np.array_equal(loaded.X, X) and list(loaded.labels) == CLASSES
    assert loaded.feature_names == tuple(GENES) and loaded.sample_names == tuple(SAMPLES)


def test_npy_npz_mat_keep_working_and_complex_is_refused():
    buffer = io.BytesIO()
    np.savez(buffer, X=MATRIX, y=np.arange(9) % 2)
    loaded = load_table("t.npz", buffer.getvalue())
    assert np.array_equal(loaded.X, MATRIX) and list(loaded.labels) == list(np.arange(9) % 2)
    buffer = io.BytesIO()
    np.save(buffer, MATRIX + 1j)
    with pytest.raises(InputError, match="complex numbers; feature selection needs real values"):
        load_table("t.npy", buffer.getvalue())


def test_wide_reader_agrees_with_pandas_reader(monkeypatch):
    """The line-by-line reader of very wide tables and pandas' reader give the same table,
    with missing cells, a text cell and a label column."""
    matrix = MATRIX.copy()
    matrix[2, 5] = np.nan
    data = csv_bytes(matrix).replace(b"patient_4,tumour", b"patient_4,NA", 1)
    assert b"patient_4,NA" in data
    results = []
    for wide in (10**9, 1):
        monkeypatch.setattr(text_tables, "WIDE_COLUMNS", wide)
        monkeypatch.setattr(text_tables, "WIDE_RATIO", 0 if wide == 1 else text_tables.WIDE_RATIO)
        parsed = read_table("t.csv", data)
        results.append(load_table("t.csv", data, label_column="class", missing="drop_samples"))
        assert parsed.label_choices()[:2] == ["sample", "class"]
    pandas_read, wide_read = results
    assert np.array_equal(pandas_read.X, wide_read.X) and list(pandas_read.labels) == list(wide_read.labels)
    assert pandas_read.sample_names == wide_read.sample_names and len(pandas_read.labels) == 7


# ---------------------------------------------------------------------------- missing values
def with_holes():
    matrix = MATRIX.copy()
    matrix[1, 3] = matrix[4, 3] = matrix[6, 10] = np.nan
    return matrix


@pytest.mark.parametrize("policy", ["mean", "median"])
def test_imputation_matches_the_column_statistic(policy):
    matrix = with_holes()
    loaded = load_table("t.csv", csv_bytes(matrix), label_column="class", missing=policy)
    expected = matrix.copy()
    statistic = np.nanmean if policy == "mean" else np.nanmedian
    for j in (3, 10):
        expected[np.isnan(matrix[:, j]), j] = statistic(matrix[:, j])
    assert np.allclose(loaded.X, expected)
    assert f"Imputed 3 values in 2 features with the column {policy}." in loaded.meta["load_report"]
    assert loaded.meta["table"]["missing_values"] == 3 and loaded.meta["table"]["imputed"] == 3


def test_drop_samples_and_drop_features():
    matrix = with_holes()
    rows = load_table("t.csv", csv_bytes(matrix), label_column="class", missing="drop_samples")
    assert np.array_equal(rows.X, np.delete(matrix, [1, 4, 6], axis=0))
    assert rows.sample_names == tuple(np.delete(SAMPLES, [1, 4, 6]))
    columns = load_table("t.csv", csv_bytes(matrix), label_column="class", missing="drop_features")
    assert np.array_equal(columns.X, np.delete(matrix, [3, 10], axis=1))
    assert "Dropped 2 features with missing values (3 missing values in 2 features and 3 samples)." in \
        columns.meta["load_report"]


def test_a_feature_with_no_value_is_dropped_by_imputation():
    matrix = MATRIX.copy()
    matrix[:, 7] = np.nan
    loaded = load_table("t.csv", csv_bytes(matrix), label_column="class", missing="median")
    assert loaded.n_features == 39 and GENES[7] not in loaded.feature_names
    assert "Dropped 1 feature with no value at all." in loaded.meta["load_report"]


# ---------------------------------------------------------------------------- bad input, each with its message
def test_gz_that_is_not_gzip():
    with pytest.raises(InputError, match="t.csv.gz is not a gzip file .*rename it without .gz"):
        load_table("t.csv.gz", csv_bytes())


def test_truncated_gzip():
    packed = gzip.compress(csv_bytes())
    with pytest.raises(InputError, match="not a complete gzip file"):
        load_table("t.csv.gz", packed[: len(packed) // 2])


def test_zip_with_two_tables():
    with pytest.raises(InputError, match="holds 2 tables \\('a.csv', 'b.csv'\\); a ZIP must hold exactly one"):
        load_table("t.zip", zip_of({"a.csv": csv_bytes(), "b.csv": csv_bytes()}))


LEGACY_H5AD = Path(__file__).parents[2] / "fixtures" / "legacy_pbmc.h5ad"


def test_h5ad_in_the_layout_before_anndata_0_7_reads_as_anndata_reads_it():
    """scanpy's shipped pbmc68k_reduced.h5ad has this layout (record-array obs/var, categories in
    uns, raw.X as an h5sparse group); it crashed the Data page. anndata.read_h5ad is the reference."""
    import anndata

    data = LEGACY_H5AD.read_bytes()
    reference = anndata.read_h5ad(LEGACY_H5AD)
    parsed = read_table("pbmc68k_reduced.h5ad", data)
    assert parsed.arrays == ("X", "raw.X") and parsed.x_key == "X"
    assert "before 0.7" in " ".join(parsed.notes)
    assert parsed.label_suggestion()[0] == "bulk_labels" and "3 categories" in parsed.label_suggestion()[1]
    loaded = load_table("pbmc68k_reduced.h5ad", data, label_column="bulk_labels")
    assert np.array_equal(loaded.X, np.asarray(reference.X, dtype=np.float64))
    assert list(loaded.labels) == list(reference.obs["bulk_labels"].astype(str))
    assert loaded.feature_names == tuple(reference.var_names) and loaded.sample_names == tuple(reference.obs_names)
    raw = load_table("pbmc68k_reduced.h5ad", data, x_key="raw.X", label_column="phase")
    assert np.array_equal(raw.X, reference.raw.X.toarray())
    assert raw.feature_names == tuple(reference.raw.var_names)
    assert list(raw.labels) == list(reference.obs["phase"].astype(str))
    with pytest.raises(InputError, match="no matrix 'layers/counts'; it holds 'X', 'raw.X'"):
        read_table("pbmc68k_reduced.h5ad", data, x_key="layers/counts")


@pytest.mark.parametrize("kind", ["csr", "csc"])
def test_h5ad_sparse_either_orientation_raw_and_layers(kind, tmp_path):
    import anndata

    X = MATRIX.copy()
    X[X < 0] = 0
    matrix = sp.csr_matrix(X) if kind == "csr" else sp.csc_matrix(X)
    obs = pd.DataFrame({"leiden": pd.Categorical([str(c) for c in range(9)]),  # 9 categories of 9 cells
                        "batch": pd.Categorical(CLASSES)}, index=SAMPLES)
    adata = anndata.AnnData(X=matrix, obs=obs, var=pd.DataFrame(index=GENES), layers={"counts": X * 10})
    adata.raw = anndata.AnnData(X=X + 1, obs=obs, var=pd.DataFrame(index=[g + "_raw" for g in GENES]))
    adata.write_h5ad(tmp_path / "cells.h5ad")
    data = (tmp_path / "cells.h5ad").read_bytes()
    parsed = read_table("cells.h5ad", data)
    assert set(parsed.arrays) == {"X", "raw.X", "layers/counts"}
    assert parsed.label_suggestion()[0] == "leiden"
    assert np.array_equal(load_table("cells.h5ad", data).X, X)
    assert np.array_equal(load_table("cells.h5ad", data, x_key="layers/counts").X, X * 10)
    raw = load_table("cells.h5ad", data, x_key="raw.X")
    assert np.array_equal(raw.X, X + 1) and raw.feature_names[0] == GENES[0] + "_raw"


def test_h5ad_label_suggestion_needs_2_to_50_categories_and_says_why():
    many = pd.Categorical([f"c{i}" for i in range(9)])
    one = pd.Categorical(["a"] * 9)
    data = h5ad_bytes(MATRIX, pd.DataFrame({"cell_type": one, "donor": pd.Categorical(CLASSES), "barcode": many,
                                            "n_counts": np.arange(9.0)}, index=SAMPLES))
    name, why = read_table("cells.h5ad", data).label_suggestion()
    assert name == "donor" and "first categorical obs column" in why
    cells = [f"s{i}" for i in range(51)]
    data = h5ad_bytes(np.zeros((51, 3)), pd.DataFrame({"cell_type": pd.Categorical(cells)}, index=cells),
                      var_names=["a", "b", "c"])
    name, why = read_table("cells.h5ad", data).label_suggestion()
    assert name is None and "2-50 categories (cell_type: 51)" in why


def test_h5ad_with_nan_labels():
    labels = pd.Categorical(["a", None, "b", "a", None, "b", "a", "b", "a"])
    data = h5ad_bytes(MATRIX, pd.DataFrame({"cell_type": labels}, index=SAMPLES))
    with pytest.raises(InputError, match="2 samples have no label \\(the first: sample 1, counting from 0"):
        load_table("c.h5ad", data, label_column="cell_type")
    kept = load_table("c.h5ad", data, label_column="cell_type", missing="drop_samples")
    assert kept.n_samples == 7 and "Dropped 2 samples without a label." in kept.meta["load_report"]


def test_parquet_with_nested_columns():
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0], "tags": [[1, 2], [3]]})
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    with pytest.raises(InputError, match="column\\(s\\) 'tags' are nested"):
        load_table("t.parquet", buffer.getvalue())


def test_missing_values_in_the_label_column():
    labels = list(CLASSES)
    labels[2] = ""
    with pytest.raises(InputError, match="1 sample have no label|1 sample has no label|1 sample.*no label"):
        load_table("t.csv", csv_bytes(labels=labels), label_column="class")


def test_every_feature_missing_something_and_drop_features():
    matrix = MATRIX.copy()
    matrix[np.arange(40) % 9, np.arange(40)] = np.nan
    with pytest.raises(InputError, match="every feature but 0 has missing values .*leaves nothing to select from"):
        load_table("t.csv", csv_bytes(matrix), label_column="class", missing="drop_features")


def test_genes_as_rows_with_duplicate_sample_names():
    table = csv_bytes(genes_as_rows=True).replace(b"patient_3", b"patient_2", 1)
    with pytest.raises(InputError, match="the header repeats the sample name\\(s\\) 'patient_2'"):
        load_table("t.csv", table, orientation="samples_as_columns")


def test_boolean_text_and_complex_text_columns():
    with pytest.raises(InputError, match="column 'flag' holds true/false text.*Encode it as 0/1"):
        load_table("t.csv", b"a,b,flag\n1,2,TRUE\n3,4,FALSE\n5,6,TRUE\n")
    with pytest.raises(InputError, match="column 'z' holds complex numbers"):
        load_table("t.csv", b"a,b,z\n1,2,1+2j\n3,4,3-1j\n5,6,0+1j\n")


def test_dates_are_not_measurements():
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [3.0, 4.0, 5.0],
                          "when": pd.to_datetime(["2024-01-01", "2024-02-01", "2024-03-01"])})
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    with pytest.raises(InputError, match="column 'when' holds dates or times"):
        load_table("t.parquet", buffer.getvalue())
    kept = load_table("t.parquet", buffer.getvalue(), label_column="when")
    assert kept.n_features == 2 and len(set(kept.labels)) == 3


def test_labels_that_are_not_classes():
    with pytest.raises(InputError, match="not whole numbers \\(e.g. 0.5\\)"):
        load_table("t.csv", b"a,b,y\n1,2,0.5\n3,4,1\n5,6,2\n", label_column="y")
    with pytest.raises(InputError, match="beyond the 64-bit range"):
        load_table("t.csv", b"a,b,y\n1,2,1e19\n3,4,1\n5,6,2\n", label_column="y")


def test_budget_refuses_a_compression_bomb_before_inflating_it():
    bomb = gzip.compress(b"0," * (8 << 20))  # 16 MB of text in a few kB
    assert len(bomb) < 100_000
    with pytest.raises(InputError, match="per-upload budget of 1.0 MB \\(LoadLimits.max_decoded_bytes\\)"):
        load_table("bomb.csv.gz", bomb, limits=LoadLimits(max_decoded_bytes=1 << 20))


def test_unsupported_and_empty():
    with pytest.raises(InputError, match="unsupported file type .xlsx"):
        load_table("t.xlsx", b"abc")
    with pytest.raises(InputError, match="holds an empty table"):
        load_table("t.csv.gz", gzip.compress(b""))


# ---------------------------------------------------------------------------- TIFF stacks
def test_multi_page_tiff_stack_loads_one_image_per_page():
    pages = [Image.fromarray(((np.arange(24).reshape(6, 4) * (k + 1)) % 256).astype(np.uint8)) for k in range(5)]
    buffer = io.BytesIO()
    pages[0].save(buffer, format="TIFF", save_all=True, append_images=pages[1:])
    archive = zip_of({"alice/stack.tif": buffer.getvalue(), "bob/stack.tif": buffer.getvalue()})
    data = load_images([("stacks.zip", archive)])
    assert data.n_samples == 10 and data.image_shape == (6, 4)
    assert sorted(set(data.labels)) == ["alice", "bob"] and list(data.labels).count("alice") == 5
    assert data.sample_names[0] == "alice/stack.tif#1"
    assert np.allclose(data.X[2], np.asarray(pages[2], dtype=float).ravel() / 255)
    with pytest.raises(InputError, match="above the limit of 20 pixels"):
        load_images([("s.tif", buffer.getvalue())], limits=LoadLimits(max_image_pixels=20))


def test_h5ad_layouts_are_read_from_obsm_in_both_layouts_and_follow_the_samples(tmp_path):
    """Issue 60: ``obsm["X_umap"]``/``"X_pca"`` come with the cells as their layouts (first two
    columns), compared with anndata.read_h5ad; they follow the samples a missing label drops and
    :meth:`Dataset.subset_samples`; one that is not a finite matrix of the cells is said and left."""
    import anndata

    legacy = load_table(LEGACY_H5AD.name, LEGACY_H5AD.read_bytes())
    reference = anndata.read_h5ad(LEGACY_H5AD)
    np.testing.assert_array_equal(legacy.meta["layouts"]["X_umap"], np.asarray(reference.obsm["X_umap"], dtype=float))
    rng = np.random.default_rng(4)
    umap, pca, tsne = rng.normal(size=(9, 2)), rng.normal(size=(9, 10)), rng.normal(size=(9, 2))
    tsne[3, 1] = np.nan
    labels = [None if i == 4 else c for i, c in enumerate(CLASSES)]
    cells = anndata.AnnData(X=MATRIX, obs=pd.DataFrame({"kind": labels}, index=SAMPLES), var=pd.DataFrame(index=GENES),
                            obsm={"X_umap": umap, "X_pca": pca, "X_tsne": tsne})
    cells.write_h5ad(tmp_path / "cells.h5ad")
    data = (tmp_path / "cells.h5ad").read_bytes()
    whole = load_table("cells.h5ad", data)
    assert list(whole.meta["layouts"]) == ["X_umap", "X_pca"]  # the order a map offers them
    np.testing.assert_array_equal(whole.meta["layouts"]["X_pca"], pca[:, :2])
    assert any("obsm['X_tsne'] was not read as a layout: it holds NaN" in note for note in whole.meta["load_report"])
    with pytest.raises(ValueError):
        whole.meta["layouts"]["X_umap"][0, 0] = 1.0  # shared, read-only
    labelled = load_table("cells.h5ad", data, label_column="kind", missing="drop_samples")
    kept = [i for i in range(9) if i != 4]
    np.testing.assert_array_equal(labelled.meta["layouts"]["X_umap"], umap[kept])
    subset = labelled.subset_samples([5, 0])
    np.testing.assert_array_equal(subset.meta["layouts"]["X_umap"], umap[[kept[5], kept[0]]])
    transposed = load_table("cells.h5ad", data, orientation="samples_as_columns")
    assert "layouts" not in transposed.meta  # they place the cells, now the features


def test_layouts_are_kept_in_the_store_with_the_data_set(tmp_path):
    import anndata

    from core.data.content_store import ContentStore

    umap = np.random.default_rng(5).normal(size=(9, 2))
    anndata.AnnData(X=MATRIX, obs=pd.DataFrame(index=SAMPLES), var=pd.DataFrame(index=GENES),
                    obsm={"X_umap": umap}).write_h5ad(tmp_path / "cells.h5ad")
    cells = load_table("cells.h5ad", (tmp_path / "cells.h5ad").read_bytes())
    store = ContentStore(tmp_path / "store")
    back = store.get(store.put(cells))
    np.testing.assert_array_equal(back.meta["layouts"]["X_umap"], umap)
    assert back.fingerprint == cells.fingerprint
