"""Key press to pixels painted, timed by Chromium's frames: Q-alpha's K and λ against a bare page.

The Q-alpha page's K and λ are drawn in the browser (issue 50); the bare Streamlit page's slider
is a server run at every step; both are measured in one run.

    python -m benchmarks.bench_paint [--presses 10]

Chromium streams a frame whenever the page repaints (the DevTools protocol's
``Page.startScreencast``); each frame carries the wall-clock time it was drawn. A press is timed
from the key press to the last frame that differs from the one before it, once the page has been
still for 250 ms: "painted complete", whether the answer came from the server or from the browser.
The header (Streamlit's running icon) and the pressed slider's own row (its thumb and value) are
masked: the answer is what changes elsewhere. Rows: the bare page (one slider and two Plotly
figures of the faces' size, every step a server run), the Q-alpha page's K, and its λ on the
computed λ path, and K on an uploaded table of 100 samples x 20,000 genes (Parquet, the Data page's
upload); medians and 90th percentiles of ``--presses`` presses each. Then a one-second drag of K
with the mouse, on the faces and on the genes: the frames in which the drawing changed.
"""

from __future__ import annotations

import argparse
import base64
import io
import tempfile
import time

import numpy as np

from benchmarks.app_server import SCRIPT_IDLE, start_server, stop_server
from benchmarks.bench_app import WATCH, genes_parquet, serve_bare, upload
from benchmarks.results import run_recorded
from benchmarks.timing import median_p90

STILL = 0.25  # seconds without a changed frame: the answer is painted
CHANGED_PIXELS = 8  # pixels that must differ for a frame to count as a change
K = "K — top features to show and to cluster with"
LAMBDA = "λ — weight of the side information"


class Frames:
    """The page's screencast, compared frame by frame: the wall-clock times of the frames that
    differ from the one before in more than :data:`CHANGED_PIXELS` pixels outside ``masked``
    (vertical bands, CSS pixels)."""

    def __init__(self, page, masked: list[tuple[float, float]]):
        self.session = page.context.new_cdp_session(page)
        self.masked, self.pending, self.previous = masked, [], None
        self.session.on("Page.screencastFrame", lambda frame: self.pending.append(frame))
        self.session.send("Page.startScreencast", {"format": "png", "everyNthFrame": 1})

    def changes(self) -> list[float]:
        """The times of the changed frames among those that came since the last call (each
        acknowledged here, in the waiting loop: acknowledging inside the event handler stalls the
        stream)."""
        from PIL import Image

        changed = []
        while self.pending:
            frame = self.pending.pop(0)
            self.session.send("Page.screencastFrameAck", {"sessionId": frame["sessionId"]})
            grey = np.asarray(Image.open(io.BytesIO(base64.b64decode(frame["data"]))).convert("L"), dtype=np.int16)
            if self.previous is not None and self.previous.shape == grey.shape:
                differs = np.abs(grey - self.previous) > 8
                for top, bottom in self.masked:
                    differs[max(0, int(top)):max(0, int(bottom))] = False
                if differs.sum() >= CHANGED_PIXELS:
                    changed.append(frame["metadata"]["timestamp"])
            self.previous = grey
        return changed

    def stop(self) -> None:
        self.session.send("Page.stopScreencast")


def masked_around(slider) -> list[tuple[float, float]]:
    """The header (Streamlit's running icon) and the slider's own row (its thumb and value)."""
    box = slider.bounding_box()
    return [(0, 60), (box["y"] - 30, box["y"] + box["height"] + 24)]


def painted(page, frames: Frames, act) -> tuple[float, float]:
    """Seconds from ``act()`` (a key press) to the first changed frame and to the last changed
    frame before the page is still for :data:`STILL` seconds."""
    frames.changes()  # what came before the press
    start = time.time()
    act()
    changed, deadline = [], start + 30.0
    while time.time() < deadline:
        page.wait_for_timeout(10)
        changed += [stamp for stamp in frames.changes() if stamp > start]
        if time.time() - max(changed[-1] if changed else start, start) > STILL + 0.35 and page.evaluate(SCRIPT_IDLE):
            return (changed[0] - start, changed[-1] - start) if changed else (float("nan"), 0.0)
    return float("nan"), float("nan")


def settle(page, seconds: float = 1.5) -> None:
    page.wait_for_function(SCRIPT_IDLE, timeout=300_000)
    page.wait_for_timeout(seconds * 1000)
    page.wait_for_function(SCRIPT_IDLE, timeout=300_000)


def press_times(page, slider, presses: int) -> list[tuple[float, float]]:
    """``presses`` presses of the arrow keys on ``slider`` (right, then back left), each timed."""
    frames = Frames(page, masked_around(slider))
    times = []
    for press in range(presses):
        key = "ArrowRight" if press % 2 == 0 else "ArrowLeft"
        slider.focus()
        times.append(painted(page, frames, lambda: page.keyboard.press(key)))
        settle(page, 0.6)
    frames.stop()
    return times


def drag_frames(page, slider, seconds: float = 1.0) -> int:
    """Frames in which the page's drawing changed during a one-second mouse drag of ``slider``."""
    slider.scroll_into_view_if_needed()
    frames = Frames(page, masked_around(slider))
    box = slider.bounding_box()
    y, x0 = box["y"] + box["height"] / 2, box["x"] + 9
    page.mouse.move(x0, y)
    page.wait_for_timeout(300)
    frames.changes()  # what came before the drag
    page.mouse.down()
    start = time.time()
    changed, steps = [], 60
    for step in range(1, steps + 1):
        page.mouse.move(x0 + box["width"] * 0.3 * step / steps, y)
        page.wait_for_timeout(1000 * seconds / steps)
        changed += frames.changes()
    page.mouse.up()
    end = time.time()
    page.wait_for_timeout(300)
    changed += frames.changes()
    frames.stop()
    return sum(start <= stamp <= end for stamp in changed)


def row(name: str, times: list[tuple[float, float]], bare: float) -> str:
    first, _ = median_p90([t[0] for t in times])
    median, p90 = median_p90([t[1] for t in times])
    return f"{name:<34} {first * 1000:>14.0f} {median * 1000:>10.0f} {p90 * 1000:>7.0f} {median / bare:>11.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=10)
    options = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        bare_server, bare_url = serve_bare(folder)
        app_server, app_url = start_server()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(bare_url)
                settle(page)
                bare = press_times(page, page.get_by_role("slider", name="value"), options.presses)
                page.goto(f"{app_url}/qalpha")
                page.locator(".scrubber canvas.weights").wait_for(timeout=300_000)
                settle(page)
                k_times = press_times(page, page.get_by_role("slider", name=K), options.presses)
                drag = drag_frames(page, page.get_by_role("slider", name=K))
                # side class 10, λ set by hand: the λ path (cheap on the faces) comes with the first result
                page.goto(f"{app_url}/qalpha?qa_side_mode=%22side%20classes%22&qa_auto=false&qa_lambda=0.1")
                page.locator(".scrubber .lam-input:visible").first.wait_for(timeout=300_000)
                settle(page)
                lam_times = press_times(page, page.get_by_role("slider", name=LAMBDA), options.presses)
                # 100 samples x 20,000 genes uploaded as Parquet: the browser draws 20,000 sorted weights
                # (the upload waits for the server's runs as bench_app does, by its watch of the messages)
                page.context.add_init_script(WATCH)
                upload(page, app_url, "Upload a table", "A table: samples x features", "genes.parquet",
                       genes_parquet(), "Load table", "Loaded genes.parquet")
                page.locator("[data-testid='stSidebar']").get_by_role("link", name="Q-alpha", exact=True).click()
                page.locator(".scrubber canvas.weights").wait_for(timeout=900_000)
                settle(page)
                gene_times = press_times(page, page.get_by_role("slider", name=K), options.presses)
                gene_drag = drag_frames(page, page.get_by_role("slider", name=K))
                browser.close()
        finally:
            stop_server(bare_server)
            stop_server(app_server)
    floor = median_p90([t[1] for t in bare])[0]
    print(f"AR faces, 1,400 x 1,000 Chromium window; {options.presses} presses each; painted: key press to the "
          f"last changed frame before {STILL * 1000:.0f} ms of stillness\n")
    print(f"{'control':<34} {'first frame ms':>14} {'painted ms':>10} {'p90 ms':>7} {'x bare page':>11}")
    print(row("bare page: a slider (server run)", bare, floor))
    print(row("Q-alpha K (drawn in the browser)", k_times, floor))
    print(row("Q-alpha λ on the path (browser)", lam_times, floor))
    print(row("Q-alpha K, 20,000 uploaded genes", gene_times, floor))
    print(f"\nA one-second drag of K: {drag} frames with a changed drawing (on the 20,000 genes: {gene_drag}).")
    print("first frame: the median of the first frame that changed; painted: the median (and p90) of the last "
          "changed frame before the page is still, the server's answer included where it shows in the window "
          "(on the λ path, the run's numbers that follow the hand's report 300 ms after the last key).")


if __name__ == "__main__":
    run_recorded(main, "bench_paint", __doc__)
