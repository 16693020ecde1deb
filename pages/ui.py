"""What the pages share: the current data set in the session, the sidebar, cached runs.

Kept small: pages call ``current_dataset()``; heavy calls into ``core`` go through the cached
runners here, keyed on the data's fingerprint and the parameters (never on Streamlit's sampled
hash of a large array).
"""

from __future__ import annotations

import gc
import hashlib
import io
import json
import threading
import time
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path

import numpy as np
import streamlit as st

from core import Dataset, InputError, Stopped
from core.bundled import list_datasets, load_dataset
from core.limits import format_bytes
# the table readers (and pandas with them) are imported with this module, before any page runs
from core.loaders import read_table
from core.qalpha import QAlphaParameters, QAlphaResult

DEFAULT_DATASET = "warpAR10P"


def bundled_names() -> list[str]:
    """Names of the bundled data sets (the manifest's order, images first)."""
    return [info.name for info in list_datasets()]


def class_values(data: Dataset) -> list:
    """The data set's classes as plain Python values (what widgets show and links carry)."""
    return [c.item() if hasattr(c, "item") else c for c in data.classes]
# ---------------------------------------------------------------------------- every page through app.py
_RUN = threading.local()  # per script thread: did this run start in app.py?


def app_run() -> None:
    """Called by ``app.py`` at the start of every run, before the page runs."""
    _RUN.through_app = True


def page_start() -> None:
    """The first line of every page: make sure the run went through ``app.py``.

    Streamlit decides once per process, when the first session starts, that an app with a
    ``pages/`` folder is a "version 1" multipage app; until a session has run ``st.navigation``,
    a page's own URL (a shared view, a bookmark, a reload) runs that page's file alone: no
    sidebar, no navigation, no data set. Such a run is recognised here (``app.py`` did not mark
    it) and started again through ``app.py``, after clearing Streamlit's own switch
    (``PagesManager.uses_pages_directory``, which ``st.navigation`` clears the same way; the
    version is pinned in requirements.txt). A page run on its own as the main script (AppTest)
    is left alone.
    """
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if getattr(_RUN, "through_app", False):
        _RUN.through_app = False
        return
    context = get_script_run_ctx()
    if context is not None and Path(context.main_script_path).name == "app.py":
        PagesManager.uses_pages_directory = False
        st.rerun()


# ---------------------------------------------------------------------------- releasing closed tabs
# Streamlit keeps a disconnected session (its data sets, its parsed upload, its uploaded files) in
# a TTL cache that expires entries only when the cache is next written to, and then drops them
# without shutting them down: with nobody connecting, a closed tab's gigabytes stayed for good
# (benchmarks/bench_sessions.py). Each script run records its session here; a daemon thread closes
# the sessions that have been disconnected longer than server.disconnectedSessionTTL.
_SEEN: dict[str, float] = {}
_SEEN_LOCK = threading.Lock()
_REAPER: list[threading.Thread] = []


def _reap_closed_sessions(period: float) -> None:
    from streamlit import runtime

    while True:
        time.sleep(period)
        if not runtime.exists():
            continue
        instance = runtime.get_instance()
        ttl = float(st.get_option("server.disconnectedSessionTTL"))
        now = time.monotonic()
        closed = 0
        with _SEEN_LOCK:
            for session_id, seen in list(_SEEN.items()):
                if instance.is_active_session(session_id):
                    _SEEN[session_id] = now
                elif now - seen > ttl:
                    del _SEEN[session_id]
                    instance.close_session(session_id)
                    closed += 1
        if closed:
            _give_back_memory()


def _give_back_memory() -> None:
    """Collect the closed sessions' objects now: they hold reference cycles, and without a
    collection their arrays outlived the close (bench_sessions.py: 13% of the memory back 30 s
    after closing without it, 54-63% with it; glibc's malloc_trim and Arrow's pool release
    added nothing measurable there)."""
    gc.collect()


def track_session() -> None:
    """Record this run's session for the reaper (started once per process)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    context = get_script_run_ctx()
    if context is None:
        return
    with _SEEN_LOCK:
        _SEEN[context.session_id] = time.monotonic()
        if not _REAPER:
            _REAPER.append(threading.Thread(target=_reap_closed_sessions, args=(10.0,), daemon=True,
                                            name="release-closed-sessions"))
            _REAPER[0].start()


_KEY = "dataset"
_LIBRARY = "session_datasets"
#: Uploaded and derived data sets a session keeps to switch back to; beyond this the oldest go.
SESSION_DATA_BYTES = 1 << 30


def dataset_bytes(data: Dataset) -> int:
    """Memory a data set holds: its matrix and the arrays and data sets in its meta (the
    images behind a feature family)."""
    total = data.X.nbytes + (0 if data.labels is None else np.asarray(data.labels).nbytes)
    for value in data.meta.values():
        if isinstance(value, Dataset):
            total += dataset_bytes(value)
        elif isinstance(value, np.ndarray):
            total += value.nbytes
    return total


def current_dataset() -> Dataset:
    """The data set every page works on: the bundled set named in the URL (``?data=Yale``) on
    the first visit, else the AR faces, until the user picks another."""
    if _KEY not in st.session_state:
        wanted = st.query_params.get("data")
        names = bundled_names()
        st.session_state[_KEY] = load_dataset(wanted if wanted in names else DEFAULT_DATASET)
        if wanted is not None and wanted not in names:
            st.session_state["load_messages"] = [
                ("info", f"The link names a data set ({wanted!r}) that is not bundled; showing "
                         f"{DEFAULT_DATASET} instead.")]
    return st.session_state[_KEY]


def session_datasets() -> OrderedDict:
    """The uploaded and derived data sets of this session, oldest first (name -> Dataset)."""
    return st.session_state.setdefault(_LIBRARY, OrderedDict())


def set_dataset(dataset: Dataset) -> None:
    """Make ``dataset`` current. One that is not bundled joins the session's list (under a name
    no other set of the list or the bundle uses), and the oldest others leave the list while it
    holds more than :data:`SESSION_DATA_BYTES`; the sidebar says so once."""
    notes = st.session_state.setdefault("_dataset_notes", [])
    is_bundled = dataset.name in bundled_names() and dataset is load_dataset(dataset.name)
    if not is_bundled:
        library = session_datasets()
        same = [name for name, kept in library.items() if kept is dataset
                or (kept.kind == dataset.kind and kept.fingerprint == dataset.fingerprint)]
        if same:  # the same data again: bring it forward rather than keep two copies
            dataset = library.pop(same[0])
        else:
            taken = set(library) | set(bundled_names())
            name, copy = dataset.name, 2
            while name in taken:
                name, copy = f"{dataset.name} ({copy})", copy + 1
            if name != dataset.name:
                dataset = replace(dataset, name=name)
        library[dataset.name] = dataset
        held = sum(dataset_bytes(d) for d in library.values())
        while held > SESSION_DATA_BYTES and len(library) > 1:
            oldest, dropped = library.popitem(last=False)
            held -= dataset_bytes(dropped)
            notes.append(f"{oldest} ({format_bytes(dataset_bytes(dropped))}) left this session's list of data "
                         f"sets, which keeps at most {format_bytes(SESSION_DATA_BYTES)} of uploads; upload it "
                         "again to use it.")
    st.session_state[_KEY] = dataset


_SIDE_KEY = "side_dataset"


def current_side_dataset() -> Dataset | None:
    """The side data uploaded on the Data page, when it describes the current data's features.

    Side data for another number of features are kept (switching back brings them back) but
    not offered.
    """
    side = st.session_state.get(_SIDE_KEY)
    if side is None or side.n_features != current_dataset().n_features:
        return None
    return side


def set_side_dataset(side: Dataset | None) -> None:
    st.session_state[_SIDE_KEY] = side


def show_error(error: InputError) -> None:
    """Show a library error as the message it is (never a traceback)."""
    st.error(str(error), icon=":material/error:")


def _pick_dataset() -> None:
    name = st.session_state.get("dataset_choice")
    if name:
        set_dataset(session_datasets().get(name) or load_dataset(name))


def load_upload(loader) -> bool:
    """Run a loader; on success make its result current, on failure keep the current data.

    The outcome is kept in the session and shown by :func:`show_load_messages`, so it survives
    the rerun that refreshes the sidebar.
    """
    try:
        dataset = loader()
    except InputError as error:
        st.session_state["load_messages"] = [("error", f"Nothing was loaded: {error}")]
        return False
    set_dataset(dataset)
    dataset = current_dataset()
    summary = dataset.summary()
    report = dataset.meta.get("load_report", [])
    st.session_state["load_messages"] = (
        [("success", f"Loaded {dataset.name}: {summary['samples']:,} samples x "
                     f"{summary['features']:,} features.")]
        + ([("info", "**How it was read**\n\n" + "\n".join(f"- {note}" for note in report))] if report else []))
    st.rerun()
    return True


def parsed_upload(upload, prefix: str = "table_"):
    """The upload parsed once (:func:`core.loaders.read_table`): kept in the session, keyed on a
    digest of its bytes and the parse options (the widgets ``{prefix}header`` and
    ``{prefix}x_key``), so that choosing the orientation, the labels or what to do with missing
    values never parses again. One upload is kept (the newest); a failure is kept as its
    :class:`InputError`. A new file resets the ``{prefix}*`` choices made for the previous one."""
    digests = st.session_state.setdefault("_upload_digests", {})
    if upload.file_id not in digests:
        digests.clear()  # one upload at a time
        digests[upload.file_id] = hashlib.sha256(upload.getvalue()).hexdigest()
        forget_load_messages()
        for key in [k for k in st.session_state if k.startswith(prefix) and k != f"{prefix}upload"]:
            del st.session_state[key]
    header, x_key = st.session_state.get(f"{prefix}header"), st.session_state.get(f"{prefix}x_key")
    request = (digests[upload.file_id], upload.name, header, x_key)
    slot = st.session_state.get("_parsed_table")
    if slot is None or request not in slot["answers"]:
        st.session_state.pop("_parsed_table", None)  # release the previous parse first
        try:
            with st.spinner(f"Reading {upload.name}…"):
                parsed = read_table(upload.name, upload.getvalue(), header=header, x_key=x_key)
        except InputError as error:
            parsed = error
        answers = {request}
        if not isinstance(parsed, InputError):  # asking for what was detected is the same parse
            answers.add((request[0], request[1], parsed.header, parsed.x_key))
        slot = {"answers": answers, "parsed": parsed}
        st.session_state["_parsed_table"] = slot
    return slot["parsed"]


# ---------------------------------------------------------------------------- shareable views
def restore_view(page: str, parsers: dict) -> None:
    """Once per page and session: copy the link's query parameters into the widgets' state.

    ``parsers`` maps a widget key to a function of the decoded JSON value that returns the
    widget's value or raises ``ValueError``/``TypeError``/``KeyError`` when it is not one the
    widget accepts; such parameters are ignored with a note (never a traceback).
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
        except (ValueError, TypeError, KeyError):
            ignored.append(key)
    if ignored:
        st.info(f"The link's value(s) for {', '.join(ignored)} are not valid here and were ignored.")


def share_view(keys) -> None:
    """Write the widgets' current values (and the bundled data set) into the URL, so that the
    address reproduces this view when copied. ``keys``: the widget keys, e.g. the parsers given
    to :func:`restore_view`, so that what is restored and what is shared are one list."""
    values = {key: json.dumps(st.session_state[key], default=str) for key in keys if key in st.session_state}
    data = current_dataset()
    if data.name in bundled_names():
        values["data"] = data.name
    st.query_params.from_dict(values)


_KEPT = "_kept_settings"


def set_defaults(defaults: dict, valid: dict | None = None, labels: dict | None = None) -> None:
    """Give keyed widgets their starting values through the session (so no ``value=`` is needed
    and a restored link wins), and replace values left over from another data set that
    ``valid[key](value)`` rejects, with a note (:func:`show_settings_notes`) naming the setting
    (``labels[key]``). The keys are kept for the session (:func:`keep_settings`)."""
    kept = st.session_state.setdefault(_KEPT, set())
    for key, default in defaults.items():
        kept.add(key)
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


def remember(*keys: str) -> None:
    """Keep these widget keys for the session like those of :func:`set_defaults` (for settings
    whose default is only known later in the page)."""
    st.session_state.setdefault(_KEPT, set()).update(keys)


def keep_settings() -> None:
    """Called by ``app.py`` before each page runs: the settings of every page visited stay in
    the session. Streamlit drops a widget's state at the end of a run that does not draw the
    widget (any run of another page); assigned through the session they are kept, and the page
    finds its settings when the user comes back."""
    for key in st.session_state.get(_KEPT, ()):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


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


# ---------------------------------------------------------------------------- stopping long runs
def stop_control(name: str) -> None:
    """A Stop button for a page's long computation, and the stopped state it leaves.

    Clicking Stop while a run is in progress makes Streamlit start a new script run, which
    interrupts the computation at its next progress report; the flag set here then keeps the
    page from starting it again until the user presses Resume (what was loaded stays).
    """
    flag_key = f"{name}_stopped"
    if st.session_state.get(flag_key):
        st.warning("Stopped. The weights of an unfinished run are not kept; press Resume to run again.",
                   icon=":material/stop_circle:")
        st.button("Resume", key=f"{name}_resume", on_click=lambda: st.session_state.update({flag_key: False}),
                  help="Start the computation again with the current parameters.")
        st.stop()
    st.button("Stop", key=f"{name}_stop", on_click=lambda: st.session_state.update({flag_key: True}),
              help="Interrupt a long computation; press Resume to start it again.")


def forget_load_messages() -> None:
    """A new file was chosen: what was said about the previous one no longer applies."""
    st.session_state.pop("load_messages", None)


def show_load_messages() -> None:
    for kind, message in st.session_state.get("load_messages", []):
        getattr(st, kind)(message)


def sidebar_summary(pages: dict | None = None) -> None:
    """The sidebar: links to the pages (by section), the bundled-set picker, the data summary."""
    track_session()
    data = current_dataset()
    with st.sidebar:
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
        if data.name in bundled_names():  # the link names the data set (pages add their own parameters)
            st.query_params["data"] = data.name
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


def _runners():
    from core.baselines import rank_features, score_features
    from core.kernel_qalpha import kernel_q_alpha
    from core.metrics import selection_curves
    from core.qalpha import q_alpha, topographic_map
    from core.slda import exact_slda, greedy_slda, greedy_spca
    from core.wavelets import to_haar

    return {"greedy_slda": greedy_slda, "exact_slda": exact_slda, "greedy_spca": greedy_spca,
            "topographic_map": topographic_map, "kernel_q_alpha": kernel_q_alpha, "to_haar": to_haar,
            "q_alpha": q_alpha, "score_features": score_features, "selection_curves": selection_curves,
            "rank_features": rank_features}


@st.cache_data(show_spinner=False, max_entries=32)
def _cached_run(name: str, key: str, _args: tuple, _kwargs: dict):
    return _runners()[name](*_args, **_kwargs)


def run_cached(name: str, key: dict, *args, **kwargs):
    """Call a ``core`` function through the cache. ``key`` must determine the result (data
    fingerprints and parameters); the arrays themselves are passed unhashed."""
    with st.spinner("Computing…"):
        return _cached_run(name, json.dumps(key, sort_keys=True, default=str), args, kwargs)


# Runs that report progress are cached here rather than with st.cache_data: a cached function
# that updates an element created outside it (the progress bar) cannot be replayed on a hit.
_PROGRESS_CACHE: OrderedDict = OrderedDict()
_PROGRESS_LOCK = threading.Lock()
_PROGRESS_ENTRIES = 32


def memoised(key: str, compute, keep=lambda value: True):
    """``compute()`` once per ``key`` (a few dozen results kept, least recently used dropped).

    For runs that draw a progress bar: st.cache_data cannot replay a function that updates an
    element created outside it."""
    with _PROGRESS_LOCK:
        if key in _PROGRESS_CACHE:
            _PROGRESS_CACHE.move_to_end(key)
            return _PROGRESS_CACHE[key]
    value = compute()
    if not keep(value):
        return value
    with _PROGRESS_LOCK:
        _PROGRESS_CACHE[key] = value
        while len(_PROGRESS_CACHE) > _PROGRESS_ENTRIES:
            _PROGRESS_CACHE.popitem(last=False)
    return value


def is_memoised(key: str) -> bool:
    """Whether :func:`memoised` holds a result for ``key`` (then nothing long will run)."""
    with _PROGRESS_LOCK:
        return key in _PROGRESS_CACHE


def iteration_status(total: int):
    """Progress text of an iterative solver (``report.done`` its iteration, ``report.objective``):
    the share of ``total`` iterations over every start, the objective, the time so far and per
    iteration."""
    def status(elapsed, calls, report):
        return calls / total, (f"iteration {report.done}, objective {report.objective:.6g}, {elapsed:.1f} s so far "
                               f"({elapsed / calls:.2g} s per iteration; at most {total})")
    return status


def run_with_progress(key: str, run, *, stop: str, text: str, status, every: int = 1,
                      keep=lambda result: not result.stopped):
    """``run(progress)`` once per ``key`` (:func:`memoised`) with a progress bar that starts with
    ``text``. Every ``every``-th call of the ``progress(report)`` callback handed to ``run``
    (:mod:`core.progress`) shows ``status(elapsed, calls, report) -> (fraction, text)`` (one
    browser message per call would slow fast runs), and returns False once the page's Stop
    button (:func:`stop_control` named ``stop``) was pressed; Streamlit also interrupts the run
    at the bar's next update. Results failing ``keep`` (by default stopped ones) are not kept; a
    run stopped before it had a result (:class:`core.errors.Stopped`) gives None."""
    def compute():
        bar = st.progress(0.0, text=text)
        start = time.perf_counter()
        calls = {"n": 0}

        def progress(report):
            calls["n"] += 1
            if (calls["n"] - 1) % every == 0:
                fraction, message = status(time.perf_counter() - start, calls["n"], report)
                bar.progress(min(fraction, 1.0), text=message)
            return not st.session_state.get(f"{stop}_stopped", False)

        try:
            return run(progress)
        except Stopped:
            return None
        finally:
            bar.empty()

    return memoised(key, compute, keep=lambda result: result is not None and keep(result))


def run_q_alpha(main: Dataset, side: Dataset | None, pairs, params: QAlphaParameters) -> QAlphaResult:
    """Q-alpha with ``params`` on ``main`` with a progress bar and Stop, cached on (data, side,
    pairs, parameters): pages that mean the same run share its result."""
    key = json.dumps(dict(
        main=main.fingerprint, side=side.fingerprint if side is not None else None,
        pairs=None if pairs is None else np.asarray(pairs).tolist(), params=params.key), sort_keys=True)
    return run_with_progress(key, lambda progress: params.run(
        main.X, labels=main.labels, side=None if side is None else side.X, pairs=pairs, progress=progress,
        # the same fixed point, and per iteration 1.2-12x faster than the automatic solver (dense
        # up to 100 features, Lanczos beyond) at 20-600 features and 72 or 500 samples, where the
        # operator allows power steps (sum criterion, no pairs: positive semi-definite)
        solver="power" if params.criterion == "sum" and pairs is None else "auto"),
        stop="qalpha", text="Q-alpha", status=iteration_status(params.max_iter * params.n_init), every=5)


def gap_metric(cell, gap) -> None:
    """The sparsity gap as a metric: its count where it is clear, "none" where the sorted weights
    fall smoothly, with its strength in the help (:class:`core.qalpha.SparsityGap`)."""
    cell.metric("Sparsity gap", f"{gap.n_selected:,}" if gap.clear else "none",
                help=f"The sorted weights split best after rank {gap.n_selected:,}; the split explains "
                     f"{gap.separability:.0%} of their variance (a clear gap: at least {gap.threshold:.0%}), "
                     f"and the weights above it are {gap.ratio:.3g}x those below on average.")


def row(n: int, width="content") -> list:
    """``n`` cells side by side that wrap onto more lines in a narrow window (where columns
    would cut metrics and buttons short): for metrics and download buttons."""
    line = st.container(horizontal=True, gap="large")
    return [line.container(width=width) for _ in range(n)]


def pixel_view(data: Dataset, alpha, top):
    """The weights on the image, for images and for feature families of images (None for
    tables): alpha over the mean image with the ``top`` pixels marked, or the top features'
    weights drawn back in pixel space."""
    from core.plots import weight_overlay_figure

    family = data.family
    if family is None:
        return None
    images = family.images
    marked = family.marked_pixels(top)
    if marked is not None:  # the features are pixels: all of alpha, the top ones marked
        return weight_overlay_figure(images.X.mean(axis=0), family.pixel_map(alpha), images.image_shape,
                                     selected=marked, title=f"alpha over the mean image, top {len(top)} marked")
    kept = np.zeros(data.n_features)
    kept[top] = alpha[top]
    return weight_overlay_figure(images.X.mean(axis=0), family.pixel_map(kept), images.image_shape,
                                 title=f"alpha of the top {len(top)} in pixel space")


def table_csv(columns: dict) -> bytes:
    """A dict of equal-length columns as CSV bytes (for download buttons)."""
    names = list(columns)
    buffer = io.StringIO()
    buffer.write(",".join(names) + "\n")
    for row in zip(*(columns[n] for n in names)):
        buffer.write(",".join(f"{v:.10g}" if isinstance(v, (float, np.floating)) else f'"{v}"'
                              for v in row) + "\n")
    return buffer.getvalue().encode()


def selected_data_csv(data: Dataset, selected) -> bytes:
    """The samples of ``data`` restricted to the features ``selected`` (with names and labels) as
    CSV bytes: the subset a user takes to another tool."""
    columns = {"sample": list(data.sample_names)}
    if data.labels is not None:
        columns["label"] = list(data.labels)
    columns.update({data.feature_names[j]: data.X[:, j] for j in np.sort(np.asarray(selected))})
    return table_csv(columns)


def mask_png(mask) -> bytes:
    """A boolean image as PNG bytes (white = selected)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray((np.asarray(mask, dtype=bool) * 255).astype(np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()
