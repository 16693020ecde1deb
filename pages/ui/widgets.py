"""Small widgets the pages share: errors, the sparsity-gap metric, wrapping rows, the weights on the image,
figures and pictures with their downloads."""

from __future__ import annotations

from functools import partial

import numpy as np
import streamlit as st

from core import Dataset, InputError

from . import downloads

# Marks over a Plotly chart's x axis drawn by the browser: a dashed vertical line at data x (the
# current λ on the λ path) and a shaded band between two x (the top K ranks on the sorted weights).
# A chart whose figure changes is a new element that Plotly draws from scratch (Streamlit derives
# the chart's id from its spec), so a slider that only moves a marked value would redraw the whole
# figure at every step (66 ms of a λ step on the path, docs/benchmarks.md at 98003b7). The marks sit in
# Plotly's own container at the plot area's place (the drag rectangle), at the axis's range of the
# moment (log or linear), and follow a zoom, a resize or a new drawing of the figure.
_X_MARKS = st.components.v2.component(
    "x_marks",
    js="""export default function ({ data, parentElement }) {
  // one set of marks per mounted component: a later call with new data moves them (whether or
  // not Streamlit ran the cleanup in between)
  const marks = parentElement.__xMarks || (parentElement.__xMarks = follow(parentElement));
  marks.data = data;
  marks.schedule();
  return marks.stop;
}

function follow(host) {
  const marks = { data: null };
  const made = {};  // the line, the band and the band's label
  let plot = null, frame = 0;
  const find = () => marks.data && document.querySelector(`.st-key-${CSS.escape(marks.data.chart)} .js-plotly-plot`);
  const events = ['plotly_afterplot', 'plotly_relayout'];  // Plotly drew the figure, or zoomed it
  const unwatch = () => { if (plot && plot.removeListener) events.forEach((e) => plot.removeListener(e, marks.schedule)); };
  const element = (name, box, css) => {
    let node = made[name];
    if (!node || node.parentNode !== box) {
      if (node) node.remove();
      node = made[name] = document.createElement('div');
      node.className = `x-mark-${name}`;
      node.style.cssText = `position:absolute;pointer-events:none;z-index:1;${css}`;
      box.appendChild(node);
    }
    node.style.display = 'block';
    return node;
  };
  const hide = (...names) => names.forEach((name) => { if (made[name]) made[name].style.display = 'none'; });
  const place = () => {
    frame = 0;
    const found = find();
    if (found !== plot) {
      unwatch();
      plot = found;
      if (plot && plot.on) events.forEach((e) => plot.on(e, marks.schedule));
    }
    const box = plot && plot.querySelector('.svg-container'), area = plot && plot.querySelector('.nsewdrag');
    const axis = plot && plot._fullLayout && plot._fullLayout.xaxis;
    if (!box || !area || !axis || !axis.range) { hide('line', 'band', 'label'); return; }
    const log = axis.type === 'log', range = axis.range;
    // where x falls across the plot area, 0 at its left edge and 1 at its right (NaN off a log axis)
    const share = (x) => ((log ? (x > 0 ? Math.log10(x) : NaN) : x) - range[0]) / (range[1] - range[0]);
    const outer = box.getBoundingClientRect(), inner = area.getBoundingClientRect();
    const left = inner.left - outer.left, top = inner.top - outer.top;
    const { line, band, label } = marks.data;
    const at = line == null ? NaN : share(line);
    if (at >= 0 && at <= 1) {
      const drawn = element('line', box, 'width:0;border-left:2px dashed grey');
      drawn.style.left = `${left + at * inner.width - 1}px`;
      drawn.style.top = `${top}px`;
      drawn.style.height = `${inner.height}px`;
    } else hide('line');
    const from = band ? share(band[0]) : NaN, to = band ? share(band[1]) : NaN;
    const start = Math.max(from, 0), end = Math.min(to, 1);
    if (end > start) {
      const drawn = element('band', box, 'background:rgba(0,191,255,0.12)');
      drawn.style.left = `${left + start * inner.width}px`;
      drawn.style.width = `${(end - start) * inner.width}px`;
      drawn.style.top = `${top}px`;
      drawn.style.height = `${inner.height}px`;
    } else hide('band');
    if (label && end > start) {  // at the band's left edge, or the plot's where the band begins off it
      const font = plot._fullLayout.font || {};
      const written = element('label', box, `white-space:nowrap;font-size:${font.size || 12}px;` +
                              `font-family:${font.family || 'sans-serif'};color:${font.color || '#444'}`);
      written.textContent = label;
      written.style.left = `${left + start * inner.width + 3}px`;
      written.style.top = `${top + 2}px`;
    } else hide('label');
  };
  marks.schedule = () => { if (!frame) frame = requestAnimationFrame(place); };
  // a new chart element (the figure drawn anew) is looked for at each change of the page, which
  // costs a query; the marks are placed again only then, once Plotly has drawn (its events: a
  // drawing, a zoom) and when the window is resized, since placing them reads the layout
  const watcher = new MutationObserver(() => { if (find() !== plot) marks.schedule(); });
  watcher.observe(document.body, { childList: true, subtree: true });
  window.addEventListener('resize', marks.schedule);
  marks.stop = () => {
    watcher.disconnect();
    window.removeEventListener('resize', marks.schedule);
    if (frame) cancelAnimationFrame(frame);
    unwatch();
    Object.values(made).forEach((e) => e.remove());
    delete host.__xMarks;
  };
  return marks;
}
""")


def show_error(error: InputError) -> None:
    """Show a library error as the message it is (never a traceback)."""
    st.error(str(error), icon=":material/error:")


def convergence_warning(result, advice: str, what: str = "") -> None:
    """A run that stopped at its iteration limit, said as a warning beside its result (never only
    in a caption): ``what`` names the run when the page shows several, ``advice`` says what to do."""
    if getattr(result, "stopped", False) or result.converged:
        return
    st.warning(f"**{what or 'This run'} did not converge** in {result.n_iter:,} iterations: the weights shown are "
               f"those of its last iteration and may still change. {advice}", icon=":material/warning:")


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
    ten (the steps' time did not change measurably: docs/benchmarks.md at 98003b7)."""
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


def snippet(label: str, key: str, source) -> None:
    """The Python that recomputes the page's result, in an expander that draws it only while open
    (:func:`when_open`): ``source()`` gives the code. A code element, even in a closed expander,
    made a new tab load the highlighter's browser code (1.6 MB) with the page's first paint."""
    opened = when_open(label, key)
    if opened is not None:
        with opened:
            st.code(source(), language="python")


def pixel_view(data: Dataset, alpha, top, key: str, what: str = "alpha") -> None:
    """The weights on the image, for images and for feature families of images (nothing for
    tables): a weight map (issue 60), ``alpha`` (``what``: its name) in a continuous colour map
    with its colour bar over the mean image or any chosen sample, at an opacity the user sets, with
    the ``top`` pixels outlined; or, for features that are not pixels, the top features' weights
    drawn back in pixel space. A picture (drawn at once at every slider step, where the heat map
    cost a step of the Q-alpha page 0.09 s), and under it the same map as a figure with each
    pixel's weight under the pointer, drawn only while its expander is open."""
    from core.plots import colour_bar_picture, weight_overlay_figure, weight_overlay_picture

    family = data.family
    if family is None:
        return
    images = family.images
    controls = line()
    opacity = controls.slider("Opacity of the weights", 0.0, 1.0, 0.6, 0.05, key=f"{key}_opacity", width=220,
                              help="0: the image alone (with the outline); 1: the weights alone.")
    # the images behind the features: a sample of the data set is a row of them (family.images)
    shown = controls.selectbox("Under the weights", ["mean image", *range(images.X.shape[0])], key=f"{key}_background",
                               format_func=lambda c: c if isinstance(c, str) else str(data.sample_names[c]),
                               width=260, help="The mean image, or any sample's own image.")
    under = "the mean image" if shown == "mean image" else str(data.sample_names[int(shown)])
    background = images.X.mean(axis=0) if shown == "mean image" else images.X[int(shown)]
    marked = family.marked_pixels(top)
    if marked is not None:  # the features are pixels: all of the weights, the top ones marked
        weights, title = family.pixel_map(alpha), f"{what} over {under}, top {len(top)} marked"
    else:
        kept = np.zeros(data.n_features)
        kept[top] = alpha[top]
        weights, title = family.pixel_map(kept), f"{what} of the top {len(top)} in pixel space, over {under}"
    low, high = float(np.min(weights)), float(np.max(weights))
    drawn = weight_overlay_picture(background, weights, images.image_shape, selected=marked, opacity=float(opacity))
    # the colour bar under the map, in the same picture: its saved PNG keeps the scale with it
    gap = np.full((6, drawn.shape[1], 3), 255, dtype=np.uint8)
    picture(np.vstack([drawn, gap, colour_bar_picture(drawn.shape[1])]), key,
            caption=title + ("; the selected pixels outlined in blue" if marked is not None else "")
            + f". Under it the colour bar: {what} {low:.3g} (left, white) to {high:.3g} (right, black)")
    hover = when_open("The same map with each pixel's weight under the pointer", f"{key}_hover")
    if hover is not None:
        chart(weight_overlay_figure(background, weights, images.image_shape, selected=marked, title=title,
                                    opacity=float(opacity)), key, where=hover)


def chart(figure, key: str, where=None, file_name: str | None = None,
          band_x: tuple[float, float, str] | None = None, saved=None) -> None:
    """A Plotly figure on the page and, under it, a "Save figure" popover with what it takes to
    keep it: PNG at print resolution and SVG (both written by kaleido when clicked) and the table
    behind it as CSV; the buttons are drawn while the popover is open.

    ``key`` names the chart and its buttons; ``where`` is its container (a column, an expander;
    default: the page); ``file_name`` names the downloads, without extension (default: the data
    set's name and the key). ``band_x``: ``(from, to, label)``, a shaded band between two x
    labelled at its left edge, which the browser draws over the figure (:func:`marks`), so that
    moving it does not redraw the figure. ``saved``: what makes the figure the Save buttons write,
    called once the popover is open (default: the figure shown; with a band, one that draws it
    itself)."""
    from .datasets import current_dataset

    where = where or st
    file_name = downloads.file_name(current_dataset().name, key.replace("_", "-")) if file_name is None else \
        downloads.file_name(file_name, "")
    where.plotly_chart(figure, key=key)
    if band_x is not None:
        marks(key, band=band_x)
    # the buttons are drawn only while the popover is open: three download buttons under every
    # figure cost 10-15 ms of each rerun (bench_app.py) though they are rarely used
    save = when_open("Save figure", f"{key}_save", popover=True, where=where, icon=":material/download:",
                     width="content")
    if save is None:
        return
    if saved is not None:
        figure = saved()
    downloads.start_exporter()  # in the background: ready by the time PNG or SVG is clicked
    with save:
        if downloads.static_export_available():
            if not downloads.exporter_ready():
                st.caption("The PNG and SVG writer is starting (once per server, about 3 s): a click now waits "
                           "for it; the table is ready at once.")
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


def marks(chart: str, line: float | None = None, band: tuple[float, float, str] | None = None) -> None:
    """Marks the browser draws over the chart whose key is ``chart``, wherever on the page that
    chart is: a dashed vertical line at x ``line``, and a shaded band ``(from, to, label)`` between
    two x. A fragment can move them over a chart drawn outside it (the λ path's dashed λ)."""
    _X_MARKS(data={"chart": chart, "line": None if line is None else float(line),
                   "band": None if band is None else [float(band[0]), float(band[1])],
                   "label": None if band is None else str(band[2])}, key=f"{chart}_marks", height=0)


def picture(image, key: str, caption: str | None = None, file_name: str | None = None) -> None:
    """A picture (a grey ``uint8`` array, :func:`core.plots.image_mosaic`) at its own size, as PNG, with a
    button that saves it as PNG (written when clicked). For images redrawn at every slider step:
    the browser shows a picture at once, where a Plotly heat map is drawn anew each time."""
    from .datasets import current_dataset

    file_name = downloads.file_name(current_dataset().name, key.replace("_", "-")) if file_name is None else \
        downloads.file_name(file_name, "")
    # PNG (JPEG would blur the pixels), written here with light compression: st.image's own writer
    # took 31 ms per picture at every rerun, and the bytes only cross the loopback
    # at its own width in pixels: with "content" the Q-alpha page drew its 200-pixel weights map
    # across the whole column
    st.image(downloads.picture_png(image, compress_level=1), caption=caption, width=int(np.shape(image)[1]),
             output_format="PNG")
    st.download_button("Save picture (PNG)", partial(downloads.picture_png, image), file_name=f"{file_name}.png",
                       mime="image/png", key=f"{key}_png", icon=":material/download:", on_click="ignore")
