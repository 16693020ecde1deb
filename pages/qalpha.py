"""Q-alpha: run the selection on the current data set, tune k and lambda, look at the weights."""

import json

import numpy as np
import streamlit as st

from core import InputError
from core.plots import history_figure, sorted_weights_figure, weight_overlay_figure
from core.qalpha import pairs_from_labels
from pages import ui

LAMBDAS = [0.0, 1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0]

data = ui.current_dataset()
st.title("Q-alpha")
st.caption("Wolf & Shashua, ICCV 2003 (Definition 2); side information and pairs: Shashua & Wolf, "
           "ECCV 2004 (Definition 3, Sec. 5). The weights alpha come out positive and sparse "
           "without being asked to.")

has_labels = data.labels is not None and data.classes.size >= 2
controls, view = st.columns([1, 2.4], gap="large")
with controls:
    supervised = st.toggle(
        "Supervised (use the labels)", value=False, disabled=not has_labels,
        help="Fix Q to the orthonormalised, centred class indicators, so alpha weighs features by "
             "how well they separate the classes (one eigenproblem). Needs labels.")
    k = st.number_input(
        "k — number of clusters", min_value=1, max_value=max(1, min(50, data.n_samples - 1)),
        value=int(min(max(data.classes.size, 2) if has_labels else 2, data.n_samples - 1)),
        disabled=supervised,
        help="k in Eq. (1): the number of leading eigenvalues of the affinity A_alpha whose "
             "squares are maximised (002 Sec. 2). Supervised mode uses classes - 1.")
    criterion = st.selectbox(
        "Criterion", ["sum", "gap"], format_func={"sum": "sum of k largest eigenvalues²",
                                                   "gap": "spectral gap"}.get,
        help="sum: Eq. (1) of 002. gap: sum of the k largest squared eigenvalues minus the rest.")
    side_options = ["none"] + (["side classes", "pairs"] if has_labels else [])
    side_mode = st.radio(
        "Side information", side_options, horizontal=True,
        help="side classes: samples of the chosen classes form the side data W; features that vary "
             "within them are suppressed (000 Def. 3). pairs: random pairs of samples from "
             "different classes that must stay apart (000 Sec. 5).")
    side_classes, n_pairs = [], 0
    if side_mode == "side classes":
        side_classes = st.multiselect(
            "Side classes", [c.item() if hasattr(c, "item") else c for c in data.classes],
            default=[data.classes[-1].item()] if data.classes.size else [],
            help="Their samples become the side data; the other samples are the main data.")
    elif side_mode == "pairs":
        n_pairs = st.slider("Number of pairs", 1, 500, 50,
                            help="Pairs drawn at random among samples with different labels.")
    lam = st.select_slider(
        "λ — weight of the side information", options=LAMBDAS,
        value=0.1, format_func=lambda v: f"{v:g}", disabled=side_mode == "none",
        help="lambda of 000 Eq. (2) / (3). With side data: alpha is the leading eigenvector of "
             "(D + λI)^-1 G — small λ trusts the side data most (λ = 0 needs every side variance "
             "positive). With pairs: of G − λB.")
    with st.expander("Iteration"):
        init = st.selectbox("Initial Q", ["uniform", "random"],
                            help="uniform: the k leading eigenvectors of the affinity with equal "
                                 "weights; random: a random orthonormal matrix.")
        n_init = st.number_input("Starts", 1, 20, 1, help="The best of several starts (objective).")
        max_iter = st.number_input("Maximum iterations", 10, 5000, 500)
        tol = st.select_slider("Tolerance on the change of alpha", [1e-3, 1e-4, 1e-5, 1e-6, 1e-8],
                               value=1e-6, format_func=lambda v: f"{v:g}")
        seed = st.number_input("random_state", 0, 10_000, 0)

params = dict(supervised=supervised, k=int(k), criterion=criterion, side_mode=side_mode,
              side_classes=[str(c) for c in side_classes], n_pairs=int(n_pairs),
              lam=float(lam) if side_mode != "none" else 0.0, init=init, n_init=int(n_init),
              max_iter=int(max_iter), tol=float(tol), random_state=int(seed))

try:
    if side_mode == "side classes":
        if not side_classes:
            raise InputError("Choose at least one side class, or switch side information off.")
        main, side = data.split_by_class(side_classes)
    else:
        main, side = data, None
    pairs = (pairs_from_labels(main.labels, n_pairs, random_state=int(seed))
             if side_mode == "pairs" else None)
    with view:
        result = ui.run_q_alpha(main, side, pairs, params)
except InputError as error:
    with view:
        ui.show_error(error)
    st.stop()

with view:
    n_selected = result.n_selected
    cols = st.columns(4)
    cols[0].metric("Selected (sparsity gap)", f"{n_selected:,}",
                   help=f"of {main.n_features:,} features: the count above the break in the sorted weights")
    cols[1].metric("Iterations", result.n_iter, help="converged" if result.converged else "not converged")
    cols[2].metric("Objective", f"{result.objective:.5g}")
    cols[3].metric("Weights ≥ 0", f"{np.mean(result.alpha >= -1e-6 * result.alpha.max()):.1%}")
    if not result.converged:
        st.warning(f"Not converged after {result.n_iter} iterations (tolerance {tol:g}); raise the "
                   "maximum or loosen the tolerance.")
    log_y = st.toggle("Log scale", value=False, help="Draw the sorted weights on a log axis.")
    st.plotly_chart(sorted_weights_figure(result.alpha, main.feature_names, n_selected, log_y=log_y),
                    key="sorted_alpha")
    pixels = main.meta.get("pixels")
    if main.is_image or pixels is not None:
        top_k = st.slider("Show the top K features on the mean image", 1, main.n_features,
                          min(max(n_selected, 1), main.n_features))
        top = result.top(top_k)
        if main.is_image:
            background, weights, shape, marked = main.X.mean(axis=0), result.alpha, main.image_shape, top
        else:  # a feature family of images: draw the weights back in pixel space
            background, shape, marked = pixels.X.mean(axis=0), pixels.image_shape, None
            kept = np.zeros(main.n_features)
            kept[top] = result.alpha[top]
            weights = (main.meta["basis"].pixel_map(kept) if main.kind == "haar"
                       else main.meta["features"].selection_map(top, result.alpha[top]))
        st.plotly_chart(weight_overlay_figure(background, weights, shape, selected=marked,
                                              title=f"alpha over the mean image, top {top_k}"),
                        key="overlay")
    st.plotly_chart(history_figure(result.history), key="history")
    ranking = result.ranking
    table = {"rank": np.arange(1, main.n_features + 1), "feature": np.asarray(main.feature_names)[ranking],
             "alpha": result.alpha[ranking]}
    st.dataframe({key: values[:50] for key, values in table.items()}, hide_index=True, height=240)
    download = st.columns(4 if main.is_image else 3)
    download[0].download_button(
        "Weights and ranking (CSV)", ui.table_csv(table), file_name=f"{main.name}-qalpha.csv",
        mime="text/csv")
    download[1].download_button(
        "Parameters (JSON)", json.dumps(dict(params, data_set=data.name), indent=1),
        file_name=f"{main.name}-qalpha-parameters.json", mime="application/json")
    selected = np.sort(result.top(n_selected))
    subset = {"sample": list(main.sample_names)}
    if main.labels is not None:
        subset["label"] = list(main.labels)
    subset.update({main.feature_names[j]: main.X[:, j] for j in selected})
    download[2].download_button(
        f"Data, {n_selected} selected features (CSV)", ui.table_csv(subset),
        file_name=f"{main.name}-selected.csv", mime="text/csv")
    if main.is_image:
        mask = np.zeros(main.n_features, dtype=bool)
        mask[selected] = True
        download[3].download_button("Selection mask (PNG)", ui.mask_png(main.to_image(mask)),
                                    file_name=f"{main.name}-mask.png", mime="image/png")
