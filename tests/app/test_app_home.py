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


def test_a_run_waits_until_the_blas_limit_is_set():
    """session.leave_a_core: a run that starts while another sets the BLAS limit waits for it.
    The first run here is slowed inside threadpoolctl (0.5 s); a second run must come out of
    leave_a_core with every BLAS library already on one core fewer. It used to return at once and
    compute on all cores, and a threadpool_limits context opened then put them back after the
    limit (benchmarks.bench_users: 10 people, 0.10 CPU s a K step against 0.03). In a fresh
    interpreter with no thread variables in its environment, where the limit is not set yet."""
    import os
    import subprocess
    import sys

    import pytest

    from conftest import ROOT

    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: leave_a_core leaves BLAS on it")
    code = """
import os, threading, time
import numpy, scipy.linalg
import threadpoolctl
import pages.ui.session as session

def blas_threads():
    return sorted(module["num_threads"] for module in threadpoolctl.threadpool_info() if module["user_api"] == "blas")

before = blas_threads()
real_limits = threadpoolctl.threadpool_limits
def slow_limits(*args, **kwargs):
    time.sleep(0.5)
    return real_limits(*args, **kwargs)
threadpoolctl.threadpool_limits = slow_limits
first = threading.Thread(target=session.leave_a_core)
first.start()
time.sleep(0.1)  # the first run holds the lock, inside threadpool_limits
session.leave_a_core()
during = blas_threads()
first.join()
expected = [min(n, os.cpu_count() - 1) for n in before]
assert max(before) > 1 and during == expected, (before, during, expected)
print("ok")
"""
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**environment, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout[-1000:] + done.stderr[-2000:]
