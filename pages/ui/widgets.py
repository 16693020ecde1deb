"""Small widgets the pages share: errors, the sparsity-gap metric, wrapping rows, the weights on the image."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core import Dataset, InputError


def show_error(error: InputError) -> None:
    """Show a library error as the message it is (never a traceback)."""
    st.error(str(error), icon=":material/error:")


def gap_metric(cell, gap) -> None:
    """The sparsity gap as a metric: its count where it is clear, "none" where the sorted weights
    fall smoothly, with its strength in the help (:class:`core.selection.qalpha.SparsityGap`)."""
    cell.metric("Sparsity gap", f"{gap.n_selected:,}" if gap.clear else "none",
                help=f"The sorted weights split best after rank {gap.n_selected:,}; the split explains "
                     f"{gap.separability:.0%} of their variance (a clear gap: at least {gap.threshold:.0%}), "
                     f"and the weights above it are {gap.ratio:.3g}x those below on average.")


def row(n: int, width="content") -> list:
    """``n`` cells side by side that wrap onto more lines in a narrow window (where columns
    would cut metrics and buttons short): for metrics and download buttons."""
    line = st.container(horizontal=True, gap="large")
    return [line.container(width=width) for _ in range(n)]


def pixel_view(data: Dataset, alpha, top):
    """The weights on the image, for images and for feature families of images (None for
    tables): alpha over the mean image with the ``top`` pixels marked, or the top features'
    weights drawn back in pixel space."""
    from core.plots import weight_overlay_figure

    family = data.family
    if family is None:
        return None
    images = family.images
    marked = family.marked_pixels(top)
    if marked is not None:  # the features are pixels: all of alpha, the top ones marked
        return weight_overlay_figure(images.X.mean(axis=0), family.pixel_map(alpha), images.image_shape,
                                     selected=marked, title=f"alpha over the mean image, top {len(top)} marked")
    kept = np.zeros(data.n_features)
    kept[top] = alpha[top]
    return weight_overlay_figure(images.X.mean(axis=0), family.pixel_map(kept), images.image_shape,
                                 title=f"alpha of the top {len(top)} in pixel space")
