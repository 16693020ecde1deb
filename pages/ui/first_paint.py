"""A new browser tab's first paint: its first figure, table and code wait until its controls had time to show.

Streamlit's front end loads each element kind's code when a tab first draws one: Plotly's is
4.7 MB, the code highlighter's 1.6 MB, the table's 1.2 MB. While those load and compile, the
browser draws nothing of the page, not even the widgets whose messages came long before: on the
Q-alpha page the controls of a new tab showed 4.7-7.3 s after the navigation, where without
those three kinds they showed in 2.7-3.8 s (docs/benchmarks.md at 98003b7, "The first paint of a new tab").

So the first element of such a kind in a tab (:func:`wait_for_controls`) is sent only once the
run has gone on for :data:`PAUSE` seconds: the page's controls, sent before it, are drawn in the
meantime. Later elements of that kind, in this run and the tab's later ones, are sent at once.
The run sleeps in the server; nothing in the browser asks for another run, so nothing can race
with the user's clicks (an earlier design, a report from the browser that reran the page, lost a
click on Run and brought back a page the user had just left).

A page run on its own (AppTest, without ``app.py``) never waits: :func:`start` was not called.
"""

from __future__ import annotations

import threading
import time

import streamlit as st

#: The element kinds whose front-end code is large enough to hold back a tab's first paint.
FIGURE, TABLE, CODE = "figure", "table", "code"
#: Session key: the kinds this tab has been sent.
DRAWN = "first_paint_drawn"
#: Seconds from the run's start before the first element of a kind new to the tab is sent.
#: A/B on the Q-alpha page, a new tab per open, medians of 4 (docs/benchmarks.md at 98003b7): 0.3 s was too
#: short (controls at 5.4 s, as without a pause), 0.6 s left them at 2.8-3.0 s, 0.8-1.0 s at
#: 2.2-2.4 s, and 1.5 s put the figures 1 s later. 1.0 s leaves a margin for a busier machine.
PAUSE = 1.0

_RUN = threading.local()  # this script thread's run: when it started


def start() -> None:
    """At every run of ``app.py``: the tab's kinds are tracked, and the run's start is noted."""
    st.session_state.setdefault(DRAWN, set())
    _RUN.started = time.monotonic()


def wait_for_controls(kind: str) -> None:
    """Before an element of ``kind`` is sent: if the tab has not been sent one yet, wait until the
    run has gone on for :data:`PAUSE` seconds (a run that computed that long does not wait), and
    note the kind as sent. A run not started by :func:`start` (a page alone, a fragment's own
    rerun, which comes after its page's run) does not wait."""
    drawn = st.session_state.get(DRAWN)
    if drawn is None or kind in drawn:
        return
    remaining = PAUSE - (time.monotonic() - getattr(_RUN, "started", -float("inf")))
    if remaining > 0:
        time.sleep(remaining)
    drawn.add(kind)
