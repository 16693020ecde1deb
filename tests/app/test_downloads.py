"""What the pages offer to download reads back with pandas: the same shape, names and values,
whatever the names hold (commas, quotes, line breaks, non-ASCII)."""

import io
import re

import numpy as np
import pandas as pd
import pytest

from core import Dataset, load_dataset
from pages.ui.downloads import selected_data_csv, table_csv

AWKWARD = ["pixel (0, 25)", 'say "hi"', "naïve gène β", "two\nlines", "label", "sample", "1e5", " padded "]


def read(data: bytes, **options) -> pd.DataFrame:
    """As a user reads it back; ``float_precision="round_trip"`` gives every float exactly (pandas'
    default parser may differ in the last bit)."""
    return pd.read_csv(io.BytesIO(data), keep_default_na=False, dtype={"sample": str}, float_precision="round_trip",
                       **options)


def test_selected_data_round_trips_on_the_faces():
    """The faces' pixel names hold commas: the hand-made writer's header split into 1,984 fields
    over rows of 993 at the default K."""
    faces = load_dataset("warpAR10P")
    selected = np.arange(0, faces.n_features, 3)
    back = read(selected_data_csv(faces, selected))
    assert back.shape == (faces.n_samples, selected.size + 2)
    assert list(back.columns) == ["sample", "label", *[faces.feature_names[j] for j in selected]]
    assert np.array_equal(back.iloc[:, 2:].to_numpy(), faces.X[:, selected])  # every digit
    default = pd.read_csv(io.BytesIO(selected_data_csv(faces, selected)))  # pandas' default parser
    assert default.shape == back.shape and np.allclose(default.iloc[:, 2:].to_numpy(), faces.X[:, selected],
                                                       rtol=1e-14, atol=0)  # its fast parser: a few ulps
    assert back["label"].tolist() == faces.labels.tolist()


def test_selected_data_round_trips_awkward_names_and_values():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, len(AWKWARD))) * 10.0 ** rng.integers(-30, 30, (5, len(AWKWARD)))
    data = Dataset(X, labels=np.array(["a,b", 'q"uote', "é", "a,b", "é"]), feature_names_=tuple(AWKWARD),
                   sample_names_=tuple(f"s,{i}" for i in range(5)), name="awkward")
    back = read(selected_data_csv(data, np.arange(len(AWKWARD))))
    # duplicate names are kept side by side (pandas marks the second as .1 when it reads them)
    assert back.shape == (5, len(AWKWARD) + 2)
    assert list(back.columns[:2]) == ["sample", "label"] and back.columns[2] == "pixel (0, 25)"
    assert back.columns[3] == 'say "hi"' and back.columns[4] == "naïve gène β" and back.columns[5] == "two\nlines"
    assert back["sample"].tolist() == [f"s,{i}" for i in range(5)]
    assert back["label"].tolist() == ["a,b", 'q"uote', "é", "a,b", "é"]
    assert np.array_equal(back.iloc[:, 2:].to_numpy(dtype=float), X)


def test_tables_round_trip():
    columns = {"rank": np.arange(1, 4), "feature": np.array(["x, y", 'z"', "ü"]), "alpha": np.array([0.1, 1e-300, 2.0 / 3])}
    back = read(table_csv(columns))
    assert list(back.columns) == ["rank", "feature", "alpha"]
    assert back["rank"].tolist() == [1, 2, 3] and back["feature"].tolist() == ["x, y", 'z"', "ü"]
    assert np.array_equal(back["alpha"].to_numpy(), columns["alpha"])


def test_results_h5ad_round_trip_with_anndata():
    """The .h5ad download: the data, the sample and feature names as given (commas, quotes,
    non-ASCII), alpha, rank and selected per feature, and the settings."""
    import anndata

    from pages.ui.downloads import results_h5ad

    rng = np.random.default_rng(1)
    X = rng.standard_normal((6, len(AWKWARD)))
    data = Dataset(X, labels=np.array(["a,b", 'q"uote', "é", "a,b", "é", "é"]), feature_names_=tuple(AWKWARD))
    alpha = rng.random(len(AWKWARD))
    path = io.BytesIO(results_h5ad(data, alpha, 3, {"k": 2, "lam": 0.1, "criterion": "sum", "side_classes": "[]"}))
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "back.h5ad"
        file.write_bytes(path.getvalue())
        back = anndata.read_h5ad(file)
        assert back.shape == X.shape and np.array_equal(back.X, X)
        assert list(back.var_names) == AWKWARD and list(back.obs_names) == list(data.sample_names)
        assert np.array_equal(back.var["alpha"].to_numpy(), alpha)
        assert list(back.var["rank"]) == list(np.argsort(np.argsort(-alpha)) + 1)
        assert list(back.var["selected"]) == list(back.var["rank"] <= 3)
        assert list(back.obs["label"].astype(str)) == list(data.labels)
        assert back.uns["selection"]["k"] == 2 and back.uns["selection"]["criterion"] == "sum"


def test_a_figures_table_reads_back_as_the_numbers_it_draws():
    """The CSV behind a figure: a row per point of each curve (with its error bar) and per cell of
    each heat map, the names as given (awkward ones too) and every digit."""
    from core.plots import bar_figure, heatmap_table_figure, lambda_path_figure
    from pages.ui.downloads import figure_csv

    rng = np.random.default_rng(1)
    lams, weights = np.geomspace(1e-3, 10, 4), rng.random((4, 6))
    back = read(figure_csv(lambda_path_figure(lams, weights, AWKWARD[:6], current=0.1, n_top=3)))
    top = np.argsort(-weights.max(axis=0), kind="stable")[:3]
    assert back.shape == (3 * 4, 3) and back["trace"].unique().tolist() == [AWKWARD[j] for j in top]
    for j in top:
        rows = back[back["trace"] == AWKWARD[j]]
        assert np.array_equal(rows["x"].to_numpy(), lams) and np.array_equal(rows["y"].to_numpy(), weights[:, j])
    bars = read(figure_csv(bar_figure(["a,b", "é"], [0.5, 0.25], errors=[0.1, 0.2])))
    assert bars.to_dict("list") == {"trace": ["this run"] * 2, "x": ["a,b", "é"], "y": [0.5, 0.25], "y_error": [0.1, 0.2]}
    values = rng.random((2, 3))
    cells = read(figure_csv(heatmap_table_figure(['q"1', "r 2"], ["x,1", "y", "ζ"], values)))
    assert cells.shape == (6, 4)
    assert cells["y"].tolist() == ['q"1'] * 3 + ["r 2"] * 3 and cells["x"].tolist() == ["x,1", "y", "ζ"] * 2
    assert np.array_equal(cells["value"].to_numpy(), values.ravel())


def test_figures_export_as_png_at_print_resolution_and_as_svg():
    """kaleido draws the figure in the machine's Chromium: a PNG three times the export size
    (3,000 pixels across) and an SVG that holds the title as text."""
    from PIL import Image

    from core.plots import sorted_weights_figure
    from pages.ui.downloads import EXPORT_WIDTH, PNG_SCALE, figure_image, static_export_available

    assert static_export_available()  # CI installs Chromium and kaleido (requirements.txt)
    figure = sorted_weights_figure(np.sort(np.random.default_rng(0).random(50))[::-1], title="weights, sorted")
    png = Image.open(io.BytesIO(figure_image(figure, "png")))
    assert png.format == "PNG" and png.size[0] == EXPORT_WIDTH * PNG_SCALE
    svg = figure_image(figure, "svg").decode("utf-8")
    assert svg.lstrip().startswith("<svg") and "weights, sorted" in svg


class _Downloads:
    """What an AppTest run offers to download, as a click would fetch it: AppTest's media file
    manager (made anew for each run) is kept so that eager files are read and deferred ones
    generated after the run."""

    def __init__(self, monkeypatch):
        from streamlit.runtime.media_file_manager import MediaFileManager
        from streamlit.testing.v1 import app_test

        managers = self.managers = []

        class Kept(MediaFileManager):
            def __init__(self, storage):
                super().__init__(storage)
                managers.append(self)

        monkeypatch.setattr(app_test, "MediaFileManager", Kept)

    def fetch(self, button):
        """(file name, mime type, bytes) of a download button of the last run."""
        manager = self.managers[-1]
        proto = button.proto
        url = manager.execute_deferred(proto.deferred_file_id) if proto.HasField("deferred_file_id") else proto.url
        file = manager._storage.get_file(url.rsplit("/", 1)[-1])
        return file.filename, file.mimetype, file.content


def _awkward(data: Dataset) -> Dataset:
    """``data`` with feature names that break hand-made CSV writers and readers, and a name with
    spaces, brackets and an accent, as an upload may have (its downloads' names must be plain)."""
    from dataclasses import replace

    names = tuple(f"{AWKWARD[j % len(AWKWARD)]} #{j}" for j in range(data.n_features))
    return replace(data, feature_names_=names, name=f"{data.name} (main) [été].csv")


#: page -> (data set, session settings before the run, the Compare page's Run pressed)
PAGES = {"qalpha": ("wine", {"qa_downloads": True}), "kernel": ("digits", {}), "topographic": ("digits", {}), "haar": ("digits", {}),
         "slda": ("digits", {"spca_k": 5}), "compare": ("wine", {"cmp_methods": ["Q-alpha", "fisher"]}),
         "data": ("digits", {})}


@pytest.mark.parametrize("page", list(PAGES))
def test_every_download_of_every_page_reads_back(page, monkeypatch):
    """Each table a page offers (CSV, Parquet, .h5ad) reads back with one value per column in every
    row, feature names exactly as given (commas, quotes, line breaks, non-ASCII), and each JSON
    parses; PNGs open. Awkward names on every feature of the data set."""
    import json

    import anndata
    from PIL import Image
    from streamlit.testing.v1 import AppTest

    from conftest import ROOT, open_save_popovers

    fetched = _Downloads(monkeypatch)
    name, state = PAGES[page]
    data = _awkward(load_dataset(name))
    app = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=300)
    app.session_state["dataset"] = data
    for key, value in state.items():
        app.session_state[key] = value
    app.run()
    run = [button for button in app.button if button.label.startswith("Run ")]
    if run:
        run[0].click().run()
    open_save_popovers(app)  # the figures' tables too
    assert not app.exception and not app.error, [e.value for e in [*app.exception, *app.error]]
    names = set(data.feature_names)
    seen = set()
    for button in app.get("download_button"):
        if button.key and button.key.endswith(("_as_png", "_as_svg")):
            continue  # kaleido's figures: tested once in test_figures_export_as_png_at_print_resolution_and_as_svg
        file_name, mime, content = fetched.fetch(button)
        assert re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]*", file_name), file_name  # plain and portable
        assert file_name.startswith(f"{name}_main_ete-"), file_name
        kind = file_name.rsplit(".", 1)[-1]
        seen.add(kind)
        if kind == "csv":
            back = pd.read_csv(io.BytesIO(content), keep_default_na=False, engine="python", on_bad_lines="error")
            assert len(back.columns) == len(set(back.columns)) or "selected" in file_name, file_name
            for column in ("feature", "features"):
                if column in back and page not in ("haar",):
                    assert set(back[column]) <= names, (file_name, set(back[column]) - names)
            if "selected" in file_name:
                assert set(back.columns[2:]) <= names and list(back.columns[:2]) == ["sample", "label"]
                assert np.array_equal(back.iloc[:, 2:].to_numpy(dtype=float),
                                      data.X[:, [data.feature_names.index(c) for c in back.columns[2:]]])
        elif kind == "parquet":
            back = pd.read_parquet(io.BytesIO(content))
            assert set(back["feature"]) <= names and len(back) == back["method"].nunique() * data.n_features
        elif kind == "json":
            json.loads(content)
        elif kind == "png":
            assert Image.open(io.BytesIO(content)).format == "PNG"
        elif kind == "h5ad":
            import tempfile
            from pathlib import Path

            with tempfile.TemporaryDirectory() as folder:
                (Path(folder) / "back.h5ad").write_bytes(content)
                back = anndata.read_h5ad(Path(folder) / "back.h5ad")
            assert list(back.var_names) == list(data.feature_names) and np.array_equal(back.X, data.X)
        else:
            raise AssertionError(f"a download nobody reads back: {file_name} ({mime})")
    assert "csv" in seen, seen


def test_an_h5ad_upload_downloads_with_its_layouts_and_its_label_columns_name():
    """Issue 76 (9): the .h5ad download dropped the file's own layouts and renamed its
    bulk_labels to label. The fixture (scanpy's pbmc68k_reduced layout) goes in and comes back out
    with both."""
    import tempfile
    from pathlib import Path

    import anndata

    from core.data.tables import load_table
    from pages.ui.downloads import results_h5ad

    fixture = Path(__file__).parents[1] / "fixtures" / "legacy_pbmc.h5ad"
    original = anndata.read_h5ad(fixture)
    data = load_table("pbmc.h5ad", fixture.read_bytes(), label_column="bulk_labels")
    assert data.meta["table"]["label_column"] == "bulk_labels"
    written = results_h5ad(data, np.linspace(1, 0, data.n_features), 5, {"k": 3})
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "back.h5ad"
        file.write_bytes(written)
        back = anndata.read_h5ad(file)
        assert "label" not in back.obs and list(back.obs["bulk_labels"].astype(str)) == \
            list(original.obs["bulk_labels"].astype(str))
        assert set(data.meta["layouts"]) <= set(back.obsm)
        for name in data.meta["layouts"]:
            np.testing.assert_allclose(back.obsm[name], np.asarray(original.obsm[name])[:, :2])


def test_opening_a_save_popover_starts_the_exporter_and_says_so_until_it_is_up(monkeypatch):
    """Issue 76: the first PNG took 3.7 s (kaleido's browser started on the click). The popover's
    opening starts it in the background, and the popover says it is starting until it is up."""
    import time

    from streamlit.testing.v1 import AppTest

    from conftest import ROOT, open_save_popovers
    from pages.ui import downloads

    import threading

    for thread in threading.enumerate():  # a start an earlier test began would write to the list below
        if thread.name == "start-exporter":
            thread.join(timeout=60)
    monkeypatch.setattr(downloads, "_export_server", [])  # this process's exporter, as if never started
    started = []
    monkeypatch.setattr(downloads, "_started_exporter", lambda: (time.sleep(0.5), started.append(1),
                                                                 downloads._export_server.append(True)))
    app = AppTest.from_file(str(ROOT / "pages" / "kernel.py"), default_timeout=300)
    app.session_state["dataset"] = load_dataset("wine")
    app.run()
    open_save_popovers(app)
    assert any("writer is starting" in caption.value for caption in app.caption)
    deadline = time.monotonic() + 10
    while not downloads.exporter_ready() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert downloads.exporter_ready() and started == [1]  # started once, for every popover opened
    app.run()
    assert not any("writer is starting" in caption.value for caption in app.caption)
