"""A table as parsed, before the user's choices: the numbers as stored, the text cells and the names
(:class:`ParsedTable`); the choices of layout (:class:`Arrangement`: orientation, the labels);
and :func:`finish`, which deals with missing values and returns the :class:`~core.data.dataset.Dataset`.
The readers of each format (:mod:`.text_tables`, :mod:`.binary_tables`) build a ParsedTable;
:mod:`.tables` is the entry.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping

import numpy as np
import pandas as pd

from .dataset import Dataset
from ..errors import InputError
from ..validation import as_labels

__all__ = ["TEXT_EXTENSIONS", "TABLE_EXTENSIONS", "COMPRESSED_EXTENSIONS", "ORIENTATIONS", "MISSING_POLICIES",
           "NA_TOKENS", "LABEL_WORDS", "CELL_LABEL_WORDS", "LABEL_CLASSES", "ParsedTable", "Arrangement", "finish"]


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
# obs columns single-cell tools write for cell classes, in the order they are preferred: curated types
# before clusterings (scanpy's bulk_labels and louvain/leiden, Seurat's seurat_clusters)
CELL_LABEL_WORDS = ("cell_type", "celltype", "cell_types", "bulk_labels", "cell_ontology_class", "label", "labels",
                    "class", "leiden", "louvain", "seurat_clusters", "cluster", "clusters")
#: how many classes a column may have to be offered as the labels without being asked
LABEL_CLASSES = (2, 50)
_BOOLEAN_TEXT = frozenset({"true", "false"})
_COMPLEX = re.compile(r"^\(?[-+]?[\d.]+(e[-+]?\d+)?[-+][\d.]*(e[-+]?\d+)?[ij]\)?$", re.IGNORECASE)
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?|-?\d+ days( [\d:.]+)?)$")
_GENE_LIKE = re.compile(r"^(ENS[A-Z]*G\d+|[A-Z][A-Z0-9-]{1,14}(\.\d+)?|\d+_(s_|x_|i_)?at|AFFX-.*|"
                        r"ILMN_\d+|[A-Za-z][A-Za-z0-9]*[-_.][A-Za-z0-9_.-]+)$")


#: Names of a first column that holds features (genes, probes) as rows, lower case with spaces
#: and hyphens as underscores: a person reads "gene" over 765 rows as genes, whatever the shape.
FEATURE_COLUMN_NAMES = frozenset({
    "gene", "genes", "gene_id", "gene_ids", "gene_name", "gene_names", "gene_symbol", "symbol", "symbols",
    "feature", "features", "feature_id", "feature_name", "probe", "probe_id", "probes", "probeset", "probeset_id",
    "id_ref", "ensembl", "ensembl_id", "ensembl_gene_id", "transcript", "transcript_id", "protein", "accession"})
#: ... and names of one that holds samples as rows.
SAMPLE_COLUMN_NAMES = frozenset({
    "sample", "samples", "sample_id", "sample_name", "cell", "cells", "cell_id", "barcode", "barcodes",
    "cell_barcode", "obs_names", "patient", "patient_id", "subject", "subject_id"})
#: Column names that are samples: single-cell barcodes (10x: 12-20 bases, "-1"), GEO samples,
#: TCGA aliquots.
_SAMPLE_LIKE = re.compile(r"^([ACGT]{12,20}(-\d+)?|GSM\d+|TCGA-[A-Z0-9-]+)$")


def _column_kind(name: str) -> str | None:
    """"features" or "samples" where a first column's name says what its rows are, else None."""
    key = re.sub(r"[\s-]+", "_", str(name).strip().lower())
    return "features" if key in FEATURE_COLUMN_NAMES else "samples" if key in SAMPLE_COLUMN_NAMES else None


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _listed(names, limit: int = 8) -> str:
    names = list(names)
    shown = ", ".join(repr(str(n)) for n in names[:limit])
    return shown + (f" and {len(names) - limit:,} more" if len(names) > limit else "")


@dataclass(frozen=True, eq=False)
class ParsedTable:
    """A table as stored in the file, before any choice of layout, labels or missing values.

    Attributes
    ----------
    filename, format : str
        ``format`` is "text", "parquet", "h5ad", "npy", "npz" or "mat"; for the last three,
        ``arrays`` names every matrix in the file and ``x_key`` the one read as the data.
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
    categorical : tuple of str
        The annotations stored as categories or text (AnnData's categorical ``obs`` columns).
    notes : tuple of str
        How the file was read (compression, delimiter, header, engine).
    header : bool
        Whether the first row was read as column names.
    layouts : dict of str -> ndarray, shape (n_rows, 2)
        Two-dimensional layouts of the rows stored with them (AnnData ``obsm["X_umap"]``,
        ``"X_pca"``, ...: their first two columns).
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
    categorical: tuple = ()
    layouts: Mapping[str, np.ndarray] = field(default_factory=dict)

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
        column and the evidence a person would use says so: a row holding text across most
        numeric columns (a class row: labels of samples that run along it); the identifier
        column's name (``gene``, ``symbol``, ``probe``, ... :data:`FEATURE_COLUMN_NAMES`), unless
        another column of few values holds class labels of samples in rows; numeric columns named
        like samples (single-cell barcodes, GEO or TCGA sample ids); or identifiers that look like
        gene or probe names with at least three times as many rows as numeric columns and no
        other text column of few values. A first column named ``sample``, ``cell``, ``barcode``,
        ... (:data:`SAMPLE_COLUMN_NAMES`) means samples in rows. Otherwise rows are samples, as
        in scikit-learn. Arrays (NPY/NPZ/MAT) and AnnData are read as samples in rows. The
        reason names the evidence.
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
        if id_column is not None and self.header:
            named = _column_kind(self.columns[id_column])
            column_names = [self.columns[j] for j in self.numeric.tolist()]
            sample_like = np.mean([bool(_SAMPLE_LIKE.match(str(c))) for c in column_names[:200]])
            if named == "samples":
                return "samples_as_rows", (
                    f"the first column is named {self.columns[id_column]!r}: read as {rows:,} samples (rows) of "
                    f"{n_numeric:,} features. Choose samples as columns if your table has them the other way.")
            if (named == "features" and not class_like) or sample_like >= 0.5:
                why = (f"the first column is named {self.columns[id_column]!r}" if named == "features" and not class_like
                       else f"the numeric columns are named like samples ({_listed(column_names, 2)})")
                return "samples_as_columns", (
                    f"{why}: read as {n_numeric:,} samples (columns) of {rows:,} features (rows). Choose samples as "
                    "rows if your table has them the other way.")
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
        return self.label_suggestion(orientation)[0]

    def label_suggestion(self, orientation: str = "auto") -> tuple[str | None, str]:
        """The labels to offer first and why, in words for the person choosing.

        AnnData: a categorical ``obs`` column with 2 to 50 categories, by name first
        (:data:`CELL_LABEL_WORDS`: cell_type, bulk_labels, leiden, louvain, ...), else the first
        such column in the file. Other formats: a column named like a label (:data:`LABEL_WORDS`).
        """
        if self.format == "h5ad":
            return self._obs_label_suggestion(orientation)
        choices = self.label_choices(orientation)
        by_name = {str(c).lower(): c for c in choices}
        for word in LABEL_WORDS:
            if word in by_name:
                return by_name[word], f"its name, {by_name[word]!r}, says it holds labels"
        if self.resolve(orientation) == "samples_as_columns" and choices:
            return choices[0], "the first annotation row of a features x samples table"
        return None, "no column is named like labels"

    def _obs_label_suggestion(self, orientation: str) -> tuple[str | None, str]:
        if self.resolve(orientation) == "samples_as_columns":
            return None, "obs columns label the rows; keep samples as rows to use them"
        low, high = LABEL_CLASSES
        counts = {name: len({v for v in self.annotations[name] if v is not None}) for name in self.categorical}
        usable = [name for name in self.categorical if low <= counts[name] <= high]
        by_name = {name.lower(): name for name in usable}
        for word in CELL_LABEL_WORDS:
            if word in by_name:
                name = by_name[word]
                return name, (f"a categorical obs column with {counts[name]} categories, named as cell classes "
                              "usually are")
        if usable:
            return usable[0], (f"the first categorical obs column with {low}-{high} categories "
                               f"({counts[usable[0]]})")
        return None, (f"no categorical obs column has {low}-{high} categories"
                      + (f" ({', '.join(f'{n}: {c}' for n, c in list(counts.items())[:6])})" if counts else ""))

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
            arrangement = self._arrange(label_column, orientation)
            if arrangement.labels is not None and label_column is not None:
                arrangement.label_name = str(label_column)
            self._last_arrangement[key] = arrangement
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
        layouts = dict(self.layouts)
        if orientation == "samples_as_columns":
            feature_names, sample_names = sample_names, feature_names
            layouts = {}  # they place the stored rows, which are now the features
        return Arrangement(self.filename, X, labels, feature_names, sample_names, notes, orientation, layouts)


@dataclass(eq=False)
class Arrangement:
    """A table laid out as samples x features, before missing values are dealt with.

    ``X`` may hold NaN (missing); ``labels`` is an object array (None where missing) or None;
    ``layouts`` the stored two-dimensional layouts of the samples (:attr:`ParsedTable.layouts`).
    """

    filename: str
    X: np.ndarray
    labels: np.ndarray | None
    feature_names: list | None
    sample_names: list | None
    notes: list
    orientation: str
    layouts: Mapping[str, np.ndarray] = field(default_factory=dict)
    #: the column (row, ``obs`` column, array) the labels were read from, as the file names it
    label_name: str | None = None

    def check_shape(self) -> None:
        """Refuse a table too small to select features from as laid out, before any choice about its
        missing values (which can only make it smaller), so that a preview says so before Load."""
        _check_shape(self.filename, *self.X.shape)

    @cached_property
    def missing_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Missing values per feature and per sample."""
        missing = np.isnan(self.X)
        return missing.sum(axis=0), missing.sum(axis=1)


def _check_shape(filename: str, n_samples: int, n_features: int) -> None:
    if n_samples < 2:
        raise InputError(f"{filename} has {n_samples} sample(s); feature selection needs at least two.")
    if n_features < 2:
        raise InputError(f"{filename} has {n_features} feature(s); feature selection needs at least "
                         "two (is the label column the only numeric one? Check 'Samples are' and 'Labels').")


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
    layouts = dict(arrangement.layouts)
    labels, kept = _labels_present(arrangement, missing, notes)
    if kept is not None:
        X = X[kept]
        sample_names = [s for s, k in zip(sample_names, kept) if k] if sample_names else None
        layouts = {name: values[kept] for name, values in layouts.items()}
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
            layouts = {name: values[keep] for name, values in layouts.items()}
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
    _check_shape(filename, *X.shape)
    feature_names = _unique_names(feature_names, "feature", notes)
    sample_names = _unique_names(sample_names, "sample", notes)
    meta = {"load_report": notes, "table": dict(summary, orientation=arrangement.orientation,
                                                **({"label_column": arrangement.label_name} if arrangement.label_name else {}))}
    if layouts:
        meta["layouts"] = layouts
    return Dataset(X, labels=labels, feature_names_=feature_names, sample_names_=sample_names,
                   name=name or filename, kind="table", source=f"uploaded: {filename}", meta=meta)


def _labels_present(arrangement: Arrangement, missing: str, notes: list):
    """The arrangement's labels and the samples to keep (None: all), samples without a label
    dropped under ``"drop_samples"`` (said in ``notes``) and refused otherwise."""
    filename = arrangement.filename
    if arrangement.labels is None:
        return None, None
    labels, label_missing = _label_values(arrangement.labels, filename)
    if label_missing.all():
        raise InputError(f"{filename}: the label column is empty. Choose another label column, or none.")
    if not label_missing.any():
        return labels, None
    rows = np.flatnonzero(label_missing)
    if missing != "drop_samples":
        raise InputError(f"{filename}: {_plural(len(rows), 'sample')} have no label (the first: sample "
                         f"{rows[0]}, counting from 0 as the preview and the data set's names do). Choose 'drop samples' for missing values to leave them out, "
                         "or another label column.")
    notes.append(f"Dropped {_plural(len(rows), 'sample')} without a label.")
    return labels[~label_missing], ~label_missing


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
