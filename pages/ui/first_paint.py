"""A new browser tab's first paint: figures, tables and code wait until the controls are drawn.

Streamlit's front end loads each element kind's code when a page first draws one: Plotly's is
4.7 MB, the code highlighter's 1.6 MB, the table's 1.2 MB. While those load and compile, the
browser draws nothing of the page, not even the widgets whose code came long before: on the
Q-alpha page the controls of a new tab showed 4.7-7.3 s after the navigation, where without
those three kinds they showed in 2.7-3.8 s (docs/benchmarks.md, "The first paint of a new tab").

So in a tab that has not drawn a kind yet, the pages draw a light stand-in for it
(:func:`ready` says which), and a tiny component at the end of the run reports from the browser
once that run is painted (:func:`report_paint`). Its report reruns the page, which then draws the
figures, tables and code in place of the stand-ins. Later runs of the tab draw them at once.

A page run on its own (AppTest, without ``app.py``) never defers: :func:`start` was not called.
"""

from __future__ import annotations

import streamlit as st

#: The element kinds whose front-end code is large enough to hold back a tab's first paint.
FIGURE, TABLE, CODE = "figure", "table", "code"
#: How every stand-in's note ends (benchmarks/bench_app.py waits for the last to go).
STAND_IN = "is drawn once the page's controls are shown"
#: Session keys: the kinds this tab has drawn, and those its runs have put off.
DRAWN, PUT_OFF = "first_paint_drawn", "first_paint_put_off"

# The report leaves once the frame the run is drawn in is painted (requestAnimationFrame runs
# before that frame, the timeout after it), once no run is under way and once the user has not
# touched the page for QUIET_MS. Its rerun carries the page the browser shows: sent during a run
# the user started (a click on Run just after the page showed) it stopped that run, and sent just
# after a click on another page's link, before the browser marked the run as started, it brought
# the old page back. The run's state is the one Streamlit's front end keeps on its app element.
_REPORTER = st.components.v2.component(
    "first_paint_reporter",
    js="""const QUIET_MS = 400, RUN_WAIT_MS = 3000;
export default function ({ setTriggerValue }) {
  const app = document.querySelector('[data-testid="stApp"]');
  const inputs = ['pointerdown', 'keydown', 'popstate'];
  let lastInput = -Infinity, done = false;
  let sawRun = true;
  const touched = () => { lastInput = performance.now(); sawRun = false; };
  const stop = () => { done = true; for (const kind of inputs) window.removeEventListener(kind, touched, true); };
  for (const kind of inputs) window.addEventListener(kind, touched, true);
  const busy = () => ['running', 'rerunRequested', 'stopRequested']
    .includes(app?.getAttribute('data-test-script-state'));
  // after a touch, the run it asked for must have shown as under way and ended (a server busy
  // elsewhere can take longer than QUIET_MS to start it, and until it starts the browser still
  // shows the old page), or not have come within RUN_WAIT_MS (a touch that asked for nothing)
  const report = () => {
    if (done) return;
    const now = performance.now();
    if (busy()) sawRun = true;
    const waiting = busy() || now - lastInput < QUIET_MS || (!sawRun && now - lastInput < RUN_WAIT_MS);
    if (waiting) { setTimeout(report, 100); return; }
    stop();
    setTriggerValue('painted', true);
  };
  requestAnimationFrame(() => setTimeout(report, 0));
  return stop;
}
""")


def start() -> None:
    """At every run of ``app.py``: from the tab's first run on, the kinds it has drawn are tracked."""
    st.session_state.setdefault(DRAWN, set())
    st.session_state.setdefault(PUT_OFF, set())


def ready(kind: str) -> bool:
    """Whether ``kind`` can be drawn now: this tab has drawn it before (its code is loaded), or the
    run is not tracked (:func:`start`). Otherwise the kind is noted as put off, and the caller
    draws :func:`stand_in` in its place."""
    drawn = st.session_state.get(DRAWN)
    if drawn is None or kind in drawn:
        return True
    st.session_state[PUT_OFF].add(kind)
    return False


def stand_in(what: str, height: int | None = None, where=None) -> None:
    """What holds the place of a put-off element: a note of ``height`` pixels (the element's own
    height, so that the page does not jump when it comes)."""
    where = where or st
    box = where.container(height=height, border=False) if height else where.container()
    box.caption(f"{what} {STAND_IN}…")


def _painted() -> None:
    st.session_state[DRAWN] |= st.session_state[PUT_OFF]


def report_paint() -> None:
    """At the end of ``app.py``'s run: if a kind is put off and not drawn yet, the browser reports
    when the run is painted, and that report reruns the page with every kind drawn."""
    waiting = st.session_state.get(PUT_OFF, set()) - st.session_state.get(DRAWN, set())
    if waiting:
        # a key of its own per set of kinds: a reporter under the key of one that has reported
        # (another page's, earlier in the tab) did not report again
        _REPORTER(key=f"first_paint_reporter_{'_'.join(sorted(waiting))}", on_painted_change=_painted, height=0)
