"""The map of the samples through the selection (issue 60): the samples on the first two principal
components of the top-K features, coloured by class (or, without labels, by k-means clusters at
K), side samples as diamonds, each named on hover (with its image, for image sets).

The scrubber draws it (pages/ui/sample_map.js, loaded with pages/ui/scrubber.js) and redraws it
as K and λ move, from the standardised samples this module sends once per data set: the
``data`` part, a message that does not change with K or λ, so Streamlit sends it once and then
as a reference to the browser's copy. The ``view`` part (the colours; for data beyond
:data:`core.evaluation.sample_map.BROWSER_VALUES`, the server's map on a sample of rows) follows
the K the browser reported."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import streamlit as st

from core.matrix.kmeans import seeded_kmeans
from core.evaluation.sample_map import BROWSER_VALUES, SERVER_ROWS, sample_map
from core.plots import contrast_stretch, samples_layout_figure
from core.validation import column_scales, zscores
from pages.ui import datasets, runs, widgets
from pages.ui.scrubber import encoded

_COMPONENT = st.components.v2.component(
    "selection_samples",
    # the samples of a data set, kept in the page for the maps that draw them (by the data set's key)
    js="""
export default function ({ data, parentElement }) {
  const registry = window.__selectionSamples || (window.__selectionSamples = new Map());
  const entry = registry.get(data.key) || {};
  if (!entry[data.part] || entry[data.part].token !== data.token) {
    entry[data.part] = data;
    if (data.part === 'data') entry.decoded = null;
    registry.delete(data.key);
    registry.set(data.key, entry);
    while (registry.size > 4) registry.delete(registry.keys().next().value);  // the oldest data sets go
    window.dispatchEvent(new CustomEvent('selection-samples', { detail: data.key }));
  }
  parentElement.dataset.samples = `${data.key}:${data.part}`;
}""", isolate_styles=False)


def samples_key(main, side) -> str:
    """The key the scrubber names the samples by: the main data and the side data."""
    return f"{main.fingerprint}|{side.fingerprint if side is not None else ''}"


def drawn_in_browser(main, side) -> bool:
    """Whether the standardised samples fit the browser's budget (main and side values)."""
    n_rows = main.n_samples + (side.n_samples if side is not None else 0)
    return n_rows * main.n_features <= BROWSER_VALUES


def _byte_divisor(*matrices) -> float | None:
    """255 where every value is a whole number of 255ths in [0, 1] (8-bit pixels as the image sets
    load), 1 where every value is a whole number from 0 to 255, else None: the divisor that brings
    one byte per value back to the values exactly (checked, not assumed)."""
    for divisor in (255.0, 1.0):
        if all(X.size and X.min() >= 0 and X.max() * divisor <= 255
               and np.array_equal(np.round(X * divisor) / divisor, X) for X in matrices):
            return divisor
    return None


def _standardised_part(X, centre, scale, divisor) -> dict:
    """``X`` for the browser, one feature after another: with a ``divisor`` (:func:`_byte_divisor`)
    its bytes, from which the browser standardises it by ``centre`` and ``scale`` as the server
    does, exactly and in a quarter of the bytes; else its z-scores as float32."""
    if divisor is not None:
        return {"codes": encoded(np.round(X * divisor).T, "u1")}
    return {"z": encoded(((X - centre) / scale).T, "<f4")}


def _samples_data(main, side) -> dict:
    """The ``data`` part: the main samples standardised (:func:`core.validation.zscores`, as the
    page's k-means sees them), one feature after another (:func:`_standardised_part`); the side
    samples standardised with the main samples' statistics; the names; the images (grey, stretched
    as the pages draw them) when the features come from images and they fit the budget too.

    8-bit data (images) go as bytes: the AR faces' samples are 0.42 million characters of base64
    instead of float32's 1.7 million, and a map coloured by a pixel shows its value exactly. (What
    a fresh server's first open waited for was the message's place, not its size:
    docs/pages/qalpha.md.)"""
    centre, scale = column_scales(main.X)
    divisor = _byte_divisor(main.X, *([side.X] if side is not None else []))
    # the centre and scale bring a feature back to its own values where the map is coloured by it
    data = {"part": "data", "key": samples_key(main, side), "n": main.n_samples, "p": main.n_features,
            **_standardised_part(main.X, centre, scale, divisor), "divisor": divisor,
            "centre": encoded(centre, "<f8"), "scale": encoded(scale, "<f8"),
            "names": [str(name) for name in main.sample_names], "side": None, "images": None}
    if side is not None:
        data["side"] = {"n": side.n_samples, **_standardised_part(side.X, centre, scale, divisor),
                        "names": [str(name) for name in side.sample_names]}
    family = main.family
    if family is not None:
        stack = np.asarray(family.images.images())
        if stack.size <= BROWSER_VALUES:
            grey = contrast_stretch(stack)  # each image by its own percentiles, as the pages draw them
            data["images"] = {"height": int(stack.shape[1]), "width": int(stack.shape[2]),
                              "pixels": encoded(np.round(grey * 255), "u1")}
    samples = data.get("codes") or data["z"]
    data["token"] = hashlib.blake2b(samples.encode("ascii"), digest_size=8).hexdigest()
    return data


def _colours(main, top, n_clusters: int, seed: int, ranking_key: str) -> dict:
    """The samples' groups: their classes, or without labels the k-means clusters of the
    standardised top-K features (``n_clusters``, seeded by ``seed``)."""
    if main.labels is not None and np.unique(main.labels).size >= 2:
        classes, groups = np.unique(main.labels, return_inverse=True)
        return {"groups": groups.tolist(), "group_names": [str(c) for c in classes], "group_title": "class"}
    n_clusters = int(min(max(n_clusters, 1), main.n_samples))
    found = runs.kept(f"map clusters {main.fingerprint} {ranking_key} {top.size} {n_clusters} {seed}",
                      lambda: seeded_kmeans(zscores(main.X[:, top]), n_clusters, 1, seed)[0])
    return {"groups": np.asarray(found).tolist(), "group_names": [f"cluster {c + 1}" for c in range(n_clusters)],
            "group_title": f"k-means cluster at K = {top.size:,}"}


def colour_choice(data, judge: bool = False):
    """What the map may be coloured by on ``data``: "" (the groups) or one of its features' names.
    A parser for :func:`pages.ui.views.restore_view` (a name the data set lacks raises
    ``ValueError``: the link's note names it), or with ``judge`` a test for
    :func:`pages.ui.settings.set_defaults` (a name left from another data set goes back to "")."""
    def allowed(value) -> bool:
        return value == "" or (isinstance(value, str) and value in _feature_positions(data))

    def parse(value):
        if not allowed(value):
            raise ValueError(value)
        return value
    return allowed if judge else parse


def _feature_positions(data) -> dict:
    """The position of each feature name of ``data`` (kept per data set: 20,000 names take 2 ms)."""
    return runs.kept(f"feature positions {data.fingerprint}",
                     lambda: {str(name): j for j, name in enumerate(data.feature_names)})


def coloured() -> None:
    """The scrubber's report of the feature the hand coloured the map by (clicked in the list or on
    the image, typed, or "" for the groups): the page's, for the link and Undo. The browser has
    painted it already. The whole page runs, not the selection's fragment alone, so that its Undo
    offers the change (the browser keeps the scrubber it drew: pages/ui/scrubber.js)."""
    chosen = ((st.session_state.get("qa_scrubber") or {}).get("colour") or {}).get("feature", "")
    st.session_state["qa_colour_by"] = str(chosen)
    st.session_state["_qa_rerun_page"] = True


def send_samples(main, side) -> None:
    """Send the standardised samples (the ``data`` part) when they fit the browser's budget. Called
    by the page outside the fragment that K and λ rerun: a rerun that mounted them again, though
    Streamlit then sends a reference, serialised and hashed the whole message (21 MB at 2,000 x
    2,000) at every K report."""
    if drawn_in_browser(main, side):
        _COMPONENT(key="qa_samples_data", data=runs.kept(f"map samples {samples_key(main, side)}",
                                                         lambda: _samples_data(main, side)), height="content")


def draw(data, main, side, ranking, top_k: int, lam: float, *, n_clusters: int, seed: int, side_mode: str,
         side_classes, picked) -> None:
    """The map of the samples at K (:func:`mount`), the samples picked on it with what can be done
    with them (:func:`picked_offer`) and, where the file gave the samples a layout, that layout in
    the same colours (:func:`stored_layout`). ``data``: the page's data set, of which ``main`` and
    ``side`` are the split by ``side_mode`` (``side_classes``, or the rows ``picked`` before)."""
    drawn, colours = mount(main, side, ranking, top_k, lam, n_clusters=n_clusters, seed=seed)
    picked_offer(data, main, side, drawn, side_mode, side_classes, picked)
    if main.meta.get("layouts"):
        # side classes and picked samples are rows of the same file: they have a place in its layout
        stored_layout(main, side if side_mode in ("side classes", "picked samples") else None, colours)


def mount(main, side, ranking, top_k: int, lam: float, *, n_clusters: int, seed: int) -> tuple[np.ndarray, dict]:
    """Send the colours at K (and, beyond the browser's budget, the server's map) for the samples
    :func:`send_samples` sent, keyed by :func:`samples_key`; return the main samples the map draws,
    in the order it draws them (its picks are positions in it), and every main sample's colours
    (the server's map is sent those of its rows; the file's layout draws them all).

    ``ranking``: the features best first at λ ``lam``; ``top_k`` the K the server knows (the
    browser's last report). In the browser's budget the samples go once and the browser maps
    them at every K and λ; beyond it the server maps a seeded sample of at most
    :data:`~core.evaluation.sample_map.SERVER_ROWS` rows at this K and λ.
    """
    key = samples_key(main, side)
    ranking = np.asarray(ranking)
    ranking_key = hashlib.blake2b(ranking.tobytes(), digest_size=8).hexdigest()
    top = ranking[:top_k]
    colours = _colours(main, top, n_clusters, seed, ranking_key)
    view = {"part": "view", "key": key, "server": None, **colours}
    rows = np.arange(main.n_samples)
    if not drawn_in_browser(main, side):
        mapped = runs.kept(f"map server {key} {ranking_key} {top_k} {SERVER_ROWS} {seed}",
                           lambda: sample_map(main.X, top, None if side is None else side.X, max_rows=SERVER_ROWS,
                                              random_state=seed))
        rows = mapped.rows
        view["groups"] = np.asarray(view["groups"])[rows].tolist()
        n_values = (main.n_samples + (side.n_samples if side is not None else 0)) * main.n_features
        colour_by = st.session_state.get("qa_colour_by", "")
        column = _feature_positions(main).get(colour_by)
        if column is not None:  # the chosen feature's values for the rows drawn
            view["feature"] = {"name": colour_by, "values": main.X[rows, column].tolist()}
        view["server"] = {
            "coordinates": mapped.coordinates.ravel().tolist(), "k": int(top_k), "lam": float(lam),
            "side": None if mapped.side_coordinates is None else mapped.side_coordinates.ravel().tolist(),
            "names": [str(main.sample_names[i]) for i in rows], "explained": mapped.explained.tolist(),
            "side_names": [] if side is None else [str(name) for name in side.sample_names],
            "caption": (f"{rows.size:,} of the {main.n_samples:,} samples" if mapped.sampled else
                        f"The {main.n_samples:,} samples") + f" on the first two principal components of the top "
                       f"{top_k:,} features (standardised), mapped by the server at K = {top_k:,}: "
                       f"{n_values:,} values are more than the {BROWSER_VALUES:,} the browser is sent to redraw "
                       "the map itself, so it is redrawn when the hand stops."}
    view["token"] = hashlib.blake2b(repr(sorted(view.items())).encode(), digest_size=8).hexdigest()
    _COMPONENT(key="qa_samples_view", data=view, height="content")
    return rows, colours


def stored_layout(main, side, colours: dict) -> None:
    """The layout the file gave the samples (AnnData's ``obsm["X_umap"]``, ``"X_pca"``, ...: the
    picture a biologist knows), its points coloured as the map of the samples colours them
    (``colours``: by class, or by the k-means clusters at K; or by the feature the map is coloured
    by), the side samples as diamonds."""
    layouts = main.meta["layouts"]
    # drawn only while open, as the other figures a K report would otherwise resend: at 68,000
    # cells it took 80 ms to build and write and 2.7 MB to send, at every report
    opened = widgets.when_open("The samples on the file's own layout", "qa_layout_open")
    if opened is None:
        return
    with opened:
        name = st.selectbox("Layout", list(layouts), key="qa_layout_name",
                            help="The embeddings stored with the cells (AnnData's obsm), first two columns.") \
            if len(layouts) > 1 else next(iter(layouts))
        name = name if name in layouts else next(iter(layouts))
        side_places = (side.meta.get("layouts") or {}).get(name) if side is not None else None
        axis = name.removeprefix("X_").upper()
        colour_by = st.session_state.get("qa_colour_by", "")
        feature = _feature_positions(main).get(colour_by) if colour_by else None
        figure = samples_layout_figure(
            layouts[name], colours["groups"], colours["group_names"], names=main.sample_names,
            side_coordinates=side_places, side_names=None if side_places is None else side.sample_names,
            group_title=colours["group_title"], axis_names=(f"{axis}1", f"{axis}2"),
            values=None if feature is None else main.X[:, feature], value_name=colour_by,
            title=f"obsm[{name!r}], coloured by {colour_by if feature is not None else colours['group_title']}")
        widgets.chart(figure, "qa_stored_layout")


def picked_offer(data, main, side, drawn, side_mode: str, side_classes, picked) -> None:
    """The samples picked on the map with a box, named, and a button that makes them the side data
    of the next run (added to those picked before, when they are the side data already).

    ``data``: the page's data set, of which ``main`` and ``side`` are the split by ``side_mode``
    (``side_classes``, or the rows ``picked`` before); ``drawn``: what :func:`mount` returned.
    """
    box = (st.session_state.get("qa_scrubber") or {}).get("picked") or {}
    if not box.get("rows") or box.get("key") != samples_key(main, side):
        return
    positions = [int(i) for i in box["rows"] if 0 <= int(i) < len(drawn)]
    # the map's samples are the main data's: their rows in the data set
    rows = datasets.main_rows(data, side_mode, side_classes, picked)[drawn[positions]]
    adding = side_mode == "picked samples" and bool(picked)
    chosen = sorted(set(rows.tolist()) | (set(picked) if adding else set()))
    names = [str(data.sample_names[i]) for i in rows[:12]]

    def use_as_side():
        st.session_state["qa_side_rows"] = {"data": data.fingerprint, "rows": chosen}
        st.session_state["qa_side_mode"] = "picked samples"
        st.session_state["qa_auto"] = False
        # the button is in the selection's fragment: the side data are the whole page's
        st.session_state["_qa_rerun_page"] = True

    def compare():
        st.session_state["qa_compare_rows"] = {"data": data.fingerprint, "rows": sorted(rows.tolist())}
        st.session_state["qa_marker_groups"] = "the picked samples against the rest"
        st.session_state["qa_per_class"] = True  # the per-class view, open on them

    line = st.container(horizontal=True, vertical_alignment="center")
    line.caption(f"{len(rows):,} samples picked on the map: {', '.join(names)}"
                 + (f" and {len(rows) - 12:,} more" if len(rows) > 12 else "") + ".")
    line.button(f"Add them to the side data ({len(chosen):,} samples)" if adding else
                f"Make them the side data ({len(chosen):,} samples)", on_click=use_as_side, key="qa_pick_side",
                help="The picked samples become the side data W of the next run (Shashua & Wolf 2004 Def. 3: "
                     "what varies within them is suppressed), the other samples the main data.")
    line.button(f"Compare them with the rest ({len(rows):,} samples)", on_click=compare, key="qa_pick_compare",
                help="The per-class view tests the selected features on the picked samples against the other main "
                     "samples (their statistics, fold changes and adjusted p-values), as it tests a class.")


_SELECTION_MAP = st.components.v2.component(
    "selection_map",
    # the map on its own (pages/ui/selection_map.js), for the pages without the scrubber
    js="\n".join((Path(__file__).with_name(name)).read_text(encoding="utf-8")
                 for name in ("sample_map.js", "selection_map.js")),
    isolate_styles=False, css=(Path(__file__).with_name("selection.css")).read_text(encoding="utf-8"))


def selection_map(data, features, *, n_clusters: int, seed: int, key: str, what: str, rows=None, order=None,
                  k_label: str | None = None) -> None:
    """The map of the samples for the pages without the scrubber (Kernel Q-alpha's top K, Sparse
    LDA's k selected features), in an expander drawn only while open: the samples (``rows`` of
    ``data``, default all) on the first two principal components of the ``features``
    (standardised), coloured as the Q-alpha page's map colours them. Within the browser's budget
    the browser draws it from the samples sent once (issue 77, item 4): ``order`` (a ranking of
    every feature) gives it a K slider of its own (``k_label``) that starts at ``len(features)``;
    without it the map follows the page's own k. Beyond the budget the server maps at most
    :data:`~core.evaluation.sample_map.SERVER_ROWS` seeded rows. ``what`` names the features in
    the title, ``{k}`` standing for their number ("the top {k} features of kernel Q-alpha"; replaced,
    not formatted: a class named with braces stays text, as the browser's caption replaces it)."""
    features = np.asarray(features, dtype=np.intp)
    # the label does not change with k: a new label is a new expander, closed
    opened = widgets.when_open(f"The samples on {what.replace('{k}', 'K' if order is not None else 'k')}: a map",
                               f"{key}_open")
    if opened is None:
        return
    rows = np.arange(data.n_samples) if rows is None else np.flatnonzero(rows) if np.asarray(rows).dtype == bool \
        else np.asarray(rows, dtype=np.intp)
    shown = data if rows.size == data.n_samples else runs.kept(
        f"map rows {data.fingerprint} {hashlib.blake2b(rows.tobytes(), digest_size=8).hexdigest()}",
        lambda: data.subset_samples(rows))
    features_key = hashlib.blake2b(features.tobytes(), digest_size=8).hexdigest()
    colours = _colours(shown, features, n_clusters, seed, features_key)
    with opened:
        if drawn_in_browser(shown, None):
            _COMPONENT(key=f"{key}_data", data=runs.kept(f"map samples {samples_key(shown, None)}",
                                                         lambda: _samples_data(shown, None)), height="content")
            view = {"part": "view", "key": samples_key(shown, None), "server": None, **colours}
            view["token"] = hashlib.blake2b(repr(sorted(view.items())).encode(), digest_size=8).hexdigest()
            _COMPONENT(key=f"{key}_view", data=view, height="content")
            ranked = np.asarray(order if order is not None else features, dtype=np.int32)
            _SELECTION_MAP(key=key, height="content", data={
                "samples_key": samples_key(shown, None), "order": encoded(ranked, "<i4"), "k": int(features.size),
                "token": hashlib.blake2b(ranked.tobytes(), digest_size=8).hexdigest(), "what": what,
                "k_label": k_label if order is not None else None,
                "names": runs.kept(f"scrubber names {shown.fingerprint}", lambda: [str(n) for n in shown.feature_names])})
            return
        mapped = runs.kept(f"map server {shown.fingerprint} {features_key} {SERVER_ROWS} {seed}",
                           lambda: sample_map(shown.X, features, max_rows=SERVER_ROWS, random_state=seed))
        figure = samples_layout_figure(
            mapped.coordinates, np.asarray(colours["groups"])[mapped.rows], colours["group_names"],
            names=[shown.sample_names[i] for i in mapped.rows], group_title=colours["group_title"],
            axis_names=tuple(f"PC{axis + 1} ({share:.0%} of the variance)" for axis, share in enumerate(mapped.explained)),
            title=f"The samples on {what.replace('{k}', f'{features.size:,}')}")
        widgets.chart(figure, key)
        st.caption((f"{mapped.rows.size:,} of the {shown.n_samples:,} samples (a seeded sample)" if mapped.sampled else
                    f"The {shown.n_samples:,} samples") + f" on the first two principal components of the "
                   f"{features.size:,} features, standardised (as the Q-alpha page's map of the samples draws them): "
                   f"{shown.n_samples * shown.n_features:,} values are more than the {BROWSER_VALUES:,} the browser "
                   "is sent to redraw the map itself.")
