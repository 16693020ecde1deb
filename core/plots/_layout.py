"""What every figure builder shares, private: the layout without a named template, fixed margins
where tick labels are short, colour scales, and the marks (vertical lines, notes) several figures draw.
"""

from __future__ import annotations

from typing import Sequence

import textwrap
from functools import lru_cache

import plotly.graph_objects as go
from plotly.colors import get_colorscale


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


def _vertical_line(x: float, dash: str, colour: str) -> dict:
    """A vertical line across the plot at ``x`` (as ``add_vline`` draws it)."""
    return dict(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="y domain", line=dict(dash=dash, color=colour))


def _mark_note(x: float, text: str, top: bool) -> dict:
    """A label just right of ``x``, at the top or bottom of the plot."""
    return dict(x=x, xref="x", y=1 if top else 0, yref="y domain", text=text, showarrow=False, xanchor="left",
                yanchor="top" if top else "bottom")


def _wrapped(labels: list[str], width: int) -> list[str]:
    """Axis labels broken into lines of about ``width`` characters (Plotly's ``<br>``)."""
    return ["<br>".join(textwrap.wrap(label, width, break_on_hyphens=False)) or label for label in labels]
