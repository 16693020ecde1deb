"""The Data page under AppTest (uploads themselves are exercised in the browser test)."""

import gzip
import importlib
import time
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "data.py")


def test_data_page_bundled_and_feature_family():
    app = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not app.exception and not app.error
    assert app.session_state["dataset"].name == "warpAR10P"
    app.selectbox(key="data_page_bundled").set_value("colon").run()
    app.button(key="use_bundled").click().run()
    assert app.session_state["dataset"].name == "colon"
    assert not app.exception
    assert "Per-feature statistics" in " ".join(m.value for m in app.markdown)


def test_a_tables_values_are_transformed_into_a_new_set_beside_the_old():
    """log1p and z-scores make a new data set, selected and listed; the one it came from stays in
    the list unchanged, and on values with negatives log1p is not offered."""
    from core import load_dataset, transform_values

    app = AppTest.from_file(PAGE, default_timeout=60)
    tox = load_dataset("TOX-171")  # raw intensities, 0.02 to 33,923
    app.session_state["dataset"] = tox
    app.run()
    assert app.button(key="data_transform").disabled  # nothing ticked: nothing to do
    app.checkbox(key="data_log1p").check()
    app.checkbox(key="data_standardise").check().run()
    app.button(key="data_transform").click().run()
    assert not app.exception and not app.error
    data = app.session_state["dataset"]
    assert data.name == "TOX-171 (log1p, z-scores)" and data.meta["transformed_from"] is tox
    np.testing.assert_allclose(data.X, transform_values(tox, log1p=True, standardise=True).X)
    assert list(app.session_state["session_datasets"]) == ["TOX-171 (log1p, z-scores)"]
    assert any("These are the values of TOX-171, transformed: log1p, z-scores" in c.value for c in app.caption)
    # the boxes are cleared; z-scores have negatives, so log1p and equal totals are no longer offered
    assert not app.checkbox(key="data_log1p").value and not app.checkbox(key="data_standardise").value
    assert app.checkbox(key="data_log1p").disabled and app.checkbox(key="data_normalise_total").disabled
    assert app.button(key="data_transform").disabled
    assert np.array_equal(tox.X, load_dataset("TOX-171").X)  # the source is untouched
    # z-scores have negatives: no dispersion either; back on the raw values, the most variable
    # features are a step of their own (a number below all of them)
    keep = next(n for n in app.number_input if n.label == "Features kept, most variable first")
    assert keep.disabled and keep.value == data.n_features
    app.session_state["dataset"] = tox
    app.run()
    keep = next(n for n in app.number_input if n.label == "Features kept, most variable first")
    assert keep.value == tox.n_features and not keep.disabled and app.button(key="data_transform").disabled
    keep.set_value(500).run()
    app.checkbox(key="data_normalise_total").check().run()
    app.button(key="data_transform").click().run()
    assert app.session_state["dataset"].name == "TOX-171 (totals normalised, 500 most variable)"
    assert not app.checkbox(key="data_normalise_total").value
    assert app.session_state["dataset"].n_features == 500 and not app.exception


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
    from pages.ui import datasets

    calls = []
    real = datasets.read_table
    monkeypatch.setattr(datasets, "read_table", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
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


def test_the_missing_value_list_counts_samples_as_the_preview_does():
    """Issue 59: the list of samples with missing values counted from 1, the preview from 0."""
    app = AppTest.from_file(PAGE, default_timeout=60).run()
    table_tab(app).set_value(("gaps.csv", b"a,b,c\n1,2,3\n4,,6\n7,8,9\n1,3,5\n", "text/csv"))
    app.run()
    preview, features, samples = (frame.value for frame in app.dataframe[:3])
    gap = [i for i, cell in enumerate(preview["b"]) if cell == ""]
    assert gap == [1] and list(preview.index)[1] == 1
    assert list(samples["sample"]) == ["sample 1"] and list(features["feature"]) == ["b"]


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


def test_scanpys_legacy_h5ad_uploads_with_its_cell_types_offered_and_raw_to_choose():
    """The layout of scanpy's pbmc68k_reduced.h5ad crashed this page (AttributeError in the reader)."""
    from pathlib import Path

    legacy = Path(__file__).parents[1] / "fixtures" / "legacy_pbmc.h5ad"
    app = AppTest.from_file(PAGE, default_timeout=60).run()
    table_tab(app).set_value(("pbmc68k_reduced.h5ad", legacy.read_bytes(), "application/octet-stream"))
    app.run()
    assert not app.exception and not app.error
    labels = app.selectbox(key="table_label")
    assert labels.value == "bulk_labels" and "phase" in labels.options
    captions = " ".join(c.value for c in app.caption)
    assert "Labels offered: 'bulk_labels', a categorical obs column with 3 categories" in captions
    assert "before 0.7" in captions
    assert app.selectbox(key="table_x_key").options == ["X", "raw.X"]
    app.selectbox(key="table_x_key").set_value("raw.X").run()
    app.button(key="load_table").click().run()
    assert not app.exception and not app.error
    loaded = app.session_state["dataset"]
    assert loaded.X.shape == (60, 40) and loaded.X.min() == 0  # raw.X: log counts, not the scaled X
    assert len(set(loaded.labels)) == 3


# ---------------------------------------------------------------------------- the server's data folder
def server_folder(tmp_path):
    """A data folder with a sparse AnnData set (planted markers in two groups) and a Zarr array."""
    import anndata
    import pandas as pd
    import zarr
    from scipy import sparse

    rng = np.random.default_rng(0)
    X = rng.poisson(0.3, (400, 80)).astype(float)
    groups = rng.integers(0, 2, 400)
    X[groups == 0, :5] += rng.poisson(4, ((groups == 0).sum(), 5))
    X[groups == 1, 5:10] += rng.poisson(4, ((groups == 1).sum(), 5))
    adata = anndata.AnnData(sparse.csr_matrix(X), obs=pd.DataFrame({"cell_type": np.where(groups, "B", "A")},
                                                                     index=[f"cell{i}" for i in range(400)]))
    adata.var_names = [f"gene{j}" for j in range(80)]
    adata.write_h5ad(tmp_path / "cells.h5ad")
    zarr.create_array(str(tmp_path / "noise.zarr"), data=rng.standard_normal((50, 30)), chunks=(16, 30))
    return X, groups


def test_server_data_folder_runs_on_the_whole_set_and_loads_a_subset(tmp_path, monkeypatch):
    from core.selection.qalpha import q_alpha
    from core.data.stores import DATA_FOLDER_VARIABLE

    X, groups = server_folder(tmp_path)
    monkeypatch.setenv(DATA_FOLDER_VARIABLE, str(tmp_path))
    app = AppTest.from_file(PAGE, default_timeout=120).run()
    assert [t.label for t in app.tabs][-1] == "Server data"
    store = app.selectbox(key="server_store")
    assert store.options == ["cells.h5ad", "noise.zarr"]
    assert "400 samples x 80 features, sparse" in " ".join(m.value for m in app.markdown)
    # Q-alpha on the whole (sparse, lazily read) set: the result stays while the user goes on
    app.number_input(key="server_k").set_value(2).run()
    app.button(key="server_run").click().run()
    assert not app.exception and not app.error
    request, result, names = app.session_state["server_result"]
    assert request["method"] == "qalpha" and result.k == 2
    expected = q_alpha(X, 2, solver="power", random_state=0, max_iter=300, tol=1e-6)
    assert np.allclose(result.alpha, expected.alpha, atol=1e-8)
    assert names[:2] == ("gene0", "gene1")
    assert any(c.label == "Ranking (CSV)" for c in app.get("download_button"))
    app.selectbox(key="server_method").set_value("fisher").run()
    app.selectbox(key="server_labels").set_value("cell_type").run()
    app.button(key="server_run").click().run()
    _, scores, _ = app.session_state["server_result"]
    assert set(scores.ranking[:10]) == set(range(10))
    # a dense subset for the other pages; what was loaded before stays until it succeeds
    app.number_input(key="subset_features").set_value(20).run()
    app.number_input(key="subset_samples").set_value(300).run()
    app.selectbox(key="subset_labels").set_value("cell_type").run()
    app.button(key="load_subset").click().run()
    data = app.session_state["dataset"]
    assert data.X.shape == (300, 20) and set(data.labels) == {"A", "B"}
    assert set(range(10)) <= set(data.meta["subset_columns"].tolist())
    assert not app.exception


def test_server_data_folder_is_off_by_default(monkeypatch):
    from core.data.stores import DATA_FOLDER_VARIABLE

    monkeypatch.delenv(DATA_FOLDER_VARIABLE, raising=False)
    app = AppTest.from_file(PAGE, default_timeout=60).run()
    assert "Server data" not in [t.label for t in app.tabs]


def test_server_set_without_labels_says_so_and_keeps_the_current_data(tmp_path, monkeypatch):
    from core.data.stores import DATA_FOLDER_VARIABLE

    server_folder(tmp_path)
    monkeypatch.setenv(DATA_FOLDER_VARIABLE, str(tmp_path))
    app = AppTest.from_file(PAGE, default_timeout=120).run()
    before = app.session_state["dataset"].name
    app.selectbox(key="server_store").set_value(tmp_path / "noise.zarr").run()
    assert "50 samples x 30 features, dense float64" in " ".join(m.value for m in app.markdown)
    app.selectbox(key="server_method").set_value("fisher").run()
    assert any("no per-sample columns" in i.value for i in app.info)
    assert app.session_state["dataset"].name == before and not app.exception


def test_server_run_error_is_shown_and_keeps_the_last_result(tmp_path, monkeypatch):
    from core.data.stores import DATA_FOLDER_VARIABLE

    server_folder(tmp_path)
    monkeypatch.setenv(DATA_FOLDER_VARIABLE, str(tmp_path))
    app = AppTest.from_file(PAGE, default_timeout=120).run()
    app.selectbox(key="server_method").set_value("variance").run()
    app.button(key="server_run").click().run()
    kept = app.session_state["server_result"]
    # k above the number of samples: the message, no traceback, the earlier ranking stays
    app.selectbox(key="server_method").set_value("qalpha").run()
    app.selectbox(key="server_store").set_value(tmp_path / "noise.zarr").run()
    app.number_input(key="server_k").set_value(50).run()
    app.button(key="server_run").click().run()
    assert any("1 <= k < n_samples = 50" in e.value for e in app.error) and not app.exception
    assert app.session_state["server_result"] is kept


def test_near_empty_features_are_counted_and_removed_on_request_and_named_where_selected():
    """Issue 59: border pixels non-zero in 2 of 535 digits ranked 25-28. The Data page counts such
    features and removes them when asked (scanpy's filter_genes); Q-alpha's note names them."""
    rng = np.random.default_rng(2)
    X = rng.random((150, 5)) + 0.5
    X[:, 1] = 0.0
    X[7, 1] = 3.0  # non-zero in 1 of 150 samples
    csv = b"a,b,c,d,e\n" + b"".join((",".join(f"{v:.3f}" for v in row) + "\n").encode() for row in X)
    app = AppTest.from_file(PAGE, default_timeout=60).run()
    table_tab(app).set_value(("sparse.csv", csv, "text/csv"))
    app.run()
    app.button(key="load_table").click().run()
    assert app.session_state["dataset"].n_features == 5
    assert any("1 of 5 features are non-zero in fewer than 1% of the samples" in c.value for c in app.caption)
    assert app.button(key="data_remove_rare").disabled  # off until a share is asked for
    app.number_input(key="data_min_nonzero_percent").set_value(2.0).run()
    app.button(key="data_remove_rare").click().run()
    assert not app.exception
    kept = app.session_state["dataset"]
    assert kept.feature_names == ("a", "c", "d", "e") and "dropped" in kept.name

    def selected(X):
        import numpy as np

        from core import Dataset
        from pages.ui import selection

        selection.near_empty_note(Dataset(X, name="digits"), np.array([0, 1, 2, 3, 4]), 3)

    note = AppTest.from_function(selected, args=(X,)).run()
    text = " ".join(i.value for i in note.info)
    assert "1 of the 3 selected features are near-empty" in text and "feature 1 (rank 2, non-zero in 1 of 150)" in text
    none = AppTest.from_function(selected, args=(X + 1,)).run()
    assert not none.info


def _silent_scheduler():
    """A TCP port that accepts connections and never answers: a scheduler that does not answer."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    return listener


def test_a_scheduler_that_does_not_answer_is_said_within_ten_seconds_and_the_tab_goes_on(tmp_path, monkeypatch):
    """Issue 62: QALPHA_DASK_SCHEDULER naming a scheduler that never answers: the Server data tab
    says so within 10 s (the page drawn included), offers to try again, and the runs go on in the
    app's process; the next rerun does not wait again."""
    from core.data.stores import DATA_FOLDER_VARIABLE
    from pages.ui import cluster

    X, groups = server_folder(tmp_path)
    listener = _silent_scheduler()
    address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    monkeypatch.setenv(DATA_FOLDER_VARIABLE, str(tmp_path))
    # timed as on a server that has been up: the page's modules and Dask's client imported (cold,
    # on a loaded CI worker, they added 6 s to the 6 s wait: 12.1 s once)
    importlib.import_module("distributed")
    AppTest.from_file(PAGE, default_timeout=120).run()
    monkeypatch.setenv(cluster.SCHEDULER_VARIABLE, address)
    try:
        started = time.perf_counter()
        app = AppTest.from_file(PAGE, default_timeout=120).run()
        waited = time.perf_counter() - started
        assert waited < 10.0, waited
        said = " ".join(e.value for e in app.error)
        assert f"Could not reach a Dask scheduler at {address}" in said and not app.exception, said
        assert any(b.label == "Try the cluster again" for b in app.button)
        started = time.perf_counter()
        app.selectbox(key="server_method").set_value("variance").run()
        assert time.perf_counter() - started < 3.0  # the failure is kept: no second wait
        app.button(key="server_run").click().run()
        _, scores, _ = app.session_state["server_result"]
        np.testing.assert_allclose(scores.scores, X.var(axis=0), rtol=1e-10)  # computed here all the same
    finally:
        listener.close()
        cluster.disconnect()


def test_the_server_tab_runs_q_alpha_and_a_filter_on_a_dask_cluster(tmp_path, monkeypatch):
    """Issue 62: with QALPHA_DASK_SCHEDULER naming a running scheduler (a LocalCluster of two
    workers here), the tab says where it runs, Q-alpha's passes go to the workers (the data held in
    their memory, the result says) with the weights of NumPy's run, and a filter runs there too."""
    from distributed import LocalCluster

    from core.data.stores import DATA_FOLDER_VARIABLE
    from core.selection.qalpha import q_alpha
    from pages.ui import cluster

    X, groups = server_folder(tmp_path)
    monkeypatch.setenv(DATA_FOLDER_VARIABLE, str(tmp_path))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=None) as local:
        monkeypatch.setenv(cluster.SCHEDULER_VARIABLE, local.scheduler_address)
        try:
            app = AppTest.from_file(PAGE, default_timeout=120).run()
            said = " ".join(c.value for c in app.caption)
            assert not app.error, [e.value for e in app.error]
            assert f"Runs on the Dask cluster at {local.scheduler_address}: 2 workers, 2 threads" in said, said
            app.number_input(key="server_k").set_value(2).run()
            app.button(key="server_run").click().run()
            assert not app.exception and not app.error
            _, result, _ = app.session_state["server_result"]
            expected = q_alpha(X, 2, solver="power", random_state=0, max_iter=300, tol=1e-6)
            np.testing.assert_allclose(result.alpha, expected.alpha, atol=1e-12)
            assert result.data_placement.startswith("Held in the workers' memory"), result.data_placement
            assert any(c.value == result.data_placement for c in app.caption)
            app.selectbox(key="server_method").set_value("fisher").run()
            app.selectbox(key="server_labels").set_value("cell_type").run()
            app.button(key="server_run").click().run()
            _, scores, _ = app.session_state["server_result"]
            assert set(scores.ranking[:10]) == set(range(10))
        finally:
            cluster.disconnect()


LOCAL_SCHEDULER_CHECK = """
import os
import sys

import numpy as np
from streamlit.testing.v1 import AppTest

from test_app_data import PAGE, server_folder
from core.data.stores import DATA_FOLDER_VARIABLE
from core.selection.qalpha import q_alpha
from pages.ui import cluster

if __name__ == "__main__":
    from pathlib import Path

    folder = Path(sys.argv[1])
    X, _ = server_folder(folder)
    os.environ[DATA_FOLDER_VARIABLE] = str(folder)
    os.environ[cluster.SCHEDULER_VARIABLE] = "local"
    os.environ["MALLOC_TRIM_THRESHOLD_"] = "65536"  # as an earlier nanny of this process leaves it
    try:
        app = AppTest.from_file(PAGE, default_timeout=180).run()
        said = " ".join(c.value for c in app.caption)
        assert not app.error, [e.value for e in app.error]
        assert "2 workers, 2 threads" in said, said
        client = cluster._CLIENTS["local"]
        environments = set(client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_")).values())
        assert environments == {None}, environments
        app.number_input(key="server_k").set_value(2).run()
        app.button(key="server_run").click().run()
        assert not app.exception and not app.error
        _, result, _ = app.session_state["server_result"]
        expected = q_alpha(X, 2, solver="power", random_state=0, max_iter=300, tol=1e-6)
        assert np.abs(result.alpha - expected.alpha).max() <= 1e-12
        assert result.data_placement.startswith("Held in the workers' memory"), result.data_placement
    finally:
        cluster.disconnect()
    print("local scheduler ok")
"""


@pytest.mark.slow  # starts worker processes: in a fresh interpreter, the slow tier (docs/testing.md)
def test_the_app_starts_its_own_local_cluster_without_the_nannys_slow_environment(tmp_path):
    """QALPHA_DASK_SCHEDULER=local: the app starts a LocalCluster of two worker processes
    (core.matrix.cluster.local_cluster), whose workers run without MALLOC_TRIM_THRESHOLD_ even where
    an earlier nanny left it in the app's environment, and Q-alpha runs there with NumPy's weights."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    script = tmp_path / "local_scheduler_check.py"
    script.write_text(LOCAL_SCHEDULER_CHECK)
    data = tmp_path / "data"
    data.mkdir()
    done = subprocess.run([sys.executable, str(script), str(data)], capture_output=True, text=True, timeout=300,
                          cwd=root, env={**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "tests"),
                                                                               str(root / "tests" / "app")])})
    assert done.returncode == 0 and "local scheduler ok" in done.stdout, done.stderr[-3000:]


def test_the_first_images_show_each_class():
    """Issue 76 (12): LFW's 200 pictures, faces first: the preview showed 16 faces and no non-face.
    It takes the classes in turn."""
    import json

    import numpy as np

    from core.data.dataset import Dataset

    rng = np.random.default_rng(0)
    images = Dataset(rng.random((60, 25)), labels=np.array(["face"] * 50 + ["non-face"] * 10), image_shape=(5, 5),
                     name="lfw.zip", kind="images", source="uploaded: lfw.zip")
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.session_state["dataset"] = images
    app.run()
    assert not app.exception
    spec = next(json.loads(c.proto.spec) for c in app.get("plotly_chart") if "preview" in c.proto.id)
    titles = [note["text"] for note in spec["layout"].get("annotations", [])]
    assert titles.count("face") == 8 and titles.count("non-face") == 8, titles
    assert "of each class" in spec["layout"]["title"]["text"]
