"""Settings' starting values, and their fall-back (with a note) where the data change their meaning."""

from __future__ import annotations

import streamlit as st

from core.selection.qalpha import QAlphaParameters

from .datasets import class_values, current_dataset


_JUDGED_FOR = "_settings_judged_for"
#: The Q-alpha page's λ slider, and the λ path solved at its positive values so that every step of
#: the slider is a lookup (the benchmarks step and time this same grid): 1, 2, 3 and 5 per decade
#: from 1e-4 to 100, 25 values, fine enough that a drag over the path in the browser moves
#: smoothly (issue 50); the earlier grid's values (1 and 3 per decade) are among them, so old links hold
QALPHA_LAMBDAS = [0.0] + [float(f"{m}e{e}") for e in range(-4, 2) for m in (1, 2, 3, 5)] + [100.0]
QALPHA_PATH_LAMBDAS = [value for value in QALPHA_LAMBDAS if value > 0]


def set_defaults(defaults: dict, valid: dict | None = None, labels: dict | None = None,
                 per_data: tuple = ()) -> None:
    """Give keyed widgets their starting values through the session (so no ``value=`` is needed
    and a restored link wins), and re-judge values left over from another data set, with a note
    (:func:`show_settings_notes`) naming the setting by its label (``labels[key]``):

    - a key of ``per_data`` (a value whose meaning changes with the data: k against the number of
      classes, K against the number of features) returns to this data set's default when the data
      set changed since it was set, naming the old value, the set it was chosen for and the new one;
    - a value that ``valid[key](value)`` rejects returns to the default.

    The widgets keep their values for the session themselves (``persist_state="session"``), so a
    page finds its settings when the user comes back."""
    data = current_dataset()
    judged = st.session_state.setdefault(_JUDGED_FOR, {})
    for key, default in defaults.items():
        check = (valid or {}).get(key)
        label = (labels or {}).get(key, key)
        if key not in st.session_state:
            st.session_state[key] = default
        elif key in per_data and judged.get(key, (data.fingerprint,))[0] != data.fingerprint \
                and st.session_state[key] != default:
            adjust(key, default, f"{label}: {shown(st.session_state[key])} was chosen for {judged[key][1]}; for "
                                 f"{data.name} it is now {shown(default)}, this data set's default.")
        elif check is not None and not check(st.session_state[key]):
            adjust(key, default, f"{label}: {shown(st.session_state[key])} does not "
                                 f"apply to {data.name}; now {shown(default)}.")
        if key in per_data:
            judged[key] = (data.fingerprint, data.name)


def judged_for_current_data(key: str) -> None:
    """``key``'s value was chosen for the current data set (a link restored it): keep it."""
    data = current_dataset()
    st.session_state.setdefault(_JUDGED_FOR, {})[key] = (data.fingerprint, data.name)


def chosen_for_other_data(key: str) -> str | None:
    """The name of the data set ``key`` was set for, when that is not the current data set
    (None otherwise); from now on it counts as set for the current one. For settings whose
    default comes later in the page (as Q-alpha's K, from the run)."""
    data = current_dataset()
    judged = st.session_state.setdefault(_JUDGED_FOR, {})
    before = judged.get(key)
    judged[key] = (data.fingerprint, data.name)
    return before[1] if before is not None and before[0] != data.fingerprint else None


def shown(value) -> str:
    """A setting's value as a note shows it."""
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) if value else "none"
    return f"{value:g}" if isinstance(value, float) else str(value) if value != "" else "none"


def adjust(key: str, value, note: str) -> None:
    """Replace a setting that no longer applies (another data set) and say so once."""
    st.session_state[key] = value
    add_note(note)


def add_note(note: str) -> None:
    """A note for :func:`show_settings_notes` about a setting this run changed."""
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


def qalpha_side_options(data, side_available: bool, picked_available: bool = False) -> list[str]:
    """The Q-alpha page's choices of side information on ``data``: side classes and pairs need
    labels, uploaded side data an upload that describes these features, picked samples samples
    picked on the map of this data set."""
    has_labels = data.labels is not None and data.classes.size >= 2
    return (["none"] + (["side classes", "pairs"] if has_labels else []) + (["uploaded side data"] if side_available else [])
            + (["picked samples"] if picked_available else []))


def qalpha_defaults(data) -> dict:
    """The Q-alpha page's settings before the user touches them: the run's defaults are those of
    :class:`QAlphaParameters` (the Kernel Q-alpha page compares with that run): k is the library's
    ``DEFAULT_K`` (within what the data allow), no side information and ``DEFAULT_LAM`` for when it is
    switched on. k and λ are chosen from the data (``qa_auto``) only when the user asks: turned on
    by itself as side classes were chosen, it hid the λ slider and its k carried into Compare."""
    run = QAlphaParameters()
    default_k = int(min(run.k, qalpha_max_k(data)))
    return {"qa_supervised": run.supervised, "qa_auto": False, "qa_k": default_k, "qa_criterion": run.criterion,
            "qa_side_mode": "none", "qa_n_pairs": 50, "qa_side_classes": class_values(data)[-1:], "qa_lambda": run.lam,
            "qa_init": run.init, "qa_n_init": run.n_init, "qa_max_iter": run.max_iter, "qa_tol": run.tol,
            "qa_seed": run.random_state, "qa_colour_by": ""}


def chosen_qalpha(data, side_available: bool) -> dict:
    """The Q-alpha page's settings as the user left them (its defaults where the page was not
    visited), judged against ``data`` as that page judges them: ``qa_side_mode``, ``qa_k`` and
    ``qa_side_classes`` that do not apply fall back. For pages that run the user's Q-alpha."""
    defaults = qalpha_defaults(data)
    chosen = {key: st.session_state.get(key, default) for key, default in defaults.items()}
    has_labels = data.labels is not None and data.classes.size >= 2
    if chosen["qa_side_mode"] not in qalpha_side_options(data, side_available):
        chosen["qa_side_mode"] = "none"
    if not 1 <= chosen["qa_k"] <= qalpha_max_k(data):
        chosen["qa_k"] = defaults["qa_k"]
    chosen["qa_supervised"] = bool(chosen["qa_supervised"]) and has_labels
    chosen["qa_side_classes"] = [c for c in chosen["qa_side_classes"] if c in class_values(data)] or defaults["qa_side_classes"]
    return chosen
