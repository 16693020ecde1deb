"""Views a link reproduces: the widgets' values in the URL, restored on the first visit."""

from __future__ import annotations

import json

import streamlit as st

from .datasets import current_dataset, data_link
from .settings import judged_for_current_data


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
