"""What the pages offer to download: tables as CSV or Parquet, the selected data, masks as PNG,
figures as PNG and SVG (kaleido) with the table behind them."""

from __future__ import annotations

import io
import os
import re
import shutil
import threading
import unicodedata

import numpy as np

from core import Dataset

#: Extensions a data set's name may carry from its upload, left out of the names of its downloads.
_UPLOAD_EXTENSIONS = (".gz", ".csv", ".tsv", ".txt", ".zip", ".h5ad", ".npz", ".npy", ".mat", ".xlsx", ".xls",
                      ".parquet", ".zarr", ".png", ".jpg", ".jpeg")


def file_name(name: str, what: str, extension: str = "") -> str:
    """A plain, portable name for a download: the data set's name without the extension of its
    upload, a hyphen, what the file holds, and ``extension``; only ASCII letters, digits, ``.``,
    ``-`` and ``_`` (spaces, brackets and anything else become ``_``), so that it needs no quoting
    in a shell and is the same on every system (``warpAR10P (main)``, ``selected``, ``csv`` ->
    ``warpAR10P_main-selected.csv``); without ``extension``, the name without one."""
    stem = str(name)
    while stem.lower().endswith(_UPLOAD_EXTENSIONS):
        stem = stem[:stem.rfind(".")]

    def plain(part: str) -> str:
        ascii_part = unicodedata.normalize("NFKD", part).encode("ascii", "ignore").decode()  # é -> e
        return re.sub(r"[^A-Za-z0-9._-]+", "_", ascii_part).strip("._-")

    base = "-".join(part for part in (plain(stem), plain(what)) if part) or "download"
    return f"{base}.{extension}" if extension else base


def frame_csv(frame) -> bytes:
    """A pandas DataFrame as UTF-8 CSV bytes, written by pandas: names with commas, quotes or
    line breaks are quoted, and floats are written with every digit, so ``pandas.read_csv`` reads
    back the same names and values."""
    return frame.to_csv(index=False).encode("utf-8")


def frame_parquet(frame) -> bytes:
    """A pandas DataFrame as Parquet bytes (pyarrow): typed columns, read back exactly by
    ``pandas.read_parquet``."""
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def table_csv(columns: dict) -> bytes:
    """A dict of equal-length columns as CSV bytes (for download buttons)."""
    import pandas as pd

    return frame_csv(pd.DataFrame({name: np.asarray(values) for name, values in columns.items()}))


def selected_data_csv(data: Dataset, selected) -> bytes:
    """The samples of ``data`` restricted to the features ``selected`` (with names and labels) as
    CSV bytes: the subset a user takes to another tool. A feature may be called ``sample`` or
    ``label`` too: the columns are kept side by side, never merged."""
    import pandas as pd

    selected = np.sort(np.asarray(selected, dtype=np.int64))
    frame = pd.DataFrame(data.X[:, selected], columns=[data.feature_names[j] for j in selected])
    if data.labels is not None:
        frame.insert(0, "label", np.asarray(data.labels), allow_duplicates=True)
    frame.insert(0, "sample", list(data.sample_names), allow_duplicates=True)
    return frame_csv(frame)


def results_h5ad(data: Dataset, alpha, top_k: int, settings: dict) -> bytes:
    """The data with a selection's results as an AnnData ``.h5ad`` file (the container single-cell
    users work in): ``X`` the data (samples x features), ``obs`` the sample names and labels,
    ``var`` the feature names with ``alpha``, ``rank`` (1 = largest alpha) and ``selected`` (the
    top ``top_k``), ``obsm`` the layouts of the samples the data came with (an ``.h5ad``'s
    ``X_umap``...), and ``uns["selection"]`` the settings that produced them. The labels keep the
    name of the column they were read from (``bulk_labels``), else ``label``."""
    import tempfile
    import warnings
    from pathlib import Path

    import anndata
    import pandas as pd

    alpha = np.asarray(alpha, dtype=np.float64)
    order = np.argsort(-alpha, kind="stable")
    rank = np.empty(alpha.size, dtype=np.int64)
    rank[order] = np.arange(1, alpha.size + 1)
    var = pd.DataFrame({"alpha": alpha, "rank": rank, "selected": rank <= int(top_k)},
                       index=pd.Index([str(name) for name in data.feature_names], name="feature"))
    obs = pd.DataFrame(index=pd.Index([str(name) for name in data.sample_names], name="sample"))
    if data.labels is not None:
        obs[data.meta.get("table", {}).get("label_column") or "label"] = pd.Categorical([str(label) for label in data.labels])
    layouts = {name: np.asarray(values, dtype=np.float64) for name, values in data.meta.get("layouts", {}).items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # repeated names are kept as given, not renamed
        adata = anndata.AnnData(X=np.asarray(data.X, dtype=np.float64), obs=obs, var=var, obsm=layouts or None,
                                uns={"selection": {key: value for key, value in settings.items() if value is not None}})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.h5ad"
        adata.write_h5ad(path)
        return path.read_bytes()


def picture_png(picture, compress_level: int = 6) -> bytes:
    """A grey (or RGB) ``uint8`` picture as PNG bytes (``compress_level`` as zlib's: 1 writes the
    Haar page's rows of faces in 8 ms and 101 kB, the default 6 in 31 ms and 88 kB)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.asarray(picture, dtype=np.uint8)).save(buffer, format="PNG", compress_level=compress_level)
    return buffer.getvalue()


def mask_png(mask) -> bytes:
    """A boolean image as PNG bytes (white = selected)."""
    return picture_png(np.asarray(mask, dtype=bool) * np.uint8(255))


#: Figures export at this width when they have none (the page draws them at its own width), and
#: PNGs at this scale: 3,000 pixels across, 300 dpi on a 10-inch page.
EXPORT_WIDTH, EXPORT_HEIGHT, PNG_SCALE = 1000, 500, 3
_EXPORT_LOCK = threading.Lock()
_export_server = []


def static_export_available() -> bool:
    """Whether figures can be written as PNG and SVG here: kaleido draws them in a headless
    Chrome or Chromium, which must be on the machine (``BROWSER_PATH`` or the PATH)."""
    try:
        import kaleido  # noqa: F401
    except ImportError:
        return False
    return bool(os.environ.get("BROWSER_PATH")) or any(
        shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome", "chrome"))


def figure_image(figure, image_format: str) -> bytes:
    """A Plotly figure as PNG (``PNG_SCALE`` times its size) or SVG bytes, drawn by kaleido.

    The first export starts kaleido's browser and leaves it running for the process (3.7 s for
    the first PNG of a session in issue 76's tour); :func:`start_exporter` does that beforehand,
    when a Save popover opens. Exports are serialised: the sessions share that browser."""
    if image_format not in ("png", "svg"):
        raise ValueError(f"image_format must be 'png' or 'svg', not {image_format!r}")
    import warnings

    layout = figure.layout
    with _EXPORT_LOCK, warnings.catch_warnings():
        # plotly passes its scale both ways to kaleido's server, which says it ignores one of them
        warnings.filterwarnings("ignore", message="The kopts argument is ignored")
        _started_exporter()
        return figure.to_image(format=image_format, width=layout.width or EXPORT_WIDTH,
                               height=layout.height or EXPORT_HEIGHT, scale=PNG_SCALE if image_format == "png" else 1)


def exporter_ready() -> bool:
    """Whether kaleido's browser is up and warm (:func:`start_exporter`)."""
    return bool(_export_server)


def _started_exporter() -> None:
    """kaleido's browser running, and warm (a first, tiny export loads Plotly into it); called
    with :data:`_EXPORT_LOCK` held."""
    if _export_server:
        return
    import kaleido
    import plotly.graph_objects as go

    import warnings

    kaleido.start_sync_server(silence_warnings=True)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The kopts argument is ignored")
        go.Figure(go.Scatter(x=[0, 1], y=[0, 1])).to_image(format="png", width=10, height=10)
    _export_server.append(True)


def start_exporter() -> None:
    """Start kaleido's browser in the background, once per process, so that the PNG or SVG a Save
    popover offers is ready when clicked: the popover's opening is the sign that one will be.
    Returns at once; an export asked for meanwhile waits for the start instead of making its own."""
    if _export_server or not static_export_available():
        return

    def start():
        with _EXPORT_LOCK:
            try:
                _started_exporter()
            except Exception:  # noqa: BLE001 - the export itself will say what is wrong, when asked for
                pass

    threading.Thread(target=start, name="start-exporter", daemon=True).start()


def figure_csv(figure) -> bytes:
    """The table behind a figure (:func:`core.plots.figure_table`) as CSV bytes."""
    from core.plots import figure_table

    return frame_csv(figure_table(figure))
