"""The app as a user feels it, in Chromium: first opens and slider steps, against a bare page.

    python -m benchmarks.bench_app [--presses 10] [--open-rounds 3] [--skip tables,genes,zip]

Two servers in the same run, on loopback ports: a bare Streamlit page (one slider and two Plotly
figures of the AR faces' size: a 60 x 40 heat map and 2,400 sorted weights; the floor Streamlit
allows) and ``streamlit run app.py``. Debian's Chromium (1400 x 1000, no GPU) drives both.

A step lasts from the ``keydown`` of an arrow key on a focused slider (or the click on a radio
option) to the last ``script_finished`` message of the runs it caused: an init script wraps
``window.WebSocket`` and reads field 6 of each ``ForwardMsg`` (0 finished, 1 compile error, 3 a
fragment finished; 2, stopped for a new rerun, does not end a step), so no fixed sleep enters a
measure. A step counts as over once such a message came and nothing followed for 0.5 s (that wait
is not part of the figure). Each step is also timed to the page painted: the last change of its
DOM once 0.5 s passed without one (changes inside a ``<canvas>`` do not count: its fallback
content is never drawn, and the data grid rewrites its accessible copy of the cells there 0.2 s
after it drew them on the canvas). The two differ where the browser draws after the last message:
the bare page's 2,400 SVG markers take about 0.14 s per draw and Streamlit draws a changed chart
twice, so its step settles in about 0.1 s and is painted at about 0.4 s. A first open lasts from the navigation to the page's main control
drawn ("controls": looked for in the page at every animation frame), to its last ``script_finished`` ("settled": the last message that draws the
result; in a new tab the figures, tables and code come in a second run, once the browser reports
the controls painted, and settled counts that run) and to the last change of the page's DOM once 1 s passed without one ("painted": the
browser has drawn what the messages carry; Streamlit loads each kind of element's code when it
first appears, and Plotly's figures draw after that, so on a first visit the page is whole well
after its last message, the bare page included), each page in a new browser session.

Data: the bundled AR faces (2,400 pixels, 130 images); the bundled TOX-171 (a box of the Data
page's transforms) and GLIOMA (Compare with scanpy's genes); a 100 x 20,000 gene table uploaded as
Parquet (four planted cell types, log1p of lognormal counts); the ORL faces uploaded as a ZIP of
400 PNGs. Reported per control: median and 90th percentile over the presses, and the median as a
multiple of the bare page's step; per page: the first open against the bare page's (medians of
``--open-rounds`` rounds, each opening the bare page and then every page in new sessions).
"""

import argparse
import io
import re
import statistics
import tempfile
import time
import zipfile
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

from benchmarks.app_server import SCRIPT_IDLE, start_server, stop_server  # noqa: E402
from benchmarks.results import run_recorded  # noqa: E402

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]

#: Records performance.now() of each keydown and click, of each ForwardMsg whose script_finished
#: (field 6) is 0, 1 or 3, of every message at all, and of the last change to the page's DOM.
WATCH = """
(() => {
  window.__finished = []; window.__message = 0; window.__input = 0; window.__mutation = 0;
  // a change inside a <canvas> is to its fallback content, which is never drawn (the data grid
  // keeps an accessible copy of its cells there and rewrites it 0.2 s after drawing them)
  const drawn = (record) => { const node = record.target.nodeType === 1 ? record.target : record.target.parentElement;
    return !(node && node.closest('canvas')); };
  document.addEventListener('DOMContentLoaded', () => new MutationObserver((records) => {
    if (records.some(drawn)) window.__mutation = performance.now(); }).observe(document.documentElement,
    {subtree: true, childList: true, attributes: true, characterData: true}));
  for (const kind of ['keydown', 'mousedown']) {
    document.addEventListener(kind, () => { window.__input = performance.now(); }, true);
  }
  function scriptFinished(bytes) {
    let i = 0;
    function varint() { let value = 0, shift = 0, byte;
      do { byte = bytes[i++]; value += (byte & 0x7f) * Math.pow(2, shift); shift += 7; } while (byte & 0x80);
      return value; }
    while (i < bytes.length) {
      const key = varint(), field = Math.floor(key / 8), wire = key % 8;
      if (wire === 0) { const value = varint(); if (field === 6) return value; }
      else if (wire === 1) { i += 8; }
      else if (wire === 2) { const length = varint(); i += length; }
      else if (wire === 5) { i += 4; }
      else return null;
    }
    return null;
  }
  const Native = window.WebSocket;
  window.WebSocket = function(...args) {
    const socket = new Native(...args);
    socket.addEventListener('message', (event) => {
      const now = performance.now();
      window.__message = now;
      if (event.data instanceof ArrayBuffer) {
        const state = scriptFinished(new Uint8Array(event.data));
        if (state === 0 || state === 1 || state === 3) window.__finished.push(now);
      }
    });
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
  for (const name of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) window.WebSocket[name] = Native[name];
})();
"""

BARE_PAGE = '''
import numpy as np
import plotly.graph_objects as go
import streamlit as st
from benchmarks.results import run_recorded  # noqa: E402

value = st.slider("value", 0, 100, 50)
rng = np.random.default_rng(value)
st.plotly_chart(go.Figure(go.Heatmap(z=rng.random((60, 40)))), key="image")
st.plotly_chart(go.Figure(go.Scatter(y=np.sort(rng.random(2400))[::-1], mode="lines+markers")), key="weights")
'''

K = "K — top features to show and to cluster with"
LAMBDA = "λ — weight of the side information"
#: page path: (its main control's accessible name, the slider or radio stepped)
PAGES = {"qalpha": ("slider", K), "kernel": ("slider", "gamma"), "topographic": ("slider", "λ x n"),
         "haar": ("slider", "λ"), "slda": ("slider", "k — number of features"), "compare": ("radio", "Measure"),
         "data": ("tab", "Bundled data sets"), "figures": ("heading", "Paper figures")}


#: the element that shows a page's controls on first open, where it is not the stepped control
#: (which on some pages comes with the result)
CONTROLS = {"qalpha": ("spinbutton", "k — number of clusters"), "kernel": ("spinbutton", "k — number of clusters"),
            "slda": ("heading", "Sparse LDA / PCA"), "haar": ("heading", "Haar reconstructions"),
            "topographic": ("heading", "Topographical map")}


def settled(page, since: float, timeout=900.0, quiet=0.5) -> float:
    """Seconds from ``since`` (the page's performance.now()) to the last script_finished after it,
    once no message came for ``quiet`` seconds and Streamlit reports no run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        finished, message, now = page.evaluate(
            "(since) => [window.__finished.filter(t => t > since).slice(-1)[0] || 0, window.__message, "
            "performance.now()]", since)
        if finished and now - message > quiet * 1000 and page.evaluate(SCRIPT_IDLE):
            return (finished - since) / 1000.0
        page.wait_for_timeout(50)
    raise TimeoutError("the page did not settle")


class Step(float):
    """Seconds of one step to the settled page, whether it moved to a value this run had not shown
    before (the page computes it) or back to one it had (the page may look it up), and seconds to
    the page painted (``painted``: the browser drawing what the messages carried, which goes on
    after the last message, the bare page's two figures for 0.3 s)."""

    def __new__(cls, seconds, new=True, painted=float("nan")):
        step = super().__new__(cls, seconds)
        step.new, step.painted = new, painted
        return step


def timed_step(page, new: bool) -> Step:
    """The step the last key press or click started, to the settled page and to the painted one."""
    since = page.evaluate("() => window.__input")
    return Step(settled(page, since), new, painted(page, since, quiet=0.5))


def value_of(thumb) -> str:
    return thumb.evaluate("e => e.getAttribute('aria-valuenow') ?? e.getAttribute('aria-valuetext')")


def slider_steps(page, name, presses, keys=("ArrowRight", "ArrowLeft")):
    """``presses`` arrow presses on the slider ``name`` (direction alternating in pairs, so that
    values are new and revisited), each timed to the settled page. A press at the end of the range
    changes nothing and is not counted."""
    locator = page.get_by_role("slider", name=name).first
    # the thumb is found once, not by a query of the page's accessibility tree at every press:
    # that query (70 ms of the browser's main thread on the Q-alpha page, none on the bare one)
    # ran just after the press, beside the rerun it was timing
    thumb = locator.element_handle()
    times, seen = [], {value_of(thumb)}
    for index in range(presses):
        if not thumb.evaluate("e => e.isConnected"):  # redrawn: found again
            thumb = locator.element_handle()
        before = value_of(thumb)
        thumb.focus()
        thumb.press(keys[(index // 2) % 2])
        after = value_of(thumb)
        if after == before:
            continue
        times.append(timed_step(page, after not in seen))
        seen.add(after)
    return times


def radio_steps(page, options, presses):
    times = []
    for index in range(presses):
        page.get_by_text(options[index % len(options)], exact=True).first.click()
        times.append(timed_step(page, index < len(options)))
    return times


def box_steps(page, label, presses):
    """``presses`` clicks on the checkbox ``label`` (ticked, then cleared, ...), each timed."""
    times = []
    for index in range(presses):
        page.get_by_text(label, exact=True).first.click()
        times.append(timed_step(page, index < 2))
    return times


def click_and_settle(page, locator):
    locator.click()
    settled(page, page.evaluate("() => window.__input"))


#: A poll of the page (every 50 ms) that took longer than this found its main thread busy.
BLOCKED_MS = 300


def painted(page, since: float = 0.0, quiet=1.0, timeout=60.0) -> float:
    """Seconds from ``since`` (the page's performance.now(); 0: the navigation) to the last change
    of the page's DOM, once none came for ``quiet`` seconds of a page that answered all along
    (that wait is not part of the figure). A page busy compiling a chunk (Plotly's, a new tab's)
    changes nothing while it cannot answer, and that is not quiet: a poll that came back late
    starts the quiet wait again."""
    deadline = time.monotonic() + timeout
    answering_since = previous = None
    while time.monotonic() < deadline:
        last, now = page.evaluate("() => [window.__mutation, performance.now()]")
        if previous is None or now - previous > BLOCKED_MS:
            answering_since = now
        previous = now
        if now - last > quiet * 1000 and now - answering_since > quiet * 1000:
            return (last - since) / 1000.0
        page.wait_for_timeout(50)
    raise TimeoutError("the page kept changing")


#: In the page: performance.now() once the control of ``[kind, name]`` is drawn, else false (a
#: heading without a name: any title; home and figures).
CONTROL_DRAWN = """([kind, name]) => {
  const text = (e) => (e.innerText || e.textContent || "").trim();
  const drawn = {
    heading: () => [...document.querySelectorAll("h1, h2, h3")].some((e) => !name || text(e).startsWith(name)),
    tab: () => [...document.querySelectorAll("[role=tab]")].some((e) => text(e).includes(name)),
    radio: () => [...document.querySelectorAll("[role=radiogroup]")].some((e) => e.getAttribute("aria-label") === name),
    spinbutton: () => [...document.querySelectorAll("input[type=number]")].some((e) => e.getAttribute("aria-label") === name),
    slider: () => [...document.querySelectorAll("[data-testid=stSlider]")].some((e) => text(e).includes(name)),
  }[kind]();
  return drawn ? performance.now() : false;
}"""


def first_open(context, url, path, control=None):
    """(to controls, to settled, to painted) in seconds from the navigation, in a new session.
    ``control``: (role, name) of the element that shows the page's controls (default:
    ``PAGES[path]``, else the first heading)."""
    page = context.new_page()
    page.goto(f"{url}/{path}")
    kind, name = control or PAGES.get(path, ("heading", None))
    # looked for in the page at every animation frame, and timed there: a query from Playwright
    # (by role and accessible name) returned seconds after a long page had settled
    controls = page.wait_for_function(CONTROL_DRAWN, arg=[kind, name], polling="raf",
                                      timeout=600_000).json_value() / 1000.0
    done = settled(page, 0)
    drawn = painted(page)
    assert page.locator("[data-testid='stException']").count() == 0, path
    page.close()
    return controls, done, drawn


def table_parquet(values, cell_types, feature_names) -> bytes:
    """A samples x features table as a user uploads it: Parquet, a ``cell_type`` column first."""
    import pandas as pd

    frame = pd.DataFrame(values, columns=list(feature_names))
    frame.insert(0, "cell_type", list(cell_types))
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def genes_parquet() -> bytes:
    """100 samples x 20,000 genes, log1p of lognormal counts, four cell types of 25 samples with 50
    genes each raised fourfold, and a ``cell_type`` column."""
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(4), 25)
    counts = rng.lognormal(2.0, 1.0, size=(100, 20_000))
    for c in range(4):
        counts[labels == c, c * 50:(c + 1) * 50] *= 4.0
    return table_parquet(np.log1p(counts), [f"type {c}" for c in labels], [f"ENSG{100000 + j:011d}" for j in range(20_000)])


def orl_zip() -> bytes:
    """The ORL faces as a user would upload them: one folder of PNGs per person."""
    from PIL import Image

    from core.data.bundled import load_dataset

    faces = load_dataset("ORL")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for index, (image, label) in enumerate(zip(faces.images(), faces.labels)):
            png = io.BytesIO()
            Image.fromarray(np.round(image * 255).astype(np.uint8)).save(png, format="PNG")
            archive.writestr(f"orl/s{label}/{index}.png", png.getvalue())
    return buffer.getvalue()


def upload(page, url, tab, label, name, content, button, loaded):
    page.goto(f"{url}/data")
    page.get_by_role("tab", name=tab).wait_for(timeout=300_000)
    settled(page, 0)
    page.get_by_role("tab", name=tab).click()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(content)
        page.get_by_role("tabpanel").filter(has=page.get_by_text(label)).locator("input[type='file']") \
            .set_input_files(str(path))
        page.get_by_text(name).first.wait_for(timeout=300_000)  # the uploader lists the file
        load = page.get_by_role("button", name=button)
        load.wait_for(timeout=300_000)
        page.wait_for_function("(b) => !b.disabled", arg=load.element_handle(), timeout=300_000)
        settled(page, 0)
        load.click()
        page.get_by_text(loaded).first.wait_for(timeout=600_000)
        settled(page, 0)


#: The sidebar's link to each page
TITLES = {"qalpha": "Q-alpha", "kernel": "Kernel Q-alpha", "topographic": "Topographical map",
          "haar": "Haar reconstructions", "slda": "Sparse LDA / PCA", "compare": "Compare", "data": "Data",
          "figures": "Paper figures"}


def open_page(page, url, path, ready):
    """The page ``path`` in this tab's session, by its sidebar link (a navigation by address starts
    a new session, which holds none of the uploads: until 2026-11-26 the "uploaded" rows measured
    the bundled AR faces), or by address in a new tab; once ``ready`` shows and the page settled."""
    if page.url.startswith(url):
        page.locator("[data-testid='stSidebar']").get_by_role("link", name=TITLES[path], exact=True).click()
    else:
        page.goto(f"{url}/{path}")
    page.get_by_text(ready).first.wait_for(timeout=900_000)
    settled(page, 0)


def current_data(page) -> str:
    """The data set the sidebar names (its summary's first line)."""
    summary = page.locator("[data-testid='stSidebar']").inner_text().split("Data set")[-1]
    return next(line for line in summary.splitlines() if line.strip())


def qalpha_steps(page, url, presses, rows, data_set, lam=True, data_name=None):
    open_page(page, url, "qalpha", "Selected (K)")
    if data_name is not None and current_data(page) != data_name:
        raise RuntimeError(f"the Q-alpha page shows {current_data(page)}, not {data_name}")
    # K is drawn by the browser at once (benchmarks/bench_paint.py times that); the server is told
    # 300 ms after the last key, and its answer (k-means at K, the table, the link) settles the step
    record(rows, data_set, "Q-alpha: K (to the server's answer)", slider_steps(page, K, presses))
    if not lam:
        return
    click_and_settle(page, page.get_by_text("side classes", exact=True))  # λ set by hand, the page's slider
    started = time.perf_counter()
    click_and_settle(page, page.get_by_text("Choose k and λ from the data", exact=True))  # asked for: chosen
    record(rows, data_set, "Q-alpha: side classes on, k and λ chosen", [Step(time.perf_counter() - started)])
    click_and_settle(page, page.get_by_text("Choose k and λ from the data", exact=True))  # λ by hand again
    on_path = page.locator(".scrubber .lam-input:visible")
    if not on_path.count():  # a long path waits for its button: λ is a server slider, each λ solved
        record(rows, data_set, "Q-alpha: λ, each λ solved",
               slider_steps(page, LAMBDA, presses, ("ArrowLeft", "ArrowRight")))
        button = page.get_by_role("button", name=re.compile(r"^Compute the λ path"))
        for attempt in range(2):  # a click that brought no path is made again; a second miss is reported
            settled(page, 0)
            try:
                button.wait_for(timeout=300_000)
                button.click()
                on_path.first.wait_for(timeout=900_000)
                break
            except Exception:  # noqa: BLE001 - reported, and the table still printed
                print(f"{data_set}: no λ path button or path within the wait (attempt {attempt + 1})", flush=True)
        else:
            return
    settled(page, 0)
    # on the path λ is drawn by the browser too; the step lasts until the server's answer to the report
    record(rows, data_set, "Q-alpha: λ on the λ path (to the server's answer)",
           slider_steps(page, LAMBDA, presses, ("ArrowLeft", "ArrowRight")))


def serve_bare(folder):
    """The bare page (a slider and two figures) served beside the app: the floor of a step."""
    script = Path(folder) / "bare.py"
    script.write_text(BARE_PAGE)
    return start_server(script)


def record(rows, data_set, name, times):
    """Keep a measured row and print it at once (a long run shows its progress)."""
    rows.append((data_set, name, times))
    print(f"{data_set}, {name}: {', '.join(f'{t:.2f}' for t in times)} (painted: "
          f"{', '.join(f'{t.painted:.2f}' for t in times)})", flush=True)


def summary(times):
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def bare_and_opens(context, bare_url, url, rows, opens, options, skip) -> None:
    """The bare page's slider steps (the floor), then rounds of first opens, each page in a new
    session: a first open is one sample on a shared machine (single ones differed by up to 0.5 s
    between runs)."""
    page = context().new_page()
    page.goto(bare_url)
    settled(page, 0)
    record(rows, "bare page", "slider", slider_steps(page, "value", options.presses))
    page.context.close()
    for round_ in range(0 if "opens" in skip else options.open_rounds):
        opens.append(("bare page", *first_open(context(), bare_url, "", ("slider", "value"))))
        for path in ("", "data", "qalpha", "kernel", "topographic", "haar", "slda", "compare", "figures"):
            opens.append((path or "home", *first_open(context(), url, path, CONTROLS.get(path))))
            print(f"first open, round {round_ + 1}: {opens[-1]}", flush=True)


def faces_steps(context, url, rows, options) -> None:
    """Every page's control on the bundled AR faces."""
    faces = "AR faces (bundled)"
    page = context().new_page()
    qalpha_steps(page, url, options.presses, rows, faces)
    for path, what, ready in (("topographic", "Topographical map: λ x n", "λ x n"),
                              ("haar", "Haar: λ", "The mean image of the main classes"),
                              ("slda", "Sparse LDA: k", "k — number of features"),
                              ("kernel", "Kernel Q-alpha: gamma", "Top-")):
        open_page(page, url, path, ready)
        record(rows, faces, what, slider_steps(page, PAGES[path][1], options.presses))
    open_page(page, url, "compare", "Measure")
    run = page.get_by_role("button", name=re.compile(r"^Run \d+ method"))
    if run.count():  # nothing runs unasked: the methods wait for their button
        click_and_settle(page, run)
    record(rows, faces, "Compare: measure", radio_steps(page, ["NMI", "k-means accuracy"], options.presses))
    # each data set's tab is closed before the next opens: a tab left open kept its renderer
    # busy (a fifth of a core) while the next data set was measured
    page.context.close()


def table_steps(context, url, rows, options) -> None:
    """Bundled tables of raw values: the Data page's transform boxes on TOX-171, and Compare with
    scanpy's genes (the dispersion) beside Q-alpha on GLIOMA."""
    page = context().new_page()
    page.goto(f"{url}/data?data=TOX-171")
    page.get_by_text("Features kept, most variable first").first.wait_for(timeout=300_000)
    settled(page, 0)
    record(rows, "TOX-171 (bundled)", "Data: a transform box",
           box_steps(page, "z-scores: each feature centred, unit variance", options.presses))
    page.context.close()
    page = context().new_page()
    methods = '["Q-alpha", "dispersion", "laplacian", "variance"]'
    page.goto(f"{url}/compare?data=GLIOMA&cmp_methods={quote(methods)}")
    run = page.get_by_role("button", name="Run 4 method(s)")
    run.wait_for(timeout=300_000)
    click_and_settle(page, run)
    record(rows, "GLIOMA (bundled)", "Compare: measure", radio_steps(page, ["NMI", "k-means accuracy"], options.presses))
    page.context.close()


def upload_steps(context, url, rows, options, skip) -> None:
    """Q-alpha's steps on 20,000 uploaded genes and on an uploaded ZIP of the ORL faces (with the
    Kernel page's γ on the ZIP)."""
    if "genes" not in skip:
        page = context().new_page()
        upload(page, url, "Upload a table", "A table: samples x features", "genes.parquet", genes_parquet(),
               "Load table", "Loaded genes.parquet")
        qalpha_steps(page, url, options.presses, rows, "20,000 genes (uploaded)", data_name="genes.parquet")
        page.context.close()
    if "zip" not in skip:
        page = context().new_page()
        upload(page, url, "Upload images", "Image files, or a ZIP", "orl.zip", orl_zip(), "Load images",
               "Loaded orl.zip")
        orl = "ORL ZIP (uploaded)"
        qalpha_steps(page, url, options.presses, rows, orl, data_name="orl.zip")
        open_page(page, url, "kernel", "Top-")
        record(rows, orl, "Kernel Q-alpha: gamma", slider_steps(page, "gamma", options.presses))


def print_steps(rows) -> None:
    """Each control's steps against the bare page's, key press to settled and to painted."""
    floor = statistics.median(rows[0][2])
    floor_painted = statistics.median(t.painted for t in rows[0][2])
    print(f"\n{'data':<26} {'control':<30} {'presses':>7} {'median s':>9} {'p90 s':>7} {'x bare':>7} "
          f"{'new values: n, median, worst s':>31} {'painted s':>10} {'x bare':>7}")
    for data_set, name, times in rows:
        median, p90 = summary(times)
        new = [t for t in times if t.new]
        fresh = f"{len(new)}, {statistics.median(new):.3f}, {max(new):.3f}" if new else "-"
        drawn = statistics.median(t.painted for t in times)
        painted_columns = f" {drawn:>10.3f} {drawn / floor_painted:>7.1f}" if drawn == drawn else f" {'-':>10} {'-':>7}"
        print(f"{data_set:<26} {name:<30} {len(times):>7} {median:>9.3f} {p90:>7.3f} {median / floor:>7.1f} {fresh:>31}"
              + painted_columns)


def print_opens(opens, rounds: int) -> None:
    """Each page's first open in a new session against the bare page's (medians over the rounds)."""
    by_page = {}
    for name, *times in opens:
        by_page.setdefault(name, []).append(times)
    medians = {name: [statistics.median(column) for column in zip(*samples)] for name, samples in by_page.items()}
    bare_settled, bare_painted = medians["bare page"][1], medians["bare page"][2]
    print(f"\n{'first open (new session)':<26} {'to controls s':>13} {'to settled s':>13} {'to painted s':>13} "
          f"{'settled - bare s':>17} {'painted - bare s':>17} {'worst settled s':>16}")
    print(f"(medians over {rounds} rounds)")
    for name, (controls, done, drawn) in medians.items():
        worst = max(times[1] for times in by_page[name])
        print(f"{name:<26} {controls:>13.2f} {done:>13.2f} {drawn:>13.2f} {done - bare_settled:>17.2f} "
              f"{drawn - bare_painted:>17.2f} {worst:>16.2f}")


@contextmanager
def app_and_bare_page():
    """The bare page and the app served side by side and Debian's Chromium: yields a maker of new
    browser sessions (1400 x 1000, with :data:`WATCH`), the bare page's address and the app's;
    everything is stopped on the way out."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        bare, bare_url = serve_bare(folder)
        server, url = start_server()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)

                def context():
                    made = browser.new_context(viewport={"width": 1400, "height": 1000})
                    made.add_init_script(WATCH)
                    return made

                yield context, bare_url, url
                browser.close()
        finally:
            for process in (server, bare):
                stop_server(process, timeout=20)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=10)
    parser.add_argument("--open-rounds", type=int, default=3, help="rounds of first opens (medians are reported)")
    parser.add_argument("--skip", default="", help="comma-separated parts to leave out: opens, faces, tables, genes, "
                                                   "zip")
    options = parser.parse_args()
    skip = set(filter(None, options.skip.split(",")))
    rows, opens = [], []
    with app_and_bare_page() as (context, bare_url, url):
        bare_and_opens(context, bare_url, url, rows, opens, options, skip)
        if "faces" not in skip:
            faces_steps(context, url, rows, options)
        if "tables" not in skip:
            table_steps(context, url, rows, options)
        upload_steps(context, url, rows, options, skip)
    print_steps(rows)
    if opens:
        print_opens(opens, options.open_rounds)


if __name__ == "__main__":
    run_recorded(main, "bench_app", __doc__)
