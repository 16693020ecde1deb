"""The data sets that ship with the app (``assets/``), scikit-learn's digits and wine among them.

``list_datasets()`` describes them without loading; ``load_dataset(name)`` returns a
:class:`~core.data.dataset.Dataset` (cached, so a second load is free). Image sets come upright,
row-major, with pixel values in [0, 1].
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .dataset import Dataset
from ..errors import InputError

__all__ = ["BundledInfo", "ASSETS", "list_datasets", "load_dataset"]

ASSETS = Path(__file__).resolve().parents[2] / "assets"

@dataclass(frozen=True)
class BundledInfo:
    """What is known about a bundled data set before loading it."""

    name: str
    kind: str
    n_samples: int
    n_features: int
    image_shape: tuple[int, int] | None
    n_classes: int
    description: str
    source: str


@lru_cache(maxsize=1)
def _manifest() -> dict[str, dict]:
    path = ASSETS / "manifest.json"
    if not path.exists():
        return {}
    return {entry["name"]: entry for entry in json.loads(path.read_text())}


def list_datasets() -> list[BundledInfo]:
    """Every bundled data set, images first, in the order of the manifest."""
    infos = [BundledInfo(name=e["name"], kind=e["kind"], n_samples=e["n_samples"],
                         n_features=e["n_features"],
                         image_shape=tuple(e["image_shape"]) if e["image_shape"] else None,
                         n_classes=len(e["classes"]), description=e["description"],
                         source=e["source"]) for e in _manifest().values()]
    return sorted(infos, key=lambda info: info.kind != "images")


@lru_cache(maxsize=None)
def load_dataset(name: str) -> Dataset:
    """Load a bundled data set by name (see :func:`list_datasets`).

    Raises
    ------
    InputError
        When no bundled data set has that name; the message lists the valid names.
    """
    entry = _manifest().get(name)
    if entry is None:
        valid = ", ".join(info.name for info in list_datasets())
        raise InputError(f"There is no bundled data set called {name!r}. Choose one of: {valid}.")
    with np.load(ASSETS / entry["file"], allow_pickle=False) as stored:
        X, y = stored["X"], stored["y"]
    X = X.astype(np.float64)
    image_shape = tuple(entry["image_shape"]) if entry["image_shape"] else None
    if image_shape is not None:
        X /= entry["pixel_scale"]
        feature_names = None  # generated: "pixel (r, c)"
    elif entry.get("feature_names"):
        feature_names = entry["feature_names"]
    else:
        feature_names = [f"{'gene' if 'gene' in entry['description'] else 'feature'} {j}"
                         for j in range(X.shape[1])]
    return Dataset(X, labels=y, image_shape=image_shape, feature_names_=feature_names,
                   name=name, kind=entry["kind"], source=entry["source"],
                   meta={"description": entry["description"]})
