"""The Compare page's table: one row per method (the best mean of a measure over the sizes, its
spread, where it was reached, the mean over all sizes), the measure on all the features as the
reference row every reader looks for first, and the winner or the tie in words."""

from __future__ import annotations

import pandas as pd

from core.evaluation.compare import summarise_curves


def all_features(curves: dict, metric: str, n_features: int) -> tuple[float, float] | None:
    """The measure on every feature and its spread over the folds: the same for every selection
    method (each one's largest size is all of them, whatever its ranking); None before any has run."""
    for values in curves.values():
        if metric in values and values["size"] and values["size"][-1] == n_features:
            spread = values.get(f"{metric}_sd")
            return float(values[metric][-1]), float(spread[-1]) if spread is not None else float("nan")
    return None


def table_of(results: dict, metric: str, measures: dict, label_of, kind_of, reference=None,
             n_features: int | None = None) -> pd.DataFrame:
    """One row per method of ``results`` (``{method: (curves, seconds)}``), the best first, named
    by ``label_of`` and grouped by ``kind_of``; ``reference`` (:func:`all_features`) heads it as
    the row "all N features (reference)"."""
    summary = summarise_curves({name: results[name][0] for name in results}, metric)  # the best first
    names = list(summary["method"])
    score = f"best {measures[metric]}"
    # the scores next to the method, so that an 800 px window shows them without a sideways scroll
    table = pd.DataFrame({"": summary["standing"].map({"best": "★ best", "tied for best": "= tied for best", "": ""}),
                          "method": [label_of(name) for name in names], score: summary["best"],
                          "sd over folds": summary["sd_at_best"], "at k (features or dimensions)": summary["size_at_best"],
                          "mean over the sizes": summary["mean_over_sizes"], "kind": [kind_of(name) for name in names],
                          "seconds (when computed)": [round(results[name][1], 3) for name in names]})
    if reference is None:
        return table
    row = {"": "", "method": f"all {n_features:,} features (reference)", score: reference[0], "sd over folds": reference[1],
           "at k (features or dimensions)": n_features, "mean over the sizes": reference[0], "kind": "reference",
           "seconds (when computed)": None}
    return pd.concat([pd.DataFrame([row]), table], ignore_index=True)


def standing_note(table: pd.DataFrame, metric: str, measures: dict) -> str:
    """The table's winner, or its tie, in words (``table`` as :func:`table_of` made it)."""
    score_column = f"best {measures[metric]}"
    leaders = table[table[""] != ""]
    if leaders.empty:
        return ""
    if len(leaders) == 1:
        return f"Best: {leaders['method'].iloc[0]} ({leaders[score_column].iloc[0]:.4f})."
    return (f"A tie for best at {leaders[score_column].iloc[0]:.4f}: {', '.join(leaders['method'])}. "
            "None of them wins on this measure: compare the curves, or another measure.")
