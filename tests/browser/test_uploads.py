"""The Data page in the browser: uploads of images, tables and side data (bad files said, bombs
refused, what was loaded kept), transformed values, and the server's own data, on a Dask cluster too."""

import pytest
from playwright.sync_api import expect

from conftest import ARTEFACTS, ROOT, browser_context
from steps import IDLE, _png, pick_dataset, quiet, settle, tab_chooser, wait_for_app, download


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
    expect(page.locator("[data-testid='stSidebar']")).to_contain_text("warpAR10P")  # kept
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
    expect(page.locator("[data-testid='stSidebar']")).to_contain_text("2 uploaded files")
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "data_upload.png"))


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
    while (files := delete.count()):  # empty the chooser: it keeps earlier files
        delete.first.click()
        expect(delete).to_have_count(files - 1, timeout=30_000)
        settle(page)  # each removal reruns the page: the chooser is drawn anew
    side_chooser = page.locator("[data-testid='stExpander'] input[type='file']").first
    side_chooser.set_input_files(files=[{"name": "genes.csv", "mimeType": "text/csv",
                                         "buffer": b"a,b,c\n1,2,3\n4,5,6\n7,8,9\n"}])
    # the button is enabled once the upload is in the chooser: click only then
    page.locator("[data-testid='stExpander']").get_by_text("genes.csv").wait_for(timeout=30_000)
    settle(page)
    page.get_by_role("button", name="Load side data").click()
    page.get_by_text("Side data must describe the same features").wait_for(timeout=180_000)
    # the refusal is drawn where the side data's line was and the line again below it: wait for
    # the run to end before asking whether the loaded side data stay
    settle(page)
    expect(page.get_by_text("4 samples x 2,400 features").first).to_be_visible(timeout=30_000)
    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Q-alpha", exact=True).click()
    page.get_by_text("uploaded side data").first.click()
    page.wait_for_function(IDLE, timeout=180_000)
    page.locator(".scrubber canvas.weights").wait_for(timeout=180_000)
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "qalpha-uploaded-side-data.png"), full_page=True)
    # the Haar page takes the same side images, in its wavelet basis
    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Haar reconstructions", exact=True).click()
    # the Haar page's own radio: until its run has drawn the page, Q-alpha's (already chosen) is there
    page.get_by_role("heading", name="Haar reconstructions").wait_for(timeout=180_000)
    settle(page)
    page.get_by_role("radiogroup", name="Side data").get_by_text("uploaded side data", exact=True).click()
    page.get_by_text("W: side: 4 files").wait_for(timeout=180_000)
    settle(page)
    page.locator(".js-plotly-plot").first.wait_for(timeout=180_000)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_role("combobox", name="Side classes").count() == 0


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
    expect(page.locator("[data-testid='stSidebar']")).to_contain_text("expression.csv.gz")
    page.screenshot(path=str(ARTEFACTS / "data-table-upload.png"), full_page=True)

    page.locator("[data-testid='stSidebar']").get_by_role("link", name="Q-alpha", exact=True).click()
    page.get_by_role("heading", name="Q-alpha").wait_for(timeout=60_000)
    page.locator(".scrubber .top li").first.wait_for(timeout=120_000)
    quiet(page)
    top = page.evaluate("() => [...document.querySelectorAll('.scrubber .top li')].slice(0, 4).map(e => e.dataset.feature)")
    assert sorted(top) == [f"MARKER{i}" for i in range(4)], top
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "qalpha-uploaded-genes.png"), full_page=True)

    # the upload stays in the session's list: away to a bundled set and back without uploading
    pick_dataset(page, "wine")
    page.locator("[data-testid='stSidebar']").get_by_text("178 samples x 13 features").wait_for(timeout=60_000)
    pick_dataset(page, "expression.csv.gz · this session")
    page.locator("[data-testid='stSidebar']").get_by_text("16 samples x 100 features").wait_for(timeout=60_000)
    assert page.locator("[data-testid='stException']").count() == 0


def test_transformed_values_join_the_list_beside_the_original(page, app_url):
    """log1p and z-scores on TOX-171's raw intensities: a new data set, current and listed, whose
    statistics are z-scores; the original is a pick away, as it was."""
    wait_for_app(page, f"{app_url}/data?data=TOX-171")
    page.get_by_role("heading", name="Data", exact=True).wait_for(timeout=60_000)
    page.get_by_text("log1p: log(1 + x)").click()
    settle(page)
    page.get_by_text("z-scores: each feature centred").click()
    settle(page)
    page.get_by_role("button", name="Transform the values").click()
    page.get_by_text("These are the values of TOX-171, transformed: log1p, z-scores").wait_for(timeout=60_000)
    sidebar = page.locator("[data-testid='stSidebar']")
    expect(sidebar).to_contain_text("TOX-171 (log1p, z-scores)")
    expect(page.get_by_role("button", name="Transform the values")).to_be_disabled()  # the boxes are cleared
    pick_dataset(page, "TOX-171")
    expect(sidebar).to_contain_text("171 samples x 5,748 features")
    expect(page.get_by_text("These are the values of TOX-171")).to_have_count(0)
    pick_dataset(page, "TOX-171 (log1p, z-scores) · this session")
    expect(page.get_by_text("These are the values of TOX-171, transformed")).to_have_count(1)
    assert page.locator("[data-testid='stException']").count() == 0


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
    expect(page.locator("[data-testid='stSidebar']")).to_contain_text("warpAR10P")

    chooser = tab_chooser(page, "Upload a table", page.get_by_text("A table: samples x features"))
    chooser.set_input_files(files=[{"name": "huge.npy", "mimeType": "application/octet-stream",
                                    "buffer": header.getvalue() + bytes(64)}])
    page.get_by_text("huge.npy (the array) would need 7.3 TB in memory, more than the per-upload budget").wait_for(timeout=60_000)
    expect(page.locator("[data-testid='stSidebar']")).to_contain_text("warpAR10P")
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTEFACTS / "data-bombs-refused.png"), full_page=True)


def test_server_data_whole_set_run_then_a_subset_for_the_other_pages(page, server_data_url):
    """A newcomer's path through the server's data folder: Q-alpha on the whole (sparse, lazily
    read) set, its ranking kept, then a dense subset that the Q-alpha page works on."""
    wait_for_app(page, f"{server_data_url}/data")
    page.get_by_role("tab", name="Server data").click()
    settle(page)
    page.get_by_text("600 samples x 300 features, sparse").wait_for(timeout=30_000)
    page.get_by_label("k (clusters)").fill("2")
    page.get_by_label("k (clusters)").press("Enter")
    settle(page)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("Ranking (CSV)").wait_for(timeout=120_000)
    settle(page)
    assert page.get_by_role("button", name="Stop").count() == 0  # gone once the run is done
    # the planted markers stand out: a clear sparsity gap at the 20 marker genes
    gap = page.locator("[data-testid='stMetric']").filter(has_text="Sparsity gap")
    assert gap.locator("[data-testid='stMetricValue']").inner_text().strip() == "20"
    page.screenshot(path=str(ARTEFACTS / "server_data.png"), full_page=True)
    # the ranking is built when the button is clicked: the whole ranking, best first
    lines = open(download(page, "Ranking (CSV)").path()).read().splitlines()
    assert lines[0] == "rank,feature,weight"
    assert len(lines) == 301 and all(f"GENE{j}" in "".join(lines[1:21]) for j in range(20))
    settle(page)
    page.get_by_label("Features of highest variance").fill("40")
    page.get_by_label("Features of highest variance").press("Enter")
    settle(page)
    page.get_by_role("button", name="Load subset").click()
    settle(page)
    sidebar = page.locator("[data-testid='stSidebar']")
    sidebar.get_by_text("cells.h5ad (600 x 40 by variance)").wait_for(timeout=60_000)
    # the whole-set ranking is still there after loading the subset
    expect(page.get_by_text("Ranking (CSV)")).to_have_count(1)
    page.get_by_role("link", name="Q-alpha", exact=True).click()
    page.get_by_text("Selected (K)").first.wait_for(timeout=120_000)
    assert page.locator("[data-testid='stException']").count() == 0


#: A Dask cluster in a process of its own (two workers, one thread each) that prints its scheduler's
#: address and serves until it is killed: LocalCluster's worker processes failed to start inside a
#: pytest worker that had run other tests (test_matrix.py), so the workers are threads here.
CLUSTER_PROCESS = """
import time
from distributed import LocalCluster
cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=None)
print(cluster.scheduler_address, flush=True)
while True:
    time.sleep(1)
"""


@pytest.mark.slow  # a cluster and a server of its own: the slow tier (docs/testing.md)
def test_the_server_tab_on_a_dask_cluster_runs_a_whole_set_and_stop_cancels_the_tasks(browser, tmp_path):
    """Issue 62, item 5: the app pointed at a cluster (QALPHA_DASK_SCHEDULER) runs Q-alpha on a
    whole Zarr set there, with progress, and Stop leaves no task of the run on the cluster; then a
    one-pass filter runs there to the end and its ranking is shown."""
    import subprocess
    import sys
    import time

    import numpy as np
    import zarr
    from distributed import Client

    from benchmarks.app_server import served

    rng = np.random.default_rng(3)
    X = rng.standard_normal((20_000, 400))  # noise: Q-alpha runs its 5,000 iterations (90 s in NumPy)
    zarr.create_array(str(tmp_path / "noise.zarr"), data=X, chunks=(2_000, 400))
    process = subprocess.Popen([sys.executable, "-c", CLUSTER_PROCESS], stdout=subprocess.PIPE, text=True)
    try:
        address = process.stdout.readline().strip()
        assert address.startswith("tcp://"), address
        with Client(address, timeout=30) as observer, \
                served(ROOT / "app.py", environment={"QALPHA_DATA_DIR": str(tmp_path),
                                                     "QALPHA_DASK_SCHEDULER": address}) as url:
            context = browser_context(browser)
            page = context.new_page()
            wait_for_app(page, f"{url}/data")
            page.get_by_role("tab", name="Server data").click()
            page.get_by_text(f"Runs on the Dask cluster at {address}: 2 workers, 2 threads").wait_for(timeout=30_000)
            page.get_by_role("spinbutton", name="Iterations at most").fill("5000")
            page.get_by_role("spinbutton", name="Iterations at most").press("Enter")
            settle(page)
            page.get_by_role("button", name="Run", exact=True).click()
            page.locator("[data-testid='stProgress']").filter(has_text="objective").wait_for(timeout=120_000)
            assert observer.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) > 0
            page.get_by_role("button", name="Stop").click()
            page.get_by_text("Stopped; nothing of that run was kept.").wait_for(timeout=30_000)
            deadline = time.monotonic() + 10
            while observer.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) and time.monotonic() < deadline:
                time.sleep(0.2)
            left = observer.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
            assert left == 0, f"{left} tasks of the stopped run are still on the cluster"
            page.screenshot(path=str(ARTEFACTS / "server-data-cluster-stopped.png"), full_page=True)
            page.locator("[data-testid='stSelectbox']").filter(has_text="Method").click()
            page.get_by_role("option", name="Variance", exact=True).click()
            settle(page)
            page.get_by_role("button", name="Run", exact=True).click()
            page.get_by_text("Ranking (CSV)").wait_for(timeout=120_000)
            assert page.locator("[data-testid='stException']").count() == 0
            context.close()
    finally:
        process.kill()
        process.wait(timeout=30)
