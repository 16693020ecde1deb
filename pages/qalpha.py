"""Q-alpha: run the selection on the current data set, tune k and lambda, look at the weights."""

from dataclasses import asdict, replace
from functools import partial

import numpy as np
import streamlit as st

from core import InputError
from core.plots import gap_strength_figure, history_figure, lambda_path_figure, sorted_weights_figure
from core.selection.qalpha import CRITERION_NAMES, QAlphaParameters
from pages.ui import (datasets, estimates, markers, runs, sample_map, scrubber, selection, session, settings, snippets, views,
                      widgets)

session.page_start()

LAMBDAS = settings.QALPHA_LAMBDAS
TOLERANCES = [1e-3, 1e-4, 1e-5, 1e-6, 1e-8]
PATH_LAMBDAS = settings.QALPHA_PATH_LAMBDAS

data = datasets.current_dataset()
st.title("Q-alpha")
st.caption("Wolf & Shashua, ICCV 2003 (Definition 2); side information and pairs: Shashua & Wolf, "
           "ECCV 2004 (Definition 3, Sec. 5). Unsupervised, the weights alpha come out positive and sparse "
           "without being asked to (with probability close to 1 once there are more than about 20 features, "
           "Wolf & Shashua 2003 Fig. 1a); with side information, pairs or labels nothing keeps them positive.")

has_labels = data.labels is not None and data.classes.size >= 2
class_values = datasets.class_values(data)
max_k = settings.qalpha_max_k(data)
uploaded_side = datasets.current_side_dataset()

def side_choices() -> list:
    """The side information this data set offers now (picked samples once rows were picked, by
    hand or by the link restored first)."""
    return settings.qalpha_side_options(data, uploaded_side is not None, datasets.picked_rows(data) is not None)


VIEW = {
    "qa_side_rows": lambda v: datasets.picked_from_link(data, v), "qa_supervised": views.flag, "qa_auto": views.flag, "qa_k": views.integer_in(1, max_k), "qa_criterion": views.choice_of(list(CRITERION_NAMES)),
    "qa_side_mode": lambda v: views.choice_of(side_choices())(v), "qa_n_pairs": views.integer_in(1, 500),
    "qa_side_classes": lambda v: [views.choice_of(class_values)(c) for c in v],
    "qa_lambda": views.choice_of(LAMBDAS), "qa_init": views.choice_of(["uniform", "random"]),
    "qa_n_init": views.integer_in(1, 20), "qa_max_iter": views.integer_in(10, 5000),
    "qa_tol": views.choice_of(TOLERANCES), "qa_seed": views.integer_in(0, 10_000),
    "qa_top_k": views.integer_in(1, data.n_features), "qa_colour_by": sample_map.colour_choice(data)}
#: The settings as the page labels them (notes about a link or a new data set name them so)
LABELS = {"qa_supervised": "Supervised", "qa_auto": "Choose k and λ from the data", "qa_k": "k — number of clusters", "qa_criterion": "Criterion",
          "qa_side_rows": "Samples picked on the map", "qa_side_mode": "Side information", "qa_n_pairs": "Number of pairs", "qa_side_classes": "Side classes",
          "qa_lambda": "λ — weight of the side information", "qa_init": "Initial Q", "qa_n_init": "Starts",
          "qa_max_iter": "Maximum iterations", "qa_tol": "Tolerance on the residuals", "qa_seed": "random_state",
          "qa_top_k": "K — top features to show and to cluster with", "qa_colour_by": "Colour the map by"}
views.restore_view("qalpha", VIEW, LABELS)
picked = datasets.picked_rows(data)  # samples picked on the map and made the side data
side_options = side_choices()
if "qa_top_k" in st.query_params and "qa_top_k" in st.session_state:
    st.session_state.setdefault("qa_top_k_set", True)  # a link that names K keeps it
settings.set_defaults(settings.qalpha_defaults(data), labels=LABELS, per_data=("qa_k",),
                      valid={"qa_side_mode": lambda v: v in side_options, "qa_supervised": lambda v: has_labels or not v,
                             "qa_k": lambda v: v <= max_k, "qa_colour_by": sample_map.colour_choice(data, judge=True)})
# side classes left from another data set: the ones this data set has stay; none left, the default
kept_classes = [c for c in st.session_state["qa_side_classes"] if c in class_values]
if kept_classes != st.session_state["qa_side_classes"]:
    if st.session_state.get("qa_side_mode") == "side classes":  # said only where side classes are in use
        settings.adjust("qa_side_classes", kept_classes or class_values[-1:],
                        f"Side classes: {settings.shown(st.session_state['qa_side_classes'])} are not classes of "
                        f"{data.name}; now {settings.shown(kept_classes or class_values[-1:])}.")
    else:
        st.session_state["qa_side_classes"] = kept_classes or class_values[-1:]
# K set by the user on another data set: it follows this one's default rule again (the count comes
# with the run)
other = settings.chosen_for_other_data("qa_top_k")
if other is not None and st.session_state.get("qa_top_k_set"):
    st.session_state["qa_top_k_set"] = False
    settings.add_note(f"K — top features: {st.session_state.get('qa_top_k')} was chosen for {other}; for {data.name} "
                      "it follows the default rule again.")
settings.show_settings_notes()
# K follows the run's default rule until the user sets it: only then is it a setting to undo
views.undo_control("qalpha", [key for key in VIEW if key != "qa_top_k" or st.session_state.get("qa_top_k_set")],
                   LABELS)

# the controls wrap into as many rows as the window needs, and the pictures below get its width
controls = st.container(horizontal=True, gap="medium", vertical_alignment="bottom")
view = st.container()
with controls:
    supervised = st.toggle(
        "Supervised", disabled=not has_labels, key="qa_supervised", persist_state="session", width="content",
        help="Use the labels: fix Q to the orthonormalised, centred class indicators, so alpha weighs features by "
             "how well they separate the classes (one eigenproblem). Needs labels.")
    # k and λ are drawn once it is known whether the data choose them (that needs the side
    # information, chosen below)
    k_slot = st.container(width=170)
    criterion = st.selectbox(
        "Criterion", list(CRITERION_NAMES), format_func=CRITERION_NAMES.get, key="qa_criterion", persist_state="session",
        width=190,
        help="sum: Eq. (1) of Wolf & Shashua 2003. gap: sum of the k largest squared eigenvalues minus the rest.")
    side_mode = st.radio(
        "Side information", side_options, horizontal=True, key="qa_side_mode", persist_state="session", width="content",
        help="side classes: samples of the chosen classes form the side data W; features that vary "
             "within them are suppressed (Shashua & Wolf 2004 Def. 3, D = diag of the side variances). pairs: random "
             "pairs of samples from different classes that must stay apart (Shashua & Wolf 2004 Sec. 5, matrix B). "
             "uploaded side data: the second upload of the Data page is W. picked samples: the samples "
             "picked with a box on the map of the samples (below) are W.")
    side_classes, n_pairs = [], 0
    if side_mode == "side classes":
        side_classes = st.multiselect(
            "Side classes", class_values, key="qa_side_classes", persist_state="session", width=260,
            help="Their samples become the side data W; the other samples are the main data M.")
    elif side_mode == "pairs":
        n_pairs = st.slider("Number of pairs", 1, 500, key="qa_n_pairs", persist_state="session", width=260,
                            help="Pairs (x, y) drawn at random among samples with different labels; "
                                 "B = sum of (x o y)(x o y)^T (Shashua & Wolf 2004 Sec. 5).")
    automatic = side_mode != "none" and not supervised and st.toggle(
        "Choose k and λ from the data", key="qa_auto", persist_state="session", width="content",
        help="k among c and 2c (c: the clusters to find, the number of classes of the main data where there are "
             "labels, else estimated from the spectrum) and λ among 0.1, 1 and 10: the setting under which k-means "
             "finds the most reproducible groups over resamples of the main samples (no labels used). How it "
             "fared on data nobody tuned it on: docs/findings.md, 'Automatic k and λ'. Turn off to set them yourself.")
    # chosen from the data, λ is shown here; set by hand, its slider heads the results (a λ step
    # reruns only them: lambda_view)
    lam_slot = st.container(width=300) if automatic else None
    if not automatic:
        with k_slot:
            k = st.number_input(
                "k — number of clusters", min_value=1, max_value=max_k, disabled=supervised, key="qa_k",
                persist_state="session",
                help="k in Eq. (1): the number of leading eigenvalues of the affinity A_alpha whose "
                     "squares are maximised (Wolf & Shashua 2003 Sec. 2). Supervised mode uses classes - 1.")
    else:
        k = st.session_state["qa_k"]
    lam = st.session_state["qa_lambda"]
    with st.expander("Iteration", width=300):
        init = st.selectbox("Initial Q", ["uniform", "random"], key="qa_init", persist_state="session",
                            help="Q(0) of Wolf & Shashua 2003 Def. 2. uniform: the k leading eigenvectors of the affinity "
                                 "with equal weights; random: a random orthonormal matrix.")
        n_init = st.number_input("Starts", 1, 20, key="qa_n_init", persist_state="session",
                                 help="Number of starts (n_init): the first from Q(0) above, the others "
                                      "random; the one with the largest objective is kept.")
        max_iter = st.number_input("Maximum iterations", 10, 5000, key="qa_max_iter", persist_state="session",
                                   help="Upper limit on the iterations r of Wolf & Shashua 2003 Def. 2 per start.")
        tol = st.select_slider("Tolerance on the residuals", TOLERANCES, key="qa_tol", persist_state="session",
                               format_func=lambda v: f"{v:g}",
                               help="Converged when both residuals of the weights returned are at most this: "
                                    "alpha's eigen-residual for G(Q) and Q's subspace residual for A_alpha.")
        seed = st.number_input("random_state", 0, 10_000, key="qa_seed", persist_state="session",
                               help="Seeds the random starts, the pairs and k-means: same seed, same result.")

# where the side information comes from decides the data handed to the run, not its parameters
side_choice = dict(side_mode=side_mode, side_classes=[str(c) for c in side_classes], n_pairs=int(n_pairs))
auto = None
try:
    params = QAlphaParameters(k=None if supervised else int(k), supervised=supervised, criterion=criterion,
                              lam=float(lam) if side_mode != "none" else 0.0, init=init, n_init=int(n_init),
                              max_iter=int(max_iter), tol=float(tol), random_state=int(seed))
    main, side, pairs = datasets.split_side(data, side_mode, side_classes, int(n_pairs), uploaded_side, int(seed),
                                            picked)
    if automatic:
        # the clusters k-means is asked for: the main data's classes (only their number is used)
        n_clusters = main.classes.size if main.classes.size >= 2 else None
        with view:
            auto = runs.run_auto_settings(main, side, pairs, params, n_clusters)
        if auto is not None:
            params = replace(params, k=int(auto.k), lam=float(auto.lam))
            # the widgets and the pages that run the user's Q-alpha (Compare) see the chosen values
            st.session_state["qa_k"], st.session_state["qa_lambda"] = min(int(auto.k), max_k), float(auto.lam)
            # Compare names them as chosen here, not as the user's own (settings.chosen_qalpha)
            st.session_state["_qa_auto_chose"] = dict(data=data.fingerprint, k=int(auto.k), lam=float(auto.lam))
        chosen = auto is not None
        k_slot.metric("k — number of clusters", params.k,
                      help="Chosen from the data" if chosen else "The choice was stopped: the last k set")
        lam_slot.metric("λ — weight of the side information", f"{params.lam:g}",
                        help="Chosen from the data" if chosen else "The choice was stopped: the last λ set")
except InputError as error:
    with view:
        widgets.show_error(error)
    st.stop()
if auto is not None:
    with view:
        selection.automatic_choice_notes(auto)


def scrub_view(result, main, side, path, params, automatic: bool) -> int:
    """The browser-drawn K and λ (:mod:`pages.ui.scrubber`): the sorted weights with the top-K band,
    the selected pixels, the top features, the count and the map of the samples
    (:mod:`pages.ui.sample_map`), over the computed λ path when there is one (else this result's λ
    alone); returns the page's K."""
    lam = params.lam
    top_k = selection.chosen_top_k(result.default_k.k)
    on_path = path is not None and lam > 0 and not automatic
    runs_shown = path.results if on_path else [result]
    # after the scrubber's own report the browser shows the new K and λ already: it is given the
    # K and λ of the last mount, which it reads as "unchanged by the server"
    shown = st.session_state.get("_qa_scrub_shown")
    if st.session_state.pop("_qa_scrub_echo", False) and shown is not None:
        k_sent, lam_sent = shown
    else:
        k_sent, lam_sent = top_k, lam
    st.session_state["_qa_scrub_shown"] = (k_sent, lam_sent)
    family = main.family
    scrubber.selection_scrubber(
        "qa_scrubber", lams=path.lams if on_path else [lam],
        weights=[run.alpha for run in runs_shown], feature_names=main.feature_names, data_key=main.fingerprint,
        k=k_sent, k_set=bool(st.session_state.get("qa_top_k_set")), lam=lam_sent,
        gaps=[run.gap.n_selected if run.gap.clear else 0 for run in runs_shown],
        defaults=[run.default_k.k for run in runs_shown],
        images=main.images if family is not None and family.name == "pixels" else None, on_change=selection.scrubbed,
        k_label="K — top features to show and to cluster with", lam_label="λ — weight of the side information",
        samples_key=sample_map.samples_key(main, side), on_picked=lambda: None, colour_by=st.session_state["qa_colour_by"], on_colour=sample_map.coloured)
    # after the scrubber (the pages' tests read it first): the samples its map draws, the colours at K
    sample_map.draw(data, main, side, result.ranking, top_k, lam, n_clusters=params.k or main.classes.size,
                    seed=params.random_state, side_mode=side_mode, side_classes=side_classes, picked=picked)
    st.button("Default K", on_click=lambda: st.session_state.update(qa_top_k_set=False),
              disabled=not st.session_state.get("qa_top_k_set"),
              help="Let K follow the default rule again: the sparsity gap's count where the gap is clear, else "
                   "the fewest features holding half of the squared weight.")
    return top_k


@st.fragment
def selection_view(result, path, main, side, params, side_mode: str, side_choice: dict, automatic: bool, side_classes,
                   n_pairs, pairs) -> None:
    """Everything that follows K and, on the computed λ path, λ: the scrubber (drawn by the
    browser), and what the server draws at the K and λ it reported (the run's figures and
    numbers, k-means on the selection, the per-class view, the table, the downloads, the link).
    A fragment: a report of the scrubber reruns only this part (on the path, a λ is a lookup)."""
    if st.session_state.pop("_qa_rerun_page", False):  # picked samples made the side data
        st.rerun(scope="app")
    lam = float(st.session_state["qa_lambda"]) if path is not None and not automatic else params.lam
    on_path = path is not None and lam > 0 and not automatic
    if on_path:
        result = path.at(lam)
        params = replace(params, lam=lam)
    top_k = scrub_view(result, main, side, path, params, automatic)
    gap, default = result.gap, result.default_k
    top = result.top(top_k)
    counts = widgets.line()
    widgets.gap_metric(counts, gap)
    counts.metric("Iterations", result.n_iter, width="content",
                  help="converged" if result.converged else "not converged")
    counts.metric("Objective", f"{result.objective:.4g}", width="content",
                  help=f"{np.mean(result.alpha >= -1e-6 * result.alpha.max()):.1%} of the weights are >= 0")
    st.caption(f"K = {top_k:,} of {main.n_features:,} features: "
               + ("set by you (the K slider)" if st.session_state.get("qa_top_k_set")
                  else f"chosen by the rule: {default.rule} (move the K slider to choose another)") + ".")
    selection.weight_notes(result, main.n_features, side_mode, params.tol)
    selection.near_empty_note(main, result.ranking, top_k)
    figure = widgets.when_open("Sorted weights as a figure: names on hover, Save", "qa_weights_figure")
    if figure is not None:
        with figure:
            log_y = st.toggle("Log scale", value=False, help="Draw the sorted weights on a log axis.")
            weights_figure = partial(sorted_weights_figure, result.alpha, main.feature_names, gap.n_selected,
                                     log_y=log_y, clear_gap=gap.clear, default=default)
            widgets.chart(weights_figure(), "sorted_alpha", band_x=(0.5, top_k + 0.5, f"top {top_k}"),
                          saved=partial(weights_figure, top_k=top_k))
    if main.family is not None and main.family.name != "pixels":  # the scrubber marks pixels only
        widgets.pixel_view(main, result.alpha, top, "overlay")
    compared = selection.picked_groups(data, main, datasets.main_rows(data, side_mode, side_classes, picked))
    labelled = main.labels is not None and main.classes.size >= 2
    if labelled:
        selection.kmeans_scores(main, result.ranking, dict(ranking=params.key, side=side_choice), top_k,
                                params.random_state)
    if compared is not None or labelled:
        left_out = selection.left_out_note(data, main, side_mode, side_classes)
        selection.per_class_view(main, top, left_out, compared)
    selection.feature_lookup(main, result.alpha, result.ranking, top_k)
    markers.coverage_views(main, result.ranking, top_k)
    # the files and the code follow λ and K; they are drawn only while opened, as the figures'
    # Save buttons are: six fewer elements at every step
    saved = widgets.when_open("Download the result", "qa_downloads", popover=True, icon=":material/download:",
                              width="content")
    if saved is not None:
        with saved:
            selection.result_downloads(main, result, dict(asdict(params), **side_choice, data_set=data.name), top)
    widgets.snippet("Python: this result in a notebook", "qa_snippet",
                    lambda: snippets.qalpha_snippet(data, datasets.is_bundled(data), params, side_mode, side_classes,
                                                    n_pairs, runs.q_alpha_solver(params, pairs), top_k,
                                                    side=uploaded_side, picked=picked,
                                                    path_lams=PATH_LAMBDAS if on_path else None))
    convergence = widgets.when_open(f"Convergence: the objective at each of the {result.n_iter} iterations",
                                    "qa_convergence")
    if convergence is not None:  # drawn only when asked for: every λ step would redraw it
        widgets.chart(history_figure(result.history), "history", where=convergence)
    st.dataframe(selection.shown_ranking(main, result), hide_index=True, height=240)
    if path is not None:
        # the path's figures are drawn below (path_view) and do not change with λ: a λ step sends
        # only its λ, a dashed line the browser draws over them
        widgets.marks("lambda_path", line=params.lam if params.lam > 0 else None)
    # the link follows K and λ too (this runs on the page's reruns and on the fragment's own)
    views.share_view([key for key in VIEW if key != "qa_top_k" or st.session_state.get("qa_top_k_set")])


@st.fragment
def lambda_view(main, side, pairs, params, side_mode: str, side_choice: dict, automatic: bool, side_classes,
                n_pairs) -> None:
    """Everything that follows λ: its slider, the result at that λ (a lookup once the λ path is
    computed), the selection, the convergence, the table, the downloads, and the button that
    computes the λ path or, once it is computed, the slider's λ on it (the path itself is drawn
    below, by :func:`path_view`). A fragment: a λ step reruns only this part, not the settings and
    controls above it, which do not depend on λ (a full rerun of the page cost a λ step on the
    computed path 0.4 s, docs/benchmarks.md at 98003b7)."""
    runs.stop_control("qalpha")
    path_possible = lambda_path_possible(side_mode, params)
    if not automatic:
        params = replace(params, lam=float(st.session_state["qa_lambda"]) if side_mode != "none" else 0.0)
    # once the λ path of these settings is computed, a λ on it is a lookup (the same fixed point a
    # cold run reaches: tests/core/selection/test_lambda_path.py), and λ moves in the browser
    path_ready = path_possible and runs.has_q_alpha_path(main, side, pairs, params, PATH_LAMBDAS)
    estimate = estimates.path_seconds(main.n_samples, main.n_features, len(PATH_LAMBDAS))
    if (path_possible and not path_ready and not automatic and estimate <= estimates.AUTO_PATH_SECONDS
            and not runs.is_stopped("qalpha")):
        # cheap (the faces: about 2 s): the path comes with the first result, unasked; long (20,000
        # genes): it waits for the button below, which gives its estimate
        path_ready = runs.run_q_alpha_path(main, side, pairs, params, PATH_LAMBDAS) is not None
    if not automatic and not (path_ready and params.lam > 0):
        lam_row = st.container(horizontal=True, vertical_alignment="bottom", gap="medium")
        lam = lam_row.select_slider(
            "λ — weight of the side information", options=LAMBDAS, key="qa_lambda", persist_state="session",
            format_func=lambda v: f"{v:g}", disabled=side_mode == "none", width=300,
            help="lambda of Shashua & Wolf 2004 Eq. (2) / (3). With side data: alpha is the leading eigenvector "
                 "of (D + λI)^-1 G — small λ trusts the side data most (λ = 0 needs every side variance "
                 "positive). With pairs: of G − λB.")
        params = replace(params, lam=float(lam) if side_mode != "none" else 0.0)
        if side_mode == "none":
            lam_row.caption("Choose side information above to weigh it with λ.")
        elif path_ready:
            lam_row.caption("The λ path is computed: move λ above 0 and it moves with K, in the browser.")
        elif path_possible:
            lam_row.caption("Each new λ is solved; compute the λ path (below) and every λ is a lookup.")
    try:
        path = runs.run_q_alpha_path(main, side, pairs, params, PATH_LAMBDAS) if path_ready else None  # a lookup
        result = path.at(params.lam) if path is not None and params.lam > 0 else runs.run_q_alpha(main, side, pairs,
                                                                                                  params)
    except InputError as error:
        widgets.show_error(error)
        return
    if result is None:  # stopped before a first result (the note above says so)
        return
    selection_view(result, path, main, side, params, side_mode, side_choice, automatic, side_classes, n_pairs, pairs)
    if not path_ready and side_mode != "none":
        with st.expander("λ path: the weights at every λ", expanded=True):
            if not path_possible:
                st.caption("The λ path runs one start per λ: set Starts (under Iteration) to 1 to compute it.")
            elif (button_slot := st.empty()).button(
                    f"Compute the λ path ({len(PATH_LAMBDAS)} values of λ, about {estimate:.0f} s)", key="qa_path_run",
                    help="Solves Q-alpha once at every positive value of the λ slider, each from the answer at the "
                         "next larger λ (as glmnet computes a lasso path); afterwards λ moves in the browser with "
                         "K, over the path's values."):
                button_slot.empty()  # clicked: the button goes
                if runs.run_q_alpha_path(main, side, pairs, params, PATH_LAMBDAS) is not None:
                    st.rerun(scope="app")  # the whole page: the path below, and each λ a lookup
            else:
                st.caption("Solve every λ of the slider once, and each later move of λ is a lookup.")


def lambda_path_possible(side_mode: str, params) -> bool:
    """Whether these settings have a λ path: side information to weigh, and one start per λ (the
    path starts each λ from its neighbour's answer)."""
    return side_mode != "none" and params.n_init == 1


def path_view(main, side, pairs, params, side_mode: str) -> None:
    """The computed λ path: the weights of the ten features that weigh most anywhere on it against
    λ and, beside them, the sparsity gap's strength at each λ. Drawn below the λ fragment, not in
    it: the figures do not change with λ, and a λ step that sent them again took 25 ms longer on
    the 20,000 genes (docs/benchmarks.md at 98003b7). The slider's λ is the dashed line that the fragment has
    the browser draw over them."""
    if not (lambda_path_possible(side_mode, params)
            and runs.has_q_alpha_path(main, side, pairs, params, PATH_LAMBDAS)):
        return
    path = runs.run_q_alpha_path(main, side, pairs, params, PATH_LAMBDAS)  # computed: a lookup
    lam = float(st.session_state.get("qa_lambda") or 0.0)  # the slider's, or the λ chosen from the data
    current = lam if lam > 0 else None
    with st.expander("λ path: the weights at every λ", expanded=True):
        panels = st.container(horizontal=True, gap="medium")
        widgets.chart(lambda_path_figure(path.lams, path.weights, main.feature_names), "lambda_path",
                      where=panels.container(width="stretch"),
                      saved=partial(lambda_path_figure, path.lams, path.weights, main.feature_names, current=current))
        widgets.chart(gap_strength_figure(path.lams, path.gap_strength), "gap_strength",
                      where=panels.container(width=360))
        st.caption(f"{path.lams.size} values of λ solved in {path.seconds:.1f} s ({int(path.n_iter.sum()):,} "
                   "iterations, each λ started from its neighbour's answer). The weights: the ten features that "
                   "weigh most anywhere on the path (hover for their names), the dashed line the slider's λ; "
                   "beside them, how much of the sorted weights' variance the sparsity gap explains at each λ. "
                   "λ = 0 is not on the log axis and is solved on its own.")
        unconverged = [f"{value:g}" for value, run in zip(path.lams, path.results) if not run.converged]
        if unconverged:
            st.warning(f"{len(unconverged)} of the {path.lams.size} values of λ ({', '.join(unconverged)}) "
                       f"stopped at {params.max_iter:,} iterations without converging (tolerance "
                       f"{params.tol:g}): their weights are those of the last iteration. Raise Maximum "
                       "iterations (under Iteration) and compute the path again.",
                       icon=":material/warning:")


with view:
    # once per data set, not in the K and λ fragment; first, before the browser is busy drawing
    if not runs.is_stopped("qalpha"):
        sample_map.send_samples(main, side)
    lambda_view(main, side, pairs, params, side_mode, side_choice, automatic, side_classes, int(n_pairs))
    path_view(main, side, pairs, params, side_mode)
