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
    css="""
.scrubber { font-family: var(--st-font); color: var(--st-text-color); }
.scrubber .row { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-end; margin-bottom: 0.5rem; }
.scrubber .control { display: flex; flex-direction: column; font-size: 0.875rem; min-width: 220px; }
.scrubber .control input { width: 100%; accent-color: var(--st-primary-color); }
.scrubber output { font-size: 0.8rem; }
.scrubber .count { display: flex; flex-direction: column; }
.scrubber .count-label { font-size: 0.875rem; }
.scrubber .count-value { font-size: 2rem; line-height: 1.2; }
.scrubber .count-of { font-size: 0.8rem; opacity: 0.7; }
.scrubber .panels { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }
.scrubber figure { margin: 0; }
.scrubber figcaption, .scrubber .top-title { font-size: 0.8rem; opacity: 0.8; }
.scrubber .weights-panel { flex: 0 0 auto; }
.scrubber canvas { display: block; }
.scrubber .top { font-size: 0.8rem; margin: 0.25rem 0 0 1.2rem; padding: 0; font-family: var(--st-code-font); }
.scrubber .image-controls { display: flex; flex-wrap: wrap; gap: 0.25rem 0.75rem; font-size: 0.75rem;
  max-width: 380px; margin-bottom: 0.25rem; align-items: center; }
.scrubber .image-controls select, .scrubber .image-controls input { font-size: 0.75rem; }
.scrubber .image-controls .opacity { width: 80px; vertical-align: middle; }
.scrubber .image-row { display: flex; align-items: flex-start; gap: 4px; }
.scrubber .map-panel { margin-top: 0.75rem; }
.scrubber .map-title { font-size: 0.875rem; font-weight: 600; }
.scrubber .map-box { position: relative; display: inline-block; }
.scrubber .map-tip { position: absolute; background: var(--st-background-color); border: 1px solid #bbb;
  border-radius: 4px; padding: 4px; font-size: 0.75rem; pointer-events: none; max-width: 220px; z-index: 2; }
.scrubber .map-tip canvas { display: block; margin-bottom: 2px; }
.scrubber .map-legend { display: flex; flex-wrap: wrap; gap: 0.25rem 0.75rem; font-size: 0.75rem; max-width: 460px; }
.scrubber .map-key i { display: inline-block; width: 0.7rem; height: 0.7rem; border-radius: 50%; margin-right: 0.25rem; }
.scrubber .map-key b { margin-right: 0.25rem; }
.scrubber .map-key-title { opacity: 0.8; }
.scrubber .map-band { position: absolute; border: 1px dashed #333; background: rgba(0,0,0,0.06); pointer-events: none; }
.scrubber .map-picked { font-size: 0.8rem; max-width: 460px; }
.scrubber .map-clear { font-size: 0.75rem; }
.scrubber .map-caption { font-size: 0.8rem; opacity: 0.8; max-width: 460px; }
.scrubber .map-colour { display: flex; flex-wrap: wrap; gap: 0.25rem 0.5rem; align-items: center; font-size: 0.8rem;
  margin: 0.25rem 0; max-width: 460px; }
.scrubber .map-colour input { font-size: 0.8rem; width: 200px; }
.scrubber .map-colour-reset { font-size: 0.75rem; }
.scrubber .map-colour-note { font-size: 0.75rem; opacity: 0.85; }
.scrubber .map-colour-bar { display: block; margin-top: 2px; }
.scrubber .top li[title] { cursor: pointer; }
.scrubber .top li[title]:hover { text-decoration: underline; }
.scrubber canvas.image { cursor: crosshair; }
""")

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
