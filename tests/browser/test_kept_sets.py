"""Sets a session loads or derives come back after a reload (issue 76): an .h5ad with its UMAP, the
Haar features of uploaded images, a table after near-empty features were removed; and after the
reload the sidebar lists the session's other sets too, not only the current one."""

import io
import zipfile
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from conftest import ARTEFACTS, browser_context
from steps import _png, load_table_file, quiet, settle, tab_chooser, wait_for_app, upload_small_table, PAGE_PATHS

FIXTURE = Path(__file__).parents[1] / "fixtures" / "legacy_pbmc.h5ad"
#: 12 samples; "rare" is non-zero in one of them (8%): removed at "non-zero in at least 10%"
SPARSE_TABLE = b"sample,x1,x2,rare\n" + b"".join(
    f"s{i},{i * 0.5 + 1:.1f},{(i * 7) % 5 + 1:.1f},{1.0 if i == 4 else 0.0}\n".encode() for i in range(12))


def current_name(page) -> str:
    """The current data set's name, as the address names it."""
    return parse_qs(urlparse(page.url).query)["data"][0]


def reload_and_expect(page, current: str, listed: list[str]):
    """Reload the page; the sidebar shows ``current``, and every set of ``listed`` can be picked."""
    page.reload(wait_until="domcontentloaded")
    page.get_by_role("heading", name="Data", exact=True).first.wait_for(timeout=120_000)
    quiet(page)
    sidebar = page.locator("[data-testid='stSidebar']")
    expect(sidebar).to_contain_text(current)
    assert page.locator("[data-testid='stException']").count() == 0
    assert "could not be kept" not in sidebar.inner_text() and "no kept upload" not in page.inner_text("body")
    sidebar.locator("[data-testid='stSelectbox']").click()
    options = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    settle(page)
    for name in listed:
        assert f"{name} · this session" in options, (name, options)


def test_an_h5ad_haar_features_and_a_filtered_table_each_survive_a_reload(page, app_url):
    wait_for_app(page, f"{app_url}/data")
    load_table_file(page, "pbmc.h5ad", FIXTURE.read_bytes(), "application/octet-stream")
    quiet(page)
    assert len(parse_qs(urlparse(page.url).query).get("key", [""])[0]) == 64, page.url  # kept: the address names it
    reload_and_expect(page, "pbmc.h5ad", ["pbmc.h5ad"])
    # the file's own UMAP came back with it
    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Q-alpha", exact=True).click()
    page.get_by_text("The samples on the file's own layout").first.wait_for(timeout=120_000)
    quiet(page)
    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Data", exact=True).click()
    page.get_by_role("heading", name="Data", exact=True).first.wait_for(timeout=120_000)
    quiet(page)

    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        for person in ("face", "other"):
            for i in range(4):
                zipped.writestr(f"{person}/{i}.png", _png(30 * i + (100 if person == "other" else 0), shape=(8, 8)))
    chooser = tab_chooser(page, "Upload images", page.get_by_role("button", name="Load images"))
    chooser.set_input_files(files=[{"name": "lfw.zip", "mimeType": "application/zip", "buffer": archive.getvalue()}])
    page.get_by_text("lfw.zip").first.wait_for(timeout=30_000)
    settle(page)
    page.get_by_role("button", name="Load images").click()
    page.get_by_text("8 samples x 64 features").first.wait_for(timeout=180_000)
    quiet(page)
    page.get_by_text("haar", exact=True).click()
    settle(page)
    page.get_by_role("button", name="Apply feature family").click()
    settle(page)
    quiet(page)
    haar_name = current_name(page)
    assert "Haar" in haar_name or "haar" in haar_name, haar_name
    reload_and_expect(page, haar_name, ["pbmc.h5ad", haar_name])
    # the family came back with its images: the Data page offers the families, Haar chosen
    expect(page.get_by_text("Feature family", exact=True)).to_be_visible()
    expect(page.get_by_role("radio", name="haar", exact=True)).to_be_checked()

    load_table_file(page, "sparse.csv", SPARSE_TABLE)
    quiet(page)
    page.get_by_role("spinbutton", name="Non-zero in at least (%)").fill("10")
    page.get_by_role("spinbutton", name="Non-zero in at least (%)").press("Enter")
    settle(page)
    page.get_by_role("button", name="Remove 1 near-empty features").click()
    settle(page)
    quiet(page)
    filtered = current_name(page)
    assert filtered.startswith("sparse.csv (") and filtered != "sparse.csv", filtered
    reload_and_expect(page, filtered, ["pbmc.h5ad", haar_name, "sparse.csv", filtered])
    expect(page.locator("[data-testid='stSidebar']")).to_contain_text("12 samples x 2 features")
    page.screenshot(path=str(ARTEFACTS / "kept-sets-after-reload.png"), full_page=True)


def k_of(page) -> str:
    """The Q-alpha page's k, once the page has settled."""
    page.get_by_text("Selected (K)").first.wait_for(timeout=120_000)
    quiet(page)
    return page.get_by_role("spinbutton", name="k — number of clusters").input_value()


def upload_and_set_k(page, url: str) -> str:
    """Upload the small table, set Q-alpha's k to 3 and return the page's link."""
    wait_for_app(page, f"{url}/data")
    upload_small_table(page)
    page.get_by_text("Loaded my table.csv").first.wait_for(timeout=120_000)
    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Q-alpha", exact=True).click()
    k_of(page)
    k_box = page.get_by_role("spinbutton", name="k — number of clusters")
    k_box.fill("3")
    k_box.press("Enter")
    page.wait_for_function("() => new URLSearchParams(location.search).get('qa_k') === '3'", timeout=60_000)
    return page.url


@pytest.mark.slow  # servers of its own: the slow tier (docs/testing.md)
def test_an_upload_survives_a_reload_a_killed_server_and_a_second_server(browser, tmp_path):
    """Issue 51: after an upload and a setting, (a) a reload, (b) the server killed with SIGKILL
    and started again, and (d) the link on a second server process sharing the store folder each
    show the same data set and the same k."""
    from urllib.parse import urlparse

    from benchmarks.app_server import start_server, stop_server

    store = {"QALPHA_STORE_DIR": str(tmp_path / "store")}
    servers = [start_server(environment=store), start_server(environment=store)]
    contexts = []

    def opened(url):
        contexts.append(browser_context(browser))
        page = contexts[-1].new_page()
        page.goto(url, wait_until="domcontentloaded")
        return page

    def same_view(page):
        assert k_of(page) == "3"
        assert "my table.csv" in page.locator("[data-testid='stSidebar']").inner_text()
        assert page.locator("[data-testid='stException']").count() == 0

    try:
        contexts.append(browser_context(browser))
        first = contexts[-1].new_page()
        link = urlparse(upload_and_set_k(first, servers[0][1]))
        first.reload(wait_until="domcontentloaded")  # (a)
        same_view(first)
        same_view(opened(f"{servers[1][1]}{link.path}?{link.query}"))  # (d)
        servers[0][0].kill()  # (b): SIGKILL, no chance to tidy up
        servers[0][0].wait(timeout=20)
        servers[0] = start_server(environment=store)
        same_view(opened(f"{servers[0][1]}{link.path}?{link.query}"))
    finally:
        for context in contexts:
            context.close()
        for process, _ in servers:
            stop_server(process)


@pytest.mark.slow  # a walk over every page: the slow tier (docs/testing.md)
def test_a_reload_of_every_page_keeps_the_upload_and_the_side_data(page, app_url):
    """Issue 59: after "Load table" the address still named the bundled faces, then nothing; a
    reload on the Data page brought the faces back and lost the upload. Every page's address now
    names the upload (and side data) by its store key once loaded, and a reload of each keeps it."""
    from urllib.parse import parse_qs, urlparse

    wait_for_app(page, f"{app_url}/data")
    upload_small_table(page)
    page.get_by_text("Loaded my table.csv").first.wait_for(timeout=120_000)
    quiet(page)
    page.get_by_text("Side data: a second upload").click()
    page.locator("[data-testid='stExpander'] input[type='file']").first.set_input_files(files=[{
        "name": "background.csv", "mimeType": "text/csv", "buffer": b"x1,x2,x3\n1,2,3\n4,5,6\n7,8,9\n0,1,1\n"}])
    page.locator("[data-testid='stExpander']").get_by_text("background.csv").wait_for(timeout=30_000)
    settle(page)
    page.get_by_role("button", name="Load side data").click()
    page.get_by_text("4 samples x 3 features").first.wait_for(timeout=120_000)
    quiet(page)
    query = parse_qs(urlparse(page.url).query)
    assert query.get("data") == ["my table.csv"] and len(query.get("key", [""])[0]) == 64, page.url
    assert len(query.get("side", [""])[0]) == 64, page.url
    sidebar = page.locator("[data-testid='stSidebar']")
    for path, heading in {"": "Spectral feature selection", **PAGE_PATHS}.items():
        sidebar.get_by_role("link", name=heading if path else "Home", exact=True).click()
        at = f"location.pathname.endsWith('/{path}')" if path else "['', '/'].includes(location.pathname)"
        page.wait_for_function(f"() => {at}", timeout=60_000)
        page.get_by_role("heading", name=heading, exact=True).first.wait_for(timeout=120_000)
        quiet(page)
        page.reload(wait_until="domcontentloaded")
        page.get_by_role("heading", name=heading, exact=True).first.wait_for(timeout=120_000)
        quiet(page)
        expect(sidebar, path or "home").to_contain_text("my table.csv")
        expect(sidebar, path or "home").to_contain_text("12 samples x 3 features")
        query = parse_qs(urlparse(page.url).query)
        assert query.get("data") == ["my table.csv"] and "side" in query, (path, page.url)  # both restored
        assert page.locator("[data-testid='stException']").count() == 0, path
    # the Data page reloaded opens on the tab the current data came from
    sidebar.get_by_role("link", name="Data", exact=True).click()
    page.get_by_role("heading", name="Data", exact=True).first.wait_for(timeout=120_000)
    expect(page.get_by_role("tab", name="Upload a table")).to_have_attribute("aria-selected", "true")


def test_a_link_to_an_upload_opens_the_data_page_and_the_same_file_restores_its_view(browser, app_url):
    """A link names an uploaded table by its store key and a k (issue 51): in a new browser it
    brings back the table and the k; a fresh session without the link does not list the table.
    A link whose key the server does not hold (another server, an expired entry) opens the Data
    page with the table's name, none of its settings on another data set, and uploading the same
    file with the same choices opens the link's view."""
    from urllib.parse import parse_qs, urlencode, urlparse

    upload = upload_small_table
    first = browser_context(browser).new_page()
    link = upload_and_set_k(first, app_url)
    query = parse_qs(urlparse(link).query)
    assert query["data"] == ["my table.csv"] and "fp" in query and len(query["key"][0]) == 64
    first.context.close()

    restored = browser_context(browser).new_page()
    try:
        restored.goto(link, wait_until="domcontentloaded")
        assert k_of(restored) == "3"
        assert urlparse(restored.url).path.endswith("/qalpha")
        assert "my table.csv" in restored.locator("[data-testid='stSidebar']").inner_text()
        assert restored.locator("[data-testid='stException']").count() == 0
    finally:
        restored.context.close()

    fresh = browser_context(browser).new_page()
    try:
        wait_for_app(fresh, f"{app_url}/data")
        quiet(fresh)
        assert "my table.csv" not in fresh.locator("[data-testid='stSidebar']").inner_text()
    finally:
        fresh.context.close()

    elsewhere = {name: values[0] for name, values in query.items()}
    elsewhere["key"] = "0" * 64  # a key this server does not hold
    second = browser_context(browser).new_page()
    try:
        second.goto(f"{app_url}/qalpha?{urlencode(elsewhere)}", wait_until="domcontentloaded")
        second.get_by_text("The link you opened shows the data set 'my table.csv'").wait_for(timeout=120_000)
        assert "this server does not hold it" in second.locator("[data-testid='stAlert']").first.inner_text()
        assert urlparse(second.url).path.endswith("/data")
        assert "qa_k" not in parse_qs(urlparse(second.url).query)  # no setting carried to the faces
        second.locator("[data-testid='stSidebar']").get_by_role("link", name="Q-alpha", exact=True).click()
        assert k_of(second) != "3"
        second.locator("[data-testid='stSidebar']").get_by_role("link", name="Data", exact=True).click()
        second.get_by_text("The link you opened shows the data set 'my table.csv'").wait_for(timeout=120_000)
        upload(second)
        second.wait_for_function("() => location.pathname.endsWith('/qalpha')", timeout=120_000)
        assert k_of(second) == "3"
        assert "my table.csv" in second.locator("[data-testid='stSidebar']").inner_text()
        assert second.locator("[data-testid='stException']").count() == 0
    finally:
        second.context.close()
