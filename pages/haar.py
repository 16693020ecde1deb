"""Haar reconstructions: images rebuilt from alpha-weighted wavelet coefficients (Shashua & Wolf 2004 Fig. 3c, 3d)."""

import json
from functools import partial

import numpy as np
import streamlit as st
from scipy.stats import rankdata

from core import InputError
from core.plots import (band_mass_figure, contrast_stretch, image_mosaic, rank_stretch, weight_overlay_figure,
                        weight_overlay_picture)
from core.selection.qalpha import QAlphaParameters
from pages.ui import datasets, downloads, runs, session, settings, snippets, views, widgets

session.page_start()

data = datasets.current_dataset()
pixels = data.family.images if data.family is not None else None
st.title("Haar reconstructions")
st.caption("Q-alpha with side information on Haar wavelet coefficients; the selection is shown by "
           "rebuilding images from their coefficients multiplied by alpha (Shashua & Wolf, ECCV 2004, "
           "Sec. 6, Fig. 3c/3d).")
uploaded_side = datasets.current_side_dataset(like=pixels) if pixels is not None else None
# main classes and a side class, or main classes and the side data uploaded on the Data page
if pixels is None or pixels.labels is None or pixels.classes.size < (2 if uploaded_side is not None else 3):
    st.info("This page needs a labelled image set with at least three classes (main classes and a "
            "side class), e.g. the AR faces, or two classes and side images uploaded on the Data page.")
    st.stop()
classes = datasets.class_values(pixels)
LAMBDAS = [0.001, 0.01, 0.1, 1.0]
#: Decades below the largest weight that the map of where alpha's weight lies spans (log scale).
DECADES = 3.0
#: The rebuilt images' grey scales: the stretch, its name on the radio, and what the caption says of it.
GREY_SCALES = {
    "rank": (rank_stretch, "rank (histogram-equalised)",
             "each pixel's grey is its rank among all the pixels of its set (histogram equalisation): rebuilt from "
             "alpha itself, the values span orders of magnitude, a few coarse blocks carry most of the brightness, "
             "and a linear scale shows those blocks and nothing else"),
    "linear": (lambda images: contrast_stretch(images, shared=True), "linear (1st to 99th percentile)",
               "black and white are the 1st and 99th percentile of its set's pixels, values in proportion")}
#: What the coefficients are multiplied by before the images are rebuilt: the function of alpha,
#: its name on the radio, and what the caption says of it. Alpha itself is the paper's rendering,
#: but on the faces a few coefficients hold most of its weight (7 of 2,410 half of its squared sum)
#: and the rebuilt mean is a few bright blocks; alpha's rank keeps its order and lets the face show.
WEIGHTINGS = {
    "rank": (lambda alpha: rankdata(alpha) / alpha.size, "alpha's rank",
             "each coefficient multiplied by its rank of alpha (1 for the largest weight, near 0 for the smallest), "
             "so that alpha's order decides what shows and its few largest weights do not hide the rest"),
    "alpha": (lambda alpha: alpha, "alpha (the paper's Fig. 3c/3d)",
              "each coefficient multiplied by its weight alpha, as Shashua & Wolf 2004 draw it")}
SIDE_SOURCES = ["side classes"] + (["uploaded side data"] if uploaded_side is not None else [])
is_class = lambda values: all(c in classes for c in values)  # noqa: E731
VIEW = {"haar_main": lambda v: [views.choice_of(classes)(c) for c in v],
        "haar_side_source": views.choice_of(SIDE_SOURCES),
        "haar_side": lambda v: [views.choice_of(classes)(c) for c in v],
        "haar_levels": views.integer_in(1, 5), "haar_lam": views.choice_of(LAMBDAS), "haar_per_class": views.integer_in(1, 8),
        "haar_grey": views.choice_of(list(GREY_SCALES)), "haar_weighting": views.choice_of(list(WEIGHTINGS))}
LABELS = {"haar_main": "Main classes", "haar_side_source": "Side data", "haar_side": "Side classes", "haar_levels": "Levels",
          "haar_lam": "λ", "haar_per_class": "Images per class", "haar_grey": "Grey scale of the rebuilt images",
          "haar_weighting": "Coefficients multiplied by"}
views.restore_view("haar", VIEW, LABELS)
n_main = min(5, len(classes) - 1)  # Shashua & Wolf 2004 Sec. 6: five people, and a sixth as side data
settings.set_defaults({"haar_main": classes[:n_main], "haar_side_source": "side classes",
                       "haar_side": classes[n_main:n_main + 1], "haar_levels": 3, "haar_lam": 0.01, "haar_per_class": 4,
                       "haar_grey": "linear", "haar_weighting": "rank"},
                      valid={"haar_main": is_class, "haar_side": is_class,
                             "haar_side_source": lambda v: v in SIDE_SOURCES}, labels=LABELS)
views.undo_control("haar", VIEW, LABELS)
controls = st.columns([2, 2, 1, 1])
main_classes = controls[0].multiselect("Main classes", classes, key="haar_main", persist_state="session",
                                       help="Their images form the main data M (Shashua & Wolf 2004 Sec. 6: 5 people).")
side_source = controls[1].radio(
    "Side data", SIDE_SOURCES, horizontal=True, key="haar_side_source", persist_state="session",
    help="side classes: images of other classes of this set form W; uploaded side data: the side images "
         "uploaded on the Data page (as many pixels as these images) form W.")
if side_source == "side classes":
    # a class cannot be both: the side list offers (and keeps) only classes outside the main ones
    st.session_state["haar_side"] = [c for c in st.session_state["haar_side"] if c not in main_classes]
    side_classes = controls[1].multiselect("Side classes", [c for c in classes if c not in main_classes],
                                           key="haar_side", persist_state="session",
                                           help="Their images form the side data W, whose variances D are suppressed "
                                                "(Shashua & Wolf 2004 Def. 3: a sixth person).")
else:
    side_classes = []
    controls[1].caption(f"W: **{uploaded_side.name}**, {uploaded_side.n_samples:,} images.")
levels = controls[2].slider("Levels", 1, 5, key="haar_levels", persist_state="session",
                            help="Scales of the Haar decomposition (each halves the resolution).")
lam = controls[3].select_slider("λ", LAMBDAS, format_func=lambda v: f"{v:g}", key="haar_lam", persist_state="session",
                                help="lambda of (D + λI)^-1 G (Shashua & Wolf 2004 Def. 3): small values trust the side data most.")
try:
    if not main_classes or (side_source == "side classes" and not side_classes):
        raise InputError("Choose at least one main class and one side class.")
    haar = runs.run_cached("to_haar", dict(data=pixels.fingerprint, levels=levels), pixels, levels)
    main = np.isin(haar.labels, main_classes)
    if side_source == "side classes":
        side_X, side_key = haar.X[np.isin(haar.labels, side_classes)], [str(c) for c in side_classes]
    else:  # the uploaded images in the same wavelet basis (a few ms: not worth a cache entry)
        side_X, side_key = haar.family.basis.transform(uploaded_side.X), uploaded_side.fingerprint
    # the pages' solver (power steps: the sum criterion without pairs), 0.21 s per λ with Lanczos
    solver = runs.q_alpha_solver(QAlphaParameters(k=len(main_classes), lam=lam), None)
    result = runs.run_cached("q_alpha", dict(data=haar.fingerprint, main=[str(c) for c in main_classes],
                                           side=side_key, lam=lam, solver=solver),
                           haar.X[main], len(main_classes), side=side_X, lam=lam, solver=solver)
except InputError as error:
    widgets.show_error(error)
    st.stop()
widgets.convergence_warning(result, "Try another λ: with side images a small λ trusts their variances most and "
                            "can slow the iteration.")
basis = haar.family.basis
cols = widgets.row(3)
cols[0].metric("Coefficients", f"{basis.n_coefficients:,}")
widgets.gap_metric(cols[1], result.gap)
mass = basis.band_mass(result.alpha)
cols[2].metric(f"Share in the approximation band A{levels}", f"{mass[f'A{levels}']:.1%}",
               help=f"{(basis.orientation == 0).mean():.1%} of the coefficients are approximation coefficients; "
                    "a low share means the selection does not follow illumination.")
mean_face = pixels.X[np.isin(pixels.labels, main_classes)].mean(axis=0).reshape(pixels.image_shape)
choices = st.container(horizontal=True, gap="large")


def chosen(label: str, table: dict, key: str, help: str) -> tuple:
    """A radio over one of the page's tables of choices (name -> (function, label, caption's note)):
    the chosen entry."""
    name = choices.radio(label, list(table), horizontal=True, key=key, persist_state="session",
                         format_func=lambda option: table[option][1], width="content", help=help)
    return table[name]


gain_of, _, weighting_note = chosen(
    "Coefficients multiplied by", WEIGHTINGS, "haar_weighting",
    "alpha's rank: each coefficient times its rank of alpha scaled to [0, 1], so the face shows with what alpha "
    "weighs little dimmed. alpha: each coefficient times its weight, as in the paper; where a few coefficients "
    "hold most of the weight, the picture is those few blocks.")
gain = gain_of(result.alpha)
rebuilt = basis.reconstruct(mean_face, gain)[0]
# what the weighting leaves out, at the scale that matches the rebuilt image best (least squares)
scale = float(np.vdot(mean_face, rebuilt) / max(np.vdot(rebuilt, rebuilt), np.finfo(float).tiny))
stretch, _, scale_note = chosen(
    "Grey scale of the rebuilt images", GREY_SCALES, "haar_grey",
    "Rebuilt from alpha itself, the images' values span orders of magnitude: a few coarse blocks carry most of the "
    "brightness. rank: each pixel's grey is its rank among the set's pixels, so the face shows (order kept, not "
    "differences of value). linear: black and white at the set's 1st and 99th percentile, values in proportion.")
st.markdown("**The mean image of the main classes** (mean), rebuilt from its weighted Haar coefficients and scaled "
            "by least squares to match it (rebuilt), and their difference (left out: what the weighting leaves out). "
            f"**Weights:** {weighting_note}. "
            f"**Grey scale:** one per set of pictures (the three here; each class's images; their rebuilds), shared "
            f"by the set so that its pictures compare; {scale_note}. The classes' images are on a linear scale of "
            "their own set.")
# pictures, not heat maps: a λ step redraws them all, and as Plotly heat maps the rows of faces
# took 0.3 s of the browser's time per step (docs/benchmarks.md at 98003b7)
mean_row = np.stack([mean_face, scale * rebuilt, mean_face - scale * rebuilt])
widgets.picture(image_mosaic(stretch(mean_row), titles=["mean", "rebuilt", "left out"], n_cols=3),
                "mean_reconstruction")
# the same: a picture at every step, the figure with each pixel's weight under the pointer on request
spread = basis.pixel_map(result.alpha)
where_title = ("Where alpha's weight lies: each coefficient's weight spread over its footprint "
               f"(log scale, {DECADES:g} decades)")
largest = float(spread.max())
floor = largest * 10.0 ** -DECADES  # smaller weights take the floor's colour
smallest = max(float(spread.min()), floor)
widgets.picture(weight_overlay_picture(mean_face, spread, log_scale=True, decades=DECADES), "alpha_pixels",
                caption=f"{where_title}: white at {smallest:.3g}{' or less' if spread.min() < floor else ''}, through "
                        f"yellow and red to black at the largest ({largest:.3g}), over the mean image")
hover = widgets.when_open("The same map with each pixel's weight under the pointer", "haar_hover")
if hover is not None:
    widgets.chart(weight_overlay_figure(mean_face, spread, log_scale=True, decades=DECADES, title=where_title),
                  "alpha_pixels", where=hover)
per_class = st.slider("Images per class", 1, 8, key="haar_per_class", persist_state="session",
                      help="How many images of each main class to show with their reconstructions.")
# the classes' rows in one picture, a class per row: its images, then their rebuilds
shown, titles = [], []
# as many images of every class (a class may have fewer than asked for)
per_class = min(per_class, *(int(np.sum(pixels.labels == label)) for label in main_classes))
for label in main_classes:
    images = pixels.images()[pixels.labels == label][:per_class]
    rebuilt = basis.reconstruct(images, gain)
    shown += [contrast_stretch(images, shared=True), stretch(rebuilt)]  # one grey scale per set
    titles += [f"class {label}"] + [""] * (per_class - 1) + ["rebuilt"] + [""] * (per_class - 1)
widgets.picture(image_mosaic(np.concatenate(shown), titles=titles, n_cols=2 * per_class), "class_rows",
                caption="Each main class: its images (left) and their rebuilds (right)")
widgets.chart(band_mass_figure(mass), "band_mass")
ranking = result.ranking
download = widgets.row(2)
download[0].download_button(
    "Coefficient weights (CSV)",
    partial(downloads.table_csv, {"rank": np.arange(1, basis.n_coefficients + 1),
                                  "coefficient": np.asarray(haar.feature_names)[ranking], "alpha": result.alpha[ranking]}),
    file_name=downloads.file_name(pixels.name, "haar-alpha", "csv"), mime="text/csv", key="haar_csv", on_click="ignore")
download[1].download_button(
    "Parameters and alpha mass per band (JSON)",
    json.dumps(dict(data_set=pixels.name, main_classes=[str(c) for c in main_classes],
                    side_data=side_source, side_classes=[str(c) for c in side_classes],
                    side_data_set=uploaded_side.name if side_source == "uploaded side data" else None,
                    levels=levels, lam=lam, solver=solver, grey_scale_of_rebuilt_images=st.session_state["haar_grey"],
                    rebuilt_coefficients_multiplied_by=st.session_state["haar_weighting"],
                    band_mass={band: float(share) for band, share in mass.items()}), indent=1),
    file_name=downloads.file_name(pixels.name, "haar-parameters", "json"), mime="application/json", key="haar_json", on_click="ignore")
widgets.snippet("Python: these reconstructions in a notebook", "haar_snippet",
                lambda: snippets.haar_snippet(pixels, datasets.is_bundled(pixels), main_classes, side_classes, levels,
                                              lam, solver,
                                              side=uploaded_side if side_source == "uploaded side data" else None))
views.share_view(VIEW)
