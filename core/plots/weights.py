"""Figures of Q-alpha's weights: the sorted weights with the sparsity gap and the top-K band
([WS03] Fig. 1b, [SW04] Fig. 3b), the objective's history, the λ path, the gap's strength and
the per-class dot plot.

References
----------
.. [WS03] L. Wolf and A. Shashua, ICCV 2003.
.. [SW04] A. Shashua and L. Wolf, ECCV 2004.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
import plotly.graph_objects as go

from ..errors import InputError
if TYPE_CHECKING:
    from ..selection.sparsity import DefaultK
from ._layout import _FIXED, _FIXED_LAYOUT, _LAYOUT, _colorscale, _figure, _mark_note, _text, _vertical_line

#: Sorted weights of more features are drawn at every rank up to ``EVERY_RANK_UP_TO`` and at
#: ``TAIL_RANKS`` evenly spaced ranks after it. A sorted curve sampled at two points per screen
#: pixel looks the same as drawn in full, and on 20,000 genes the full curve (a 640 kB message
#: drawn in WebGL) made a K step 0.77 s against 0.10 s for the bare page (benchmarks/bench_app.py).
EVERY_RANK_UP_TO = 1000


TAIL_RANKS = 2000
#: Number of points above which a curve is drawn as a line without a marker per point: in SVG
#: each marker is an element of the page, and redrawing 2,400 of them took 0.35 s of a slider
#: step in Chromium (benchmarks/bench_app.py); the hover still names every point.
MARKERS_UP_TO = 300


def sorted_weights_figure(alpha, feature_names: Sequence[str] | None = None,
                          n_selected: int | None = None, log_y: bool = False,
                          title: str = "Sorted weights (alpha)", clear_gap: bool = True,
                          top_k: int | None = None, default: "DefaultK | None" = None,
                          marked: int | None = None, log_rank: bool = False) -> go.Figure:
    """The sorted alpha plot of [WS03] Fig. 1b / [SW04] Fig. 3b, with the sparsity-gap cut marked.

    The cut after ``n_selected`` is drawn only for a ``clear_gap``; otherwise the title says
    there is none, and ``default`` (:func:`core.selection.sparsity.default_k`) marks the count its
    rule chose, named on the plot. ``top_k`` shades the ranks of the features the page selects.

    Hovering a point shows the feature's name, its rank and weight. With ``log_y`` the weights
    are drawn on a log axis (non-positive weights are left out of that view and counted in the
    title, so nothing is hidden silently). Beyond ``EVERY_RANK_UP_TO + TAIL_RANKS`` weights the
    curve is drawn at every rank up to ``EVERY_RANK_UP_TO`` and at ``TAIL_RANKS`` evenly spaced
    ranks after it (the title says so): between two drawn ranks the sorted weights lie between
    the two drawn values.
    ``marked``: a feature (its index) drawn as a point at its rank, with its name (a feature looked
    up by name). Scores of ``-inf`` (a scorer's constant features) are left out and counted in the title.
    ``log_rank``: the ranks on a log axis, as the Q-alpha page's browser-drawn weights have them
    (the few heavy weights spread out, the long tail pressed together).
    """
    alpha = np.asarray(alpha, dtype=np.float64).ravel()
    order = np.argsort(-alpha, kind="stable")
    values = alpha[order]
    all_names = np.asarray(feature_names if feature_names is not None
                           else [f"feature {j}" for j in range(alpha.size)], dtype=object)
    names = all_names[order]
    unscored = np.isneginf(values)  # features without spread (core.selection.scorers): last, not drawn
    if unscored.any():
        title = f"{title} — {int(unscored.sum())} constant feature(s) without a score, ranked last, not shown"
        values, names = values[~unscored], names[~unscored]
    if log_y:
        shown = values > 0
        if (~shown).any():
            title = f"{title} — {int((~shown).sum())} non-positive weight(s) not shown on log axis"
        values, names = values[shown], names[shown]
    # the shown weights are always a prefix of the sorted ones: ranks 1, 2, ... (as x0 and dx)
    ranks = dict(x0=1, dx=1)
    if values.size > EVERY_RANK_UP_TO + TAIL_RANKS:
        drawn = np.concatenate([np.arange(EVERY_RANK_UP_TO),
                                np.linspace(EVERY_RANK_UP_TO, values.size - 1, TAIL_RANKS).round().astype(int)])
        title = f"{title} — drawn at {drawn.size:,} of {values.size:,} ranks"
        values, names, ranks = values[drawn], names[drawn], dict(x=drawn + 1)
    curve = dict(type="scatter", **ranks, y=values, mode="markers+lines" if values.size <= MARKERS_UP_TO else "lines",
                 marker=dict(size=4), line=dict(width=1), customdata=names, name="alpha",
                 hovertemplate="rank %{x}<br>%{customdata}<br>alpha = %{y:.4g}<extra></extra>")
    # the marks as layout shapes and annotations written out: Plotly's add_vline / add_vrect took
    # 19 ms of every K or λ step (they resolve the axes each call)
    shapes, notes = [], []
    # on a log axis Plotly places annotations at the logarithm of their position (shapes at the position)
    at = (lambda rank: float(np.log10(rank))) if log_rank else (lambda rank: rank)
    if top_k is not None and 0 < top_k <= alpha.size:
        shapes.append(dict(type="rect", x0=0.5, x1=top_k + 0.5, xref="x", y0=0, y1=1, yref="y domain",
                           fillcolor="deepskyblue", opacity=0.12, line=dict(width=0), layer="below"))
        notes.append(_mark_note(at(0.5), f"top {top_k}", top=True))
    if n_selected is not None and 0 < n_selected < alpha.size:
        if clear_gap:
            shapes.append(_vertical_line(n_selected + 0.5, "dash", "crimson"))
            notes.append(_mark_note(at(n_selected + 0.5), f"sparsity gap: {n_selected}", top=True))
        else:
            title = f"{title} — no clear gap"
    if default is not None and not clear_gap and 0 < default.k < alpha.size:
        shapes.append(_vertical_line(default.k + 0.5, "dot", "darkorange"))
        notes.append(_mark_note(at(default.k + 0.5), f"{default.rule}: {default.k}", top=False))
    traces = [curve]
    if marked is not None:
        if not 0 <= int(marked) < alpha.size:
            raise InputError(f"marked must be a feature index below {alpha.size}; got {marked}.")
        rank = int(np.flatnonzero(order == int(marked))[0]) + 1
        # above the point, unless it is high on the plot, where the "top K" note is: then below
        # (a feature at rank 1 had "top 80" printed over its name)
        finite = values[np.isfinite(values)]
        high = finite.size and alpha[int(marked)] > (finite.max() + finite.min()) / 2
        traces.append(dict(type="scatter", x=[rank], y=[alpha[int(marked)]], mode="markers+text",
                           marker=dict(size=11, color="crimson", symbol="circle-open", line=dict(width=2)),
                           text=[str(all_names[int(marked)])], textposition="bottom right" if high else "top right",
                           name="looked up",
                           hovertemplate=f"rank {rank}<br>{all_names[int(marked)]}<br>alpha = %{{y:.4g}}<extra></extra>"))
    return _figure(traces, dict(title=_text(title), xaxis=dict(title=_text("rank"), **_FIXED,
                                                               # decades only, as the Q-alpha page's axis: 1, 10, 100, 1000
                                                               **(dict(type="log", dtick=1) if log_rank else {})),
                                 yaxis=dict(title=_text("alpha"), type="log" if log_y else "linear", **_FIXED),
                                 shapes=shapes, annotations=notes, **_FIXED_LAYOUT))


def history_figure(history, title: str = "Objective per iteration") -> go.Figure:
    """Convergence history: the objective after each iteration."""
    history = np.asarray(history, dtype=np.float64).ravel()
    curve = dict(type="scatter", x=np.arange(1, history.size + 1), y=history, mode="lines+markers",
                 marker=dict(size=4), name="objective",
                 hovertemplate="iteration %{x}<br>objective %{y:.8g}<extra></extra>")
    # at most 8 significant digits: a converged objective otherwise gets 18-digit tick labels
    return _figure([curve], dict(title=_text(title), xaxis=dict(title=_text("iteration")),
                                 yaxis=dict(title=_text("objective"), tickformat=".8~g"), **_LAYOUT))


def lambda_path_figure(lams, weights, feature_names: Sequence[str] | None = None, current: float | None = None,
                       n_top: int = 10, title: str = "Weights along λ") -> go.Figure:
    """The λ path as a lasso path is drawn: the weight of each of the ``n_top`` features that weigh
    most anywhere on the path against λ (log axis), the current λ marked (how clearly the weights
    break along λ: :func:`gap_strength_figure`).

    ``weights`` is (n_lams, n_features), one row per entry of ``lams``.
    """
    lams = np.asarray(lams, dtype=np.float64).ravel()
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 2 or weights.shape[0] != lams.size:
        raise InputError(f"weights must have one row per lambda ({lams.size}); got shape {weights.shape}.")
    names = list(feature_names) if feature_names is not None else [f"feature {j}" for j in range(weights.shape[1])]
    top = np.argsort(-np.abs(weights).max(axis=0), kind="stable")[:n_top]
    # Kept light, for it is drawn whenever the path view is: one panel, lines without markers or
    # legend (the unified hover names every feature at the λ under the pointer instead) and fixed
    # margins; the gap's strength is a figure of its own beside it (one panel drew in 17 ms, two
    # panels in 37 ms). The app draws it without ``current`` and lets the browser draw that line
    # (pages/ui/widgets.chart's marker), so that a λ step leaves the figure as it is.
    traces = [dict(type="scatter", x=lams, y=weights[:, j], mode="lines", name=str(names[j]), showlegend=False,
                   hovertemplate=f"alpha %{{y:.4g}}<extra>{names[j]}</extra>")
              for j in top]
    shapes = []
    if current is not None and current > 0:
        shapes.append(dict(type="line", x0=current, x1=current, xref="x", y0=0, y1=1, yref="y domain",
                           line=dict(color="grey", dash="dash")))
    return _figure(traces, dict(
        title=_text(f"{title}: the top {len(top)} features"), hovermode="x unified",
        xaxis=dict(type="log", title=_text("λ (log scale)"), **_FIXED), yaxis=dict(title=_text("alpha"), **_FIXED),
        shapes=shapes, **_FIXED_LAYOUT))


def gap_strength_figure(lams, gap_strength, title: str = "How clearly the weights break") -> go.Figure:
    """Along the λ path, the sparsity gap's strength at each λ: the share of the sorted weights'
    variance that their best split explains ([SW04] Def. 3; a clear gap explains most of it)."""
    lams = np.asarray(lams, dtype=np.float64).ravel()
    strength = np.asarray(gap_strength, dtype=np.float64).ravel()
    if strength.shape != lams.shape:
        raise InputError(f"gap_strength must have one value per lambda ({lams.size}); got {strength.size}.")
    curve = dict(type="scatter", x=lams, y=strength, mode="lines+markers", marker=dict(size=5),
                 line=dict(color="black"), name="sparsity gap", showlegend=False,
                 hovertemplate="λ %{x:.3g}<br>the gap explains %{y:.0%} of the weights' variance<extra></extra>")
    return _figure([curve], dict(title=_text(title), xaxis=dict(type="log", title=_text("λ (log scale)"), **_FIXED),
                                 yaxis=dict(title=_text("share of variance"), range=[0, 1.02], tickformat=".0%",
                                            **_FIXED), **_FIXED_LAYOUT))


#: The dot plot's geometry (:func:`dotplot_figure`): pixels per class row, the least height of the
#: plot area (a colour bar of five numbers in 11 px type needs it), the width of a character of a
#: tick label (Chromium, Streamlit's 12 px sans-serif, measured to about 6.6 px; rounded up), and
#: how many characters of a feature name are shown (the hover has the whole name).
DOT_ROW, DOT_MIN_PLOT, CHAR_PX, MAX_NAME_CHARS = 26, 160, 7, 24


def dotplot_figure(classes, feature_names: Sequence[str], colour, size=None, *, colour_title: str = "score",
                   size_title: str = "fraction non-zero", title: str = "Selected features by class") -> go.Figure:
    """A dot plot, features across and classes down (as scanpy's ``dotplot``): each dot coloured by
    ``colour[c, j]`` (a diverging scale centred on 0) and sized by ``size[c, j]`` in [0, 1] (all
    equal without ``size``). The hover gives both numbers by name."""
    colour = np.asarray(colour, dtype=np.float64)
    classes = [str(c) for c in classes]
    names = [str(n) for n in feature_names]
    if colour.shape != (len(classes), len(names)):
        raise InputError(f"colour must be (classes x features) = ({len(classes)}, {len(names)}); got {colour.shape}.")
    size = np.ones_like(colour) if size is None else np.clip(np.asarray(size, dtype=np.float64), 0.0, 1.0)
    rows, cols = np.meshgrid(np.arange(len(classes)), np.arange(len(names)), indexing="ij")
    limit = float(np.abs(colour).max()) or 1.0
    # the geometry written out rather than left to automargin: one row of DOT_ROW px per class (every
    # class named, numbered classes too: a category axis of "1".."6" thinned its labels to 1, 3, 5),
    # feature names upright below (at -45 degrees the first ran off the left edge), margins that
    # fit the longest names, and a plot never so short that the colour bar's numbers overlap
    longest_class, longest_name = max(map(len, classes), default=1), max(map(len, names), default=1)
    margin = dict(l=int(24 + CHAR_PX * longest_class + 20), r=20, t=50,
                  b=int(30 + CHAR_PX * min(longest_name, MAX_NAME_CHARS)))
    plot_height = max(DOT_MIN_PLOT, DOT_ROW * len(classes))
    dots = dict(
        type="scatter", x=[names[j] for j in cols.ravel()], y=[classes[c] for c in rows.ravel()], mode="markers",
        marker=dict(size=4 + 18 * np.sqrt(size.ravel()), color=colour.ravel(), colorscale=_colorscale("RdBu_r"), cmin=-limit,
                    cmax=limit, colorbar=dict(title=dict(text=colour_title), thickness=14, nticks=5,
                                              len=1.0, lenmode="fraction"),
                    line=dict(width=0.5, color="grey")),
        customdata=np.stack([colour.ravel(), size.ravel()], axis=1),
        hovertemplate=(f"%{{x}} in %{{y}}<br>{colour_title} %{{customdata[0]:.3g}}<br>{size_title} "
                       "%{customdata[1]:.0%}<extra></extra>"))
    return _figure([dots], dict(title=_text(title),
                                xaxis=dict(tickangle=-90, type="category", tickmode="array",
                                           tickvals=names, ticktext=[n[:MAX_NAME_CHARS] for n in names],
                                           tickfont=dict(size=10), automargin=False),
                                yaxis=dict(title=_text("class"), type="category", autorange="reversed",
                                           tickmode="array", tickvals=classes, ticktext=classes, automargin=False),
                                height=margin["t"] + margin["b"] + plot_height, margin=margin))
