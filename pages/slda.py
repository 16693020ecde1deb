"""Sparse LDA / PCA: greedy curves for every cardinality, the selected mask, exact search."""

import json
import time
from functools import partial

import numpy as np
import streamlit as st

from core import InputError
from core.plots import (heatmap_picture, image_figure, slda_curves_figure, weight_overlay_figure,
                        weight_overlay_picture)
from core.selection.exact import EXACT_LIMIT
from core.selection.slda import greedy_slda
from core.selection.spca import greedy_spca, sparse_eigenvector
from pages.ui import datasets, downloads, estimates, runs, sample_map, session, settings, snippets, views, widgets

session.page_start()

# greedy sparse PCA is offered while it stays under 10 s (8.1 s at 340 features: pages/ui/estimates.py)
SPCA_LIMIT = 340
LONG_RUN = 2.0  # seconds from which the page says how long and offers Stop
EPSILONS = [1e-6, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0]
METHODS = ["dual", "forward", "backward", "fisher"]
#: The class means with the selected pixels are pictures about this high (two side by side).
MASK_PICTURE_HEIGHT = 360

data = datasets.current_dataset()
st.title("Sparse LDA / PCA")
st.caption("Moghaddam, Weiss & Avidan, ICCV 2007: greedy forward, backward and dual-pass search for "
           "every cardinality at once (Schur-complement updates, applied in blocks), Fisher thresholding and the "
           "Eq. 5 bound.")
classes = datasets.class_values(data)
VIEW = {
    "slda_first": views.choice_of(classes), "slda_second": views.choice_of(classes),
    "slda_reg_mode": views.choice_of(["automatic", "fixed"]), "slda_eps": views.choice_of(EPSILONS),
    "slda_exact": views.flag, "slda_log": views.flag, "slda_k": views.integer_in(1, data.n_features),
    "slda_method": views.choice_of(METHODS), "spca_k": views.integer_in(1, data.n_features)}
LABELS = {"slda_first": "Class A", "slda_second": "Class B", "slda_reg_mode": "Regularisation of the within-class "
          "scatter B", "slda_eps": "eps", "slda_exact": "Exact branch-and-bound", "slda_log": "Log scale",
          "slda_k": "k — number of features", "slda_method": "Subset", "spca_k": "k — number of features (sparse PCA)"}
views.restore_view("slda", VIEW, LABELS)
settings.set_defaults({"slda_first": classes[0] if classes else None,
                 "slda_second": classes[1] if len(classes) > 1 else None,
                 "slda_reg_mode": "automatic", "slda_eps": 1e-2, "slda_exact": False, "slda_log": False,
                 "slda_k": min(10, data.n_features), "slda_method": "dual",
                 "spca_k": max(1, data.n_features // 2)},
                valid={"slda_first": lambda v: v in classes, "slda_second": lambda v: v in classes,
                       "slda_k": lambda v: v <= data.n_features, "spca_k": lambda v: v <= data.n_features},
                labels=LABELS, per_data=("slda_k", "spca_k"))
settings.show_settings_notes()
views.undo_control("slda", VIEW, LABELS)


def modelled_run(name, key, compute, *, n, seconds, rate_from=64, what, kept_for, phases, stages, ask=None):
    """``compute(progress)`` once per ``key``, for the page's runs with a cost model ``seconds()``
    (:mod:`pages.ui.estimates`): the estimate is the model's, scaled by how the session's last
    run compared with it (a machine busier or faster than the model's). From :data:`LONG_RUN`
    on, the page says how long it will take before it starts, offers Stop and, with ``ask``
    (a button's label and help), waits for that button (both tabs run on every rerun: a run the
    other tab's user did not ask for must not hold the page); the notice goes once the run is over.
    A progress bar says ``stages`` before the first step, then names the pass (``phases``: the
    first and second half of the steps). None when it waits for the button.
    """
    ratio_key = f"{name}_over_model"
    modelled = seconds()
    ratio = st.session_state.get(ratio_key)
    estimate = modelled * (ratio or 1.0)
    notice = st.empty()
    if estimate >= LONG_RUN and not runs.is_memoised(key):
        basis = ("the cost model measured on this machine" if ratio is None
                 else f"the cost model x {ratio:.2g}, as this session's last run")
        with notice.container():
            st.caption(f"{what} on {n:,} features takes about {estimate:.0f} s here ({basis}); the result is "
                       f"kept for {kept_for}.")
            if ask is not None:
                label, help_text = ask
                if not st.button(f"{label} (about {estimate:.0f} s)", key=f"{name}_run", type="primary",
                                 help=help_text):
                    return None
                st.session_state[f"{name}_stopped"] = False  # pressing the button is starting again

    def run(progress):
        start = time.perf_counter()
        result = compute(progress)
        if n >= rate_from:  # below, fixed costs would distort the ratio
            st.session_state[ratio_key] = (time.perf_counter() - start) / modelled
        return result

    def status(elapsed, calls, report):
        phase = phases[0] if 2 * report.done <= report.total + 1 else phases[1]  # totals 2n or 2n - 1
        return report.fraction, (f"{what}, {phase}: {report.done:,} of {report.total:,} steps, {elapsed:.1f} s "
                                 f"of about {estimate:.0f} s")

    result = runs.run_with_progress(key, run, stop=name, status=status, keep=lambda result: True,
                                    text=f"{what} on {n:,} features: {stages} (about {estimate:.0f} s in all)")
    notice.empty()
    if runs.is_stopped(name) and not runs.is_memoised(key):
        runs.stop_control(name)  # what Stop left: the last result of this data set, and Resume
    return result


def run_slda(data, keep, pair, reg):
    """greedy_slda on the pair's samples, kept once computed (full-resolution images take seconds)."""
    n = data.n_features
    key = json.dumps(dict(data=data.fingerprint, classes=[str(c) for c in pair], reg=reg), sort_keys=True)
    # the scatter's factorisations come before the first pass step (about a fifth of the run)
    return modelled_run(
        "slda", key, lambda progress: greedy_slda(data.X[keep], data.labels[keep], classes=pair, reg=reg,
                                                  progress=progress),
        n=n, seconds=partial(estimates.slda_seconds, n, int(keep.sum()), reg=reg), rate_from=1024, what="Sparse LDA", kept_for="this pair", phases=("backward pass", "forward pass"),
        stages=f"forming the within-class scatter, then two passes of {n:,} steps")


def run_spca(data):
    """greedy_spca on the data set, kept once computed; None until asked for when it is long."""
    n = data.n_features
    return modelled_run(
        "spca", json.dumps(dict(data=data.fingerprint, method="greedy_spca"), sort_keys=True),
        lambda progress: greedy_spca(data.X, progress=progress), n=n, seconds=partial(estimates.spca_seconds, n),
        what="Greedy sparse PCA", kept_for="this data set", phases=("forward pass", "backward pass"),
        ask=("Compute sparse PCA", "Forward and backward greedy search for every cardinality (Moghaddam et al. 2007 Sec. 6)."),
        stages=f"a forward and a backward pass of {n:,} steps")


@st.fragment
def discriminant_view(path, first, second, reg, means) -> None:
    """Everything that follows k and the subset rule (the separability, the selected pixels on both
    class ``means``, the downloads, the snippet). A fragment: a step of the k slider reruns only this
    part, not the curves, the metrics and the other tab above and below it."""
    n = data.n_features
    k = st.slider("k — number of features", 1, n, key="slda_k", persist_state="session",
                  help="Cardinality k of the sparse discriminant whose pixels are shown.")
    method = st.radio("Subset", METHODS, horizontal=True, key="slda_method", persist_state="session",
                      help="dual: the better of the forward and backward greedy passes for this k; "
                           "fisher: the k largest loadings of the Fisher vector B^-1 a.")
    subset = path.subset(k, method)
    weights = path.discriminant(k, method)
    objective = {"dual": path.dual_objective, "forward": path.forward_objective,
                 "backward": path.backward_objective, "fisher": path.fisher_objective}[method]
    st.markdown(f"Separability of the {k} features: **{objective[k - 1]:.4g}** "
                f"({100 * objective[k - 1] / path.lambda_max:.1f}% of all features').")
    if data.is_image:
        mask = np.zeros(n)
        mask[subset] = 1.0
        # pictures, shown at once at every step of k (two heat maps were drawn anew by Plotly at
        # each); the same as figures, each pixel's value under the pointer, on request
        for column, (label, mean) in zip(st.columns(2), means.items()):
            with column:
                widgets.picture(weight_overlay_picture(mean, mask, data.image_shape, selected=subset, opacity=0.0,
                                                       image_height=MASK_PICTURE_HEIGHT),
                                f"mask_{label}", caption=f"class {label} mean, {k} selected (outlined in blue)")
        loadings = widgets.when_open("The discriminant's loadings as a weight map", "slda_loadings_open")
        if loadings is not None:
            with loadings:  # |w| of the k selected pixels over the image, in a colour map with its bar
                widgets.pixel_view(data, np.abs(weights), subset, "slda_loadings", what="|loading|")
        hover = widgets.when_open("The same with each pixel's value under the pointer", "slda_hover")
        if hover is not None:
            for column, (label, mean) in zip(hover.columns(2), means.items()):
                widgets.chart(weight_overlay_figure(mean, mask, data.image_shape, selected=subset,
                                                    title=f"class {label} mean, {k} selected", opacity=0.0),
                              f"mask_{label}", where=column)
    else:
        st.dataframe({"feature": [data.feature_names[j] for j in subset],
                      "weight": weights[subset]}, hide_index=True)
    sample_map.selection_map(data, subset, n_clusters=2, seed=0, key="slda_samples", rows=np.isin(data.labels, [first, second]),
                             what="the {k} features of the sparse discriminant" + f" (classes {first} and {second})")
    parameters = dict(data_set=data.name, classes=[str(first), str(second)], reg=path.reg, k=k,
                      method=method, selected=[data.feature_names[j] for j in np.sort(subset)])
    download = widgets.row(4 if data.is_image else 3)
    download[0].download_button(
        "Curves against k (CSV)", partial(downloads.table_csv, {
            "k": np.arange(1, n + 1), "forward": path.forward_objective, "backward": path.backward_objective,
            "dual": path.dual_objective, "fisher": path.fisher_objective, "bound": path.bound}),
        file_name=downloads.file_name(data.name, "slda-curves", "csv"), mime="text/csv", key="slda_curves_csv", on_click="ignore")
    download[1].download_button(
        f"Data, {k} selected features (CSV)", partial(downloads.selected_data_csv, data, subset),  # on click
        file_name=downloads.file_name(data.name, "slda-selected", "csv"), mime="text/csv", key="slda_subset_csv", on_click="ignore")
    download[2].download_button(
        "Parameters and weights (JSON)",
        json.dumps(dict(parameters, weights=[float(weights[j]) for j in np.sort(subset)]), indent=1),
        file_name=downloads.file_name(data.name, "slda-parameters", "json"), mime="application/json", key="slda_json",
        on_click="ignore")
    if data.is_image:
        download[3].download_button("Selection mask (PNG)", partial(downloads.mask_png, data.to_image(mask > 0)),
                                    file_name=downloads.file_name(data.name, "slda-mask", "png"), mime="image/png",
                                    key="slda_mask_png", on_click="ignore")
    widgets.snippet("Python: this discriminant in a notebook", "slda_snippet",
                    lambda: snippets.slda_snippet(data, datasets.is_bundled(data), first, second, reg, k, method))
    views.share_view(VIEW)  # the link follows k too (the page's own reruns share it at the end)


@st.fragment
def principal_view(path) -> None:
    """Everything that follows the sparse PCA k (the variance, the sparse eigenvector, its
    download and snippet). A fragment: a step of its slider reruns only this part, not the curves
    and the sparse LDA tab."""
    n = data.n_features
    k = st.slider("k — number of features", 1, n, key="spca_k", persist_state="session",
                  help="Cardinality k of the sparse eigenvector (Moghaddam et al. 2007 Fig. 2/4).")
    vector = sparse_eigenvector(path, k)
    st.markdown(f"Variance of the k = {k} sparse eigenvector: {path.dual_objective[k - 1]:.4g} "
                f"({path.dual_objective[k - 1] / path.upper_bound:.1%} of the full leading eigenvalue).")
    if data.is_image:
        # a picture, shown at once at every step of k; the figure (each loading under the pointer)
        # on request. One range symmetric about 0 for both: the pixels left out are 0, white
        limit = max(float(np.abs(vector).max()), 1e-12)
        title = f"Sparse eigenface, k = {k}"
        widgets.picture(heatmap_picture(vector, data.image_shape, "RdBu", -limit, limit), "eigenface",
                        caption=f"{title}: red at {-limit:.3g}, white at 0 (the {n - k:,} pixels left out), "
                                f"blue at {limit:.3g}")
        hover = widgets.when_open("The same with each pixel's loading under the pointer", "spca_hover")
        if hover is not None:
            widgets.chart(image_figure(vector, data.image_shape, title=title, colorscale="RdBu", showscale=True,
                                       zmin=-limit, zmax=limit), "eigenface", where=hover)
    st.download_button(
        f"Sparse eigenvector, k = {k} (CSV)",
        partial(downloads.table_csv, {"feature": list(data.feature_names), "loading": vector}),
        file_name=downloads.file_name(data.name, f"spca-k{k}", "csv"), mime="text/csv", key="spca_csv", on_click="ignore")
    widgets.snippet("Python: this sparse eigenvector in a notebook", "spca_snippet",
                    lambda: snippets.spca_snippet(data, datasets.is_bundled(data), k))
    views.share_view(VIEW)  # the link follows k too


lda_tab, pca_tab = st.tabs(["Sparse LDA (two classes)", "Sparse PCA"])

with lda_tab:
    if data.labels is None or data.classes.size < 2:
        st.info("Sparse LDA needs labels with at least two classes; choose or upload a labelled data set.")
    else:
        left, right = st.columns(2)
        first = left.selectbox("Class A", classes, key="slda_first", persist_state="session",
                               help="a = mean of class B minus mean of class A (Moghaddam et al. 2007 Sec. 4).")
        second = right.selectbox("Class B", classes, key="slda_second", persist_state="session", help="The other class of the pair.")
        reg_mode = st.radio("Regularisation of the within-class scatter B", ["automatic", "fixed"],
                            horizontal=True, key="slda_reg_mode", persist_state="session", width="stretch",
                            help="B is singular when there are fewer samples than "
                            "features: a ridge eps I is added; automatic uses 1e-3 x mean diagonal.")
        reg = None if reg_mode == "automatic" else st.select_slider(
            "eps", EPSILONS, format_func=lambda v: f"{v:g}", key="slda_eps", persist_state="session",
            help="The ridge eps of B + eps I.")
        try:
            if first == second:
                raise InputError("Choose two different classes.")
            keep = np.isin(data.labels, [first, second])
            path = run_slda(data, keep, (first, second), reg)
        except InputError as error:
            widgets.show_error(error)
            path = None
        if path is not None:
            n = data.n_features
            cols = widgets.row(3)
            cols[0].metric("lambda_max(A, B), all features", f"{path.lambda_max:.4g}")
            cols[1].metric("Regularisation used", f"{path.reg:.3g}")
            cols[2].metric("Optimal single feature", data.feature_names[path.best_single_feature])
            exact = None
            if n <= EXACT_LIMIT and st.checkbox(f"Exact branch-and-bound ({n} features; exponential cost)",
                                                key="slda_exact", persist_state="session",
                                                help="The global optimum for every k (Moghaddam et al. 2007 Sec. 3), pruned by the bounds."):
                exact = runs.run_cached("exact_slda", dict(data=data.fingerprint, classes=[str(first), str(second)], reg=reg),
                                      a=path.a, B=path.B).objective
            log_y = st.toggle("Log scale", key="slda_log", persist_state="session", help="Draw the objectives on a log axis.")
            widgets.chart(slda_curves_figure(path.forward_objective, path.backward_objective,
                                             path.fisher_objective, bound=path.bound, exact=exact,
                                             log_y=log_y), "slda_curves")
            best = float(np.nanmax(path.backward_objective))
            if not log_y and np.nanmax(path.bound) < 0.01 * best:
                # S_k / lambda_max(B) bounds the optimum from below through B's largest eigenvalue,
                # while the objectives grow with 1 / its smallest: with many pixels the two differ
                # by orders of magnitude, and the bound lies on the axis
                st.caption(f"The Eq. 5 bound is correct but loose here: at most {np.nanmax(path.bound):.3g}, under 1% "
                           f"of the greedy objective ({best:.3g}), so it lies on the axis; switch on the log scale "
                           "to see it.")
            # the two class means of images, at the page's runs (not at every step of k)
            means = ({label: data.X[data.labels == label].mean(axis=0) for label in (first, second)}
                     if data.is_image else None)
            discriminant_view(path, first, second, reg, means)

with pca_tab:
    if data.n_features > SPCA_LIMIT:
        st.info(f"Greedy sparse PCA solves an eigenproblem per candidate: it is offered up to "
                f"{SPCA_LIMIT} features (this set has {data.n_features:,}). On the Data page a table of "
                f"non-negative values can keep its {SPCA_LIMIT} most variable features (Values), and images "
                "can switch to coarser features; or pick a smaller image set (digits, Yale 32x32 down-sampled).")
    elif (path := run_spca(data)) is not None:
        fig = slda_curves_figure(path.forward_objective, path.backward_objective,
                                 np.full(data.n_features, np.nan),
                                 title="Sparse PCA: variance of the leading sparse eigenvector")
        fig.update_layout(yaxis_title="variance captured")
        widgets.chart(fig, "spca_curves")
        principal_view(path)
views.share_view(VIEW)
