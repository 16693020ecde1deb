"""Tables as figures: a heat map of a table of values (methods x methods, sets x methods) and the
table behind any figure, for downloads and screen readers.
"""

from __future__ import annotations


import numpy as np
import plotly.graph_objects as go

from ._layout import _LAYOUT, _colorscale, _figure, _text, _wrapped

def heatmap_table_figure(row_labels, column_labels, values, errors=None, title: str = "",
                         value_title: str = "") -> go.Figure:
    """A table of numbers as a heatmap: rows x columns, each cell written as ``mean ± error``
    (``errors`` the same shape, optional); one colour scale spans all the values. NaN cells
    (no value) stay empty. A square table whose rows and columns are the same names numbers its
    rows and labels its columns by those numbers (the hover names both)."""
    values = np.asarray(values, dtype=np.float64)
    text = np.char.mod("%.3f", values).astype(object)
    if errors is not None:
        text = text + " ± " + np.char.mod("%.3f", np.asarray(errors, dtype=np.float64)).astype(object)
    text[~np.isfinite(values)] = ""
    columns, rows = [str(c) for c in column_labels], [str(r) for r in row_labels]
    # long names (a method with its settings) are wrapped on the axes only: the hover and the table
    # behind the figure keep them whole. Unwrapped, one long column name tilted the labels and took
    # most of the figure's height, leaving cells 13 px high (Compare's overlap of the top sets)
    column_ticks, row_ticks = _wrapped(columns, 20), _wrapped(rows, 40)
    if columns == rows and len(columns) > 1:
        # a square table of the same names (Compare's Jaccard overlap): the rows are numbered and
        # the columns carry the numbers only; wrapped names side by side overlapped in 800 px
        row_ticks = [f"{i} · {tick}" for i, tick in enumerate(row_ticks, start=1)]
        column_ticks = [str(i) for i in range(1, len(columns) + 1)]
    label_lines = max(tick.count("<br>") + 1 for tick in column_ticks)
    row_height = max(28, 14 * max(tick.count("<br>") + 1 for tick in row_ticks))  # room for a row's name
    heat = dict(type="heatmap", z=values, x=columns, y=rows,
                text=text.tolist(), texttemplate="%{text}", colorscale=_colorscale("Viridis"), colorbar=dict(title=_text(value_title)),
                hovertemplate="%{y}, %{x}: %{text}<extra></extra>")
    return _figure([heat], dict(title=_text(title),
                                xaxis=dict(tickmode="array", tickvals=columns, ticktext=column_ticks, tickangle=0),
                                yaxis=dict(autorange="reversed", tickmode="array", tickvals=rows, ticktext=row_ticks),
                                height=max(300, row_height * len(rows) + 16 * label_lines + 120), **_LAYOUT))


def _column(values, n: int):
    """A trace attribute as a column of ``n`` entries (None: the positions 0..n-1)."""
    if values is None:
        return np.arange(n)
    values = np.asarray(values)
    return values.ravel() if values.size == n else np.resize(values, n)


def figure_table(figure: go.Figure):
    """The numbers a figure draws, as one tidy :class:`pandas.DataFrame`: the table behind it.

    One row per point of each curve, marker set or bar (``trace``, ``x``, ``y``, and ``y_error``
    where the trace has error bars) and one row per cell of each heat map (``trace``, ``x`` its
    column, ``y`` its row, ``value``); ``trace`` is the trace's name, else its kind and position.
    Shapes and annotations (a selection's outline, a marked λ) are drawn from these numbers and
    are not rows of their own.
    """
    import pandas as pd

    parts = []
    for index, trace in enumerate(figure.data):
        name = trace.name if getattr(trace, "name", None) else f"{trace.type} {index + 1}"
        if trace.type == "heatmap":
            z = np.asarray(trace.z, dtype=np.float64)
            if z.ndim != 2:
                continue
            rows, columns = np.indices(z.shape)
            x = _column(trace.x, z.shape[1])[columns.ravel()]
            y = _column(trace.y, z.shape[0])[rows.ravel()]
            parts.append(pd.DataFrame({"trace": name, "x": x, "y": y, "value": z.ravel()}))
            continue
        y = getattr(trace, "y", None)
        if y is None:
            continue
        y = np.asarray(y).ravel()
        part = {"trace": name, "x": _column(getattr(trace, "x", None), y.size), "y": y}
        error = getattr(trace, "error_y", None)
        if error is not None and error.array is not None:
            part["y_error"] = _column(error.array, y.size)
        parts.append(pd.DataFrame(part))
    if not parts:
        return pd.DataFrame({"trace": [], "x": [], "y": []})
    return pd.concat(parts, ignore_index=True)
