"""What a page shows of a selection of K features beside its figure: the page's K (the default
rule until the user sets it, and the browser's report of it), notes on the weights and the run,
k-means on the selection against every feature, the per-class view of the selected features, the
ranking table and the result's files; and, for Compare, what several methods select side by side."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from functools import partial

import numpy as np
import pandas as pd
import streamlit as st

from core.data.transforms import RARE_SHARE, nonzero_share
from core.evaluation.metrics import jaccard_index
from core.selection.automatic import N_RESAMPLES, RESAMPLE_FRACTION
from core.plots import dotplot_figure, heatmap_table_figure, sorted_weights_figure
from pages.ui import downloads, runs, settings, widgets
from pages.ui.settings import QALPHA_LAMBDAS


def chosen_top_k(default_k: int) -> int:
    """The page's K: the default rule's count (the sparsity gap's where it is clear) unless the user
    set K (a K the session no longer holds: the default)."""
    if "qa_top_k" not in st.session_state:
        st.session_state["qa_top_k_set"] = False
    if not st.session_state.get("qa_top_k_set"):
        st.session_state["qa_top_k"] = default_k
    return int(st.session_state["qa_top_k"])


def scrubbed() -> None:
    """The scrubber's report once the hand stopped: its K and λ become the page's. The browser
    has drawn them already, so the rerun that follows gives the scrubber the values it was given
    before (an identical message, which Streamlit sends as a reference to the copy the browser
    holds) rather than its weights again (``scrub_view`` of the Q-alpha page: on the faces 9 kB
    come back instead of 80 kB, 0.3 MB on the λ path)."""
    view = (st.session_state.get("qa_scrubber") or {}).get("view") or {}
    if view.get("k_set") and int(view["k"]) != st.session_state.get("qa_top_k"):
        st.session_state.update(qa_top_k=int(view["k"]), qa_top_k_set=True)
    # a λ comes only from the computed path, where the scrubber offers a choice of λ (scrubber.js):
    # off it, the one λ it held was the one its run was solved at, 0 without side information, and
    # a K step wrote that 0 over the λ the user had set (issue 76: 0.1 became 0)
    if "lam" in view and float(view["lam"]) in QALPHA_LAMBDAS:
        st.session_state["qa_lambda"] = float(view["lam"])
    st.session_state["_qa_scrub_echo"] = True


def automatic_choice_notes(auto) -> None:
    """How k and λ were chosen from the data (:func:`core.choose_settings`'s result ``auto``): its
    reason, a warning where the weighting does not help, and every candidate's agreement."""
    if auto.weighting_helps:
        st.caption(f"Chosen from the data: {auto.reason}")
    else:
        st.warning(f"{auto.reason} Cluster the standardised features unweighted here, and read the weights as "
                   "a ranking (check k-means on the selection below against all features). On the sets the rule "
                   "was judged on this happened on 9 of 89 turns, and on 3 of 7 of lung_small's, the one set "
                   "where the automatic weights fell below the standardised data (docs/findings.md, 'Automatic k and λ').",
                   icon=":material/warning:")
    with st.expander("How k and λ were chosen"):
        # every candidate in view (the setting names its k and λ; the columns k and lam would repeat it)
        st.dataframe(pd.DataFrame(auto.table()).drop(columns=["k", "lam"]).rename(columns={
            "stability": "agreement between resamples (adjusted Rand)", "stability_sd": "sd"}),
            hide_index=True, height="content")
        st.caption(f"k-means into {auto.n_clusters} clusters on two random {RESAMPLE_FRACTION:.0%} subsets of "
                   f"the main samples, {N_RESAMPLES} times; the agreement on the samples both hold (Lange et al. "
                   "2004). Weighted settings scale the standardised features by sqrt((1 + alpha / mean alpha) / 2).")


#: The per-class view shows at most this many of the selected features (a dot plot stays legible).
MARKER_LIMIT = 30


def weight_notes(result, n_features: int, side_mode: str, tol: float) -> None:
    """What the user should know of these weights: negative ones, a stopped or unconverged run,
    and sorted weights without a clear sparsity gap."""
    negative = int(np.sum(result.alpha < -1e-6 * np.abs(result.alpha).max()))
    if negative:
        meaning = ("it draws the pairs that must stay apart together" if side_mode == "pairs" else
                   "its own similarities between the samples work against the structure the other features build")
        st.info(f"{negative:,} of {n_features:,} weights ({negative / n_features:.1%}) are negative. A "
                f"negative alpha_i subtracts feature i's part m_i m_iᵀ from the affinity A_alpha: {meaning}. "
                "Positivity is a property of unsupervised Q-alpha, not a constraint; negative weights rank last "
                "and are never among the K selected unless K reaches them.", icon=":material/info:")
    if result.stopped:
        st.warning(f"Stopped at iteration {result.n_iter}: these are the weights of that iteration.")
    widgets.convergence_warning(result, f"Raise Maximum iterations or loosen the tolerance ({tol:g}) under "
                                        "Iteration.")
    gap, default = result.gap, result.default_k
    if not gap.clear:
        st.caption(f"No clear sparsity gap: the sorted weights fall smoothly (the best split, after rank "
                   f"{gap.n_selected:,}, explains {gap.separability:.0%} of their variance; a gap explains "
                   f"{gap.threshold:.0%} or more). K starts at {default.k:,}, the fewest features holding "
                   f"{default.rule} (the dotted line); choose another with the slider.")


def nonzero_shares(data) -> np.ndarray:
    """Each feature's share of non-zero samples (:func:`core.data.transforms.nonzero_share`), kept
    per data set: the Data page and Q-alpha's note read it at every rerun."""
    return runs.kept(f"nonzero share {data.fingerprint}", lambda: nonzero_share(data.X))


def near_empty_note(main, ranking, top_k: int) -> None:
    """Name the selected features that are non-zero in fewer than ``RARE_SHARE`` of the samples,
    with their ranks: unit-norm scaling weighs them as full features (a digit's border pixel inked
    in 2 of 535 images ranked 25th, above the strokes). The shares are kept per data set."""
    share = nonzero_shares(main)
    top = np.asarray(ranking)[:top_k]
    rare = top[share[top] < RARE_SHARE]
    if rare.size == 0:
        return
    ranks = {int(j): int(r) + 1 for r, j in enumerate(top)}
    named = ", ".join(f"{main.feature_names[j]} (rank {ranks[int(j)]}, non-zero in "
                      f"{int(round(share[j] * main.n_samples)):,} of {main.n_samples:,})" for j in rare[:6])
    st.info(f"**{rare.size:,} of the {top_k:,} selected features are near-empty**: {named}"
            + (f" and {rare.size - 6:,} more" if rare.size > 6 else "")
            + f". Each is non-zero in fewer than {RARE_SHARE:.0%} of the samples; scaled to unit norm, it weighs as "
            "much as a full feature. To leave such features out, remove them on the Data page (Near-empty "
            "features).", icon=":material/info:")


def kmeans_scores(main, ranking, run_key: dict, top_k: int, seed: int) -> None:
    """k-means on the top ``top_k`` of ``ranking`` and on every feature, scored by the labels
    (:func:`core.evaluation.metrics.kmeans_scores` on the standardised features, as Compare
    scores them). The selection's score follows K and the run (``run_key``); the all-features
    reference only the data and the seed, so a K step does not cluster every feature again."""
    accuracy, information = runs.run_cached(
        "kmeans_scores", dict(data=main.fingerprint, **run_key, top=top_k, seed=seed),
        main.X, main.labels, np.asarray(ranking)[:top_k], small=True, n_runs=5, random_state=seed)
    everything = runs.run_cached("kmeans_scores", dict(data=main.fingerprint, top="all", seed=seed),
                                 main.X, main.labels, slice(None), small=True, n_runs=5, random_state=seed)
    st.markdown("**k-means on the selection** (as many clusters as classes, 5 starts averaged; "
                "the labels are used only to score)")
    scores = widgets.line()
    scores.metric(f"Accuracy, top {top_k}", f"{np.mean(accuracy):.3f}", width="content",
                  help="Fraction of samples in the cluster matched to their class (Hungarian matching).")
    scores.metric(f"NMI, top {top_k}", f"{np.mean(information):.3f}", width="content",
                  help="Normalised mutual information.")
    scores.metric("Accuracy, all features", f"{np.mean(everything[0]):.3f}", width="content",
                  help="The same k-means on every feature, for reference.")
    scores.metric("NMI, all features", f"{np.mean(everything[1]):.3f}", width="content")


def _marker_choices(main) -> tuple[str, bool, bool]:
    """The per-class view's test and whether the data are taken as log1p (its widgets' values,
    the defaults before it was opened): ``(test, non_negative, as_log1p)``."""
    non_negative = bool(main.X.min() >= 0)
    test = st.session_state.get("qa_marker_test", "t-test")
    log1p = non_negative and not main.is_image and bool(st.session_state.get("qa_marker_log1p", False))
    # fold changes of data as given need non-negative values; on other data the library is asked
    # for log1p's and those columns are left out
    return test, non_negative, bool(log1p or not non_negative)


def left_out_note(data, main, side_mode: str, side_classes) -> str:
    """Which samples of the data set the per-class view leaves out (the side data) and why."""
    if data.n_samples == main.n_samples:
        return ""
    which = (f"the side classes ({settings.shown(side_classes)}: {data.n_samples - main.n_samples:,} of "
             f"{data.n_samples:,})" if side_mode == "side classes" else
             f"the {data.n_samples - main.n_samples:,} samples picked as side data (of {data.n_samples:,})")
    return f"The samples of {which} are left out here and in the CSV: they are the side data, not classes of the main data."


#: The per-class view's two ways of grouping the samples once some were picked on the map
GROUPINGS = ("the classes", "the picked samples against the rest")


def picked_groups(data, main, main_rows) -> np.ndarray | None:
    """The main samples as "picked" or "rest" when samples of ``data`` were picked on the map to be
    compared with the others (``qa_compare_rows``, :func:`pages.ui.sample_map.picked_offer`) and
    both groups have main samples; ``main_rows``: the rows of ``data`` that ``main`` holds."""
    compared = st.session_state.get("qa_compare_rows")
    if not compared or compared.get("data") != data.fingerprint:
        return None
    picked = np.isin(main_rows, compared["rows"])
    return np.where(picked, "picked", "rest") if 0 < picked.sum() < picked.size else None


def _marker_groups(main, compared) -> tuple:
    """``(main, caption)``: the data set whose labels the per-class view tests, the classes or,
    when chosen, the samples picked on the map against the rest (``compared``: :func:`picked_groups`)."""
    has_classes = main.labels is not None and np.unique(main.labels).size >= 2
    if compared is None:
        return main, ""
    if has_classes:
        grouping = st.radio("Groups", GROUPINGS, horizontal=True, key="qa_marker_groups",
                            help="Each class against the other samples, or the samples picked on the map (a box on "
                                 "it, then \"Compare them with the rest\") against the other main samples.")
        if grouping == GROUPINGS[0]:
            return main, ""
    grouped = runs.kept(f"picked groups {main.fingerprint} {hashlib.blake2b(compared.tobytes(), digest_size=8).hexdigest()}",
                        lambda: replace(main, labels=compared, name=f"{main.name} (picked vs rest)"))
    n_picked = int((compared == "picked").sum())
    return grouped, (f"The {n_picked:,} samples picked on the map (class 'picked') against the other "
                     f"{compared.size - n_picked:,} main samples (class 'rest').")


def per_class_view(main, top, left_out: str = "", compared=None) -> None:
    """Which class each selected feature marks (scanpy's rank_genes_groups statistics), computed
    only while its expander is open: the dot plot and table otherwise cost every rerun their
    drawing. The table and its download hold all K features; the dot plot shows them
    :data:`MARKER_LIMIT` at a time. ``left_out``: which samples of the data set are not in ``main``
    and why (the side classes), said above the figure; ``compared``: the samples picked on the map
    as "picked" and "rest" (:func:`picked_groups`), tested instead of the classes when chosen."""
    per_class = widgets.when_open(f"Per class: which class each of the {top.size:,} selected features marks",
                                  "qa_per_class")
    if per_class is None:
        return
    with per_class:
        main, grouping = _marker_groups(main, compared)
        left_out = " ".join(filter(None, (grouping, left_out)))
        st.radio("Test", ["t-test", "wilcoxon"], horizontal=True, key="qa_marker_test", persist_state="session",
                 help="Each class against the other samples, per feature: Welch's t-test, or the Wilcoxon "
                      "rank-sum test; p-values corrected over these features (Benjamini-Hochberg). The "
                      "statistics of scanpy's rank_genes_groups (equal to 1e-6, tested).")
        # pixels and other non-count data are not log1p of counts: the question is not asked of them
        if bool(main.X.min() >= 0) and not main.is_image:
            st.checkbox("Values are log1p of counts", key="qa_marker_log1p", persist_state="session",
                        help="Then fold changes compare expm1 of the mean logs, as scanpy does; otherwise "
                             "the means themselves (which needs non-negative values).")
        test, non_negative, as_log1p = _marker_choices(main)
        key = dict(data=main.fingerprint, features=top.tolist(), test=test, log1p=as_log1p)
        markers = runs.run_cached("class_markers", key, main.X, main.labels, features=top,
                                  feature_names=main.feature_names, method=test, log1p=as_log1p)
        if left_out:
            st.caption(left_out)
        first = 0
        if top.size > MARKER_LIMIT:
            if st.session_state.get("qa_marker_first", 1) > top.size:  # a rank of a larger K before
                st.session_state["qa_marker_first"] = 1
            first = (st.number_input(f"Dot plot: the {MARKER_LIMIT} features from rank", 1, top.size, step=MARKER_LIMIT,
                                     key="qa_marker_first", width=260,
                                     help=f"The dot plot shows {MARKER_LIMIT} of the {top.size:,} selected features "
                                          "at a time; the table below and its download hold all of them.") - 1)
        page = slice(first, min(first + MARKER_LIMIT, top.size))
        # a short title: a long one ran under Plotly's toolbar in an 800-pixel window
        widgets.chart(dotplot_figure(markers.classes, markers.feature_names[page], markers.score[:, page],
                                     markers.fraction[:, page] if non_negative else None,
                                     colour_title="Welch t" if test == "t-test" else "rank-sum z",
                                     title=f"Selected features {page.start + 1}-{page.stop} by class"),
                      "markers_dotplot")
        st.caption("Colour: the test's score of the feature in the class against the other samples"
                   + ("; size: the share of the class's samples with a non-zero value." if non_negative else "."))
        # K features x the classes, row by row: kept with the statistics, not built at every rerun
        marker_table = runs.kept(f"marker table {json.dumps(key)}", markers.table)
        if not non_negative:
            marker_table = marker_table.drop(columns=["log2_fold_change", "fraction", "fraction_rest", "mean_zero_in"])
            st.caption("These data have negative values: fold changes and the share of non-zero values do "
                       "not apply.")
        elif (marker_table["mean_zero_in"] != "").any():
            st.caption("Where a mean is zero (column 'mean zero in') the log2 fold change is about ±30: scanpy's "
                       "offset of 1e-9 keeps it finite, it is not a measured ratio.")
        # on screen the p-values come first after the score, in scientific notation (written out
        # in full they took the column's whole width); the CSV keeps the library's columns
        first_columns = ["class", "feature", "score", "p_adjusted", "p_value"]
        rest = [c for c in marker_table if c not in first_columns and c != "index"]
        st.dataframe(marker_table[first_columns + rest + ["index"]], hide_index=True, height=260,
                     column_config=_MARKER_COLUMNS)
        st.caption(f"All {top.size:,} selected features x {markers.classes.size} classes, scrollable; the CSV "
                   "holds the same rows.")
        st.download_button("Per-class statistics (CSV)", lambda: downloads.frame_csv(marker_table),
                           file_name=downloads.file_name(main.name, "per-class", "csv"), mime="text/csv", key="qa_markers_csv",
                           on_click="ignore")


_MARKER_COLUMNS = {"score": st.column_config.NumberColumn(format="%.3g"),
                   "mean_zero_in": st.column_config.TextColumn("mean zero in"),
                   "p_adjusted": st.column_config.NumberColumn("p adjusted (BH)", format="%.2e"),
                   "p_value": st.column_config.NumberColumn("p-value", format="%.2e")}


def feature_lookup(main, alpha, ranking, top_k: int) -> None:
    """Any feature found by typing its name: its rank and weight, whether it is among the K
    selected, where it lies on the sorted weights and, with labels, its statistics per class:
    the per-class view's, tested over every feature as scanpy's rank_genes_groups does (its
    p-values adjusted over all of them), computed once per data set and test."""
    lookup = widgets.when_open("Look up a feature: its rank, weight and statistics per class", "qa_lookup")
    if lookup is None:
        return
    with lookup:
        names = main.feature_names
        column = st.selectbox("Feature", range(len(names)), index=None, format_func=names.__getitem__,
                              placeholder="Type a feature's name", key="qa_lookup_feature", width=360,
                              help="Any of the data set's features, found as you type.")
        if column is None:
            return
        rank = int(np.flatnonzero(np.asarray(ranking) == column)[0]) + 1
        facts = widgets.line()
        facts.metric("Rank", f"{rank:,} of {len(names):,}", width="content")
        facts.metric("Weight", f"{alpha[column]:.4g}", width="content")
        facts.metric(f"In the top {top_k:,}", "yes" if rank <= top_k else "no", width="content")
        widgets.chart(sorted_weights_figure(alpha, names, top_k=top_k, marked=column,
                                            title=f"{names[column]} on the sorted weights"), "lookup_weights")
        if main.labels is None:
            st.caption("Statistics per class need labels.")
            return
        if np.unique(main.labels).size < 2:
            st.caption(f"Statistics per class need two classes, and the main samples here hold one, "
                       f"{settings.shown(np.unique(main.labels)[0])}: the others were set aside (side classes or "
                       "picked samples). Choose other side classes, or turn side information off, to compare classes.")
            return
        test, non_negative, as_log1p = _marker_choices(main)
        everything = runs.run_cached("class_markers", dict(data=main.fingerprint, features="all", test=test,
                                                           log1p=as_log1p),
                                     main.X, main.labels, feature_names=names, method=test, log1p=as_log1p)
        rows = everything.of_feature(column)
        if not non_negative:
            rows = rows.drop(columns=["log2_fold_change", "fraction", "fraction_rest", "mean_zero_in"])
        st.dataframe(rows, hide_index=True, column_config=_MARKER_COLUMNS)
        st.caption(f"{'Welch t-test' if test == 't-test' else 'Wilcoxon rank-sum test'} of each class against the "
                   f"other samples (the per-class view's test); p-values adjusted over all {len(names):,} features "
                   "(Benjamini-Hochberg), as scanpy's rank_genes_groups adjusts them.")


def ranking_table(main, result, n: int | None = None) -> dict:
    """The first ``n`` features by rank (all of them by default): rank, name and alpha. The page
    shows 50 at every λ step; naming all 20,000 genes to show 50 is work the step need not do."""
    ranking = result.ranking[:n]
    return {"rank": np.arange(1, ranking.size + 1), "feature": [main.feature_names[j] for j in ranking],
            "alpha": result.alpha[ranking]}


def shown_ranking(main, result, n: int = 50):
    """:func:`ranking_table`'s first ``n`` rows as the Arrow table ``st.dataframe`` sends, made once
    per result (keyed by its weights' digest): the table does not change with K, and converting it
    again at every K report cost the server 2 ms of its 30 (benchmarks/bench_users.py)."""
    import pyarrow as pa

    digest = hashlib.blake2b(np.ascontiguousarray(result.alpha).tobytes(), digest_size=8).hexdigest()
    return runs.kept(f"ranking {main.fingerprint} {digest} {n}", lambda: pa.table(ranking_table(main, result, n)))


def result_downloads(main, result, run_settings: dict, top) -> None:
    """The result at this λ and K as files, each written when clicked (on the faces at K = 991 the
    selected data's CSV took 0.6 s): the selected features' data, the selection as a mask (images),
    the weights and ranking, the parameters (``run_settings``), and all of it as AnnData."""
    selected = np.sort(top)
    st.download_button(f"Data, {top.size} selected features (CSV)", partial(downloads.selected_data_csv, main, selected),
                       file_name=downloads.file_name(main.name, "selected", "csv"), mime="text/csv", on_click="ignore")
    if main.is_image:
        mask = np.zeros(main.n_features, dtype=bool)
        mask[selected] = True
        st.download_button("Selection mask (PNG)", partial(downloads.mask_png, main.to_image(mask)),
                           file_name=downloads.file_name(main.name, "mask", "png"), mime="image/png", on_click="ignore")
    st.download_button("Weights and ranking (CSV)", partial(downloads.table_csv, ranking_table(main, result)),
                       file_name=downloads.file_name(main.name, "qalpha", "csv"), mime="text/csv", on_click="ignore")
    st.download_button("Parameters (JSON)", json.dumps(run_settings, indent=1),
                       file_name=downloads.file_name(main.name, "qalpha-parameters", "json"), mime="application/json", on_click="ignore")
    # the data with alpha, rank and the selection per feature, for scanpy and the other AnnData tools
    st.download_button(
        "Data and results (.h5ad)",
        partial(downloads.results_h5ad, main, result.alpha, int(top.size),
                {key: json.dumps(value) if isinstance(value, (list, dict)) else value for key, value in run_settings.items()}),
        file_name=downloads.file_name(main.name, "qalpha", "h5ad"), mime="application/x-hdf5", key="qa_h5ad",
        help="AnnData: X the data, var the features with alpha, rank and selected (the top K), uns the settings.",
        on_click="ignore")


def method_selections(data, rankings: dict, kinds: dict) -> None:
    """Each method's top K features by name, how much the methods' top-K sets overlap (Jaccard),
    and every ranking to download. ``rankings``: a method's name as shown -> its features best
    first; ``kinds``: the same names -> supervised, unsupervised or extraction."""
    st.markdown("**What each method selects**, ranked on every sample")
    top_k = st.number_input("K — top features named and compared", 1, data.n_features, key="cmp_top_k",
                            persist_state="session",
                            help="The K first features of each method's ranking on all the samples: named below, "
                                 "and compared between methods by the Jaccard index of their sets.")
    names = np.asarray(data.feature_names, dtype=object)
    st.dataframe({"method": list(rankings), "kind": [kinds[m] for m in rankings],
                  f"top {top_k} features, best first": [", ".join(names[r[:top_k]]) for r in rankings.values()]},
                 hide_index=True)
    if len(rankings) > 1:
        overlap = np.array([[jaccard_index(a[:top_k], b[:top_k]) for b in rankings.values()]
                            for a in rankings.values()])
        widgets.chart(heatmap_table_figure(list(rankings), list(rankings), overlap, value_title="Jaccard",
                                           title=f"Overlap of the top {top_k} sets (Jaccard index: shared / joined)"),
                      "cmp_overlap")

    def rankings_table():
        """Every method's whole ranking, one row per method and rank (built when downloaded)."""
        return pd.DataFrame([(m, kinds[m], rank + 1, names[j], int(j))
                             for m, ranking in rankings.items() for rank, j in enumerate(ranking)],
                            columns=["method", "kind", "rank", "feature", "column"])

    cells = widgets.row(2)
    cells[0].download_button("Every method's ranking (CSV)", lambda: downloads.frame_csv(rankings_table()),
                             file_name=downloads.file_name(data.name, "rankings", "csv"), mime="text/csv",
                             key="cmp_rank_csv", on_click="ignore")
    cells[1].download_button("Every method's ranking (Parquet)", lambda: downloads.frame_parquet(rankings_table()),
                             file_name=downloads.file_name(data.name, "rankings", "parquet"),
                             mime="application/vnd.apache.parquet", key="cmp_rank_parquet", on_click="ignore")
