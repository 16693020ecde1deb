"""Sets a session loads or derives come back after a reload (issue 76): an .h5ad with its UMAP, the
Haar features of uploaded images, a table after near-empty features were removed; and after the
reload the sidebar lists the session's other sets too, not only the current one."""

import io
import zipfile
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import expect

from conftest import ARTEFACTS
from steps import _png, load_table_file, quiet, settle, tab_chooser, wait_for_app

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
