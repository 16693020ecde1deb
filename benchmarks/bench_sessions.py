"""Memory held by the app's sessions, and whether closing the tabs gives it back.

    python -m benchmarks.bench_sessions [--tabs 3] [--mb 120]

Starts ``streamlit run app.py`` on a free loopback port, opens ``--tabs`` browser tabs (Debian's
Chromium through Playwright), uploads a table of about ``--mb`` MB as float64 in each and loads
it, then closes the tabs and samples the server's resident size (``/proc/PID/status`` VmRSS)
until the disconnected sessions have been dropped (``server.disconnectedSessionTTL``, 30 s in
``.streamlit/config.toml``). Reference: the server's size before any upload, in the same run.

Also starts the server cold several times with three tabs opening the Data page at once, and
counts error boxes (a lazy import raced between sessions once: "partially initialized module").
"""

import argparse
import io
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.app_server import SCRIPT_IDLE, start_server
from benchmarks.results import run_recorded

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def table_bytes(megabytes: int) -> bytes:
    n_samples = 200
    n_features = megabytes * 2**20 // (8 * n_samples)
    values = np.random.default_rng(0).normal(size=(n_samples, n_features)).astype(np.float32)
    buffer = io.BytesIO()
    np.save(buffer, values)  # NPY: the upload is small to send, the matrix the size asked
    return buffer.getvalue()


def wait_idle(page):
    page.wait_for_timeout(300)
    page.wait_for_function(SCRIPT_IDLE, timeout=180_000)


def sessions(browser, tabs: int, megabytes: int):
    process, url = start_server()
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(url + "/data")
        page.get_by_role("heading", name="Data", exact=True).wait_for(timeout=60_000)
        wait_idle(page)
        idle = resident_mb(process.pid)
        data = table_bytes(megabytes)
        upload = Path(tempfile.mkdtemp()) / "big.npy"  # Playwright sends files over 50 MB from disk
        upload.write_bytes(data)
        contexts = [context] + [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(tabs - 1)]
        for context in contexts:
            page = context.pages[0] if context.pages else context.new_page()
            if page.url != url + "/data":
                page.goto(url + "/data")
                page.get_by_role("heading", name="Data", exact=True).wait_for(timeout=60_000)
            page.get_by_role("tab", name="Upload a table").click()
            wait_idle(page)
            chooser = page.get_by_role("tabpanel").filter(has=page.get_by_text("A table: samples x features")) \
                .locator("input[type='file']")
            chooser.set_input_files(str(upload))
            page.get_by_role("button", name="Load table").click()
            page.get_by_text("Loaded big.npy").wait_for(timeout=180_000)
        loaded = resident_mb(process.pid)
        for context in contexts:
            context.close()
        samples = []
        start = time.monotonic()
        while time.monotonic() - start < 70:
            time.sleep(10)
            samples.append((f"{time.monotonic() - start:.0f} s after closing the tabs", resident_mb(process.pid)))
        # Streamlit keeps disconnected sessions in a TTL cache that expires entries only when it is
        # next written to: a new visitor (a session connecting) is what frees them
        visitor = browser.new_context().new_page()
        visitor.goto(url)
        visitor.get_by_role("heading", name="Spectral feature selection").wait_for(timeout=60_000)
        wait_idle(visitor)
        for _ in range(2):
            time.sleep(5)
            samples.append((f"{time.monotonic() - start:.0f} s, after a new visitor", resident_mb(process.pid)))
        visitor.context.close()
        print(f"\nsessions: {tabs} tabs, each a {megabytes} MB matrix (float64) loaded from a "
              f"{len(data) / 2**20:.0f} MB NPY")
        print(f"{'moment':<36} {'server RSS MB':>14}")
        print(f"{'before any upload (reference)':<36} {idle:>14.0f}")
        print(f"{'every tab loaded':<36} {loaded:>14.0f}  (+{loaded - idle:.0f} MB, "
              f"{(loaded - idle) / tabs:.0f} MB a tab)")
        for moment, rss in samples:
            print(f"{moment:<36} {rss:>14.0f}")
        released = (loaded - samples[-1][1]) / max(loaded - idle, 1e-9)
        print(f"released after closing: {100 * released:.0f}% of what the tabs added")
    finally:
        process.terminate()
        process.wait(timeout=15)


def cold_starts(browser, starts: int):
    errors = 0
    for _ in range(starts):
        process, url = start_server()
        try:
            pages = [browser.new_context().new_page() for _ in range(3)]
            for page in pages:  # at once: the first script runs of three sessions overlap
                page.goto(url + "/data", wait_until="commit")
            for page in pages:
                page.get_by_role("heading", name="Data", exact=True).wait_for(timeout=60_000)
                wait_idle(page)
                errors += page.locator("[data-testid='stException'], [data-testid='stAlertContentError']").count()
            for page in pages:
                page.context.close()
        finally:
            process.terminate()
            process.wait(timeout=15)
    print(f"\ncold starts with 3 simultaneous Data-page sessions: {starts} starts, {errors} error boxes")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tabs", type=int, default=3)
    parser.add_argument("--mb", type=int, default=120)
    parser.add_argument("--starts", type=int, default=7)
    options = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            sessions(browser, options.tabs, options.mb)
            cold_starts(browser, options.starts)
        finally:
            browser.close()


if __name__ == "__main__":
    run_recorded(main, "bench_sessions", __doc__)
