"""Tables users bring: delimited text (also compressed or in a ZIP), Parquet, AnnData ``.h5ad``,
NPY/NPZ/MAT.

Loading is three steps, so that an interface can parse once and let the user choose the rest:

1. :func:`read_table` parses the bytes (pandas' C reader, pyarrow for Parquet, anndata for
   ``.h5ad``) into a :class:`ParsedTable`: the numbers as stored, the text cells, the names.
2. :meth:`ParsedTable.arrange` applies the choices of layout: which way the samples run
   (``orientation``) and which column (or row, or ``obs`` column) holds the labels. Text columns
   that are not the labels become sample or feature names, or are dropped with a note.
3. :func:`finish` deals with missing values (refuse, drop samples or features, impute the mean or
   median with scikit-learn's ``SimpleImputer``) and returns the :class:`~core.data.dataset.Dataset`.

:func:`load_table` does all three. Everything that did not stop the load (a guess, a dropped
column, imputed values) is written in ``dataset.meta["load_report"]``; everything that does stop
it is an :class:`~core.errors.InputError` saying what was wrong and what to do.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping

import numpy as np
# imported here, once, rather than inside the functions: Streamlit runs each session on a thread,
# and two first sessions importing pandas at the same moment met a partially initialised module
import pandas as pd
from pandas.api import types as pandas_types

from .dataset import Dataset
from ..errors import InputError
from ..limits import (COMPRESSIONS, LoadLimits, check_budget, compression_of, decompress, format_bytes, open_zip,
                     user_files)
from ..validation import as_labels, check_real_dtype

__all__ = ["TABLE_EXTENSIONS", "ORIENTATIONS", "MISSING_POLICIES", "ParsedTable", "Arrangement",
           "read_table", "finish", "load_table", "table_columns", "is_table_file"]

TEXT_EXTENSIONS = (".csv", ".tsv", ".txt", ".tab")
TABLE_EXTENSIONS = TEXT_EXTENSIONS + (".parquet", ".pq", ".h5ad", ".npy", ".npz", ".mat")
COMPRESSED_EXTENSIONS = (".gz", ".bz2", ".xz", ".zip")
ORIENTATIONS = ("auto", "samples_as_rows", "samples_as_columns")
MISSING_POLICIES = ("refuse", "drop_samples", "drop_features", "mean", "median")
# pandas' default missing-value markers (read_csv's documented ``na_values``) and "?", the UCI
# repository's marker; the wide-table reader uses the same set
NA_TOKENS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                       "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null", "?"})
LABEL_WORDS = ("label", "labels", "class", "classes", "target", "y", "group", "diagnosis", "condition",
               "cell_type", "celltype", "cluster", "type", "category", "outcome")
# the head of a text file read to choose the delimiter and the header: a bounded prefix
HEAD_LINES, HEAD_LINE_CHARS = 20, 1 << 16
# a table this wide and this short is read line by line: pandas' per-column cost dominates there
WIDE_COLUMNS, WIDE_RATIO = 10_000, 10
_BOOLEAN_TEXT = frozenset({"true", "false"})
_COMPLEX = re.compile(r"^\(?[-+]?[\d.]+(e[-+]?\d+)?[-+][\d.]*(e[-+]?\d+)?[ij]\)?$", re.IGNORECASE)
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?|-?\d+ days( [\d:.]+)?)$")
_GENE_LIKE = re.compile(r"^(ENS[A-Z]*G\d+|[A-Z][A-Z0-9-]{1,14}(\.\d+)?|\d+_(s_|x_|i_)?at|AFFX-.*|"
                        r"ILMN_\d+|[A-Za-z][A-Za-z0-9]*[-_.][A-Za-z0-9_.-]+)$")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _listed(names, limit: int = 8) -> str:
    names = list(names)
    shown = ", ".join(repr(str(n)) for n in names[:limit])
    return shown + (f" and {len(names) - limit:,} more" if len(names) > limit else "")


# ---------------------------------------------------------------------------- parsed table
@dataclass(frozen=True, eq=False)
class ParsedTable:
    """A table as stored in the file, before any choice of layout, labels or missing values.

    Attributes
    ----------
    filename, format : str
        ``format`` is "text", "parquet", "h5ad", "npy", "npz" or "mat"; for the last two,
        ``arrays`` names every array in the file and ``x_key`` the one read as the data.
    columns : tuple of str
        Names of the stored columns (generated as ``"column j"`` when the file has no header).
    values : ndarray, shape (n_rows, len(numeric))
        The numbers of the columns listed in ``numeric``; NaN where a cell is missing or text.
    numeric : ndarray of int
        Indices (into ``columns``) of the columns that hold at least one number.
    strings : dict of int -> ndarray of object
        For every column holding text, its cells (None where missing). A column can be in both
        ``numeric`` and ``strings`` (mostly numbers with a few text cells, e.g. a label row).
    row_names : tuple of str or None
        Stored row names (AnnData ``obs_names``).
    annotations : dict of str -> ndarray
        Per-row arrays that are not columns of the table (AnnData ``obs`` columns, the other
        arrays of an NPZ/MAT file): candidates for the labels.
    notes : tuple of str
        How the file was read (compression, delimiter, header, engine).
    header : bool
        Whether the first row was read as column names.
    """

    filename: str
    format: str
    columns: tuple
    values: np.ndarray
    numeric: np.ndarray
    strings: Mapping[int, np.ndarray] = field(default_factory=dict)
    row_names: tuple | None = None
    annotations: Mapping[str, np.ndarray] = field(default_factory=dict)
    notes: tuple = ()
    header: bool = False
    arrays: tuple = ()
    x_key: str | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) as stored."""
        return self.values.shape[0], len(self.columns)

    # .................................................................. what the file holds
    # (each computed once per parse: the Data page asks again at every rerun)
    @cached_property
    def _numeric_set(self) -> frozenset:
        return frozenset(self.numeric.tolist())

    @cached_property
    def _text_only(self) -> list[int]:
        """Columns with text and no number (identifiers, text labels, descriptions)."""
        return [j for j in sorted(self.strings) if j not in self._numeric_set]

    @cached_property
    def _id_column(self) -> int | None:
        """The first text-only column whose values are all present and distinct (row names)."""
        for j in self._text_only:
            cells = self.strings[j]
            if all(c is not None for c in cells) and len(set(cells)) == len(cells):
                return j
        return None

    @cached_property
    def _text_rows(self) -> np.ndarray:
        """Rows with a text cell in a numeric column: annotation rows of a features x samples table."""
        rows = np.zeros(self.shape[0], dtype=bool)
        for j in self.numeric.tolist():
            if j in self.strings:
                column = self.strings[j]
                rows |= np.array([c is not None for c in column]) & np.isnan(self.values[:, self._position(j)])
        return rows

    def _position(self, column: int) -> int | None:
        """Where column ``column`` sits in ``values``, or None when it holds no number."""
        return int(np.searchsorted(self.numeric, column)) if column in self._numeric_set else None

    def guess_orientation(self) -> tuple[str, str]:
        """``(orientation, reason)``: which way the samples run, and why that is the guess.

        A table is read as features x samples ("samples_as_columns") when it has an identifier
        column and either a row holding text across most numeric columns (a class row: labels
        of samples that run along it), or identifiers that look like gene or probe names, at
        least three times as many rows as numeric columns and no other text column of few
        values (which would be class labels of samples in rows). Otherwise rows are samples, as
        in scikit-learn. Arrays (NPY/NPZ/MAT) and AnnData are read as samples in rows.
        """
        return self._guess

    @cached_property
    def _guess(self) -> tuple[str, str]:
        rows, _ = self.shape
        n_numeric = len(self.numeric)
        if self.format in ("h5ad", "npy", "npz", "mat") or n_numeric == 0:
            what = {"h5ad": "AnnData stores samples (cells) as rows (obs)"}.get(
                self.format, "arrays carry no names to judge by")
            return "samples_as_rows", (f"read as {rows:,} samples (rows) of {n_numeric:,} features: {what}. "
                                       "Choose samples as columns if your file has them the other way.")
        id_column = self._id_column
        if id_column is not None:
            # a row with text across most numeric columns is a label row: samples run along it
            mixed = [j for j in self.numeric.tolist() if j in self.strings]
            if len(mixed) >= max(2, 0.5 * n_numeric):
                counts = Counter(i for j in mixed for i in np.flatnonzero(
                    np.array([c is not None for c in self.strings[j]])).tolist())
                label_rows = [self.strings[id_column][i] for i, n in counts.items() if n >= 0.5 * n_numeric]
                if label_rows:
                    return "samples_as_columns", (
                        f"row(s) {_listed(label_rows, 3)} hold text across the numeric columns, like class labels "
                        f"of samples in columns: read as {n_numeric:,} samples (columns) of "
                        f"{rows - len(label_rows):,} features (rows).")
        class_like = [j for j in self._text_only if j != id_column
                      and len({c for c in self.strings[j] if c is not None}) <= max(20, rows // 10)]
        if id_column is not None and rows >= 3 * n_numeric and not class_like:
            ids = [c for c in self.strings[id_column][:200]]
            gene_like = np.mean([bool(_GENE_LIKE.match(c)) for c in ids])
            if gene_like >= 0.5:
                examples = ", ".join(repr(c) for c in ids[:3])
                return "samples_as_columns", (
                    f"{rows:,} rows x {n_numeric:,} numeric columns with gene-like row IDs ({examples}, ...): "
                    f"read as {n_numeric:,} samples (columns) of {rows:,} features (rows).")
        return "samples_as_rows", (f"read as {rows:,} samples (rows) of {n_numeric:,} numeric columns. Choose "
                                   "samples as columns if your table has genes (features) as rows.")

    def resolve(self, orientation: str) -> str:
        if orientation not in ORIENTATIONS:
            raise InputError(f"orientation must be one of {', '.join(ORIENTATIONS)}; got {orientation!r}.")
        return self.guess_orientation()[0] if orientation == "auto" else orientation

    def label_choices(self, orientation: str = "auto") -> list[str]:
        """What can hold the labels: columns (samples as rows), the IDs of annotation rows
        (samples as columns), ``obs`` columns (AnnData) or other arrays (NPZ/MAT)."""
        orientation = self.resolve(orientation)
        if self.format in ("h5ad", "npz", "mat"):
            return list(self.annotations)
        if self.format == "npy":
            return [] if orientation == "samples_as_columns" else list(self.columns)
        if orientation == "samples_as_rows":
            return list(self.columns)
        names, text_rows = self._row_ids, self._text_rows
        return [names[i] for i in np.flatnonzero(text_rows)] + [
            name for i, name in enumerate(names) if not text_rows[i] and name.lower() in LABEL_WORDS]

    def suggested_label(self, orientation: str = "auto") -> str | None:
        """A choice named like a label ("label", "class", "cell_type", ...), if there is one."""
        choices = self.label_choices(orientation)
        by_name = {str(c).lower(): c for c in choices}
        for word in LABEL_WORDS:
            if word in by_name:
                return by_name[word]
        if self.resolve(orientation) == "samples_as_columns" and choices:
            return choices[0]  # an annotation row of a features x samples table
        return None

    @cached_property
    def _row_ids(self) -> list[str]:
        id_column = self._id_column
        if id_column is None:
            return [f"row {i}" for i in range(self.shape[0])]
        return [str(c) for c in self.strings[id_column]]

    def preview(self, rows: int = 8, columns: int = 12):
        """The first rows and columns as read, every cell as text (a pandas DataFrame, for display:
        a column may mix numbers and text, as a label row does)."""
        shown = {}
        for j in range(min(columns, len(self.columns))):
            shown[self.columns[j]] = ["" if c is None else (f"{c:.6g}" if isinstance(c, float) else str(c))
                                      for c in self._column_cells(j, rows)]
        frame = pd.DataFrame(shown)
        if self.row_names is not None:
            frame.index = list(self.row_names[:rows])
        return frame

    # .................................................................. layout
    def arrange(self, *, label_column=None, orientation: str = "auto") -> "Arrangement":
        """Apply the layout choices: samples and features, labels, names.

        Parameters
        ----------
        label_column : str or int, optional
            Samples as rows: a column name or index. Samples as columns: the ID of a row (e.g.
            ``"class"``) or ``"row i"``. AnnData: an ``obs`` column. NPZ/MAT: another array.
        orientation : {"auto", "samples_as_rows", "samples_as_columns"}
            (An NPZ/MAT file's data array is chosen when it is read: ``read_table(x_key=)``.)

        The last arrangement is kept: asked again with the same choices (every rerun of a page
        that shows its counts) it is returned as it is, without copying the matrix again.
        """
        key = (label_column, orientation)
        if key not in self._last_arrangement:
            self._last_arrangement.clear()
            self._last_arrangement[key] = self._arrange(label_column, orientation)
        return self._last_arrangement[key]

    @cached_property
    def _last_arrangement(self) -> dict:
        return {}

    def _arrange(self, label_column, orientation) -> "Arrangement":
        _, reason = self.guess_orientation()
        chosen = self.resolve(orientation)
        notes = list(self.notes)
        notes.append(f"Orientation guessed: {reason}" if orientation == "auto" else
                     f"Orientation chosen: {'samples as rows' if chosen == 'samples_as_rows' else 'samples as columns'}.")
        if self.format in ("h5ad", "npz", "mat"):
            return self._arrange_arrays(label_column, chosen, notes)
        if chosen == "samples_as_rows":
            return self._arrange_rows(label_column, notes)
        return self._arrange_columns(label_column, notes)

    def _refuse_duplicates(self, what: str) -> None:
        counts = Counter(self.columns)
        duplicates = [name for name, n in counts.items() if n > 1]
        if duplicates and self.header:
            raise InputError(f"{self.filename}: the header repeats the {what} name(s) {_listed(duplicates)}; "
                             f"every {what} needs a distinct name. Rename them in the file and upload it again.")

    def _check_not_boolean_or_complex(self, columns, orientation_word: str) -> None:
        for j in columns:
            cells = {str(c).strip().lower() for c in self.strings[j][:1000] if c is not None}
            if cells and cells <= _BOOLEAN_TEXT:
                raise InputError(f"{self.filename}: {orientation_word} {self.columns[j]!r} holds true/false text, "
                                 "which is not a measurement. Encode it as 0/1 in the file, or choose it as the "
                                 "label column.")
            if cells and all(_DATE.match(c) for c in list(cells)[:50]):
                raise InputError(f"{self.filename}: {orientation_word} {self.columns[j]!r} holds dates or times, "
                                 "which are not measurements. Remove it, or store a number derived from it (e.g. "
                                 "days since an event), or choose it as the label column.")
            if cells and all(_COMPLEX.match(c) for c in list(cells)[:50]):
                raise InputError(f"{self.filename}: {orientation_word} {self.columns[j]!r} holds complex numbers "
                                 f"(e.g. {sorted(cells)[0]!r}); feature selection needs real values. Store the "
                                 "magnitude, or the real and imaginary parts as two columns.")

    def _column_cells(self, j: int, rows: int | None = None) -> np.ndarray:
        """Column ``j`` (its first ``rows``) as an object array: text where there is text, else the
        number, else None."""
        n = self.shape[0] if rows is None else min(rows, self.shape[0])
        cells = self.strings[j][:n].copy() if j in self.strings else np.full(n, None, dtype=object)
        position = self._position(j)
        if position is not None:
            numbers = self.values[:n, position]
            fill = np.array([c is None for c in cells], dtype=bool) & ~np.isnan(numbers)
            cells[fill] = numbers[fill]
        return cells

    def _cell(self, i: int, j: int):
        if j in self.strings and self.strings[j][i] is not None:
            return self.strings[j][i]
        position = self._position(j)
        if position is not None:
            value = self.values[i, position]
            return None if np.isnan(value) else float(value)
        return None

    def _arrange_rows(self, label_column, notes) -> "Arrangement":
        self._refuse_duplicates("column")
        label_index = None
        if label_column is not None:
            if isinstance(label_column, (int, np.integer)) and not isinstance(label_column, bool):
                if not 0 <= label_column < len(self.columns):
                    raise InputError(f"{self.filename}: there is no column {label_column} "
                                     f"(columns 0 to {len(self.columns) - 1}).")
                label_index = int(label_column)
            elif label_column in self.columns:
                label_index = self.columns.index(label_column)
            else:
                raise InputError(f"{self.filename}: there is no column {label_column!r}; the columns are "
                                 f"{_listed(self.columns, 30)}.")
        labels = self._column_cells(label_index) if label_index is not None else None
        id_column = self._id_column
        sample_names = None
        if id_column is not None and id_column != label_index:
            sample_names = [str(c) for c in self.strings[id_column]]
            notes.append(f"Column {self.columns[id_column]!r} gives the sample names.")
        text = [j for j in sorted(self.strings) if j not in (label_index, id_column)]
        self._check_not_boolean_or_complex([j for j in self._text_only if j != label_index], "column")
        if text:
            notes.append(f"Dropped {_plural(len(text), 'column')} holding text: {_listed(self.columns[j] for j in text)} "
                         "(choose one as the label column if it holds the classes).")
        features = np.array([j for j in self.numeric.tolist() if j not in self.strings and j != label_index], dtype=int)
        if len(features) == len(self.numeric):
            X = self.values
        else:
            X = self.values[:, np.searchsorted(self.numeric, features)]
        return Arrangement(self.filename, X, labels, [self.columns[j] for j in features], sample_names,
                           notes, "samples_as_rows")

    def _arrange_columns(self, label_column, notes) -> "Arrangement":
        self._refuse_duplicates("sample")
        row_ids = self._row_ids
        id_column = self._id_column
        text_only = self._text_only
        if id_column is not None:
            notes.append(f"Column {self.columns[id_column]!r} gives the feature names.")
        dropped_columns = [j for j in text_only if j != id_column]
        if dropped_columns:
            notes.append(f"Dropped {_plural(len(dropped_columns), 'text column')}: "
                         f"{_listed(self.columns[j] for j in dropped_columns)}.")
        text_rows = self._text_rows
        label_row = None
        if label_column is not None:
            key = str(label_column)
            if key not in row_ids:
                raise InputError(f"{self.filename}: there is no row {key!r} to take the labels from; rows with "
                                 f"text are {_listed(row_ids[i] for i in np.flatnonzero(text_rows)) or 'none'}.")
            label_row = row_ids.index(key)
        samples = self.numeric  # every column with a number is a sample
        labels = None
        if label_row is not None:
            labels = np.array([self._cell(label_row, j) for j in samples.tolist()], dtype=object)
        drop_rows = text_rows.copy()
        if label_row is not None:
            drop_rows[label_row] = True
        other = [row_ids[i] for i in np.flatnonzero(text_rows) if i != label_row]
        if other:
            notes.append(f"Dropped {_plural(len(other), 'row')} holding text: {_listed(other)}.")
        keep = np.flatnonzero(~drop_rows)
        X = np.ascontiguousarray(self.values[keep].T) if len(keep) < len(drop_rows) else np.ascontiguousarray(self.values.T)
        feature_names = [row_ids[i] for i in keep] if id_column is not None else None
        return Arrangement(self.filename, X, labels, feature_names, [self.columns[j] for j in samples.tolist()],
                           notes, "samples_as_columns")

    def _arrange_arrays(self, label_column, orientation, notes) -> "Arrangement":
        X = self.values if orientation == "samples_as_rows" else np.ascontiguousarray(self.values.T)
        labels = None
        if label_column is not None:
            if label_column not in self.annotations:
                raise InputError(f"{self.filename}: no label array or column {label_column!r}; it has "
                                 f"{_listed(self.annotations) or 'none'}.")
            labels = np.asarray(self.annotations[label_column], dtype=object).ravel()
            if orientation == "samples_as_columns" and self.format == "h5ad":
                raise InputError(f"{self.filename}: obs columns label the rows of an AnnData file; keep "
                                 "samples as rows to use them.")
        feature_names = list(self.columns) if self.format == "h5ad" else None
        sample_names = list(self.row_names) if self.row_names is not None else None
        if orientation == "samples_as_columns":
            feature_names, sample_names = sample_names, feature_names
        return Arrangement(self.filename, X, labels, feature_names, sample_names, notes, orientation)


@dataclass(eq=False)
class Arrangement:
    """A table laid out as samples x features, before missing values are dealt with.

    ``X`` may hold NaN (missing); ``labels`` is an object array (None where missing) or None.
    """

    filename: str
    X: np.ndarray
    labels: np.ndarray | None
    feature_names: list | None
    sample_names: list | None
    notes: list
    orientation: str

    @cached_property
    def missing_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Missing values per feature and per sample."""
        missing = np.isnan(self.X)
        return missing.sum(axis=0), missing.sum(axis=1)


# ---------------------------------------------------------------------------- labels and missing values
def _label_values(cells: np.ndarray, filename: str) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, missing)``: text labels as str, whole numbers as int64; non-integer numbers
    and numbers beyond int64 are refused (they are measurements, not classes)."""
    missing = np.array([c is None or (isinstance(c, float) and np.isnan(c))
                        or (isinstance(c, str) and c.strip() in NA_TOKENS) for c in cells], dtype=bool)
    present = [c for c, m in zip(cells, missing) if not m]
    numbers = []
    for c in present:
        try:
            numbers.append(float(c))
        except (TypeError, ValueError):
            numbers = None
            break
    if numbers is None or not present:
        return np.array(["" if m else str(c).strip() for c, m in zip(cells, missing)]), missing
    numbers = as_labels(np.array(numbers), len(numbers), f"{filename}: the label column")
    if np.abs(numbers).max() >= 2**63:
        raise InputError(f"{filename}: the label column holds whole numbers beyond the 64-bit range "
                         f"(e.g. {numbers[np.argmax(np.abs(numbers))]:.6g}); store them as text (a class name).")
    out = np.zeros(len(cells), dtype=np.int64)
    out[~missing] = numbers.astype(np.int64)
    return out, missing


def finish(arrangement: Arrangement, missing: str = "refuse", *, name: str | None = None) -> Dataset:
    """Deal with missing values and labels, then build the data set.

    Parameters
    ----------
    missing : {"refuse", "drop_samples", "drop_features", "mean", "median"}
        What to do with missing values: refuse the table (saying where they are); drop every
        sample or every feature that has one; or impute each feature's mean or median over its
        present values (scikit-learn's ``SimpleImputer``; a feature with no value at all is
        dropped). Samples with a missing label are dropped under ``"drop_samples"`` and refused
        otherwise.
    """
    if missing not in MISSING_POLICIES:
        raise InputError(f"missing must be one of {', '.join(MISSING_POLICIES)}; got {missing!r}.")
    filename, X, notes = arrangement.filename, arrangement.X, list(arrangement.notes)
    feature_names, sample_names = arrangement.feature_names, arrangement.sample_names
    labels = None
    if arrangement.labels is not None:
        labels, label_missing = _label_values(arrangement.labels, filename)
        if label_missing.all():
            raise InputError(f"{filename}: the label column is empty. Choose another label column, or none.")
        if label_missing.any():
            rows = np.flatnonzero(label_missing)
            if missing != "drop_samples":
                raise InputError(f"{filename}: {_plural(len(rows), 'sample')} have no label (the first: sample "
                                 f"{rows[0] + 1}). Choose 'drop samples' for missing values to leave them out, "
                                 "or another label column.")
            keep = ~label_missing
            X, labels = X[keep], labels[keep]
            sample_names = [s for s, k in zip(sample_names, keep) if k] if sample_names else None
            notes.append(f"Dropped {_plural(len(rows), 'sample')} without a label.")
    infinite = np.isinf(X)
    if infinite.any():
        row, column = np.argwhere(infinite)[0]
        where = feature_names[column] if feature_names else f"feature {column}"
        raise InputError(f"{filename} has {int(infinite.sum()):,} infinite value(s), the first in sample {row + 1}, "
                         f"{where!r}. Replace them with numbers (or leave the cells empty to treat them as missing).")
    absent = np.isnan(X)
    n_missing = int(absent.sum())
    summary = {"policy": missing, "missing_values": n_missing}
    if n_missing:
        per_feature, per_sample = absent.sum(axis=0), absent.sum(axis=1)
        features_hit, samples_hit = int((per_feature > 0).sum()), int((per_sample > 0).sum())
        found = (f"{_plural(n_missing, 'missing value')} in {_plural(features_hit, 'feature')} and "
                 f"{_plural(samples_hit, 'sample')}")
        if missing == "refuse":
            row, column = np.argwhere(absent)[0]
            where = feature_names[column] if feature_names else f"feature {column}"
            raise InputError(f"{filename} has {found} (the first in sample {row + 1}, {where!r}). Choose what to "
                             "do with them: drop samples, drop features, or impute the mean or median.")
        if missing == "drop_samples":
            keep = per_sample == 0
            if keep.sum() < 2:
                raise InputError(f"{filename}: dropping the samples with missing values would leave "
                                 f"{_plural(int(keep.sum()), 'sample')} ({found}); impute them instead.")
            X = X[keep]
            labels = labels[keep] if labels is not None else None
            sample_names = [s for s, k in zip(sample_names, keep) if k] if sample_names else None
            notes.append(f"Dropped {_plural(samples_hit, 'sample')} with missing values ({found}).")
        elif missing == "drop_features":
            keep = per_feature == 0
            if keep.sum() < 2:
                raise InputError(f"{filename}: every feature but {int(keep.sum())} has missing values ({found}), so "
                                 "dropping them leaves nothing to select from. Impute them instead, or drop samples.")
            X = X[:, keep]
            feature_names = [f for f, k in zip(feature_names, keep) if k] if feature_names else None
            notes.append(f"Dropped {_plural(features_hit, 'feature')} with missing values ({found}).")
        else:
            from sklearn.impute import SimpleImputer

            empty = per_feature == X.shape[0]
            if empty.any():  # nothing to impute from: dropped (and said) rather than left to warn
                X = X[:, ~empty]
            X = SimpleImputer(strategy=missing).fit_transform(X)
            if empty.any():
                feature_names = [f for f, e in zip(feature_names, empty) if not e] if feature_names else None
                notes.append(f"Dropped {_plural(int(empty.sum()), 'feature')} with no value at all.")
            imputed = n_missing - int(per_feature[empty].sum())
            notes.append(f"Imputed {_plural(imputed, 'value')} in {_plural(features_hit - int(empty.sum()), 'feature')} "
                         f"with the column {missing}.")
            summary["imputed"] = imputed
    n_samples, n_features = X.shape
    if n_samples < 2:
        raise InputError(f"{filename} has {n_samples} sample(s); feature selection needs at least two.")
    if n_features < 2:
        raise InputError(f"{filename} has {n_features} feature(s); feature selection needs at least "
                         "two (is the label column the only numeric one?).")
    feature_names = _unique_names(feature_names, "feature", notes)
    sample_names = _unique_names(sample_names, "sample", notes)
    meta = {"load_report": notes, "table": dict(summary, orientation=arrangement.orientation)}
    return Dataset(X, labels=labels, feature_names_=feature_names, sample_names_=sample_names,
                   name=name or filename, kind="table", source=f"uploaded: {filename}", meta=meta)


def _unique_names(names, what: str, notes: list):
    """Repeated names (a gene measured by two probes) made distinct as ``name (2)``."""
    if names is None:
        return None
    counts = Counter(names)
    if len(counts) == len(names):
        return names
    seen: Counter = Counter()
    unique = []
    for n in names:
        seen[n] += 1
        unique.append(n if counts[n] == 1 or seen[n] == 1 else f"{n} ({seen[n]})")
    repeated = [n for n, c in counts.items() if c > 1]
    notes.append(f"{_plural(len(repeated), what + ' name')} repeated ({_listed(repeated, 5)}); later copies are "
                 "named 'name (2)', 'name (3)', ...")
    return unique


# ---------------------------------------------------------------------------- reading bytes
def _unwrap(filename: str, data: bytes, limits: LoadLimits) -> tuple[str, bytes, list[str]]:
    """Undo compression or a ZIP around one table: ``(inner filename, bytes, notes)``."""
    notes = []
    lower = filename.lower()
    found = compression_of(data)
    for kind, (extension, _) in COMPRESSIONS.items():
        if lower.endswith(extension) or found == kind:
            if found != kind:
                raise InputError(f"{filename} is not a {kind} file (its first bytes are not {kind}'s); rename it "
                                 f"without {extension}, or compress it with {kind} again.")
            data = decompress(filename, data, kind, limits)
            inner = filename[: -len(extension)] if lower.endswith(extension) else filename
            notes.append(f"Decompressed {kind}: {format_bytes(len(data))}.")
            return inner, data, notes
    if lower.endswith(".zip") or data.startswith(b"PK\x03\x04"):
        if lower.endswith((".npz",)):
            return filename, data, notes
        with open_zip(filename, data) as archive:
            members = user_files(archive)
            tables = [(path, info) for path, info in members if is_table_file(path)]
            if not tables:
                raise InputError(f"{filename} holds no table ({_listed(path for path, _ in members) or 'nothing'}); "
                                 f"put one CSV/TSV/Parquet/H5AD/NPY/NPZ/MAT file in the ZIP.")
            if len(tables) > 1:
                raise InputError(f"{filename} holds {len(tables)} tables ({_listed(path for path, _ in tables)}); a ZIP "
                                 "must hold exactly one. Upload them one at a time.")
            _, info = tables[0]
            check_budget(info.file_size, f"{info.filename} in {filename}", limits)
            try:
                inner = archive.read(info)
            except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
                raise InputError(f"{filename}: {info.filename} cannot be read ({exc}); zip it again.") from None
        notes.append(f"Read {info.filename} from the ZIP archive.")
        inner_name, inner, more = _unwrap(posixpath.basename(info.filename), inner, limits)
        return inner_name, inner, notes + more
    return filename, data, notes


def is_table_file(filename: str) -> bool:
    """Whether the name is one of a table this module reads, compressed or not (``t.csv.gz``)."""
    lower = filename.lower()
    for extension in COMPRESSED_EXTENSIONS:
        if lower.endswith(extension):
            lower = lower[: -len(extension)]
            break
    return posixpath.splitext(lower)[1] in TABLE_EXTENSIONS


def read_table(filename: str, data: bytes, *, header: bool | None = None, x_key: str | None = None,
               limits: LoadLimits = LoadLimits()) -> ParsedTable:
    """Parse a table's bytes once; the layout is chosen afterwards (:meth:`ParsedTable.arrange`).

    Parameters
    ----------
    filename : str
        Its extension names the format: CSV/TSV/TXT/TAB (delimiter and header detected on the
        first lines only), Parquet (``.parquet``/``.pq``), AnnData (``.h5ad``), NPY, NPZ, MAT; any
        of them may be compressed (``.gz``, ``.bz2``, ``.xz``) or be the one table in a ``.zip``.
    data : bytes
    header : bool, optional
        Delimited text: whether the first row holds column names (default: detected).
    x_key : str, optional
        NPZ/MAT: the array holding the data (default ``X``, or the only 2-D array).
    limits : LoadLimits
        The per-upload budget, checked before anything large is decompressed or allocated.
    """
    if not data:
        raise InputError(f"{filename} is empty (0 bytes). Choose the file again.")
    inner, data, notes = _unwrap(filename, data, limits)
    extension = posixpath.splitext(inner.lower())[1]
    if extension not in TABLE_EXTENSIONS:
        raise InputError(f"{filename}: unsupported file type {extension or '(none)'}; use CSV, TSV, TXT, Parquet, "
                         "H5AD, NPY, NPZ or MAT (optionally .gz, .bz2, .xz or in a .zip).")
    if not data:
        raise InputError(f"{filename} holds an empty table (0 bytes).")
    if extension in TEXT_EXTENSIONS:
        return _read_text(filename, data, extension, header, notes, limits)
    if extension in (".parquet", ".pq"):
        return _read_parquet(filename, data, notes, limits)
    if extension == ".h5ad":
        return _read_h5ad(filename, data, notes, limits)
    return _read_arrays(filename, data, extension, x_key, notes, limits)


# .................................................................. delimited text
def _encoding(head: bytes) -> str:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not merely a character cut at the end of the prefix
            return "latin-1"
    return "utf-8-sig" if head.startswith(b"\xef\xbb\xbf") else "utf-8"


def _head_lines(data: bytes, encoding: str) -> tuple[list[str], list[bool]]:
    """The first non-blank lines, each cut to a bounded length (the whole file is never
    scanned), and whether each was cut."""
    lines, cut, start = [], [], 0
    while len(lines) < HEAD_LINES and start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line = data[start:min(end, start + HEAD_LINE_CHARS)].decode(encoding, errors="replace").rstrip("\r")
        if line.strip():
            lines.append(line.lstrip("\ufeff"))
            cut.append(end - start > HEAD_LINE_CHARS)
        start = end + 1
    return lines, cut


def _delimiter(lines: list[str], cut: list[bool], extension: str) -> str | None:
    """The delimiter: tab for .tsv, else the candidate most frequent in the first line that every
    following complete head line also has; None for whitespace-separated values."""
    if extension in (".tsv", ".tab"):
        return "\t"
    counts = {d: lines[0].count(d) for d in (",", "\t", ";", "|")}
    others = [line for line, was_cut in zip(lines[1:], cut[1:]) if not was_cut]
    candidates = [d for d, n in counts.items() if n > 0 and all(d in line for line in others)]
    return max(candidates, key=counts.get) if candidates else None


def _split(line: str, delimiter: str | None) -> list[str]:
    return [c.strip().strip('"') for c in (line.split(delimiter) if delimiter else line.split())]


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _has_header(lines: list[str], delimiter: str | None) -> bool:
    """A header when every cell of the first row is text, or some column has text above a number."""
    first = _split(lines[0], delimiter)[:1000]
    if len(lines) < 2:
        return not any(_is_number(c) for c in first)
    second = _split(lines[1], delimiter)[:1000]
    text = [not _is_number(c) and c not in NA_TOKENS for c in first]
    return all(text) or any(t and _is_number(s) for t, s in zip(text, second))


def _read_text(filename, data, extension, header, notes, limits) -> ParsedTable:
    encoding = _encoding(data[:HEAD_LINE_CHARS])
    lines, cut = _head_lines(data, encoding)
    if not lines:
        raise InputError(f"{filename} has no rows.")
    delimiter = _delimiter(lines, cut, extension)
    has_header = _has_header(lines, delimiter) if header is None else bool(header)
    first_end = data.find(b"\n")
    first_end = len(data) if first_end < 0 else first_end
    # the first line alone (counted in C, never the whole file) gives the width
    width = (data.count(delimiter.encode(encoding.replace("-sig", "")), 0, first_end) + 1 if delimiter
             else len(lines[0].split()))
    estimated_rows = len(data) / (first_end + 1)
    # the matrix has at most one float64 per delimiter-separated cell: 8 bytes for each 2 bytes of text
    check_budget(min(4 * len(data), 8 * width * estimated_rows), f"{filename} (as a float64 matrix)", limits)
    described = {",": "comma", "\t": "tab", ";": "semicolon", "|": "bar", None: "whitespace"}[delimiter]
    notes.append(f"Read as {described}-separated text{' with a header row' if has_header else ' without a header'}"
                 f"{'' if encoding.startswith('utf-8') else f' ({encoding})'}.")
    quoted = any('"' in line for line in lines)
    if width >= WIDE_COLUMNS and estimated_rows * WIDE_RATIO <= width and not quoted:
        columns, values, numeric, strings = _read_wide(filename, data, encoding, delimiter, has_header)
    else:
        columns, values, numeric, strings = _read_with_pandas(filename, data, encoding, delimiter, has_header,
                                                              None if quoted else lines)
    return ParsedTable(filename, "text", tuple(columns), values, numeric, strings, notes=tuple(notes),
                       header=has_header)


def _pandas_error(filename: str, exc: Exception) -> InputError:
    message = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
    match = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", message)
    if match:
        expected, line, saw = match.groups()
        return InputError(f"{filename}: line {line} has {saw} cells but the lines before it have {expected}. Every "
                          "row needs the same number of columns (quote cells that contain the delimiter).")
    return InputError(f"{filename} could not be read as a table ({message}). Check that it is delimited text "
                      "with one row per line.")


def _header_names(filename, data, encoding, delimiter) -> list[str]:
    """The names in the first line as written (pandas would rename repeated ones): the standard
    library's CSV reader, on that one line only."""
    import csv

    end = data.find(b"\n")
    line = data[: len(data) if end < 0 else end].decode(encoding, errors="replace").rstrip("\r").lstrip("\ufeff")
    if delimiter is None:
        return line.split()
    try:
        return [name.strip() for name in next(csv.reader([line], delimiter=delimiter))]
    except csv.Error as exc:
        raise InputError(f"{filename}: the header line cannot be read ({exc}).") from None


def _read_with_pandas(filename, data, encoding, delimiter, has_header, head_lines):
    """pandas' C reader. Columns that hold text in the head lines are read as the index, so the
    frame that remains is one float block whose transpose is the matrix (no copy)."""
    names = _header_names(filename, data, encoding, delimiter) if has_header else None
    text_columns = []
    if head_lines is not None:
        # a column whose head cells are all text (an ID or a text label column); one text cell
        # among numbers (a class row of a features x samples table) leaves the column numeric
        rows = [_split(line, delimiter) for line in head_lines[1 if has_header else 0:]]
        kinds: dict[int, set] = {}
        for row in rows:
            for j, c in enumerate(row):
                if c not in NA_TOKENS:
                    kinds.setdefault(j, set()).add(_is_number(c))
        text_columns = sorted(j for j, found in kinds.items() if found == {False})
    options = dict(sep=delimiter if delimiter else r"\s+", encoding=encoding, na_values=["?"],
                   keep_default_na=True, skipinitialspace=True, engine="c", header=None,
                   skiprows=1 if has_header else 0, skip_blank_lines=True)
    try:
        try:
            frame = pd.read_csv(io.BytesIO(data), index_col=text_columns or None,
                                dtype={j: str for j in text_columns} or None, **options)
        except (IndexError, ValueError):
            if not text_columns:
                raise
            frame = pd.read_csv(io.BytesIO(data), **options)  # the head misled the guess
            text_columns = []
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, UnicodeDecodeError, OverflowError,
            MemoryError) as exc:
        if isinstance(exc, MemoryError):
            raise InputError(f"{filename} does not fit in memory; upload a subset.") from None
        raise _pandas_error(filename, exc) from None
    width = frame.shape[1] + len(text_columns)
    if names is not None and len(names) > width and not any(names[width:]):
        names = names[:width]  # empty names after the last column (a trailing delimiter)
    if names is not None and len(names) != width:
        raise InputError(f"{filename}: the header names {len(names)} columns but the rows have {width} cells. "
                         "Every row needs the same number of columns.")
    columns = names if names is not None else [f"column {j}" for j in range(width)]
    strings = {}
    for level, j in enumerate(text_columns):
        index = frame.index.get_level_values(level) if len(text_columns) > 1 else frame.index
        present = index.notna()
        strings[j] = np.where(present, index.astype(str).to_numpy(dtype=object), None)
    positions = [int(c) for c in frame.columns]
    values, numeric, more = _grid_from_frame(frame, positions)
    strings.update(more)
    return columns, values, numeric, strings


def _grid_from_frame(frame, positions):
    """``(values, numeric, strings)`` of a DataFrame whose column k is the table's column
    ``positions[k]`` (increasing). A frame of one float block gives its matrix without a copy."""

    dtypes = list(frame.dtypes)
    is_number = np.array([pandas_types.is_numeric_dtype(dt) and not pandas_types.is_bool_dtype(dt) for dt in dtypes], dtype=bool)
    strings, coerced_columns = {}, {}
    for k in np.flatnonzero(~is_number).tolist():
        column = frame.iloc[:, k]
        present = column.notna().to_numpy()
        cells = np.where(present, column.astype(str).to_numpy(dtype=object), None)
        if pandas_types.is_bool_dtype(dtypes[k]) or pandas_types.is_datetime64_any_dtype(dtypes[k]) or \
                pandas_types.is_timedelta64_dtype(dtypes[k]):
            strings[positions[k]] = cells  # not measurements (to_numeric would count nanoseconds)
            continue
        coerced = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        text = present & np.isnan(coerced)
        if text.any():
            strings[positions[k]] = np.where(text, cells, None)
        if (~np.isnan(coerced)).any():
            coerced_columns[k] = coerced
    local = sorted(np.flatnonzero(is_number).tolist() + list(coerced_columns))
    numeric = np.array([positions[k] for k in local], dtype=int)
    if len(local) == frame.shape[1] and not coerced_columns:
        values = frame.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        values = np.empty((frame.shape[0], len(local)), order="F")
        plain = [k for k in local if k not in coerced_columns]
        if plain:
            values[:, np.searchsorted(local, plain)] = frame.iloc[:, plain].to_numpy(dtype=np.float64, na_value=np.nan)
        for k, coerced in coerced_columns.items():
            values[:, local.index(k)] = coerced
    return values, numeric, strings


def _read_wide(filename, data, encoding, delimiter, has_header):
    """A very wide, short table (a few samples of 10^5 features), read one line at a time: NumPy
    converts a line's cells, pandas' ``to_numeric`` those lines that hold text or missing cells.
    pandas' reader spends its time per column there: 2.3-2.8 s for 2 x 200,000, this 0.3 s
    (``benchmarks/bench_load.py``)."""
    columns = _header_names(filename, data, encoding, delimiter) if has_header else None
    # one line at a time into a matrix sized by the line count (counted in C): the text is never
    # held twice, and no list of rows is stacked at the end
    capacity = data.count(b"\n") + 1
    lines = (line for line in io.TextIOWrapper(io.BytesIO(data), encoding=encoding, newline=None) if line.strip())
    if has_header:
        next(lines, None)
    width = len(columns) if columns is not None else None
    values, n_rows, text_cells, lead = None, 0, {}, None
    for i, line in enumerate(lines):
        cells = line.rstrip("\n").split(delimiter) if delimiter else line.split()
        if width is None:
            width = len(cells)
        if lead is None:  # leading text cells (row IDs) of the first line: kept as text, not in the matrix
            lead = 0
            while lead < len(cells) - 1 and not _is_number(cells[lead]) and cells[lead].strip() not in NA_TOKENS:
                lead += 1
            values = np.empty((capacity, width - lead))
        if len(cells) != width:
            raise InputError(f"{filename}: row {i + 1 + has_header} has {len(cells):,} cells but the "
                             f"{'header' if has_header else 'first row'} has {width:,}. Every row needs the same "
                             "number of columns.")
        for j in range(lead):
            text_cells[(i, j)] = cells[j].strip().strip('"')
        try:
            values[i] = np.array(cells[lead:], dtype=np.float64)
        except ValueError:
            stripped = [c.strip() for c in cells[lead:]]
            values[i] = pd.to_numeric(pd.Series(stripped, dtype=object), errors="coerce").to_numpy(
                dtype=np.float64, na_value=np.nan)
            for j in np.flatnonzero(np.isnan(values[i])).tolist():
                if stripped[j] not in NA_TOKENS:
                    text_cells[(i, lead + j)] = stripped[j].strip('"')
        n_rows = i + 1
    lead = lead or 0
    values = values[:n_rows] if values is not None else np.empty((0, max((width or 0) - lead, 0)))
    columns = columns if columns is not None else [f"column {j}" for j in range(lead + values.shape[1])]
    strings = {}
    for (i, j), cell in text_cells.items():
        strings.setdefault(j, np.full(n_rows, None, dtype=object))[i] = cell
    # a column of text and no number (an ID column) lives in ``strings`` only
    text_only = [j for j in strings if j >= lead and np.isnan(values[:, j - lead]).all()]
    numeric = np.array([j for j in range(lead, lead + values.shape[1]) if j not in text_only], dtype=int)
    if text_only:
        values = values[:, numeric - lead]
    return columns, values, numeric, strings


# .................................................................. Parquet, AnnData, arrays
def _read_parquet(filename, data, notes, limits) -> ParsedTable:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(io.BytesIO(data))
    except (pa.ArrowInvalid, pa.ArrowException, OSError) as exc:
        raise InputError(f"{filename} is not a readable Parquet file ({exc}).") from None
    schema = parquet.schema_arrow
    nested = [f.name for f in schema if pa.types.is_nested(f.type)]
    if nested:
        raise InputError(f"{filename}: column(s) {_listed(nested)} are nested (lists, structs or maps); a table of "
                         "samples x features needs one value per cell. Flatten them, or write the file without them.")
    rows = parquet.metadata.num_rows
    check_budget(8 * rows * len(schema), f"{filename} (as a float64 matrix)", limits)
    try:
        frame = parquet.read().to_pandas()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"{filename} could not be read ({exc}).") from None
    if not (frame.index.dtype.kind == "i" and frame.index.equals(type(frame.index)(range(len(frame))))):
        frame = frame.reset_index()  # a stored index (gene or sample IDs) becomes a column
    columns = [str(c) for c in frame.columns]
    notes.append(f"Read as Parquet: {rows:,} rows x {len(columns):,} columns.")
    values, numeric, strings = _grid_from_frame(frame, list(range(len(columns))))
    return ParsedTable(filename, "parquet", tuple(columns), values, numeric, strings, notes=tuple(notes), header=True)


def _read_h5ad(filename, data, notes, limits) -> ParsedTable:
    import anndata
    import h5py

    try:
        store = h5py.File(io.BytesIO(data), "r")
    except (OSError, ValueError):
        raise InputError(f"{filename} is not a readable .h5ad (HDF5) file; write it with AnnData's write_h5ad.") from None
    with store:
        if "X" not in store or "obs" not in store or "var" not in store:
            raise InputError(f"{filename} is an HDF5 file but not an AnnData one (it lacks X, obs or var).")
        stored = store["X"]
        if isinstance(stored, h5py.Group):
            shape = tuple(int(s) for s in stored.attrs.get("shape", (0, 0)))
            kind = str(stored.attrs.get("encoding-type", "sparse"))
        else:
            shape, kind = tuple(stored.shape), "dense"
        if len(shape) != 2:
            raise InputError(f"{filename}: X is {len(shape)}-D; AnnData's X must be cells x genes.")
        check_budget(8 * shape[0] * shape[1], f"{filename} (X as a dense float64 matrix, {shape[0]:,} x {shape[1]:,})",
                     limits)
        try:
            X = anndata.io.read_elem(stored)
            obs = anndata.io.read_elem(store["obs"])
            var = anndata.io.read_elem(store["var"])
        except Exception as exc:  # anndata raises many kinds for damaged files; all mean the same here
            raise InputError(f"{filename}: AnnData could not read it ({type(exc).__name__}: {exc}).") from None
    if hasattr(X, "toarray"):
        X = X.toarray()
    X = _real_matrix(np.asarray(X), filename, "X")
    annotations = {}
    for column in obs.columns:
        series = obs[column]
        cells = series.astype(object).where(series.notna(), None).to_numpy(dtype=object)
        annotations[str(column)] = cells
    notes.append(f"Read AnnData: {shape[0]:,} cells x {shape[1]:,} genes ({kind} X); obs columns "
                 f"{_listed(obs.columns) or 'none'}.")
    return ParsedTable(filename, "h5ad", tuple(str(v) for v in var.index), X, np.arange(X.shape[1]),
                       row_names=tuple(str(o) for o in obs.index), annotations=annotations, notes=tuple(notes),
                       header=True)


def _real_matrix(values: np.ndarray, filename: str, what: str) -> np.ndarray:
    """A stored array as the float64 matrix of a table (NaN stays: it is a missing value)."""
    check_real_dtype(values.dtype, f"{filename}: {what}")
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2:
        raise InputError(f"{filename}: {what} must be 2-D (samples x features); it is {values.ndim}-D.")
    return np.ascontiguousarray(values, dtype=np.float64)


@contextmanager
def _numpy_file(filename: str, kind: str):
    """NumPy's errors while reading an NPY/NPZ file, as messages for the person who gave it."""
    try:
        yield
    except InputError:
        raise
    except ValueError as exc:
        if "Object arrays" in str(exc):
            raise InputError(f"{filename} holds Python objects (a pickled object array). For safety such files are "
                             "refused; save plain numeric arrays (numpy.save or numpy.savez).") from None
        raise InputError(f"{filename} is not a readable {kind} file: {exc}.") from None
    except (OSError, zipfile.BadZipFile, EOFError):
        raise InputError(f"{filename} is not a readable {kind} file (it may be truncated).") from None


def _npy_header_bytes(stream) -> int:
    """Bytes the array in an NPY stream would take, from its header alone."""
    version = np.lib.format.read_magic(stream)
    shape, _, dtype = (np.lib.format.read_array_header_1_0(stream) if version == (1, 0)
                       else np.lib.format.read_array_header_2_0(stream))
    return int(np.prod(shape, dtype=np.float64)) * max(dtype.itemsize, 8)


def _read_arrays(filename, data, extension, x_key, notes, limits) -> ParsedTable:
    if extension == ".npy":
        with _numpy_file(filename, "NPY"):
            check_budget(_npy_header_bytes(io.BytesIO(data)), f"{filename} (the array)", limits)
            X = np.load(io.BytesIO(data), allow_pickle=False)
        X = _real_matrix(X, filename, "the array")
        return ParsedTable(filename, "npy", tuple(f"column {j}" for j in range(X.shape[1])), X,
                           np.arange(X.shape[1]), notes=tuple(notes))
    arrays = _named_arrays(filename, data, extension, limits)
    if not arrays:
        raise InputError(f"{filename} holds no arrays.")
    if x_key is None:
        two_d = [k for k, v in arrays.items() if np.ndim(v) == 2 or hasattr(v, "toarray")]
        x_key = "X" if "X" in arrays else (two_d[0] if len(two_d) == 1 else (next(iter(arrays)) if len(arrays) == 1 else None))
    if x_key not in arrays:
        raise InputError(f"{filename}: no data array {x_key or 'X'!r}; it holds {', '.join(sorted(arrays))}. "
                         "Say which one holds the data.")
    names = tuple(sorted(arrays))
    matrix = arrays.pop(x_key)
    if hasattr(matrix, "toarray"):  # a sparse MATLAB matrix
        check_budget(8 * matrix.shape[0] * matrix.shape[1], f"{filename}: {x_key!r} as a dense matrix", limits)
        matrix = matrix.toarray()
    X = _real_matrix(matrix, filename, repr(x_key))
    annotations = {}
    for key, value in arrays.items():
        value = np.asarray(value)
        if value.dtype != object and value.size in X.shape and value.size == max(value.shape, default=0):
            annotations[key] = value.ravel().astype(object)
    notes.append(f"Data array {x_key!r}: {X.shape[0]:,} x {X.shape[1]:,}.")
    return ParsedTable(filename, extension.lstrip("."), tuple(f"column {j}" for j in range(X.shape[1])), X,
                       np.arange(X.shape[1]), annotations=annotations, notes=tuple(notes), arrays=names,
                       x_key=x_key)


def _named_arrays(filename: str, data: bytes, extension: str, limits: LoadLimits) -> dict:
    if extension == ".npz":
        with _numpy_file(filename, "NPZ"):
            with open_zip(filename, data) as archive:
                for info in archive.infolist():
                    with archive.open(info) as member:
                        check_budget(_npy_header_bytes(member), f"{filename}: {info.filename}", limits)
            with np.load(io.BytesIO(data), allow_pickle=False) as stored:
                return {key: stored[key] for key in stored.files}
    import scipy.io

    try:
        variables = scipy.io.whosmat(io.BytesIO(data))
        for variable, shape, kind in variables:
            dense = " as a dense matrix" if kind == "sparse" else ""
            check_budget(8 * float(np.prod(shape, dtype=np.float64)), f"{filename}: {variable!r}{dense}", limits)
        contents = scipy.io.loadmat(io.BytesIO(data))
    except InputError:
        raise
    except (ValueError, TypeError, OSError, NotImplementedError) as exc:
        raise InputError(f"{filename} is not a readable MATLAB file ({exc}). Version 7.3 (HDF5) files are not "
                         "supported: save with -v7.") from None
    return {key: value for key, value in contents.items() if not key.startswith("__")}


# ---------------------------------------------------------------------------- one call
def load_table(filename: str, data: bytes, *, label_column=None, orientation: str = "auto",
               missing: str = "refuse", header: bool | None = None, x_key: str | None = None,
               y_key: str | None = None, name: str | None = None,
               limits: LoadLimits = LoadLimits()) -> Dataset:
    """Load a table of samples and features: :func:`read_table`, :meth:`ParsedTable.arrange`,
    :func:`finish` in one call.

    Parameters
    ----------
    filename, data
        See :func:`read_table` for the formats.
    label_column : str or int, optional
        The labels: a column (samples as rows), a row ID (samples as columns), an ``obs``
        column (AnnData) or another array (NPZ/MAT; ``y_key`` says the same).
    orientation : {"auto", "samples_as_rows", "samples_as_columns"}
        Which way the samples run; "auto" guesses and says why in the load report.
    missing : {"refuse", "drop_samples", "drop_features", "mean", "median"}
        See :func:`finish`.
    header : bool, optional
        Delimited text: whether the first row holds names (default: detected).
    x_key, y_key : str, optional
        NPZ/MAT: the arrays holding the data and the labels (default ``X`` and ``Y``/``y``).

    Returns
    -------
    Dataset
        ``meta["load_report"]`` says how the file was read and what was guessed, dropped or
        imputed; ``meta["table"]`` holds the orientation and the missing-value counts.
    """
    parsed = read_table(filename, data, header=header, x_key=x_key, limits=limits)
    if y_key is not None:
        label_column = y_key
    elif label_column is None and parsed.format in ("npz", "mat"):
        label_column = next((k for k in ("Y", "y", "labels", "label") if k in parsed.annotations), None)
    return finish(parsed.arrange(label_column=label_column, orientation=orientation), missing, name=name)


def table_columns(filename: str, data: bytes, orientation: str = "auto") -> list[str]:
    """What can hold the labels of a table (see :meth:`ParsedTable.label_choices`)."""
    return read_table(filename, data).label_choices(orientation)
