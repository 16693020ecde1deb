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


def test_imports_are_warmed_once_per_process_after_a_delay():
    """session.warm_imports starts one background timer per process (a second call starts
    nothing); when it fires it waits while a run of app.py is in progress, then imports
    scikit-learn's k-means and the solvers. Run in a fresh interpreter, where none of them is
    loaded yet."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    code = """
import sys, threading, time
import pages.ui.session as session
session.WARM_AFTER = 0.2
assert "sklearn.cluster" not in sys.modules and "scipy.stats" not in sys.modules
with session.app_run():  # a page running
    session.warm_imports(); session.warm_imports()
    timers = [t for t in threading.enumerate() if t.name == "warm-imports"]
    assert len(timers) == 1, timers
    time.sleep(1.0)
    assert "scipy.stats" not in sys.modules  # past the delay, but waiting for the run to end
timers[0].join(120)
assert all(name in sys.modules for name in ("sklearn.cluster", "sklearn.metrics", "core.selection.qalpha"))
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
