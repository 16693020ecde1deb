"""Binary tables: Parquet (pyarrow), AnnData ``.h5ad`` (anndata, sparse matrices kept sparse) and
NumPy / MATLAB arrays (``.npy``, ``.npz``, ``.mat``). Each builds a
:class:`~core.data.table_model.ParsedTable`.
"""

from __future__ import annotations

import io
import warnings
import zipfile
from contextlib import contextmanager

import numpy as np
import pandas as pd

from ..errors import InputError
from ..limits import (LoadLimits, check_budget, open_zip)
from ..validation import check_real_dtype
from .table_model import ParsedTable, _listed
from .text_tables import _grid_from_frame

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


def _h5ad_matrices(store) -> dict:
    """The samples x features matrices of an AnnData file by the name a user knows them by:
    ``X``, ``raw.X`` (``raw/X`` since AnnData 0.7, ``raw.X`` before) and ``layers/<name>``."""
    import h5py

    found = {"X": store["X"]}
    raw = store.get("raw")
    if isinstance(raw, h5py.Group) and "X" in raw:
        found["raw.X"] = raw["X"]
    elif "raw.X" in store:
        found["raw.X"] = store["raw.X"]
    layers = store.get("layers")
    if isinstance(layers, h5py.Group):
        found.update({f"layers/{name}": layers[name] for name in layers})
    return found


#: The ``obsm`` embeddings read as layouts of the samples (their first two columns), in the order
#: a map offers them: the pictures a scanpy user knows.
LAYOUT_KEYS = ("X_umap", "X_tsne", "X_pca", "X_diffmap", "X_draw_graph_fa")


def _h5ad_layouts(store, n_rows: int, notes: list) -> dict:
    """The two-column layouts of the cells stored in ``obsm`` (:data:`LAYOUT_KEYS`, first two
    columns, float64): a group of matrices since AnnData 0.7, one record array before. One that
    is not a real matrix of ``n_rows`` rows and at least two finite columns is skipped and said."""
    import h5py

    obsm = store.get("obsm")
    if isinstance(obsm, h5py.Group):
        stored = {name: obsm[name] for name in LAYOUT_KEYS if isinstance(obsm.get(name), h5py.Dataset)}
    elif isinstance(obsm, h5py.Dataset) and obsm.dtype.names:  # before 0.7: one field per embedding
        names = [name for name in LAYOUT_KEYS if name in obsm.dtype.names]
        stored = {name: obsm[name] for name in names} if names else {}
    else:
        return {}
    layouts = {}
    for name, element in stored.items():
        shape = tuple(element.shape)
        if len(shape) != 2 or shape[0] != n_rows or shape[1] < 2 or element.dtype.kind not in "fiu":
            notes.append(f"obsm[{name!r}] was not read as a layout: it is not a numeric matrix of "
                         f"{n_rows:,} rows and at least 2 columns.")
            continue
        values = np.asarray(element[:, :2], dtype=np.float64)
        if not np.isfinite(values).all():
            notes.append(f"obsm[{name!r}] was not read as a layout: it holds NaN or infinite values.")
            continue
        layouts[name] = values
    return layouts


def _stored_shape(element) -> tuple:
    """A matrix element's shape without reading it: a dataset's own, a sparse group's attribute
    (``shape`` since AnnData 0.7, ``h5sparse_shape`` before)."""
    import h5py

    if isinstance(element, h5py.Dataset):
        return tuple(element.shape)
    for name in ("shape", "h5sparse_shape"):
        if name in element.attrs:
            return tuple(int(s) for s in element.attrs[name])
    return ()


def anndata_frame(store, key: str):
    """``obs`` or ``var`` (or ``raw``'s var) of an AnnData file or store as a DataFrame, in either
    layout. AnnData before 0.7 stored them as HDF5 record arrays with categorical columns as
    integer codes, their categories in ``uns/<column>_categories``; the codes are turned back into
    categories (code -1 is missing) as ``anndata.read_h5ad`` does."""
    import anndata
    import h5py
    from anndata._io.h5ad import read_dataframe_legacy  # public read_elem reads the 0.7+ layout only

    element = store[key]
    if not isinstance(element, h5py.Dataset):
        return anndata.io.read_elem(element)
    frame = read_dataframe_legacy(element)
    uns = store.get("uns")
    for column in list(frame.columns):
        name = f"{column}_categories"
        if uns is None or name not in uns or frame[column].dtype.kind not in "iu":
            continue
        categories = [c.decode() if isinstance(c, bytes) else str(c) for c in np.atleast_1d(uns[name][()])]
        codes = frame[column].to_numpy()
        if codes.max(initial=-1) < len(categories):
            frame[column] = pd.Categorical.from_codes(np.where(codes < 0, -1, codes), categories)
    return frame


def _read_h5ad(filename, data, x_key, notes, limits) -> ParsedTable:
    import anndata
    import h5py

    try:
        store = h5py.File(io.BytesIO(data), "r")
    except (OSError, ValueError):
        raise InputError(f"{filename} is not a readable .h5ad (HDF5) file; write it with AnnData's write_h5ad.") from None
    with store, warnings.catch_warnings():
        if "X" not in store or "obs" not in store or "var" not in store:
            raise InputError(f"{filename} is an HDF5 file but not an AnnData one (it lacks X, obs or var).")
        matrices = _h5ad_matrices(store)
        x_key = "X" if x_key is None else x_key
        if x_key not in matrices:
            raise InputError(f"{filename}: no matrix {x_key!r}; it holds {_listed(matrices)}.")
        stored = matrices[x_key]
        legacy = isinstance(store["obs"], h5py.Dataset)
        shape = _stored_shape(stored)
        if isinstance(stored, h5py.Group):
            kind = str(stored.attrs.get("encoding-type", stored.attrs.get("h5sparse_format", "sparse")))
        else:
            kind = "dense"
        if len(shape) != 2:
            raise InputError(f"{filename}: {x_key} is {len(shape)}-D; AnnData's matrices must be cells x genes.")
        check_budget(8 * shape[0] * shape[1],
                     f"{filename} ({x_key} as a dense float64 matrix, {shape[0]:,} x {shape[1]:,})", limits)
        try:
            warnings.simplefilter("ignore", anndata.OldFormatWarning)  # the notes say it once, in words
            X = anndata.io.read_elem(stored)
            obs = anndata_frame(store, "obs")
            var_key = {"raw.X": "raw/var" if "raw/var" in store else "raw.var"}.get(x_key, "var")
            var = anndata_frame(store, var_key) if var_key in store else anndata_frame(store, "var")
            layouts = _h5ad_layouts(store, len(obs), notes)
        except InputError:
            raise
        except Exception as exc:  # anndata raises many kinds for damaged files; all mean the same here
            raise InputError(f"{filename}: AnnData could not read it ({type(exc).__name__}: {exc}).") from None
    if hasattr(X, "toarray"):
        X = X.toarray()
    X = _real_matrix(np.asarray(X), filename, x_key)
    if X.shape != (len(obs), len(var)):
        raise InputError(f"{filename}: {x_key} is {X.shape[0]:,} x {X.shape[1]:,} but obs has {len(obs):,} rows "
                         f"and var {len(var):,}; the file is inconsistent.")
    annotations, categorical = {}, []
    for column in obs.columns:
        series = obs[column]
        cells = series.astype(object).where(series.notna(), None).to_numpy(dtype=object)
        annotations[str(column)] = cells
        if isinstance(series.dtype, pd.CategoricalDtype) or series.dtype.kind in "OSUb":
            categorical.append(str(column))
    if legacy:
        notes.append("Written by AnnData before 0.7 (obs and var as record arrays); read in that layout.")
    notes.append(f"Read AnnData: {shape[0]:,} cells x {shape[1]:,} genes from {x_key} ({kind}); "
                 + (f"also in the file: {_listed(m for m in matrices if m != x_key)}; " if len(matrices) > 1 else "")
                 + f"obs columns {_listed(obs.columns) or 'none'}"
                 + (f"; layouts of the cells (obsm) {_listed(layouts)}." if layouts else "."))
    return ParsedTable(filename, "h5ad", tuple(str(v) for v in var.index), X, np.arange(X.shape[1]),
                       row_names=tuple(str(o) for o in obs.index), annotations=annotations, notes=tuple(notes),
                       header=True, arrays=tuple(matrices), x_key=x_key, categorical=tuple(categorical),
                       layouts=layouts)


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
