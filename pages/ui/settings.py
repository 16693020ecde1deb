"""Settings' starting values, and their fall-back (with a note) where the data change their meaning."""

from __future__ import annotations

import streamlit as st

from .datasets import current_dataset


def set_defaults(defaults: dict, valid: dict | None = None, labels: dict | None = None) -> None:
    """Give keyed widgets their starting values through the session (so no ``value=`` is needed
    and a restored link wins), and replace values left over from another data set that
    ``valid[key](value)`` rejects, with a note (:func:`show_settings_notes`) naming the setting
    (``labels[key]``). The widgets keep their values for the session themselves
    (``persist_state="session"``), so a page finds its settings when the user comes back."""
    for key, default in defaults.items():
        check = (valid or {}).get(key)
        if key not in st.session_state:
            st.session_state[key] = default
        elif check is not None and not check(st.session_state[key]):
            adjust(key, default, f"{(labels or {}).get(key, key)}: {shown(st.session_state[key])} does not "
                                 f"apply to {current_dataset().name}; now {shown(default)}.")


def shown(value) -> str:
    """A setting's value as a note shows it."""
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) if value else "none"
    return f"{value:g}" if isinstance(value, float) else str(value)


def adjust(key: str, value, note: str) -> None:
    """Replace a setting that no longer applies (another data set) and say so once."""
    st.session_state[key] = value
    st.session_state.setdefault("_settings_notes", []).append(note)


def show_settings_notes() -> None:
    """The settings changed in this run because they did not apply to the data (once)."""
    notes = st.session_state.pop("_settings_notes", [])
    if notes:
        st.info("**Settings adjusted to the data set**\n\n" + "\n".join(f"- {note}" for note in notes),
                icon=":material/tune:")
