"""Home: what the app does, the bundled data sets, where to go next."""

import numpy as np
import streamlit as st

from core.data.bundled import list_datasets, load_dataset
from pages.ui import session

session.page_start()

st.title("Spectral feature selection")
st.markdown(
    "Find the few features that matter — pixels, wavelet coefficients, genes or words — with "
    "spectral methods whose weights come out **positive and sparse** by themselves. Pick a "
    "bundled data set or upload your own, run the algorithms, move the sliders and see at once "
    "which features are selected.")

st.subheader("Methods")
st.markdown(
    "- **Q-alpha** — L. Wolf and A. Shashua, *Feature selection for unsupervised and supervised "
    "inference: the emergence of sparsity in a weighted-based approach*, ICCV 2003. Unsupervised "
    "and supervised selection by the coherence of the k leading eigenvalues of the affinity.\n"
    "- **Q-alpha with side information, kernel Q-alpha, topographical model** — A. Shashua and "
    "L. Wolf, *Kernel feature selection with side data using a spectral approach*, ECCV 2004.\n"
    "- **Greedy sparse LDA / PCA** — B. Moghaddam, Y. Weiss and S. Avidan, *Fast pixel/part "
    "selection with sparse eigenvectors*, ICCV 2007.\n"
    "- **Haar wavelet and Haar-like features**, and the baselines these papers compare against.")

st.subheader("Bundled data sets")
infos = list_datasets()
st.dataframe(
    [{"name": i.name, "kind": i.kind, "samples": i.n_samples, "features": i.n_features,
      "image": "x".join(map(str, i.image_shape)) if i.image_shape else "",
      "classes": i.n_classes, "description": i.description} for i in infos],
    hide_index=True, width="stretch")

image_sets = [i for i in infos if i.image_shape is not None]
columns = st.columns(len(image_sets))
for column, info in zip(columns, image_sets):
    data = load_dataset(info.name)
    first = data.images()[0]
    column.image(np.clip(first, 0, 1), caption=info.name, width="stretch", clamp=True)

st.caption("Sources and how to cite each set: assets/README.md in the repository.")

st.subheader("Where to go next")
st.markdown(
    "The current data set is shown in the sidebar (the AR faces to start with). The library "
    "under this app, `core`, can be used on its own: `from core.selection.qalpha import q_alpha`, "
    "`from core.data.bundled import load_dataset` — see the README.")
