"""Spectral feature selection explorer: the Streamlit entry point.

Registers the pages (``st.navigation``), draws the shared sidebar (the current data set) and
leaves everything else to the pages in ``pages/``. Run with ``streamlit run app.py``.
"""

import streamlit as st

from pages.ui import datasets, session, sidebar

# a 230 px sidebar (Streamlit's default is 300) leaves an 800 px window room for the pages
st.set_page_config(page_title="Spectral feature selection", page_icon="α", layout="wide", initial_sidebar_state=230)

# One line per page; sections group them in the sidebar.
PAGES = {
    "": [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
         st.Page("pages/data.py", title="Data", icon=":material/dataset:")],
    "Select": [st.Page("pages/qalpha.py", title="Q-alpha", icon=":material/scatter_plot:"),
               st.Page("pages/kernel.py", title="Kernel Q-alpha", icon=":material/blur_on:"),
               st.Page("pages/topographic.py", title="Topographical map", icon=":material/map:"),
               st.Page("pages/haar.py", title="Haar reconstructions", icon=":material/grid_on:"),
               st.Page("pages/slda.py", title="Sparse LDA / PCA", icon=":material/filter_list:")],
    "Evaluate": [st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
                 st.Page("pages/figures.py", title="Paper figures", icon=":material/science:")],
}

# The sidebar draws its own links (sidebar.sidebar_summary): Streamlit's automatic list would
# otherwise flash the helper modules of pages/ before the first run registers these pages.
session.leave_a_core()  # once per process: the browser and the server's messages keep a core
with session.app_run():  # every page checks that its run started here (session.page_start)
    navigation = st.navigation(PAGES, position="hidden")
    datasets.follow_link(navigation)  # a link to data this session lacks opens the Data page
    sidebar.sidebar_summary(PAGES)
    navigation.run()
session.warm_imports()  # once per process, a few seconds on: scikit-learn before a page needs it
