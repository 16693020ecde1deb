"""What the pages share: the current data set in the session and the sidebar that shows it.

Kept small: pages call ``current_dataset()`` and ``set_dataset()``; the data themselves come
from ``core`` (bundled sets are cached there).
"""

from __future__ import annotations

import streamlit as st

from core import Dataset, InputError
from core.bundled import load_dataset

DEFAULT_DATASET = "warpAR10P"
_KEY = "dataset"


def current_dataset() -> Dataset:
    """The data set every page works on; the AR faces until the user picks another."""
    if _KEY not in st.session_state:
        st.session_state[_KEY] = load_dataset(DEFAULT_DATASET)
    return st.session_state[_KEY]


def set_dataset(dataset: Dataset) -> None:
    st.session_state[_KEY] = dataset


def show_error(error: InputError) -> None:
    """Show a library error as the message it is (never a traceback)."""
    st.error(str(error), icon=":material/error:")


def sidebar_summary() -> None:
    data = current_dataset()
    with st.sidebar:
        st.caption("Current data set")
        st.markdown(f"**{data.name}**")
        summary = data.summary()
        rows = [f"{summary['samples']:,} samples x {summary['features']:,} features"]
        if summary["image shape"]:
            rows.append(f"images of {summary['image shape']} pixels")
        if summary["classes"]:
            rows.append(f"{summary['classes']} classes")
        st.markdown("  \n".join(rows))
