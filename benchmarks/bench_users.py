"""Many people at once on one server and on two: N sessions over Streamlit's own websocket protocol, no browsers.

    python -m benchmarks.bench_users [--users 1,5,10,20] [--split 10,20] [--steps 10] [--think 1.0] [--heavy 4]

Each simulated person is one websocket to the app's ``/_stcore/stream``, speaking the protobuf
messages of ``streamlit.proto`` as the browser does: it opens the Q-alpha page of the bundled AR
faces (a ``rerun_script`` BackMsg naming the page), keeps what the server tells it (the page's
script hash, the query string, the widgets and components with their ids and the fragment each
sits in, the messages it may refer to by hash, whose hashes it sends back with each run as the
browser does, so that the server sends a message the person holds as a reference), then moves K
by one to three features at a time, always to a K no person reported before (so that no step finds
its k-means cached by another's: the worst case). K is moved in the browser
(``pages/ui/scrubber.py``), which tells the server the new K once the hand stops: a step here is that report, the component's state as JSON with the id of the
fragment it sits in, as the browser sends it; every step is a stop, the most the server is told.
A step is timed from the send to the ``script_finished`` of that run, and counts only if the run
shows k-means at that person's own new K ("Accuracy, top K"), a link naming it, and no exception
element. Between steps each person thinks for about ``--think`` seconds (uniform, 0.5x to 1.5x),
so 20 people step about 20 times a second in all.

For N = 1, 5, 10, 20 people on one fresh server, once every person has the page open and the
server's one-time warm-up (its background imports) is over: the median and 90th percentile of a step, the steps
that failed, the exception elements seen, the server's CPU seconds per step (``/proc/PID/stat``
over the stepping window, every core), its peak resident memory (``VmRSS``) and how much that grew
from the window's start to its end. ``--heavy H`` adds a row per kind of heavy work: one person
stepping K while H others keep asking for what no one asked before: the Kernel page at a new k (a
kernel solve), a Compare method not run yet (its folds ranked and judged), or the Q-alpha page with
side class 10 at a new k (a solve and its λ path of 25 λ's). ``--split 10,20`` runs those numbers of people again
over two server processes sharing the store folder, the people dealt to them in turn as sticky
sessions behind a reverse proxy would be: how a lab outgrows one process (docs/deployment.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import tempfile
import time
from pathlib import Path

from benchmarks.app_server import start_server, stop_server
from benchmarks.results import run_recorded
from benchmarks.timing import median_p90

#: The Q-alpha page's browser-drawn K and λ (pages/ui/scrubber.py): one component
SCRUBBER = "selection_scrubber"
#: The number of clusters, on the Kernel page and on the Q-alpha page alike
K_INPUT = "k — number of clusters"
#: The Q-alpha page with side class 10 and λ set by hand: a new k computes its λ path (25 solves)
PATH_QUERY = "qa_side_mode=%22side%20classes%22&qa_auto=false&qa_lambda=0.1"
#: Heavy work beside the stepper: the page it runs on, the query it opens with, the control it needs
HEAVY = {"kernel": ("kernel", "", K_INPUT), "compare": ("compare", "", "Methods"), "path": ("qalpha", PATH_QUERY, K_INPUT)}


def _protos():
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    return BackMsg, ForwardMsg


class Person:
    """One browser tab's worth of Streamlit protocol: a websocket, the page it shows, its widgets."""

    def __init__(self, url: str, page: str, query: str = ""):
        self.url, self.page = url, page
        self.socket = None
        self.page_hash, self.query = "", query
        self.widgets = {}  # label -> (element kind, proto, fragment id)
        self.components = {}  # component name -> (proto, fragment id, the data it was given)
        self.metrics = {}  # label -> shown value
        self.exceptions = 0
        self.cache = {}  # hash -> ForwardMsg the server may refer to

    async def open(self) -> float:
        import websockets

        address = self.url.replace("http://", "ws://") + "/_stcore/stream"
        self.socket = await websockets.connect(address, subprotocols=["streamlit"], max_size=None,
                                               compression="deflate")
        return await self.run()

    async def run(self, *, states=(), fragment: str = "") -> float:
        """Send ``rerun_script`` with these widget states (and fragment) and wait for its end:
        the seconds from the send to the last ``script_finished``."""
        BackMsg, _ = _protos()
        message = BackMsg()
        client = message.rerun_script
        client.query_string, client.page_name, client.page_script_hash = self.query, self.page, self.page_hash
        client.fragment_id = fragment
        # as the browser does: the big messages it holds, which the server then sends as references
        client.cached_message_hashes.extend(self.cache)
        for state in states:
            client.widget_states.widgets.append(state)
        self.metrics = {}  # what this run shows
        start = time.perf_counter()
        await self.socket.send(message.SerializeToString())
        await self._until_finished()
        return time.perf_counter() - start

    async def _until_finished(self) -> None:
        _, ForwardMsg = _protos()
        while True:
            message = ForwardMsg.FromString(await self.socket.recv())
            if message.WhichOneof("type") == "ref_hash":
                message = self.cache.get(message.ref_hash, message)
            if message.metadata.cacheable:
                self.cache[message.hash] = message
            kind = message.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = message.new_session.page_script_hash or self.page_hash
            elif kind == "page_info_changed":
                self.query = message.page_info_changed.query_string
            elif kind == "delta":
                self._note(message.delta)
            elif kind == "script_finished":
                status = message.script_finished
                if status in (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY):
                    return
                # FINISHED_EARLY_FOR_RERUN: a new run follows (a fresh server's first session once)
                if status != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    raise RuntimeError(f"the run ended with {ForwardMsg.ScriptFinishedStatus.Name(status)}")

    def _note(self, delta) -> None:
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        if kind == "exception":
            self.exceptions += 1
        elif kind == "metric":
            self.metrics[element.metric.label] = element.metric.body
        elif kind in ("slider", "number_input", "multiselect", "button"):
            proto = getattr(element, kind)
            self.widgets[proto.label] = (kind, proto, delta.fragment_id)
        elif kind == "bidi_component":
            proto = element.bidi_component
            name = next((known for known in (SCRUBBER,) if known in proto.component_name), proto.component_name)
            self.components[name] = (proto, delta.fragment_id, json.loads(proto.json) if proto.json else {})

    def value(self, label: str) -> float:
        kind, proto, _ = self.widgets[label]
        if kind == "slider":
            return (proto.value if proto.set_value else proto.default)[0]
        return proto.value if proto.set_value else proto.default

    async def set(self, label: str, value) -> float:
        """The widget ``label`` set to ``value`` as the browser sets it: its state sent with the run
        of the fragment it sits in; the seconds to that run's end."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        kind, proto, fragment = self.widgets[label]
        state = WidgetState(id=proto.id)
        if kind == "slider":
            state.double_array_value.data.append(float(value))
        elif kind == "multiselect":
            state.string_array_value.data.extend(value)
        elif kind == "button":
            state.trigger_value = True
        elif proto.data_type == proto.INT:
            state.int_value = int(value)
        else:
            state.double_value = float(value)
        seconds = await self.run(states=[state], fragment=fragment)
        # the server sends the widget again only when it changed it: what was sent is now its value
        if kind in ("multiselect", "button"):
            return seconds
        if kind == "slider":
            proto.ClearField("value")
            proto.value.append(float(value))
        else:
            proto.value = value
        proto.set_value = True
        return seconds

    async def report(self, name: str, state: dict) -> float:
        """What a component tells the server (``setStateValue``), as the browser sends it: the
        component's whole state as JSON, with the run of the fragment it sits in."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        proto, fragment, _ = self.components[name]
        return await self.run(states=[WidgetState(id=proto.id, json_value=json.dumps(state))], fragment=fragment)

    async def close(self) -> None:
        if self.socket is not None:
            await self.socket.close()


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _memory(pids: list[int], peak: list, stop: asyncio.Event) -> None:
    """The largest resident memory of any one of the servers, sampled every 0.2 s."""
    while not stop.is_set():
        peak[0] = max(peak[0], *(_rss_mib(pid) for pid in pids))
        await asyncio.sleep(0.2)


async def _warmed_up(pids: list[int], since: float, timeout: float = 30.0) -> None:
    """Wait for the servers' one-time warm-up to be over: the background imports that start
    ``WARM_AFTER`` seconds after a server's first run, once no run has been in progress for
    ``QUIET_FOR`` (``pages/ui/session.py``; about 0.16 s of CPU, seen 3-3.5 s after a Q-alpha page
    opened), then a second in which the servers spent less than 20 ms of CPU. Counted in the
    stepping window they would have added 12-16 ms to each of one person's ten steps, a cost paid
    once per process, not per step. ``since``: when the last page finished opening."""
    from pages.ui.session import QUIET_FOR, WARM_AFTER

    deadline = since + timeout
    await asyncio.sleep(max(0.0, since + WARM_AFTER + QUIET_FOR + 0.5 - time.monotonic()))
    previous = sum(_cpu_seconds(pid) for pid in pids)
    while time.monotonic() < deadline:
        await asyncio.sleep(1.0)
        now = sum(_cpu_seconds(pid) for pid in pids)
        if now - previous < 0.02:
            return
        previous = now


async def _stepper(person: Person, steps: int, think: float, rng, record: list, reported: set) -> None:
    """Move K a few features at a time, up and down, with a think time between steps; each step
    checked. A step is what the browser sends once the hand stops (pages/ui/scrubber.py): the new
    K and λ; the moves before it cost the server nothing. Every K reported is one no one reported
    before (``reported``, shared by the people), so that no step finds its k-means already cached
    by another's: the worst case."""
    direction = 1
    _, _, data = person.components[SCRUBBER]
    current, lam = int(data["k"]), data["lams"][data["lam_index"]]
    for _ in range(steps):
        await asyncio.sleep(think * rng.uniform(0.5, 1.5))
        wanted = current
        while wanted == current or wanted in reported:
            if not 1 <= wanted + direction <= data["n"]:
                direction = -direction
            wanted += direction * rng.randint(1, 3)
            wanted = min(max(wanted, 1), data["n"])
        reported.add(wanted)
        exceptions = person.exceptions
        try:
            seconds = await person.report(SCRUBBER, {"view": {"k": wanted, "lam": lam, "k_set": True}})
            # the page's answer: k-means at the new K, and the link naming it (the scrubber itself
            # shows the K already, and the server leaves it be)
            ok = (f"Accuracy, top {wanted}" in person.metrics and f"qa_top_k={wanted}&" in person.query + "&"
                  and person.exceptions == exceptions)
            current = wanted
        except Exception as error:  # noqa: BLE001 - a failed step is counted, not fatal
            seconds, ok = float("nan"), False
            print(f"  a step failed: {error!r}", flush=True)
        record.append((seconds, ok))


async def _heavy(person: Person, kind: str, stop: asyncio.Event, record: list, claimed: set) -> None:
    """Heavy work until the others are done, each request one no one made before (``claimed``,
    shared by the workers): ``kernel``, the Kernel page's k set to a new value (a kernel solve);
    ``path``, the Q-alpha page's k with side class 10 (a solve and its λ path of 25 λ's); ``compare``,
    one Compare method not run yet chosen, then Run (its five folds ranked and judged)."""
    if kind == "compare":
        _, proto, _ = person.widgets["Methods"]
        for method in proto.options:
            if stop.is_set():
                return
            if "(slow)" in method or method in claimed:  # the wrappers take minutes: not a step's neighbour
                continue
            claimed.add(method)
            await person.set("Methods", [method])
            run = next((label for label in person.widgets if label.startswith("Run ")), None)
            if run is not None:
                record.append(await person.set(run, True))
        return
    _, proto, _ = person.widgets[K_INPUT]
    value = int(person.value(K_INPUT))
    while not stop.is_set():
        value = value + 1 if value < proto.max else int(proto.min)
        if (kind, value) in claimed:
            continue
        claimed.add((kind, value))
        record.append(await person.set(K_INPUT, value))


async def scenario(servers: list[tuple[str, int]], n_users: int, steps: int, think: float, heavy: int,
                   seed: int, heavy_kind: str = "kernel") -> dict:
    """``n_users`` people stepping K on the Q-alpha page (and ``heavy`` more doing ``heavy_kind``
    work, :func:`_heavy`), dealt in turn to the ``servers`` (``(url, pid)`` each), as sticky
    sessions behind a proxy would be."""
    pids = [pid for _, pid in servers]
    people = [Person(servers[i % len(servers)][0], "qalpha") for i in range(n_users)]
    page, query, control = HEAVY[heavy_kind]
    workers = [Person(servers[i % len(servers)][0], page, query) for i in range(heavy)]
    await asyncio.gather(*(person.open() for person in people + workers))
    opened = time.monotonic()
    missing = [p for p in people if SCRUBBER not in p.components] + [w for w in workers if control not in w.widgets]
    if missing:
        raise RuntimeError(f"{len(missing)} session(s) did not show the control they step")
    if not heavy:  # with heavy work the servers are never quiet: its workers start with the window
        await _warmed_up(pids, opened)
    stop, peak, steps_done, heavy_runs = asyncio.Event(), [max(_rss_mib(pid) for pid in pids)], [], []
    watcher = asyncio.create_task(_memory(pids, peak, stop))
    claimed = set()
    busy = [asyncio.create_task(_heavy(worker, heavy_kind, stop, heavy_runs, claimed)) for worker in workers]
    cpu, begin = sum(_cpu_seconds(pid) for pid in pids), time.perf_counter()
    rss_before = sum(_rss_mib(pid) for pid in pids)
    rng = random.Random(seed)
    reported = set()
    await asyncio.gather(*(_stepper(person, steps, think, random.Random(rng.random()), steps_done, reported)
                           for person in people))
    cpu, wall = sum(_cpu_seconds(pid) for pid in pids) - cpu, time.perf_counter() - begin
    growth = sum(_rss_mib(pid) for pid in pids) - rss_before
    stop.set()
    await asyncio.gather(watcher, *busy, return_exceptions=True)
    await asyncio.gather(*(person.close() for person in people + workers))
    times = sorted(seconds for seconds, ok in steps_done if ok)
    median, p90 = median_p90(times)
    return dict(users=n_users, heavy=heavy, heavy_kind=heavy_kind if heavy else "", servers=len(servers), steps=len(steps_done), ok=len(times),
                failed=len(steps_done) - len(times), exceptions=sum(p.exceptions for p in people + workers),
                median=median, p90=p90,
                cpu_per_step=cpu / max(len(steps_done), 1), cpu_share=cpu / wall, peak_mib=peak[0], growth_mib=growth,
                heavy_runs=len(heavy_runs), heavy_median=median_p90(heavy_runs)[0])


def _row(result: dict) -> str:
    who = f"{result['users']}" + (f" + {result['heavy']} {result['heavy_kind']} ({result['heavy_runs']} runs, "
                                  f"median {result['heavy_median']:.2f} s)"
                                  if result["heavy"] else "")
    return (f"{who:<40} {result['servers']:>7} {result['ok']:>5}/{result['steps']:<5} {result['median']:>9.3f} {result['p90']:>7.3f} "
            f"{result['failed']:>7} {result['exceptions']:>10} {result['cpu_per_step']:>10.3f} "
            f"{result['cpu_share']:>10.2f} {result['peak_mib']:>9.0f} {result['growth_mib']:>+10.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", default="1,5,10,20", help="comma-separated numbers of people, each on a fresh server")
    parser.add_argument("--split", default="10,20",
                        help="comma-separated numbers of people to run again split over two servers ('': none)")
    parser.add_argument("--steps", type=int, default=10, help="K steps per person")
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds between a person's steps")
    parser.add_argument("--heavy", type=int, default=4, help="people running heavy work beside one stepper (0: none)")
    parser.add_argument("--heavy-kinds", default="kernel,compare,path",
                        help="the heavy work, a row each: kernel (solves), compare (methods run), path (λ paths)")
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    kinds = [kind for kind in options.heavy_kinds.split(",") if kind.strip()] if options.heavy else []
    plan = ([(int(n), 0, "", 1) for n in options.users.split(",")] + [(1, options.heavy, kind, 1) for kind in kinds]
            + [(int(n), 0, "", 2) for n in options.split.split(",") if n.strip()])
    print(f"Q-alpha page, AR faces; {options.steps} K steps per person, about {options.think:g} s apart; "
          "fresh servers per row, sharing one store folder\n")
    print(f"{'people':<40} {'servers':>7} {'ok/steps':>11} {'median s':>9} {'p90 s':>7} {'failed':>7} "
          f"{'exceptions':>10} {'CPU s/step':>10} {'CPU cores':>10} {'peak MiB':>9} {'grown MiB':>10}")
    with tempfile.TemporaryDirectory(prefix="bench-users-store-") as store:
        for n_users, heavy, heavy_kind, n_servers in plan:
            processes = []
            try:
                for _ in range(n_servers):
                    processes.append(start_server(environment={"QALPHA_STORE_DIR": store}))
                result = asyncio.run(scenario([(url, process.pid) for process, url in processes], n_users,
                                              options.steps, options.think, heavy, options.seed,
                                              heavy_kind or "kernel"))
            finally:
                for process, _ in processes:
                    stop_server(process)
            print(_row(result), flush=True)
    print("\nservers: separate `streamlit run` processes, the people dealt to them in turn (as sticky sessions "
          "behind a reverse proxy would be). CPU s/step: the servers' CPU seconds over the stepping window "
          "(every thread, the heavy runs' too) per K step; CPU cores: those seconds over the window's wall "
          "time; peak MiB: the largest resident memory of any one server; grown MiB: the servers' resident memory at the "
          "window's end less at its start. Heavy runs: those finished in the window, and the median seconds from "
          "a heavy request to the end of the run it started.")


if __name__ == "__main__":
    run_recorded(main, "bench_users", __doc__)
