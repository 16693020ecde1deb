"""The topographical map of [SW04] Sec. 4 (Fig. 2): every feature placed by its coordinate in
each round, with labels kept from overlapping.

References
----------
.. [SW04] A. Shashua and L. Wolf, ECCV 2004.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from ..errors import InputError
from ._layout import _LAYOUT, _colorscale, _figure, _text

def topographic_figure(coordinates, alphas, feature_names: Sequence[str] | None = None,
                       rounds=(0, 1), top=None, scale: float | None = None,
                       title: str = "Topographical map of the features") -> go.Figure:
    """The topographical model of [SW04] Fig. 2b.

    Each feature is an ellipse centred at its coordinates of two rounds (the direction angle of
    each round) with semi-axes proportional to its alpha in those rounds. ``top`` (indices) limits
    the drawing to those features: a few dozen stay readable where a thousand overlapping
    ellipses do not. Ellipses are coloured by the round in which the feature weighs more (the
    legend), and the centres by the difference of the two rounds' alphas, the later minus the
    earlier (the colour bar; red where the later round weighs more, as the ellipses).
    """
    coordinates = np.asarray(coordinates, dtype=np.float64)
    alphas = np.asarray(alphas, dtype=np.float64)
    if coordinates.ndim != 2 or coordinates.shape != alphas.shape or coordinates.shape[0] < 2:
        raise InputError("The topographical map needs coordinates and alphas of at least two rounds "
                         "(rounds x features, same shape).")
    first, second = rounds
    n = coordinates.shape[1]
    names = np.asarray(list(feature_names) if feature_names is not None else [f"feature {j}" for j in range(n)],
                       dtype=object)
    shown = np.arange(n) if top is None else np.asarray(top, dtype=np.intp)
    x, y = coordinates[first, shown], coordinates[second, shown]
    a, b = np.clip(alphas[first, shown], 0, None), np.clip(alphas[second, shown], 0, None)
    if scale is None:
        spread = max(np.ptp(x) if x.size else 0.0, np.ptp(y) if y.size else 0.0, 1e-9)
        scale = 0.15 * spread / max(a.max(initial=0.0), b.max(initial=0.0), 1e-12)
    t = np.linspace(0, 2 * np.pi, 41)
    traces = []
    for name, members, colour in ((f"alpha larger in round {first + 1}", a >= b, "royalblue"),
                                  (f"alpha larger in round {second + 1}", a < b, "crimson")):
        if not members.any():
            continue
        # one trace per group (closed outlines separated by gaps): thousands of traces made
        # every slider step take seconds to draw
        gap = np.full((members.sum(), 1), np.nan)
        ex = np.hstack([x[members, None] + scale * a[members, None] * np.cos(t), gap]).ravel()
        ey = np.hstack([y[members, None] + scale * b[members, None] * np.sin(t), gap]).ravel()
        traces.append(dict(type="scatter", x=ex, y=ey, mode="lines", fill="toself", line=dict(width=1, color=colour),
                           opacity=0.45, name=name, hoverinfo="skip"))
    # later minus earlier, red where the later round weighs more: as the page's pictures have it
    difference = b - a
    limit = max(float(np.abs(difference).max(initial=0.0)), 1e-12)
    # names where they fit: the heaviest features first, each only where its label overlaps no
    # label already placed; every feature keeps its name on hover
    drawn_x = np.concatenate([x] + [trace["x"] for trace in traces])  # the ellipses widen the axes
    drawn_y = np.concatenate([y] + [trace["y"] for trace in traces])
    extent = (np.nanmin(drawn_x), np.nanmax(drawn_x), np.nanmin(drawn_y), np.nanmax(drawn_y)) if x.size else None
    labelled = non_overlapping_labels(x, y, names[shown], priority=np.maximum(a, b), extent=extent)
    traces.append(dict(
        type="scatter", x=x, y=y, mode="markers+text", text=np.where(labelled, names[shown], ""),
        textposition="top center",
        textfont=dict(size=9),
        marker=dict(size=7, color=difference, colorscale=_colorscale("RdBu_r"), cmin=-limit, cmax=limit,
                    line=dict(width=0.5, color="black"),
                    colorbar=dict(title=_text(f"alpha in round {second + 1}<br>minus round {first + 1}"), x=1.02)),
        customdata=np.c_[a, b], name="features", showlegend=False, hovertext=names[shown],
        hovertemplate=("%{hovertext}<br>alpha round " + str(first + 1) + " = %{customdata[0]:.3g}"
                       "<br>alpha round " + str(second + 1) + " = %{customdata[1]:.3g}"
                       # the axes' formula, where the reader points: [SW04] Sec. 4's coordinate
                       f"<br>direction θ = atan2(v₂ⱼ, v₁ⱼ): {first + 1}: %{{x:.3f}}, {second + 1}: %{{y:.3f}} rad"
                       "<br>(v₁, v₂: the round's two leading eigenvectors of G)<extra></extra>")))
    return _figure(traces, dict(
        title=_text(title), xaxis=dict(title=_text(f"direction of the feature in round {first + 1} (angle, radians)")),
        yaxis=dict(title=_text(f"direction in round {second + 1} (angle, radians)")),
        legend=dict(orientation="h", y=-0.18), **_LAYOUT))


#: A label's box in the plot's own proportions, for the narrowest plot the app draws: measured in
#: Chromium, a 9-pixel font is 4.2 px a character and 12 px a line, and the map in an 800 px window
#: has a plot area of 329 x 304 px (at 1400 px, 791 x 304). The width of one character and the
#: height of a line (with a pixel to spare), as fractions of the axes' ranges; wider plots leave
#: more room between labels, never less.
LABEL_CHAR_WIDTH, LABEL_HEIGHT = 0.0132, 0.045


def label_boxes(x, y, names, extent=None) -> np.ndarray:
    """Each label's box ``(left, bottom, right, top)`` in axes fractions, centred above its point
    as ``textposition="top center"`` draws it (:data:`LABEL_CHAR_WIDTH`, :data:`LABEL_HEIGHT`).
    ``extent`` ``(x_min, x_max, y_min, y_max)``: the axes' ranges (default: the points')."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if extent is None:
        extent = (x.min(initial=0.0), x.max(initial=0.0), y.min(initial=0.0), y.max(initial=0.0))
    u = (x - extent[0]) / max(extent[1] - extent[0], 1e-12)
    v = (y - extent[2]) / max(extent[3] - extent[2], 1e-12)
    half = 0.5 * LABEL_CHAR_WIDTH * np.array([len(str(name)) for name in names], dtype=np.float64)
    return np.c_[u - half, v + 0.01, u + half, v + 0.01 + LABEL_HEIGHT]


def non_overlapping_labels(x, y, names, priority, extent=None) -> np.ndarray:
    """Which points get a text label: in decreasing ``priority``, each whose box
    (:func:`label_boxes`) overlaps no box already chosen. A mask over the points."""
    boxes = label_boxes(x, y, names, extent)
    chosen = np.zeros(len(boxes), dtype=bool)
    for i in np.argsort(-np.asarray(priority, dtype=np.float64), kind="stable"):
        taken = boxes[chosen]
        if not np.any((taken[:, 0] < boxes[i, 2]) & (boxes[i, 0] < taken[:, 2])
                      & (taken[:, 1] < boxes[i, 3]) & (boxes[i, 1] < taken[:, 3])):
            chosen[i] = True
    return chosen
