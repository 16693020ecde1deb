"""The app's entry and home page under Streamlit's AppTest (no browser)."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.data.bundled import list_datasets

APP = Path(__file__).resolve().parents[2] / "app.py"


def test_home_page_shows_methods_and_data_sets():
    app = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not app.exception
    assert app.title[0].value == "Spectral feature selection"
    text = " ".join(m.value for m in app.markdown)
    assert "Q-alpha" in text and "Moghaddam" in text
    table = app.dataframe[0].value
    assert list(table["name"]) == [info.name for info in list_datasets()]
    # the sidebar names the current data set (the AR faces by default)
    assert any("warpAR10P" in m.value for m in app.sidebar.markdown)
