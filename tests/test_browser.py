"""The app in a real browser: ``streamlit run`` on localhost, driven through Debian's Chromium."""

from conftest import ARTEFACTS


def wait_for_app(page, url):
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=60_000)
    # Streamlit is done when no element is marked stale and the status widget has settled.
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)


def settle(page):
    """Wait until the script run that the last action started has finished."""
    page.wait_for_timeout(300)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000)


def tab_chooser(page, tab: str, marker):
    """The file input of one Data-page tab (the page has several: images, tables, side data)."""
    page.get_by_role("tab", name=tab).click()
    settle(page)
    return page.get_by_role("tabpanel").filter(has=marker).locator("input[type='file']")


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
    page.get_by_role("heading", name="Spectral feature selection").wait_for(timeout=60_000)
    page.get_by_role("link", name="Q-alpha", exact=True).click()
    page.get_by_role("heading", name="Q-alpha").wait_for(timeout=60_000)
    page.get_by_text("Selected (sparsity gap)").wait_for(timeout=120_000)
    # sorted alpha, overlay, history: the plots appear one after another
    page.locator(".js-plotly-plot").nth(2).wait_for(timeout=60_000)
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "qalpha.png"))


def _png(value, shape=(12, 10)):
    import io

    import numpy as np
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.full(shape, value, dtype=np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


def test_upload_bad_file_then_a_zip_of_images(page, app_url):
    import io
    import zipfile

    wait_for_app(page, app_url)
    page.get_by_role("heading", name="Spectral feature selection").wait_for(timeout=60_000)
    page.get_by_role("link", name="Data", exact=True).click()
    page.get_by_role("heading", name="Data", exact=True).wait_for(timeout=60_000)
    chooser = tab_chooser(page, "Upload images", page.get_by_role("button", name="Load images"))
    chooser.set_input_files(files=[{"name": "broken.png", "mimeType": "image/png", "buffer": b"not a png"}])
    page.get_by_text("broken.png").first.wait_for(timeout=30_000)
    page.get_by_role("button", name="Load images").click()
    page.get_by_text("Nothing was loaded").wait_for(timeout=180_000)
    assert "warpAR10P" in page.locator("[data-testid='stSidebar']").inner_text()  # kept
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        for person in ("anna", "ben"):
            for i in range(3):
                zipped.writestr(f"{person}/{i}.png", _png(40 * i + (100 if person == "ben" else 0)))
    # the broken file stays in the chooser: it is skipped and listed, the ZIP's images load
    settle(page)
    chooser.set_input_files(
        files=[{"name": "faces.zip", "mimeType": "application/zip", "buffer": archive.getvalue()}])
    page.get_by_text("faces.zip").first.wait_for(timeout=30_000)
    page.get_by_role("button", name="Load images").click()
    page.get_by_text("6 samples x 120 features").first.wait_for(timeout=180_000)
    page.get_by_text("Skipped 1 file(s): broken.png").wait_for(timeout=10_000)
    assert "2 uploaded files" in page.locator("[data-testid='stSidebar']").inner_text()
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "data_upload.png"))


PAGE_TITLES = {"Home": "Spectral feature selection", "Data": "Data", "Q-alpha": "Q-alpha",
               "Kernel Q-alpha": "Kernel Q-alpha", "Topographical map": "Topographical map",
               "Haar reconstructions": "Haar reconstructions", "Sparse LDA / PCA": "Sparse LDA / PCA",
               "Compare": "Compare", "Paper figures": "Paper figures"}


def test_every_page_renders_and_is_screenshotted(page, app_url):
    wait_for_app(page, app_url)
    page.get_by_role("heading", name="Spectral feature selection").wait_for(timeout=60_000)
    for title, heading in PAGE_TITLES.items():
        page.locator("[data-testid='stSidebar']").get_by_role("link", name=title, exact=True).click()
        page.get_by_role("heading", name=heading, exact=True).first.wait_for(timeout=120_000)
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=180_000)
        page.wait_for_timeout(500)
        assert page.locator("[data-testid='stException']").count() == 0, title
        name = title.lower().replace(" / ", "-").replace(" ", "-")
        page.screenshot(path=str(ARTEFACTS / f"page-{name}.png"), full_page=True)


def sorted_alpha_values(page):
    # Plotly keeps typed arrays as {dtype, bdata} in .data: compare their serialisation
    return page.evaluate("() => JSON.stringify(document.querySelector('.js-plotly-plot').data[0].y)")


def test_moving_the_lambda_slider_changes_the_plot(page, app_url):
    from playwright.sync_api import expect

    wait_for_app(page, app_url)
    page.get_by_role("heading", name="Spectral feature selection").wait_for(timeout=60_000)
    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Q-alpha", exact=True).click()
    page.get_by_text("Selected (sparsity gap)").wait_for(timeout=120_000)
    page.get_by_text("side classes", exact=True).click()
    thumb = page.get_by_role("slider", name="λ — weight of the side information")
    expect(thumb).to_be_enabled(timeout=120_000)
    page.wait_for_timeout(3000)  # the run with side information finishes
    before = sorted_alpha_values(page)
    for _ in range(5):  # the slider may still be re-rendering from the previous change
        thumb.focus()
        thumb.press("ArrowLeft")
        page.wait_for_timeout(1000)
        if thumb.get_attribute("aria-valuetext") != "0.1":
            break
    assert thumb.get_attribute("aria-valuetext") == "0.03"
    page.wait_for_function(
        "(old) => { const p = document.querySelector('.js-plotly-plot');"
        " return p && p.data && JSON.stringify(p.data[0].y) !== old; }",
        arg=before, timeout=60_000)
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "qalpha-lambda-moved.png"))


def test_paper_figure_runs_with_one_click(page, app_url):
    """Paper figures: one click reproduces 002 Fig. 1a and shows the paper's number beside ours."""
    wait_for_app(page, app_url)
    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Paper figures", exact=True).click()
    page.get_by_role("heading", name="Paper figures", exact=True).wait_for(timeout=120_000)
    page.get_by_role("button", name="Run").click()
    page.get_by_text("probability close to 1 once n > 20").first.wait_for(timeout=180_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "paper-figure-positivity.png"), full_page=True)


def test_side_data_upload_and_use_in_q_alpha(page, app_url):
    """A second upload becomes side data when it has the current data's features; one that does
    not is refused with the reason and the loaded side data stay; Q-alpha then offers it."""
    wait_for_app(page, app_url)
    page.get_by_role("link", name="Data", exact=True).click()
    page.get_by_role("heading", name="Data", exact=True).wait_for(timeout=60_000)
    page.get_by_text("Side data: a second upload").click()
    side_chooser = page.locator("[data-testid='stExpander'] input[type='file']").first
    side_chooser.set_input_files(files=[{"name": f"other_{i}.png", "mimeType": "image/png",
                                         "buffer": _png(30 * i, (60, 40))} for i in range(4)])
    page.locator("[data-testid='stExpander']").get_by_text("other_3.png").wait_for(timeout=30_000)
    settle(page)
    page.get_by_role("button", name="Load side data").click()
    page.get_by_text("4 samples x 2,400 features").first.wait_for(timeout=180_000)
    delete = page.locator("[data-testid='stExpander'] [data-testid='stFileChipDeleteBtn'] button")
    while delete.count():  # empty the chooser: it keeps earlier files
        delete.first.click()
        page.wait_for_timeout(300)
    side_chooser = page.locator("[data-testid='stExpander'] input[type='file']").first
    side_chooser.set_input_files(files=[{"name": "genes.csv", "mimeType": "text/csv",
                                         "buffer": b"a,b,c\n1,2,3\n4,5,6\n7,8,9\n"}])
    # the button is enabled once the upload is in the chooser: click only then
    page.locator("[data-testid='stExpander']").get_by_text("genes.csv").wait_for(timeout=30_000)
    settle(page)
    page.get_by_role("button", name="Load side data").click()
    page.get_by_text("Side data must describe the same features").wait_for(timeout=180_000)
    assert page.get_by_text("4 samples x 2,400 features").count() >= 1  # the loaded side data stay
    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Q-alpha", exact=True).click()
    page.get_by_text("uploaded side data").first.click()
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=180_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=180_000)
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "qalpha-uploaded-side-data.png"), full_page=True)


def test_genes_by_samples_csv_gz_with_missing_values_to_q_alpha(page, app_url):
    """A user's gene table as it usually comes: genes as rows, an ID column, sample names in the
    header, a class row, gzip-compressed, with missing values. Median imputation, then Q-alpha
    ranks the planted marker genes on top."""
    import gzip

    import numpy as np

    rng = np.random.default_rng(5)
    groups = np.repeat([0, 1], 8)
    genes = [f"MARKER{i}" for i in range(4)] + [f"GENE{i:03d}" for i in range(96)]
    values = rng.normal(size=(100, 16))
    values[:4] += np.where(groups == 1, 4.0, -4.0)  # the markers separate the groups
    lines = ["gene_id," + ",".join(f"sample_{j}" for j in range(16)),
             "class," + ",".join("tumour" if g else "normal" for g in groups)]
    for i, gene in enumerate(genes):
        cells = ["" if (i * 16 + j) % 97 == 5 else f"{values[i, j]:.5f}" for j in range(16)]
        lines.append(gene + "," + ",".join(cells))
    data = gzip.compress(("\n".join(lines) + "\n").encode())

    wait_for_app(page, app_url)
    page.get_by_role("link", name="Data", exact=True).click()
    page.get_by_role("heading", name="Data", exact=True).wait_for(timeout=60_000)
    chooser = tab_chooser(page, "Upload a table", page.get_by_text("A table: samples x features"))
    chooser.set_input_files(files=[{"name": "expression.csv.gz", "mimeType": "application/gzip", "buffer": data}])
    page.get_by_text("Missing values:").wait_for(timeout=60_000)
    page.get_by_text("hold text across the numeric columns").wait_for(timeout=10_000)
    page.get_by_text("Impute the feature's median").click()
    settle(page)
    page.get_by_role("button", name="Load table").click()
    page.get_by_text("Loaded expression.csv.gz: 16 samples x 100 features").wait_for(timeout=60_000)
    page.get_by_text("with the column median").first.wait_for(timeout=10_000)
    assert "expression.csv.gz" in page.locator("[data-testid='stSidebar']").inner_text()
    page.screenshot(path=str(ARTEFACTS / "data-table-upload.png"), full_page=True)

    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Q-alpha", exact=True).click()
    page.get_by_role("heading", name="Q-alpha").wait_for(timeout=60_000)
    page.wait_for_function(
        "() => { const p = document.querySelector('.js-plotly-plot');"
        " return p && p.data && p.data[0] && p.data[0].customdata; }", timeout=120_000)
    top = page.evaluate("() => Array.from(document.querySelector('.js-plotly-plot').data[0].customdata).slice(0, 4)")
    assert sorted(top) == [f"MARKER{i}" for i in range(4)], top
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "qalpha-uploaded-genes.png"), full_page=True)


def test_bombs_refused_in_the_browser_and_the_data_kept(page, app_url):
    """A 8 kB ZIP of thirty blank 4096 x 4096 PNGs (4 GB as float64) and an NPY whose header
    declares 10^6 x 10^6: both refused with the budget named; the current data stay."""
    import io
    import zipfile

    import numpy as np
    from PIL import Image

    blank = io.BytesIO()
    Image.new("L", (4096, 4096)).save(blank, format="PNG", optimize=True)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for i in range(30):
            zipped.writestr(f"person/{i}.png", blank.getvalue())
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)})

    wait_for_app(page, app_url)
    page.get_by_role("link", name="Data", exact=True).click()
    page.get_by_role("heading", name="Data", exact=True).wait_for(timeout=60_000)
    chooser = tab_chooser(page, "Upload images", page.get_by_role("button", name="Load images"))
    chooser.set_input_files(files=[{"name": "blank.zip", "mimeType": "application/zip", "buffer": archive.getvalue()}])
    page.get_by_text("blank.zip").first.wait_for(timeout=30_000)
    page.get_by_role("button", name="Load images").click()
    page.get_by_text("more than the per-upload budget").wait_for(timeout=60_000)
    assert "warpAR10P" in page.locator("[data-testid='stSidebar']").inner_text()

    chooser = tab_chooser(page, "Upload a table", page.get_by_text("A table: samples x features"))
    chooser.set_input_files(files=[{"name": "huge.npy", "mimeType": "application/octet-stream",
                                    "buffer": header.getvalue() + bytes(64)}])
    page.get_by_text("huge.npy (the array) would need 7.3 TB in memory, more than the per-upload budget").wait_for(timeout=60_000)
    assert "warpAR10P" in page.locator("[data-testid='stSidebar']").inner_text()
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "data-bombs-refused.png"), full_page=True)


PAGE_PATHS = {"qalpha": "Q-alpha", "data": "Data", "kernel": "Kernel Q-alpha", "topographic": "Topographical map",
              "haar": "Haar reconstructions", "slda": "Sparse LDA / PCA", "compare": "Compare",
              "figures": "Paper figures"}


def test_every_page_opened_by_its_own_url_has_the_navigation(browser, fresh_app_url):
    """A shared link, a bookmark or a reload: on a server whose very first request is a page's
    URL (three sessions at once), and then for every page in a fresh session, the page comes
    with the sidebar's navigation and the current data set."""
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(3)]
    pages = [context.new_page() for context in contexts]
    for page, path in zip(pages, ["qalpha?lam=0.03", "data", "slda"]):
        page.goto(f"{fresh_app_url}/{path}", wait_until="commit")
    for page, path in zip(pages, ["qalpha", "data", "slda"]):
        page.get_by_role("heading", name=PAGE_PATHS[path], exact=True).first.wait_for(timeout=120_000)
        sidebar = page.locator("[data-testid='stSidebar']")
        sidebar.get_by_role("link", name="Compare", exact=True).wait_for(timeout=60_000)
        assert "130 samples x 2,400 features" in sidebar.inner_text()
        assert page.locator("[data-testid='stException']").count() == 0
    for context in contexts:
        context.close()
    for path, heading in PAGE_PATHS.items():
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(f"{fresh_app_url}/{path}?data=Yale", wait_until="domcontentloaded")
        page.get_by_role("heading", name=heading, exact=True).first.wait_for(timeout=120_000)
        sidebar = page.locator("[data-testid='stSidebar']")
        sidebar.get_by_role("link", name="Home", exact=True).wait_for(timeout=60_000)
        assert "Yale" in sidebar.inner_text(), path
        assert page.locator("[data-testid='stException']").count() == 0, path
        context.close()
