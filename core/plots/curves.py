"""Curves and bars: the probability of a positive eigenvector ([WS03] Fig. 1a), sparse LDA's
objective per cardinality ([MWA07] Fig. 2), band mass, the comparison of methods by size, and
generic curves and bars.

References
----------
.. [WS03] L. Wolf and A. Shashua, ICCV 2003.
.. [MWA07] B. Moghaddam, Y. Weiss and S. Avidan, ICCV 2007.
"""

from __future__ import annotations


import numpy as np
import plotly.graph_objects as go

from ._layout import _LAYOUT, _figure, _text

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


#: Line colours far apart in hue and lightness, safe for the common colour-vision deficiencies
#: (Okabe & Ito 2008), then Plotly's D3 set: Plotly's default cycle put red beside pink and blue
#: beside light blue.
DISTINCT_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
                    "#8c564b", "#7f7f7f", "#bcbd22", "#17becf")


def comparison_figure(curves: dict, metric: str, title: str | None = None, extracted: dict | None = None,
                      y_title: str | None = None, reference: float | None = None) -> go.Figure:
    """One line per method: ``metric`` against the number of selected features (log x axis),
    with error bars where the curves carry a spread (``"<metric>_sd"``, e.g. over
    cross-validation folds); ``extracted`` (named as they are to be shown) adds feature-extraction
    methods against their number of dimensions, dashed (those without ``metric`` are left out).
    Each line its own colour of :data:`DISTINCT_COLOURS`; ``y_title`` names the measure in words
    (default: ``metric``). ``reference``: the measure on all the features, drawn as a grey
    horizontal line named "all features", the level a selection is read against."""
    traces = []
    colours = iter(DISTINCT_COLOURS * 4)
    # Q-alpha's lines last and thicker: where methods agree they would otherwise hide under the others
    for method in sorted(curves, key=lambda name: name.startswith("Q-alpha")):
        values = curves[method]
        spread = values.get(f"{metric}_sd")
        traces.append(dict(type="scatter", x=values["size"], y=values[metric], mode="lines+markers", name=method,
                           line=dict(width=3 if method.startswith("Q-alpha") else 1.5, color=next(colours)),
                           error_y=dict(type="data", array=spread, thickness=1) if spread is not None else None,
                           hovertemplate="%{x} features: %{y:.3f}<extra>" + method + "</extra>"))
    extracted = {method: values for method, values in (extracted or {}).items() if metric in values}
    for method, values in extracted.items():
        traces.append(dict(type="scatter", x=values["size"], y=values[metric], mode="lines+markers", name=method,
                           line=dict(width=1.5, dash="dash", color=next(colours)), marker=dict(symbol="diamond-open"),
                           hovertemplate="%{x} dimensions: %{y:.3f}<extra>" + method + "</extra>"))
    x_title = "number of features" + (" (selected) or dimensions (extracted, dashed)" if extracted else "")
    # the ticks written out: Plotly's own log ticks read "10 2 5 100 2 5", and with its padding a
    # stray "9" (0.9) and "2" (20) on sizes 1-19. Every size measured where they are few, else
    # 1, 2, 5, 10, ... and the largest
    sizes = sorted({int(size) for values in [*curves.values(), *extracted.values()] for size in values["size"]})
    if len(sizes) > 16:
        decades = [m * 10 ** e for e in range(int(np.log10(sizes[-1])) + 1) for m in (1, 2, 5)]
        sizes = sorted({v for v in decades if sizes[0] <= v < sizes[-1]} | {sizes[-1]})
    ticks = dict(tickmode="array", tickvals=sizes, ticktext=[f"{size:,}" for size in sizes]) if sizes else {}
    layout = dict(title=_text(title or metric), xaxis=dict(title=_text(x_title), type="log", **ticks),
                  yaxis=dict(title=_text(y_title or metric)), legend=dict(orientation="h", y=-0.25), **_LAYOUT)
    if reference is not None and np.isfinite(reference):
        layout["shapes"] = [dict(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=reference, y1=reference,
                                 line=dict(color="grey", width=1.5, dash="dot"))]
        layout["annotations"] = [dict(xref="x domain", x=0.01, yref="y", y=reference, text=f"all features: {reference:.3f}",
                                      showarrow=False, xanchor="left", yanchor="bottom", font=dict(color="grey"))]
    return _figure(traces, layout)


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
