"""Haar reconstructions: images rebuilt from alpha-weighted wavelet coefficients (Shashua & Wolf 2004 Fig. 3c, 3d)."""

import json

import numpy as np
import streamlit as st

from core import InputError
from core.plots import band_mass_figure, contrast_stretch, image_grid_figure, weight_overlay_figure
from pages.ui import datasets, downloads, runs, session, settings, snippets, views, widgets

session.page_start()

data = datasets.current_dataset()
pixels = data.family.images if data.family is not None else None
st.title("Haar reconstructions")
st.caption("Q-alpha with side information on Haar wavelet coefficients; the selection is shown by "
           "rebuilding images from their coefficients multiplied by alpha (Shashua & Wolf, ECCV 2004, "
           "Sec. 6, Fig. 3c/3d).")
if pixels is None or pixels.labels is None or pixels.classes.size < 3:
    st.info("This page needs a labelled image set with at least three classes (main classes and a "
            "side class), e.g. the AR faces.")
    st.stop()
classes = datasets.class_values(pixels)
LAMBDAS = [0.001, 0.01, 0.1, 1.0]
is_class = lambda values: all(c in classes for c in values)  # noqa: E731
VIEW = {"haar_main": lambda v: [views.choice_of(classes)(c) for c in v],
        "haar_side": lambda v: [views.choice_of(classes)(c) for c in v],
        "haar_levels": views.integer_in(1, 5), "haar_lam": views.choice_of(LAMBDAS), "haar_per_class": views.integer_in(1, 8)}
LABELS = {"haar_main": "Main classes", "haar_side": "Side classes", "haar_levels": "Levels", "haar_lam": "λ",
          "haar_per_class": "Images per class"}
views.restore_view("haar", VIEW, LABELS)
n_main = min(5, len(classes) - 1)  # Shashua & Wolf 2004 Sec. 6: five people, and a sixth as side data
settings.set_defaults({"haar_main": classes[:n_main], "haar_side": classes[n_main:n_main + 1], "haar_levels": 3,
                 "haar_lam": 0.01, "haar_per_class": 4},
                valid={"haar_main": is_class, "haar_side": is_class}, labels=LABELS)
controls = st.columns([2, 2, 1, 1])
main_classes = controls[0].multiselect("Main classes", classes, key="haar_main", persist_state="session",
                                       help="Their images form the main data M (Shashua & Wolf 2004 Sec. 6: 5 people).")
# a class cannot be both: the side list offers (and keeps) only classes outside the main ones
st.session_state["haar_side"] = [c for c in st.session_state["haar_side"] if c not in main_classes]
side_classes = controls[1].multiselect("Side classes", [c for c in classes if c not in main_classes],
                                       key="haar_side", persist_state="session",
                                       help="Their images form the side data W, whose variances D are suppressed "
                                            "(Shashua & Wolf 2004 Def. 3: a sixth person).")
levels = controls[2].slider("Levels", 1, 5, key="haar_levels", persist_state="session",
                            help="Scales of the Haar decomposition (each halves the resolution).")
lam = controls[3].select_slider("λ", LAMBDAS, format_func=lambda v: f"{v:g}", key="haar_lam", persist_state="session",
                                help="lambda of (D + λI)^-1 G (Shashua & Wolf 2004 Def. 3): small values trust the side data most.")
try:
    if not main_classes or not side_classes:
        raise InputError("Choose at least one main class and one side class.")
    haar = runs.run_cached("to_haar", dict(data=pixels.fingerprint, levels=levels), pixels, levels)
    main = np.isin(haar.labels, main_classes)
    side = np.isin(haar.labels, side_classes)
    result = runs.run_cached("q_alpha", dict(data=haar.fingerprint, main=[str(c) for c in main_classes],
                                           side=[str(c) for c in side_classes], lam=lam),
                           haar.X[main], len(main_classes), side=haar.X[side], lam=lam)
except InputError as error:
    widgets.show_error(error)
    st.stop()
basis = haar.family.basis
cols = widgets.row(3)
cols[0].metric("Coefficients", f"{basis.n_coefficients:,}")
widgets.gap_metric(cols[1], result.gap)
mass = basis.band_mass(result.alpha)
cols[2].metric(f"Share in the approximation band A{levels}", f"{mass[f'A{levels}']:.1%}",
               help=f"{(basis.orientation == 0).mean():.1%} of the coefficients are approximation coefficients; "
                    "a low share means the selection does not follow illumination.")
mean_face = pixels.X[np.isin(pixels.labels, main_classes)].mean(axis=0).reshape(pixels.image_shape)
rebuilt = basis.reconstruct(mean_face, result.alpha)[0]
# what the weighting leaves out, at the scale that matches the rebuilt image best (least squares)
scale = float(np.vdot(mean_face, rebuilt) / max(np.vdot(rebuilt, rebuilt), np.finfo(float).tiny))
st.markdown("**The mean image of the main classes**, rebuilt from its alpha-weighted coefficients, and "
            "their difference (what alpha leaves out, at the scale that matches best). Each picture is stretched between its 1st and 99th percentile: the weights span orders of magnitude, "
            "so unstretched they leave a few bright blocks on grey.")
widgets.chart(image_grid_figure(
  contrast_stretch(np.stack([mean_face, rebuilt, mean_face - scale * rebuilt])),
  titles=["mean image", "alpha-weighted", "difference"],
  n_cols=3, zmin=0, zmax=1), "mean_reconstruction")
widgets.chart(weight_overlay_figure(mean_face, basis.pixel_map(result.alpha), log_scale=True,
                                    title="Where alpha's weight lies: each coefficient's weight spread over its "
                                          "footprint (log scale, 3 decades)"), "alpha_pixels")
per_class = st.slider("Images per class", 1, 8, key="haar_per_class", persist_state="session",
                      help="How many images of each main class to show with their reconstructions.")
for label in main_classes:
    images = pixels.images()[pixels.labels == label][:per_class]
    rebuilt = basis.reconstruct(images, result.alpha)
    widgets.chart(image_grid_figure(contrast_stretch(np.concatenate([images, rebuilt])), n_cols=per_class,
                                    zmin=0, zmax=1, title=f"class {label}: originals (top), rebuilt (bottom)"), f"class_{label}")
widgets.chart(band_mass_figure(mass), "band_mass")
ranking = result.ranking
download = widgets.row(2)
download[0].download_button(
    "Coefficient weights (CSV)",
    downloads.table_csv({"rank": np.arange(1, basis.n_coefficients + 1), "coefficient": np.asarray(haar.feature_names)[ranking],
                  "alpha": result.alpha[ranking]}),
    file_name=f"{pixels.name}-haar-alpha.csv", mime="text/csv", key="haar_csv")
download[1].download_button(
    "Parameters and alpha mass per band (JSON)",
    json.dumps(dict(data_set=pixels.name, main_classes=[str(c) for c in main_classes],
                    side_classes=[str(c) for c in side_classes], levels=levels, lam=lam,
                    band_mass={band: float(share) for band, share in mass.items()}), indent=1),
    file_name=f"{pixels.name}-haar-parameters.json", mime="application/json", key="haar_json")
with st.expander("Python: these reconstructions in a notebook"):
    st.code(snippets.haar_snippet(pixels, datasets.is_bundled(pixels), main_classes, side_classes, levels, lam),
            language="python")
views.share_view(VIEW)
