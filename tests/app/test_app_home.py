"""The app's entry and home page under Streamlit's AppTest (no browser)."""

import time
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.testing.v1 import AppTest

from core.data.bundled import list_datasets
from pages.ui import first_paint

APP = Path(__file__).resolve().parents[2] / "app.py"


def test_home_page_shows_methods_and_data_sets():
    app = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not app.exception
    assert app.title[0].value == "Spectral feature selection"
    text = " ".join(m.value for m in app.markdown)
    assert "Q-alpha" in text and "Moghaddam" in text
    # the first run of a tab draws the table (after a pause, pages/ui/first_paint.py) and notes it
    assert app.session_state[first_paint.DRAWN] == {first_paint.TABLE}
    table = app.dataframe[0].value
    assert list(table["name"]) == [info.name for info in list_datasets()]
    # the sidebar names the current data set (the AR faces by default)
    assert any("warpAR10P" in m.value for m in app.sidebar.markdown)


def test_a_new_tabs_first_figure_is_sent_after_its_controls_and_a_pause(monkeypatch):
    """pages/ui/first_paint.py: the first table, figure and code of a tab are sent once the run
    has gone on for PAUSE seconds, after the page's controls (so the browser draws those before
    it loads the heavy code); kinds the tab has had are sent at once, in later runs and pages."""
    waits = []
    wait_for_controls = first_paint.wait_for_controls

    def recording(kind):
        new = kind not in st.session_state[first_paint.DRAWN]
        wait_for_controls(kind)
        if new:  # the k input is among the widgets this run drew before
            controls = "kq_k" in get_script_run_ctx().shared.widget_user_keys_this_run
            waits.append((kind, time.monotonic() - first_paint._RUN.started, controls))

    monkeypatch.setattr(first_paint, "wait_for_controls", recording)
    app = AppTest.from_file(str(APP), default_timeout=120).run()
    assert [kind for kind, _, _ in waits] == [first_paint.TABLE]
    # the Kernel page's first figure (the Q-alpha page's selection is drawn by the browser, no figure)
    app.switch_page("pages/kernel.py").run()
    assert not app.exception
    kinds, elapsed, controls_first = zip(*waits[1:])
    assert kinds[0] == first_paint.FIGURE and controls_first[0]
    assert min(elapsed) >= first_paint.PAUSE
    assert app.session_state[first_paint.DRAWN] >= {first_paint.TABLE, first_paint.FIGURE}
    had, drawn = {kind for kind, _, _ in waits}, len(waits)
    app.run()
    app.switch_page("pages/topographic.py").run()
    # the figures and the table come at once; only a kind the tab has not had yet waits (its code:
    # the pages write their snippets only when the snippet's expander is opened)
    assert not app.exception and all(kind not in had for kind, _, _ in waits[drawn:])


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
