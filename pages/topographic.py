"""Topographical map of all relevant feature subsets (Shashua & Wolf, ECCV 2004, Sec. 4)."""

import numpy as np
import streamlit as st

from core import InputError
from core.plots import image_figure, topographic_figure
from pages import ui

data = ui.current_dataset()
st.title("Topographical map")
st.caption("Round r runs Q-alpha with side information D = the squared alphas of the earlier rounds, "
           "so each round surfaces another solution set; each feature gets a coordinate per round "
           "from the two leading eigenvectors of that round's G (000 Sec. 4, Fig. 2).")
controls = st.columns(3)
rounds = controls[0].slider("Rounds", 2, 5, 2, help="Runs of Q-alpha; each inhibits the features of the earlier ones (000 Sec. 4).")
k = controls[1].number_input("k — number of clusters", 1, max(1, min(20, data.n_samples - 1)), 2,
                             help="Three clusters span two dimensions once features are centred: k = 2 for 000's example.")
lam = controls[2].select_slider("λ", [0.01, 0.03, 0.1, 0.3, 1.0], value=0.1, format_func=lambda v: f"{v:g}",
                                help="Ridge of D + λI: small values push later rounds far from earlier ones.")
if data.n_features > 5000:
    st.info(f"The map computes the two leading eigenvectors of an n x n G per round; with "
            f"{data.n_features:,} features this takes a while.")
try:
    topo = ui.run_cached("topographic_map", dict(data=data.fingerprint, k=int(k), rounds=rounds, lam=lam),
                         data.X, int(k), rounds, lam)
except InputError as error:
    ui.show_error(error)
    st.stop()
pair = st.selectbox("Rounds on the axes", [(i, j) for i in range(rounds) for j in range(i + 1, rounds)],
                    format_func=lambda p: f"round {p[0] + 1} (x) and round {p[1] + 1} (y)",
                    help="Which two rounds' coordinates and alphas make the map's axes and ellipses.")
st.plotly_chart(topographic_figure(topo.coordinates, topo.alphas, data.feature_names, rounds=pair),
                key="topographic")
table = {"feature": list(data.feature_names)}
for r in range(rounds):
    table[f"alpha round {r + 1}"] = topo.alphas[r]
order = np.argsort(-topo.alphas.max(axis=0))[:30]
st.dataframe({key: np.asarray(values)[order] for key, values in table.items()}, hide_index=True, height=260)
if data.is_image:
    columns = st.columns(rounds)
    for r, column in enumerate(columns):
        column.plotly_chart(image_figure(topo.alphas[r], data.image_shape, title=f"alpha, round {r + 1}",
                                         colorscale="Hot", showscale=False), key=f"round_{r}")
