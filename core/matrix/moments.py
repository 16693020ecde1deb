"""Per-feature statistics of a data matrix in one pass: count, extremes, mean, centred sum of squares.

Dense arrays are read in cache-sized row slices, the rows split over the cores
(:func:`dense_moments`), SciPy sparse matrices in row blocks of about
:data:`~core.matrix.kinds.SPARSE_BLOCK_ENTRIES` stored values (implicit entries count as zeros),
Dask arrays one task per row block (:func:`~core.matrix.kinds.as_chunked_array`), combined in a
tree on the workers (:func:`~core.matrix.cluster.pass_over_blocks`). The partial
results combine by Chan et al.'s pairwise update, so no ``sum x^2 - n mean^2`` cancellation occurs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..errors import InputError
from ..validation import SQUARE_SAFE
from . import kinds
from .cluster import pass_over_blocks
from .kinds import as_chunked_array, as_sparse_matrix, is_chunked, is_sparse
from .threads import PARALLEL_VALUES, map_on_cores, row_ranges

__all__ = ["ColumnMoments", "column_moments", "class_moments", "dense_moments", "sliced_moments", "take_rows"]

@dataclass(frozen=True, eq=False)
class ColumnMoments:
    """Per-feature statistics of one pass: count, extremes, mean and centred sum of squares.

    ``centred`` is ``sum_i (x_ij - mean_j)^2``, combined across blocks by Chan et al.'s pairwise
    update, so no ``sum x^2 - n mean^2`` cancellation occurs.
    """

    count: int
    maximum: np.ndarray
    minimum: np.ndarray
    mean: np.ndarray
    centred: np.ndarray

    @property
    def variance(self) -> np.ndarray:
        return self.centred / self.count

    def combine(self, other: "ColumnMoments") -> "ColumnMoments":
        if self.count == 0:
            return other
        if other.count == 0:
            return self
        total = self.count + other.count
        delta = other.mean - self.mean
        return ColumnMoments(
            count=total,
            maximum=np.maximum(self.maximum, other.maximum),
            minimum=np.minimum(self.minimum, other.minimum),
            mean=self.mean + delta * (other.count / total),
            centred=self.centred + other.centred + delta**2 * (self.count * other.count / total),
        )

    def without(self, part: "ColumnMoments") -> "ColumnMoments":
        """The moments of these samples with ``part`` (a subset of them) taken out: the inverse of
        :meth:`combine` (one class against the rest from the overall and the class moments). The
        extremes stay those of the whole, which the inverse cannot recover."""
        count = self.count - part.count
        if count <= 0:
            raise ValueError("the part holds every sample: nothing is left")
        mean = (self.count * self.mean - part.count * part.mean) / count
        centred = self.centred - part.centred - (part.mean - mean) ** 2 * (part.count * count / self.count)
        return ColumnMoments(count, self.maximum, self.minimum, mean, np.maximum(centred, 0.0))


def _empty_moments(n_features):
    return ColumnMoments(0, np.full(n_features, -np.inf), np.full(n_features, np.inf), np.zeros(n_features),
                         np.zeros(n_features))


def _block_moments(block) -> ColumnMoments:
    """Moments of one block of rows (dense array or SciPy sparse matrix)."""
    rows, n_features = block.shape
    if rows == 0:
        return _empty_moments(n_features)
    if sparse.issparse(block):
        block = block.tocsr()
        values = block.data.astype(np.float64, copy=False)
        columns = block.indices
        stored = np.bincount(columns, minlength=n_features)
        mean = np.bincount(columns, weights=values, minlength=n_features) / rows
        maximum = np.full(n_features, -np.inf)
        minimum = np.full(n_features, np.inf)
        np.maximum.at(maximum, columns, values)
        np.minimum.at(minimum, columns, values)
        implicit = stored < rows  # columns with entries that are not stored: zeros
        maximum[implicit] = np.maximum(maximum[implicit], 0.0)
        minimum[implicit] = np.minimum(minimum[implicit], 0.0)
        # float even for a block without stored values (bincount of nothing counts in integers)
        centred = np.bincount(columns, weights=(values - mean[columns]) ** 2, minlength=n_features).astype(np.float64)
        centred += (rows - stored) * mean**2
        return ColumnMoments(rows, maximum, minimum, mean, centred)
    return sliced_moments(np.asarray(block), 0, rows)


def take_rows(X, rows, columns, out):
    """``X[rows][:, columns]`` (``columns`` None: all) into the float64 array ``out``, without a
    temporary when every column is taken."""
    if columns is None:
        np.copyto(out, X[rows])
    elif X.dtype == out.dtype:
        np.take(X[rows], columns, axis=1, out=out)
    else:  # take writes only its own dtype
        np.copyto(out, X[rows][:, columns])
    return out


def sliced_moments(X, start, stop, columns=None, inverse=None) -> ColumnMoments:
    """Moments of rows ``start:stop`` of the dense ``X`` (its ``columns``, each times ``inverse``
    if given), read in slices that stay in a core's cache (:data:`core.matrix.kinds.SCAN_SLICE_BYTES`),
    each slice's moments exact and the slices combined pairwise. Whole blocks took two float64
    temporaries of their size (a copy and the deviations) streamed through memory."""
    width = X.shape[1] if columns is None else len(columns)
    buffer = np.empty((min(kinds.scan_rows(width), max(stop - start, 1)), width))
    # combined pairwise, as a binary counter: (level, moments) with at most one entry per level,
    # so the rounding of the mean grows with log(slices), not with their number (one-row slices
    # of wide data, combined in turn, put 3,000 roundings into a mean near 1e6)
    stack = []
    for first in range(start, stop, buffer.shape[0]):
        rows = slice(first, min(stop, first + buffer.shape[0]))
        values = take_rows(X, rows, columns, buffer[:rows.stop - rows.start])
        if inverse is not None:
            values *= inverse
        maximum, minimum, mean = values.max(axis=0), values.min(axis=0), values.mean(axis=0)
        values -= mean
        level, part = 0, ColumnMoments(values.shape[0], maximum, minimum, mean, np.einsum("ij,ij->j", values, values))
        while stack and stack[-1][0] == level:
            part = stack.pop()[1].combine(part)
            level += 1
        stack.append((level, part))
    total = _empty_moments(width)
    for _, part in stack:
        total = total.combine(part)
    return total


def dense_moments(X, columns=None, inverse=None) -> ColumnMoments:
    """:func:`sliced_moments` of all rows of the dense ``X``, the rows split over the cores when
    ``X`` has at least :data:`PARALLEL_VALUES` values. One routine for Q-alpha's preparation and
    a :class:`~core.matrix.DataMatrix`'s statistics: the latter ran on one thread (60,000 x 4,000
    float32 on a 2-core Xeon: 0.77-1.0 s against about half that on both cores)."""
    starts, stops = row_ranges(X.shape[0], X.size >= PARALLEL_VALUES)
    parts = map_on_cores(lambda start, stop: sliced_moments(X, start, stop, columns, inverse), starts, stops,
                         blas=False)
    return functools.reduce(ColumnMoments.combine, parts)


def _block_class_moments(block, codes, n_classes):
    """Moments of the rows of each class within one block."""
    if sparse.issparse(block):
        block = block.tocsr()
    return [_block_moments(block[codes == c]) for c in range(n_classes)]


def _side_by_side(parts):
    """Moments of column ranges (the same rows) joined into the moments of all the columns."""
    return ColumnMoments(parts[0].count, *(np.concatenate([getattr(p, name) for p in parts])
                                           for name in ("maximum", "minimum", "mean", "centred")))


def _sparse_row_slices(X):
    """Row ranges of a CSR matrix holding about :data:`SPARSE_BLOCK_ENTRIES` stored values each."""
    bounds = np.searchsorted(X.indptr, np.arange(0, X.nnz + 1, kinds.SPARSE_BLOCK_ENTRIES), side="right") - 1
    bounds = np.unique(np.r_[0, bounds, X.shape[0]])
    return [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def _check_moments(moments, what):
    finite = np.isfinite(moments.maximum) & np.isfinite(moments.minimum)
    if not finite.all():
        first = int(np.argmin(finite))
        raise InputError(f"{what} contains NaN or infinite values ({int((~finite).sum()):,} feature(s), the first: "
                         f"feature {first}); impute or remove them first.")
    if not np.isfinite(moments.centred).all():
        raise InputError(f"{what} has values near {np.abs(moments.maximum).max():.3g}, whose squares overflow float64 "
                         f"(above about {SQUARE_SAFE:.0e}); divide the data by a constant first.")
    return moments


def column_moments(X, what: str = "X", memory_limit: int | None = None) -> ColumnMoments:
    """Per-feature count, extremes, mean and centred sum of squares in one pass over ``X``.

    ``X`` is a dense array, a SciPy sparse matrix (taken in row blocks; implicit entries count as
    zeros) or a Dask array (one task per row block). NaN or infinite values are refused.
    """
    return class_moments(X, None, what=what, memory_limit=memory_limit)[0]


def class_moments(X, codes, n_classes: int | None = None, what: str = "X",
                  memory_limit: int | None = None) -> list[ColumnMoments]:
    """:class:`ColumnMoments` of the rows of each class (``codes`` in ``0 .. n_classes - 1``), in one pass.

    With ``codes=None`` the list holds the moments of all rows. ``X`` is validated as its kind
    first; :meth:`core.matrix.DataMatrix.class_moments` passes data it has validated already.
    """
    if is_chunked(X):
        return moments_of("chunked", as_chunked_array(X, what, memory_limit), codes, n_classes, what)
    if is_sparse(X):
        return moments_of("sparse", as_sparse_matrix(X, what), codes, n_classes, what)
    return moments_of("dense", np.asarray(X, dtype=np.float64), codes, n_classes, what)


def _combine_groups(*parts):
    """Consecutive blocks' per-group moments as one list, group by group."""
    return [functools.reduce(ColumnMoments.combine, group) for group in zip(*parts)]


def moments_of(kind: str, source, codes, n_classes: int | None, what: str) -> list[ColumnMoments]:
    """The pass of :func:`class_moments` over validated data of one kind: a float64 array
    (``"dense"``), a float64 CSR matrix (``"sparse"``) or :class:`~core.matrix.kinds.RowBlocks`
    (``"chunked"``)."""
    n_groups = 1 if codes is None else int(n_classes)

    def reduce_block(block, block_codes):
        if block_codes is None:
            return [_block_moments(block)]
        return _block_class_moments(block, block_codes, n_groups)

    def reduce_pieces(pieces, block_codes):
        per_piece = [reduce_block(piece, block_codes) for piece in pieces]
        return [_side_by_side([moments[g] for moments in per_piece]) for g in range(n_groups)]

    if kind == "chunked":
        # the blocks' moments combined in a tree on the workers: one result crosses to the client
        # (per block, 4 float64 vectors of all features: 0.6 GB for 10^3 blocks of 20,000 genes)
        starts = source.row_starts
        parts = [pass_over_blocks(source, reduce_pieces, _combine_groups,
                                  arguments=lambda b: (None if codes is None else codes[starts[b]:starts[b + 1]],),
                                  label="column-moments")]
        n_features = source.array.shape[1]
    elif kind == "sparse":
        parts = [reduce_block(source[rows], None if codes is None else codes[rows])
                 for rows in _sparse_row_slices(source)]
        n_features = source.shape[1]
    else:
        parts = [[dense_moments(source if codes is None else source[codes == c]) for c in range(n_groups)]]
        n_features = source.shape[1]
    totals = [_empty_moments(n_features) for _ in range(n_groups)]
    for part in parts:
        totals = [total.combine(piece) for total, piece in zip(totals, part)]
    overall = totals[0]
    for piece in totals[1:]:
        overall = overall.combine(piece)
    _check_moments(overall, what)
    return totals
