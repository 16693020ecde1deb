"""Figures of the samples themselves: a stored layout of them (AnnData's ``obsm["X_umap"]``),
coloured by class or cluster as the map of the samples through the selection colours them."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from ._layout import _FIXED, _LAYOUT, _colorscale, _figure, _text

#: The groups' colours, in the order of the groups: Plotly's ten, then ten lighter ones (more
#: groups repeat them). The browser's map of the samples draws with the same list
#: (``MAP_COLOURS`` in pages/ui/sample_map.js; a test keeps the two equal).
GROUP_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                 "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
                 "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5")
#: The side samples' colour and marker (the browser's map draws them as dark outlined diamonds too)
SIDE_COLOUR = "#333333"


def samples_layout_figure(coordinates, groups, group_names: Sequence[str], *, names: Sequence[str] | None = None,
                          side_coordinates=None, side_names: Sequence[str] | None = None, group_title: str = "class",
                          axis_names: tuple[str, str] = ("1", "2"), title: str = "", values=None,
                          value_name: str = "") -> go.Figure:
    """The samples at stored coordinates, one trace per group (its legend entry), or with
    ``values`` coloured by them on viridis with a colour bar (``sc.pl.umap(adata, color=gene)``);
    the side samples, if any, as outlined diamonds; each point named on hover with its group.

    Parameters
    ----------
    coordinates : array_like, shape (n, 2)
    groups : array_like of int, shape (n,)
        Each sample's group, an index into ``group_names`` (its colour: :data:`GROUP_COLOURS`).
    names, side_names : sequence of str, optional
        The samples' names for the hover text.
    side_coordinates : array_like, shape (m, 2), optional
    axis_names : (str, str)
        The axes' titles (e.g. ``("UMAP1", "UMAP2")``).
    values : array_like, shape (n,), optional
        A feature's value per sample (``value_name`` names it): the colours, the highest drawn on
        top (as scanpy draws them); the groups are then named on hover only.
    """
    coordinates = np.asarray(coordinates, dtype=float)
    groups = np.asarray(groups, dtype=int)
    if coordinates.ndim != 2 or coordinates.shape[1] != 2 or groups.shape != (coordinates.shape[0],):
        raise ValueError(f"coordinates must be n x 2 and groups of length n; got {coordinates.shape} and {groups.shape}.")
    names = [str(name) for name in names] if names is not None else [f"sample {i}" for i in range(len(groups))]
    traces = []
    if values is not None:
        values = np.asarray(values, dtype=float)
        if values.shape != groups.shape:
            raise ValueError(f"values must hold one value per sample ({groups.size}); got shape {values.shape}.")
        order = np.argsort(values, kind="stable")
        labels = [f"{names[i]} · {group_title}: {group_names[groups[i]]}" for i in order]
        traces.append(dict(
            type="scattergl", mode="markers", name=value_name, x=coordinates[order, 0], y=coordinates[order, 1],
            text=labels, customdata=values[order], showlegend=False,
            marker=dict(size=6, color=values[order], colorscale=_colorscale("Viridis"), showscale=True,
                        colorbar=dict(title=_text(value_name), thickness=12)),
            hovertemplate=f"%{{text}} · {value_name} = %{{customdata:.4g}}<extra></extra>"))
    for number, group_name in enumerate(group_names if values is None else ()):
        members = np.flatnonzero(groups == number)
        if members.size == 0:
            continue
        traces.append(dict(
            type="scattergl", mode="markers", name=str(group_name), x=coordinates[members, 0], y=coordinates[members, 1],
            text=[names[i] for i in members], marker=dict(size=6, color=GROUP_COLOURS[number % len(GROUP_COLOURS)]),
            hovertemplate=f"%{{text}} · {group_title}: {group_name}<extra></extra>"))
    if side_coordinates is not None and len(side_coordinates):
        side_coordinates = np.asarray(side_coordinates, dtype=float)
        side_names = [str(name) for name in side_names] if side_names is not None else None
        traces.append(dict(
            type="scattergl", mode="markers", name="side data", x=side_coordinates[:, 0], y=side_coordinates[:, 1],
            text=side_names, marker=dict(size=7, symbol="diamond-open", color=SIDE_COLOUR),
            hovertemplate="%{text} · side data<extra></extra>" if side_names else "side data<extra></extra>"))
    layout = dict(_LAYOUT, title=_text(title), height=420,
                  xaxis=dict(title=_text(axis_names[0]), showticklabels=False, zeroline=False, **_FIXED),
                  yaxis=dict(title=_text(axis_names[1]), showticklabels=False, zeroline=False, **_FIXED),
                  legend=dict(title=_text(group_title), itemsizing="constant"))
    return _figure(traces, layout)
