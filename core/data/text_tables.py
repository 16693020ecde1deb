"""Delimited text tables (CSV, TSV, whitespace): the encoding, delimiter and header guessed from a
bounded head of the file, then pandas' C reader, or a line-by-line reader for tables far wider
than long (pandas' per-column cost dominates there). Builds a :class:`~core.data.table_model.ParsedTable`.
"""

from __future__ import annotations

import io
import re

import numpy as np
# imported here, once, rather than inside the functions: Streamlit runs each session on a thread,
# and two first sessions importing pandas at the same moment met a partially initialised module
import pandas as pd
from pandas.api import types as pandas_types

from ..errors import InputError
from ..limits import (check_budget)
from .table_model import NA_TOKENS, ParsedTable

# the head of a text file read to choose the delimiter and the header: a bounded prefix
HEAD_LINES, HEAD_LINE_CHARS = 20, 1 << 16
# a table this wide and this short is read line by line: pandas' per-column cost dominates there
WIDE_COLUMNS, WIDE_RATIO = 10_000, 10

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
