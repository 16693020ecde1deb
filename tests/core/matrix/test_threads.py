"""The BLAS thread cases (``threads_cases.py``) in a fresh interpreter: BLAS threads are the
process's, and a test worker's other tests (AppTests' script threads, the app's background
solves, the workers' own one-thread setting) would share them."""

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def test_blas_thread_cases_in_a_fresh_process():
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
                   and not name.startswith("PYTEST_")}
    environment["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-p", "no:randomly", str(HERE / "threads_cases.py")], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout, done.stdout[-2000:]
