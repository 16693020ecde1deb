"""Shared fixtures: the app served by ``streamlit run`` on localhost, a headless Chromium, and the
data backends; how the tests are spread over workers."""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Two workers on two cores: one BLAS thread each (and in the app servers and examples they
    # start), or OpenBLAS's threads of the two workers spin against each other: with each worker's
    # BLAS on both cores the suite was a third done after 6.5 min; with one thread each it took 5.7.
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = "1"
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)

import numpy as np
import pytest

# the app's store of kept data sets (core.data.content_store) in a folder of the test run's own
# (each worker's), not the user's cache folder; the app servers the tests start inherit it
if "QALPHA_STORE_DIR" not in os.environ:
    os.environ["QALPHA_STORE_DIR"] = tempfile.mkdtemp(prefix="qalpha-store-")
    atexit.register(shutil.rmtree, os.environ["QALPHA_STORE_DIR"], ignore_errors=True)

ROOT = Path(__file__).resolve().parents[1]
ARTEFACTS = ROOT / "tests" / "artefacts"
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


#: The browser tests that share an app server are dealt, in turn, to this many groups: one server
#: per group, each group on one worker. On one server (one group) they took 434 s on one worker
#: while the other did everything else, the run 10 min 30 s; dealt to two, 9 min 11 s (the
#: workers ending within a second of each other). With a third worker (`-n 3`) the rest fills the
#: time the two groups spend waiting for Chromium and their servers.
BROWSER_GROUPS = 2


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: the slow tier (paper reproductions run whole, the browser walks over every page): left "
                   "out of the README's test command by -m 'not slow', run by CI after it with -m slow "
                   "(docs/testing.md)")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under ``pytest -n 3 --dist loadgroup`` (the README's test command) the browser tests run in
    BROWSER_GROUPS groups, each on one worker against one app server of that worker (those that
    start servers of their own in a group of their own), and the reproductions in one worker,
    which then computes each quick experiment once for all the tests that read it; every other
    test goes to whichever worker is free. This hook runs before pytest-xdist's, which reads the
    groups into the tests' ids: run after it, the marks came too late and were silently ignored."""
    dealt = 0
    for item in items:
        room = Path(item.fspath).relative_to(ROOT / "tests").parts[0]
        if room == "browser" and not {"app_url", "fresh_app_url", "server_data_url"} & set(item.fixturenames):
            # a browser test that starts servers of its own needs nothing of the shared one: it may
            # run beside the others, on the worker with time to spare
            item.add_marker(pytest.mark.xdist_group("browser-own-servers"))
        elif room == "browser":
            item.add_marker(pytest.mark.xdist_group(f"browser-{dealt % BROWSER_GROUPS}"))
            dealt += 1
        elif room == "experiments":
            item.add_marker(pytest.mark.xdist_group(room))


@pytest.fixture(scope="session")
def app_url():
    """``streamlit run app.py`` on a free loopback port for the whole test session."""
    yield from _serve("streamlit-server.log")


@pytest.fixture()
def fresh_app_url():
    """A server of its own: its first request is the test's (a page's URL, not the home page)."""
    yield from _serve("streamlit-fresh-server.log")


@pytest.fixture(scope="session")
def server_data_url(tmp_path_factory):
    """A server of its own whose data folder (``QALPHA_DATA_DIR``) holds a sparse AnnData set of
    600 cells x 300 genes in which two cell types express their own 10 marker genes (0-9, 10-19)."""
    import anndata
    import pandas as pd
    from scipy import sparse

    folder = tmp_path_factory.mktemp("server_data")
    rng = np.random.default_rng(0)
    X = rng.poisson(0.2, (600, 300)).astype(float)
    kinds = rng.integers(0, 2, 600)
    for kind in (0, 1):
        rows = np.flatnonzero(kinds == kind)
        X[np.ix_(rows, range(10 * kind, 10 * kind + 10))] += rng.poisson(5, (rows.size, 10))
    cells = anndata.AnnData(sparse.csr_matrix(X), obs=pd.DataFrame({"cell_type": np.where(kinds, "T", "B")},
                                                                   index=[f"cell{i}" for i in range(600)]))
    cells.var_names = [f"GENE{j}" for j in range(300)]
    cells.write_h5ad(folder / "cells.h5ad")
    yield from _serve("streamlit-server-data.log", {"QALPHA_DATA_DIR": str(folder)})


def _serve(log_name: str, environment: dict | None = None):
    """Start ``streamlit run app.py`` on a free loopback port (the benchmarks' helper,
    :mod:`benchmarks.app_server`); stop it afterwards. Its output goes to ``tests/artefacts``."""
    from benchmarks.app_server import served

    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    with open(ARTEFACTS / log_name, "w") as log, served(ROOT / "app.py", log=log, environment=environment) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium driven by Playwright; skipped (with the reason) where there is none,
    except under CI, where a missing browser is a failure."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but Chromium is missing: .ci/run should have installed Debian's chromium")
        pytest.skip("no Chromium on this machine (apt-get install chromium to run the browser tests)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


#: Notes when the app's websocket last brought a message (``window.__lastMessage``, the page's
#: performance.now()) and every message's time (``window.__messages``): the browser tests' ``quiet``
#: waits for the server to fall silent rather than for a fixed number of looks.
MESSAGE_CLOCK = """
(() => {
  const Native = window.WebSocket;
  window.WebSocket = function(...args) {
    const socket = new Native(...args);
    socket.addEventListener('message', () => {
      window.__lastMessage = performance.now();
      (window.__messages = window.__messages || []).push(window.__lastMessage);
    });
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
})();
"""


def browser_context(browser, width: int = 1400, height: int = 1000):
    """A new browser context (a user's own cookies and tabs) whose pages keep the websocket's
    message times (MESSAGE_CLOCK): the tests' ``quiet`` then passes a settled page in 0.35 s
    rather than 1.4-2.1 s of fixed looks."""
    context = browser.new_context(viewport={"width": width, "height": height})
    context.add_init_script(MESSAGE_CLOCK)
    return context


@pytest.fixture()
def page(browser):
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    context = browser_context(browser)
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


# ---------------------------------------------------------------------------- data backends
BACKENDS = ("numpy", "sparse", "dask", "dask-sparse")


def as_backend(X, backend: str, rows: int = 37):
    """``X`` as a NumPy array, a CSR matrix, a Dask array (uneven row chunks, column chunks too)
    or a Dask array of CSR chunks: the inputs the sparse and chunked paths must treat alike."""
    from scipy import sparse

    if backend == "numpy":
        return X
    if backend == "sparse":
        return sparse.csr_matrix(X)
    import dask.array as da

    if backend == "dask":
        return da.from_array(np.asarray(X), chunks=(rows, max(1, X.shape[1] // 3)))
    return da.from_array(sparse.csr_matrix(X), chunks=(rows, -1), asarray=False)


@pytest.fixture(params=BACKENDS)
def backend(request):
    """A converter to one backend (parametrised over all of them)."""
    return lambda X: as_backend(X, request.param)


# ---------------------------------------------------------------------------- pages under AppTest
def plotly_array(encoded) -> np.ndarray:
    """An array of a Plotly figure's JSON: Plotly writes arrays as typed base64 blocks
    (``{"dtype", "bdata", "shape"}``) or as plain lists."""
    if isinstance(encoded, dict):
        import base64

        values = np.frombuffer(base64.b64decode(encoded["bdata"]), dtype=encoded["dtype"])
        return values.reshape([int(n) for n in str(encoded["shape"]).split(",")]) if "shape" in encoded else values
    return np.asarray(encoded, dtype=float)


def run_page_snippet(app, marker: str) -> dict:
    """Run the code block of a page (under AppTest) that contains ``marker`` as a user pastes it
    into a notebook; its namespace afterwards."""
    import contextlib
    import io

    if not any(marker in block.value for block in app.code):
        # the snippets are drawn only while their expander is open (pages/ui/widgets.snippet): open them
        for expander in app.expander:
            if expander.proto.id.endswith("_snippet"):
                app.session_state[expander.proto.id.split("-", 2)[2]] = True
        app.run()
    code = next(block.value for block in app.code if marker in block.value)
    namespace = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "snippet", "exec"), namespace)
    return namespace


def open_save_popovers(app):
    """Open every figure's "Save figure" popover (as a click on each does) and rerun: its
    download buttons are drawn only while it is open (pages/ui/widgets.chart)."""
    for chart in app.get("plotly_chart"):
        app.session_state[f"{chart.proto.id.split('-', 2)[2]}_save"] = True
    return app.run()
