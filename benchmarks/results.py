"""What a benchmark run leaves behind: everything it printed, the command, the commit and the
machine, in ``benchmarks/results/NAME.json``, from which ``python -m benchmarks.render`` writes
``docs/benchmarks.md``. A benchmark's ``__main__`` block calls :func:`run_recorded`; the printed
tables stay what a person at the terminal reads, and the file is the same text with its
provenance, so no figure is copied into the docs by hand."""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"


class _Tee(io.TextIOBase):
    """Writes to the terminal and keeps a copy."""

    def __init__(self, stream):
        self.stream, self.copy = stream, io.StringIO()

    def write(self, text):
        self.copy.write(text)
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()


def commit() -> dict:
    """The commit the benchmark ran on, and whether the work tree had changes beside it."""
    def git(*args):
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    return {"commit": git("rev-parse", "--short=12", "HEAD") or "unknown",
            "changed_files": len([line for line in git("status", "--porcelain", "--untracked-files=no").splitlines()
                                  if line.strip()])}


def machine() -> dict:
    """The machine in the terms a reader compares machines by: processor, cores, memory, Python and
    the numerical libraries' versions."""
    processor = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                processor = line.split(":", 1)[1].strip()
                break
    memory = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = round(int(line.split()[1]) / 2**20, 1)
    versions = {}
    for package in ("numpy", "scipy", "sklearn", "streamlit"):
        with contextlib.suppress(ImportError):
            versions[package] = __import__(package).__version__
    return {"processor": processor, "cores": os.cpu_count(), "memory_gib": memory, "system": platform.system(),
            "python": platform.python_version(), **versions}


def run_recorded(main: Callable[[], object], name: str, doc: str | None) -> None:
    """Run a benchmark's ``main()``, printing as it prints, then write what it printed with its
    provenance to ``benchmarks/results/NAME.json``. A run that fails writes nothing: the page
    keeps the last complete result."""
    started = datetime.datetime.now(datetime.timezone.utc)
    tee = _Tee(sys.stdout)
    begin = time.perf_counter()
    with contextlib.redirect_stdout(tee):
        main()
    record = {"name": name, "title": (doc or name).strip().splitlines()[0],
              "command": "python -m benchmarks." + " ".join([name, *sys.argv[1:]]),
              "started": started.isoformat(timespec="seconds"), "seconds": round(time.perf_counter() - begin, 1),
              **commit(), "machine": machine(), "output": tee.copy.getvalue()}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print(f"\n(written to {(RESULTS / f'{name}.json').relative_to(ROOT)})")
