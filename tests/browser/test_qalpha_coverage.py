"""The Q-alpha page in the browser: what its selection covers (issue 77: each class's markers over
all features with where the selection reaches each class, and the modules of the top K), and K
steps that leave every other setting as the user set it (issue 76)."""

from urllib.parse import parse_qs, urlparse

from playwright.sync_api import expect

from steps import quiet, settle, wait_for_app


def test_markers_over_all_features_and_the_modules_of_the_top_k(page, app_url):
    wait_for_app(page, f"{app_url}/qalpha?data=wine")
    page.get_by_text("Selected (K)").first.wait_for(timeout=120_000)
    quiet(page)
    page.get_by_text("Markers over all features, and how far down the selection reaches each class").click()
    page.get_by_text("Where each class's first marker").wait_for(timeout=60_000)
    quiet(page)
    dot_plot = page.locator("[data-testid='stExpander']").filter(has_text="Markers over all features")
    expect(dot_plot.locator(".js-plotly-plot")).to_have_count(1)
    spinner = page.get_by_role("spinbutton", name="Markers per class")
    spinner.fill("2")
    spinner.press("Enter")
    settle(page)
    quiet(page)
    expect(page.get_by_text("Each class's 2 best markers over all 13 features")).to_have_count(1, timeout=60_000)
    # one class against another (scanpy's reference=)
    page.get_by_role("combobox", name="Against").click()
    page.get_by_role("option", name="0", exact=True).click()
    settle(page)
    quiet(page)
    expect(page.get_by_text("Each class's 2 best markers against 0 over all 13 features")).to_have_count(1, timeout=60_000)
    page.get_by_text("cover: modules of correlated features").click()
    page.get_by_text("An alternative ordering, the best of each module in turn").wait_for(timeout=60_000)
    quiet(page)
    expect(page.get_by_role("button", name="Modules (CSV)")).to_be_visible()
    assert page.locator("[data-testid='stException']").count() == 0


def test_k_steps_in_the_browser_leave_lambda_as_the_user_set_it(page, app_url):
    """Issue 76: supervised, ten K steps and the address's λ went from 0.1 to 0 (the browser
    reported the λ its run was solved at, 0 without side information, with every K). The browser
    reports a λ only where it offers a choice of λ (the computed path)."""
    wait_for_app(page, f"{app_url}/qalpha?data=wine&qa_supervised=true&qa_lambda=0.1")
    page.get_by_text("Selected (K)").first.wait_for(timeout=120_000)
    quiet(page)
    thumb = page.get_by_role("slider", name="K — top features to show and to cluster with")
    before = thumb.get_attribute("aria-valuetext")
    for _ in range(3):
        thumb.focus()
        thumb.press("ArrowRight")
        page.wait_for_timeout(500)  # past the report's delay: each step reported on its own
        quiet(page)
    expect(thumb).to_have_attribute("aria-valuetext", str(int(before) + 3), timeout=30_000)
    query = parse_qs(urlparse(page.url).query)
    assert query.get("qa_top_k") == [str(int(before) + 3)], page.url  # the steps reached the server
    assert query.get("qa_lambda") == ["0.1"], page.url
