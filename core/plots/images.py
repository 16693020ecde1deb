"""Figures and pictures of images: a weight vector on the image grid, weights over a face,
selection outlines, contrast and rank stretches, grids and mosaics of images, heat-map pictures.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from ..errors import InputError
from ._layout import _FIXED, _LAYOUT, _colorscale, _figure, _scale, _text

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
    (``docs/benchmarks.md at 98003b7``). No hover: the pages offer the figure beside it on request.
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


def colour_bar_picture(width: int, height: int = 12, colorscale: str = "Hot", reverse: bool = True) -> np.ndarray:
    """The colour bar of :func:`weight_overlay_picture` as a picture (``uint8``, height x width x
    3): the smallest weight's colour at the left, the largest's at the right (Plotly's "Hot"
    reversed: white, yellow, red, black), for the page to write the two ends under it."""
    if width < 2 or height < 1:
        raise InputError(f"A colour bar needs a width of at least 2 and a height of at least 1; got {width} x {height}.")
    colours = _colour_scale_rgb(colorscale, np.linspace(0.0, 1.0, int(width)), reverse=reverse)
    return np.repeat(np.round(colours).astype(np.uint8)[None, :, :], int(height), axis=0)


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
    per λ step that way (``docs/benchmarks.md at 98003b7``). No hover, no zoom.
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
