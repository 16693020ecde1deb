"""Spectral feature selection explorer: the Streamlit entry point.

Registers the pages (``st.navigation``), draws the shared sidebar (the current data set) and
leaves everything else to the pages in ``pages/``. Run with ``streamlit run app.py``.
"""

import streamlit as st

from pages import ui

st.set_page_config(page_title="Spectral feature selection", page_icon="α", layout="wide")

# One line per page; sections group them in the sidebar.
PAGES = {
    "": [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)],
    "Select": [st.Page("pages/qalpha.py", title="Q-alpha", icon=":material/scatter_plot:")],
}

navigation = st.navigation(PAGES)
ui.sidebar_summary()
navigation.run()
