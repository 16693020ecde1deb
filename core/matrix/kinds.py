"""The two kinds of data matrix that the dense in-memory path must not densify, validated.

* ``scipy.sparse`` matrices (CSR, CSC or any format SciPy converts to CSR), never densified:
  :func:`as_sparse_matrix` checks the stored values and converts once to float64 CSR;
* ``dask.array`` arrays, dense or with SciPy-sparse chunks, in memory, on disk (Zarr, HDF5) or
  on a ``dask.distributed`` cluster: :func:`as_chunked_array` checks the chunks against a memory
  limit and returns :class:`RowBlocks`, row blocks spanning all features that each pass maps one
  function over, so memory is bounded by a few blocks.

Where the passes over chunked data run (a cluster, data held in memory) is :mod:`.cluster`'s.
Nothing outside :mod:`core.matrix` tells the kinds apart: :func:`core.matrix.data_matrix` asks
once, where data enter a computation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..errors import InputError
from ..limits import format_bytes, memory_limit_bytes
from ..validation import check_matrix_shape, check_real_dtype
from .threads import cores

__all__ = ["is_sparse", "is_chunked", "is_large", "as_sparse_matrix", "as_chunked_array", "RowBlocks",
           "block_pieces", "local_threads", "slice_rows", "scan_rows", "BLOCK_TARGET_BYTES", "SPARSE_BLOCK_ENTRIES"]

#: Row chunks of a Dask array smaller than this (float64 over all features) are merged up to it:
#: fewer tasks keep the scheduler's overhead small against the products. Larger chunks are left
#: as stored, since merging copies them.
BLOCK_TARGET_BYTES = 64 << 20
#: Statistics of an in-memory sparse matrix are taken over row blocks of about this many stored
#: values, so their temporaries stay near 100 MB whatever the matrix.
SPARSE_BLOCK_ENTRIES = 8_000_000
#: Per block, the working copies of a chunked pass: the float64 block and a product's temporary.
BLOCK_COPIES = 2


def is_sparse(X) -> bool:
    return sparse.issparse(X)


def is_chunked(X) -> bool:
    """Whether ``X`` is a Dask array (checked without importing Dask)."""
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "chunks") and hasattr(X, "to_delayed")


def is_large(X) -> bool:
    """Sparse or chunked: data the dense in-memory path must not densify."""
    return is_sparse(X) or is_chunked(X)


# ---------------------------------------------------------------------------- validation
def as_sparse_matrix(X, what: str = "X"):
    """``X`` as a float64 CSR matrix whose stored values are all finite.

    A CSR float64 matrix in canonical form is used as it is (no copy); other formats, dtypes and
    matrices with repeated entries are converted once.
    Refused: complex or non-numeric values, NaN or infinite stored values (with where the first
    is), anything not 2-D or empty.
    """
    check_real_dtype(X.dtype, what)
    check_matrix_shape(X.shape, what)
    if X.format != "csr":
        X = X.tocsr()
    if X.dtype != np.float64:
        # the index arrays are shared; only the values are converted
        X = sparse.csr_matrix((X.data.astype(np.float64), X.indices, X.indptr), shape=X.shape)
    if not X.has_canonical_format:
        # repeated entries of a row and column mean their sum (as in SciPy's products); the
        # extremes of a column need them summed first. The caller's matrix is left as it is.
        X = X.copy()
        X.sum_duplicates()
    bad = _first_non_finite(X.data)
    if bad is not None:
        row = int(np.searchsorted(X.indptr, bad, side="right") - 1)
        count = int(X.data.size - np.isfinite(X.data).sum())
        raise InputError(f"{what} is a sparse matrix with {count:,} NaN or infinite stored value(s) (the first at "
                         f"sample {row}, feature {int(X.indices[bad])}); impute or remove them first (an entry "
                         "that is not stored counts as 0).")
    return X


def _first_non_finite(values, step=SPARSE_BLOCK_ENTRIES):
    for start in range(0, values.size, step):
        finite = np.isfinite(values[start:start + step])
        if not finite.all():
            return start + int(np.argmin(finite))
    return None


@dataclass(frozen=True)
class RowBlocks:
    """A Dask array as row blocks that span all features, ready for one pass per product.

    A row block is the list of its stored column chunks (not concatenated, which would copy
    them); :func:`block_pieces` walks them.

    Attributes
    ----------
    array : dask.array.Array
        The data, its row chunks merged where they were small.
    """

    array: object

    @property
    def row_starts(self) -> np.ndarray:
        return np.cumsum((0,) + tuple(self.array.chunks[0]))

    @property
    def column_starts(self) -> np.ndarray:
        return np.cumsum((0,) + tuple(self.array.chunks[1]))

    def blocks(self):
        """Per row block, the keys of its column chunks in the array's graph, in order (what
        :func:`core.matrix.cluster.pass_over_blocks` maps a function over)."""
        return [list(row) for row in self.array.__dask_keys__()]


def as_chunked_array(X, what: str = "X", memory_limit: int | None = None, workers: int | None = None) -> RowBlocks:
    """A Dask array as :class:`RowBlocks` within a memory limit.

    A row block keeps its stored column chunks (each is read once per pass, never copied into one
    array); row chunks smaller than :data:`BLOCK_TARGET_BYTES` are merged up to it. Refused: non-numeric dtypes, anything
    not 2-D or empty, unknown chunk sizes, and row blocks whose working copies (float64, across all
    features, :data:`BLOCK_COPIES` per block, one block per worker thread) exceed ``memory_limit``
    (bytes; half the machine's memory by default). Chunks that are SciPy sparse matrices are taken
    as they are: a pass never densifies them.
    """
    check_real_dtype(X.dtype, what)
    check_matrix_shape(X.shape, what)
    if any(np.isnan(size) for sizes in X.chunks for size in sizes):
        raise InputError(f"{what} has chunks of unknown size (a Dask array built from a filter or a "
                         "DataFrame); call X.compute_chunk_sizes() first.")
    limit = memory_limit_bytes() if memory_limit is None else int(memory_limit)
    if limit <= 0:
        raise InputError(f"The memory limit must be a positive number of bytes; got {memory_limit!r}.")
    if sparse.issparse(getattr(X, "_meta", None)):
        # Sparse chunks are never made dense: a block costs its stored values, which the reader
        # sized (core.data.stores: about BLOCK_TARGET_BYTES of them), and its k x n partial product.
        return RowBlocks(array=X)
    threads = max(1, int(workers or local_threads()))
    n_samples, n_features = X.shape
    row_bytes = 8 * n_features
    largest = max(X.chunks[0])
    needed = BLOCK_COPIES * threads * largest * row_bytes
    if needed > limit:
        fitting = max(1, limit // (BLOCK_COPIES * threads * row_bytes))
        raise InputError(
            f"{what} has row chunks of up to {largest:,} samples: a pass works on whole rows (all {n_features:,} "
            f"features), and {threads} block(s) of that size at once need {format_bytes(needed)}, more than the "
            f"memory limit of {format_bytes(limit)}. Rechunk along the samples to at most {fitting:,} rows "
            f"(e.g. X.rechunk(({fitting}, -1)) or store the data so), or raise the memory limit.")
    # merge small row chunks up to the target size, never beyond the limit
    target = max(1, min(BLOCK_TARGET_BYTES, limit // (BLOCK_COPIES * threads)) // row_bytes)
    rows, current = [], 0
    for size in X.chunks[0]:
        if current and current + size > target:
            rows.append(current)
            current = 0
        current += size
    rows.append(current)
    if tuple(rows) != X.chunks[0]:
        X = X.rechunk((tuple(rows), X.chunks[1]))
    return RowBlocks(array=X)


#: Rows of a dense block taken at a time: about this many float64 bytes, and at least
#: :data:`MIN_SLICE_ROWS`, so that the second product of a pass finds the slice in the cache the
#: first brought it to. Measured on a 2-core Xeon, both products of a pass over a 20,000 x 4,000
#: float64 array on two threads: 108-138 ms for k = 4, 8 and 14 with slices of 128 rows (4 MB)
#: against 154-185 ms for the two whole products; slices of 32 rows lost at k = 14 (306 ms),
#: their thin products run below the BLAS's speed.
SLICE_BYTES = 4 << 20
MIN_SLICE_ROWS = 32
#: Slices of the element-wise passes (the moments, the normalised copy): their buffer is mapped
#: afresh at each call, and on small data its page faults were the cost (72 x 7,129: 5.6 ms with
#: 4 MB slices, 2.5 ms with 512 kB, against 2.3-2.9 ms for the whole-array steps before), while
#: on large data each slice's dozen NumPy calls and its pairwise combine were (16 rows of 4,000
#: features). Measured on a 2-core Xeon, the preparation in ms with slices of 512 kB / 1 MB / 2 MB:
#: 72 x 7,129: 2.9-3.3 / 2.5-2.7 / 2.9; 2,600 x 1,200: 13.1 / 10.9-11.0 / 11.4-12.7; 20,000 x
#: 4,000: 370 / 330-335 / 359-361; the moments of 60,000 x 4,000 float32: 0.67-0.73 / 0.42-0.56 s.
SCAN_SLICE_BYTES = 1 << 20


def slice_rows(n_features: int, slice_bytes: int | None = None, min_rows: int | None = None) -> int:
    """Rows of a slice of a block with ``n_features`` float64 columns: about ``slice_bytes`` and
    at least ``min_rows``. The products' slices keep :data:`MIN_SLICE_ROWS` (thinner products run
    below the BLAS's speed); the element-wise passes take :data:`SCAN_SLICE_BYTES` and one row
    at least (their buffer is the memory they add: 32 rows of 50,000 features were 13 MB)."""
    # the module's values at the call (None), so that a test can set them
    slice_bytes = SLICE_BYTES if slice_bytes is None else slice_bytes
    min_rows = MIN_SLICE_ROWS if min_rows is None else min_rows
    return max(min_rows, slice_bytes // (8 * max(n_features, 1)))


def scan_rows(n_features: int) -> int:
    """Rows of a slice of the element-wise passes (:data:`SCAN_SLICE_BYTES`, one row at least)."""
    return slice_rows(n_features, SCAN_SLICE_BYTES, 1)


def block_pieces(pieces, column_starts, centre=None):
    """The row slices of a row block: per slice, its float64 parts with their column ranges.

    ``pieces`` are the block's column chunks (dense arrays or SciPy sparse matrices); a sparse
    chunk comes whole (as CSR), dense chunks in slices of :func:`slice_rows` rows. With
    ``centre`` (one value per feature) each part comes less its features' ``centre``, as dense
    values: a sparse chunk is then densified, as a chunk of features far from 0 nearly is.
    """
    n_features = int(column_starts[-1])
    rows = pieces[0].shape[0]
    if centre is not None:
        pieces = [piece.toarray() if sparse.issparse(piece) else piece for piece in pieces]
    if any(sparse.issparse(piece) for piece in pieces):
        yield slice(0, rows), [(slice(int(a), int(b)), sparse.csr_matrix(piece) if sparse.issparse(piece)
                                else np.asarray(piece, dtype=np.float64))
                               for piece, a, b in zip(pieces, column_starts[:-1], column_starts[1:])]
        return
    step = slice_rows(n_features)
    # Chunks in another dtype are cast slice by slice into one float64 buffer per chunk, reused by
    # every slice of the block: a fresh array per slice was a fresh mmap and its page faults on
    # dask.distributed workers, whose MALLOC_TRIM_THRESHOLD_ keeps glibc from reusing freed memory
    # (a 2,000 x 4,000 float32 block took 38 ms there against 22 ms in a plain process).
    buffers = [None if piece.dtype == np.float64 and centre is None else np.empty((min(step, rows), int(b - a)))
               for piece, a, b in zip(pieces, column_starts[:-1], column_starts[1:])]
    for start in range(0, rows, step):
        part = slice(start, min(rows, start + step))
        size = part.stop - part.start
        parts = []
        for piece, buffer, a, b in zip(pieces, buffers, column_starts[:-1], column_starts[1:]):
            if buffer is None:
                values = np.asarray(piece[part])
            else:
                values = buffer[:size]
                np.copyto(values, piece[part])
                if centre is not None:
                    values -= centre[a:b]
            parts.append((slice(int(a), int(b)), values))
        yield part, parts


def local_threads():
    """Threads that run blocks at once in this process (Dask's default: one per core)."""
    try:
        import dask

        workers = dask.config.get("num_workers", None)
        if workers:
            return int(workers)
    except ImportError:
        pass
    return cores()
