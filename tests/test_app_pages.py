"""Every page renders without an exception on an image set, a gene table and a synthetic set."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.bundled import load_dataset
from core.synthetic import topographic_data, weston_linear

PAGES = ["home", "data", "qalpha", "kernel", "topographic", "haar", "slda", "compare", "figures"]
ROOT = Path(__file__).resolve().parents[1]


def datasets():
    faces = load_dataset("warpAR10P")
    small_faces = faces.subset_samples(faces.labels <= 7)  # 7 people: quicker, still 3+ classes
    genes = load_dataset("colon")
    return {"faces": small_faces, "genes": genes.subset_features(range(400)),
            "synthetic": weston_linear(150, random_state=0)}


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("name", ["faces", "genes", "synthetic"])
def test_page_renders(page, name):
    app = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=300)
    app.session_state["dataset"] = datasets()[name]
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]


def test_whole_app_navigates_to_every_page():
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    assert not app.exception
    for page in PAGES[1:]:
        app.switch_page(f"pages/{page}.py").run()
        assert not app.exception, (page, [e.value for e in app.exception])


def test_topographic_page_on_the_paper_data():
    app = AppTest.from_file(str(ROOT / "pages" / "topographic.py"), default_timeout=300)
    app.session_state["dataset"] = topographic_data(random_state=0)
    app.run()
    assert not app.exception
    table = app.dataframe[0].value
    assert set(table["feature"][:9]) == {"1", "2", "3", "A", "B", "C", "1A", "2B", "3C"}


def test_slda_page_k_slider_moves_the_selection():
    app = AppTest.from_file(str(ROOT / "pages" / "slda.py"), default_timeout=300)
    app.session_state["dataset"] = load_dataset("digits").subset_samples(
        load_dataset("digits").labels < 6)
    app.run()
    app.selectbox[0].set_value(3).run()
    app.selectbox[1].set_value(5).run()
    assert not app.exception and not app.error
    app.slider(key="slda_k").set_value(5).run()
    text = " ".join(m.value for m in app.markdown)
    assert "Separability of the 5 features" in text


def test_compare_page_ranks_weston_methods():
    app = AppTest.from_file(str(ROOT / "pages" / "compare.py"), default_timeout=300)
    app.session_state["dataset"] = weston_linear(200, random_state=0)
    app.run()
    table = app.dataframe[0].value
    best = dict(zip(table["method"], table["best accuracy"]))
    assert best["fisher"] > 0.8 and best["fisher"] > best["variance"]
    app.radio[0].set_value("precision").run()
    assert not app.exception


WIDGET_KINDS = ["slider", "select_slider", "selectbox", "number_input", "toggle", "radio", "multiselect",
                "checkbox", "text_input", "button"]


@pytest.mark.parametrize("page", PAGES)
def test_every_widget_has_a_help_tooltip(page):
    app = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=300)
    app.session_state["dataset"] = datasets()["faces"]
    app.run()
    assert not app.exception
    missing = [(kind, getattr(widget, "label", "?")) for kind in WIDGET_KINDS
               for widget in getattr(app, kind) if not (getattr(widget, "help", None) or "").strip()]
    assert not missing, missing
