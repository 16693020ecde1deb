"""What the server's store keeps of a session's data sets, and how they come back: an upload or a
derived set put in the store by the hash of its content (:mod:`core.data.content_store`), a derived
one with its recipe in place of what is not data (the set a transform was applied to, the images
behind a feature family: kept themselves and named), and a kept set made whole again from its key.
The session's side of it (its list, the keys it holds, the address) is :mod:`pages.ui.datasets`."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import streamlit as st

from core import Dataset, InputError
from core.data.bundled import load_dataset
from core.data.content_store import ContentStore, Damaged, NotHeld, Unreadable
from core.features.families import to_feature_family


@st.cache_resource(show_spinner=False)
def data_store() -> ContentStore | None:
    """The server's store of data sets kept by content (``$QALPHA_STORE_DIR``, shared by every
    session and by other servers given the same folder); None where its folder cannot be made."""
    try:
        return ContentStore()
    except (OSError, InputError):
        return None


def keep(dataset: Dataset, notes: list, reference) -> str | None:
    """Keep an uploaded or derived data set in the store, so that a link, a reload or a restarted
    server brings it back, and return its key; what could not be kept is said (it stays in use in
    this session) and gives None. A derived set is kept with its recipe (:func:`_kept_form`):
    ``reference(source, notes)`` names the data sets it was derived from (the session knows the
    keys it holds for them: :func:`pages.ui.datasets._reference`)."""
    store = data_store()
    if store is None:
        return None
    kept = _kept_form(dataset, notes, reference)
    if kept is None:
        return None
    try:
        return store.put(kept)
    except InputError as error:
        notes.append(str(error))
    except OSError as error:
        notes.append(f"{dataset.name} could not be kept on the server ({error.strerror or error}): a reload or a "
                     "link will not bring it back.")
    return None


#: What a kept data set's meta names in place of the data sets it was derived from, and which of
#: its entries were arrays (:func:`_kept_form`).
_FROM, _FAMILY_FROM, _ARRAYS = "transformed_from_ref", "family_images_ref", "arrays_in_meta"
#: Numeric arrays in meta up to this many values are kept (as lists in the entry's header).
_META_ARRAY_VALUES = 1_000_000


def _kept_form(dataset: Dataset, notes: list, reference) -> Dataset | None:
    """``dataset`` as the store keeps it: its arrays, the layouts of its samples, and, in place of
    what is not text or numbers, a recipe. The data set a transform was applied to
    (``meta["transformed_from"]``) and the images behind a feature family (``meta["family"]``)
    are kept themselves (or named, if bundled) and referred to; the family is made again from its
    images and ``family_options`` on the way back (:func:`_rebuilt`). None, with the reason in
    ``notes``, where something else in ``meta`` cannot be kept."""
    meta = {name: value for name, value in dataset.meta.items() if name != "layouts"}
    if "transformed_from" in meta:
        named = reference(meta.pop("transformed_from"), notes)
        if named is None:
            return _not_kept(dataset, "the data set it was transformed from could not be kept", notes)
        meta[_FROM] = named
    if "family" in meta:
        family = meta.pop("family")
        if "family_options" not in meta:
            return _not_kept(dataset, f"how its {family.name} features were made is not recorded", notes)
        named = reference(family.images, notes)
        if named is None:
            return _not_kept(dataset, "the images its features were computed from could not be kept", notes)
        meta[_FAMILY_FROM] = named
    arrays = [name for name, value in meta.items()
              if isinstance(value, np.ndarray) and value.dtype.kind in "iufb" and value.size <= _META_ARRAY_VALUES]
    for name in arrays:  # a subset's rows and columns (a server data set's): kept as lists, made arrays again
        meta[name] = meta[name].tolist()
    if arrays:
        meta[_ARRAYS] = arrays
    for name, value in meta.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            return _not_kept(dataset, f"its {name!r} is not data the server can store", notes)
    if "layouts" in dataset.meta:
        meta["layouts"] = dataset.meta["layouts"]  # kept as arrays by the store
    return replace(dataset, meta=meta)


def _not_kept(dataset: Dataset, why: str, notes: list) -> None:
    notes.append(f"{dataset.name} is in use in this session but could not be kept on the server ({why}): a reload "
                 "or a link will not bring it back.")
    return None


def _referenced(reference: dict) -> Dataset:
    """The data set a reference of :func:`_kept_form` names (raises the store's NotHeld, Unreadable or Damaged)."""
    if "bundled" in reference:
        return load_dataset(reference["bundled"])
    return _rebuilt(replace(data_store().get(reference["key"]), name=reference["name"]))


def _rebuilt(dataset: Dataset) -> Dataset:
    """A data set as it was before the store kept it (:func:`_kept_form`): the data set it was
    transformed from, and its feature family, made again from their references."""
    meta = dict(dataset.meta)
    for name in meta.pop(_ARRAYS, []):
        meta[name] = np.asarray(meta[name])
    if _FROM in meta:
        meta["transformed_from"] = _referenced(meta.pop(_FROM))
    if _FAMILY_FROM in meta:
        images = _referenced(meta.pop(_FAMILY_FROM))
        recipe = meta["family_options"]
        made = to_feature_family(images, recipe["family"], **recipe["options"])
        if made.X.shape != dataset.X.shape:
            raise Damaged("The stored feature family does not match the images it names: load the images again.")
        meta["family"] = made.meta["family"]
    return replace(dataset, meta=meta)


#: Why a link's data set (or side data) was not brought back, by :func:`restore`'s reason.
NOT_RESTORED = {
    "unknown": "no bundled data set has that name and the link names no kept upload (it may have been written by "
               "hand, or cut short)",
    "not held": "this server does not hold {it}: {they} expired from the server's store, or came from "
                "another server",
    "damaged": "the server's copy of {it} was damaged and has been removed",
    "unreadable": "the server could not read {it} just now (a passing fault of its disk or open files; the stored "
                  "copy is kept): reload the page to try again"}


def restore(name: str | None, key: str | None) -> tuple[Dataset | None, str]:
    """The data set a link names by its key, from the store: ``(data set, "")``, or ``(None,
    why not)``. ``name`` None: the name it was kept under."""
    store = data_store()
    if key is None:
        return None, "unknown"
    if store is None or key not in store:
        return None, "not held"
    try:
        restored = _rebuilt(store.get(key))
        return (restored if name is None else replace(restored, name=name)), ""
    except NotHeld:  # evicted by another process between the look and the read
        return None, "not held"
    except Unreadable:
        return None, "unreadable"
    except Damaged:
        return None, "damaged"
