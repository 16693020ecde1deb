"""The Data page under AppTest (uploads themselves are exercised in the browser test)."""

import gzip
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "data.py")


def test_data_page_bundled_and_feature_family():
    app = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not app.exception and not app.error
    assert app.session_state["dataset"].name == "warpAR10P"
    app.selectbox(key="data_page_bundled").set_value("colon").run()
    app.button(key="use_bundled").click().run()
    assert app.session_state["dataset"].name == "colon"
    assert not app.exception
    assert "Per-feature statistics" in " ".join(m.value for m in app.markdown)


def test_switching_to_haar_coefficients_and_back():
    app = AppTest.from_file(PAGE, default_timeout=60).run()
    family = next(r for r in app.radio if r.label == "Features of the images")
    family.set_value("haar").run()
    next(b for b in app.button if b.label == "Apply feature family").click().run()
    data = app.session_state["dataset"]
    assert data.kind == "haar" and data.n_features == 2410
    family = next(r for r in app.radio if r.label == "Features of the images")
    family.set_value("pixels").run()
    next(b for b in app.button if b.label == "Apply feature family").click().run()
    assert app.session_state["dataset"].is_image and not app.exception


# ---------------------------------------------------------------------------- table uploads
def genes_by_samples_gz():
    """20 genes x 8 samples with a class row and two missing values, gzip-compressed."""
    rng = np.random.default_rng(3)
    values = np.round(rng.normal(size=(20, 8)), 4)
    lines = ["gene_id," + ",".join(f"S{j}" for j in range(8)),
             "class," + ",".join("sick" if j % 2 else "well" for j in range(8))]
    for i in range(20):
        cells = ["" if (i, j) in {(3, 1), (7, 5)} else str(values[i, j]) for j in range(8)]
        lines.append(f"ENSG{i:011d}," + ",".join(cells))
    return gzip.compress(("\n".join(lines) + "\n").encode()), values


def table_tab(app):
    return next(u for u in app.file_uploader if u.label.startswith("A table"))


def test_table_upload_is_parsed_once_and_loads_with_median_imputation(monkeypatch):
    from pages import ui

    calls = []
    real = ui.read_table
    monkeypatch.setattr(ui, "read_table", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    data, values = genes_by_samples_gz()
    app = AppTest.from_file(PAGE, default_timeout=60).run()
    table_tab(app).set_value(("expr.csv.gz", data, "application/gzip"))
    app.run()
    assert not app.exception and not app.error
    assert app.radio(key="table_orientation").value == "auto"
    assert any("row(s) 'class' hold text" in c.value and "8 samples (columns)" in c.value for c in app.caption)
    assert app.selectbox(key="table_label").value == "class"
    assert "2 in 2 features and 2 samples" in " ".join(m.value for m in app.markdown)
    app.radio(key="table_missing").set_value("median").run()
    app.radio(key="table_orientation").set_value("samples_as_columns").run()
    app.button(key="load_table").click().run()
    assert calls == ["expr.csv.gz"]  # one parse for every choice above
    loaded = app.session_state["dataset"]
    expected = values.T.copy()
    for i, j in [(1, 3), (5, 7)]:
        expected[i, j] = np.median(np.delete(values[j], i))
    assert loaded.X.shape == (8, 20) and np.allclose(loaded.X, expected)
    assert list(loaded.labels) == ["well", "sick"] * 4
    assert "Imputed 2 values in 2 features with the column median." in " ".join(m.value for m in app.info)


def test_bad_table_upload_keeps_the_current_data():
    app = AppTest.from_file(PAGE, default_timeout=60).run()
    table_tab(app).set_value(("broken.csv.gz", b"not gzip at all", "application/gzip"))
    app.run()
    assert not app.exception
    assert "is not a gzip file" in app.error[0].value
    assert app.session_state["dataset"].name == "warpAR10P"
    # missing values with the refusal chosen: the load fails with the message, the data stay
    data, _ = genes_by_samples_gz()
    table_tab(app).set_value(("expr.csv.gz", data, "application/gzip"))
    app.run()
    assert not app.error
    app.radio(key="table_missing").set_value("drop_features").run()
    app.selectbox(key="table_label").set_value("(none)").run()
    app.button(key="load_table").click().run()
    loaded = app.session_state["dataset"]
    assert loaded.n_features == 18 and loaded.labels is None


def test_h5ad_upload_offers_its_obs_columns_as_labels(tmp_path):
    import anndata
    import pandas as pd
    import scipy.sparse as sp

    counts = sp.random(12, 30, density=0.3, format="csr", random_state=0)
    obs = pd.DataFrame({"n_genes": np.arange(12.0), "cell_type": pd.Categorical(["T", "B", "NK"] * 4)},
                       index=[f"cell{i}" for i in range(12)])
    path = tmp_path / "cells.h5ad"
    anndata.AnnData(X=counts, obs=obs, var=pd.DataFrame(index=[f"g{j}" for j in range(30)])).write_h5ad(path)
    app = AppTest.from_file(PAGE, default_timeout=60).run()
    table_tab(app).set_value(("cells.h5ad", path.read_bytes(), "application/octet-stream"))
    app.run()
    assert not app.exception and not app.error
    labels = app.selectbox(key="table_label")
    assert labels.options == ["(none)", "n_genes", "cell_type"] and labels.value == "cell_type"
    app.button(key="load_table").click().run()
    loaded = app.session_state["dataset"]
    assert loaded.X.shape == (12, 30) and np.allclose(loaded.X, counts.toarray())
    assert list(loaded.labels) == ["T", "B", "NK"] * 4 and loaded.feature_names[0] == "g0"
