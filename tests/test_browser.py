"""The app in a real browser: ``streamlit run`` on localhost, driven through Debian's Chromium."""

from conftest import ARTEFACTS


def wait_for_app(page, url):
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=60_000)
    # Streamlit is done when no element is marked stale and the status widget has settled.
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)


def test_home_page_renders(page, app_url):
    wait_for_app(page, app_url)
    page.get_by_role("heading", name="Spectral feature selection").wait_for(timeout=60_000)
    page.get_by_text("Bundled data sets").wait_for()
    page.locator("[data-testid='stDataFrame']").wait_for()
    page.locator("[data-testid='stImage']").first.wait_for()
    assert page.locator("[data-testid='stException']").count() == 0
    sidebar = page.locator("[data-testid='stSidebar']")
    assert "warpAR10P" in sidebar.inner_text()
    page.screenshot(path=str(ARTEFACTS / "home.png"), full_page=True)


def test_qalpha_page_runs_on_the_faces(page, app_url):
    wait_for_app(page, app_url)
    page.get_by_role("link", name="Q-alpha").click()
    page.get_by_role("heading", name="Q-alpha").wait_for(timeout=60_000)
    page.get_by_text("Selected (sparsity gap)").wait_for(timeout=120_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator(".js-plotly-plot").count() >= 3  # sorted alpha, overlay, history
    page.screenshot(path=str(ARTEFACTS / "qalpha.png"))
