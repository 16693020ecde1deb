"""The app served for the browser benchmarks (each runs as ``python benchmarks/NAME.py``, so this
module is importable by its plain name): ``streamlit run app.py`` on a free loopback port, and
how a page knows that Streamlit's script run is over."""

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


def start_server(timeout: float = 60.0):
    """``(process, url)`` of a fresh ``streamlit run app.py`` once it answers its health check."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
                                "--server.headless", "true", "--server.port", str(port),
                                "--server.address", "127.0.0.1"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                return process, url
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("streamlit did not start")
