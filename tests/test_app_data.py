"""The Data page under AppTest (uploads themselves are exercised in the browser test)."""

from pathlib import Path

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
