"""The sidebar every page shares: the page links, the data-set picker, the data summary."""

from __future__ import annotations

import streamlit as st

from core.data.bundled import load_dataset
from core.limits import format_bytes

from .datasets import (SESSION_DATA_BYTES, bundled_names, current_dataset, name_data_in_address, session_datasets,
                       set_dataset)
from .session import track_session


#: A picture drawn at its own size (widgets.picture) shrinks to its column in a narrower window,
#: its proportions kept: the Haar page's grid of 8 images per class was 1,340 px in a 1,170 px column.
PICTURES_FIT_COLUMN = """<style>
[data-testid="stImageContainer"] { max-width: 100%; }
[data-testid="stImage"] img { max-width: 100%; height: auto; }
</style>"""

#: Streamlit adds a browser-history entry whenever a run changes the query string (the pages
#: write their settings there at every rerun), so Back stepped through slider positions. This
#: makes a change of the query string alone replace the current entry; a change of page still
#: adds one, so Back returns to the page before. Installed once per browser tab.
REPLACE_QUERY_HISTORY = """<script>
if (!window.__settingsReplaceHistory) {
  window.__settingsReplaceHistory = true;
  const push = window.history.pushState.bind(window.history);
  window.history.pushState = function (state, title, url) {
    const next = url === undefined || url === null ? null : new URL(url, window.location.href);
    if (next !== null && next.pathname === window.location.pathname) {
      return window.history.replaceState(state, title, url);
    }
    return push(state, title, url);
  };
}
</script>"""


def _pick_dataset() -> None:
    name = st.session_state.get("dataset_choice")
    if name:
        set_dataset(session_datasets().get(name) or load_dataset(name))


def sidebar_summary(pages: dict | None = None) -> None:
    """The sidebar: links to the pages (by section), the bundled-set picker, the data summary."""
    track_session()
    data = current_dataset()
    with st.sidebar:
        # first of all: installed later (it was below the data picker), a click on another page
        # before it ran let that page's first settings write push an entry Back then revisited
        st.html(PICTURES_FIT_COLUMN + REPLACE_QUERY_HISTORY, unsafe_allow_javascript=True, width="content")
        for section, entries in (pages or {}).items():
            if section:
                st.caption(section)
            for entry in entries:
                st.page_link(entry)
        if pages:
            st.divider()
        library = session_datasets()
        names = list(reversed(library)) + bundled_names()
        # keep the picker in step with data chosen elsewhere (the Data page); the widget is not
        # drawn yet in this run, so its state may be set
        st.session_state["dataset_choice"] = data.name if data.name in names else None
        name_data_in_address()  # a reload of any page keeps its data (pages add their own parameters)
        st.selectbox("Data set", names, placeholder="(choose a data set)", key="dataset_choice",
                     on_change=_pick_dataset,
                     format_func=lambda name: f"{name} · this session" if name in library else name,
                     help="The bundled data sets, and the ones loaded in this session (newest first; up to "
                          f"{format_bytes(SESSION_DATA_BYTES)} of them are kept), to switch between without "
                          "uploading again.")
        for note in st.session_state.pop("_dataset_notes", []):
            st.info(note, icon=":material/info:")
        summary = data.summary()
        rows = [f"**{data.name}**", f"{summary['samples']:,} samples x {summary['features']:,} features"]
        if summary["image shape"]:
            rows.append(f"images of {summary['image shape']} pixels")
        if summary["classes"]:
            rows.append(f"{summary['classes']} classes")
        st.markdown("  \n".join(rows))
