"""Tables users bring: delimited text (also compressed or in a ZIP), Parquet, AnnData ``.h5ad``,
NPY/NPZ/MAT.

Loading is three steps, so that an interface can parse once and let the user choose the rest:

1. :func:`read_table` parses the bytes (pandas' C reader, pyarrow for Parquet, anndata for
   ``.h5ad``) into a :class:`ParsedTable`: the numbers as stored, the text cells, the names.
   The readers live by format: :mod:`.text_tables` (delimited text) and :mod:`.binary_tables`
   (Parquet, ``.h5ad``, NumPy and MATLAB arrays); the parsed table is :mod:`.table_model`'s.
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

import posixpath
import zipfile

from .dataset import Dataset
from ..errors import InputError
from ..limits import (COMPRESSIONS, LoadLimits, check_budget, compression_of, decompress, format_bytes, open_zip,
                     user_files)
from .binary_tables import _read_arrays, _read_h5ad, _read_parquet
from .table_model import (COMPRESSED_EXTENSIONS, MISSING_POLICIES, ORIENTATIONS, TABLE_EXTENSIONS, TEXT_EXTENSIONS,
                          Arrangement, ParsedTable, _listed, finish)
from .text_tables import _read_text

__all__ = ["TABLE_EXTENSIONS", "ORIENTATIONS", "MISSING_POLICIES", "ParsedTable", "Arrangement", "read_table",
           "finish", "load_table", "table_columns", "is_table_file"]


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
        NPZ/MAT: the array holding the data (default ``X``, or the only 2-D array). AnnData:
        ``"X"`` (the default), ``"raw.X"`` or ``"layers/<name>"``.
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
        return _read_h5ad(filename, data, x_key, notes, limits)
    return _read_arrays(filename, data, extension, x_key, notes, limits)


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
        NPZ/MAT: the arrays holding the data and the labels (default ``X`` and ``Y``/``y``);
        AnnData: the matrix (``"X"``, ``"raw.X"``, ``"layers/<name>"``).

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
