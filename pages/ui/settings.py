"""Settings' starting values, and their fall-back (with a note) where the data change their meaning."""

from __future__ import annotations

import streamlit as st

from core.selection.qalpha import QAlphaParameters

from .datasets import class_values, current_dataset


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


def qalpha_max_k(data) -> int:
    """The largest k the Q-alpha page offers on ``data``."""
    return max(1, min(50, data.n_samples - 1))


def qalpha_defaults(data) -> dict:
    """The Q-alpha page's settings before the user touches them: the run's defaults are those of
    :class:`QAlphaParameters` (the Kernel Q-alpha page compares with that run), with k the number of
    classes (2 without labels), no side information and λ = 0.1 for when it is switched on."""
    has_labels = data.labels is not None and data.classes.size >= 2
    default_k = int(min(max(data.classes.size, 2) if has_labels else 2, qalpha_max_k(data)))
    run = QAlphaParameters(k=default_k)
    return {"qa_supervised": run.supervised, "qa_k": default_k, "qa_criterion": run.criterion,
            "qa_side_mode": "none", "qa_n_pairs": 50, "qa_side_classes": class_values(data)[-1:], "qa_lambda": 0.1,
            "qa_init": run.init, "qa_n_init": run.n_init, "qa_max_iter": run.max_iter, "qa_tol": run.tol,
            "qa_seed": run.random_state}


def chosen_qalpha(data, side_available: bool) -> dict:
    """The Q-alpha page's settings as the user left them (its defaults where the page was not
    visited), judged against ``data`` as that page judges them: ``qa_side_mode``, ``qa_k`` and
    ``qa_side_classes`` that do not apply fall back. For pages that run the user's Q-alpha."""
    defaults = qalpha_defaults(data)
    chosen = {key: st.session_state.get(key, default) for key, default in defaults.items()}
    has_labels = data.labels is not None and data.classes.size >= 2
    options = ["none"] + (["side classes", "pairs"] if has_labels else []) + (["uploaded side data"] if side_available else [])
    if chosen["qa_side_mode"] not in options:
        chosen["qa_side_mode"] = "none"
    if not 1 <= chosen["qa_k"] <= qalpha_max_k(data):
        chosen["qa_k"] = defaults["qa_k"]
    chosen["qa_supervised"] = bool(chosen["qa_supervised"]) and has_labels
    chosen["qa_side_classes"] = [c for c in chosen["qa_side_classes"] if c in class_values(data)] or defaults["qa_side_classes"]
    return chosen
