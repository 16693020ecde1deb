"""The Q-alpha page in the browser: the run on the faces with its weight map, K and λ moved in the
browser (keys, quick presses, drags) and told to the server once, the λ path and the top-K band
marked without redrawing, Stop, the look-up, K carried to another data set, the per-class view,
and an .h5ad's UMAP."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from conftest import ARTEFACTS, browser_context
from steps import load_table_file, pick_dataset, quiet, settle, tab_chooser, wait_for_app, SORTED_ALPHA


def test_qalpha_page_runs_on_the_faces(page, app_url):
    wait_for_app(page, app_url)
    page.get_by_role("heading", name="Spectral feature selection").wait_for(timeout=60_000)
    page.get_by_role("link", name="Q-alpha", exact=True).click()
    page.get_by_role("heading", name="Q-alpha").wait_for(timeout=60_000)
    page.get_by_text("Selected (K)").first.wait_for(timeout=120_000)
    # the sorted weights, the selected pixels on the mean image and the top features drawn by the
    # browser (the figures of the same, the per-class dot plot and the history wait in closed
    # expanders)
    expect(page.locator(".scrubber .image-caption")).to_contain_text("outlined", timeout=60_000)
    page.locator(".scrubber canvas.weights").wait_for(timeout=60_000)
    # the log rank axis of the 2,400 weights carries its numbers (issue 59: it had none)
    expect(page.locator(".scrubber canvas.weights")).to_have_attribute("data-rank-ticks", "1,10,100,1000")
    assert page.locator(".scrubber .top li").count() == 10
    assert page.locator(".js-plotly-plot").count() == 0
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "qalpha.png"))
    weight_map_follows_its_controls(page)


PIXEL_AT = """([x, y]) => { const canvas = document.querySelector('.scrubber canvas.image');
  const scale = canvas.width / 40; return [...canvas.getContext('2d').getImageData(x * scale + 1, y * scale + 1, 1, 1).data]; }"""


def weight_map_follows_its_controls(page):
    """Issue 60: the faces' weights drawn as viridis over the mean image, with a colour bar over
    the weights' range; the largest weight's pixel is viridis's top colour blended at the opacity
    over the grey below; opacity 0 leaves the grey, "top K" marks the pixels red, and a sample's
    own image can be chosen from the samples the map holds."""
    import numpy as np

    from core.data.bundled import load_dataset
    from core.plots import contrast_stretch

    weights = page.evaluate("""() => [...document.querySelectorAll('.scrubber .top li')]
        .map(e => Number(e.textContent.trim().split(/\\s+/).pop()))""")
    top = page.locator(".scrubber .top li").first.get_attribute("data-feature")  # "pixel (row, column)"
    row, column = (int(v) for v in top.strip("pixel ()").split(","))
    faces = load_dataset("warpAR10P")
    grey = np.round(contrast_stretch(faces.X.mean(axis=0).reshape(60, 40)) * 255).astype(int)
    low, high = (float(v) for v in page.locator(".scrubber canvas.colour-bar").get_attribute("data-range").split(","))
    assert high == pytest.approx(weights[0], rel=2e-3) and low < high
    drawn = page.evaluate(PIXEL_AT, [column, row])
    below = grey[row, column]
    expected = [0.3 * below + 0.7 * c for c in (253, 231, 37)]  # viridis's top, at the default 70% opacity
    assert all(abs(d - e) <= 2 for d, e in zip(drawn[:3], expected)), (drawn, expected, top)
    page.locator(".scrubber .image-panel").screenshot(path=str(ARTEFACTS / "qalpha-weight-map.png"))
    page.locator(".scrubber .opacity").fill("0")
    page.wait_for_timeout(100)
    assert all(abs(value - below) <= 1 for value in page.evaluate(PIXEL_AT, [column, row])[:3])
    page.locator(".scrubber .image-mode").select_option("top")
    page.get_by_text("pixels (red) on the mean image").first.wait_for(timeout=10_000)
    assert page.evaluate(PIXEL_AT, [column, row])[:3] == [220, 30, 30]
    page.locator(".scrubber .image-panel").screenshot(path=str(ARTEFACTS / "qalpha-top-k-mask.png"))
    # a sample's own image under the weights (the map's samples hold them)
    page.locator(".scrubber .image-mode").select_option("weights")
    page.locator(".scrubber .image-choice").select_option(index=3)
    name = page.locator(".scrubber .image-choice option").nth(3).inner_text()
    expect(page.locator(".scrubber .image-caption")).to_contain_text(f"on {name}")
    page.locator(".scrubber .image-panel").screenshot(path=str(ARTEFACTS / "qalpha-weight-map-on-a-sample.png"))


def sorted_alpha_values(page):
    # Plotly keeps typed arrays as {dtype, bdata} in .data: compare their serialisation
    return page.evaluate(SORTED_ALPHA)


def test_moving_the_lambda_slider_changes_the_plot(page, app_url):
    wait_for_app(page, app_url)
    page.get_by_role("heading", name="Spectral feature selection").wait_for(timeout=60_000)
    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Q-alpha", exact=True).click()
    page.get_by_text("Selected (K)").first.wait_for(timeout=120_000)
    page.get_by_text("side classes", exact=True).click()
    settle(page)
    # asked for, k and λ are chosen from the data, and the page says so and why (issue 59: not by
    # itself: the λ slider stays until the user asks)
    expect(page.get_by_role("slider", name="λ — weight of the side information")).to_be_visible(timeout=120_000)
    page.get_by_text("Choose k and λ from the data", exact=True).click()
    page.get_by_text("Chosen from the data: k = ").wait_for(timeout=120_000)
    quiet(page)
    chosen = page.locator("[data-testid='stMetric']").filter(has_text="λ — weight of the side information")
    chosen_lam = chosen.locator("[data-testid='stMetricValue']").inner_text()
    assert chosen_lam in ("0.1", "1", "10")
    page.get_by_text("Choose k and λ from the data", exact=True).click()  # set them by hand
    # the λ path is cheap on the faces: computed at once, and λ then moves in the browser
    page.locator(".scrubber .lam-input:visible").first.wait_for(timeout=300_000)
    thumb = page.get_by_role("slider", name="λ — weight of the side information")
    expect(thumb).to_be_enabled(timeout=120_000)
    quiet(page)  # the slider starts at the chosen λ, and the run there has drawn its weights
    expect(thumb).to_have_attribute("aria-valuetext", chosen_lam)
    before = sorted_alpha_values(page)
    thumb.focus()
    thumb.press("ArrowLeft")
    expect(thumb).to_have_attribute("aria-valuetext", {"0.1": "0.05", "1": "0.5", "10": "5"}[chosen_lam],
                                    timeout=30_000)
    # nothing else changed since the page was quiet: new weights drawn are the slider's doing
    page.wait_for_function(f"(old) => ({SORTED_ALPHA})() !== old", arg=before, timeout=60_000)
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "qalpha-lambda-moved.png"))


def test_stop_only_while_work_runs_and_it_keeps_the_last_result(page, app_url):
    """Kernel Q-alpha on the AR faces (2,400 features: seconds per run). While the page is idle
    there is no Stop to press (a Stop pressed while idle used to wipe the result); Stop pressed
    during the run for a new k leaves the previous result on the page and says so."""
    # the exact step (seconds per run on these faces; the fast one may end before Stop is pressed)
    wait_for_app(page, f"{app_url}/kernel?kq_exact=true")
    metrics = page.locator("[data-testid='stMetric']")
    metrics.filter(has_text="Iterations").wait_for(timeout=300_000)
    settle(page)
    assert page.get_by_role("button", name="Stop").count() == 0
    before = metrics.all_inner_texts()
    k = page.get_by_role("spinbutton", name="k — number of clusters")
    k.fill(str(int(k.input_value()) + 3))
    k.press("Enter")
    stop = page.get_by_role("button", name="Stop")
    stop.wait_for(timeout=60_000)
    stop.click()
    page.get_by_text("Stopped. The result below is the last complete one").wait_for(timeout=60_000)
    settle(page)
    assert metrics.all_inner_texts() == before  # the previous result, untouched
    assert page.get_by_role("button", name="Stop").count() == 0 and page.get_by_role("button", name="Resume").count() == 1
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "kernel-stopped.png"), full_page=True)


def test_ten_quick_presses_of_the_lambda_slider_land_on_the_tenth_value(page, app_url):
    """No key press is lost: from λ = 1e-4 on the faces' λ path (computed at once: it is cheap),
    ten ArrowRight presses sent without waiting move λ ten steps in the browser, to 0.03, and the
    page's run that follows the hand's stop ends on that value (the link written by that run says
    so)."""
    import json
    from urllib.parse import parse_qs, urlparse

    wait_for_app(page, f"{app_url}/qalpha?qa_side_mode=%22side%20classes%22&qa_auto=false&qa_lambda=0.0001")
    page.locator(".scrubber .lam-input:visible").first.wait_for(timeout=300_000)
    quiet(page)
    thumb = page.get_by_role("slider", name="λ — weight of the side information")
    assert thumb.get_attribute("aria-valuetext") == "0.0001"
    thumb.focus()
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    assert thumb.get_attribute("aria-valuetext") == "0.03"
    # the run that follows the hand's stop writes it into the link; a lost press would leave
    # another value there (on a busy machine the runs start late: wait for the state, not a time)
    page.wait_for_function("() => new URLSearchParams(location.search).get('qa_lambda') === '0.03'",
                           timeout=180_000)
    quiet(page)
    assert thumb.get_attribute("aria-valuetext") == "0.03"
    assert json.loads(parse_qs(urlparse(page.url).query)["qa_lambda"][0]) == 0.03
    assert page.locator("[data-testid='stException']").count() == 0


# In the page: a mark the browser drew over a chart (pages/ui/widgets.marks: class x-mark-line or
# x-mark-band), in pixels from the left of the figure's box, beside where Plotly itself puts each
# of the data x given (at the plot's left edge when the axis starts after it); the band's label;
# the axis range. The chart element is tagged so that a redraw (a new element) shows
X_MARK = """({chart, mark, xs}) => {
  const plot = document.querySelector(`.st-key-${chart} .js-plotly-plot`);
  const drawn = plot && plot.querySelector(`.x-mark-${mark}`);
  if (!plot || !drawn || drawn.style.display === 'none' || !plot._fullLayout) return null;
  const box = plot.querySelector('.svg-container').getBoundingClientRect();
  const axis = plot._fullLayout.xaxis, size = plot._fullLayout._size;
  const at = drawn.getBoundingClientRect(), label = plot.querySelector('.x-mark-label');
  const tagged = plot.__tagged === true;
  plot.__tagged = true;
  return {left: at.left - box.left, right: at.right - box.left, middle: (at.left + at.right) / 2 - box.left,
          plotly: xs.map((x) => size.l + Math.max(0, axis.d2p(x))), range: axis.range.slice(),
          label: label && label.textContent, tagged};
}"""


def path_line(x: float) -> dict:
    """``X_MARK``'s argument for the current-λ line over the λ path at λ = ``x``."""
    return {"chart": "lambda_path", "mark": "line", "xs": [x]}


def sorted_band(k: int) -> dict:
    """``X_MARK``'s argument for the top-K band over the sorted weights (ranks 0.5 to K + 0.5)."""
    return {"chart": "sorted_alpha", "mark": "band", "xs": [0.5, k + 0.5]}


def test_the_lambda_path_marks_the_current_lambda_without_redrawing(page, app_url):
    """On the computed λ path, the dashed line of the current λ stands where Plotly itself puts that
    λ on the axis, moves with the slider, and the figure is not drawn again for it (the same chart
    element before and after the step)."""
    wait_for_app(page, f"{app_url}/qalpha?qa_side_mode=%22side%20classes%22&qa_auto=false&qa_lambda=0.1")
    compute = page.get_by_role("button", name="Compute the λ path")
    page.locator(".st-key-lambda_path .x-mark-line").or_(compute).first.wait_for(timeout=300_000)
    if compute.count():  # not computed yet by this server (the tests share it)
        compute.click()
    page.locator(".st-key-lambda_path .x-mark-line").wait_for(timeout=300_000)
    quiet(page)
    at = page.wait_for_function(X_MARK, arg=path_line(0.1), timeout=60_000).json_value()
    assert abs(at["middle"] - at["plotly"][0]) <= 1.5, at
    thumb = page.get_by_role("slider", name="λ — weight of the side information")
    thumb.focus()
    thumb.press("ArrowRight")
    expect(thumb).to_have_attribute("aria-valuetext", "0.2", timeout=30_000)
    page.wait_for_function(f"(arg) => {{ const at = ({X_MARK})(arg); return at && Math.abs(at.middle - at.plotly[0]) <= 1.5; }}",
                           arg=path_line(0.2), timeout=60_000)
    quiet(page)
    at = page.evaluate(X_MARK, path_line(0.2))
    assert at["tagged"] and abs(at["middle"] - at["plotly"][0]) <= 1.5, at
    # a zoom (Plotly's own Zoom in, about the middle of the axes) moves λ 0.2 on the axis, and the
    # line with it
    page.locator(".st-key-lambda_path .nsewdrag").hover()
    page.locator(".st-key-lambda_path [data-title='Zoom in']").click()
    page.wait_for_function(f"(arg) => {{ const at = ({X_MARK})(arg); return at && Math.abs(at.plotly[0] - {at['plotly'][0]}) > 20"
                           " && Math.abs(at.middle - at.plotly[0]) <= 1.5; }", arg=path_line(0.2), timeout=30_000)
    assert page.locator("[data-testid='stException']").count() == 0
    page.locator(".st-key-lambda_path").screenshot(path=str(ARTEFACTS / "qalpha-lambda-path-marker.png"))


def test_the_top_k_band_follows_k_without_redrawing_the_weights(page, app_url):
    """The top-K band over the sorted weights (the figure, opened under the browser's own drawing)
    stands where Plotly itself puts ranks 0.5 and K + 0.5, and a K step moves it without drawing
    the figure again: the same chart element, and a zoom the user made is kept."""
    wait_for_app(page, f"{app_url}/qalpha?qa_top_k=100")
    page.get_by_text("Sorted weights as a figure").click()  # the browser draws its own; the figure on request
    page.locator(".st-key-sorted_alpha .x-mark-band").wait_for(timeout=300_000)
    quiet(page)
    at = page.wait_for_function(X_MARK, arg=sorted_band(100), timeout=60_000).json_value()
    assert abs(at["left"] - at["plotly"][0]) <= 1.5 and abs(at["right"] - at["plotly"][1]) <= 1.5, at
    assert at["label"] == "top 100"
    # the user zooms into the first quarter of the ranks (a drag across the plot, as with the mouse),
    # the plot scrolled into the window first: a drag below the window's edge reaches nothing
    page.locator(".st-key-sorted_alpha .nsewdrag").scroll_into_view_if_needed()
    area = page.locator(".st-key-sorted_alpha .nsewdrag").bounding_box()
    middle = area["y"] + area["height"] / 2
    page.mouse.move(area["x"] + 2, middle)
    page.mouse.down()
    page.mouse.move(area["x"] + area["width"] / 4, middle + 5, steps=8)
    page.mouse.up()
    zoomed = page.wait_for_function(f"(arg) => {{ const at = ({X_MARK})(arg); return at && at.range[1] < {at['range'][1]} / 2"
                                    " && Math.abs(at.right - at.plotly[1]) <= 1.5 && at; }", arg=sorted_band(100),
                                    timeout=30_000).json_value()
    thumb = page.get_by_role("slider", name="K — top features to show and to cluster with")
    thumb.focus()
    thumb.press("ArrowRight")
    expect(thumb).to_have_attribute("aria-valuetext", "101", timeout=30_000)
    page.wait_for_function(f"(arg) => {{ const at = ({X_MARK})(arg); return at && at.label === 'top 101'"
                           " && Math.abs(at.right - at.plotly[1]) <= 1.5; }", arg=sorted_band(101), timeout=60_000)
    quiet(page)
    at = page.evaluate(X_MARK, sorted_band(101))
    assert at["tagged"] and at["range"] == zoomed["range"], (at, zoomed)
    assert abs(at["right"] - at["plotly"][1]) <= 1.5
    assert page.locator("[data-testid='stException']").count() == 0
    page.locator(".st-key-sorted_alpha").screenshot(path=str(ARTEFACTS / "qalpha-top-k-band.png"))


def test_a_feature_looked_up_by_typing_part_of_its_name(page, app_url):
    """Issue 60: on wine, "prol" typed in the lookup's box offers proline; chosen, its rank is the
    one the scrubber's list gives it, the sorted weights circle it and its table has a row per
    cultivar."""
    wait_for_app(page, f"{app_url}/qalpha")
    page.get_by_text("Selected (K)").first.wait_for(timeout=120_000)
    pick_dataset(page, "wine")
    page.locator(".scrubber .top li").first.wait_for(timeout=120_000)
    quiet(page)
    listed = page.evaluate("() => [...document.querySelectorAll('.scrubber .top li')].map(e => e.dataset.feature)")
    page.get_by_text("Look up a feature").click()
    chooser = page.locator("[data-testid='stSelectbox']").filter(has_text="Feature")
    chooser.wait_for(timeout=60_000)
    quiet(page)  # the expander's opening reruns the part of the page it is in
    chooser.locator("input").click()
    page.keyboard.type("prol")
    page.get_by_role("option", name="proline", exact=True).wait_for(timeout=30_000)
    page.screenshot(path=str(ARTEFACTS / "qalpha-feature-lookup-typed.png"))
    page.get_by_role("option", name="proline", exact=True).click()
    settle(page)
    rank = page.locator("[data-testid='stMetric']").filter(has_text="Rank")
    rank.wait_for(timeout=60_000)
    if "proline" in listed:
        expect(rank.locator("[data-testid='stMetricValue']")).to_have_text(f"{listed.index('proline') + 1} of 13")
    page.locator(".js-plotly-plot").filter(has_text="proline on the sorted weights").wait_for(timeout=60_000)
    lookup = page.locator("[data-testid='stExpander']").filter(has_text="Look up a feature")
    lookup.locator("[data-testid='stDataFrame']").wait_for(timeout=60_000)  # the per-class rows (a canvas grid)
    assert page.locator("[data-testid='stException']").count() == 0
    lookup.screenshot(path=str(ARTEFACTS / "qalpha-feature-lookup.png"))


def test_k_of_the_faces_carried_to_a_four_class_table_falls_back_with_a_note(page, app_url):
    """k = 10 set for the AR faces' ten people does not carry silently to GLIOMA's four classes:
    the page says so, naming the setting by its label, the old and the new value (the library's
    default k, 2, the page's too: issue 49)."""
    wait_for_app(page, f"{app_url}/qalpha")
    page.get_by_text("Selected (K)").first.wait_for(timeout=120_000)
    quiet(page)
    k_box = page.get_by_role("spinbutton", name="k — number of clusters")
    assert k_box.input_value() == "2"
    k_box.fill("10")
    k_box.press("Enter")
    page.wait_for_function("() => new URLSearchParams(location.search).get('qa_k') === '10'", timeout=60_000)
    quiet(page)
    pick_dataset(page, "GLIOMA")
    page.get_by_text("k — number of clusters: 10 was chosen for warpAR10P; for GLIOMA it is now 2").wait_for(
        timeout=120_000)
    quiet(page)
    assert page.get_by_role("spinbutton", name="k — number of clusters").input_value() == "2"
    assert page.locator("[data-testid='stException']").count() == 0


#: In the page: frames in which the scrubber drew another K or λ, counted from now on
COUNT_DRAWN = """() => {
  const drawn = () => { const root = document.querySelector('.scrubber'); return root.dataset.token + root.dataset.k; };
  const seen = window.__drawn = {frames: 0, last: drawn(), stop: false};
  window.__inputs = [];  // when the sliders' values changed (the scrubber's 'input' events)
  if (!window.__inputsNoted) {
    window.__inputsNoted = true;
    document.querySelectorAll('.scrubber input').forEach(input => input.addEventListener('input',
      () => window.__inputs.push(performance.now())));
  }
  const look = () => {
    const now = drawn();
    if (now !== seen.last) { seen.frames += 1; seen.last = now; }
    if (!seen.stop) requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}"""


#: pages/ui/scrubber.js's REPORT_AFTER_MS: a value held this long is reported to the server
REPORT_AFTER_MS = 300


def report_first_due(inputs: list) -> float:
    """When the scrubber's report first fell due during a drag: ``REPORT_AFTER_MS`` after a change
    of value that no other followed within that time (the hand paused: on a busy machine a step of
    the drag can take that long, and the scrubber then reports, as it should)."""
    following = inputs[1:] + [float("inf")]
    return next(now + REPORT_AFTER_MS for now, after in zip(inputs, following) if after - now >= REPORT_AFTER_MS)


def drag(page, slider, to_share: float, seconds: float = 1.0):
    """Drag a range input's thumb with the mouse from near its left end to ``to_share`` of its
    width over ``seconds``, as a hand does, and let go."""
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    y, start = box["y"] + box["height"] / 2, box["x"] + 9  # the thumb's centre at the slider's first value
    page.mouse.move(start, y)
    page.mouse.down()
    steps = 30
    for step in range(1, steps + 1):
        page.mouse.move(start + (box["x"] + box["width"] * to_share - start) * step / steps, y)
        page.wait_for_timeout(1000 * seconds / steps)
    page.mouse.up()


def test_dragging_k_and_lambda_redraws_in_the_browser_and_tells_the_server_once(page, app_url):
    """Issue 50: on the computed λ path of the faces (side class 10), a one-second drag of K and then
    of λ is drawn by the browser frame after frame with no message from the server until the hand
    stops; then the count, the marked pixels, the top features drawn, k-means at K and the link all
    agree with the library's own computation at that K and λ."""
    import json
    from urllib.parse import parse_qs, urlparse

    import numpy as np

    from core.data.bundled import load_dataset
    from core.evaluation.metrics import selection_curves
    from core.selection.lambda_path import q_alpha_path
    from pages.ui.settings import QALPHA_PATH_LAMBDAS

    wait_for_app(page, f"{app_url}/qalpha?qa_side_mode=%22side%20classes%22&qa_auto=false&qa_lambda=0.1")
    compute = page.get_by_role("button", name="Compute the λ path")
    page.locator(".scrubber .lam-input:visible").or_(compute).first.wait_for(timeout=300_000)
    if compute.count():  # not computed yet by this server (the tests share it)
        compute.click()
    lam_slider = page.get_by_role("slider", name="λ — weight of the side information")
    page.locator(".scrubber .lam-input:visible").first.wait_for(timeout=300_000)
    quiet(page)
    k_slider = page.get_by_role("slider", name="K — top features to show and to cluster with")
    # K crosses hundreds of values, λ some of the path's (each a frame of its own)
    for slider, share, frames in ((k_slider, 0.2, 10), (lam_slider, 0.6, 5)):
        page.evaluate(COUNT_DRAWN)
        started = page.evaluate("() => performance.now()")
        drag(page, slider, share)
        drawn = page.evaluate("() => { window.__drawn.stop = true; return window.__drawn.frames; }")
        ended = page.evaluate("() => performance.now()")
        inputs = page.evaluate("() => window.__inputs")
        during = [m for m in page.evaluate("() => window.__messages || []") if started < m <= ended]
        # nothing from the server while the hand moves: a message only once a report fell due
        assert inputs and all(m >= report_first_due(inputs) for m in during), (started, during, inputs, ended)
        assert drawn >= frames, drawn  # redrawn as the hand moved, frame after frame
        # the hand stopped: the last value was reported REPORT_AFTER_MS after it was set, and the
        # server answered after that. Counted from the last change, not from when this test read
        # the clock: on a busy machine the answer can come before that read (a CI run timed out
        # waiting for a second answer that was never due)
        page.wait_for_function("(due) => window.__lastMessage > due", arg=max(inputs) + REPORT_AFTER_MS,
                               timeout=60_000)
        quiet(page)
    shown = page.evaluate("""() => { const root = document.querySelector('.scrubber');
        return {k: Number(root.dataset.k), lam: Number(root.dataset.lam), marked: Number(root.dataset.markedPixels),
                count: Number(root.querySelector('.count-value').innerText.replace(/,/g, '')),
                top: [...root.querySelectorAll('.top li')].map(e => e.dataset.feature)}; }""")
    k, lam = shown["k"], shown["lam"]
    assert 100 < k < 1000 and lam in QALPHA_PATH_LAMBDAS and lam != 0.1, shown
    assert shown["count"] == shown["marked"] == k
    # the library's own computation at that K and λ (the page's settings: k = 2, side class 10)
    main, side = load_dataset("warpAR10P").split_by_class([10])
    path = q_alpha_path(main.X, 2, side=side.X, lams=QALPHA_PATH_LAMBDAS, criterion="sum", init="uniform",
                        random_state=0, max_iter=500, tol=1e-6, solver="power")
    alpha = path.at(lam).alpha
    ranking = np.argsort(-alpha, kind="stable")
    assert shown["top"] == [main.feature_names[j] for j in ranking[:min(k, 10)]]
    accuracy = selection_curves(main.X, main.labels, {"selected": ranking}, [k], n_runs=5,
                                random_state=0)["selected"]["accuracy"][0]
    metric = page.locator("[data-testid='stMetric']").filter(has_text=f"Accuracy, top {k}")
    assert metric.locator("[data-testid='stMetricValue']").inner_text() == f"{accuracy:.3f}"
    query = parse_qs(urlparse(page.url).query)
    assert json.loads(query["qa_top_k"][0]) == k and json.loads(query["qa_lambda"][0]) == lam
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "qalpha-dragged.png"), full_page=True)
    # a reload draws the same K and λ (a page that loads fast once drew its slider's own start, 1)
    page.reload()
    page.locator(".scrubber .lam-input:visible").first.wait_for(timeout=300_000)
    quiet(page)
    again = page.evaluate("() => { const root = document.querySelector('.scrubber');"
                          " return [Number(root.dataset.k), Number(root.dataset.lam)]; }")
    assert again == [k, lam], (again, k, lam)
    map_agrees_with_numpy(page, main, side, path, [(k, lam), (k, 0.01), (40, 0.01), (400, 1.0)])


SET_SCRUBBER = """([k, lamIndex]) => {
  const root = document.querySelector('.scrubber');
  for (const [name, value] of [['.k-input', k], ['.lam-input', lamIndex]]) {
    const input = root.querySelector(name);
    if (Number(input.value) !== value) { input.value = String(value); input.dispatchEvent(new Event('input')); }
  }
}"""


def map_agrees_with_numpy(page, main, side, path, settings):
    """Issue 60: at each (K, λ) of ``settings`` set in the browser, the map of the samples it draws
    converges to NumPy's principal components of the same standardised columns (the library's
    ``sample_map``, its side samples by the main samples' loadings) within 1e-4, up to each axis's
    sign; hovering over a sample names it and its class and shows its image."""
    import numpy as np

    from core.evaluation.sample_map import sample_map

    lams = list(path.lams)
    for k, lam in settings:
        page.evaluate(SET_SCRUBBER, [k, lams.index(lam)])
        page.wait_for_function("""([k, lam]) => { const panel = document.querySelector('.map-panel');
            return panel.dataset.state === 'converged' && panel.dataset.k === String(k)
                   && Number(panel.dataset.lam) === lam; }""", arg=[k, lam], timeout=30_000)
        drawn = page.evaluate("() => document.querySelector('.map-panel').__map.coordinates()")
        ranking = np.argsort(-path.at(lam).alpha, kind="stable")
        expected = sample_map(main.X, ranking[:k], side=side.X)
        browser = np.array(drawn["main"])
        signs = np.where(np.sum(browser * expected.coordinates, axis=0) < 0, -1.0, 1.0)
        scale = np.abs(expected.coordinates).max()
        assert np.abs(browser * signs - expected.coordinates).max() <= 1e-4 * max(scale, 1), (k, lam)
        assert np.abs(np.array(drawn["side"]) * signs - expected.side_coordinates).max() <= 1e-4 * max(scale, 1)
        np.testing.assert_allclose(drawn["shares"], expected.explained, atol=1e-6)
        page.locator(".map-panel").screenshot(path=str(ARTEFACTS / f"qalpha-sample-map-k{k}-lambda{lam:g}.png"))
    # hover: the first sample drawn
    x, y, kind, index = page.evaluate("() => document.querySelector('.map-panel').__map.points()[0]")
    page.locator(".map-panel canvas.map").scroll_into_view_if_needed()
    box = page.locator(".map-panel canvas.map").bounding_box()
    page.mouse.move(box["x"] + x, box["y"] + y)
    tip = page.locator(".map-tip")
    tip.wait_for(state="visible", timeout=5_000)
    assert kind == "main" and tip.inner_text().startswith(f"{main.sample_names[index]} · class: {main.labels[index]}")
    assert page.locator(".map-tip-image").is_visible()
    page.locator(".map-panel").screenshot(path=str(ARTEFACTS / "qalpha-sample-map.png"))
    # a box over the left half of the map picks the samples in it; the server offers them as side data
    page.mouse.move(box["x"] + 2, box["y"] + 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] - 2, steps=5)
    page.mouse.up()
    picked = int(page.locator(".map-panel").get_attribute("data-picked"))
    inside = sum(1 for x, y, kind, _ in page.evaluate("() => document.querySelector('.map-panel').__map.points()")
                 if kind == "main" and 2 <= x <= box["width"] / 2 and 2 <= y <= box["height"] - 2)
    assert picked == inside > 0, (picked, inside)
    offer = page.get_by_role("button", name=f"Make them the side data ({picked} samples)")
    offer.wait_for(timeout=60_000)
    page.locator(".map-panel").screenshot(path=str(ARTEFACTS / "qalpha-sample-map-picked.png"))
    offer.click()
    page.wait_for_function("(n) => { const p = document.querySelector('.map-panel');"
                           " return p && p.__map.coordinates().side && p.__map.coordinates().side.length === n; }",
                           arg=picked, timeout=120_000)
    expect(page.get_by_role("radio", name="picked samples")).to_be_checked()
    quiet(page)
    page.reload()  # the link carries the picked rows: a reload keeps them as the side data
    expect(page.get_by_role("radio", name="picked samples")).to_be_checked(timeout=120_000)


DOT_PLOT_LAYOUT = """() => {
  const plot = [...document.querySelectorAll('.js-plotly-plot')].find(p => [...p.querySelectorAll('.g-ytitle text')]
    .some(t => t.textContent === 'class'));
  if (!plot) return null;
  const box = (e) => e.getBoundingClientRect();
  const overlapping = (items) => items.some((a, i) => items.some((b, j) => j > i
    && box(a).left < box(b).right - 1 && box(b).left < box(a).right - 1
    && box(a).top < box(b).bottom - 1 && box(b).top < box(a).bottom - 1));
  const rows = [...plot.querySelectorAll('.ytick text')], bar = [...plot.querySelectorAll('.cbaxis text, .colorbar text')];
  const names = [...plot.querySelectorAll('.xtick text')], frame = box(plot);
  const downwards = [...rows].sort((a, b) => box(a).top - box(b).top);
  return {rows: downwards.map(e => e.textContent), rowsOverlap: overlapping(rows), barOverlaps: overlapping(bar),
          plotHeight: box(plot.querySelector('.bglayer rect, .nsewdrag')).height, namesInside: names.every(e => box(e).left >= frame.left - 1
            && box(e).right <= frame.right + 1 && box(e).bottom <= frame.bottom + 1)};
}"""


def test_the_per_class_view_names_every_numbered_class_at_800_pixels(browser, app_url):
    """Issue 59: on dermatology (classes 1-6) the dot plot was about 50 px tall, its axis read 1, 3,
    5, the colour bar's numbers overlapped and the first gene name was cut, in an 800 px window."""
    import numpy as np

    rng = np.random.default_rng(6)
    classes = np.repeat(np.arange(1, 7), 20)
    values = rng.normal(size=(120, 34)) + (classes[:, None] == (np.arange(34) % 6 + 1)) * 2.0
    # dermatology's columns are long names ("follicular horn plug", "fibrosis of the papillary dermis")
    header = "class," + ",".join(f"clinical or histological finding {j}" for j in range(34))
    table = (header + "\n" + "\n".join(f"{c}," + ",".join(f"{v:.3f}" for v in row)
                                       for c, row in zip(classes, values)) + "\n").encode()
    context = browser_context(browser, 800)
    page = context.new_page()
    try:
        wait_for_app(page, f"{app_url}/data")
        chooser = tab_chooser(page, "Upload a table", page.get_by_text("A table: samples x features"))
        chooser.set_input_files(files=[{"name": "numbered.csv", "mimeType": "text/csv", "buffer": table}])
        page.get_by_text("Will load:").wait_for(timeout=60_000)
        settle(page)
        page.get_by_role("button", name="Load table").click()
        page.get_by_text("Loaded numbered.csv").first.wait_for(timeout=120_000)
        page.locator("[data-testid='stSidebar']").get_by_role("link", name="Q-alpha", exact=True).click()
        page.get_by_text("Selected (K)").first.wait_for(timeout=120_000)
        quiet(page)
        page.get_by_text("Per class: which class", exact=False).first.click()
        try:
            page.wait_for_function(f"() => ({DOT_PLOT_LAYOUT})() !== null", timeout=120_000)
        except Exception:
            page.screenshot(path=str(ARTEFACTS / "per-class-numbered-800-failed.png"), full_page=True)
            raise
        quiet(page)
        layout = page.evaluate(DOT_PLOT_LAYOUT)
        assert layout["rows"] == ["1", "2", "3", "4", "5", "6"], layout
        assert not layout["rowsOverlap"] and not layout["barOverlaps"], layout
        assert layout["plotHeight"] >= 6 * 20 and layout["namesInside"], layout
        assert page.locator("[data-testid='stException']").count() == 0
        page.screenshot(path=str(ARTEFACTS / "per-class-numbered-800.png"), full_page=True)
    finally:
        context.close()


def test_an_h5ad_with_a_umap_is_mapped_on_it_and_picked_cells_compared_with_the_rest(page, app_url):
    """Issue 60: an AnnData file in scanpy's pbmc68k_reduced layout (tests/fixtures) with
    ``obsm["X_umap"]``: the Q-alpha page draws the cells on that UMAP coloured by cell type as the
    map colours them; cells boxed on the map, then "Compare them with the rest", open the per-class
    view on the picked cells against the others."""
    fixture = Path(__file__).parents[1] / "fixtures" / "legacy_pbmc.h5ad"
    wait_for_app(page, f"{app_url}/data")
    load_table_file(page, "pbmc.h5ad", fixture.read_bytes(), "application/octet-stream")
    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Q-alpha", exact=True).click()
    page.get_by_text("The samples on the file's own layout").click()  # drawn once opened
    layout = page.locator("[data-testid='stExpander']").filter(has_text="The samples on the file's own layout")
    layout.locator(".js-plotly-plot").wait_for(timeout=120_000)
    quiet(page)
    legend = layout.locator(".legendtext").evaluate_all("texts => texts.map(t => t.textContent)")
    assert sorted(legend) == ["CD14+ Monocyte", "CD4+/CD45RO+ Memory", "Dendritic"], legend
    map_legend = page.locator(".map-panel .map-legend").inner_text()
    assert all(name in map_legend for name in legend), map_legend  # the same groups on both maps
    layout.screenshot(path=str(ARTEFACTS / "qalpha-h5ad-umap.png"))
    page.locator(".map-panel canvas.map").scroll_into_view_if_needed()
    box = page.locator(".map-panel canvas.map").bounding_box()
    page.mouse.move(box["x"] + 2, box["y"] + 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] - 2, steps=5)
    page.mouse.up()
    picked = int(page.locator(".map-panel").get_attribute("data-picked"))
    assert picked > 0
    page.get_by_role("button", name=f"Compare them with the rest ({picked} samples)").click()
    page.get_by_text(f"The {picked} samples picked on the map (class 'picked') against the other "
                     f"{60 - picked} main samples").wait_for(timeout=120_000)
    quiet(page)
    expect(page.get_by_role("radio", name="the picked samples against the rest")).to_be_checked()
    assert page.locator("[data-testid='stException']").count() == 0
    page.mouse.move(0, 0)  # no tooltip over the screenshot
    page.locator("[data-testid='stExpander']").filter(has_text="Per class: which class").screenshot(
        path=str(ARTEFACTS / "qalpha-picked-compared.png"))
