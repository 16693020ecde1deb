"""The data sets of a session: the current one, the uploaded ones kept to switch back to, the
side data, the address that names them, and uploads parsed once. What the server's store keeps of
them, and how a kept one comes back, is :mod:`pages.ui.kept`."""

from __future__ import annotations

import hashlib
import weakref
from collections import OrderedDict
from dataclasses import replace

import numpy as np
import streamlit as st

from core import Dataset, InputError
from core.data.bundled import list_datasets, load_dataset
# the table readers (and pandas with them) are imported with this module, before any page runs
from core.data.loaders import read_table
from core.limits import format_bytes
from core.selection.side import SideInformation
from pages.ui import kept

DEFAULT_DATASET = "warpAR10P"


def bundled_names() -> list[str]:
    """Names of the bundled data sets (the manifest's order, images first)."""
    return [info.name for info in list_datasets()]


def is_bundled(data: Dataset) -> bool:
    """Whether ``data`` is a bundled set as ``load_dataset`` gives it (not an upload of that name)."""
    return data.name in bundled_names() and "loaded_with" not in data.meta


def class_values(data: Dataset) -> list:
    """The data set's classes as plain Python values (what widgets show and links carry)."""
    return [c.item() if hasattr(c, "item") else c for c in data.classes]


_KEY = "dataset"
_LIBRARY = "session_datasets"
#: the last main/side split of the current data set (:func:`split_by_class`)
_SPLIT_KEY = "_last_class_split"
#: the last split into the samples picked on the map and the others (:func:`split_side`)
_PICKED_SPLIT_KEY = "_last_picked_split"
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


_LINK = "_link_lacks_data"
#: The store's key of each data set of the session's list, by name (:func:`kept_key`).
_STORE_KEYS = "_store_keys"


def kept_key(data: Dataset) -> str | None:
    """The store's key of a data set of this session's list (None: bundled, or not kept)."""
    return st.session_state.get(_STORE_KEYS, {}).get(data.name)


def _keep(dataset: Dataset, notes: list) -> str | None:
    """:func:`pages.ui.kept.keep`, its sources named as this session knows them (:func:`_reference`)."""
    return kept.keep(dataset, notes, _reference)


def _reference(source: Dataset, notes: list) -> dict | None:
    """How a kept data set names one it was derived from: a bundled set by its name, any other by
    its store key (the key the session's list holds for it, else kept now); None where that could
    not be kept."""
    if source.name in bundled_names() and source is load_dataset(source.name):  # as set_dataset tells them
        return {"bundled": source.name}
    key = kept_key(source) if session_datasets().get(source.name) is source else None
    key = key or _keep(source, notes)  # else hashed again (SHA-256: 0.7 s a gigabyte here) and looked up
    return None if key is None else {"key": key, "name": source.name}


def current_dataset() -> Dataset:
    """The data set every page works on: the bundled set named in the URL (``?data=Yale``) on
    the first visit, or the upload a link names by its store key (``&key=...``), else the AR faces,
    until the user picks another. A link naming a set the server does not hold is kept for
    :func:`follow_link`, with the reason."""
    if _KEY not in st.session_state:
        _restore_session_list()
        wanted = st.query_params.get("data")
        names = bundled_names()
        st.session_state[_KEY] = load_dataset(wanted if wanted in names else DEFAULT_DATASET)
        if wanted is not None and wanted not in names:
            key = st.query_params.get("key")
            restored, reason = kept.restore(wanted, key)
            if restored is not None:
                set_dataset(restored, key=key)  # already kept under the link's key: not hashed and written again
            else:
                st.session_state[_LINK] = dict(name=wanted, fingerprint=st.query_params.get("fp"), reason=reason,
                                               params=st.query_params.to_dict(), page=None)
        _restore_side_data()
    return st.session_state[_KEY]


def _restore_session_list() -> None:
    """On the first visit: the session's other kept data sets the address names (``&also=``, store
    keys joined by commas, oldest first), back in the sidebar's list; what is not held is said."""
    keys = [key for key in (st.query_params.get("also") or "").split(",") if key]
    lost = []
    for key in keys:
        restored, reason = kept.restore(None, key)
        if restored is None:
            lost.append(kept.NOT_RESTORED[reason].format(it="it", they="it"))
        else:
            _join_library(restored, key)
    if lost:
        st.session_state.setdefault("_dataset_notes", []).append(
            f"{len(lost)} of the {len(keys)} other data set(s) this session's address names could not be brought back: "
            + "; ".join(sorted(set(lost))) + ". Upload them again on the Data page.")


def _restore_side_data() -> None:
    """On the first visit: the side data a link names by its store key (``&side=...``)."""
    key = st.query_params.get("side")
    if key is None:
        return
    name = st.query_params.get("side_name") or "side data"
    side, reason = kept.restore(name, key)
    if side is not None:
        st.session_state[_SIDE_KEY] = side
        st.session_state[_SIDE_STORE_KEY] = key
        return
    st.session_state.setdefault("_dataset_notes", []).append(
        f"The link names side data ({name}), but {kept.NOT_RESTORED[reason].format(it='them', they='they')}. Upload them again on "
        "the Data page, under \"Side data\".")


def follow_link(navigation) -> None:
    """Called by ``app.py``: a link whose data set this session lacks opens the Data page (which
    says what it lacks and how to bring it, :func:`show_link_request`) instead of showing the
    link's settings on another data set."""
    current_dataset()
    link = st.session_state.get(_LINK)
    if link is not None and link["page"] is None:
        link["page"], link["title"] = navigation.url_path, navigation.title
        if navigation.url_path != "data":
            st.switch_page("pages/data.py")  # without the link's parameters: none applies here


def show_link_request() -> None:
    """The Data page's note about a link whose data set this session lacks."""
    link = st.session_state.get(_LINK)
    if link is None:
        return
    why = kept.NOT_RESTORED[link.get("reason", "unknown")].format(it="it", they="it")
    st.warning(f"**The link you opened shows the data set {link['name']!r}**, but {why}; it was meant for the "
               f"{link.get('title') or 'Home'} page. None of its settings were applied. Upload the same file "
               "below with the same choices: when it matches the link's data (same fingerprint), the link's "
               "view opens.", icon=":material/link_off:")


def _open_link_view(dataset: Dataset) -> None:
    """After a load: the link's view, if ``dataset`` is the data the pending link names."""
    link = st.session_state.get(_LINK)
    if link is None or not link.get("fingerprint") or not dataset.fingerprint.startswith(link["fingerprint"]):
        return
    st.session_state.pop(_LINK)
    params = {key: value for key, value in link["params"].items() if key not in ("data", "fp", "key")}
    params["data"] = dataset.name
    page = link["page"] or "home"
    st.session_state.pop(f"_view_restored_{page}", None)  # the page takes the link's settings (views.restore_view)
    st.switch_page(f"pages/{page}.py", query_params=params)


def session_datasets() -> OrderedDict:
    """The uploaded and derived data sets of this session, oldest first (name -> Dataset)."""
    return st.session_state.setdefault(_LIBRARY, OrderedDict())


def set_dataset(dataset: Dataset, key: str | None = None) -> None:
    """Make ``dataset`` current. One that is not bundled joins the session's list (under a name
    no other set of the list or the bundle uses) and the server's store (``key``: it is there
    already, under that key), and the oldest others leave the list while it holds more than
    :data:`SESSION_DATA_BYTES`; the sidebar says so once."""
    is_bundled = dataset.name in bundled_names() and dataset is load_dataset(dataset.name)
    if is_bundled:
        st.session_state.pop(_LINK, None)  # the user chose other data than the link's
    else:
        dataset = _join_library(dataset, key)
    st.session_state[_KEY] = dataset
    st.session_state.pop(_SPLIT_KEY, None)


def _join_library(dataset: Dataset, key: str | None) -> Dataset:
    """Put a data set that is not bundled in the session's list and the store (see
    :func:`set_dataset`) and return it as the list holds it (renamed where its name was taken)."""
    notes = st.session_state.setdefault("_dataset_notes", [])
    library = session_datasets()
    for name in [name for name, kept in library.items() if kept is dataset
                 or (kept.kind == dataset.kind and kept.fingerprint == dataset.fingerprint)]:
        # the same data again: one copy, under the newest name and with the newest file's recipe
        # (a second file of the same numbers kept the first one's name, and the snippets opened it)
        library.pop(name)
    taken = set(library) | set(bundled_names())
    name, copy = dataset.name, 2
    while name in taken:
        name, copy = f"{dataset.name} ({copy})", copy + 1
    if name != dataset.name:
        dataset = replace(dataset, name=name)
    library[dataset.name] = dataset
    if key is not None:
        st.session_state.setdefault(_STORE_KEYS, {})[dataset.name] = key
    elif dataset.name not in st.session_state.get(_STORE_KEYS, {}):
        new_key = _keep(dataset, notes)
        if new_key is not None:
            st.session_state.setdefault(_STORE_KEYS, {})[dataset.name] = new_key
    held = sum(dataset_bytes(d) for d in library.values())
    while held > SESSION_DATA_BYTES and len(library) > 1:
        oldest, dropped = library.popitem(last=False)
        held -= dataset_bytes(dropped)
        notes.append(f"{oldest} ({format_bytes(dataset_bytes(dropped))}) left this session's list of data "
                     f"sets, which keeps at most {format_bytes(SESSION_DATA_BYTES)} of uploads; upload it "
                     "again to use it.")
    return dataset


_SIDE_KEY = "side_dataset"
#: The store's key of the side data (:func:`side_data_link`).
_SIDE_STORE_KEY = "_side_store_key"


def current_side_dataset(like: Dataset | None = None) -> Dataset | None:
    """The side data uploaded on the Data page, when they describe the features of ``like``
    (default: the current data set). The Haar page passes the images behind a feature family:
    side images with one value per pixel, which it transforms with the images' own basis.

    Side data for another number of features are kept (switching back brings them back) but
    not offered.
    """
    side = st.session_state.get(_SIDE_KEY)
    if side is None or side.n_features != (like if like is not None else current_dataset()).n_features:
        return None
    return side


def split_by_class(dataset: Dataset, side_classes) -> tuple[Dataset, Dataset]:
    """``dataset.split_by_class(side_classes)``, the same two objects at every rerun while the data
    and the classes stay: a fresh split copies the samples, re-checks them and hashes both parts
    again for the caches' keys (45 ms of each step of the Q-alpha page on 20,000 genes). The
    session keeps only its last split, and drops it when another data set becomes current."""
    classes = tuple(str(c) for c in side_classes)
    kept = st.session_state.get(_SPLIT_KEY)
    # the data set itself (not its hash): one with other names or another recipe splits anew
    if kept is None or kept[0]() is not dataset or kept[1] != classes:
        kept = (weakref.ref(dataset), classes, dataset.split_by_class(side_classes))
        st.session_state[_SPLIT_KEY] = kept
    return kept[2]


def split_side(dataset: Dataset, side_mode: str, side_classes, n_pairs: int, uploaded_side: Dataset | None,
               random_state: int, picked=None):
    """``(main, side, pairs)`` for the Q-alpha page's choice of side information, resolved by the
    library's one rule (:class:`core.selection.side.SideInformation`; the pairs drawn with the run's
    seed, as the Compare page's rankers draw them), the split data sets kept as
    :func:`split_by_class` keeps them. ``picked``: the rows picked on the map, the side data of
    "picked samples" (the other rows are the main data)."""
    if side_mode == "picked samples":
        rows = np.unique(np.asarray(picked if picked else [], dtype=np.intp))
        rest = np.setdiff1d(np.arange(dataset.n_samples), rows)
        if rows.size == 0 or rest.size < 2:
            raise InputError("Pick at least one sample on the map, and leave at least two others as the main data.")
        kept = st.session_state.get(_PICKED_SPLIT_KEY)  # kept as split_by_class keeps its split
        if kept is None or kept[0]() is not dataset or kept[1] != tuple(rows):
            kept = (weakref.ref(dataset), tuple(rows), (dataset.subset_samples(rest), dataset.subset_samples(rows)))
            st.session_state[_PICKED_SPLIT_KEY] = kept
        return (*kept[2], None)
    kind = {"uploaded side data": "side data"}.get(side_mode, side_mode)
    information = SideInformation(kind, side_classes=side_classes if kind == "side classes" else (),
                                  n_pairs=n_pairs if kind == "pairs" else 0,
                                  side=uploaded_side if kind == "side data" else None)
    resolved = information.resolve(dataset.labels, dataset.n_samples, random_state)
    if kind == "side classes":
        return (*split_by_class(dataset, information.side_classes), None)
    return dataset, uploaded_side if kind == "side data" else None, resolved.pairs


def picked_rows(dataset: Dataset) -> list[int] | None:
    """The rows of ``dataset`` picked on the map as side data (``qa_side_rows``), if they were
    picked on this data set."""
    picked = st.session_state.get("qa_side_rows")
    if not picked or picked.get("data") != dataset.fingerprint:
        return None
    return [int(row) for row in picked["rows"] if 0 <= int(row) < dataset.n_samples] or None


def picked_from_link(dataset: Dataset, value) -> dict:
    """``qa_side_rows`` as a link carries it, for ``dataset``: raises ``ValueError`` (or
    ``TypeError``/``KeyError``) for rows picked on another data set or rows it does not have."""
    rows = sorted({int(row) for row in value["rows"]})
    if value["data"] != dataset.fingerprint or not rows or rows[0] < 0 or rows[-1] >= dataset.n_samples:
        raise ValueError("not rows of this data set")
    return {"data": dataset.fingerprint, "rows": rows}


def main_rows(dataset: Dataset, side_mode: str, side_classes, picked) -> np.ndarray:
    """Which rows of ``dataset`` the main data of this side information are, in order."""
    if side_mode == "side classes":
        return np.flatnonzero(~np.isin(dataset.labels, list(side_classes)))
    if side_mode == "picked samples" and picked:
        return np.setdiff1d(np.arange(dataset.n_samples), picked)
    return np.arange(dataset.n_samples)


def with_recipe(dataset: Dataset, recipe: dict | None) -> Dataset:
    """``dataset`` with how the library loads the same data (``{"function": ..., "files": [...],
    "options": {...}}``) in ``meta["loaded_with"]``, from which the pages' snippets write their
    lines (:mod:`pages.ui.snippets`)."""
    return dataset if recipe is None else replace(dataset, meta={**dataset.meta, "loaded_with": recipe})


def set_side_dataset(side: Dataset | None) -> None:
    """Make ``side`` the session's side data (None: forget them), kept in the store so that a
    link carries them (:func:`side_data_link`)."""
    st.session_state[_SIDE_KEY] = side
    st.session_state[_SIDE_STORE_KEY] = (
        None if side is None else _keep(side, st.session_state.setdefault("_dataset_notes", [])))


#: the query parameters that name the data a page shows (:func:`data_link`)
DATA_LINK_PARAMETERS = ("data", "fp", "key", "side", "side_name", "also")


def data_link() -> dict:
    """The link's parameters naming the current data: the bundled set's name, or an upload's
    name, fingerprint (``fp``) and store key (``key``), and the side data (:func:`side_data_link`).
    A reload or a copied address of any page brings these back (:func:`current_dataset`), with the
    session's other kept data sets (``also``)."""
    data = current_dataset()
    values = {"data": data.name}
    if not is_bundled(data):
        values["fp"] = data.fingerprint[:16]
        key = kept_key(data)
        if key is not None:
            values["key"] = key
    # the session's other kept sets, so that a reload brings back the sidebar's whole list
    others = [kept_key(kept) for kept in session_datasets().values() if kept is not data]
    if any(others):
        values["also"] = ",".join(key for key in others if key)
    values.update(side_data_link())
    return values


def name_data_in_address() -> None:
    """Write :func:`data_link` into the address at every run of every page, so that a reload
    (the Data and Home pages' too) keeps the data it shows. While a link's data are missing
    (:func:`show_link_request`) its parameters stay, so a reload tries the link again."""
    if st.session_state.get(_LINK) is not None:
        return
    wanted = data_link()
    for name in DATA_LINK_PARAMETERS:
        if name in wanted:
            if st.query_params.get(name) != wanted[name]:
                st.query_params[name] = wanted[name]
        elif name in st.query_params:
            del st.query_params[name]


def side_data_link() -> dict:
    """The link's parameters naming the session's side data by their store key (``side``) and
    name (``side_name``); empty without side data, or side data the store could not keep."""
    side, key = st.session_state.get(_SIDE_KEY), st.session_state.get(_SIDE_STORE_KEY)
    return {} if side is None or key is None else {"side": key, "side_name": side.name}


def load_upload(loader, recipe: dict | None = None) -> bool:
    """Run a loader; on success make its result current, on failure keep the current data.

    ``recipe`` says how the library loads the same data (``{"function": "load_table", "files":
    [...], "options": {...}}``); it is kept in the data set's ``meta["loaded_with"]``, from which
    the pages' Python snippets write their first line. The outcome is kept in the session and
    shown by :func:`show_load_messages`, so it survives the rerun that refreshes the sidebar.
    """
    try:
        dataset = loader()
    except InputError as error:
        st.session_state["load_messages"] = [("error", f"Nothing was loaded: {error}")]
        return False
    set_dataset(with_recipe(dataset, recipe))
    dataset = current_dataset()
    _open_link_view(dataset)
    summary = dataset.summary()
    report = dataset.meta.get("load_report", [])
    st.session_state["load_messages"] = (
        [("success", f"Loaded {dataset.name}: {summary['samples']:,} samples x "
                     f"{summary['features']:,} features.")]
        + ([("info", "**How it was read**\n\n" + "\n".join(f"- {note}" for note in report))] if report else []))
    st.rerun()
    return True


def parsed_upload(upload, prefix: str = "table_"):
    """The upload parsed once (:func:`core.data.loaders.read_table`): kept in the session, keyed on a
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


def forget_load_messages() -> None:
    """A new file was chosen: what was said about the previous one no longer applies."""
    st.session_state.pop("load_messages", None)


def show_load_messages() -> None:
    for kind, message in st.session_state.get("load_messages", []):
        getattr(st, kind)(message)
