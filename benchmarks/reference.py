"""The code of an earlier commit, measured beside this code in the same sitting: a ``git worktree``
of that commit and child processes that import its ``core``.

Times on this kind of shared machine move by up to 2x between sittings, so a figure against
"today's code" (the code an issue was filed on) is only worth its ratio when both were measured
in one run; this module gives a benchmark that code to run.
"""

from __future__ import annotations

import contextlib
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Times calls of the earlier code's ``core``: the least of up to three runs while they take under
# 10 s in all (as bench_convergence.timed), after one untimed call where ``warm``.
_TIMER = r"""
import pickle, sys, time, warnings
import core
with open(sys.argv[1], "rb") as handle:
    jobs = pickle.load(handle)
seconds = []
for name, args, kwargs, warm in jobs:
    function = getattr(core, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if warm:
            function(*args, **kwargs)
        best, spent = float("inf"), 0.0
        for _ in range(3):
            start = time.perf_counter()
            function(*args, **kwargs)
            took = time.perf_counter() - start
            best, spent = min(best, took), spent + took
            if spent > 10.0:
                break
    seconds.append(best)
with open(sys.argv[2], "wb") as handle:
    pickle.dump(seconds, handle)
"""


@contextlib.contextmanager
def worktree_at(commit: str):
    """A checkout of ``commit`` in a temporary folder (a ``git worktree``, removed after)."""
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "reference"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            yield tree
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)


def available(commit: str) -> bool:
    """Whether this checkout holds ``commit`` (a shallow clone may not)."""
    found = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True)
    return found.returncode == 0


def seconds_at(tree: Path, jobs) -> list[float]:
    """The seconds of each job ``(name, args, kwargs, warm)`` (``core.<name>(*args, **kwargs)``)
    run by the code in ``tree``, in one child process, one after another."""
    with tempfile.TemporaryDirectory() as folder:
        given, taken = Path(folder) / "jobs.pickle", Path(folder) / "seconds.pickle"
        given.write_bytes(pickle.dumps(list(jobs)))
        subprocess.run([sys.executable, "-c", _TIMER, str(given), str(taken)], cwd=tree, check=True,
                       env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"})
        return pickle.loads(taken.read_bytes())
