"""Topographical map of all relevant feature subsets (Shashua & Wolf, ECCV 2004, Sec. 4)."""

import json
from functools import partial

import numpy as np
import streamlit as st

from core import InputError
from core.plots import heatmap_picture, image_figure, topographic_figure
from pages.ui import datasets, downloads, runs, session, settings, snippets, views, widgets

session.page_start()

data = datasets.current_dataset()
st.title("Topographical map")
st.caption("Round r runs Q-alpha with side information D = the squared alphas of the earlier rounds, "
           "so each round surfaces another solution set; each feature gets a coordinate per round "
           "from the two leading eigenvectors of that round's G (Shashua & Wolf 2004 Sec. 4, Fig. 2).")
# lambda against the side diagonal D of round 2, whose entries average 1/n (each round's alpha has
# unit norm): a lambda far above 1/n inhibits nothing (on the AR faces' 2,400 pixels lambda = 0.01
# gave a second round with cos 0.999 to the first), so it is chosen per 1/n. The default 1/n gives
# second rounds with cos 0.5 (AR faces) and 0.35 (ORL) to the first, and Shashua & Wolf 2004's solution sets on its
# example (which used lambda = 0.1 with n = 20)
LAMBDAS_TIMES_N = [0.05, 0.2, 0.5, 1.0, 2.0, 5.0, 20.0]
max_k = max(1, min(20, data.n_samples - 1))
VIEW = {"topo_rounds": views.integer_in(2, 5), "topo_k": views.integer_in(1, max_k), "topo_lam_n": views.choice_of(LAMBDAS_TIMES_N),
        "topo_pair": lambda v: list(map(int, v))}
LABELS = {"topo_rounds": "Rounds", "topo_k": "k — number of clusters", "topo_lam_n": "λ x n",
          "topo_pair": "Rounds on the axes", "topo_shown": "Features drawn"}
views.restore_view("topographic", VIEW, LABELS)
most_drawn = min(data.n_features, 300)
settings.set_defaults({"topo_rounds": 2, "topo_k": min(2, max_k), "topo_lam_n": 1.0, "topo_shown": min(40, most_drawn)},
                valid={"topo_k": lambda v: v <= max_k, "topo_shown": lambda v: v <= most_drawn},
                labels=LABELS)
settings.show_settings_notes()
views.undo_control("topographic", VIEW, LABELS)
controls = st.columns(3)
rounds = controls[0].slider("Rounds", 2, 5, key="topo_rounds", persist_state="session",
                            help="Runs of Q-alpha; each inhibits the features of the earlier ones (Shashua & Wolf 2004 Sec. 4).")
k = controls[1].number_input("k — number of clusters", 1, max_k, key="topo_k", persist_state="session",
                             help="Three clusters span two dimensions once features are centred: k = 2 for the example of Shashua & Wolf 2004, Sec. 4.")
lam_n = controls[2].select_slider("λ x n", LAMBDAS_TIMES_N, format_func=lambda v: f"{v:g}", key="topo_lam_n", persist_state="session",
                                  help="The ridge λ of D + λI, times the number of features n (D averages 1/n): "
                                       "small values push later rounds far from earlier ones.")
lam = lam_n / data.n_features
controls[2].caption(f"λ = {lam:.3g}")
if data.n_features > 5000:
    st.info(f"The map computes the two leading eigenvectors of an n x n G per round; with "
            f"{data.n_features:,} features this takes a while.")
try:
    topo = runs.run_cached("topographic_map", dict(data=data.fingerprint, k=int(k), rounds=rounds, lam=lam),
                         data.X, int(k), rounds, lam, solver="power")  # PSD: power steps, same fixed point
except InputError as error:
    widgets.show_error(error)
    st.stop()
for number, round_result in enumerate(topo.results, start=1):
    widgets.convergence_warning(round_result, "Try a larger λ (fewer features inhibited) or fewer rounds.",
                                what=f"Round {number}")
pairs = [(i, j) for i in range(rounds) for j in range(i + 1, rounds)]
# a pair restored from a link (a list) or left from more rounds must name rounds that exist
chosen = tuple(st.session_state.get("topo_pair", (0, 1)))
st.session_state["topo_pair"] = chosen if chosen in pairs else (0, 1)
pair = st.selectbox("Rounds on the axes", pairs, key="topo_pair", persist_state="session",
                    format_func=lambda p: f"round {p[0] + 1} (x) and round {p[1] + 1} (y)",
                    help="Which two rounds' coordinates and alphas make the map's axes and ellipses.")
first, second = pair
strongest = np.argsort(-np.maximum(topo.alphas[first], topo.alphas[second]), kind="stable")
shown = st.slider("Features drawn", 1, most_drawn, key="topo_shown", persist_state="session",
                  help="The features with the largest alpha in either round on the axes; a few dozen "
                       "stay readable (all of them overlap into one smear on images).")
widgets.chart(topographic_figure(topo.coordinates, topo.alphas, data.feature_names, rounds=pair,
                                 top=strongest[:shown],
                                 title=f"Topographical map: the {shown} features weighing most in round "
                                       f"{first + 1} or {second + 1}"), "topographic")
table = {"feature": list(data.feature_names)}
for r in range(rounds):
    table[f"alpha round {r + 1}"] = topo.alphas[r]
order = np.argsort(-topo.alphas.max(axis=0))[:30]
st.dataframe({key: np.asarray(values)[order] for key, values in table.items()}, hide_index=True, height=260)
if data.is_image:
    # pictures, redrawn at once when the rounds change (three heat maps cost a step of λ x n their
    # drawing); the figures with each pixel's value under the pointer are drawn only on request
    top_weight = float(topo.alphas[[first, second]].max())
    difference = topo.alphas[second] - topo.alphas[first]
    limit = max(float(np.abs(difference).max()), 1e-12)
    maps = {f"round_{r}": (topo.alphas[r], "Hot", 0.0, top_weight, f"alpha, round {r + 1}") for r in pair}
    maps["round_difference"] = (difference, "RdBu_r", -limit, limit, f"round {second + 1} − round {first + 1}")
    columns = widgets.row(3, width=240)  # three in a row in a 1,400-pixel window
    for column, (key, (values, scale, low, high, title)) in zip(columns, maps.items()):
        ends = (f"black at 0, red, yellow, white at {high:.3g}" if scale == "Hot"
                else f"blue at {low:.3g}, white at 0, red at {high:.3g}")
        with column:
            widgets.picture(heatmap_picture(values, data.image_shape, scale, low, high), key,
                            caption=f"{title}: {ends}")
    st.caption("Both rounds on the same colour scale; the difference is red where the later round weighs more.")
    hover = widgets.when_open("The same maps with each pixel's value under the pointer", "topo_hover")
    if hover is not None:
        cells = hover.container(horizontal=True, gap="medium")
        for key, (values, scale, low, high, title) in maps.items():
            widgets.chart(image_figure(values, data.image_shape, title=title, colorscale=scale, showscale=True,
                                       zmin=low, zmax=high), key, where=cells.container(width=300))
for r in range(rounds):
    table[f"direction in round {r + 1} (angle, radians)"] = topo.coordinates[r]
download = widgets.row(2)
download[0].download_button("Alphas and map coordinates of every round (CSV)", partial(downloads.table_csv, table),
                            file_name=downloads.file_name(data.name, "topographic", "csv"), mime="text/csv", key="topo_csv",
                            on_click="ignore")
download[1].download_button("Parameters (JSON)", json.dumps(dict(data_set=data.name, rounds=rounds, k=int(k),
                                                                 lam=lam, lam_times_n=lam_n), indent=1),
                            file_name=downloads.file_name(data.name, "topographic-parameters", "json"), mime="application/json",
                            key="topo_json", on_click="ignore")
widgets.snippet("Python: this map in a notebook", "topo_snippet",
                lambda: snippets.topographic_snippet(data, datasets.is_bundled(data), int(k), rounds, lam))
views.share_view(VIEW)
