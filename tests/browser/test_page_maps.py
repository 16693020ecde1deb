"""The maps of the samples on the Kernel Q-alpha and Sparse LDA pages, redrawn in the browser as
their k moves (issue 77, item 4): Kernel Q-alpha's own K slider, Sparse LDA's page slider."""

import numpy as np
from playwright.sync_api import expect

from core.data.bundled import load_dataset
from steps import quiet, settle, wait_for_app

CONVERGED = ("() => { const p = document.querySelector('.selection-map .map-panel');"
             " return p && p.dataset.state === 'converged'; }")


def drawn(page) -> np.ndarray:
    return np.asarray(page.evaluate("() => document.querySelector('.selection-map .map-panel').__map.coordinates().main"))


def principal_pair(X):
    Z = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    _, _, vt = np.linalg.svd(Z, full_matrices=False)
    return Z @ vt[:2].T


def same_up_to_sign(found, expected):
    signs = np.where(np.sum(found * expected, axis=0) < 0, -1.0, 1.0)
    np.testing.assert_allclose(found * signs, expected, atol=1e-4 * np.abs(expected).max())


def open_map(page, url: str, expander: str):
    """Open ``url``, open the map's expander (its label holds ``expander``) and wait until the
    browser's map has converged; the map's panel."""
    wait_for_app(page, url)
    quiet(page)
    page.get_by_text(expander).first.click()
    page.wait_for_function(CONVERGED, timeout=120_000)
    quiet(page)
    return page.locator(".selection-map .map-panel")


def map_columns(page) -> list[int]:
    """The features the browser's map is drawn on now."""
    return page.evaluate("() => document.querySelector('.selection-map').parentElement.__selectionMap.columns()")


def test_kernel_q_alpha_map_follows_its_k_in_the_browser(page, app_url):
    wine = load_dataset("wine")
    panel = open_map(page, f"{app_url}/kernel?data=wine", "The samples on the top")
    slider = page.get_by_role("slider", name="K — top features on the map")
    k = int(panel.get_attribute("data-k"))
    moved = k + 1 if k < wine.n_features else k - 1
    slider.focus()
    slider.press("ArrowRight" if moved > k else "ArrowLeft")
    expect(panel).to_have_attribute("data-k", str(moved))
    page.wait_for_function(CONVERGED, timeout=60_000)
    caption = page.locator(".selection-map .map-caption").inner_text()
    assert f"the top {moved} features of kernel Q-alpha" in caption and "redrawn here as k moves" in caption
    columns = map_columns(page)
    assert len(columns) == moved
    same_up_to_sign(drawn(page), principal_pair(wine.X[:, columns]))
    assert page.locator("[data-testid='stException']").count() == 0


def test_sparse_lda_map_is_redrawn_in_the_browser_as_the_page_k_moves(page, app_url):
    panel = open_map(page, f"{app_url}/slda?data=wine", "features of the sparse discriminant")
    before = panel.get_attribute("data-k")
    expect(page.locator(".selection-map .map-k")).to_be_hidden()  # the page's own slider moves it
    slider = page.get_by_role("slider", name="k — number of features").first
    slider.focus()
    slider.press("ArrowRight")
    settle(page)
    expect(panel).to_have_attribute("data-k", str(int(before) + 1), timeout=30_000)
    page.wait_for_function(CONVERGED, timeout=60_000)
    assert "features of the sparse discriminant" in page.locator(".selection-map .map-caption").inner_text()
    columns = map_columns(page)
    wine = load_dataset("wine")
    pair = [int(c) for c in page.locator(".selection-map .map-legend .map-key").all_inner_texts()]
    rows = np.isin(wine.labels, pair)
    same_up_to_sign(drawn(page), principal_pair(wine.X[np.ix_(rows, columns)]))
    assert page.locator("[data-testid='stException']").count() == 0
