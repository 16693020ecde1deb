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

The map of the samples (issue 60), timed the same way but within the map's canvas alone: from a K
press to its first changed frame (the map redrawn from the last K's axes) and to its last (the
axes converged), on the faces (130 x 2,400), on PBMC (700 x 765: scanpy's ``pbmc68k_reduced``
where scanpy is installed, ``benchmarks/requirements-tools.txt``, else a table of the same shape,
said in the output) and on 2,000 samples x 2,000 features; then the frames in which the map
changed during a one-second drag of K. The browser's own computing time of each frame is read
from the map (``data-work-ms``).

The map coloured by a feature (issue 77): clicks on the top list's first and second rows in turn,
timed within the map's canvas from the click to the first changed frame, against the bare page's
first changed frame; and the K presses again with the map so coloured.
"""

from __future__ import annotations

import argparse
import base64
import io
import tempfile
import time

import numpy as np

from benchmarks.app_server import SCRIPT_IDLE, start_server, stop_server
from benchmarks.bench_app import WATCH, genes_parquet, serve_bare, table_parquet, upload
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


def drag_frames(page, slider, seconds: float = 1.0, masked=None) -> int:
    """Frames in which the page's drawing changed during a one-second mouse drag of ``slider``
    (outside ``masked``: by default the header and the slider's own row)."""
    slider.scroll_into_view_if_needed()
    frames = Frames(page, masked if masked is not None else masked_around(slider))
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


MAP_CONVERGED = "() => { const p = document.querySelector('.map-panel'); return p && p.dataset.state === 'converged'; }"


def map_band(page) -> list[tuple[float, float]]:
    """Everything but the map's canvas, masked."""
    box = page.locator(".map-panel canvas.map").bounding_box()
    return [(0, box["y"]), (box["y"] + box["height"], 100_000)]


def map_press_times(page, slider, presses: int) -> tuple[list[tuple[float, float]], list[float]]:
    """K presses timed within the map: (first, last) changed frame after each, and the browser's
    computing time of the map's last frame."""
    slider.scroll_into_view_if_needed()
    page.wait_for_function(MAP_CONVERGED, timeout=300_000)
    frames = Frames(page, map_band(page))
    times, work = [], []
    for press in range(presses):
        key = "ArrowRight" if press % 2 == 0 else "ArrowLeft"
        slider.focus()
        times.append(painted(page, frames, lambda: page.keyboard.press(key)))
        page.wait_for_function(MAP_CONVERGED, timeout=60_000)
        work.append(float(page.evaluate("() => document.querySelector('.map-panel').dataset.workMs")))
        settle(page, 0.6)
    frames.stop()
    return times, work


def colour_times(page, presses: int) -> list[tuple[float, float]]:
    """Issue 77: clicks on the first and the second feature of the top list in turn (the map
    coloured by it), timed within the map's canvas: the first changed frame (the colours painted)
    and the last (the page's run that records the choice for Undo). A mouse click at the row's
    place, without Playwright's checks for a still target (they wait two animation frames)."""
    rows = page.locator(".scrubber .top li")
    rows.nth(1).scroll_into_view_if_needed()
    page.wait_for_function(MAP_CONVERGED, timeout=300_000)
    # a first click unclocked: the page's Undo button comes with it and moves what is below it
    rows.nth(1).click()
    settle(page, 0.6)
    places = [rows.nth(i).bounding_box() for i in range(2)]
    frames = Frames(page, map_band(page))
    times = []
    for press in range(presses):
        box = places[press % 2]
        times.append(painted(page, frames, lambda: page.mouse.click(box["x"] + 20, box["y"] + box["height"] / 2)))
        settle(page, 0.6)
    frames.stop()
    return times


def pbmc_parquet() -> tuple[bytes, str]:
    """PBMC as a table with a ``cell_type`` column: scanpy's ``pbmc68k_reduced`` (700 cells x 765
    genes, its ``bulk_labels``) where scanpy is installed, else 700 x 765 log-normal values in 10
    groups of 70 with 20 genes raised in each (the same shape)."""
    try:
        import scanpy

        cells = scanpy.datasets.pbmc68k_reduced()
        return (table_parquet(np.asarray(cells.X, dtype=np.float64), [str(v) for v in cells.obs["bulk_labels"]],
                              cells.var_names), "scanpy's pbmc68k_reduced")
    except ImportError:
        rng = np.random.default_rng(0)
        labels = np.repeat(np.arange(10), 70)
        values = rng.lognormal(0.0, 1.0, size=(700, 765))
        for c in range(10):
            values[labels == c, c * 20:(c + 1) * 20] *= 3.0
        return (table_parquet(np.log1p(values), [f"type {c}" for c in labels], [f"gene{j}" for j in range(765)]),
                "stand-in, scanpy not installed")


def square_parquet(n: int = 2000) -> bytes:
    """``n`` samples x ``n`` features, normal values, four groups with 40 features shifted in each."""
    rng = np.random.default_rng(1)
    labels = np.repeat(np.arange(4), n // 4)
    values = rng.normal(size=(n, n))
    for c in range(4):
        values[labels == c, c * 40:(c + 1) * 40] += 1.5
    return table_parquet(values, [f"group {c}" for c in labels], [f"f{j}" for j in range(n)])


def map_and_colour(page, presses: int) -> tuple:
    """On the open Q-alpha page: the map's K presses and drag, then the feature colouring's clicks
    and the K presses again with the map coloured by a feature."""
    slider = page.get_by_role("slider", name=K)
    times, work = map_press_times(page, slider, presses)
    coloured = colour_times(page, presses)
    coloured_k, _ = map_press_times(page, slider, presses)
    page.get_by_role("button", name="Back to the classes").click()
    settle(page, 0.6)
    # last: the drag leaves K far from where the presses began (where the map may not converge)
    drag = drag_frames(page, slider, masked=map_band(page))
    return times, work, drag, coloured, coloured_k


def map_rows(page, app_url, presses: int) -> list[tuple]:
    """The map's K presses and drag, and its colouring by a feature, on the faces, PBMC and
    2,000 x 2,000."""
    measured = []
    page.goto(f"{app_url}/qalpha")
    page.locator(".map-panel canvas.map").wait_for(timeout=300_000)
    settle(page)
    measured.append(("AR faces, 130 x 2,400", *map_and_colour(page, presses)))
    pbmc, source = pbmc_parquet()
    for name, content, label in ((f"PBMC, 700 x 765 ({source})", pbmc, "pbmc.parquet"),
                                 ("2,000 x 2,000 (normal, 4 groups)", square_parquet(), "square.parquet")):
        upload(page, app_url, "Upload a table", "A table: samples x features", label, content, "Load table",
               f"Loaded {label}")
        page.locator("[data-testid='stSidebar']").get_by_role("link", name="Q-alpha", exact=True).click()
        page.locator(".map-panel canvas.map").wait_for(timeout=900_000)
        settle(page)
        measured.append((name, *map_and_colour(page, presses)))
    return measured


def row(name: str, times: list[tuple[float, float]], bare: float) -> str:
    first, _ = median_p90([t[0] for t in times])
    median, p90 = median_p90([t[1] for t in times])
    return f"{name:<34} {first * 1000:>14.0f} {median * 1000:>10.0f} {p90 * 1000:>7.0f} {median / bare:>11.2f}"


def page_rows(page, app_url, presses: int) -> dict:
    """Q-alpha's K and λ presses on the faces, K on 20,000 uploaded genes, and the drags of K."""
    page.goto(f"{app_url}/qalpha")
    page.locator(".scrubber canvas.weights").wait_for(timeout=300_000)
    settle(page)
    k_times = press_times(page, page.get_by_role("slider", name=K), presses)
    drag = drag_frames(page, page.get_by_role("slider", name=K))
    # side class 10, λ set by hand: the λ path (cheap on the faces) comes with the first result
    page.goto(f"{app_url}/qalpha?qa_side_mode=%22side%20classes%22&qa_auto=false&qa_lambda=0.1")
    page.locator(".scrubber .lam-input:visible").first.wait_for(timeout=300_000)
    settle(page)
    lam_times = press_times(page, page.get_by_role("slider", name=LAMBDA), presses)
    # 100 samples x 20,000 genes uploaded as Parquet: the browser draws 20,000 sorted weights
    # (the upload waits for the server's runs as bench_app does, by its watch of the messages)
    page.context.add_init_script(WATCH)
    upload(page, app_url, "Upload a table", "A table: samples x features", "genes.parquet",
           genes_parquet(), "Load table", "Loaded genes.parquet")
    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Q-alpha", exact=True).click()
    page.locator(".scrubber canvas.weights").wait_for(timeout=900_000)
    settle(page)
    gene_times = press_times(page, page.get_by_role("slider", name=K), presses)
    gene_drag = drag_frames(page, page.get_by_role("slider", name=K))
    return dict(k_times=k_times, drag=drag, lam_times=lam_times, gene_times=gene_times, gene_drag=gene_drag)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=10)
    parser.add_argument("--map-only", action="store_true", help="the bare page and the map of the samples only")
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
                if not options.map_only:
                    pages = page_rows(page, app_url, options.presses)
                else:
                    page.context.add_init_script(WATCH)  # the uploads wait for the server's runs by it
                # the map: a window tall enough to hold the sliders and the map at once
                page.set_viewport_size({"width": 1400, "height": 1500})
                maps = map_rows(page, app_url, options.presses)
                browser.close()
        finally:
            stop_server(bare_server)
            stop_server(app_server)
    floor = median_p90([t[1] for t in bare])[0]
    print(f"AR faces, 1,400 x 1,000 Chromium window; {options.presses} presses each; painted: key press to the "
          f"last changed frame before {STILL * 1000:.0f} ms of stillness\n")
    print(f"{'control':<34} {'first frame ms':>14} {'painted ms':>10} {'p90 ms':>7} {'x bare page':>11}")
    print(row("bare page: a slider (server run)", bare, floor))
    if not options.map_only:
        print(row("Q-alpha K (drawn in the browser)", pages["k_times"], floor))
        print(row("Q-alpha λ on the path (browser)", pages["lam_times"], floor))
        print(row("Q-alpha K, 20,000 uploaded genes", pages["gene_times"], floor))
        print(f"\nA one-second drag of K: {pages['drag']} frames with a changed drawing (on the 20,000 genes: "
              f"{pages['gene_drag']}).")
    print("first frame: the median of the first frame that changed; painted: the median (and p90) of the last "
          "changed frame before the page is still, the server's answer included where it shows in the window "
          "(on the λ path, the run's numbers that follow the hand's report 300 ms after the last key).")
    print(f"\nThe map of the samples (1,400 x 1,500 window), K presses timed within the map's canvas; the bare "
          f"page's painted median ({floor * 1000:.0f} ms) is the floor\n")
    print(f"{'data':<52} {'redrawn ms':>10} {'p90':>5} {'converged ms':>12} {'p90':>5} {'x bare':>6} "
          f"{'JS ms/frame':>11} {'drag frames':>11}")
    for name, times, work, frames, _, _ in maps:
        first, first_p90 = median_p90([t[0] for t in times])
        last, last_p90 = median_p90([t[1] for t in times])
        print(f"{name:<52} {first * 1000:>10.0f} {first_p90 * 1000:>5.0f} {last * 1000:>12.0f} {last_p90 * 1000:>5.0f} "
              f"{last / floor:>6.2f} {np.median(work):>11.1f} {frames:>11}")
    print("redrawn: the first changed frame of the map after the key press (drawn from the last K's axes); "
          "converged: the last one (the axes to a residual of 1e-7); JS ms/frame: the browser's computing in the "
          "map's last frame (median); drag frames: frames in which the map changed during a one-second drag of K.")
    bare_first = median_p90([t[0] for t in bare])[0]
    print(f"\nThe map coloured by a feature (issue 77): a click on a row of the top list, timed within the map's "
          f"canvas; the bare page's first changed frame ({bare_first * 1000:.0f} ms) and painted median "
          f"({floor * 1000:.0f} ms) in the same run\n")
    print(f"{'data':<52} {'painted ms':>10} {'p90':>5} {'x bare 1st':>10} {'settled ms':>10} "
          f"{'K redrawn ms':>12} {'K converged ms':>14}")
    for name, times, _, _, coloured, coloured_k in maps:
        first, first_p90 = median_p90([t[0] for t in coloured])
        last, _ = median_p90([t[1] for t in coloured])
        k_first, _ = median_p90([t[0] for t in coloured_k])
        k_last, _ = median_p90([t[1] for t in coloured_k])
        print(f"{name:<52} {first * 1000:>10.0f} {first_p90 * 1000:>5.0f} {first / bare_first:>10.2f} "
              f"{last * 1000:>10.0f} {k_first * 1000:>12.0f} {k_last * 1000:>14.0f}")
    print("painted: the first changed frame of the map after the click (the colours from the data in the browser); "
          "settled: the last (the page's run that records the choice for the link and Undo follows); K redrawn and "
          "converged: K presses as above with the map coloured by the feature.")


if __name__ == "__main__":
    run_recorded(main, "bench_paint", __doc__)
