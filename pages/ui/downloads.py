"""What the pages offer to download: tables as CSV, the selected data, masks as PNG."""

from __future__ import annotations

import io

import numpy as np

from core import Dataset


def table_csv(columns: dict) -> bytes:
    """A dict of equal-length columns as CSV bytes (for download buttons)."""
    names = list(columns)
    buffer = io.StringIO()
    buffer.write(",".join(names) + "\n")
    for row in zip(*(columns[n] for n in names)):
        buffer.write(",".join(f"{v:.10g}" if isinstance(v, (float, np.floating)) else f'"{v}"'
                              for v in row) + "\n")
    return buffer.getvalue().encode()


def selected_data_csv(data: Dataset, selected) -> bytes:
    """The samples of ``data`` restricted to the features ``selected`` (with names and labels) as
    CSV bytes: the subset a user takes to another tool."""
    columns = {"sample": list(data.sample_names)}
    if data.labels is not None:
        columns["label"] = list(data.labels)
    columns.update({data.feature_names[j]: data.X[:, j] for j in np.sort(np.asarray(selected))})
    return table_csv(columns)


def mask_png(mask) -> bytes:
    """A boolean image as PNG bytes (white = selected)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray((np.asarray(mask, dtype=bool) * 255).astype(np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()
