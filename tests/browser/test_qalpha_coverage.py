"""What the Q-alpha page's selection covers, in the browser (issue 77): each class's markers over
all features with where the selection reaches each class, and the modules of the top K."""

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
    page.get_by_text("cover: modules of correlated features").click()
    page.get_by_text("An alternative ordering, the best of each module in turn").wait_for(timeout=60_000)
    quiet(page)
    expect(page.get_by_role("button", name="Modules (CSV)")).to_be_visible()
    assert page.locator("[data-testid='stException']").count() == 0
