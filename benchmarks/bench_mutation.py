"""Mutation testing: how many small changes to the numerical core and the store do the unit tests catch?

    python -m benchmarks.bench_mutation [--max-children 2] [--keep FOLDER] [--modules content_store ...] [--sample 200]

mutmut (``pip install mutmut``; 3.8) changes one thing at a time in Q-alpha's solver (``core/selection/qalpha.py``
and the stages of ``core/selection/_qalpha/``), ``core/selection/slda.py`` and ``core/data/content_store.py`` (an operator,
a constant, a comparison, an argument, a returned value...) and runs the unit tests of those modules
against each change; a change some test fails on is killed, one every test passes is a survivor.
It runs in a temporary copy of the committed tree (``git archive HEAD``) with its configuration
written there, so the repository needs none; the two-process store test runs 3 s per mutant
instead of a minute, and the tests' Dask-backend variants are left out (they repeat the NumPy
path's checks through a scheduler; of ``core/matrix`` only the k-means is mutated, which has none). The modules are run one after another (``--modules`` picks some), each
reported whole; ``--sample N`` checks a random sample of N mutants of each module (seeded, the
same sample every run; 0 checks all), for a share with a stated margin in less time (all 3,061
took about 25 a minute on two cores). mutmut runs, for each mutant, the tests that reach the function it changed,
stopping at the first that fails. Reported: mutants, killed, survived, timed out and the share killed, per
module; then every survivor's diff, for judging by hand (``docs/testing.md`` says which were
judged harmless and why).
"""

import argparse
import collections
import json
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from benchmarks.results import run_recorded

MODULES = ("core/selection/qalpha.py", *(f"core/selection/_qalpha/{stage}.py" for stage in
                                          ("problem", "prepare", "start", "iterate", "anderson", "ascent",
                                                           "certify")),
           "core/selection/slda.py", "core/data/content_store.py", "core/selection/automatic.py",
           "core/matrix/kmeans.py")
TESTS = ("tests/core/selection/test_qalpha.py", "tests/core/selection/test_qalpha_convergence.py",
         "tests/core/selection/test_qalpha_quasi_newton.py", "tests/core/selection/test_qalpha_newton.py",
         "tests/core/selection/test_qalpha_route.py",
         "tests/core/selection/test_qalpha_anderson.py",
         "tests/core/selection/test_qalpha_start.py", "tests/core/selection/test_qalpha_iterate.py",
         "tests/core/selection/test_side.py", "tests/core/selection/test_lambda_path.py",
         "tests/core/test_interfaces.py", "tests/core/selection/test_slda.py",
         "tests/core/data/test_content_store.py", "tests/core/data/test_store_neighbours.py",
         "tests/core/selection/test_automatic.py", "tests/core/matrix/test_kmeans.py",
         "tests/core/evaluation/test_metrics.py")


def _configuration() -> str:
    lines = ["[mutmut]", "source_paths = core", "only_mutate ="]
    lines += [f"    {module}" for module in MODULES]
    lines += ["pytest_add_cli_args_test_selection ="] + [f"    {test}" for test in TESTS]
    # the Dask backends repeat the NumPy path's checks through a scheduler: seconds per mutant for
    # nothing these modules hold (of core/matrix only kmeans.py, which no Dask path reaches, is mutated)
    lines += ["pytest_add_cli_args =", "    -p", "    no:cacheprovider", "    -q", "    -k", "    not dask",
              "also_copy =", "    assets/", "    benchmarks/", "    experiments/",
              # workers forked from a process whose OpenBLAS threads had started hung without using
              # the CPU (so no CPU limit ended them): a clean fork server, and BLAS on one thread
              "process_isolation = forkserver", ""]
    return "\n".join(lines)


def _statuses(folder: Path) -> dict:
    """``{mutant name: status}`` from ``mutmut results --all true``."""
    done = subprocess.run(["mutmut", "results", "--all", "true"], cwd=folder, capture_output=True, text=True)
    statuses = {}
    for line in done.stdout.splitlines():
        if ":" in line:
            name, status = line.strip().rsplit(":", 1)
            statuses[name.strip()] = status.strip()
    return statuses


def _module_of(mutant: str) -> str:
    for module in MODULES:
        dotted = module[:-3].replace("/", ".")
        if mutant.startswith(dotted + "."):
            return module
    return "other"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--keep", help="work in this folder and keep it (to look at survivors with mutmut show)")
    parser.add_argument("--modules", nargs="*", help="the modules to run, by their file's stem (all by default)")
    parser.add_argument("--sample", type=int, default=200, help="mutants checked per module (0: all)")
    options = parser.parse_args()
    chosen = [module for module in MODULES if not options.modules or Path(module).stem in options.modules]
    folder = Path(options.keep) if options.keep else Path(tempfile.mkdtemp(prefix="mutation-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
        (folder / "setup.cfg").write_text(_configuration())
        environment = dict(os.environ, STORE_NEIGHBOURS_SECONDS="3", PYTHONPATH=str(folder), OPENBLAS_NUM_THREADS="1",
                           OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        mutmut = ["mutmut", "run", "--max-children", str(options.max_children)]
        # generating the mutants (and the tests' coverage) without checking any
        subprocess.run(mutmut + ["no.such.mutant"], cwd=folder, env=environment, capture_output=True, text=True)
        sampled = {}
        for module in chosen:
            names = sorted(json.loads((folder / "mutants" / f"{module}.meta").read_text())["exit_code_by_key"])
            if options.sample and len(names) > options.sample:
                names = sorted(random.Random(f"{module}:{options.sample}").sample(names, options.sample))
            sampled[module] = set(names)
            for start in range(0, len(names), 100):  # a command line of a hundred names at a time
                run = subprocess.run(mutmut + names[start:start + 100], cwd=folder, env=environment,
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    print(run.stdout[-3000:], run.stderr[-3000:])
        statuses = _statuses(folder)
        by_module = collections.defaultdict(collections.Counter)
        for name, status in statuses.items():
            if name in sampled.get(_module_of(name), ()):
                by_module[_module_of(name)][status] += 1
        print(f"{'module':<36} {'checked':>8} {'killed':>7} {'survived':>9} {'timeout':>8} {'other':>6} {'killed %':>9}")
        for module in chosen:
            counts = by_module[module]
            total = sum(counts.values())
            killed = counts["killed"]
            other = total - killed - counts["survived"] - counts["timeout"]
            share = 100 * (killed + counts["timeout"]) / total if total else float("nan")
            print(f"{module:<36} {total:>8} {killed:>7} {counts['survived']:>9} {counts['timeout']:>8} {other:>6} "
                  f"{share:>8.1f}%")
        print("\n(timeout: the tests ran past mutmut's CPU-time limit on the mutant, an endless loop; counted as "
              "killed, since the tests did not pass on it. A share over a sample of 200 has a 95% margin of about "
              "5 points)\n")
        survivors = sorted(name for name, status in statuses.items()
                           if status == "survived" and name in sampled.get(_module_of(name), ()))
        print(f"Survivors ({len(survivors)}):")
        for name in survivors:
            shown = subprocess.run(["mutmut", "show", name], cwd=folder, capture_output=True, text=True).stdout
            diff = [line for line in shown.splitlines() if line.startswith(("-", "+")) and not line.startswith(("---", "+++"))]
            print(f"\n{name}\n" + "\n".join("    " + line for line in diff[:6]))
        print("\n" + json.dumps({module: dict(by_module[module]) for module in chosen}))
    finally:
        if not options.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    run_recorded(main, "bench_mutation", __doc__)
