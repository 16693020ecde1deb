"""Small widgets the pages share: errors, the sparsity-gap metric, wrapping rows, the weights on the image,
figures and pictures with their downloads."""

from __future__ import annotations

from functools import partial

import numpy as np
import streamlit as st

from core import Dataset, InputError

from . import downloads, first_paint

# A dashed vertical line at data x over a Plotly chart with a log x axis, drawn by the browser:
# a chart whose figure changes is a new element that Plotly draws from scratch (Streamlit derives
# the chart's id from its spec), so a slider that only moves a marked value would redraw the
# whole figure at every step (66 ms of a λ step on the path, docs/benchmarks.md). The line sits in
# Plotly's own container at the plot area's place (the drag rectangle), at the axis's range of
# the moment, and follows a zoom, a resize or a new drawing of the figure.
_LOG_X_MARKER = st.components.v2.component(
    "log_x_marker",
    js="""export default function ({ data, parentElement }) {
  // one marker per mounted component: a later call with new data moves it (whether or not
  // Streamlit ran the cleanup in between)
  const marker = parentElement.__logXMarker || (parentElement.__logXMarker = follow(parentElement));
  marker.chart = data.chart;
  marker.x = data.x;
  marker.schedule();
  return marker.stop;
}

function follow(host) {
  const marker = { chart: null, x: null };
  let plot = null, line = null, frame = 0;
  const find = () => document.querySelector(`.st-key-${CSS.escape(marker.chart)} .js-plotly-plot`);
  const events = ['plotly_afterplot', 'plotly_relayout'];  // Plotly drew the figure, or zoomed it
  const unwatch = () => { if (plot && plot.removeListener) events.forEach((e) => plot.removeListener(e, marker.schedule)); };
  const place = () => {
    frame = 0;
    const found = find();
    if (found !== plot) {
      unwatch();
      plot = found;
      if (plot && plot.on) events.forEach((e) => plot.on(e, marker.schedule));
    }
    const box = plot && plot.querySelector('.svg-container'), area = plot && plot.querySelector('.nsewdrag');
    const range = plot && plot._fullLayout && plot._fullLayout.xaxis && plot._fullLayout.xaxis.range;
    if (!box || !area || !range || !(marker.x > 0)) { if (line) line.style.display = 'none'; return; }
    if (!line || line.parentNode !== box) {
      if (line) line.remove();
      line = document.createElement('div');
      line.className = 'log-x-marker';
      line.style.cssText = 'position:absolute;width:0;border-left:2px dashed grey;pointer-events:none;z-index:1';
      box.appendChild(line);
    }
    const outer = box.getBoundingClientRect(), inner = area.getBoundingClientRect();
    const share = (Math.log10(marker.x) - range[0]) / (range[1] - range[0]);
    line.style.display = share >= 0 && share <= 1 ? 'block' : 'none';
    line.style.left = `${inner.left - outer.left + share * inner.width - 1}px`;
    line.style.top = `${inner.top - outer.top}px`;
    line.style.height = `${inner.height}px`;
  };
  marker.schedule = () => { if (!frame) frame = requestAnimationFrame(place); };
  // a new chart element (the path computed again) is looked for at each change of the page, which
  // costs a query; the line is placed again only then, once Plotly has drawn (its events: a
  // drawing, a zoom) and when the window is resized, since placing it reads the layout
  const watcher = new MutationObserver(() => { if (find() !== plot) marker.schedule(); });
  watcher.observe(document.body, { childList: true, subtree: true });
  window.addEventListener('resize', marker.schedule);
  marker.stop = () => {
    watcher.disconnect();
    window.removeEventListener('resize', marker.schedule);
    if (frame) cancelAnimationFrame(frame);
    unwatch();
    if (line) line.remove();
    delete host.__logXMarker;
  };
  return marker;
}
""")


def show_error(error: InputError) -> None:
    """Show a library error as the message it is (never a traceback)."""
    st.error(str(error), icon=":material/error:")


def gap_metric(cell, gap) -> None:
    """The sparsity gap as a metric: its count where it is clear, "none" where the sorted weights
    fall smoothly, with its strength in the help (:class:`core.selection.qalpha.SparsityGap`)."""
    cell.metric("Sparsity gap", f"{gap.n_selected:,}" if gap.clear else "none", width="content",
                help=f"The sorted weights split best after rank {gap.n_selected:,}; the split explains "
                     f"{gap.separability:.0%} of their variance (a clear gap: at least {gap.threshold:.0%}), "
                     f"and the weights above it are {gap.ratio:.3g}x those below on average.")


def line():
    """A line of elements side by side that wraps onto more lines in a narrow window (where
    columns would cut metrics and buttons short). Elements put in it directly, each at
    ``width="content"``, are fewer elements than in cells of their own (:func:`row`): on the
    Q-alpha page, two lines of four metrics redrawn at every λ and K step, sixteen elements become
    ten (the steps' time did not change measurably: docs/benchmarks.md)."""
    return st.container(horizontal=True, gap="large")


def row(n: int, width="content") -> list:
    """``n`` cells of :func:`line` (each ``width`` wide), for elements without a width of their own."""
    cells = line()
    return [cells.container(width=width) for _ in range(n)]


def when_open(label: str, key: str, popover: bool = False, where=None, **options):
    """An expander (or, with ``popover``, a popover button) whose content is drawn only while it
    is open (a click on it reruns the page, or the fragment it is in): the container to draw into
    while open, else None. For what a slider step would otherwise redraw though few look at it (a
    figure beside its picture, a convergence history, download buttons, code). ``where``: the
    container it goes in (default: the page); ``options`` go to ``st.popover``."""
    where = where or st
    section = (where.popover(label, key=key, on_change="rerun", **options) if popover
               else where.expander(label, key=key, on_change="rerun"))
    return section if section.open else None


def pixel_view(data: Dataset, alpha, top, key: str) -> None:
    """The weights on the image, for images and for feature families of images (nothing for
    tables): alpha over the mean image with the ``top`` pixels outlined, or the top features'
    weights drawn back in pixel space. A picture (drawn at once at every slider step, where the
    heat map cost a step of the Q-alpha page 0.09 s), and under it the same map as a figure with
    each pixel's weight under the pointer, drawn only while its expander is open."""
    from core.plots import weight_overlay_figure, weight_overlay_picture

    family = data.family
    if family is None:
        return
    images = family.images
    mean_image = images.X.mean(axis=0)
    marked = family.marked_pixels(top)
    if marked is not None:  # the features are pixels: all of alpha, the top ones marked
        weights, title = family.pixel_map(alpha), f"alpha over the mean image, top {len(top)} marked"
    else:
        kept = np.zeros(data.n_features)
        kept[top] = alpha[top]
        weights, title = family.pixel_map(kept), f"alpha of the top {len(top)} in pixel space"
    low, high = float(np.min(weights)), float(np.max(weights))
    picture(weight_overlay_picture(mean_image, weights, images.image_shape, selected=marked), key,
            caption=f"{title}: white at the smallest weight ({low:.3g}), through yellow and red to black at the "
                    f"largest ({high:.3g})" + ("; the selected pixels outlined in blue" if marked is not None else ""))
    hover = when_open("The same map with each pixel's weight under the pointer", f"{key}_hover")
    if hover is not None:
        chart(weight_overlay_figure(mean_image, weights, images.image_shape, selected=marked, title=title), key,
              where=hover)


def chart(figure, key: str, where=None, file_name: str | None = None, marker_x: float | None = None,
          saved=None) -> None:
    """A Plotly figure on the page and, under it, a "Save figure" popover with what it takes to
    keep it: PNG at print resolution and SVG (both written by kaleido when clicked) and the table
    behind it as CSV; the buttons are drawn while the popover is open.

    ``key`` names the chart and its buttons; ``where`` is its container (a column, an expander;
    default: the page); ``file_name`` names the downloads, without extension (default: the data
    set's name and the key). ``marker_x``: a dashed vertical line at that x of a log x axis, which
    the browser draws over the figure, so that moving it does not redraw the figure. ``saved``:
    what makes the figure the Save buttons write, called once the popover is open (default: the
    figure shown; with a marker, one that draws the line itself)."""
    from .datasets import current_dataset

    where = where or st
    first_paint.wait_for_controls(first_paint.FIGURE)
    file_name = file_name or f"{current_dataset().name}-{key.replace('_', '-')}"
    where.plotly_chart(figure, key=key)
    if marker_x is not None:
        _LOG_X_MARKER(data={"chart": key, "x": float(marker_x)}, key=f"{key}_marker", height=0)
    # the buttons are drawn only while the popover is open: three download buttons under every
    # figure cost 10-15 ms of each rerun (bench_app.py) though they are rarely used
    save = when_open("Save figure", f"{key}_save", popover=True, where=where, icon=":material/download:",
                     width="content")
    if save is None:
        return
    if saved is not None:
        figure = saved()
    with save:
        if downloads.static_export_available():
            st.download_button("PNG (300 dpi at 10 in)", partial(downloads.figure_image, figure, "png"),
                               file_name=f"{file_name}.png", mime="image/png", key=f"{key}_as_png", on_click="ignore")
            st.download_button("SVG (vector)", partial(downloads.figure_image, figure, "svg"),
                               file_name=f"{file_name}.svg", mime="image/svg+xml", key=f"{key}_as_svg",
                               on_click="ignore")
        else:
            st.caption("PNG and SVG need Chrome or Chromium on the server (kaleido draws them there); "
                       "the camera button above saves a PNG at screen size.")
        st.download_button("Table behind it (CSV)", partial(downloads.figure_csv, figure),
                           file_name=f"{file_name}.csv", mime="text/csv", key=f"{key}_as_csv", on_click="ignore")


def table(data, where=None, **options) -> None:
    """``st.dataframe(data, **options)`` in ``where`` (default: the page); a new tab's first
    table waits until its controls had time to show (:mod:`.first_paint`)."""
    first_paint.wait_for_controls(first_paint.TABLE)
    (where or st).dataframe(data, **options)


def code(source: str) -> None:
    """Python source on the page; a new tab's first snippet waits until its controls had time to
    show (:mod:`.first_paint`)."""
    first_paint.wait_for_controls(first_paint.CODE)
    st.code(source, language="python")


def picture(image, key: str, caption: str | None = None, file_name: str | None = None) -> None:
    """A picture (a grey ``uint8`` array, :func:`core.plots.image_mosaic`) at its own size, as PNG, with a
    button that saves it as PNG (written when clicked). For images redrawn at every slider step:
    the browser shows a picture at once, where a Plotly heat map is drawn anew each time."""
    from .datasets import current_dataset

    file_name = file_name or f"{current_dataset().name}-{key.replace('_', '-')}"
    # PNG (JPEG would blur the pixels), written here with light compression: st.image's own writer
    # took 31 ms per picture at every rerun, and the bytes only cross the loopback
    # at its own width in pixels: with "content" the Q-alpha page drew its 200-pixel weights map
    # across the whole column
    st.image(downloads.picture_png(image, compress_level=1), caption=caption, width=int(np.shape(image)[1]),
             output_format="PNG")
    st.download_button("Save picture (PNG)", partial(downloads.picture_png, image), file_name=f"{file_name}.png",
                       mime="image/png", key=f"{key}_png", icon=":material/download:", on_click="ignore")
