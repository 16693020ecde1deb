"""The Q-alpha page under AppTest: renders on images, genes and synthetic data; sliders act."""

import base64
import json
from pathlib import Path
from dataclasses import replace

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.data.bundled import load_dataset
from conftest import ROOT, plotly_array, run_page_snippet
from core.data.generators import weston_linear
from core.plots import GROUP_COLOURS

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "qalpha.py")


def run_page(dataset=None):
    app = AppTest.from_file(PAGE, default_timeout=120)
    if dataset is not None:
        app.session_state["dataset"] = dataset
    return app.run()


def scrubber(app) -> dict:
    """What the page hands the browser-drawn K and λ (pages/ui/scrubber.py): its K, its λ values
    and index, and the weights at each λ, decoded as the browser decodes them."""
    [data] = [found for element in app.get("bidi_component") if element.proto.json
              and "weights" in (found := json.loads(element.proto.json))]
    data["weights"] = np.frombuffer(base64.b64decode(data["weights"]), dtype="<f4").reshape(len(data["lams"]), data["n"])
    return data


def move_k(app, k: int):
    """K moved in the browser and reported once the hand stops (the scrubber's callback does this)."""
    app.session_state["qa_top_k"] = k
    app.session_state["qa_top_k_set"] = True
    return app.run()


def move_lambda(app, lam: float):
    """λ moved: on the computed λ path in the browser and reported once the hand stops, else with
    the server's λ slider; either way the page's λ becomes ``lam``."""
    app.session_state["qa_lambda"] = lam
    return app.run()


def set_k_and_lambda_by_hand(app):
    """With side information the page chooses k and λ from the data; tests that move them turn that off."""
    return app.toggle(key="qa_auto").set_value(False).run()


def open_hover_map(app):
    """The weights map with each pixel's weight under the pointer opened (as a click on its
    expander does): it is drawn only then, beside the picture."""
    app.session_state["overlay_hover"] = True
    return app.run()


def open_per_class(app):
    """The per-class expander opened (as a click on it does): its content is computed only then."""
    app.session_state["qa_per_class"] = True
    return app.run()


def test_convergence_history_is_drawn_when_its_expander_opens():
    app = run_page(load_dataset("wine"))
    titles = lambda: [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in app.get("plotly_chart")]
    assert "Objective per iteration" not in titles()
    app.session_state["qa_convergence"] = True
    app.run()
    history = next(json.loads(c.proto.spec) for c in app.get("plotly_chart")
                   if json.loads(c.proto.spec)["layout"]["title"]["text"] == "Objective per iteration")
    assert len(plotly_array(history["data"][0]["y"])) == int(app.metric[1].value)  # one point per iteration


def sorted_alpha(app):
    """The weights the browser draws sorted, at the scrubber's λ."""
    data = scrubber(app)
    return np.sort(data["weights"][data["lam_index"]].astype(float))[::-1]


@pytest.mark.parametrize("dataset", [None, load_dataset("colon"), weston_linear(120, random_state=0)],
                         ids=["AR faces", "colon genes", "Weston synthetic"])
def test_renders_without_exception(dataset):
    app = run_page(dataset)
    assert not app.exception and not app.error
    assert [m.label for m in app.metric][:2] == ["Sparsity gap", "Iterations"]
    assert sorted_alpha(app).size == app.session_state["dataset"].n_features
    assert scrubber(app)["k"] == app.session_state["qa_top_k"]


def test_weston_selection_shows_the_relevant_features_first():
    app = run_page(weston_linear(200, random_state=0))
    top = app.dataframe[0].value["feature"].tolist()[:3]
    assert set(top) == {"relevant 1", "relevant 2", "relevant 3"}


def test_moving_lambda_changes_alpha():
    app = run_page(load_dataset("wine"))
    side_radio = next(r for r in app.radio if r.label == "Side information")
    side_radio.set_value("side classes").run()
    set_k_and_lambda_by_hand(app)
    assert not app.exception and not app.error
    move_lambda(app, 0.01)
    small = sorted_alpha(app)
    move_lambda(app, 10.0)
    large = sorted_alpha(app)
    assert not app.exception
    assert np.abs(small - large).max() > 1e-3


def test_empty_side_selection_is_a_message_not_a_traceback():
    app = run_page(load_dataset("wine"))
    next(r for r in app.radio if r.label == "Side information").set_value("side classes").run()
    app.multiselect[0].set_value([]).run()
    assert not app.exception
    assert "Choose at least one side class" in app.error[0].value


def test_supervised_mode():
    app = run_page(weston_linear(200, random_state=1))
    app.toggle[0].set_value(True).run()
    assert not app.exception and not app.error
    top = app.dataframe[0].value["feature"].tolist()[:3]
    assert set(top) == {"relevant 1", "relevant 2", "relevant 3"}


@pytest.mark.parametrize("family, options", [("haar", dict(levels=3)),
                                             ("haarlike", dict(stride=4, scale_step=4, min_cell=4))])
def test_feature_families_draw_back_on_the_image(family, options):
    from core.features.families import to_feature_family
    app = run_page(to_feature_family(load_dataset("warpAR10P"), family, **options))
    assert not app.exception and not app.error
    # the sorted weights in the browser (no image there: a feature is not a pixel), the top features'
    # weights drawn back on the images (the family's pixel map) as a picture; the figures wait for
    # their expanders
    assert scrubber(app)["image"] is None and not app.get("plotly_chart")
    captions = [caption for picture in app.get("image") for caption in picture.captions]
    assert len(captions) == 1 and captions[0].startswith("alpha of the top") and \
        "in pixel space, over the mean image. Under it the colour bar: alpha " in captions[0], captions
    assert captions[0].endswith("(right, black)")
    # issue 60's weight map: the opacity and the image under the weights are the user's
    drawn = app.get("image")[0].proto.imgs[0].url
    app.slider(key="overlay_opacity").set_value(0.0).run()
    assert app.get("image")[0].proto.imgs[0].url != drawn
    app.selectbox(key="overlay_background").set_value(3).run()
    assert f"over {app.session_state['dataset'].sample_names[3]}. Under it" in app.get("image")[0].captions[0]
    app.slider(key="overlay_opacity").set_value(0.6).run()
    app.selectbox(key="overlay_background").set_value("mean image").run()
    open_hover_map(app)
    titles = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in app.get("plotly_chart")]
    assert len(titles) == 1 and titles[0].startswith("alpha of the top") and \
        titles[0].endswith("in pixel space, over the mean image")
    overlay = json.loads(app.get("plotly_chart")[0].proto.spec)["data"]
    assert len(overlay) >= 2 and overlay[-1]["type"] == "heatmap"  # the mean image and the weights over it


def open_downloads(app):
    """The "Download the result" popover opened (as a click on it does): its buttons are drawn
    only then."""
    app.session_state["qa_downloads"] = True
    return app.run()


def test_downloads_offered():
    app = open_downloads(run_page())
    labels = [b.label for b in app.get("download_button")]
    assert "Weights and ranking (CSV)" in labels and "Selection mask (PNG)" in labels
    assert any(label.startswith("Data, ") for label in labels)


def test_downloads_and_code_are_drawn_only_once_opened():
    """A λ or K step reruns the result's part of the page: the five download buttons and the
    snippet are drawn only once their popover and expander are opened."""
    app = run_page()
    assert not app.get("download_button") and not app.code
    app.session_state["qa_snippet"] = True
    app = open_downloads(app)
    labels = [b.label for b in app.get("download_button")]
    assert len(labels) == 5 and "Data and results (.h5ad)" in labels
    assert any("QAlphaParameters(" in block.value for block in app.code)


def test_mask_png_round_trip():
    import io

    from PIL import Image

    from pages.ui.downloads import mask_png
    mask = np.zeros((4, 3), dtype=bool)
    mask[1, 2] = True
    image = np.asarray(Image.open(io.BytesIO(mask_png(mask))))
    assert image.shape == (4, 3) and image[1, 2] == 255 and image.sum() == 255


def test_view_is_written_to_and_restored_from_the_url():
    app = run_page(load_dataset("wine"))
    app.radio(key="qa_side_mode").set_value("side classes").run()
    set_k_and_lambda_by_hand(app)
    app.number_input(key="qa_k").set_value(3).run()
    assert not app.exception and not app.error
    link = dict(app.query_params)
    assert json.loads(link["qa_k"]) == 3 and json.loads(link["qa_side_mode"]) == "side classes"
    # a fresh session opened with that link shows the same view, data set included
    copy = AppTest.from_file(PAGE, default_timeout=120)
    for key, value in link.items():
        copy.query_params[key] = value
    copy.run()
    assert not copy.exception and not copy.error
    assert copy.number_input(key="qa_k").value == 3
    assert copy.radio(key="qa_side_mode").value == "side classes"
    assert "wine" in " ".join(m.value for m in copy.sidebar.markdown) or copy.session_state["dataset"].name == "wine"


def test_invalid_link_values_are_ignored_with_a_note():
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.query_params["data"] = "no-such-set"
    app.query_params["qa_k"] = "9999"
    app.query_params["qa_criterion"] = '"median"'
    app.query_params["qa_seed"] = "not json"
    app.run()
    assert not app.exception and not app.error
    notes = " ".join(i.value for i in app.info)
    # named as the page labels them, with the link's value; never by internal key
    assert "k — number of clusters (9999)" in notes and 'Criterion ("median")' in notes
    assert "random_state (not json)" in notes and "qa_" not in notes
    assert app.session_state["dataset"].name == "warpAR10P"
    assert app.number_input(key="qa_k").value <= 50


def test_stop_keeps_the_page_from_computing_until_resume():
    app = AppTest.from_file(PAGE, default_timeout=120)
    # data no other test runs: the runs' results are kept per process, and a kept one would be shown
    app.session_state["dataset"] = weston_linear(120, random_state=17)
    app.session_state["qalpha_stopped"] = True  # as Stop leaves it when pressed during the first run
    app.run()
    assert not app.exception
    assert any("Stopped" in w.value and "Nothing was computed yet" in w.value for w in app.warning)
    assert not app.get("bidi_component")  # nothing was computed
    app.button(key="qalpha_resume").click().run()
    assert not app.exception and app.get("bidi_component")
    assert not any(b.label == "Stop" for b in app.button)  # no Stop while nothing runs
    before = sorted_alpha(app)
    app.session_state["qalpha_stopped"] = True  # a Stop during the next run
    app.number_input(key="qa_k").set_value(3).run()
    assert any("Stopped" in w.value and "last complete" in w.value for w in app.warning)
    assert np.array_equal(sorted_alpha(app), before)  # the last complete result stays


def test_kmeans_scores_the_selection_on_labelled_data():
    app = run_page(weston_linear(200, random_state=0))
    labels = [m.label for m in app.metric]
    assert any(label.startswith("Accuracy, top") for label in labels) and "Accuracy, all features" in labels
    move_k(app, 3)
    top3 = next(m for m in app.metric if m.label == "Accuracy, top 3")
    everything = next(m for m in app.metric if m.label == "Accuracy, all features")
    assert float(top3.value) > float(everything.value)  # Weston: the 3 relevant features cluster far better


def test_uploaded_side_data_is_offered_only_for_matching_features():
    faces = load_dataset("warpAR10P")
    main = faces.subset_samples(faces.labels <= 5)
    other = faces.subset_samples(faces.labels == 6)
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.session_state["dataset"] = main
    app.session_state["side_dataset"] = other
    app.run()
    assert "uploaded side data" in app.radio(key="qa_side_mode").options
    plain = sorted_alpha(app)
    app.radio(key="qa_side_mode").set_value("uploaded side data").run()
    assert not app.exception and not app.error
    assert not np.allclose(sorted_alpha(app), plain)  # the side data changed the weights
    app.session_state["dataset"] = load_dataset("Yale")  # 1,024 features: the side set does not fit
    app.run()
    assert "uploaded side data" not in app.radio(key="qa_side_mode").options
    assert app.session_state["side_dataset"] is not None  # kept for when the faces come back


def shown_selection(app):
    """What the page selects: the K the browser is given and draws (count, band, marked pixels),
    the K of the server's views (k-means), and the first of the selected features by the server's
    ranking against the browser's order of its weights."""
    data = scrubber(app)
    k = data["k"]
    kmeans = next(int(m.label.rsplit(" ", 1)[1]) for m in app.metric if m.label.startswith("Accuracy, top"))
    ranking = app.dataframe[-1].value["feature"].tolist()
    browser_order = np.argsort(-data["weights"][data["lam_index"]], kind="stable")
    names = [data["names"][j] for j in browser_order[:min(k, 10)]]
    assert names == ranking[:len(names)], (names, ranking[:len(names)])
    return k, kmeans, app.session_state["qa_top_k"]


def test_count_title_and_marked_pixels_agree_through_lambda_and_k_moves():
    app = run_page()
    app.radio(key="qa_side_mode").set_value("side classes").run()
    set_k_and_lambda_by_hand(app)
    gap_counts = []
    for lam in (0.01, 1.0, 0.001):
        move_lambda(app, lam)
        k, kmeans, state = shown_selection(app)
        assert k == kmeans == state  # K follows the gap, which moves with lambda
        data = scrubber(app)
        assert data["lams"][data["lam_index"]] == lam and len(data["lams"]) == 25  # the path, computed at once
        gap_counts.append(k)
    assert len(set(gap_counts)) > 1
    move_k(app, 25)
    for lam in (0.1, 3.0):
        move_lambda(app, lam)
        assert shown_selection(app) == (25, 25, 25)  # set by the user: it stays
    assert any("set by you" in caption.value for caption in app.caption)
    follow = next(b for b in app.button if b.label == "Default K")
    follow.click().run()
    k, kmeans, state = shown_selection(app)
    assert k == kmeans == state != 25


def sorted_weights_spec(app) -> dict:
    """The sorted weights as a Plotly figure, drawn once its expander is opened."""
    app.session_state["qa_weights_figure"] = True
    app.run()
    return next(json.loads(c.proto.spec) for c in app.get("plotly_chart")
                if json.loads(c.proto.spec)["layout"]["title"]["text"].startswith("Sorted weights"))


def test_no_clear_gap_on_smooth_weights_and_a_gap_on_planted_features():
    faces = run_page()
    assert faces.metric[0].value == "none"
    assert any("No clear sparsity gap" in c.value for c in faces.caption)
    data = scrubber(faces)
    assert data["gaps"] == [0] and data["defaults"] == [data["k"]]  # the browser's dashed line: the default K
    spec = sorted_weights_spec(faces)
    assert "no clear gap" in spec["layout"]["title"]["text"]
    # the default rule's dotted line, named by its rule; no gap's cut (the top-K band is drawn by
    # the browser: test_a_k_step_moves_the_band_and_leaves_the_figure)
    kinds = {(shape["type"], shape.get("line", {}).get("dash")) for shape in spec["layout"]["shapes"]}
    assert kinds == {("line", "dot")}, kinds
    named = [note["text"] for note in spec["layout"]["annotations"]]
    assert any(text.startswith("50% of the squared weight: ") for text in named), named
    assert str(data["k"]) == named[-1].rsplit(": ", 1)[1]  # K is the rule's count
    planted = run_page(weston_linear(200, random_state=0))
    assert planted.metric[0].value == "3" and scrubber(planted)["k"] == 3 and scrubber(planted)["gaps"] == [3]
    spec = sorted_weights_spec(planted)
    assert any(shape["type"] == "line" for shape in spec["layout"]["shapes"])


def test_settings_that_do_not_apply_to_a_new_data_set_fall_back_with_a_note():
    app = run_page()
    app.number_input(key="qa_k").set_value(40).run()
    app.radio(key="qa_side_mode").set_value("side classes").run()
    set_k_and_lambda_by_hand(app)
    app.number_input(key="qa_k").set_value(40).run()
    app.multiselect(key="qa_side_classes").set_value([7, 8]).run()
    assert not app.error
    wine = load_dataset("wine")  # 3 classes, none of them 7 or 8
    app.session_state["dataset"] = wine
    app.run()
    assert not app.exception and not app.error
    notes = " ".join(i.value for i in app.info)
    last = wine.classes[-1].item()
    assert "Side classes: 7, 8" in notes and f"now {last}" in notes
    # k set for the faces' 10 people is not kept for 3 cultivars: it falls back to the default
    assert "k — number of clusters: 40 was chosen for warpAR10P; for wine it is now 2" in notes
    assert app.number_input(key="qa_k").value == 2
    app.number_input(key="qa_k").set_value(3).run()
    assert app.multiselect(key="qa_side_classes").value == [last]
    assert app.radio(key="qa_side_mode").value == "side classes" and app.get("bidi_component")
    app.session_state["dataset"] = weston_linear(20, random_state=0)  # 20 samples: k at most 19
    app.run()
    assert not app.exception and not app.error
    assert "k — number of clusters: 3 was chosen for wine; for Weston linear it is now 2" in " ".join(
        i.value for i in app.info)
    assert app.number_input(key="qa_k").value == 2
    app.run()
    assert not app.info  # said once


def test_a_k_set_by_the_user_on_another_data_set_follows_the_default_rule_with_a_note():
    app = run_page()
    move_k(app, 500)
    app.session_state["dataset"] = load_dataset("wine")  # 13 features
    app.run()
    assert not app.exception and not app.error
    assert ("K — top features: 500 was chosen for warpAR10P; for wine it follows the default rule again."
            in " ".join(i.value for i in app.info))
    shown = scrubber(app)["k"]
    assert shown <= 13 and app.session_state["qa_top_k"] == shown
    app.run()
    assert not app.info  # said once


def test_lambda_path_is_computed_at_once_where_cheap_and_then_looked_up(monkeypatch):
    """Side classes on wine, λ set by hand: the λ path (25 values) is cheap, so it follows the first
    result unasked; the page draws it, the browser gets every λ's weights, and a λ step shows the
    path's result, equal to the run the page made before at that λ."""
    from pages.ui import estimates, runs

    wine = load_dataset("wine")
    app = run_page(wine.subset_samples(np.arange(170)))  # data no other test's path was computed for
    monkeypatch.setattr(estimates, "AUTO_PATH_SECONDS", 0.0)  # as if long: the button, with its estimate
    next(r for r in app.radio if r.label == "Side information").set_value("side classes").run()
    set_k_and_lambda_by_hand(app)
    move_lambda(app, 0.3)
    cold = sorted_alpha(app)
    assert not has_path_figure(app) and scrubber(app)["lams"] == [0.3]
    button = next(b for b in app.button if b.label.startswith("Compute the λ path"))
    assert button.label.startswith("Compute the λ path (25 values of λ, about ")
    calls = []
    real = runs.q_alpha_path
    monkeypatch.setattr(runs, "q_alpha_path", lambda *a, **k: calls.append(k["lams"]) or real(*a, **k))
    monkeypatch.setattr(estimates, "AUTO_PATH_SECONDS", 4.0)  # cheap, as it is: computed unasked
    app.run()
    assert not app.exception and not app.error and len(calls) == 1
    assert has_path_figure(app) == 10  # the weights of 10 features
    assert not [b for b in app.button if b.label.startswith("Compute the λ path")]  # nothing left to compute
    data = scrubber(app)
    assert len(data["lams"]) == 25 and data["lams"][data["lam_index"]] == 0.3  # every λ in the browser
    gap = next(json.loads(c.proto.spec) for c in app.get("plotly_chart")
               if json.loads(c.proto.spec)["layout"]["title"]["text"].startswith("How clearly the weights break"))
    assert len(plotly_array(gap["data"][0]["y"])) == 25  # the gap's strength at every λ of the path, beside it
    # the current λ is a line the browser draws over the figure: the figure itself does not change
    # with λ (a changed one is drawn from scratch), the marker carries λ
    figure = path_figure_spec(app)
    assert not figure["layout"].get("shapes")
    assert x_marks(app, "lambda_path") == {"chart": "lambda_path", "line": 0.3, "band": None, "label": None}
    move_lambda(app, 1.0)
    assert path_figure_spec(app) == figure and x_marks(app, "lambda_path")["line"] == 1.0
    # the figure a user saves has the line drawn in it (its buttons write it when clicked: the
    # figure is the one their callables were given)
    saved = saved_figure(app, "lambda_path", monkeypatch)
    assert [(shape.type, shape.x0) for shape in saved.layout.shapes] == [("line", 1.0)]
    move_lambda(app, 0.3)
    assert len(calls) == 1  # the path was not computed again: the steps were lookups
    assert has_path_figure(app) and np.allclose(sorted_alpha(app), cold, atol=1e-4)


def path_figure_spec(app) -> dict:
    return next(json.loads(c.proto.spec) for c in app.get("plotly_chart")
                if json.loads(c.proto.spec)["layout"]["title"]["text"].startswith("Weights along λ"))


def saved_figure(app, chart: str, monkeypatch):
    """The figure the Save buttons of the chart keyed ``chart`` write, once its popover is opened
    (as a click on it does): the one their callables were given, caught as the page passes them."""
    import streamlit as st

    from conftest import open_save_popovers

    kept = {}
    download_button = st.download_button

    def keeping(label, data, **options):
        kept[options.get("key")] = data
        return download_button(label, data, **options)

    monkeypatch.setattr(st, "download_button", keeping)
    open_save_popovers(app)
    return kept[f"{chart}_as_csv"].args[0]


def x_marks(app, chart: str) -> dict:
    """The data of the marks the browser draws over a chart (pages/ui/widgets.chart): the current
    λ's line on the λ path, the top-K band on the sorted weights."""
    marks = [json.loads(c.proto.json) for c in app.get("bidi_component") if c.proto.component_name.endswith("x_marks")]
    marks = [data for data in marks if data["chart"] == chart]
    assert len(marks) == 1
    return marks[0]


def test_a_k_step_moves_the_band_and_leaves_the_figure(monkeypatch):
    """The top-K band over the sorted weights is drawn by the browser: a K step changes its data
    and not the figure (a changed figure is a new chart, drawn from scratch and zoomed out); the
    figure the Save buttons write has the band in it, at the K shown."""
    app = run_page()
    figure = sorted_weights_spec(app)
    k = int(app.session_state["qa_top_k"])
    assert x_marks(app, "sorted_alpha") == {"chart": "sorted_alpha", "line": None, "band": [0.5, k + 0.5],
                                            "label": f"top {k}"}
    move_k(app, 25)
    assert not app.exception and sorted_weights_spec(app) == figure
    assert x_marks(app, "sorted_alpha")["band"] == [0.5, 25.5] and x_marks(app, "sorted_alpha")["label"] == "top 25"
    saved = saved_figure(app, "sorted_alpha", monkeypatch)
    band = [shape for shape in saved.layout.shapes if shape.type == "rect"]
    assert [(shape.x0, shape.x1) for shape in band] == [(0.5, 25.5)]
    assert "top 25" in [note.text for note in saved.layout.annotations]


def has_path_figure(app):
    """The number of traces of the λ-path figure (the weights on a log λ axis), 0 if absent."""
    for chart in app.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        if spec["layout"]["title"]["text"].startswith("Weights along λ"):
            return len(spec["data"])
    return 0


@pytest.mark.parametrize("side_mode", ["none", "side classes"])
def test_negative_weights_are_counted_and_explained(side_mode):
    """The caption promises positive weights only for unsupervised Q-alpha; where weights come out
    negative (supervised with side classes on the AR faces: about 4% of them) the page says how many
    and what they mean."""
    app = run_page()
    if side_mode != "none":
        next(t for t in app.toggle if t.label == "Supervised").set_value(True).run()
    next(r for r in app.radio if r.label == "Side information").set_value(side_mode).run()
    assert not app.exception and not app.error
    alpha = sorted_alpha(app)
    negative = int(np.sum(alpha < -1e-6 * np.abs(alpha).max()))
    notes = [info.value for info in app.info if "weights (" in info.value and "are negative" in info.value]
    if side_mode == "side classes":
        assert negative > 0  # the caption's old promise did not hold here
    if negative:
        assert len(notes) == 1 and notes[0].startswith(f"{negative:,} of {alpha.size:,} weights")
        assert "subtracts feature i's part" in notes[0]
    else:
        assert not notes
    assert "with side information, pairs or labels nothing keeps them positive" in app.caption[0].value


def test_per_class_view_of_the_selected_features():
    """Wine (3 cultivars, non-negative): the dot plot has a row per class and a dot per selected
    feature, and the table holds what class_markers computes for the same features."""
    from core.evaluation.markers import class_markers

    wine = load_dataset("wine")
    app = run_page(wine)
    assert not app.exception and not app.error
    assert "p_adjusted" not in [c for frame in app.dataframe for c in frame.value.columns]  # closed: not computed
    app = open_per_class(app)
    dotplot = next(json.loads(c.proto.spec) for c in app.get("plotly_chart")
                   if json.loads(c.proto.spec)["layout"]["title"]["text"].startswith("Selected features 1-"))
    ranking = next(frame.value for frame in app.dataframe if "rank" in frame.value.columns)
    shown = ranking["feature"].tolist()[:int(app.session_state["qa_top_k"])][:30]
    assert set(dotplot["data"][0]["x"]) == set(shown) and len(set(dotplot["data"][0]["y"])) == 3
    table = next(frame.value for frame in app.dataframe if "p_adjusted" in frame.value.columns)
    features = [wine.feature_names.index(name) for name in shown]
    direct = class_markers(wine.X, wine.labels, features=features, feature_names=wine.feature_names).table()
    assert np.allclose(table["score"].to_numpy(), direct["score"].to_numpy())
    assert set(table.columns) == set(direct.columns)  # on screen the p-values come right after the score
    app.radio(key="qa_marker_test").set_value("wilcoxon").run()
    table = next(frame.value for frame in app.dataframe if "p_adjusted" in frame.value.columns)
    wilcoxon = class_markers(wine.X, wine.labels, features=features, method="wilcoxon").table()
    assert np.allclose(table["p_adjusted"].to_numpy(), wilcoxon["p_adjusted"].to_numpy())


def test_per_class_view_on_data_with_negative_values_leaves_out_fold_changes():
    app = open_per_class(run_page(weston_linear(120, random_state=0)))
    table = next(frame.value for frame in app.dataframe if "p_adjusted" in frame.value.columns)
    assert "log2_fold_change" not in table.columns and "fraction" not in table.columns
    assert any("fold changes and the share of non-zero values do not apply" in c.value for c in app.caption)


def test_results_download_as_h5ad_beside_the_csv():
    app = open_downloads(run_page(load_dataset("colon")))
    labels = [b.proto.label for b in app.get("download_button")]
    assert "Data and results (.h5ad)" in labels and "Weights and ranking (CSV)" in labels


@pytest.mark.parametrize("dataset, settings", [
    ("wine", {}),
    ("wine", {"qa_side_mode": "pairs", "qa_n_pairs": 40, "qa_criterion": "gap"}),
    ("warpAR10P", {"qa_side_mode": "side classes"}),
    ("wine", {"qa_side_mode": "side classes", "qa_auto": False, "qa_lambda": 0.3}),
    ("wine", {"qa_supervised": True}),
], ids=["wine unsupervised", "wine pairs, gap", "AR side classes, k and λ chosen", "wine side classes, λ set",
        "wine supervised"])
def test_the_python_snippet_recomputes_the_pages_result(dataset, settings):
    """The code in the page's Python expander, run as a user would paste it, gives the page's
    weights to 1e-8, its top K and its number of iterations: where the page looked its λ up on the
    λ path, the snippet computes the path (issue 76: a cold run's 54 iterations were reported
    beside the page's 34, the same weights to 5.8e-8)."""
    app = AppTest.from_file(PAGE, default_timeout=300)
    app.session_state["dataset"] = load_dataset(dataset)
    app.run()
    for key, value in settings.items():
        app.session_state[key] = value
    app.session_state["qa_snippet"] = True  # its expander opened
    app.run()
    assert not app.exception and not app.error
    namespace = run_page_snippet(app, "QAlphaParameters(")
    result = namespace["result"]
    on_path = len(scrubber(app)["lams"]) > 1
    assert ("q_alpha_path(" in next(b.value for b in app.code if "QAlphaParameters(" in b.value)) == on_path
    assert np.allclose(np.sort(result.alpha)[::-1], sorted_alpha(app), atol=1e-8)
    assert str(result.n_iter) == next(m.value for m in app.metric if m.label == "Iterations")
    ranking = next(frame.value for frame in app.dataframe if "rank" in frame.value.columns)
    k = int(app.session_state["qa_top_k"])
    names = namespace["main"].feature_names
    assert [names[j] for j in namespace["top"][:min(k, 50)]] == ranking["feature"].tolist()[:min(k, 50)]


def test_snippet_for_uploaded_side_data_imports_what_it_calls():
    from core import QAlphaParameters
    from pages.ui.snippets import qalpha_snippet

    code = qalpha_snippet(load_dataset("wine"), True, QAlphaParameters(k=2, lam=0.1), "uploaded side data", [], 0,
                          "power", 3)
    imported = code.splitlines()[0].removeprefix("from core import ").split(", ")
    assert {"load_dataset", "load_side_data", "QAlphaParameters"} <= set(imported)
    compile(code, "snippet", "exec")


def test_side_classes_keep_the_lambda_slider_until_the_data_are_asked_to_choose():
    """Issue 59: choosing side classes turned the automatic k and λ on by itself, hid the λ slider,
    and its k (18 on the digits) went on to Compare unnamed."""
    app = run_page(load_dataset("wine"))
    app.radio(key="qa_side_mode").set_value("side classes").run()
    assert not app.exception and not app.error
    assert app.toggle(key="qa_auto").value is False
    assert app.number_input(key="qa_k").value == 2  # the user's own k, with its control
    assert not [m for m in app.metric if m.label == "λ — weight of the side information"]


def test_k_and_lambda_chosen_from_the_data_are_shown_with_their_reason_and_ignore_the_labels():
    """With side information the page chooses k and λ (core.choose_settings on the same main and
    side data), shows them where their controls stand, says why, lists the candidates; turned off,
    the controls start from the chosen values. Shuffling the main samples' labels changes nothing."""
    from dataclasses import replace

    from core import choose_settings

    faces = load_dataset("warpAR10P")
    main = faces.subset_samples(faces.labels <= 5)
    side = faces.subset_samples(faces.labels == 6)
    expected = choose_settings(main.X, side=side.X, n_clusters=5, random_state=0, solver="power")
    shown = []
    for labels in (main.labels, np.random.default_rng(0).permutation(main.labels)):
        app = AppTest.from_file(PAGE, default_timeout=300)
        app.session_state["dataset"] = replace(main, labels=labels)
        app.session_state["side_dataset"] = side
        app.session_state["qa_auto"] = True  # asked for: the page no longer turns it on by itself
        app.run()
        app.radio(key="qa_side_mode").set_value("uploaded side data").run()
        assert not app.exception and not app.error
        metrics = {m.label: m.value for m in app.metric}
        shown.append((metrics["k — number of clusters"], metrics["λ — weight of the side information"]))
        assert not [n for n in app.number_input if n.key == "qa_k"]  # no control while the data choose
        notes = " ".join(c.value for c in app.caption) + " ".join(w.value for w in app.warning)
        assert f"k = {expected.k} and λ = {expected.lam:g}" in notes
        table = next(frame.value for frame in app.dataframe if "setting" in frame.value.columns)
        assert len(table) == 7 and table["chosen"].sum() == 1
    assert shown[0] == shown[1] == (str(expected.k), f"{expected.lam:g}")
    app.toggle(key="qa_auto").set_value(False).run()
    assert app.number_input(key="qa_k").value == expected.k
    assert app.session_state["qa_lambda"] == expected.lam  # λ starts from the chosen value (on the path)


def test_the_page_warns_where_the_unweighted_data_cluster_more_reproducibly():
    """Wine with class 0 as side data: k-means' groups are more reproducible unweighted (0.99
    against 0.98 for the best weighting), so the page warns instead of captioning the choice."""
    from core import choose_settings

    wine = load_dataset("wine")
    app = run_page(wine)
    app.radio(key="qa_side_mode").set_value("side classes").run()
    app.multiselect(key="qa_side_classes").set_value([wine.classes[0].item()]).run()
    app.toggle(key="qa_auto").set_value(True).run()
    assert not app.exception and not app.error
    main, side = wine.split_by_class([wine.classes[0]])
    expected = choose_settings(main.X, side=side.X, n_clusters=2, random_state=0, solver="power")
    assert expected.weighting == "none"
    warnings = [w.value for w in app.warning if "Unweighted standardised data gave more reproducible groups" in w.value]
    assert len(warnings) == 1 and "Cluster the standardised features unweighted" in warnings[0]
    assert not [c for c in app.caption if c.value.startswith("Chosen from the data")]


def test_the_chosen_settings_are_not_solved_a_second_time(monkeypatch):
    """The automatic choice solves Q-alpha at each of its 6 (k, λ); the page's result at the chosen
    one is that run, not a seventh solve."""
    import core.selection.automatic as automatic_module
    import core.selection.qalpha as qalpha_module

    solves = []
    real = qalpha_module._solve

    def counted(*args, **kwargs):
        solves.append(args[1])
        return real(*args, **kwargs)

    # the search's solves (automatic calls _solve on data it prepared once) and any by q_alpha
    monkeypatch.setattr(qalpha_module, "_solve", counted)
    monkeypatch.setattr(automatic_module, "_solve", counted)
    faces = load_dataset("warpAR10P")
    app = AppTest.from_file(PAGE, default_timeout=300)
    app.session_state["dataset"] = faces.subset_samples(faces.labels <= 4)
    app.session_state["side_dataset"] = faces.subset_samples(faces.labels == 5)
    app.session_state["qa_auto"] = True
    app.run()
    solves.clear()
    app.radio(key="qa_side_mode").set_value("uploaded side data").run()
    assert not app.exception and not app.error
    assert sorted(solves) == sorted([0.1, 1.0, 10.0] * 2)


def test_the_class_split_is_made_once_for_the_reruns_of_the_same_data_and_classes():
    """A rerun that keeps the data and the side classes reuses the main and side parts (their
    copies and hashes are not made again); other classes or other data split anew, and the parts
    are always those of the data and classes on the page."""
    app = run_page()
    app.radio(key="qa_side_mode").set_value("side classes").run()
    set_k_and_lambda_by_hand(app)
    main, side = app.session_state["_last_class_split"][2]
    app.number_input(key="qa_k").set_value(4).run()
    assert app.session_state["_last_class_split"][2][0] is main
    faces = load_dataset("warpAR10P")
    chosen = app.multiselect(key="qa_side_classes").value
    app.multiselect(key="qa_side_classes").set_value(chosen + [faces.classes[0].item()]).run()
    assert not app.exception and not app.error
    new_main, new_side = app.session_state["_last_class_split"][2]
    assert new_main is not main
    expected_main, expected_side = faces.split_by_class(chosen + [faces.classes[0].item()])
    assert np.array_equal(new_main.X, expected_main.X) and np.array_equal(new_side.X, expected_side.X)
    wine = load_dataset("wine")
    app.session_state["dataset"] = wine
    app.run()
    assert not app.exception and not app.error
    wine_main, wine_side = app.session_state["_last_class_split"][2]
    assert wine_main.n_features == wine.n_features == wine_side.n_features
    assert wine_main.n_samples + wine_side.n_samples == wine.n_samples


def test_a_path_with_unconverged_values_says_which():
    """λ values of the path that ran out of iterations are named under it, with what to do; a
    converged path says nothing of the kind."""
    app = run_page(load_dataset("wine"))
    app.radio(key="qa_side_mode").set_value("side classes").run()
    set_k_and_lambda_by_hand(app)
    # the ascent reaches 1e-6 within 10 iterations on wine; the tightest tolerance it does not
    app.select_slider(key="qa_tol").set_value(1e-8).run()
    app.number_input(key="qa_max_iter").set_value(10).run()  # the path (cheap on wine) follows at once
    assert not app.exception and not app.error
    warning = next(w.value for w in app.warning if "values of λ" in w.value)
    assert warning.endswith("compute the path again.") and "stopped at 10 iterations without converging" in warning
    count = int(warning.split(" of the ")[0])
    assert 1 <= count <= 25
    app.number_input(key="qa_max_iter").set_value(5000).run()
    assert not app.exception and not any("values of λ" in w.value for w in app.warning)


def test_shuffled_labels_leave_the_automatic_choice_unchanged():
    """The automatic k and λ take no labels (choose_settings refuses them); the one number the page
    takes from the main data's labels is how many clusters k-means looks for, which a shuffle of
    the labels keeps. So the page's choice and every candidate's agreement are the same with the
    labels shuffled. (It replaces a library test that passed the same class count twice.)"""
    wine = load_dataset("wine")
    main, side = wine.split_by_class([wine.classes[0]])
    shuffled = replace(main, labels=np.random.default_rng(0).permutation(main.labels))
    assert not np.array_equal(shuffled.labels, main.labels)
    chosen = []
    for data in (main, shuffled):
        app = AppTest.from_file(PAGE, default_timeout=300)
        app.session_state["dataset"] = data
        app.session_state["side_dataset"] = side
        app.session_state["qa_auto"] = True  # asked for: the page no longer turns it on by itself
        app.run()
        app.radio(key="qa_side_mode").set_value("uploaded side data").run()
        assert not app.exception and not app.error
        table = next(frame.value for frame in app.dataframe if "agreement between resamples (adjusted Rand)" in frame.value)
        chosen.append((app.session_state["qa_k"], app.session_state["qa_lambda"], table.to_dict("list")))
    assert chosen[0] == chosen[1]


def test_undo_names_the_last_changes_and_puts_them_back_one_at_a_time():
    """Issue 59: after changing k, Back left the page (settings do not add history entries). The
    page's Undo names the change and undoes it; pressed again, the change before."""
    app = run_page(load_dataset("wine"))
    assert not [b for b in app.button if b.key == "undo_qalpha"]  # nothing to undo yet
    app.number_input(key="qa_k").set_value(3).run()
    app.selectbox(key="qa_criterion").set_value("gap").run()
    undo = app.button(key="undo_qalpha")
    assert undo.label == "Undo: Criterion back to sum"
    undo.click().run()
    assert not app.exception and app.session_state["qa_criterion"] == "sum" and app.session_state["qa_k"] == 3
    undo = app.button(key="undo_qalpha")
    assert undo.label == "Undo: k — number of clusters back to 2"
    undo.click().run()
    assert app.session_state["qa_k"] == 2 and app.number_input(key="qa_k").value == 2
    assert not [b for b in app.button if b.key == "undo_qalpha"]


def map_parts(app) -> dict:
    """What the page sends the map of the samples (pages/ui/sample_map.py), by part ("data": the
    standardised samples, "view": the colours and the server's map)."""
    parts = {}
    for element in app.get("bidi_component"):
        data = json.loads(element.proto.json) if element.proto.json else {}
        if isinstance(data, dict) and data.get("part") in ("data", "view"):
            parts[data["part"]] = data
    return parts


def test_the_map_of_the_samples_gets_the_standardised_samples_once_and_the_classes():
    """Issue 60: on the faces with side class 10, the browser is sent the main samples standardised
    (each feature after another, float32), the side samples by the main samples' statistics, the
    images and the classes; the scrubber names the same key. A K step sends the same data part."""
    from core.validation import zscores

    app = run_page()
    app.radio(key="qa_side_mode").set_value("side classes").run()
    set_k_and_lambda_by_hand(app)
    parts = map_parts(app)
    data, view = parts["data"], parts["view"]
    assert scrubber(app)["samples_key"] == data["key"] == view["key"] and view["server"] is None
    main, side = load_dataset("warpAR10P").split_by_class([10])
    # the faces are 8-bit: their bytes go, a quarter of float32's, and give the values exactly
    assert "z" not in data and data["divisor"] == 255.0
    centre, scale = (np.frombuffer(base64.b64decode(data[part]), dtype="<f8") for part in ("centre", "scale"))
    codes = np.frombuffer(base64.b64decode(data["codes"]), dtype=np.uint8).reshape(data["p"], data["n"]).T
    np.testing.assert_array_equal(codes / 255.0, main.X)
    np.testing.assert_allclose((codes / 255.0 - centre) / scale, zscores(main.X), atol=1e-12)
    side_codes = np.frombuffer(base64.b64decode(data["side"]["codes"]), dtype=np.uint8)
    side_values = side_codes.reshape(data["p"], data["side"]["n"]).T / 255.0
    np.testing.assert_array_equal(side_values, side.X)
    np.testing.assert_allclose((side_values - centre) / scale, zscores(side.X, reference=main.X), atol=1e-12)
    assert data["names"] == list(main.sample_names) and data["side"]["names"] == list(side.sample_names)
    pixels = np.frombuffer(base64.b64decode(data["images"]["pixels"]), dtype=np.uint8)
    assert pixels.size == main.n_samples * data["images"]["height"] * data["images"]["width"]
    classes = [str(c) for c in np.unique(main.labels)]
    assert view["group_names"] == classes and view["group_title"] == "class"
    assert [classes[g] for g in view["groups"]] == [str(label) for label in main.labels]
    before = data["token"]
    move_k(app, 40)
    assert map_parts(app)["data"]["token"] == before


def test_samples_go_as_bytes_only_where_the_bytes_give_the_values_back_exactly():
    """The map's samples go as one byte per value only where that is lossless: 255ths in [0, 1]
    (8-bit pixels), whole numbers 0..255; a value off the grid by one float64 step, a value past
    255 or below 0, and the side data's values count too."""
    from pages.ui.sample_map import _byte_divisor

    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, size=(6, 5)).astype(float)
    assert _byte_divisor(pixels / 255.0) == 255.0 and _byte_divisor(pixels) == 1.0
    assert _byte_divisor(pixels / 255.0, pixels[:2] / 255.0) == 255.0
    off_grid = pixels / 255.0
    off_grid[2, 3] = np.nextafter(off_grid[2, 3], 2.0)
    assert _byte_divisor(off_grid) is None and _byte_divisor(pixels / 255.0, off_grid) is None
    assert _byte_divisor(np.full((2, 2), 256.0)) is None and _byte_divisor(np.full((2, 2), -1.0)) is None
    assert _byte_divisor(rng.normal(size=(4, 3))) is None


def test_without_labels_the_map_is_coloured_by_k_means_at_k():
    from core.data.dataset import Dataset
    from core.matrix.kmeans import seeded_kmeans
    from core.validation import zscores

    faces = load_dataset("warpAR10P")
    app = run_page(Dataset(faces.X, name="unlabelled faces", image_shape=faces.image_shape))
    app = move_k(app, 30)
    view = map_parts(app)["view"]
    ranking = np.argsort(-scrubber(app)["weights"][0], kind="stable")
    expected = seeded_kmeans(zscores(faces.X[:, ranking[:30]]), app.session_state["qa_k"], 1, 0)[0]
    assert view["groups"] == np.asarray(expected).tolist() and view["group_title"] == "k-means cluster at K = 30"


def test_data_beyond_the_browsers_budget_get_the_servers_map_on_a_sample_of_rows(monkeypatch):
    """Over the budget the server maps the samples at the reported K (the library's sample_map,
    seeded), and the caption says why and on how many rows."""
    import pages.ui.sample_map as page_map
    from core.evaluation.sample_map import sample_map

    monkeypatch.setattr(page_map, "BROWSER_VALUES", 50_000)  # the faces' 130 x 2,400 are over it
    monkeypatch.setattr(page_map, "SERVER_ROWS", 100)
    app = move_k(run_page(), 25)
    parts = map_parts(app)
    server = parts["view"]["server"]
    assert "data" not in parts and server["k"] == 25
    faces = load_dataset("warpAR10P")
    ranking = np.argsort(-scrubber(app)["weights"][0], kind="stable")
    expected = sample_map(faces.X, ranking[:25], max_rows=100, random_state=0)
    np.testing.assert_allclose(np.reshape(server["coordinates"], (-1, 2)), expected.coordinates, atol=1e-9)
    assert server["names"] == [faces.sample_names[i] for i in expected.rows]
    assert len(parts["view"]["groups"]) == 100
    assert server["caption"].startswith("100 of the 130 samples") and "more than the 50,000" in server["caption"]


def test_the_per_class_view_holds_all_k_features_and_pages_its_dot_plot():
    """Issue 60: at K = 45 on the faces the table holds 45 features x 10 classes (the download the
    same rows), p-values adjusted over the 45; the dot plot shows 30 at a time from the rank asked."""
    from core.evaluation.markers import class_markers

    app = open_per_class(move_k(run_page(), 45))
    faces = load_dataset("warpAR10P")
    table = next(frame.value for frame in app.dataframe if "p_adjusted" in frame.value.columns)
    top = np.argsort(-scrubber(app)["weights"][0], kind="stable")[:45]
    direct = class_markers(faces.X, faces.labels, features=top, feature_names=faces.feature_names, log1p=True).table()
    assert len(table) == 45 * 10 and set(table["feature"]) == {faces.feature_names[j] for j in top}
    merged = table.merge(direct, on=["class", "feature"], suffixes=("", "_direct"))
    np.testing.assert_allclose(merged["p_adjusted"], merged["p_adjusted_direct"])
    app.number_input(key="qa_marker_first").set_value(31).run()
    dotplot = next(json.loads(c.proto.spec) for c in app.get("plotly_chart")
                   if json.loads(c.proto.spec)["layout"]["title"]["text"].startswith("Selected features 31-45"))
    assert set(dotplot["data"][0]["x"]) == {faces.feature_names[j] for j in top[30:45]}


def test_a_feature_looked_up_by_name_shows_its_rank_weight_and_statistics_over_every_feature():
    """Issue 60: wine's "proline" looked up: its rank and weight as the result's, marked on the
    sorted weights, and per class the statistics of class_markers over all 13 features (the
    p-values adjusted over all of them, as scanpy's rank_genes_groups does)."""
    from core.evaluation.markers import class_markers

    wine = load_dataset("wine")
    app = run_page(wine)
    app.session_state["qa_lookup"] = True
    app.run()
    column = wine.feature_names.index("proline")
    app.selectbox(key="qa_lookup_feature").set_value(column).run()
    weights = scrubber(app)["weights"][0]
    rank = int(np.flatnonzero(np.argsort(-weights, kind="stable") == column)[0]) + 1
    shown = {m.label: m.value for m in app.metric}
    assert shown["Rank"] == f"{rank} of 13" and float(shown["Weight"]) == pytest.approx(weights[column], rel=1e-3)
    spec = next(json.loads(c.proto.spec) for c in app.get("plotly_chart")
                if json.loads(c.proto.spec)["layout"]["title"]["text"].startswith("proline on the sorted weights"))
    assert spec["data"][1]["x"] == [rank] and spec["data"][1]["text"] == ["proline"]
    rows = next(frame.value for frame in app.dataframe if "mean_rest" in frame.value.columns and "feature" not in
                frame.value.columns)
    direct = class_markers(wine.X, wine.labels, feature_names=wine.feature_names, log1p=True)
    np.testing.assert_allclose(rows["p_adjusted"], direct.p_adjusted[:, column])
    np.testing.assert_allclose(rows["mean"], [wine.X[wine.labels == c, column].mean() for c in np.unique(wine.labels)])


def test_the_look_up_says_when_one_class_is_left_after_the_side_classes():
    """Issue 76 (5): with labels, and side classes taking every class but one, the look-up said
    "Statistics per class need labels"; it says that one class is left, and why."""
    from core.data.dataset import Dataset

    rng = np.random.default_rng(2)
    two = Dataset(rng.normal(size=(40, 6)), labels=np.repeat(["a", "b"], 20), name="two classes")
    app = run_page(two)
    next(r for r in app.radio if r.label == "Side information").set_value("side classes").run()
    app.multiselect(key="qa_side_classes").set_value(["b"]).run()
    app.session_state["qa_lookup"] = True
    app.run()
    app.selectbox(key="qa_lookup_feature").set_value(2).run()
    captions = " ".join(c.value for c in app.caption)
    assert "need two classes, and the main samples here hold one, a" in captions, captions
    assert "need labels" not in captions


def test_samples_picked_on_the_map_become_the_side_data_of_the_next_run():
    """Issue 60: a box on the map picks samples (the browser reports their positions); the page
    names them and its button makes them the side data: the side mode "picked samples", the other
    samples the main data, the map's diamonds the picked ones, and the Python snippet recomputes
    the run with the same rows. A second box adds to them."""
    faces = load_dataset("warpAR10P")
    app = run_page(faces)
    key = scrubber(app)["samples_key"]
    app.session_state["qa_scrubber"] = {"picked": {"key": key, "rows": list(range(5, 18))}}
    app.run()
    assert any("13 samples picked on the map: " + faces.sample_names[5] in c.value for c in app.caption)
    next(b for b in app.button if b.label.startswith("Make them the side data (13 samples)")).click().run()
    assert app.session_state["qa_side_mode"] == "picked samples" and not app.exception
    data = map_parts(app)["data"]
    assert data["side"]["names"] == [faces.sample_names[i] for i in range(5, 18)] and data["n"] == 130 - 13
    namespace = run_page_snippet(app, "QAlphaParameters(")
    assert namespace["picked"] == list(range(5, 18)) and namespace["side"].n_samples == 13
    assert np.allclose(np.sort(namespace["result"].alpha)[::-1], sorted_alpha(app), atol=1e-6)
    # the link carries the picked rows: a fresh session opened with it has the same side data
    copy = AppTest.from_file(PAGE, default_timeout=120)
    for key, value in dict(app.query_params).items():
        copy.query_params[key] = value
    copy.run()
    assert copy.radio(key="qa_side_mode").value == "picked samples" and not copy.exception
    assert map_parts(copy)["data"]["side"]["names"] == [faces.sample_names[i] for i in range(5, 18)]
    # the map now draws the 117 others: positions 0 and 1 are rows 0 and 1, position 5 row 18
    app.session_state["qa_scrubber"] = {"picked": {"key": scrubber(app)["samples_key"], "rows": [0, 1, 5]}}
    app.run()
    next(b for b in app.button if b.label.startswith("Add them to the side data (16 samples)")).click().run()
    assert app.session_state["qa_side_rows"]["rows"] == [0, 1, *range(5, 19)]


def test_an_h5ad_layout_is_a_second_map_coloured_as_the_first_with_the_side_samples_apart():
    """Issue 60: an ``.h5ad`` that carries ``obsm["X_umap"]`` (the fixture in AnnData's layout
    before 0.7, as scanpy's pbmc68k_reduced) is offered as a second map: each main cell at its
    stored place, coloured by its class as the first map colours it; with side classes, the side
    cells as diamonds at theirs."""
    import anndata

    from core.data.tables import load_table

    path = Path(__file__).parents[1] / "fixtures" / "legacy_pbmc.h5ad"
    cells = load_table(path.name, path.read_bytes(), label_column="bulk_labels")
    reference = anndata.read_h5ad(path)  # an independent reader of the same file
    umap, cell_types = np.asarray(reference.obsm["X_umap"], dtype=float), set(reference.obs["bulk_labels"].astype(str))
    app = run_page(cells)
    assert not any(c.proto.id.endswith("qa_stored_layout") for c in app.get("plotly_chart"))  # closed: not drawn
    app.session_state["qa_layout_open"] = True
    app.run()
    assert not app.exception
    figure = next(chart for chart in app.get("plotly_chart") if chart.proto.id.endswith("qa_stored_layout"))
    spec = json.loads(figure.proto.spec)
    colours = map_parts(app)["view"]
    by_class = {trace["name"]: trace for trace in spec["data"]}
    assert set(by_class) == cell_types  # no side data: the classes only
    for number, name in enumerate(colours["group_names"]):
        members = np.flatnonzero(np.asarray(colours["groups"]) == number)
        trace = by_class[name]
        assert trace["text"] == [cells.sample_names[i] for i in members]
        np.testing.assert_allclose(np.c_[plotly_array(trace["x"]), plotly_array(trace["y"])], umap[members])
        assert trace["marker"]["color"] == GROUP_COLOURS[number]
    # side classes: the side cells at their own places, apart
    app.radio(key="qa_side_mode").set_value("side classes").run()
    side_class = app.multiselect(key="qa_side_classes").value
    spec = json.loads(next(c for c in app.get("plotly_chart") if c.proto.id.endswith("qa_stored_layout")).proto.spec)
    side = next(trace for trace in spec["data"] if trace["name"] == "side data")
    is_side = np.isin(cells.labels, side_class)
    assert side["marker"]["symbol"] == "diamond-open" and side["text"] == list(np.asarray(cells.sample_names)[is_side])
    np.testing.assert_allclose(np.c_[plotly_array(side["x"]), plotly_array(side["y"])], umap[is_side])
    assert sum(len(t["text"]) for t in spec["data"] if t["name"] != "side data") == int((~is_side).sum())


def test_the_map_and_the_layout_draw_with_the_same_colours():
    """The browser's map (pages/ui/sample_map.js) and the stored layout (core.plots.samples) give
    a group the same colour: the JavaScript list is the Python one."""
    import re

    script = (Path(PAGE).parent / "ui" / "sample_map.js").read_text()
    listed = re.search(r"const MAP_COLOURS = \[(.*?)\];", script, re.S).group(1)
    assert tuple(re.findall(r"'(#[0-9a-f]{6})'", listed)) == GROUP_COLOURS


def test_samples_picked_on_the_map_are_compared_with_the_rest_in_the_per_class_view():
    """Issue 60: "a class to compare against": samples boxed on the map of an unlabelled table,
    then "Compare them with the rest", open the per-class view on the picked samples against the
    other samples; its statistics are Welch's t-test of the two groups (SciPy's, computed here),
    and on labelled data the classes stay one choice away."""
    from scipy import stats

    table = load_dataset("wine")
    unlabelled = replace(table, labels=None)
    app = run_page(unlabelled)
    assert not any("p_adjusted" in frame.value.columns for frame in app.dataframe)  # no classes: no view yet
    app.session_state["qa_scrubber"] = {"picked": {"key": scrubber(app)["samples_key"], "rows": list(range(0, 178, 3))}}
    app.run()
    next(b for b in app.button if b.label.startswith("Compare them with the rest (60 samples)")).click().run()
    assert not app.exception
    frame = next(frame.value for frame in app.dataframe if "p_adjusted" in frame.value.columns)
    assert set(frame["class"]) == {"picked", "rest"}
    picked = np.zeros(178, dtype=bool)
    picked[::3] = True
    for row in frame[frame["class"] == "picked"].head(5).itertuples():
        column = unlabelled.feature_names.index(row.feature)
        welch = stats.ttest_ind(unlabelled.X[picked, column], unlabelled.X[~picked, column], equal_var=False)
        assert row.score == pytest.approx(welch.statistic, rel=1e-9) and row.p_value == pytest.approx(welch.pvalue, rel=1e-9)
    assert any("The 60 samples picked on the map (class 'picked') against the other 118" in c.value for c in app.caption)
    # labelled data: the classes by default, the picked samples one choice away
    labelled = run_page(table)
    labelled.session_state["qa_compare_rows"] = {"data": table.fingerprint, "rows": list(range(0, 178, 3))}
    labelled.session_state["qa_per_class"] = True
    labelled.run()
    frame = next(frame.value for frame in labelled.dataframe if "p_adjusted" in frame.value.columns)
    assert set(frame["class"].astype(str)) == {str(c) for c in np.unique(table.labels)}
    labelled.radio(key="qa_marker_groups").set_value("the picked samples against the rest").run()
    frame = next(frame.value for frame in labelled.dataframe if "p_adjusted" in frame.value.columns)
    assert set(frame["class"]) == {"picked", "rest"}


def test_markers_over_all_features_per_class_and_where_the_selection_reaches_each_class():
    """Issue 77 (2, 3): each class's best markers over every feature (not only the K selected),
    Welch's t equal to SciPy's, in a dot plot and a table with each marker's place in the
    selection; and, in words, where each class's first marker comes in the selection."""
    from scipy import stats

    wine = load_dataset("wine")
    app = run_page(wine)
    app.session_state["qa_all_markers"] = True
    app.run()
    assert not app.exception
    app.number_input(key="qa_all_markers_n").set_value(3).run()
    table = next(frame.value for frame in app.dataframe if "rank in the selection" in frame.value.columns)
    assert len(table) == 3 * 3 and list(table["marker rank"][:3]) == [1, 2, 3]
    ranking = list(np.argsort(-scrubber(app)["weights"][0], kind="stable"))
    labels = wine.labels
    for _, row in table.iterrows():
        column = wine.feature_names.index(row["feature"])
        inside = labels.astype(str) == row["class"]
        welch = stats.ttest_ind(wine.X[inside, column], wine.X[~inside, column], equal_var=False).statistic
        assert row["score"] == pytest.approx(welch, rel=1e-6)
        assert row["rank in the selection"] == ranking.index(column) + 1
    spec = next(json.loads(c.proto.spec) for c in app.get("plotly_chart") if "all_markers_dotplot" in c.proto.id)
    assert set(spec["data"][0]["x"]) == set(table["feature"])
    said = " ".join(c.value for c in app.caption)
    firsts = table.groupby("class")["rank in the selection"].min()
    for label, first in firsts.items():
        assert f"{label}: " in said and f" at {first:,}" in said
    app.radio(key="qa_all_markers_test").set_value("wilcoxon").run()
    assert not app.exception
    wilcoxon = next(frame.value for frame in app.dataframe if "rank in the selection" in frame.value.columns)
    assert not np.allclose(wilcoxon["score"], table["score"])
    # one class against another: classes 1 and 2 each against class 0's samples alone (SciPy's Welch)
    app.radio(key="qa_all_markers_test").set_value("t-test").run()
    app.selectbox(key="qa_all_markers_against").set_value("0").run()
    assert not app.exception
    against = next(frame.value for frame in app.dataframe if "rank in the selection" in frame.value.columns)
    assert set(against["class"]) == {"1", "2"} and len(against) == 2 * 3
    for _, row in against.iterrows():
        column = wine.feature_names.index(row["feature"])
        welch = stats.ttest_ind(wine.X[labels.astype(str) == row["class"], column],
                                wine.X[labels.astype(str) == "0", column], equal_var=False).statistic
        assert row["score"] == pytest.approx(welch, rel=1e-6)
    assert any("of its 3 best against 0)" in c.value for c in app.caption)
    spec = next(json.loads(c.proto.spec) for c in app.get("plotly_chart") if "all_markers_dotplot" in c.proto.id)
    assert "3 best markers against 0 over all 13 features" in spec["layout"]["title"]["text"]


def test_the_top_k_grouped_into_modules_of_correlated_features():
    """Issue 77 (3): beside the selected list, the selected features grouped into correlated
    modules, each named by its strongest features, with how many of the top K it holds, and the
    top K taken across the modules (the best of each in turn), downloadable."""
    from core.selection.modules import selection_modules

    faces = load_dataset("warpAR10P")
    app = run_page(faces)
    app.session_state["qa_modules"] = True
    app.run()
    assert not app.exception
    from pages.ui.markers import MODULE_FEATURES

    k = min(int(app.session_state["qa_top_k"]), MODULE_FEATURES)
    ranking = np.argsort(-scrubber(app)["weights"][0], kind="stable")[:k]
    table = next(frame.value for frame in app.dataframe if "named by its strongest features" in frame.value.columns)
    expected = selection_modules(faces.X, ranking)
    assert len(table) == expected.n_modules and int(table[f"of the top {k:,}"].sum()) == k
    assert table["first in the selection at"].iloc[0] == 1
    said = " ".join(c.value for c in app.caption)
    assert (f"form {expected.n_modules} modules" in said) if expected.n_modules > 1 else ("are one group" in said)
    assert "best of each module in turn" in said
    assert any(b.label == "Modules (CSV)" for b in app.get("download_button"))


def test_the_map_coloured_by_a_feature_is_kept_in_the_link_and_undone():
    """Issue 77 (1): the browser paints a feature's values from the standardised samples and each
    feature's centre and scale (z · scale + centre gives the data back); the feature the hand chose
    (the scrubber's report sets ``qa_colour_by``) goes into the address, the scrubber is told it
    on the next page run (a link), and Undo puts the classes back."""
    faces = load_dataset("warpAR10P")
    app = run_page(faces)
    data = map_parts(app)["data"]
    codes = np.frombuffer(base64.b64decode(data["codes"]), dtype=np.uint8).reshape(data["p"], data["n"]).T
    np.testing.assert_array_equal(codes / data["divisor"], faces.X)  # the values themselves
    assert scrubber(app)["colour_by"] == ""
    name = faces.feature_names[1234]
    app.session_state["qa_colour_by"] = name  # what the report's callback (sample_map.coloured) sets
    app.run()
    assert json.loads(app.query_params["qa_colour_by"]) == name and scrubber(app)["colour_by"] == name
    undo = app.button(key="undo_qalpha")
    assert undo.label == "Undo: Colour the map by back to none", undo.label
    undo.click().run()
    assert app.session_state["qa_colour_by"] == "" and scrubber(app)["colour_by"] == ""
    # the link opened in a fresh session colours the map by the same feature
    copy = AppTest.from_file(PAGE, default_timeout=120)
    copy.query_params.update({"data": "warpAR10P", "qa_colour_by": json.dumps(name)})
    copy.run()
    assert not copy.exception and scrubber(copy)["colour_by"] == name


def test_a_link_that_colours_by_a_feature_the_data_lack_is_said_and_ignored():
    """Issue 77: a feature name that does not exist, from a link, is named in a note and the map
    keeps its classes; a name left from another data set goes back to the classes with a note."""
    copy = AppTest.from_file(PAGE, default_timeout=120)
    copy.query_params.update({"data": "warpAR10P", "qa_colour_by": json.dumps("NKG7")})
    copy.run()
    assert not copy.exception and scrubber(copy)["colour_by"] == ""
    assert any('Colour the map by ("NKG7")' in info.value for info in copy.info), [i.value for i in copy.info]
    app = run_page(load_dataset("wine"))
    app.session_state["qa_colour_by"] = "proline"
    app.run()
    assert scrubber(app)["colour_by"] == "proline"
    app.session_state["dataset"] = load_dataset("iris")
    app.run()
    assert not app.exception and app.session_state["qa_colour_by"] == "" and scrubber(app)["colour_by"] == ""
    notes = " ".join(element.value for element in [*app.info, *app.caption, *app.warning])
    assert "Colour the map by: proline does not apply to" in notes, notes


def test_the_servers_map_and_the_files_layout_are_coloured_by_the_chosen_feature(monkeypatch):
    """Issue 77 (1): beyond the browser's budget the server's map carries the chosen feature's
    values for the rows it drew; the file's own UMAP is drawn with the feature's values on a colour
    scale (highest on top, as scanpy draws them), each cell's value on hover."""
    import pages.ui.sample_map as page_map
    from core.data.tables import load_table

    monkeypatch.setattr(page_map, "BROWSER_VALUES", 1_000)  # the fixture's 60 x 40 cells are over it
    monkeypatch.setattr(page_map, "SERVER_ROWS", 30)
    path = Path(__file__).parents[1] / "fixtures" / "legacy_pbmc.h5ad"
    cells = load_table(path.name, path.read_bytes(), label_column="bulk_labels")
    gene = cells.feature_names[5]
    app = run_page(cells)
    app.session_state["qa_colour_by"] = gene
    app.session_state["qa_layout_open"] = True
    app.run()
    assert not app.exception
    view = map_parts(app)["view"]
    rows = [cells.sample_names.index(name) for name in view["server"]["names"]]
    assert len(rows) == 30 and view["feature"]["name"] == gene
    np.testing.assert_allclose(view["feature"]["values"], cells.X[rows, 5])
    spec = json.loads(next(c for c in app.get("plotly_chart") if c.proto.id.endswith("qa_stored_layout")).proto.spec)
    (trace,) = spec["data"]
    order = np.argsort(cells.X[:, 5], kind="stable")
    np.testing.assert_allclose(plotly_array(trace["marker"]["color"]), cells.X[order, 5])
    assert trace["marker"]["showscale"] and gene in spec["layout"]["title"]["text"]
    assert trace["text"][0].startswith(cells.sample_names[order[0]])


def test_markers_over_all_features_say_a_class_of_one_sample_and_what_to_do():
    """Issue 77: a class with one sample gets a message (never a traceback), the page stays whole."""
    from core.data.dataset import Dataset

    rng = np.random.default_rng(4)
    labels = np.array(["a"] * 20 + ["b"] * 19 + ["c"])
    app = run_page(Dataset(rng.normal(size=(40, 8)), labels=labels, name="one lone sample"))
    app.session_state["qa_all_markers"] = True
    app.run()
    assert not app.exception
    assert any("Class 'c' has one sample" in error.value and "Merge it" in error.value for error in app.error)


def test_the_first_visit_imports_no_library_it_does_not_use():
    """scipy.stats took 0.57 s of the Q-alpha page's first visit on a fresh server, imported by the
    markers' module though no marker is computed until asked; scikit-learn takes 2 s. In a fresh
    interpreter, a first run of the page on a table with classes imports neither."""
    import subprocess
    import sys

    script = f"""
import sys
import numpy as np
from streamlit.testing.v1 import AppTest
from core import Dataset
X = np.random.default_rng(0).normal(size=(60, 40))
X[:30, :3] += 2.0
app = AppTest.from_file({str(ROOT / "pages" / "qalpha.py")!r}, default_timeout=300)
app.session_state["dataset"] = Dataset(X, labels=np.repeat(["a", "b"], 30), name="t.csv", kind="table",
                                       source="uploaded: t.csv")
app.run()
assert not app.exception, app.exception
print(sorted(name for name in ("scipy.stats", "sklearn") if name in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
