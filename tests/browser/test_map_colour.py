"""The map of the samples coloured by any feature in the browser (issue 77, item 1): a row of the
top list clicked, a name typed (or a wrong one said), the colours and the bar from the feature's
own values, K moving with the colouring kept, and the choice in the address and in Undo."""

from urllib.parse import parse_qs, urlparse

import json

import numpy as np
from playwright.sync_api import expect

from core.data.bundled import load_dataset
from steps import quiet, settle, wait_for_app

MAP = ".map-panel"
CONVERGED = "() => { const p = document.querySelector('.map-panel'); return p && p.dataset.state === 'converged'; }"


def drawn_colour(page, sample: int) -> list[int]:
    """The RGB the map's canvas holds at the centre of main sample ``sample``."""
    return page.evaluate("""(i) => {
      const panel = document.querySelector('.map-panel'), canvas = panel.querySelector('canvas.map');
      const [x, y] = panel.__map.points().find((p) => p[2] === 'main' && p[3] === i), r = window.devicePixelRatio || 1;
      return Array.from(canvas.getContext('2d').getImageData(Math.round(x * r), Math.round(y * r), 1, 1).data).slice(0, 3);
    }""", sample)


def test_a_feature_clicked_typed_or_undone_colours_the_map(page, app_url):
    wine = load_dataset("wine")
    wait_for_app(page, f"{app_url}/qalpha?data=wine")
    page.wait_for_function(CONVERGED, timeout=120_000)
    quiet(page)
    panel = page.locator(MAP)
    first = page.locator(".scrubber .top li").first
    name = first.get_attribute("data-feature")
    first.click()
    expect(panel).to_have_attribute("data-colour-by", name)
    # the page's run that records the choice for Undo and the link: waited for by its result (a
    # quiet page just after the click can be the page before the report reached the server)
    page.wait_for_function("name => new URLSearchParams(location.search).get('qa_colour_by') === JSON.stringify(name)",
                           arg=name, timeout=60_000)
    quiet(page)
    values = wine.X[:, wine.feature_names.index(name)]
    low, high = (float(v) for v in page.locator(".map-colour-bar").get_attribute("data-range").split(","))
    assert np.isclose(low, values.min(), rtol=1e-5) and np.isclose(high, values.max(), rtol=1e-5)
    # the sample of the highest value is drawn last, in viridis' yellow
    assert np.abs(np.subtract(drawn_colour(page, int(np.argmax(values))), [253, 231, 37])).max() <= 12
    assert json.loads(parse_qs(urlparse(page.url).query)["qa_colour_by"][0]) == name, page.url
    # K moves with the colouring kept
    k = page.get_by_role("slider", name="K — top features to show and to cluster with")
    before = panel.get_attribute("data-k")
    k.focus()
    k.press("ArrowRight")
    expect(panel).not_to_have_attribute("data-k", before)
    expect(panel).to_have_attribute("data-colour-by", name)
    quiet(page)
    # a name the data lack is said, and the colours stay; a name in other capitals is found
    box = page.get_by_role("combobox", name="Colour the samples by a feature")
    box.fill("NKG7")
    box.press("Enter")
    expect(page.locator(".map-colour-note")).to_contain_text("No feature named “NKG7”")
    expect(panel).to_have_attribute("data-colour-by", name)
    box.fill("PROLINE")
    box.press("Enter")
    expect(panel).to_have_attribute("data-colour-by", "proline")
    quiet(page)
    # Undo puts the last feature back
    page.get_by_role("button", name=f"Undo: Colour the map by back to {name}").click()
    settle(page)
    expect(panel).to_have_attribute("data-colour-by", name)
    expect(box).to_have_value(name)
    page.get_by_role("button", name="Back to the classes").click()
    expect(panel).to_have_attribute("data-colour-by", "")
    assert page.locator("[data-testid='stException']").count() == 0


def test_a_pixel_clicked_on_the_image_colours_the_map_by_its_value(page, app_url):
    faces = load_dataset("warpAR10P")
    wait_for_app(page, f"{app_url}/qalpha?data=warpAR10P")
    page.wait_for_function(CONVERGED, timeout=120_000)
    quiet(page)
    image = page.locator(".scrubber canvas.image")
    box = image.bounding_box()
    height, width = faces.image_shape
    row, column = height // 2, width // 3
    image.click(position={"x": (column + 0.5) * box["width"] / width, "y": (row + 0.5) * box["height"] / height})
    name = faces.feature_names[row * width + column]
    expect(page.locator(MAP)).to_have_attribute("data-colour-by", name)
    values = faces.X[:, row * width + column]
    low, high = (float(v) for v in page.locator(".map-colour-bar").get_attribute("data-range").split(","))
    assert np.isclose(low, values.min(), atol=1e-5) and np.isclose(high, values.max(), atol=1e-5)
