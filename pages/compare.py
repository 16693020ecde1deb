"""Compare: Q-alpha and sparse LDA against the baselines on the current data set."""

import time

import numpy as np
import streamlit as st

from core import InputError
from core.baselines import SCORERS
from core.plots import comparison_figure
from pages import ui

SLOW = {"forward_wrapper", "backward_wrapper", "mutual_information", "rfe_svm", "l1_logistic"}

data = ui.current_dataset()
st.title("Compare")
st.caption("Each method ranks the features; the top k are then judged by how well k-means groups the "
           "samples with them (Hungarian accuracy, NMI) and by the normalised precision index of "
           "Shashua & Wolf, ECCV 2004, Sec. 6. Labels are used only for judging, and by the supervised methods.")
if data.labels is None or data.classes.size < 2:
    st.info("Comparing selections needs labels: choose or upload a labelled data set.")
    st.stop()
choices = ["Q-alpha", "Q-alpha (supervised)"] + (["sparse LDA"] if data.classes.size == 2 else []) + list(SCORERS)
default = ["Q-alpha", "fisher", "laplacian", "variance"]
methods = st.multiselect("Methods", choices, default=default,
                         format_func=lambda m: SCORERS[m][0].name + (" (slow)" if m in SLOW else "")
                         if m in SCORERS else m,
                         help="Run times of every baseline are measured in benchmarks/bench_baselines.py.")
sizes = [s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if s <= data.n_features]
k = int(min(max(data.classes.size, 2), data.n_samples - 1))


def ranking_of(method):
    if method == "Q-alpha":
        return ui.run_cached("q_alpha", dict(data=data.fingerprint, k=k), data.X, k).ranking
    if method == "Q-alpha (supervised)":
        return ui.run_cached("q_alpha", dict(data=data.fingerprint, supervised=True), data.X,
                             labels=data.labels).ranking
    if method == "sparse LDA":
        path = ui.run_cached("greedy_slda", dict(data=data.fingerprint, classes=None, reg=None),
                             data.X, data.labels)
        return path.backward_order
    return ui.run_cached("score_features", dict(data=data.fingerprint, method=method), method,
                         data.X, data.labels).ranking


if not methods:
    st.info("Choose at least one method.")
    st.stop()
rankings, seconds = {}, {}
try:
    for method in methods:
        start = time.perf_counter()
        rankings[method] = ranking_of(method)
        seconds[method] = time.perf_counter() - start
    curves = ui.run_cached("selection_curves", dict(data=data.fingerprint, methods=methods, sizes=sizes),
                           data.X, data.labels, rankings, sizes)
except InputError as error:
    ui.show_error(error)
    st.stop()
metric = st.radio("Measure", ["accuracy", "nmi", "precision"], horizontal=True,
                  help="accuracy: k-means clusters matched to classes (Hungarian); NMI: normalised mutual "
                       "information; precision: the normalised precision index of 000 Sec. 6 (k-NN purity).",
                  format_func={"accuracy": "k-means accuracy", "nmi": "NMI",
                               "precision": "normalised precision index"}.get)
st.plotly_chart(comparison_figure(curves, metric), key="comparison")
st.dataframe({"method": methods,
              "seconds (this run; 0 if cached)": [round(seconds[m], 3) for m in methods],
              f"best {metric}": [max(curves[m][metric]) for m in methods],
              "at k": [curves[m]["size"][int(np.argmax(curves[m][metric]))] for m in methods]},
             hide_index=True)
