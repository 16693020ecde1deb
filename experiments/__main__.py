"""Command line of the reproductions::

    python -m experiments list
    python -m experiments run NAME [--quick] [--seed N] [--out DIR] [--option KEY=VALUE ...]

``list`` prints every registered reproduction with the paper and figure it reproduces. ``run``
takes one of their names, or ``all`` for every one; each run prints the paper's numbers beside
ours and the checked claims, and writes ``NAME.csv``, ``NAME_summary.csv``, ``NAME.json`` and
``NAME_arrays.npz`` into ``--out``. The exit status is 1 when a claim fails, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys

from core.errors import InputError
from . import EXPERIMENTS, load_experiments, run_experiment, save_result


def main(argv=None) -> int:
    load_experiments()
    parser = argparse.ArgumentParser(prog="python -m experiments",
                                     description="Reproduce a figure or table of the papers this library implements.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="print every reproduction")
    run = commands.add_parser("run", help="run a reproduction and write its tables")
    run.add_argument("name", help=f"all, or one of: {', '.join(EXPERIMENTS)}")
    run.add_argument("--quick", action="store_true", help="the small version (under a minute)")
    run.add_argument("--seed", type=int, default=0, help="random_state (default 0)")
    run.add_argument("--out", default="experiment-results", help="folder for CSV/JSON/NPZ output")
    run.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                     help="an option of the experiment (repeatable), e.g. --option standardize=true; "
                          "VALUE is read as JSON (true, 0.1, [1, 2]) or else as text; dataset=NAME "
                          "loads a bundled data set")
    args = parser.parse_args(argv)
    if args.command == "list":
        for experiment in EXPERIMENTS.values():
            print(f"{experiment.name:24s} {experiment.reference}: {experiment.title}")
        return 0
    try:
        options = _options(args.option)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    names = list(EXPERIMENTS) if args.name == "all" else [args.name]
    status = 0
    for name in names:
        try:
            result = run_experiment(name, quick=args.quick, random_state=args.seed, **options,
                                    progress=lambda report: print(
                                        f"  [{report.fraction:4.0%}] {report.message}", file=sys.stderr))
        except InputError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        print(f"\n== {result.name}: {result.title} ({result.reference}) — {result.seconds:.1f} s")
        print(f"data: {result.data}")
        print(result.comparison.to_string(index=False))
        for claim in result.claims:
            print(f"  [{ {True: 'holds', False: 'FAILS', None: 'undecided'}[claim.holds] }] {claim.statement} — "
                  f"{claim.evidence}")
            status = status or (1 if claim.holds is False else 0)
        for path in save_result(result, args.out):
            print(f"wrote {path}")
    return status


def _options(pairs) -> dict:
    options = {}
    for pair in pairs:
        key, separator, text = pair.partition("=")
        if not separator or not key:
            raise InputError(f"--option takes KEY=VALUE; got {pair!r}.")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        if key == "dataset":
            from core.data.bundled import load_dataset

            value = load_dataset(str(value))
        options[key] = value
    return options


if __name__ == "__main__":
    sys.exit(main())
