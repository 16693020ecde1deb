"""Views a link reproduces: the widgets' values in the URL, restored on the first visit; and the
last settings changes, undone one at a time (:func:`undo_control`)."""

from __future__ import annotations

import copy
import json

import streamlit as st

from .datasets import current_dataset, data_link
from .settings import judged_for_current_data, shown


def restore_view(page: str, parsers: dict, labels: dict | None = None) -> None:
    """Once per page and session: copy the link's query parameters into the widgets' state.

    ``parsers`` maps a widget key to a function of the decoded JSON value that returns the
    widget's value or raises ``ValueError``/``TypeError``/``KeyError`` when it is not one the
    widget accepts; such parameters are ignored with a note (never a traceback) that names each
    setting by its label on screen (``labels[key]``) and the value the link gave.
    """
    flag = f"_view_restored_{page}"
    if st.session_state.get(flag):
        return
    st.session_state[flag] = True
    ignored = []
    for key, parse in parsers.items():
        if key not in st.query_params:
            continue
        try:
            st.session_state[key] = parse(json.loads(st.query_params[key]))
            judged_for_current_data(key)  # the link chose it for this data set: not re-judged
        except (ValueError, TypeError, KeyError):
            ignored.append(f"{(labels or {}).get(key, key)} ({st.query_params[key]})")
    if ignored:
        st.info(f"Not valid for {current_dataset().name}, so ignored: the link's "
                f"{'; '.join(ignored)}. The page's own values are used instead.")


#: How many settings changes a page can undo (per data set).
UNDO_DEPTH = 30


def undo_control(page: str, keys, labels: dict | None = None) -> None:
    """The page's settings as they stand at the start of this run join its history (per data
    set), and an Undo button names the last change and puts it back, one change per press.

    Settings live in the address without a browser-history entry per change, so Back leaves the
    page (a rerun per slider step made Back step through them); this is the undo instead. A run
    records the values the user's last action left; values a page adjusts itself during a run are
    recorded with the next.
    """
    history = st.session_state.setdefault(f"_undo_{page}_{current_dataset().fingerprint[:16]}", [])
    now = {key: copy.deepcopy(st.session_state[key]) for key in keys if key in st.session_state}
    last = history[-1] if history else None
    if last is None or not _changed(last, now):
        if last is not None:
            history[-1] = {**last, **now}  # new keys (a first visit's defaults) are not a change to undo
        else:
            history.append(now)
    else:
        history.append(now)
        del history[:-UNDO_DEPTH]
    if len(history) < 2:
        return
    changed = _changed(history[-2], history[-1])
    names = [(labels or {}).get(key, key) for key in changed]
    back = "; ".join(f"{name} back to {shown(history[-2][key])}" for name, key in zip(names, changed))
    label = f"Undo: {back}"
    st.button(label if len(label) <= 90 else label[:89] + "…", key=f"undo_{page}",
              icon=":material/undo:", on_click=_undo, args=(history,),
              help=f"Undo the last change of this page's settings ({back}). {len(history) - 1} change(s) can be undone.")


def _changed(before: dict, after: dict) -> list:
    """The keys both snapshots hold whose values differ."""
    return [key for key in after if key in before and before[key] != after[key]]


def _undo(history: list) -> None:
    """The button's callback, before the page runs: the previous values back in the widgets."""
    if len(history) < 2:
        return
    history.pop()
    for key, value in history[-1].items():
        st.session_state[key] = copy.deepcopy(value)


def share_view(keys) -> None:
    """Write the widgets' current values (and the bundled data set) into the URL, so that the
    address reproduces this view when copied. ``keys``: the widget keys, e.g. the parsers given
    to :func:`restore_view`, so that what is restored and what is shared are one list."""
    values = {key: json.dumps(st.session_state[key], default=str) for key in keys if key in st.session_state}
    values.update(data_link())  # the data (an upload by its store key) and side data the view is of
    st.query_params.from_dict(values)


def choice_of(options):
    """A parser for :func:`restore_view`: the value must be one of ``options``."""
    allowed = list(options)

    def parse(value):
        if value not in allowed:
            raise ValueError(value)
        return value
    return parse


def integer_in(low, high):
    """A parser for :func:`restore_view`: an integer in ``[low, high]``."""
    def parse(value):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(value)
        return value
    return parse


def flag(value):
    """A parser for :func:`restore_view`: a boolean."""
    if not isinstance(value, bool):
        raise TypeError(value)
    return value
