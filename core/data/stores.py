"""Data sets on disk opened lazily: AnnData ``.h5ad``, Zarr stores, NumPy ``.npy`` (and tables).

For data too large to upload or to hold densely, :func:`open_store` opens a file or folder and
returns its matrix as a Dask array (sparse chunks for sparse AnnData matrices) without reading
the values; the passes of :mod:`core.matrix.normalised` and :mod:`core.matrix.kinds` then read it a row block
at a time. Delimited tables are read whole through :func:`core.data.tables.load_table`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .dataset import Dataset
from ..errors import InputError
from ..matrix import data_matrix
from ..matrix.kinds import BLOCK_TARGET_BYTES
from ..limits import LoadLimits, check_budget, format_bytes, memory_limit_bytes
from .tables import is_table_file, load_table
from ..validation import check_positive_int

__all__ = ["StoredData", "open_store", "list_stores", "dense_subset", "STORE_FORMATS", "DATA_FOLDER_VARIABLE",
           "data_folder"]

#: What :func:`open_store` reads lazily, by suffix.
STORE_FORMATS = {".h5ad": "AnnData (HDF5)", ".zarr": "Zarr (array or AnnData store)", ".npy": "NumPy array"}
#: The environment variable that names the app's server-side data folder (unset: no folder).
DATA_FOLDER_VARIABLE = "QALPHA_DATA_DIR"


@dataclass(frozen=True, eq=False)
class StoredData:
    """A data matrix on disk, opened lazily.

    Attributes
    ----------
    X : dask.array.Array or ndarray
        Samples x features (a NumPy array only for tables, which are read whole).
    path : str
    format : str
        ``"h5ad"``, ``"zarr"``, ``"zarr-anndata"``, ``"npy"`` or ``"table"``.
    feature_names : tuple of str or None
    annotations : dict of str -> ndarray
        Per-sample columns that can serve as labels (AnnData ``obs``, a table's label column).
    stored_values : int or None
        Stored entries of a sparse matrix (None when dense).
    """

    X: object
    path: str
    format: str
    feature_names: tuple | None = None
    annotations: dict = field(default_factory=dict)
    stored_values: int | None = None
    handle: object = field(default=None, repr=False)

    @property
    def shape(self):
        return tuple(int(s) for s in self.X.shape)

    @property
    def name(self) -> str:
        return Path(self.path).name

    @property
    def is_sparse(self) -> bool:
        return self.stored_values is not None

    @property
    def dense_bytes(self) -> int:
        """Bytes of the matrix as dense float64."""
        return 8 * self.shape[0] * self.shape[1]

    @property
    def density(self) -> float:
        total = self.shape[0] * self.shape[1]
        return 1.0 if self.stored_values is None else self.stored_values / total

    def describe(self) -> str:
        rows, columns = self.shape
        kind = (f"sparse, {self.stored_values:,} stored values ({100 * self.density:.2g}% dense)" if self.is_sparse
                else f"dense {np.dtype(self.X.dtype).name}")
        return (f"{rows:,} samples x {columns:,} features, {kind}; {format_bytes(self.dense_bytes)} as dense float64")

    def labels(self, column: str) -> np.ndarray:
        """The per-sample column ``column`` (an ``obs`` column of AnnData), as labels."""
        if column not in self.annotations:
            choices = ", ".join(self.annotations) or "none"
            raise InputError(f"{self.name} has no per-sample column {column!r}; its columns: {choices}.")
        return np.asarray(self.annotations[column])

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()


def data_folder() -> Path | None:
    """The server-side data folder named by :data:`DATA_FOLDER_VARIABLE`, if it is set and exists."""
    value = os.environ.get(DATA_FOLDER_VARIABLE, "").strip()
    if not value:
        return None
    folder = Path(value).expanduser()
    return folder if folder.is_dir() else None


def list_stores(folder) -> list[Path]:
    """The data sets :func:`open_store` can open lazily in ``folder`` (not recursive), by name."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.iterdir() if p.suffix.lower() in STORE_FORMATS and not p.name.startswith(".")),
                  key=lambda p: p.name.lower())


def _dense_rows(n_features):
    """Rows of a dense on-disk array per Dask chunk: a row block of the size the passes merge to."""
    return max(1, BLOCK_TARGET_BYTES // (8 * max(n_features, 1)))


def _anndata_store(group, path, fmt, handle=None):
    """The lazy ``X`` of an AnnData group, with ``obs`` columns and ``var`` names."""
    from anndata.experimental import read_elem_lazy

    from .binary_tables import anndata_frame

    if "X" not in group:
        raise InputError(f"{path} holds no matrix X: it is not an AnnData store (layers are not read).")
    encoding = dict(group["X"].attrs).get("encoding-type", "array")
    if "h5sparse_format" in group["X"].attrs:
        raise InputError(f"{path} stores a sparse X in the layout of AnnData before 0.7, which cannot be read "
                         "lazily. Rewrite it once with anndata (anndata.read_h5ad(path).write_h5ad(path)), or "
                         "upload it on the Data page's table tab.")
    stored = None
    if encoding in ("csr_matrix", "csc_matrix"):
        shape = tuple(int(s) for s in dict(group["X"].attrs)["shape"])
        if encoding == "csc_matrix":
            raise InputError(f"{path} stores X by features (CSC); a pass needs it by samples. Convert it once with "
                             "anndata (adata.X = adata.X.tocsr(); adata.write_h5ad(...)).")
        stored = int(group["X"]["indptr"][-1])
        # rows whose stored values (8-byte value, 4-byte index) come to about one block
        per_row = max(1.0, stored / max(shape[0], 1))
        X = read_elem_lazy(group["X"], chunks=(int(max(1, min(shape[0], BLOCK_TARGET_BYTES // (12 * per_row)))),
                                               shape[1]))
    else:
        shape = tuple(group["X"].shape)
        chunks = (_dense_rows(shape[1]), shape[1])
        if "encoding-type" in group["X"].attrs:
            X = read_elem_lazy(group["X"], chunks=chunks)
        else:  # a dense X written before AnnData 0.7 has no encoding for the lazy reader to go by
            import dask.array as da

            X = da.from_array(group["X"], chunks=chunks)
    annotations, names = {}, None
    try:
        obs = anndata_frame(group, "obs") if "obs" in group else None
        var = anndata_frame(group, "var") if "var" in group else None
    except Exception as exc:  # a damaged annotation must not hide the matrix
        raise InputError(f"{path}: its obs/var annotations could not be read ({exc}).") from None
    if obs is not None:
        annotations = {str(c): np.asarray(obs[c].astype(str) if obs[c].dtype.name == "category" else obs[c])
                       for c in obs.columns}
    if var is not None:
        names = tuple(str(v) for v in var.index)
    return StoredData(X=X, path=str(path), format=fmt, feature_names=names, annotations=annotations,
                      stored_values=stored, handle=handle)


def open_store(path, *, label_column: str | None = None, limits: LoadLimits | None = None) -> StoredData:
    """Open a data set on disk without reading its values.

    Parameters
    ----------
    path : str or Path
        An ``.h5ad`` file, a ``.zarr`` folder (a 2-D array, or an AnnData store), an ``.npy`` file,
        or a delimited table (CSV/TSV, optionally compressed; read whole, samples as rows).
    label_column : str, optional
        Tables only: the column holding labels.
    limits : LoadLimits, optional
        Tables only: the budget of the dense matrix (half the machine's memory by default).

    Returns
    -------
    StoredData
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError(f"{path} does not exist. Give the path of an .h5ad file, a .zarr folder, an .npy file "
                         "or a CSV table.")
    suffix = path.suffix.lower()
    try:
        if suffix == ".h5ad":
            import h5py

            try:
                handle = h5py.File(path, "r")
            except OSError:
                raise InputError(f"{path} is not a readable HDF5 (.h5ad) file; it may be truncated.") from None
            try:
                return _anndata_store(handle, path, "h5ad", handle)
            except BaseException:
                handle.close()  # a refused file is not left open
                raise
        if suffix == ".zarr":
            import dask.array as da
            import zarr

            try:
                node = zarr.open(str(path), mode="r")
            except Exception as exc:
                raise InputError(f"{path} is not a readable Zarr store ({type(exc).__name__}: {exc}).") from None
            if isinstance(node, zarr.Array):
                if node.ndim != 2:
                    raise InputError(f"{path} holds a {node.ndim}-D array; a data matrix is 2-D (samples x features).")
                return StoredData(X=da.from_zarr(node), path=str(path), format="zarr")
            return _anndata_store(node, path, "zarr-anndata")
        if suffix == ".npy":
            import dask.array as da

            try:
                values = np.load(path, mmap_mode="r", allow_pickle=False)
            except ValueError as exc:
                raise InputError(f"{path} is not a plain NumPy array ({exc}).") from None
            if values.ndim != 2:
                raise InputError(f"{path} holds a {values.ndim}-D array; a data matrix is 2-D (samples x features).")
            return StoredData(X=da.from_array(values, chunks=(_dense_rows(values.shape[1]), -1)), path=str(path),
                              format="npy")
    except InputError:
        raise
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise InputError(f"{path} could not be opened ({type(exc).__name__}: {exc}).") from None
    if not path.is_file() or not is_table_file(path.name):
        raise InputError(f"{path.name}: unknown format. Use an .h5ad file, a .zarr folder, an .npy file or a CSV/TSV "
                         "table.")
    limits = limits or LoadLimits(max_decoded_bytes=memory_limit_bytes())
    data = load_table(path.name, path.read_bytes(), label_column=label_column, limits=limits)
    annotations = {} if data.labels is None else {str(label_column): data.labels}
    return StoredData(X=data.X, path=str(path), format="table", feature_names=tuple(data.feature_names),
                      annotations=annotations)


def dense_subset(stored: StoredData, n_features: int, n_samples: int, *, label_column: str | None = None,
                 random_state=0, limits: LoadLimits = LoadLimits()):
    """A dense, in-memory :class:`~core.data.dataset.Dataset` of a stored set for the pages that need one.

    The ``n_features`` features of highest variance (one pass over the data) and a uniform random
    sample of ``n_samples`` samples (in their stored order), with the labels of ``label_column``.
    The matrix must fit the per-upload budget of ``limits``.
    """
    n_features = min(check_positive_int(n_features, "The number of features"), stored.shape[1])
    n_samples = min(check_positive_int(n_samples, "The number of samples"), stored.shape[0])
    check_budget(8.0 * n_features * n_samples, f"A subset of {n_samples:,} samples x {n_features:,} features", limits)
    labels = None if label_column is None else stored.labels(label_column)
    data = data_matrix(stored.X, stored.name)
    variance = data.moments().variance
    columns = np.sort(np.argsort(-variance, kind="stable")[:n_features])
    rng = np.random.default_rng(random_state)
    rows = np.sort(rng.choice(stored.shape[0], n_samples, replace=False))
    values = data.submatrix(rows, columns)
    names = None if stored.feature_names is None else [stored.feature_names[j] for j in columns]
    return Dataset(X=values, labels=None if labels is None else labels[rows],
                   feature_names_=names, name=f"{stored.name} ({n_samples:,} x {n_features:,} by variance)",
                   source=f"{stored.path}: {n_samples:,} of {stored.shape[0]:,} samples drawn at random (seed "
                          f"{random_state}), the {n_features:,} of {stored.shape[1]:,} features of highest variance",
                   kind="table", meta={"subset_rows": rows, "subset_columns": columns})
