"""The Data page's server tab: large sets in the server's data folder (``QALPHA_DATA_DIR``), run
whole on Q-alpha and the one-pass filters without being loaded into the browser, or read as a
dense subset for the other pages."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import streamlit as st

from core import InputError
from core.data.stores import DATA_FOLDER_VARIABLE, dense_subset, list_stores, open_store
from core.plots import history_figure, sorted_weights_figure
from core.selection.qalpha import q_alpha
from core.selection.scorers import SCORERS, score_features
from core.selection.sparsity import default_k
from pages.ui import cluster, datasets, downloads, runs, widgets

SERVER_METHODS = {"qalpha": "Q-alpha (unsupervised)", "variance": "Variance", "fisher": "Fisher score (labels)",
                  "pearson": "Pearson correlation (labels)"}


@st.cache_resource(show_spinner=False, max_entries=8)
def _opened(path: str, modified: float):
    """A server data set opened once (lazily: no values are read) and shared by the sessions."""
    return open_store(path)


def _run_on_store(stored, request, progress, on_cluster=None):
    """The requested method on the whole set; on ``on_cluster`` (:func:`pages.ui.cluster.current`)
    its passes run on the workers, from a thread of its own that a Stop cancels."""
    labels = None if request["labels"] is None else stored.labels(request["labels"])

    def work(report):
        if request["method"] == "qalpha":
            return q_alpha(stored.X, request["k"], init=request["init"], max_iter=request["max_iter"], tol=1e-6,
                           random_state=0, progress=report)
        return score_features(request["method"], stored.X, labels)

    if on_cluster is None:
        return work(progress)
    return cluster.run_on(on_cluster, work, progress or (lambda report: True))


def cluster_line():
    """Where the whole-set runs compute, said on the tab: the cluster of ``QALPHA_DASK_SCHEDULER``
    (its workers), or why not (a scheduler that did not answer; the runs then stay in the app's
    process, and the user can try again). Returns the cluster, or None."""
    on_cluster = cluster.current()
    if isinstance(on_cluster, InputError):
        widgets.show_error(on_cluster)
        st.button("Try the cluster again", key="server_cluster_retry", on_click=cluster.try_again)
        return None
    if on_cluster is not None:
        st.caption(on_cluster.describe())
    return on_cluster


def server_tab(folder):
    """Large sets in the server's data folder: run Q-alpha and the one-pass filters on the whole
    set (read a row block at a time), or load a dense subset for the other pages."""
    paths = list_stores(folder)
    if not paths:
        st.info(f"The data folder {folder} holds no .h5ad, .zarr or .npy data sets.")
        return
    path = st.selectbox("Data set on the server", paths, format_func=lambda p: p.name, key="server_store", persist_state="session",
                        help=f"The .h5ad files, .zarr stores and .npy arrays in {folder} ({DATA_FOLDER_VARIABLE}). "
                             "They are opened lazily: nothing is read until a computation needs it.")
    try:
        stored = _opened(str(path), path.stat().st_mtime)
    except InputError as error:
        widgets.show_error(error)
        return
    st.markdown(f"**{stored.name}:** {stored.describe()}.")
    on_cluster = cluster_line()
    columns = list(stored.annotations)
    st.caption("Every page but this one works on data in memory. Here Q-alpha and the one-pass filters run on the "
               "whole set; below, load a subset into the app for the other pages.")
    with st.container(border=True):
        st.markdown("**Run on the whole set**")
        left, middle, right = st.columns(3)
        method = left.selectbox("Method", list(SERVER_METHODS), format_func=SERVER_METHODS.get, key="server_method",
                                persist_state="session")
        labels = None
        if method in SCORERS and SCORERS[method][0].supervised:
            if not columns:
                st.info("This data set has no per-sample columns to serve as labels; Fisher and Pearson need them.")
                return
            labels = middle.selectbox("Labels", columns, key="server_labels", persist_state="session")
        k = init = max_iter = None
        if method == "qalpha":
            k = middle.number_input("k (clusters)", 1, 50, 5, key="server_k", persist_state="session")
            max_iter = right.number_input("Iterations at most", 1, 5000, 300, key="server_iter", persist_state="session",
                                          help="Each iteration reads the data once; the progress bar shows the time "
                                               "per iteration. Q-alpha takes tens to a few hundred iterations to move its "
                                               "weights by less than 1e-6.")
            init = st.radio("Start", ["uniform", "random"], horizontal=True, key="server_init", persist_state="session",
                            help="uniform: the leading vectors with all weights equal (a few passes more, the "
                                 "better start); random: a random orthonormal Q.")
        request = dict(path=str(path), method=method, labels=labels, k=k, init=init, max_iter=max_iter)
        if st.button("Run", key="server_run", type="primary"):
            st.session_state.update(server_request=request, server_stopped=False)
        pending = st.session_state.get("server_request")
        if pending is not None:
            key = json.dumps(dict(pending, modified=path.stat().st_mtime), sort_keys=True)
            try:
                if pending["method"] == "qalpha":  # with a Stop beside its progress bar while it runs
                    result = runs.run_with_progress(key, lambda progress: _run_on_store(stored, pending, progress,
                                                                                          on_cluster),
                                                    stop="server", last=False, text=f"Q-alpha on {stored.name}",
                                                    status=runs.iteration_status(pending["max_iter"]))
                else:
                    with st.spinner(f"{SERVER_METHODS[pending['method']]}: one pass over {stored.name}…"):
                        result = runs.memoised(key, lambda: _run_on_store(stored, pending, None, on_cluster))
                if result is not None:  # None: stopped
                    st.session_state["server_result"] = (pending, result, stored.feature_names)
            except InputError as error:
                st.session_state["server_error"] = error
            st.session_state["server_request"] = None
            st.rerun()  # draw the page again without the Stop button (the result is memoised)
        if "server_error" in st.session_state:
            widgets.show_error(st.session_state.pop("server_error"))
        if st.session_state.pop("server_stopped", False):
            st.warning("Stopped; nothing of that run was kept.", icon=":material/stop_circle:")
        shown = st.session_state.get("server_result")
        if shown is not None:
            show_server_result(*shown)
    with st.container(border=True):
        st.markdown("**Load a subset into the app** (for the pages that need data in memory)")
        left, middle, right = st.columns(3)
        n_features = left.number_input("Features of highest variance", 2, stored.shape[1],
                                       min(2000, stored.shape[1]), key="subset_features", persist_state="session")
        n_samples = middle.number_input("Samples drawn at random", 2, stored.shape[0], min(5000, stored.shape[0]),
                                        key="subset_samples", persist_state="session")
        subset_labels = right.selectbox("Labels", ["(none)"] + columns, key="subset_labels", persist_state="session")
        if st.button("Load subset", key="load_subset", help="One pass for the variances, then the chosen block is "
                                                            "read; if anything is wrong the current data set stays."):
            with st.spinner("Reading the subset…"):
                datasets.load_upload(lambda: dense_subset(stored, int(n_features), int(n_samples),
                                                    label_column=None if subset_labels == "(none)" else subset_labels))


def show_server_result(request, result, names):
    """The weights of the last whole-set run, kept while the user goes on exploring."""
    stored_name = Path(request["path"]).name
    if request["method"] == "qalpha":
        weights, title = result.alpha, f"Q-alpha weights on {stored_name} (k = {result.k})"
        cells = widgets.row(3)
        cells[0].metric("Iterations", result.n_iter, help="Each iteration reads the data once.")
        cells[1].metric("Converged", "yes" if result.converged else "no",
                        help="Whether the residuals of the returned alpha and Q fell below 1e-6 (the library's "
                             "convergence test). If not, the weights are those of the last iteration: raise "
                             "'Iterations at most' for more.")
        widgets.gap_metric(cells[2], result.gap)
        widgets.convergence_warning(result, "Raise 'Iterations at most' and run again.")
        if result.data_placement:
            st.caption(result.data_placement)  # where the passes read the data: the workers' memory, or the file
        marks = dict(n_selected=result.gap.n_selected, clear_gap=result.gap.clear,
                     default=default_k(result.alpha, result.gap))
    else:
        weights, title, marks = result.scores, f"{SERVER_METHODS[request['method']]} on {stored_name}", {}
        st.caption(f"One pass over the data in {result.seconds:.1f} s.")
    widgets.chart(sorted_weights_figure(weights, names, title=title, **marks), "server_weights")
    if request["method"] == "qalpha" and result.history.size > 1:
        widgets.chart(history_figure(result.history), "server_history")
    ranking = np.argsort(-weights, kind="stable")
    names = names or tuple(f"feature {j}" for j in range(weights.size))
    top = ranking[:50]
    st.dataframe({"rank": np.arange(1, top.size + 1), "feature": [names[j] for j in top], "weight": weights[top]},
                 hide_index=True, height=240)
    # built when clicked, not on every rerun of the page (a row per feature: 10^4-10^6 of them)
    st.download_button("Ranking (CSV)", lambda: downloads.table_csv({"rank": list(range(1, ranking.size + 1)), "feature":
                                                              [names[j] for j in ranking], "weight": weights[ranking]}),
                       file_name=downloads.file_name(stored_name, request["method"], "csv"), key="server_download", on_click="ignore")
