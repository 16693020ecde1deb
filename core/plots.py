"""Plot builders shared by the pages and the tests: arrays in, Plotly figures out.

No Streamlit here; each function takes plain arrays (and names) and returns a
``plotly.graph_objects.Figure``, so that a figure can be checked in a test without a browser.

References
----------
.. [MWA07] B. Moghaddam, Y. Weiss and S. Avidan, "Fast pixel/part selection with sparse
   eigenvectors", ICCV 2007.
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
"""

from __future__ import annotations

from typing import Sequence

import textwrap
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go
from plotly.colors import get_colorscale

from .errors import InputError

__all__ = [
    "sorted_weights_figure",
    "history_figure",
    "image_figure",
    "weight_overlay_figure",
    "image_grid_figure",
    "image_mosaic",
    "contrast_stretch",
    "rank_stretch",
    "topographic_figure",
    "probability_curve_figure",
    "slda_curves_figure",
    "band_mass_figure",
    "comparison_figure",
    "lambda_path_figure",
    "gap_strength_figure",
    "dotplot_figure",
    "selection_outline",
    "figure_table",
]

# No named template: Streamlit draws every figure in its own theme, and building a figure with
# "plotly_white" deep-copied that template each time (12 ms of a 14 ms figure, in every rerun)
_LAYOUT = dict(margin=dict(l=50, r=20, t=50, b=45))
#: Axes whose tick labels are short numbers (or hidden) keep fixed margins: Streamlit's theme turns
#: Plotly's automargin on, which measures the labels after a first draw and draws the figure again
#: once the margins moved. Streamlit draws a changed figure anew at every slider step, so that
#: second pass is paid at every step: the λ path (two panels, as it was) drew in 71 ms with it and
#: 20-37 ms without in Chromium (benchmarks/bench_figures.py). Legends and colour bars still push
#: the margins they need.
_FIXED = dict(automargin=False)
#: The margins for such axes: room for a tick label of six characters and the axis title.
_FIXED_LAYOUT = dict(margin=dict(l=64, r=20, t=50, b=45))


def _figure(traces: Sequence[dict], layout: dict) -> go.Figure:
    """A figure of plain trace and layout dicts, taken as they are.

    Plotly validates every property a figure is given as it is built; for the AR faces' four
    Q-alpha figures that took 18-75 ms each, at every step of a slider, against 2-4 ms to take the
    same dicts as they are (``benchmarks/bench_figures.py``). So the builders write each property
    out by the name Plotly's schema gives it (``title=dict(text=...)``, not the ``title_text``
    shorthand that only validation expands), and the tests validate every builder's figure instead:
    Plotly's validation of it must leave it unchanged (``tests/core/test_plots.py``). A figure
    built here is an ordinary ``go.Figure``: ``update_layout`` and ``add_trace`` work on it as on
    any other. ``_validate`` is Plotly's own figure-level switch (plotly.py pull request 2403, not
    yet documented); ``requirements.txt`` pins the version it is tested with.
    """
    # no shapes or annotations is none at all, as validation has it
    layout = {key: value for key, value in layout.items() if not (key in ("shapes", "annotations") and not value)}
    return go.Figure(data=[_unset_left_out(trace) for trace in traces], layout=_unset_left_out(layout),
                     _validate=False)


def _unset_left_out(properties: dict) -> dict:
    """``properties`` without the ones set to None, at every depth (validation leaves them out:
    None is Plotly's "not set")."""
    return {key: _unset_left_out(value) if isinstance(value, dict) else value
            for key, value in properties.items() if value is not None}


@lru_cache(maxsize=None)
def _scale(name: str) -> tuple:
    """A named colour scale written out as Plotly's validation writes it (Plotly.js knows only
    some of Plotly's names, and not their reversed ``_r`` forms)."""
    return tuple(tuple(stop) for stop in get_colorscale(name))


def _colorscale(name: str) -> list:
    """:func:`_scale` as the list a figure carries."""
    return [list(stop) for stop in _scale(name)]


def _text(text: str) -> dict:
    """A title as Plotly's schema writes it."""
    return dict(text=text)


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
                          top_k: int | None = None, default: "DefaultK | None" = None) -> go.Figure:
    """The sorted alpha plot of [WS03] Fig. 1b / [SW04] Fig. 3b, with the sparsity-gap cut marked.

    The cut after ``n_selected`` is drawn only for a ``clear_gap``; otherwise the title says
    there is none, and ``default`` (:func:`core.selection.qalpha.default_k`) marks the count its
    rule chose, named on the plot. ``top_k`` shades the ranks of the features the page selects.

    Hovering a point shows the feature's name, its rank and weight. With ``log_y`` the weights
    are drawn on a log axis (non-positive weights are left out of that view and counted in the
    title, so nothing is hidden silently). Beyond ``EVERY_RANK_UP_TO + TAIL_RANKS`` weights the
    curve is drawn at every rank up to ``EVERY_RANK_UP_TO`` and at ``TAIL_RANKS`` evenly spaced
    ranks after it (the title says so): between two drawn ranks the sorted weights lie between
    the two drawn values.
    """
    alpha = np.asarray(alpha, dtype=np.float64).ravel()
    order = np.argsort(-alpha, kind="stable")
    values = alpha[order]
    names = np.asarray(feature_names if feature_names is not None
                       else [f"feature {j}" for j in range(alpha.size)], dtype=object)[order]
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
    if top_k is not None and 0 < top_k <= alpha.size:
        shapes.append(dict(type="rect", x0=0.5, x1=top_k + 0.5, xref="x", y0=0, y1=1, yref="y domain",
                           fillcolor="deepskyblue", opacity=0.12, line=dict(width=0), layer="below"))
        notes.append(_mark_note(0.5, f"top {top_k}", top=True))
    if n_selected is not None and 0 < n_selected < alpha.size:
        if clear_gap:
            shapes.append(_vertical_line(n_selected + 0.5, "dash", "crimson"))
            notes.append(_mark_note(n_selected + 0.5, f"sparsity gap: {n_selected}", top=True))
        else:
            title = f"{title} — no clear gap"
    if default is not None and not clear_gap and 0 < default.k < alpha.size:
        shapes.append(_vertical_line(default.k + 0.5, "dot", "darkorange"))
        notes.append(_mark_note(default.k + 0.5, f"{default.rule}: {default.k}", top=False))
    return _figure([curve], dict(title=_text(title), xaxis=dict(title=_text("rank"), **_FIXED),
                                 yaxis=dict(title=_text("alpha"), type="log" if log_y else "linear", **_FIXED),
                                 shapes=shapes, annotations=notes, **_FIXED_LAYOUT))


def _vertical_line(x: float, dash: str, colour: str) -> dict:
    """A vertical line across the plot at ``x`` (as ``add_vline`` draws it)."""
    return dict(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="y domain", line=dict(dash=dash, color=colour))


def _mark_note(x: float, text: str, top: bool) -> dict:
    """A label just right of ``x``, at the top or bottom of the plot."""
    return dict(x=x, xref="x", y=1 if top else 0, yref="y domain", text=text, showarrow=False, xanchor="left",
                yanchor="top" if top else "bottom")


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
    dots = dict(
        type="scatter", x=[names[j] for j in cols.ravel()], y=[classes[c] for c in rows.ravel()], mode="markers",
        marker=dict(size=4 + 18 * np.sqrt(size.ravel()), color=colour.ravel(), colorscale=_colorscale("RdBu_r"), cmin=-limit,
                    cmax=limit, colorbar=dict(title=dict(text=colour_title)), line=dict(width=0.5, color="grey")),
        customdata=np.stack([colour.ravel(), size.ravel()], axis=1),
        hovertemplate=(f"%{{x}} in %{{y}}<br>{colour_title} %{{customdata[0]:.3g}}<br>{size_title} "
                       "%{customdata[1]:.0%}<extra></extra>"))
    return _figure([dots], dict(title=_text(title), xaxis=dict(title=_text("feature"), tickangle=-45, type="category"),
                                yaxis=dict(title=_text("class"), type="category", autorange="reversed"),
                                height=max(260, 60 + 34 * len(classes)), **_LAYOUT))


def _as_image(values, image_shape=None) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if image_shape is not None:
        if values.size != int(np.prod(image_shape)):
            raise InputError(f"{values.size} values do not fill an image of shape {tuple(image_shape)}.")
        values = values.reshape(image_shape)
    if values.ndim != 2:
        raise InputError("An image must be 2-D (height x width) or come with its image_shape.")
    return values


def image_figure(image, image_shape=None, title: str = "", colorscale: str = "gray",
                 hover_names: Sequence[str] | None = None, zmin=None, zmax=None,
                 showscale: bool = False) -> go.Figure:
    """One image (or a per-feature vector with ``image_shape``) drawn upright, pixels square."""
    image = _as_image(image, image_shape)
    heat = _image_trace(image, colorscale, zmin, zmax, showscale)
    if hover_names is not None:
        heat.update(customdata=np.asarray(hover_names, dtype=object).reshape(image.shape),
                    hovertemplate="%{customdata}<br>value %{z:.4g}<extra></extra>")
    return _figure([heat], _image_layout(title))


def _image_trace(image, colorscale: str = "gray", zmin=None, zmax=None, showscale: bool = False) -> dict:
    """A 2-D image as a heat map trace, its row and column under the pointer."""
    return dict(type="heatmap", z=image, colorscale=_colorscale(colorscale), showscale=showscale, zmin=zmin, zmax=zmax,
                hovertemplate="row %{y}, column %{x}<br>value %{z:.4g}<extra></extra>")


def _image_layout(title: str) -> dict:
    """Axes for images: upright (row 0 on top), pixels square, no tick labels."""
    return dict(title=_text(title), yaxis=dict(autorange="reversed", scaleanchor="x", showticklabels=False, **_FIXED),
                xaxis=dict(showticklabels=False, constrain="domain", **_FIXED), **_LAYOUT)


def weight_overlay_figure(background, weights, image_shape=None, selected=None,
                          title: str = "Weights over the mean image", opacity: float = 0.6,
                          log_scale: bool = False, decades: float = 3.0) -> go.Figure:
    """A weight map (alpha per pixel) over a grey background image; selected pixels outlined.

    ``selected`` (indices into the flattened image) are marked with points, so the top-K
    selection can be seen at once. With ``log_scale`` the colours follow log10 of the weights
    over the ``decades`` below the largest (weights that span orders of magnitude otherwise show
    as a few dots on black); the hover still gives the weight itself. With ``opacity`` 0 only the
    background and the outline are drawn (an invisible layer still costs the browser a heat map
    at every step).
    """
    background = _as_image(background, image_shape)
    weights = _as_image(weights, background.shape)
    traces = [_image_trace(background)]
    shown, bar = weights, "alpha"
    if log_scale:
        shown, bar = _log_weights(weights, decades), "log10 alpha"
    marked = np.zeros(background.shape, dtype=bool)
    if selected is not None and len(selected):
        marked.flat[np.asarray(selected, dtype=np.intp)] = True
    hover = "row %{y}, column %{x}<br>alpha " + ("%{customdata:.4g}" if log_scale else "%{z:.4g}")
    # the hover says which pixels are selected; an empty string for the others keeps the figure
    # small (it is sent at every step of K)
    traces.append(None if opacity == 0 else dict(type="heatmap", z=shown, customdata=weights if log_scale else None, colorscale=_colorscale("Hot"),
                       reversescale=True, opacity=opacity, showscale=True, colorbar=dict(title=_text(bar)), name="alpha",
                       text=np.where(marked, "selected", "") if selected is not None else None,
                       hovertemplate=hover + ("<br>%{text}" if selected is not None else "") + "<extra></extra>"))
    if marked.any():
        # the selection's outline as one path (a marker per pixel made the page redraw hundreds
        # of elements at every step of K)
        x, y = selection_outline(marked)
        traces.append(dict(type="scatter", x=x, y=y, mode="lines", name="selected",
                           line=dict(color="deepskyblue", width=1.5), hoverinfo="skip"))
    return _figure([trace for trace in traces if trace is not None], _image_layout(title))


def _unit(values: np.ndarray, low: float | None = None, high: float | None = None) -> np.ndarray:
    """``values`` placed in [0, 1] between ``low`` and ``high`` (default: their own smallest and
    largest; beyond them they take the ends), as a heat map places them on its colour scale."""
    low = float(values.min()) if low is None else low
    high = float(values.max()) if high is None else high
    return np.zeros_like(values) if high <= low else np.clip((values - low) / (high - low), 0.0, 1.0)


def _log_weights(weights: np.ndarray, decades: float) -> np.ndarray:
    """log10 of the weights over the ``decades`` below the largest (smaller ones, and those not
    positive, at the bottom of that range)."""
    top = max(float(weights.max()), np.finfo(np.float64).tiny)
    return np.log10(np.clip(weights, top * 10.0 ** -decades, None))


#: The weights map as a picture (:func:`weight_overlay_picture`) is about this many pixels high.
OVERLAY_PICTURE_HEIGHT = 420


def _whole_pixel_factor(height: int, image_height: int) -> int:
    """How many times to enlarge an image ``height`` pixels high (by whole pixels, 1-16) so that
    it is about ``image_height`` high as a picture."""
    return int(np.clip(round(image_height / height), 1, 16))


def _enlarged(image, factor: int) -> np.ndarray:
    """``image`` with every pixel a ``factor`` x ``factor`` square (its first two axes)."""
    return np.repeat(np.repeat(image, factor, axis=0), factor, axis=1)


def _colour_scale_rgb(name: str, positions, reverse: bool = False) -> np.ndarray:
    """The RGB colours (0-255, float) of a named Plotly colour scale at ``positions`` in [0, 1],
    interpolated between its stops as Plotly.js does."""
    from plotly.colors import unlabel_rgb

    stops = _scale(name)
    where = np.array([position for position, _ in stops])
    colours = np.array([unlabel_rgb(colour) for _, colour in stops], dtype=np.float64)
    positions = np.clip(np.asarray(positions, dtype=np.float64), 0.0, 1.0)
    if reverse:
        positions = 1.0 - positions
    return np.stack([np.interp(positions, where, colours[:, channel]) for channel in range(3)], axis=-1)


def weight_overlay_picture(background, weights, image_shape=None, selected=None, opacity: float = 0.6,
                           image_height: int = OVERLAY_PICTURE_HEIGHT, log_scale: bool = False,
                           decades: float = 3.0) -> np.ndarray:
    """:func:`weight_overlay_figure` as one RGB picture (``uint8``, height x width x 3) for
    ``st.image``: the background in grey from its smallest (black) to its largest value (white),
    the weights over it in the figure's colours (Plotly's "Hot" reversed, white at the smallest
    weight and black at the largest, at ``opacity``), and the ``selected`` pixels outlined in
    deep sky blue along their region's border. Every pixel is enlarged to a square of whole
    pixels so that the picture is about ``image_height`` high. ``log_scale`` and ``decades`` colour
    the weights as the figure's do (log10 of the weights over the ``decades`` below the largest).

    The browser shows a picture at once; a heat map is a chart that Plotly draws anew (twice) at
    every step of a slider that changes it: on the Q-alpha page the figure cost a λ step 0.09 s
    (``docs/benchmarks.md``). No hover: the pages offer the figure beside it on request.
    """
    background = _as_image(background, image_shape)
    weights = _as_image(weights, background.shape)
    if not 0.0 <= opacity <= 1.0:
        raise InputError(f"opacity must lie in [0, 1]; got {opacity}.")

    grey = _unit(background)[..., None] * 255.0
    colour = _colour_scale_rgb("Hot", _unit(_log_weights(weights, decades) if log_scale else weights), reverse=True)
    enlarge = _whole_pixel_factor(background.shape[0], image_height)
    picture = _enlarged(np.round((1.0 - opacity) * grey + opacity * colour).astype(np.uint8), enlarge)
    if selected is not None and len(selected):
        from scipy.ndimage import binary_erosion

        marked = np.zeros(background.shape, dtype=bool)
        marked.flat[np.asarray(selected, dtype=np.intp)] = True
        marked = _enlarged(marked, enlarge)
        # the border: the marked pixels that an erosion as deep as a third of an enlarged pixel
        # removes (the picture's edge counts as unmarked)
        border = marked & ~binary_erosion(marked, iterations=max(1, enlarge // 3), border_value=0)
        picture[border] = (0, 191, 255)
    return picture


#: A map drawn by :func:`heatmap_picture` is about this many pixels high.
MAP_PICTURE_HEIGHT = 240


def heatmap_picture(values, image_shape=None, colorscale: str = "Hot", zmin: float | None = None,
                    zmax: float | None = None, image_height: int = MAP_PICTURE_HEIGHT) -> np.ndarray:
    """:func:`image_figure`'s heat map as one RGB picture (``uint8``, height x width x 3) for
    ``st.image``: each pixel in the colour of its value on the named Plotly colour scale between
    ``zmin`` and ``zmax`` (by default the values' own smallest and largest; values beyond them take
    the end colours, as in the figure), enlarged to a square of whole pixels so that the picture is
    about ``image_height`` high.

    For maps that change at every step of a slider (:func:`weight_overlay_picture` says why). No
    hover and no colour bar: a page names the end colours and values in the picture's caption.
    """
    image = _as_image(values, image_shape)
    if not np.isfinite(image).all():
        raise InputError("heatmap_picture needs finite values (it has no colour for NaN or infinity).")
    low = float(image.min()) if zmin is None else float(zmin)
    high = float(image.max()) if zmax is None else float(zmax)
    if not (np.isfinite(low) and np.isfinite(high)) or high < low:
        raise InputError(f"zmin and zmax must be finite with zmin <= zmax; got {low} and {high}.")
    colour = _colour_scale_rgb(colorscale, _unit(image, low, high))
    return _enlarged(np.round(colour).astype(np.uint8), _whole_pixel_factor(image.shape[0], image_height))


def selection_outline(mask) -> tuple[np.ndarray, np.ndarray]:
    """The boundary of the ``True`` cells of a 2-D ``mask`` as line segments in the heat map's
    coordinates (cell ``(r, c)`` spans ``c ± 0.5``, ``r ± 0.5``): ``(x, y)`` with a NaN after each
    segment, for one Scatter trace. A side is drawn where a marked cell meets an unmarked one or
    the border."""
    mask = np.asarray(mask, dtype=bool)
    padded = np.pad(mask, 1)
    inner = padded[1:-1, 1:-1]
    segments = []
    # (neighbour offset, the side's two ends relative to the cell's centre)
    for (dr, dc), ends in (((-1, 0), ((-0.5, -0.5), (-0.5, 0.5))), ((1, 0), ((0.5, -0.5), (0.5, 0.5))),
                           ((0, -1), ((-0.5, -0.5), (0.5, -0.5))), ((0, 1), ((-0.5, 0.5), (0.5, 0.5)))):
        neighbour = padded[1 + dr:padded.shape[0] - 1 + dr, 1 + dc:padded.shape[1] - 1 + dc]
        rows, cols = np.nonzero(inner & ~neighbour)
        (r0, c0), (r1, c1) = ends
        segments.append(np.column_stack([cols + c0, rows + r0, cols + c1, rows + r1]))
    ends = np.concatenate(segments) if segments else np.empty((0, 4))
    x = np.column_stack([ends[:, 0], ends[:, 2], np.full(len(ends), np.nan)]).ravel()
    y = np.column_stack([ends[:, 1], ends[:, 3], np.full(len(ends), np.nan)]).ravel()
    return x, y


def contrast_stretch(images, low: float = 1.0, high: float = 99.0, shared: bool = False) -> np.ndarray:
    """Images (the last two axes) mapped to [0, 1] between their ``low`` and ``high``
    percentiles and clipped, so that a few extreme pixels do not leave the rest one grey.

    Each image is stretched by its own percentiles, or with ``shared`` all of them by the
    percentiles of all their pixels together: one grey scale, so that images in a row can be
    compared (which is brighter, which holds more contrast)."""
    images = np.asarray(images, dtype=np.float64)
    if not 0.0 <= low < high <= 100.0:
        raise InputError(f"The percentiles must satisfy 0 <= low < high <= 100; got {low}, {high}.")
    if images.ndim < 2:
        raise InputError(f"contrast_stretch needs images (at least two axes); got shape {images.shape}.")
    flat = images.reshape(-1) if shared else images.reshape(images.shape[:-2] + (-1,))
    lo = np.asarray(np.percentile(flat, low, axis=-1))[..., None, None]
    hi = np.asarray(np.percentile(flat, high, axis=-1))[..., None, None]
    span = hi - lo
    stretched = np.where(span > 0, (images - lo) / np.where(span > 0, span, 1.0), 0.5)
    return np.clip(stretched, 0.0, 1.0)


def rank_stretch(images) -> np.ndarray:
    """Histogram equalisation over all the images together: each pixel's grey, in [0, 1], is its
    rank among all their pixels (ties share their mean rank), so every level of structure gets
    the same share of the grey scale however its values are spread. For pictures whose values
    span orders of magnitude (images rebuilt from alpha-weighted coefficients, where a few coarse
    blocks carry most of the brightness), where a linear stretch shows those blocks and nothing else.
    Order is kept; differences of value are not."""
    from scipy.stats import rankdata

    images = np.asarray(images, dtype=np.float64)
    if images.ndim < 2 or images.size == 0:
        raise InputError(f"rank_stretch needs images (at least two axes); got shape {images.shape}.")
    if not np.all(np.isfinite(images)):
        raise InputError("rank_stretch needs finite pixel values.")
    if images.size == 1:
        return np.full(images.shape, 0.5)
    ranks = rankdata(images.reshape(-1), method="average")
    return ((ranks - 1.0) / (images.size - 1.0)).reshape(images.shape)


def _tiles(images, n_cols, titled):
    """Where each of ``images`` (count x height x width) goes in a mosaic: ``(shape, n_rows,
    positions, row_gap)``, one ``(top, left)`` per image, a gutter between images and, with
    ``titled``, room for titles between rows (``row_gap`` high)."""
    count, height, width = images.shape
    n_cols = max(1, min(n_cols, count))
    n_rows = int(np.ceil(count / n_cols))
    gap = max(1, round(0.06 * width))
    row_gap = max(gap, round(0.25 * height)) if titled else gap
    positions = [(row * (height + row_gap), col * (width + gap))
                 for row, col in (divmod(index, n_cols) for index in range(count))]
    return (n_rows * (height + row_gap) - row_gap, n_cols * (width + gap) - gap), n_rows, positions, row_gap


def _check_images(images, name):
    images = np.asarray(images, dtype=np.float64)
    if images.ndim != 3 or images.shape[0] == 0:
        raise InputError(f"{name} needs a stack of images (count x height x width).")
    return images


def image_grid_figure(images, titles: Sequence[str] | None = None, n_cols: int = 8,
                      title: str = "", zmin=None, zmax=None, hover_values=None) -> go.Figure:
    """Several images side by side, upright, pixels square: one heat map of the images tiled with
    a gutter between them (one trace however many images: a grid of separate heat maps took
    make_subplots 0.1-0.5 s to build and the browser as long to draw, at every rerun).

    With ``zmin`` and ``zmax`` every image is drawn on that one grey scale; without, each is
    stretched between its own minimum and maximum (as separate heat maps would be), and the hover
    gives the values themselves. ``hover_values`` (same shape as ``images``): the values the hover
    gives instead, for images already mapped to a grey scale (:func:`contrast_stretch`,
    :func:`rank_stretch`). ``titles`` are written above the images. Pictures redrawn at every
    slider step and needing no hover are lighter as :func:`image_mosaic`.
    """
    images = _check_images(images, "image_grid_figure")
    raw = images if hover_values is None else np.asarray(hover_values, dtype=np.float64)
    if raw.shape != images.shape:
        raise InputError(f"hover_values must have the images' shape {images.shape}; got {raw.shape}.")
    count, height, width = images.shape
    shape, n_rows, positions, _ = _tiles(images, n_cols, titles is not None)
    shared_scale = zmin is not None and zmax is not None
    # float32: the greys and the hover's three digits need no more, and the figure is sent at half the
    # size (the Haar page's rows of faces: 3.2 MB of base64 in float64 at every λ step)
    mosaic = np.full(shape, np.nan, dtype=np.float32)
    values = mosaic.copy()
    annotations = []
    for index, (image, value, (top, left)) in enumerate(zip(images, raw, positions)):
        shown = image
        if not shared_scale:
            low, high = np.nanmin(image), np.nanmax(image)
            shown = (image - low) / (high - low) if high > low else np.full_like(image, 0.5)
        mosaic[top:top + height, left:left + width] = shown
        values[top:top + height, left:left + width] = value
        if titles is not None and index < len(titles) and str(titles[index]):  # each annotation costs a draw
            annotations.append(dict(x=left + (width - 1) / 2, y=top - 0.5, text=str(titles[index]), showarrow=False,
                                    xref="x", yref="y", yanchor="bottom", font=dict(size=11)))
    heat = dict(
        type="heatmap", z=mosaic, customdata=values if hover_values is not None or not shared_scale else None,
        colorscale=_colorscale("gray"), showscale=False, hoverongaps=False, zmin=zmin if shared_scale else 0.0,
        zmax=zmax if shared_scale else 1.0,
        hovertemplate=("value %{z:.3g}" if shared_scale and hover_values is None else "value %{customdata:.3g}")
        + "<extra></extra>")
    layout = _image_layout(title)
    for axis in ("xaxis", "yaxis"):
        layout[axis].update(showgrid=False, zeroline=False)
    return _figure([heat], dict(layout, annotations=annotations, height=max(220, 150 * n_rows + 60)))


#: :func:`image_mosaic` enlarges its images (by whole pixels) to about this height, as
#: :func:`image_grid_figure` draws them in a row of its figure.
MOSAIC_IMAGE_HEIGHT = 140


def image_mosaic(images, titles: Sequence[str] | None = None, n_cols: int = 8, zmin: float = 0.0,
                 zmax: float = 1.0, image_height: int = MOSAIC_IMAGE_HEIGHT) -> np.ndarray:
    """The pictures of :func:`image_grid_figure` as one grey image (``uint8``, height x width) for
    ``st.image``: the images tiled on white, grey between ``zmin`` (black) and ``zmax`` (white),
    ``titles`` written above them, every pixel enlarged to a square of whole pixels so that each
    image is about ``image_height`` pixels high.

    The browser shows it as a picture. A heat map is a chart that Plotly draws anew (twice) at each
    slider step that changes it: the Haar page's rows of faces took 0.3 s of the browser's time
    per λ step that way (``docs/benchmarks.md``). No hover, no zoom.
    """
    from PIL import Image, ImageDraw, ImageFont

    images = _check_images(images, "image_mosaic")
    _, height, width_of_one = images.shape
    shape, _, positions, row_gap = _tiles(images, n_cols, titles is not None)
    band = row_gap if titles is not None else 0  # the first row's titles above it
    positions = [(top + band, left) for top, left in positions]
    enlarge = _whole_pixel_factor(height, image_height)
    grey = np.clip((images - zmin) / max(zmax - zmin, np.finfo(float).tiny), 0.0, 1.0)
    grey = np.round(np.nan_to_num(grey, nan=1.0) * 255).astype(np.uint8)
    canvas = np.full((shape[0] + band, shape[1]), 255, dtype=np.uint8)
    for image, (top, left) in zip(grey, positions):
        canvas[top:top + height, left:left + width_of_one] = image
    canvas = _enlarged(canvas, enlarge)
    picture = Image.fromarray(canvas)
    if titles is not None:
        draw = ImageDraw.Draw(picture)
        font = ImageFont.load_default(size=max(10, min(16, enlarge * round(0.2 * height))))
        for text, (top, left) in zip(titles, positions):
            if str(text):  # centred above the image, on its baseline, in Streamlit's text colour (as grey)
                draw.text(((left + width_of_one / 2) * enlarge, top * enlarge - 2), str(text), fill=51, font=font,
                          anchor="md")
    return np.asarray(picture)


def topographic_figure(coordinates, alphas, feature_names: Sequence[str] | None = None,
                       rounds=(0, 1), top=None, scale: float | None = None,
                       title: str = "Topographical map of the features") -> go.Figure:
    """The topographical model of [SW04] Fig. 2b.

    Each feature is an ellipse centred at its coordinates of two rounds (the direction angle of
    each round) with semi-axes proportional to its alpha in those rounds. ``top`` (indices) limits
    the drawing to those features: a few dozen stay readable where a thousand overlapping
    ellipses do not. Ellipses are coloured by the round in which the feature weighs more (the
    legend), and the centres by the difference of the two rounds' alphas (the colour bar).
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
    difference = a - b
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
        marker=dict(size=7, color=difference, colorscale=_colorscale("RdBu"), cmin=-limit, cmax=limit,
                    line=dict(width=0.5, color="black"),
                    colorbar=dict(title=_text(f"alpha in round {first + 1}<br>minus round {second + 1}"), x=1.02)),
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


#: A label's box in the plot's own proportions (a 9-pixel font on a plot area about 600 x 300
#: pixels, the map in an 800 px window): the width of one character and the height of a line,
#: as fractions of the axes' ranges.
LABEL_CHAR_WIDTH, LABEL_HEIGHT = 0.0085, 0.045


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


def probability_curve_figure(n_values, probability,
                             title: str = "P(leading eigenvector of G is positive)") -> go.Figure:
    """[WS03] Fig. 1a: the probability of a positive leading eigenvector against the matrix size."""
    curve = dict(type="scatter", x=np.asarray(n_values), y=np.asarray(probability), mode="lines+markers",
                 name="simulation", hovertemplate="n = %{x}<br>P = %{y:.3f}<extra></extra>")
    return _figure([curve], dict(title=_text(title), xaxis=dict(title=_text("n (size of G)")),
                                 yaxis=dict(title=_text("probability"), range=[0, 1.05]), **_LAYOUT))


def slda_curves_figure(forward, backward, fisher, bound=None, exact=None, log_y: bool = False,
                       title: str = "Sparse LDA: class separability against cardinality") -> go.Figure:
    """[MWA07] Fig. 7/12: forward, backward, Fisher-thresholding (and exact, bound) curves against k."""
    traces = []
    k = np.arange(1, len(forward) + 1)
    for name, values, style in (("backward", backward, dict(color="crimson")),
                                ("forward", forward, dict(color="royalblue")),
                                ("Fisher thresholding", fisher, dict(color="gray", dash="dot")),
                                ("exact (branch and bound)", exact, dict(color="black", dash="dash")),
                                ("Eq. 5 bound", bound, dict(color="seagreen", dash="dashdot"))):
        if values is None:
            continue
        values = np.asarray(values, dtype=np.float64)
        if np.all(np.isnan(values)):
            continue
        traces.append(dict(
            type="scatter", x=k[: values.size], y=values, mode="lines", name=name, line=style,
            # the axis in words, its formula (the two-class objective of [MWA07] on the subset s) where the reader points
            hovertemplate="k = %{x}<br>separability aₛᵀ Bₛₛ⁻¹ aₛ = %{y:.5g}<br>(a: difference of the class means, "
                          "B: within-class scatter)<extra>" + name + "</extra>"))
    return _figure(traces, dict(title=_text(title), xaxis=dict(title=_text("k (number of features)")),
                                yaxis=dict(title=_text("class separability of the best k-feature direction"),
                                           type="log" if log_y else "linear"),
                                legend=dict(orientation="h", y=-0.2), **_LAYOUT))


def band_mass_figure(mass: dict, title: str = "Share of |alpha| per wavelet band") -> go.Figure:
    """Bar chart of the weight mass per Haar band (approximation, then details by level)."""
    bars = dict(type="bar", x=list(mass), y=list(mass.values()), hovertemplate="%{x}: %{y:.1%}<extra></extra>")
    return _figure([bars], dict(title=_text(title), yaxis=dict(title=_text("share"), tickformat=".0%"), **_LAYOUT))


def comparison_figure(curves: dict, metric: str, title: str | None = None, extracted: dict | None = None) -> go.Figure:
    """One line per method: ``metric`` against the number of selected features (log x axis),
    with error bars where the curves carry a spread (``"<metric>_sd"``, e.g. over
    cross-validation folds); ``extracted`` (named as they are to be shown) adds feature-extraction
    methods against their number of dimensions, dashed (those without ``metric`` are left out)."""
    traces = []
    # Q-alpha's lines last and thicker: where methods agree they would otherwise hide under the others
    for method in sorted(curves, key=lambda name: name.startswith("Q-alpha")):
        values = curves[method]
        spread = values.get(f"{metric}_sd")
        traces.append(dict(type="scatter", x=values["size"], y=values[metric], mode="lines+markers", name=method,
                           line=dict(width=3 if method.startswith("Q-alpha") else 1.5),
                           error_y=dict(type="data", array=spread, thickness=1) if spread is not None else None,
                           hovertemplate="%{x} features: %{y:.3f}<extra>" + method + "</extra>"))
    extracted = {method: values for method, values in (extracted or {}).items() if metric in values}
    for method, values in extracted.items():
        traces.append(dict(type="scatter", x=values["size"], y=values[metric], mode="lines+markers", name=method,
                           line=dict(width=1.5, dash="dash"), marker=dict(symbol="diamond-open"),
                           hovertemplate="%{x} dimensions: %{y:.3f}<extra>" + method + "</extra>"))
    x_title = "number of features" + (" (selected) or dimensions (extracted, dashed)" if extracted else "")
    # the ticks are the sizes measured, written out: Plotly's own log ticks read "10 2 5 100 2 5"
    sizes = sorted({int(size) for values in [*curves.values(), *extracted.values()] for size in values["size"]})
    ticks = dict(tickmode="array", tickvals=sizes, ticktext=[f"{size:,}" for size in sizes]) if len(sizes) <= 16 else {}
    return _figure(traces, dict(title=_text(title or metric), xaxis=dict(title=_text(x_title), type="log", **ticks),
                                yaxis=dict(title=_text(metric)), legend=dict(orientation="h", y=-0.25), **_LAYOUT))


# ---------------------------------------------------------------------------- paper reproductions
def curves_figure(series: dict, x_title: str, y_title: str, title: str = "", log_x: bool = False,
                  log_y: bool = False, y_range=None) -> go.Figure:
    """One line per entry of ``series`` (``name -> (x, y)``)."""
    traces = [dict(type="scatter", x=np.asarray(x), y=np.asarray(y), mode="lines+markers", name=str(name),
                   hovertemplate="%{x}: %{y:.4g}<extra>" + str(name) + "</extra>") for name, (x, y) in series.items()]
    return _figure(traces, dict(title=_text(title), xaxis=dict(title=_text(x_title), type="log" if log_x else "linear"),
                                yaxis=dict(title=_text(y_title), type="log" if log_y else "linear",
                                           range=None if y_range is None else list(y_range)),
                                legend=dict(orientation="h", y=-0.25), **_LAYOUT))


def bar_figure(labels, values, errors=None, title: str = "", y_title: str = "", paper: dict | None = None) -> go.Figure:
    """Bars with optional error bars (one standard deviation or standard error, as labelled), and
    the paper's values (``label -> value``) as markers beside ours where the paper gives one."""
    labels = [str(v) for v in labels]
    traces = [dict(type="bar", x=labels, y=np.asarray(values, dtype=np.float64), name="this run",
                   error_y=None if errors is None else dict(type="data", array=np.asarray(errors, dtype=np.float64)),
                   hovertemplate="%{x}: %{y:.4f}<extra>this run</extra>")]
    reported = [(label, float(paper[label])) for label in labels if paper and label in paper]
    if reported:
        traces.append(dict(type="scatter", x=[label for label, _ in reported], y=[value for _, value in reported],
                           mode="markers", name="the paper", marker=dict(symbol="diamond", size=12, color="crimson"),
                           hovertemplate="%{x}: %{y:.4f}<extra>the paper</extra>"))
    return _figure(traces, dict(title=_text(title), yaxis=dict(title=_text(y_title)),
                                legend=dict(orientation="h", y=-0.2) if reported else None, **_LAYOUT))


def heatmap_table_figure(row_labels, column_labels, values, errors=None, title: str = "",
                         value_title: str = "") -> go.Figure:
    """A table of numbers as a heatmap: rows x columns, each cell written as ``mean ± error``
    (``errors`` the same shape, optional); one colour scale spans all the values. NaN cells
    (no value) stay empty."""
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
    label_lines = max(tick.count("<br>") + 1 for tick in column_ticks)
    row_height = max(28, 14 * max(tick.count("<br>") + 1 for tick in row_ticks))  # room for a row's name
    heat = dict(type="heatmap", z=values, x=columns, y=rows,
                text=text.tolist(), texttemplate="%{text}", colorscale=_colorscale("Viridis"), colorbar=dict(title=_text(value_title)),
                hovertemplate="%{y}, %{x}: %{text}<extra></extra>")
    return _figure([heat], dict(title=_text(title),
                                xaxis=dict(tickmode="array", tickvals=columns, ticktext=column_ticks, tickangle=0),
                                yaxis=dict(autorange="reversed", tickmode="array", tickvals=rows, ticktext=row_ticks),
                                height=max(300, row_height * len(rows) + 16 * label_lines + 120), **_LAYOUT))


def _wrapped(labels: list[str], width: int) -> list[str]:
    """Axis labels broken into lines of about ``width`` characters (Plotly's ``<br>``)."""
    return ["<br>".join(textwrap.wrap(label, width, break_on_hyphens=False)) or label for label in labels]


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
