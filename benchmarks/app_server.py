"""The app served on localhost for the browser benchmarks and the browser tests alike: one helper
starts ``streamlit run`` on a free loopback port and waits for its health check; and the
JavaScript that tells when Streamlit's script run is over."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: JavaScript for Playwright: true once Streamlit's script run is over, read from its own run state
#: on the app element (its status widget is not always drawn: a 10 s run once passed for settled
#: after 1 s)
SCRIPT_IDLE = ("() => document.querySelector('[data-testid=\"stApp\"]')"
               "?.getAttribute('data-test-script-state') === 'notRunning'")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(script: Path | str = ROOT / "app.py", *, log=None, environment: dict | None = None,
                 timeout: float = 60.0):
    """``(process, url)`` of a fresh ``streamlit run script`` once it answers its health check;
    its output goes to ``log`` (an open file) or nowhere. Refused, the process killed, when it
    exits or does not answer within ``timeout`` seconds."""
    port = free_port()
    output = log if log is not None else subprocess.DEVNULL
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=output, stderr=subprocess.STDOUT if log is not None else subprocess.DEVNULL,
        env={**os.environ, **(environment or {})})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return process, url
        if process.poll() is not None or time.monotonic() > deadline:
            code = process.poll()
            process.kill()
            raise RuntimeError(f"streamlit did not start (exit code {code})")
        time.sleep(0.2)


def stop_server(process, timeout: float = 15.0) -> None:
    """Terminate a server started by :func:`start_server` (killed if it does not stop in time)."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()


@contextlib.contextmanager
def served(script: Path | str = ROOT / "app.py", **options):
    """:func:`start_server` for a ``with`` block: the URL inside, the server stopped after."""
    process, url = start_server(script, **options)
    try:
        yield url
    finally:
        stop_server(process)
