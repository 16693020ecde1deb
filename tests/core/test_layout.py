"""The library's shape: a plain library (no Streamlit, no app, no reproductions), rooms that depend
only on the rooms below them, and one public face."""

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from test_house import import_targets, module_name

CORE = ROOT / "core"

#: The rooms of ``core``, bottom first: each may import its own room and those before it.
ROOMS = (
    ("errors", "progress", "validation", "limits"),
    ("matrix",),
    ("data",),
    ("features",),
    ("selection",),
    ("evaluation", "plots"),
    ("cli", "__main__", "__init__"),
)
RANK = {room: level for level, rooms in enumerate(ROOMS) for room in rooms}


def core_modules():
    return sorted(CORE.rglob("*.py"))



def room_of(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def imported_modules(path: Path):
    """Every module ``path`` imports, at its top or inside a function, as absolute names."""
    return import_targets(path)


def test_every_room_is_known():
    rooms = {room_of(module_name(path)) for path in core_modules()}
    assert rooms <= set(RANK), rooms - set(RANK)


@pytest.mark.parametrize("path", core_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_rooms_depend_only_on_those_below(path):
    importer = room_of(module_name(path))
    for target in imported_modules(path):
        top = target.split(".")[0]
        assert top not in ("streamlit", "pages", "experiments"), f"{path} imports {target}"
        if top != "core" or target == "core":
            continue
        room = room_of(target)
        if room not in RANK:  # "from core.data import dataset" names a module of a room
            continue
        assert RANK[room] <= RANK[importer], f"{path} ({importer}) imports {target} ({room}), a room above it"


BLOCKER = """
import importlib, importlib.abc, pkgutil, sys
class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("streamlit", "pages", "experiments"):
            raise ImportError(f"core imported {name}")
sys.meta_path.insert(0, Blocked())
import core
names = [m.name for m in pkgutil.walk_packages(core.__path__, "core.") if m.name != "core.__main__"]
for name in names:
    importlib.import_module(name)
for name in core.__all__:
    getattr(core, name)
print(len(names))
"""


def test_core_imports_without_the_app_or_the_reproductions():
    """Every module of ``core`` (and every public name) imports in a fresh interpreter in which
    ``streamlit``, ``pages`` and ``experiments`` cannot be imported."""
    done = subprocess.run([sys.executable, "-c", BLOCKER], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) == len(core_modules()) - 2  # all but core itself and __main__ (the CLI)


def test_public_face():
    import core

    assert "Stopped" in core.__all__ and len(core.__all__) == len(set(core.__all__))
    entry_points = ("q_alpha", "kernel_q_alpha", "greedy_slda", "greedy_spca", "topographic_map", "load_table",
                    "load_images", "load_dataset", "Dataset", "rank_features", "score_features", "data_matrix",
                    "QAlphaSelector", "to_haar")
    for name in entry_points:
        assert name in core.__all__, name
        value = getattr(core, name)
        assert callable(value) and value.__doc__, name
    # each public name is the library's own object, not a copy
    from core.selection.qalpha import q_alpha
    assert core.q_alpha is q_alpha
    namespace = {}
    exec("from core import *", namespace)
    assert set(core.__all__) <= set(namespace)
    with pytest.raises(AttributeError, match="no attribute 'qalpha_typo'"):
        core.qalpha_typo  # noqa: B018


def test_import_core_stays_light():
    """``import core`` loads the face, not the rooms behind it (nor pandas, scikit-learn or Plotly)."""
    code = "import sys, core; print(sorted(m for m in ('pandas', 'sklearn', 'plotly', 'core.selection.qalpha') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
