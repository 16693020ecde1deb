"""K and λ at the speed of a hand (issue 50): a component that draws what a K or λ step changes
first (the sorted weights with the top-K band, the selected pixels on the mean image, the top
features by name, the count) in the browser, from the weights at every λ it received once, and
tells the server the new K and λ once the hand stops (300 ms without a move). Dragging its
sliders or holding an arrow key costs the server nothing; the report reruns the views that need
the server (k-means at K, the per-class view, the downloads, the link)."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import numpy as np
import streamlit as st

from core.plots import contrast_stretch
from pages.ui import runs

_COMPONENT = st.components.v2.component(
    "selection_scrubber",
    # the map of the samples first: the scrubber builds one (pages/ui/sample_map.py sends its data)
    js="\n".join((Path(__file__).with_name(name)).read_text(encoding="utf-8") for name in ("sample_map.js", "scrubber.js")),
    isolate_styles=False,  # in the page's DOM: its tests and the timing read it as they read the rest
    css=(Path(__file__).with_name("selection.css")).read_text(encoding="utf-8"))

#: Features named in the component's list of the top ones.
TOP_LISTED = 10


def encoded(values: np.ndarray, dtype: str = "<f4") -> str:
    """``values`` as base64 of their bytes in ``dtype`` (little-endian float32 by default), as the
    browser decodes them (``decodeBase64`` of pages/ui/sample_map.js): the weights are 9.6 kB per
    λ on the faces, sent once per result (a K or λ step in the browser sends nothing)."""
    return base64.b64encode(np.ascontiguousarray(values, dtype=dtype).tobytes()).decode("ascii")


def _mean_image(images: np.ndarray) -> str:
    """The mean image, stretched between its 1st and 99th percentile (the pages' grey scale,
    :func:`core.plots.contrast_stretch`) to 0..255, as base64 bytes."""
    grey = contrast_stretch(images.mean(axis=0))
    return encoded((grey * 255).astype(np.uint8), "u1")


def selection_scrubber(key: str, *, lams, weights, feature_names, data_key: str, k: int, k_set: bool, lam: float,
                       gaps, defaults, images=None, on_change=None, k_label: str, lam_label: str,
                       samples_key: str | None = None, on_picked=None, colour_by: str = "", on_colour=None) -> None:
    """Mount the component.

    ``weights``: ``(len(lams), n_features)``, the weights at each λ (one row without a path),
    decoded in the browser once per new set of weights; ``data_key`` names the data set the
    ``feature_names`` (and ``images``) belong to (its fingerprint); ``k`` and ``lam`` the server's
    K and λ (``lam`` one of ``lams``), ``k_set`` whether the user set K (else it follows
    ``defaults`` as λ moves); ``gaps`` and ``defaults`` per λ: the sparsity gap's count (0: no
    clear gap) and the default K; ``images``, when the features are the pixels of images, a
    function that returns them ``(n_images, height, width)``, called only when their mean is not
    kept yet: the mean is drawn with the top K marked. ``samples_key``: the key
    :func:`pages.ui.sample_map.mount` sent the samples by, for the map of the samples (none: no
    map); ``on_picked`` runs when the hand picks samples on it with a box
    (``st.session_state[key]["picked"]`` = ``{"key": samples_key, "rows": [...]}``, the drawn
    samples' positions). ``colour_by``: the feature the map is coloured by ("": the groups);
    ``on_colour`` runs when the hand chose another (``st.session_state[key]["colour"]`` =
    ``{"feature": name}``, "" for the groups). ``on_change`` runs when the hand stops, with
    ``st.session_state[key]["view"]`` = ``{"k": ..., "lam": ..., "k_set": ...}``.
    """
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    token = hashlib.blake2b(weights.tobytes(), digest_size=8).hexdigest()  # the browser decodes new weights only
    lams = [float(value) for value in lams]
    lam_index = int(np.argmin([abs(value - lam) for value in lams]))

    def mean_image() -> dict:
        stack = np.asarray(images())
        return {"height": int(stack.shape[1]), "width": int(stack.shape[2]), "mean": _mean_image(stack)}

    data = {"token": token, "n": int(weights.shape[1]), "lams": lams, "lam_index": lam_index, "k": int(k),
            "k_set": bool(k_set), "weights": runs.kept(f"scrubber weights {token}", lambda: encoded(weights)),
            "names": runs.kept(f"scrubber names {data_key}", lambda: [str(name) for name in feature_names]),
            "image": runs.kept(f"scrubber image {data_key}", mean_image) if images is not None else None,
            "gaps": [int(g) for g in gaps], "defaults": [int(d) for d in defaults],
            "top_listed": TOP_LISTED, "k_label": k_label, "lam_label": lam_label, "samples_key": samples_key,
            "colour_by": str(colour_by), "mount_key": key}
    _COMPONENT(key=key, data=data, on_view_change=on_change or (lambda: None), on_picked_change=on_picked or (lambda: None),
               on_colour_change=on_colour or (lambda: None), height="content")
