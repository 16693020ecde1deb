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
computed λ path; medians and 90th percentiles of ``--presses`` presses each. Then a one-second drag
of K with the mouse: the frames in which the drawing changed.
"""

from __future__ import annotations

import argparse
import base64
import io
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.app_server import SCRIPT_IDLE, start_server, stop_server
from benchmarks.bench_app import BARE_PAGE
from benchmarks.results import run_recorded

STILL = 0.25  # seconds without a changed frame: the answer is painted
CHANGED_PIXELS = 8  # pixels that must differ for a frame to count as a change
K = "K — top features to show and to cluster with"
LAMBDA = "λ — weight of the side information"


class Frames:
    """The page's screencast: each frame decoded to grey, with its wall-clock time."""

    def __init__(self, page):
        self.session = page.context.new_cdp_session(page)
        self.pending, self.frames = [], []
        self.session.on("Page.screencastFrame", lambda frame: self.pending.append(frame))
        self.session.send("Page.startScreencast", {"format": "png", "everyNthFrame": 1})

    def collect(self) -> None:
        """Acknowledge and decode what came (from the waiting loop: acknowledging inside the event
        handler stalls the stream)."""
        from PIL import Image

        while self.pending:
            frame = self.pending.pop(0)
            self.session.send("Page.screencastFrameAck", {"sessionId": frame["sessionId"]})
            grey = np.asarray(Image.open(io.BytesIO(base64.b64decode(frame["data"]))).convert("L"), dtype=np.int16)
            self.frames.append((frame["metadata"]["timestamp"], grey))

    def stop(self) -> None:
        self.session.send("Page.stopScreencast")


def painted(page, frames: Frames, act, masked: list[tuple[float, float]]) -> tuple[float, float]:
    """Seconds from ``act()`` (a key press) to the first changed frame and to the last changed
    frame before the page is still for :data:`STILL` seconds; ``masked``: vertical bands (CSS
    pixels) left out of the comparison."""
    frames.collect()
    previous = frames.frames[-1][1] if frames.frames else None
    start = time.time()
    act()
    first_change, last_change, deadline = None, start, start + 30.0
    while time.time() < deadline:
        page.wait_for_timeout(10)
        frames.collect()
        for stamp, grey in [f for f in frames.frames if f[0] >= start]:
            if previous is not None and previous.shape == grey.shape:
                differs = np.abs(grey - previous) > 8
                for top, bottom in masked:
                    differs[max(0, int(top)):max(0, int(bottom))] = False
                if differs.sum() >= CHANGED_PIXELS and stamp > last_change:
                    last_change = stamp
                    first_change = stamp if first_change is None else first_change
            previous = grey
        frames.frames = [f for f in frames.frames if f[0] < start][-1:] + [f for f in frames.frames if f[0] >= start][-1:]
        if time.time() - max(last_change, start) > STILL + 0.35 and page.evaluate(SCRIPT_IDLE):
            return (float("nan") if first_change is None else first_change - start), last_change - start
    return float("nan"), float("nan")


def settle(page, seconds: float = 1.5) -> None:
    page.wait_for_function(SCRIPT_IDLE, timeout=300_000)
    page.wait_for_timeout(seconds * 1000)
    page.wait_for_function(SCRIPT_IDLE, timeout=300_000)


def press_times(page, slider, presses: int) -> list[float]:
    """``presses`` presses of the arrow keys on ``slider`` (right, then back left), each timed."""
    frames = Frames(page)
    box = slider.bounding_box()
    masked = [(0, 60), (box["y"] - 30, box["y"] + box["height"] + 24)]
    times = []
    for press in range(presses):
        key = "ArrowRight" if press % 2 == 0 else "ArrowLeft"
        slider.focus()
        times.append(painted(page, frames, lambda: page.keyboard.press(key), masked))
        settle(page, 0.6)
    frames.stop()
    return times


def drag_frames(page, slider, seconds: float = 1.0) -> int:
    """Frames in which the page's drawing changed during a one-second mouse drag of ``slider``."""
    frames = Frames(page)
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    masked = [(0, 60), (box["y"] - 30, box["y"] + box["height"] + 24)]
    y, x0 = box["y"] + box["height"] / 2, box["x"] + 9
    page.mouse.move(x0, y)
    page.mouse.down()
    start = time.time()
    steps = 60
    for step in range(1, steps + 1):
        page.mouse.move(x0 + box["width"] * 0.3 * step / steps, y)
        page.wait_for_timeout(1000 * seconds / steps)
        frames.collect()
    page.mouse.up()
    end = time.time()
    page.wait_for_timeout(300)
    frames.collect()
    frames.stop()
    changed, previous = 0, None
    for stamp, grey in frames.frames:
        if previous is not None and previous.shape == grey.shape and start <= stamp <= end:
            differs = np.abs(grey - previous) > 8
            for top, bottom in masked:
                differs[max(0, int(top)):max(0, int(bottom))] = False
            changed += int(differs.sum() >= CHANGED_PIXELS)
        previous = grey
    return changed


def _median_p90(times) -> tuple[float, float]:
    times = sorted(t for t in times if t == t)
    return statistics.median(times), times[min(len(times) - 1, int(round(0.9 * (len(times) - 1))))]


def row(name: str, times: list[tuple[float, float]], bare: float) -> str:
    first, _ = _median_p90([t[0] for t in times])
    median, p90 = _median_p90([t[1] for t in times])
    return f"{name:<34} {first * 1000:>14.0f} {median * 1000:>10.0f} {p90 * 1000:>7.0f} {median / bare:>11.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=10)
    options = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        bare_script = Path(folder) / "bare.py"
        bare_script.write_text(BARE_PAGE)
        bare_server, bare_url = start_server(bare_script)
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
                browser.close()
        finally:
            stop_server(bare_server)
            stop_server(app_server)
    floor = _median_p90([t[1] for t in bare])[0]
    print(f"AR faces, 1,400 x 1,000 Chromium window; {options.presses} presses each; painted: key press to the "
          f"last changed frame before {STILL * 1000:.0f} ms of stillness\n")
    print(f"{'control':<34} {'first frame ms':>14} {'painted ms':>10} {'p90 ms':>7} {'x bare page':>11}")
    print(row("bare page: a slider (server run)", bare, floor))
    print(row("Q-alpha K (drawn in the browser)", k_times, floor))
    print(row("Q-alpha λ on the path (browser)", lam_times, floor))
    print(f"\nA one-second drag of K: {drag} frames with a changed drawing.")
    print("first frame: the median of the first frame that changed; painted: the median (and p90) of the last "
          "changed frame before the page is still, the server's answer included where it shows in the window "
          "(on the λ path, the run's numbers that follow the hand's report 300 ms after the last key).")


if __name__ == "__main__":
    run_recorded(main, "bench_paint", __doc__)
