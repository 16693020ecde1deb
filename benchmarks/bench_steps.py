"""Slider steps as a user feels them: key press to settled page, against a bare Streamlit page.

    python benchmarks/bench_steps.py [--presses 10]

Both pages are served by ``streamlit run`` on loopback ports in the same run and driven by
Debian's Chromium (1400 x 1000). A step lasts from the ``keydown`` of an arrow key on a focused
slider to the last ``script_finished`` message of the runs it caused: an init script wraps
``window.WebSocket`` and reads field 6 of each ``ForwardMsg`` (0 finished, 1 compile error, 3 a
fragment finished; 2, stopped for a new rerun, does not end a step), so no fixed sleep enters a
measure. A step counts as over when such a message came and no other message followed for 0.5 s
(that wait is not part of the figure).

The bare page: one slider and two Plotly figures of the AR faces' size (a 60 x 40 heatmap and
2,400 sorted weights). The Q-alpha page on the bundled AR faces: the K slider; the λ slider with
side classes before the λ path is computed (every λ solved); the λ slider after it (lookups).
Reported: median and 90th percentile per control, and the median as a multiple of the bare page's.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app_server import SCRIPT_IDLE, free_port, start_server  # noqa: E402

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]

#: Records performance.now() of each keydown and of each ForwardMsg whose script_finished (field 6)
#: is 0, 1 or 3, and of every message at all.
WATCH = """
(() => {
  window.__finished = []; window.__message = 0; window.__keydown = 0;
  document.addEventListener('keydown', () => { window.__keydown = performance.now(); }, true);
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

value = st.slider("value", 0, 100, 50)
rng = np.random.default_rng(value)
st.plotly_chart(go.Figure(go.Heatmap(z=rng.random((60, 40)))), key="image")
st.plotly_chart(go.Figure(go.Scatter(y=np.sort(rng.random(2400))[::-1], mode="lines+markers")), key="weights")
'''


def settled(page, since: float, timeout=600.0, quiet=0.5) -> float:
    """Seconds from ``since`` (the page's performance.now()) to the last script_finished after it,
    once no message came for ``quiet`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        finished, message, now = page.evaluate(
            "(since) => [window.__finished.filter(t => t > since).slice(-1)[0] || 0, window.__message, "
            "performance.now()]", since)
        if finished and now - message > quiet * 1000 and page.evaluate(SCRIPT_IDLE):
            return (finished - since) / 1000.0
        page.wait_for_timeout(50)
    raise TimeoutError("the page did not settle")


def now(page) -> float:
    return page.evaluate("() => performance.now()")


def step(page, name, presses, keys=("ArrowRight", "ArrowLeft")):
    """``presses`` arrow presses on the slider ``name`` (alternating direction in pairs), each
    timed to the settled page."""
    thumb = page.get_by_role("slider", name=name).first
    times = []
    for index in range(presses):
        thumb.focus()
        thumb.press(keys[(index // 2) % 2])
        times.append(settled(page, page.evaluate("() => window.__keydown")))
    return times


def summary(times):
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def main():
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=10)
    options = parser.parse_args()
    folder = tempfile.TemporaryDirectory()
    bare_script = Path(folder.name) / "bare.py"
    bare_script.write_text(BARE_PAGE)
    bare_port = free_port()
    bare = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(bare_script), "--server.headless", "true",
                             "--server.port", str(bare_port), "--server.address", "127.0.0.1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server, url = start_server()
    rows = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.add_init_script(WATCH)
            for _ in range(100):  # the bare server's start
                try:
                    page.goto(f"http://127.0.0.1:{bare_port}")
                    page.get_by_role("slider", name="value").wait_for(timeout=2_000)
                    break
                except Exception:  # noqa: BLE001 - not up yet
                    time.sleep(0.3)
            settled(page, 0)
            rows.append(("bare page: slider", step(page, "value", options.presses)))

            page.goto(f"{url}/qalpha")
            page.get_by_text("Selected (K)").first.wait_for(timeout=300_000)
            settled(page, 0)
            rows.append(("Q-alpha, AR faces: K", step(page, "K — top features to show and to cluster with",
                                                      options.presses)))
            clicked = now(page)
            page.get_by_text("side classes", exact=True).click()
            settled(page, clicked)
            lam = "λ — weight of the side information"
            rows.append(("Q-alpha: λ, each λ solved", step(page, lam, options.presses, ("ArrowLeft", "ArrowRight"))))
            clicked = now(page)
            page.get_by_role("button", name="Compute the λ path (13 values of λ)").click()
            page.locator(".js-plotly-plot").filter(has_text="Weights along λ").wait_for(timeout=600_000)
            settled(page, clicked)
            rows.append(("Q-alpha: λ on the path", step(page, lam, options.presses, ("ArrowLeft", "ArrowRight"))))
            assert page.locator("[data-testid='stException']").count() == 0
            browser.close()
    finally:
        for process in (server, bare):
            process.terminate()
            process.wait(timeout=20)
        folder.cleanup()

    floor = statistics.median(rows[0][1])
    print(f"\n{'control':<32} {'presses':>7} {'median s':>9} {'p90 s':>7} {'x bare':>7}")
    for name, times in rows:
        median, p90 = summary(times)
        print(f"{name:<32} {len(times):>7} {median:>9.3f} {p90:>7.3f} {median / floor:>7.1f}")


if __name__ == "__main__":
    main()
