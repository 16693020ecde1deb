"""What a selection covers (issue 77): each class's best markers against the rest, tested over every
feature as scanpy's ``rank_genes_groups`` tests them (not only the K selected), in a dot plot and a
table to download, and how far down the selection each class's markers first come; and the
selected features grouped into modules of correlated features, with the selection reordered
across them. A reader sees at a glance that the top of a list is one group, and which classes it
leaves out."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from core import InputError
from core.evaluation.markers import selection_reach
from core.selection.modules import GROUPED_FEATURES, across_modules, selection_modules
from core.plots import dotplot_figure
from pages.ui import downloads, runs, settings, widgets

#: Markers per class shown at most (a dot plot of 10 classes x 20 stays legible at 1,400 px).
MOST_PER_CLASS = 20


def coverage_views(main, ranking, top_k: int) -> None:
    """Both of the Q-alpha page's views of what its selection covers, each in its own expander."""
    all_markers_view(main, ranking, top_k)
    modules_view(main, ranking, top_k)


def all_markers_view(main, ranking, top_k: int) -> None:
    """The expander: the test, how many markers per class, the reach of the selection in words,
    the dot plot of every class's best markers, and their table (CSV)."""
    view = widgets.when_open("Markers over all features, and how far down the selection reaches each class",
                             "qa_all_markers")
    if view is None:
        return
    with view:
        classes = np.unique(main.labels) if main.labels is not None else np.array([])
        if classes.size < 2:
            st.caption("Markers compare each class with the rest: they need labels with two classes or more"
                       + ("." if main.labels is None else f"; the main samples here hold one, {settings.shown(classes[0])}."))
            return
        row = st.container(horizontal=True, vertical_alignment="bottom", gap="medium")
        test = row.radio("Test", ["t-test", "wilcoxon"], horizontal=True, key="qa_all_markers_test",
                         persist_state="session", width="content",
                         help="Each class against the other samples, for every feature: Welch's t-test or the "
                              "Wilcoxon rank-sum test (ties counted), p-values corrected over all the features "
                              "(Benjamini-Hochberg): scanpy's rank_genes_groups (equal to 1e-6, tested).")
        choices = ["the rest", *(str(c) for c in classes)]
        if st.session_state.get("qa_all_markers_against") not in choices:  # a class of another data set
            st.session_state["qa_all_markers_against"] = "the rest"
        against = row.selectbox("Against", choices, key="qa_all_markers_against", width=200,
                                help="Each class against the other samples (scanpy's reference='rest'), or every "
                                     "class against one class (reference='<class>'): that class's samples are the "
                                     "rest of each test, and it is not tested itself.")
        count = int(row.number_input("Markers per class", 1, MOST_PER_CLASS, 5, key="qa_all_markers_n",
                                     persist_state="session", width=180,
                                     help="How many of each class's best markers (largest score) are drawn and "
                                          "looked for in the selection."))
        non_negative = bool(main.X.min() >= 0)
        as_log1p = bool((non_negative and not main.is_image and st.session_state.get("qa_marker_log1p", False))
                        or not non_negative)
        reference = "rest" if against == "the rest" else against
        try:
            markers = runs.run_cached("class_markers", dict(data=main.fingerprint, features="all", test=test,
                                                            log1p=as_log1p, reference=reference),
                                      main.X, main.labels, feature_names=main.feature_names, method=test,
                                      log1p=as_log1p, reference=reference)
        except InputError as error:  # a class of one sample: said, with what to do
            widgets.show_error(error)
            return
        versus = "" if reference == "rest" else f" against {against}"
        _reach_caption(selection_reach(markers, ranking, count), top_k, count, versus)
        best = markers.top_per_class(count)
        shown = list(dict.fromkeys(best.ravel().tolist()))  # class by class, each feature once
        widgets.chart(dotplot_figure(markers.classes, [markers.feature_names[j] for j in shown], markers.score[:, shown],
                                     markers.fraction[:, shown] if non_negative else None,
                                     colour_title="Welch t" if test == "t-test" else "rank-sum z",
                                     title=f"Each class's {count} best markers{versus} over all "
                                           f"{markers.features.size:,} features"),
                      "all_markers_dotplot")
        table = _markers_table(markers, best, ranking, non_negative)
        st.dataframe(table, hide_index=True, height=260,
                     column_config={"score": st.column_config.NumberColumn(format="%.3g"),
                                    "p adjusted (BH)": st.column_config.NumberColumn(format="%.2e")})
        st.download_button("Markers per class (CSV)", lambda: downloads.frame_csv(table),
                           file_name=downloads.file_name(main.name, "markers", "csv"), mime="text/csv",
                           key="qa_all_markers_csv", on_click="ignore")


def _reach_caption(reach: list[dict], top_k: int, count: int, versus: str = "") -> None:
    """Each class's first marker in the selection, in words; the classes the top K leave out said
    apart. ``versus``: what the classes were tested against, in words (" against B"; "": the rest)."""
    parts = [f"{settings.shown(row['class'])}: {row['feature']} at {row['selection_rank']:,}"
             for row in reach if row["selection_rank"] is not None]
    st.caption(f"Where each class's first marker (of its {count} best{versus}) comes in the selection: "
               + "; ".join(parts) + ".")
    missed = [settings.shown(row["class"]) for row in reach
              if row["selection_rank"] is None or row["selection_rank"] > top_k]
    if missed:
        st.info(f"The top {top_k:,} features hold none of the {count} best markers of {', '.join(missed)}: the "
                "selection reaches these classes only further down (or not at all).", icon=":material/travel_explore:")


def _markers_table(markers, best, ranking, non_negative: bool) -> pd.DataFrame:
    """One row per class and marker, best first: its score, fold change, corrected p-value and its
    place in the selection."""
    place = np.empty(int(max(np.max(ranking), markers.features.max())) + 1, dtype=np.int64)
    place[np.asarray(ranking)] = np.arange(1, len(ranking) + 1)
    rows = []
    for c, columns in enumerate(best):
        for order, j in enumerate(columns, start=1):
            rows.append({"class": str(markers.classes[c]), "marker rank": order, "feature": markers.feature_names[j],
                         "score": markers.score[c, j], "log2 fold change": markers.log2_fold_change[c, j],
                         "p adjusted (BH)": markers.p_adjusted[c, j],
                         "rank in the selection": int(place[markers.features[j]])})
    table = pd.DataFrame(rows)
    return table if non_negative else table.drop(columns=["log2 fold change"])


#: The selection's first features grouped into modules at most (their correlations: 300 x 300).
MODULE_FEATURES = GROUPED_FEATURES


def modules_view(main, ranking, top_k: int) -> None:
    """The expander: the top K's modules of correlated features, each named by its strongest
    features with how many of the top K it holds, and the top K taken across the modules."""
    view = widgets.when_open(f"What the top {min(top_k, MODULE_FEATURES):,} cover: modules of correlated features",
                             "qa_modules")
    if view is None:
        return
    with view:
        selected = np.asarray(ranking[:min(top_k, MODULE_FEATURES)])
        digest = hashlib.sha256(selected.astype(np.int64).tobytes()).hexdigest()
        modules = runs.kept(f"modules {main.fingerprint} {digest}", lambda: selection_modules(main.X, selected))
        names = main.feature_names
        summary = modules.summary(names, top_k=selected.size)
        if modules.n_modules == 1:
            st.caption(f"The top {selected.size:,} features are one group: no split of them into 2 to 10 modules of "
                       "correlated features separates them (mean silhouette under 0.1).")
        else:
            st.caption(f"The top {selected.size:,} features form {modules.n_modules} modules of correlated features "
                       f"(average linkage on 1 - |correlation|; the number of largest mean silhouette among 2 to 10, "
                       f"{modules.silhouette:.2f}). The largest holds {max(row['size'] for row in summary):,} of them.")
        st.dataframe(pd.DataFrame({"module": [row["module"] for row in summary],
                                   "named by its strongest features": [", ".join(row["named"]) for row in summary],
                                   f"of the top {selected.size:,}": [row["size"] for row in summary],
                                   "first in the selection at": [row["first_rank"] for row in summary]}),
                     hide_index=True, height="content" if len(summary) <= 10 else 300)
        across = across_modules(modules)
        st.caption(f"An alternative ordering, the best of each module in turn: {', '.join(str(names[j]) for j in across[:10])}"
                   + (", ..." if across.size > 10 else "") + ". The same features, the groups interleaved: it trades the "
                   "strongest module's later features for the other modules' best.")
        st.download_button("Modules (CSV)", lambda: downloads.frame_csv(pd.DataFrame(
            {"feature": [names[j] for j in modules.features], "module": modules.module + 1,
             "rank in the selection": np.arange(1, modules.features.size + 1),
             "rank across modules": np.argsort(np.argsort([list(across).index(j) for j in modules.features])) + 1})),
            file_name=downloads.file_name(main.name, "modules", "csv"), mime="text/csv", key="qa_modules_csv",
            on_click="ignore")
