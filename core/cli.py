"""Feature selection from the command line, for data too large for the browser.

    python -m core qalpha cells.h5ad --k 5 --output weights.csv
    python -m core fisher cells.h5ad --labels cell_type --scheduler tcp://10.0.0.5:8786

Methods: ``qalpha`` (:func:`core.selection.qalpha.q_alpha`, unsupervised or with ``--labels`` supervised,
with ``--side`` side data) and the one-pass filters ``variance``, ``fisher``, ``pearson``
(:func:`core.selection.scorers.score_features`). Inputs: ``.h5ad``, ``.zarr``, ``.npy`` and CSV/TSV tables
(:func:`core.data.stores.open_store`); sparse AnnData matrices stay sparse, and everything but tables
is read one row block at a time. The output CSV ranks the features (rank, index, name, weight);
a JSON file beside it records the parameters, the input, the convergence and the time.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

from .errors import InputError

METHODS = ("qalpha", "variance", "fisher", "pearson")
_UNITS = {"": 1, "B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}


def parse_bytes(text: str) -> int:
    """``"3GB"``, ``"512 MB"`` or a number of bytes."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]?B?)\s*", str(text).upper())
    if not match or (match.group(2) and match.group(2) not in _UNITS):
        raise InputError(f"Memory sizes look like 3GB, 512MB or 1000000 (bytes); got {text!r}.")
    return int(float(match.group(1)) * _UNITS[match.group(2) or ""])


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("method", choices=METHODS)
    parser.add_argument("input", help=".h5ad file, .zarr folder, .npy file or CSV/TSV table (samples as rows)")
    parser.add_argument("--output", "-o", default=None,
                        help="CSV of the ranking (default: <input name>.<method>.csv in the current folder)")
    parser.add_argument("--labels", default=None, help="per-sample column holding the classes (obs column of AnnData)")
    parser.add_argument("--k", type=int, default=None, help="Q-alpha: number of clusters")
    parser.add_argument("--side", default=None, help="Q-alpha: side data set (same features) to suppress")
    parser.add_argument("--lam", type=float, default=0.0, help="Q-alpha: weight of the side information")
    parser.add_argument("--max-iter", type=int, default=500)
    parser.add_argument("--tol", type=float, default=1e-6)
    parser.add_argument("--init", choices=("uniform", "random"), default="uniform")
    parser.add_argument("--random-state", type=int, default=0)
    parser.add_argument("--scheduler", default=None, help="address of a running Dask scheduler (tcp://host:port)")
    parser.add_argument("--scheduler-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="how long to wait for the scheduler to answer (default 10)")
    parser.add_argument("--memory-limit", default=None, help="bytes the row blocks may take at once, e.g. 3GB")
    parser.add_argument("--quiet", action="store_true", help="no progress on the terminal")
    return parser


def run(argv=None, out=sys.stderr) -> dict:
    """Run the command; returns the record written to the JSON file."""
    args = _parser().parse_args(argv)
    from .selection.scorers import score_features
    from .matrix.cluster import connect_scheduler
    from .selection.qalpha import q_alpha
    from .data.stores import open_store

    memory_limit = None if args.memory_limit is None else parse_bytes(args.memory_limit)
    say = (lambda text: None) if args.quiet else (lambda text: print(text, file=out, flush=True))
    # the input first: a wrong path is reported at once, not after the scheduler's timeout
    data = open_store(args.input, label_column=args.labels)
    side = client = None
    try:
        client = connect_scheduler(args.scheduler, timeout=args.scheduler_timeout) if args.scheduler else None
        say(f"{data.name}: {data.describe()}" + (f"; scheduler {args.scheduler}" if client else ""))
        labels = None if args.labels is None else data.labels(args.labels)
        start = time.perf_counter()
        record = {"method": args.method, "input": str(Path(args.input).resolve()), "shape": list(data.shape),
                  "format": data.format, "scheduler": args.scheduler, "labels": args.labels}
        if args.method == "qalpha":
            last = [start]

            def progress(report):
                now = time.perf_counter()
                say(f"iteration {report.done:4d}  objective {report.objective:.10g}  {now - last[0]:.2f} s")
                last[0] = now

            if args.side:
                side = open_store(args.side)
            result = q_alpha(data.X, args.k, labels=labels, side=None if side is None else side.X, lam=args.lam,
                             init=args.init, max_iter=args.max_iter, tol=args.tol, random_state=args.random_state,
                             memory_limit=memory_limit, progress=progress)
            weights, ranking = result.alpha, result.ranking
            record.update(k=result.k, lam=result.lam, side=args.side, init=args.init, tol=args.tol,
                          max_iter=args.max_iter, random_state=args.random_state, solver=result.solver,
                          n_iter=result.n_iter, converged=bool(result.converged), objective=result.objective,
                          history=result.history.tolist(), n_selected=int(result.n_selected),
                          constant_features=int(result.constant_features.size), warnings=list(result.warnings))
            say(f"{'converged' if result.converged else 'not converged'} after {result.n_iter} iterations; "
                f"{result.n_selected} features above the sparsity gap")
        else:
            say(f"{args.method}: one pass over the data")
            scores = score_features(args.method, data.X, labels)
            weights, ranking = scores.scores, scores.ranking
        record["seconds"] = time.perf_counter() - start
    finally:
        data.close()
        if side is not None:
            side.close()
        if client is not None:
            client.close()
    output = Path(args.output) if args.output else Path(f"{Path(args.input).name}.{args.method}.csv")
    names = data.feature_names or tuple(f"feature {j}" for j in range(data.shape[1]))
    _write_ranking(output, ranking, weights, names)
    record["output"] = str(output)
    output.with_suffix(".json").write_text(json.dumps(record, indent=2, default=float))
    say(f"wrote {output} and {output.with_suffix('.json')} ({record['seconds']:.1f} s)")
    return record


def _write_ranking(path: Path, ranking, weights, names) -> None:
    import csv

    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["rank", "feature", "name", "weight"])
        for rank, index in enumerate(np.asarray(ranking), start=1):
            writer.writerow([rank, int(index), names[index], repr(float(weights[index]))])


def main(argv=None) -> int:
    try:
        run(argv)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
