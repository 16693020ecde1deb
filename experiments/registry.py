"""What every reproduction shares: the result type (a tidy table, arrays, the paper's numbers
beside ours, the claims checked), the registry the experiments enter, their figures, progress in
steps, and the tables of summaries and comparisons."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from core.progress import ProgressCallback, report_or_stop


@dataclass(frozen=True)
class Claim:
    """A qualitative statement of a paper and whether our numbers bear it out.

    ``holds`` is None when the runs cannot decide it: their standard error is too large to tell
    the stated pattern from its opposite (the quick versions, with few runs). ``verdict`` says
    which, in words."""

    statement: str
    holds: bool | None
    evidence: str

    @property
    def verdict(self) -> str:
        return {True: "Holds", False: "Does not hold", None: "Undecided with these runs"}[self.holds]


def trend_claim(statement: str, curves: dict, *, rising: bool = True, resolution: float = 0.05) -> Claim:
    """A claim that a curve rises (``rising``) or falls with its x, checked over the whole curve.

    ``curves`` maps a label to ``(x, mean, standard_error)``, arrays in the order of x. Each curve
    must move the stated way between every two neighbouring x: a step against it larger than twice
    the two points' combined standard error breaks the claim (a dip in the middle counts, not only
    the two ends). A curve whose steps all agree within that noise but whose noise is wider than
    ``resolution`` (twice the largest combined standard error) cannot decide it: the claim is
    undecided, with the number of runs named in the evidence by the caller.
    """
    sign = 1.0 if rising else -1.0
    verdicts, evidence = [], []
    for label, (x, mean, error) in curves.items():
        x, mean, error = np.asarray(x), np.asarray(mean, dtype=float), np.asarray(error, dtype=float)
        step = sign * np.diff(mean)
        noise = 2.0 * np.hypot(error[:-1], error[1:])
        against = np.flatnonzero(step < -noise)
        if against.size:
            worst = against[np.argmin(step[against] + noise[against])]
            verdicts.append(False)
            evidence.append(f"{label}: {mean[worst]:.2f} at {x[worst]:g} -> {mean[worst + 1]:.2f} at {x[worst + 1]:g} "
                            f"(more than twice its standard error, {noise[worst] / 2:.2f})")
        elif noise.max(initial=0.0) > resolution:
            verdicts.append(None)
            evidence.append(f"{label}: {mean[0]:.2f} at {x[0]:g} -> {mean[-1]:.2f} at {x[-1]:g}, but steps of up to "
                            f"{noise.max():.2f} could be noise")
        else:
            verdicts.append(True)
            evidence.append(f"{label}: {mean[0]:.2f} at {x[0]:g} -> {mean[-1]:.2f} at {x[-1]:g}, "
                            f"{'never falling' if rising else 'never rising'} by more than twice its standard error")
    holds = False if False in verdicts else (None if None in verdicts else True)
    return Claim(statement, holds, "; ".join(evidence))


@dataclass(frozen=True, eq=False)
class ExperimentResult:
    """Outcome of one reproduction.

    Attributes
    ----------
    name, title : str
        Registry key and display title.
    reference : str
        The paper and figure or table reproduced.
    data : str
        The data used, and how they differ from the paper's.
    table : pandas.DataFrame
        Long format: one row per measurement (written as CSV).
    summary : pandas.DataFrame
        The aggregate the paper reports (means over runs), one row per method or setting.
    comparison : pandas.DataFrame
        Columns ``quantity``, ``paper``, ``ours``: the paper's numbers beside ours.
    claims : tuple of Claim
        The paper's qualitative claims checked on our numbers.
    arrays : dict of str to ndarray
        What the figure needs beyond the table (sorted weights, images, curves).
    parameters : dict
        Everything that determines the result (seed, sizes, grids).
    seconds : float
        Wall time of the run.
    """

    name: str
    title: str
    reference: str
    data: str
    table: pd.DataFrame
    summary: pd.DataFrame
    comparison: pd.DataFrame
    claims: tuple
    arrays: dict = field(default_factory=dict)
    parameters: dict = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """Everything but the long table and the arrays, as plain JSON types."""
        return {
            "name": self.name, "title": self.title, "reference": self.reference, "data": self.data,
            "parameters": _plain(self.parameters), "seconds": round(self.seconds, 3),
            "summary": _plain(self.summary.to_dict(orient="records")),
            "comparison": _plain(self.comparison.to_dict(orient="records")),
            "claims": [dict(statement=c.statement, holds=None if c.holds is None else bool(c.holds),
                             evidence=c.evidence)
                       for c in self.claims],
        }


def _plain(value):
    """NumPy scalars and arrays inside dicts and lists as JSON-serialisable Python values."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


@dataclass(frozen=True)
class Experiment:
    """A registered reproduction: what it reproduces and the function that runs it."""

    name: str
    title: str
    reference: str
    function: Callable[..., ExperimentResult]
    options: tuple = ()  # keyword options beyond quick / random_state / progress


EXPERIMENTS: dict[str, Experiment] = {}


def register(name: str, title: str, reference: str, options: tuple = ()):
    """Decorator adding an experiment function to :data:`EXPERIMENTS`."""
    def wrap(function):
        EXPERIMENTS[name] = Experiment(name, title, reference, function, options)
        return function
    return wrap


#: Each experiment's figures: ``name -> function(result) -> list of Plotly figures``.
FIGURES: dict[str, Callable] = {}


def figures_of(name: str):
    """Decorator registering the function that draws experiment ``name``'s figures, as the paper
    draws them, from its :class:`ExperimentResult` (it lives beside the experiment)."""
    def wrap(function):
        FIGURES[name] = function
        return function
    return wrap


def series_by(table, key, x, y, where=None) -> dict:
    """``{value of key: (x values, y values)}`` from a long table, optionally filtered by ``where``:
    the curves of a figure, one per value of ``key``."""
    part = table if where is None else table[where(table)]
    return {name: (group[x].to_numpy(), group[y].to_numpy()) for name, group in part.groupby(key, sort=False)}


def save_result(result: ExperimentResult, out_dir) -> list[Path]:
    """Write ``NAME.csv`` (the long table), ``NAME_summary.csv``, ``NAME.json`` (summary,
    comparison, claims, parameters) and, when there are arrays, ``NAME_arrays.npz``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / f"{result.name}.csv", out / f"{result.name}_summary.csv", out / f"{result.name}.json"]
    result.table.to_csv(written[0], index=False)
    result.summary.to_csv(written[1], index=False)
    written[2].write_text(json.dumps(result.to_json(), indent=1))
    if result.arrays:
        written.append(out / f"{result.name}_arrays.npz")
        np.savez_compressed(written[-1], **{k: np.asarray(v) for k, v in result.arrays.items()})
    return written


class _Steps:
    """Turns "step i of n, doing this" into progress reports (:mod:`core.progress`); a callback
    that returns False stops the experiment (:class:`core.errors.Stopped`)."""

    def __init__(self, progress: ProgressCallback | None, total: int):
        self.progress, self.total, self.done = progress, max(int(total), 1), 0

    def __call__(self, message: str) -> None:
        report_or_stop(self.progress, min(self.done, self.total), self.total, message)
        self.done += 1


def summary_frame(table: pd.DataFrame, by: list[str], values: list[str]) -> pd.DataFrame:
    """Mean, standard deviation and count of ``values`` per group of ``by`` (groups in order of
    first appearance)."""
    grouped = table.groupby(by, sort=False)
    out = grouped[values].agg(["mean", "std"])
    out.columns = [f"{value}_{statistic}" for value, statistic in out.columns]
    out["n"] = grouped.size()
    return out.reset_index()


def comparison_frame(rows: list[tuple[str, Any, Any]]) -> pd.DataFrame:
    """``(quantity, paper, ours)`` rows; numbers are kept, text is kept as text."""
    return pd.DataFrame(rows, columns=["quantity", "paper", "ours"]).astype({"paper": object, "ours": object})
