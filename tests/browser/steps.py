"""What the browser tests do on every page, shared by the files of ``tests/browser`` (one per
part of the app): open the app and wait for its script runs, upload, pick a data set."""

# Streamlit's own state of the script run, on the app element; its status widget is not always
# drawn while a script runs (a 10 s run once looked finished after 1 s)
IDLE = ("() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state')"
        " === 'notRunning'")


def wait_for_app(page, url):
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)


def settle(page):
    """Wait until the script run that the last action started has finished."""
    page.wait_for_timeout(300)
    page.wait_for_function(IDLE, timeout=120_000)


def tab_chooser(page, tab: str, marker):
    """The file input of one Data-page tab (the page has several: images, tables, side data)."""
    page.get_by_role("tab", name=tab).click()
    settle(page)
    return page.get_by_role("tabpanel").filter(has=marker).locator("input[type='file']")


def pick_dataset(page, option: str):
    """Choose a data set in the sidebar's list (bundled, or loaded in this session)."""
    page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").click()
    page.get_by_role("option", name=option, exact=True).click()
    settle(page)


def _png(value, shape=(12, 10)):
    import io

    import numpy as np
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.full(shape, value, dtype=np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


BUSY = (f"() => !({IDLE})() || !!(document.querySelector('[data-testid=\"stSpinner\"]')"
        " || document.querySelector('[data-testid=\"stProgress\"]'))")


def quiet(page, checks: int = 3, timeout: float = 300.0, silence: float = 1.0):
    """Wait until the page is idle (no running status, spinner or progress bar) and stays so: at
    ``checks`` looks 0.7 s apart (a spinner may appear a moment after the run starts), or, where
    the page notes its websocket's messages (conftest's ``MESSAGE_CLOCK``), at two looks 0.35 s
    apart with the server silent for ``silence`` seconds. A page settled long ago passes in 0.35 s
    instead of 1.4 s; one still receiving waits for the messages to stop."""
    import time

    deadline, calm = time.monotonic() + timeout, 0
    while True:
        assert time.monotonic() < deadline, "the page did not settle"
        busy, silent = page.evaluate(f"() => [({BUSY})(), window.__lastMessage === undefined ? null "
                                     f": performance.now() - window.__lastMessage]")
        calm = 0 if busy else calm + 1
        if calm >= checks or (silent is not None and calm >= 2 and silent >= silence * 1000):
            return
        page.wait_for_timeout(700 if silent is None else 350)


SMALL_TABLE = b"sample,label,x1,x2,x3\n" + b"".join(
    f"s{i},{'ab'[i % 2]},{i % 2 * 3 + i * 0.1:.2f},{(i * 7) % 5:.1f},{i * 0.3:.1f}\n".encode() for i in range(12))


def upload_small_table(page):
    """Load "my table.csv" (12 samples, two classes) on the Data page's table tab."""
    chooser = tab_chooser(page, "Upload a table", page.get_by_text("A table: samples x features"))
    chooser.set_input_files(files=[{"name": "my table.csv", "mimeType": "text/csv", "buffer": SMALL_TABLE}])
    page.get_by_text("Will load:").wait_for(timeout=60_000)
    settle(page)
    page.get_by_role("button", name="Load table").click()


def load_table_file(page, name: str, buffer: bytes, mime: str = "text/csv"):
    """On the Data page: choose the file ``name`` on the table tab, wait for the preview, press
    "Load table" and wait until it is loaded."""
    chooser = tab_chooser(page, "Upload a table", page.get_by_text("A table: samples x features"))
    chooser.set_input_files(files=[{"name": name, "mimeType": mime, "buffer": buffer}])
    page.get_by_text("Will load:").wait_for(timeout=60_000)
    settle(page)
    page.get_by_role("button", name="Load table").click()
    page.get_by_text(f"Loaded {name}").first.wait_for(timeout=120_000)


PAGE_PATHS = {"qalpha": "Q-alpha", "data": "Data", "kernel": "Kernel Q-alpha", "topographic": "Topographical map",
              "haar": "Haar reconstructions", "slda": "Sparse LDA / PCA", "compare": "Compare",
              "figures": "Paper figures"}


# null-safe: while a rerun redraws, a plot may be there before Plotly has given it its data
#: Which weights the browser draws (pages/ui/scrubber.js: a new result or λ, a new token)
SORTED_ALPHA = "() => document.querySelector('.scrubber')?.dataset.token ?? null"


#: The K of the server's views (k-means on the selection): it changes once the hand's K is reported
FIRST_METRIC = ("() => [...document.querySelectorAll('[data-testid=\"stMetricLabel\"]')].map(e => e.innerText)"
                ".find(t => t.startsWith('Accuracy, top')) ?? null")


def press_until_changed(page, thumb, key: str, probe: str):
    """Press ``key`` on a slider, wait until ``probe`` (a JS function) reads something new and
    then until the rerun has finished: what follows reads the page after the rerun, and finds
    each widget once (while a rerun draws, the previous run's copy of a slider is still there)."""
    before = page.evaluate(probe)
    thumb.focus()
    thumb.press(key)
    page.wait_for_function(f"(old) => ({probe})() !== old", arg=before, timeout=120_000)
    quiet(page)


def download(page, name: str, timeout: float = 120_000):
    """Click the download button ``name`` and return the download. The pages' download buttons do
    not rerun the page (``on_click="ignore"``): a rerun started by the click once dropped the
    deferred file's answer on CI and left the button spinning, which this test would now catch."""
    with page.expect_download(timeout=timeout) as started:
        page.get_by_role("button", name=name).click()
    return started.value
