"""Each page's "Python" expander, pasted into a notebook, recomputes what the page shows: the
snippet runs here and its result is compared with the page's (its figures' arrays, its tables)."""

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT, plotly_array, run_page_snippet
from core import load_dataset, load_images, load_table, to_feature_family

pytestmark = pytest.mark.xdist_group("snippets")


def run_page(page: str, dataset, **state) -> AppTest:
    app = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=300)
    app.session_state["dataset"] = dataset
    for key, value in state.items():
        app.session_state[key] = value
    app.run()
    assert not app.exception and not app.error, [e.value for e in [*app.exception, *app.error]]
    return app


def chart_z(app, key: str, trace: int = 0) -> np.ndarray:
    """The values of a trace of the page's chart with this key (its element id holds the key)."""
    chart = next(chart for chart in app.get("plotly_chart") if key in chart.proto.id)
    return plotly_array(json.loads(chart.proto.spec)["data"][trace]["z"])


def test_data_snippet_loads_a_bundled_set_and_its_haar_features():
    digits = load_dataset("digits")
    namespace = run_page_snippet(run_page("data", digits), "load_dataset(")
    assert np.array_equal(namespace["data"].X, digits.X) and np.array_equal(namespace["data"].labels, digits.labels)
    haar = to_feature_family(digits, "haar", levels=2)
    haar = replace(haar, meta={**haar.meta, "family_options": dict(family="haar", options=dict(levels=2))})
    namespace = run_page_snippet(run_page("data", haar), "to_feature_family(")
    assert np.array_equal(namespace["data"].X, haar.X) and namespace["data"].feature_names == haar.feature_names


def test_data_snippet_reads_the_users_own_table_and_images_with_the_choices_made(tmp_path, monkeypatch):
    """An upload's first line reads the file as the Data page read it: a genes-as-rows table with a
    label row and awkward names, and a ZIP of images labelled by folder."""
    import io
    import zipfile

    from PIL import Image

    genes = ["gène, α", 'say "x"', "g3"]
    frame = pd.DataFrame([["a", "b", "a", "b"], *np.arange(12.0).reshape(3, 4).tolist()],
                         index=["cell type", *genes], columns=["s1", "s2", "s3", "s4"])
    frame.to_csv(tmp_path / "my table.csv")
    options = dict(label_column="cell type", orientation="samples_as_columns", missing="refuse", header=True)
    table = load_table("my table.csv", (tmp_path / "my table.csv").read_bytes(), **options)
    table = replace(table, meta={**table.meta, "loaded_with": dict(function="load_table", files=["my table.csv"],
                                                                    options=options)})
    app = run_page("data", table)
    monkeypatch.chdir(tmp_path)
    namespace = run_page_snippet(app, "load_table(")
    assert np.array_equal(namespace["data"].X, table.X) and list(namespace["data"].feature_names) == genes
    assert namespace["data"].labels.tolist() == ["a", "b", "a", "b"]

    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        for person in ("ann", "bob"):
            for index in range(3):
                image = io.BytesIO()
                Image.fromarray(np.full((6, 5), 40 * index + (100 if person == "bob" else 0), np.uint8)).save(image, "PNG")
                zipped.writestr(f"{person}/{index}.png", image.getvalue())
    (tmp_path / "faces.zip").write_bytes(archive.getvalue())
    image_options = dict(labels_from="folder", prefix_separator="_", strict_size=False)
    images = load_images([("faces.zip", archive.getvalue())], **image_options)
    images = replace(images, meta={**images.meta, "loaded_with": dict(function="load_images", files=["faces.zip"],
                                                                      options=image_options)})
    namespace = run_page_snippet(run_page("data", images), "load_images(")
    assert np.array_equal(namespace["data"].X, images.X) and namespace["data"].labels.tolist() == images.labels.tolist()


def test_data_snippet_transforms_the_values_as_the_data_page_did():
    from core import transform_values

    prepared = transform_values(load_dataset("TOX-171"), normalise_total=True, log1p=True, n_most_variable=300,
                                standardise=True)
    namespace = run_page_snippet(run_page("data", prepared), "transform_values(")
    assert np.array_equal(namespace["data"].X, prepared.X) and namespace["data"].name == prepared.name
    assert namespace["data"].feature_names == prepared.feature_names


def test_topographic_snippet_gives_the_pages_alphas():
    digits = load_dataset("digits")
    app = run_page("topographic", digits, topo_hover=True)  # the maps as figures: their expander open
    namespace = run_page_snippet(app, "topographic_map(")
    for r in range(2):
        assert np.allclose(namespace["topo"].alphas[r].reshape(digits.image_shape), chart_z(app, f"round_{r}"),
                           rtol=0, atol=1e-12)


def test_haar_snippet_gives_the_pages_weights():
    """The page's map of where alpha's weight lies, drawn again from the snippet's alpha."""
    from core.plots import weight_overlay_figure

    digits = load_dataset("digits")
    app = run_page("haar", digits, haar_hover=True)  # the map as a figure: its expander open
    namespace = run_page_snippet(app, "to_haar(")
    basis = namespace["haar"].family.basis
    again = weight_overlay_figure(namespace["mean_image"], basis.pixel_map(namespace["result"].alpha), log_scale=True)
    assert np.allclose(np.asarray(again.data[-1].z, dtype=float), chart_z(app, "alpha_pixels", trace=-1), rtol=0, atol=1e-12,
                       equal_nan=True)


def test_haar_snippet_with_uploaded_side_images_reads_them_and_gives_the_pages_weights(tmp_path, monkeypatch):
    """Side images uploaded on the Data page (here the digit 9s as a table of pixels, a name with
    a comma): the page transforms them into its wavelet basis; the snippet reads the same file
    with load_side_data and gets the page's weights."""
    from core import load_side_data
    from core.plots import weight_overlay_figure

    digits = load_dataset("digits")
    nines = digits.X[digits.labels == 9]
    name = "side images, 9s.csv"
    (tmp_path / name).write_text(pd.DataFrame(nines, columns=[f"p{j}" for j in range(64)]).to_csv(index=False))
    side = load_side_data([(name, (tmp_path / name).read_bytes())], like=digits)
    side = replace(side, meta={**side.meta, "loaded_with": dict(function="load_side_data", files=[name], options={})})
    app = run_page("haar", digits, side_dataset=side, haar_side_source="uploaded side data", haar_hover=True)
    assert app.radio(key="haar_side_source").options == ["side classes", "uploaded side data"]
    assert not [m for m in app.multiselect if m.key == "haar_side"]  # no side classes to choose
    monkeypatch.chdir(tmp_path)
    namespace = run_page_snippet(app, "to_haar(")
    assert np.allclose(namespace["side"], namespace["haar"].family.basis.transform(nines), rtol=0, atol=1e-12)
    basis = namespace["haar"].family.basis
    again = weight_overlay_figure(namespace["mean_image"], basis.pixel_map(namespace["result"].alpha), log_scale=True)
    assert np.allclose(np.asarray(again.data[-1].z, dtype=float), chart_z(app, "alpha_pixels", trace=-1), rtol=0,
                       atol=1e-12, equal_nan=True)


def test_sparse_lda_and_pca_snippets_give_the_pages_subset_and_eigenvector():
    wine = load_dataset("wine")
    app = run_page("slda", wine, slda_k=4)
    namespace = run_page_snippet(app, "greedy_slda(")
    shown = app.dataframe[0].value["feature"].tolist()
    assert shown == [wine.feature_names[j] for j in namespace["subset"]]
    digits = load_dataset("digits")
    app = run_page("slda", digits, spca_k=9, spca_hover=True)  # the eigenface as a figure: its expander open
    namespace = run_page_snippet(app, "greedy_spca(")
    assert np.allclose(namespace["vector"].reshape(digits.image_shape), chart_z(app, "eigenface"), rtol=0, atol=1e-12)


def test_compare_snippet_gives_the_pages_held_out_scores():
    """Q-alpha with the Q-alpha page's side classes and λ, and Fisher: the best held-out k-means
    accuracy and its spread, as the table shows them."""
    wine = load_dataset("wine")
    app = AppTest.from_file(str(ROOT / "pages" / "compare.py"), default_timeout=300)
    app.session_state["dataset"] = wine
    for key, value in dict(qa_side_mode="side classes", qa_side_classes=[2], qa_lambda=0.3,
                           cmp_methods=["Q-alpha", "fisher"]).items():
        app.session_state[key] = value
    app.run()
    next(button for button in app.button if button.label.startswith("Run ")).click().run()
    assert not app.exception
    namespace = run_page_snippet(app, "held_out_curves(")
    table = app.dataframe[0].value.set_index("method")
    for row in table.itertuples():  # the reference (all features) first, then the methods best first
        curves = namespace["curves"]["Q-alpha" if row.Index.startswith("Q-alpha") else "fisher"]
        at = -1 if row.Index.endswith("(reference)") else int(np.argmax(curves["accuracy"]))
        assert np.isclose(row[2], curves["accuracy"][at], rtol=0, atol=1e-12)
        assert np.isclose(row[3], curves["accuracy_sd"][at], rtol=0, atol=1e-12)


def test_paper_figures_snippet_reproduces_the_pages_comparison():
    app = AppTest.from_file(str(ROOT / "pages" / "figures.py"), default_timeout=300).run()
    app.selectbox[0].set_value("topographic").run()
    app.button(key="run_experiment").click().run()
    assert not app.exception and not app.error
    namespace = run_page_snippet(app, "run_experiment(")
    pd.testing.assert_frame_equal(namespace["result"].comparison.astype(str).reset_index(drop=True),
                                  app.table[0].value.reset_index(drop=True), check_dtype=False)
