"""The normalised features of Q-alpha as products, for dense, sparse and chunked (Dask) data.

Q-alpha ([WS03] Sec. 2) centres every feature over the samples and scales it to unit norm; a
feature that does not vary is left out. Its iteration touches the data only through products of
the normalised ``q x n`` matrix ``Mt`` (the papers' ``M`` transposed) with a few vectors:

* ``times(W) = Mt W`` (``q x k``) and ``transposed_times(T) = T^T Mt`` (``k x n``);
* ``fused(W)``: both at once, ``T = Mt W`` and ``U = T^T Mt``, in one pass over the data;
* ``weighted_gram(w) = Mt diag(w) Mt^T`` (``q x q``, for few samples) and ``gram() = Mt^T Mt``.

:class:`DenseFeatures` stores ``Mt``. :class:`SparseFeatures`, :class:`ChunkedFeatures` and
:class:`ImplicitDenseFeatures` (float32 arrays in memory) never form it: with ``Mt = (X - 1 mean^T) diag(1 / scale)``,
``Mt W = X (W / scale) - 1 (mean^T (W / scale))`` and
``T^T Mt = ((X^T T)^T - (T^T 1) mean^T) / scale``, so a product costs what the same product with
the raw ``X`` costs. The chunked form maps one function over row blocks that span all features:
``T_b = X_b W' - 1 c^T`` and ``X_b^T T_b`` need only block ``b``, so ``fused`` reads the data once.

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .cluster import pass_over_blocks
from .kinds import BLOCK_TARGET_BYTES, block_pieces, scan_rows
from .moments import dense_moments, take_rows
from ..validation import SQUARE_SAFE
from .threads import PARALLEL_VALUES, SMALL_PRODUCT_WORK, cores, map_on_cores, one_thread_holders, row_ranges

__all__ = ["preprocess_features", "DenseFeatures", "SparseFeatures", "ChunkedFeatures",
           "ImplicitDenseFeatures", "CONSTANT_RESOLUTION"]

#: A feature whose range is below this fraction of its magnitude is constant in float64 (64 ulps).
CONSTANT_RESOLUTION = 64 * np.finfo(np.float64).eps
#: A feature whose mean is this many standard deviations from 0 or more loses about ``eps`` times
#: the ratio in a product centred by a rank-one correction, and its square in a weighted Gram
#: matrix (CSR values 1e8 + N(0, 1): every digit; Q-alpha found none of 8 planted features).
#: Past it sparse data are centred as a dense copy (:mod:`core.matrix.adapter`) and chunked data
#: block by block (:class:`ChunkedFeatures`).
OFFSET_LIMIT = 1e3
#: Bytes the column blocks of a weighted Gram matrix may take at once (every core's part and its
#: scaled copy).
GRAM_BLOCK_BYTES = 32 << 20
#: Columns in a block of a weighted Gram matrix at most: BLAS's symmetric update wants hundreds
#: (fewer, at 1,440 x 1,024: 94-106 ms at 256-512 against 93 at 1,024), and more than this only
#: stream it through memory (100 x 200,000: 97 ms at 2,600 against 88 at 1,024; 2-core AMD EPYC).
GRAM_BLOCK_COLUMNS = 1024
#: Multiply-adds (``q^2 n / 2``) of a weighted Gram matrix from which its columns are split over the
#: cores: it does ``q / 2`` of them per value read, so it pays far below a thin pass's
#: PARALLEL_VALUES (100 x 20,000: 4.3 against 8.0 ms; 100 x 2,000: 0.61 against 0.78; 62 x 2,000,
#: 3.8e6 of them: the same; 2-core AMD EPYC, one BLAS thread).
GRAM_PARALLEL_WORK = 4e6
#: A thin pass over dense data is split by columns over the cores where each core's part of a row
#: takes at least this many bytes: on 2,600 x 1,200 and 1,000 x 4,000 (rows cut to 5-16 kB) the
#: split took 1.1-1.2x the time of one BLAS thread, on 100 x 20,000 (80 kB) 0.9x, on 100 x 200,000
#: (800 kB) 0.65x.
SPLIT_ROW_BYTES = 64 << 10
#: ``M^T W`` with at most this many columns in ``W`` is one matrix-vector product per column over
#: blocks of GEMV_BLOCK of Mt's columns, where Mt has at least GEMV_VALUES values. Against one
#: general product, one BLAS thread / BLAS's own threads, 2-core AMD EPYC: 100 x 200,000 at k = 2
#: 0.59 / 0.69 of the time (13.7 against 23.4 ms on one thread), k = 3 0.53 (one thread), k = 4
#: 0.90 / 1.05; 100 x 20,000, 2,600 x 1,200, 1,000 x 4,000 and 700 x 765 at k = 2 0.31-0.53,
#: at k = 4 0.68-1.11; 60 x 150 at k = 2 1.45.
GEMV_COLUMNS, GEMV_BLOCK, GEMV_VALUES = 3, 8192, 1 << 16


def no_spread(top, bottom):
    """Features with no spread, or a spread at the resolution of their values (data offset by 1e16
    differ only by rounding), which carries no direction. Decided on max - min, which cannot cancel
    as sum(x^2) - n mean^2 does (a pixel fixed at 15/255 came out "varying")."""
    magnitude = np.maximum(np.abs(top), np.abs(bottom))
    return (top - bottom) <= CONSTANT_RESOLUTION * magnitude


def _slices(start, stop, n_columns):
    step = scan_rows(n_columns)
    return (slice(a, min(stop, a + step)) for a in range(start, stop, step))


def preprocess_features(X, dtype=np.float64):
    """Centre every feature over the samples and scale it to unit norm ([WS03] Sec. 2).

    Parameters
    ----------
    X : ndarray, shape (n_samples, n_features)
        float64, or float32 (read slice by slice into float64: no whole copy).

    Returns
    -------
    Mt : ndarray, shape (n_samples, n_kept)
        The normalised kept features (the transpose of the papers' ``M``), C-contiguous.
    kept : ndarray of int
        Indices of the kept (non-constant) features.
    mean, scale : ndarray, shape (n_kept,)
        What was subtracted and divided, so other data (side data, pairs) can be mapped alike.

    Notes
    -----
    Two reads of ``X`` in row slices that stay in a core's cache, the rows split over the cores:
    the extremes, mean and centred sum of squares (per slice exactly, combined by Chan et al.'s
    pairwise update); then ``Mt`` written once. Whole-array steps streamed the data through memory
    nine times (20,000 x 4,000 on a 2-core Xeon: 0.67-0.73 s, now 0.29-0.41 s). Where a feature's
    magnitude is outside ``[1e-100, SQUARE_SAFE]`` (squares that would overflow, or a spread that
    would underflow) the moments are read again with every feature divided by its magnitude,
    which the unit norm removes again.
    """
    overall = dense_moments(X)
    mean, centred, top, bottom = overall.mean, overall.centred, overall.maximum, overall.minimum
    kept = np.flatnonzero(~no_spread(top, bottom))
    columns = None if kept.size == X.shape[1] else kept
    magnitude = np.maximum(np.abs(top), np.abs(bottom))[kept]
    if np.all((magnitude >= 1e-100) & (magnitude <= SQUARE_SAFE)):
        mean, centred, magnitude = mean[kept], centred[kept], np.ones(kept.size)
    else:
        scaled = dense_moments(X, columns, 1.0 / magnitude)
        mean, centred = scaled.mean, scaled.centred
    scale = np.sqrt(centred)
    Mt = np.empty((X.shape[0], kept.size), dtype=dtype)
    # Mt = (X / magnitude - mean) / scale, as one product and one shift
    factor, offset = 1.0 / (magnitude * scale), mean / scale

    def normalise(start, stop):
        in_place = columns is None and dtype == np.float64
        buffer = None if in_place else np.empty((scan_rows(kept.size), kept.size))
        for rows in _slices(start, stop, kept.size):
            values = Mt[rows] if buffer is None else buffer[:rows.stop - rows.start]
            take_rows(X, rows, columns, values)
            values *= factor
            values -= offset
            if buffer is not None:
                Mt[rows] = values

    map_on_cores(normalise, *row_ranges(X.shape[0], X.size >= PARALLEL_VALUES), blas=False)
    return Mt, kept, mean * magnitude, scale * magnitude


class DenseFeatures:
    """The normalised features stored as the dense ``q x n_kept`` array ``Mt``."""

    #: products read ``Mt`` in memory: cheap against a solver's own work
    reads_data_per_product = False

    def __init__(self, X, dtype=np.float64):
        self.Mt, self.kept, self.mean, self.scale = preprocess_features(X, dtype=dtype)
        self.n_samples, self.n_total = X.shape
        self.dtype = self.Mt.dtype

    @property
    def n_kept(self):
        return self.kept.size

    def times(self, W):
        Mt = self.Mt
        if W.ndim != 2 or W.shape[1] > GEMV_COLUMNS or Mt.size < GEMV_VALUES or Mt.dtype != W.dtype:
            return Mt @ W
        # one matrix-vector product per column over blocks of Mt's columns: OpenBLAS's general
        # product reduces along the rows' length at half the memory's rate for so thin a W
        Wt = np.ascontiguousarray(W.T)
        out = np.zeros((Wt.shape[0], Mt.shape[0]), dtype=Mt.dtype)
        for start in range(0, Mt.shape[1], GEMV_BLOCK):
            block = Mt[:, start:start + GEMV_BLOCK]
            for row, column in zip(out, Wt[:, start:start + GEMV_BLOCK]):
                row += block @ column
        return out.T

    def transposed_times(self, T):
        Mt = self.Mt
        if (Mt.size < PARALLEL_VALUES or Mt.shape[1] * Mt.itemsize < SPLIT_ROW_BYTES * cores()
                or not one_thread_holders()):
            return T.T @ Mt
        # wide data while BLAS runs on one thread (as the ascent runs: its Gram matrix splits
        # itself): column ranges over the cores, 15-18 ms on 100 x 200,000 at k = 2 against 9-12
        # split, 19-22 against 10-12 at k = 8; with BLAS's own threads, no faster. By columns, not
        # by rows as fused splits: the rows' k x n partial products, summed, took 13.5 ms at k = 8
        # (2-core AMD EPYC)
        Tt = np.ascontiguousarray(T.T)
        out = np.empty((Tt.shape[0], Mt.shape[1]), dtype=np.result_type(Tt, Mt))

        def columns(start, stop):
            np.matmul(Tt, Mt[:, start:stop], out=out[:, start:stop])

        map_on_cores(columns, *row_ranges(Mt.shape[1]))
        return out

    def fused(self, W):
        Mt = self.Mt
        if Mt.dtype != np.float64 or Mt.size * W.shape[1] < SMALL_PRODUCT_WORK:
            T = Mt @ W
            return T, T.T @ Mt
        # Both products in one read of Mt: row slices that stay in a core's cache, the row range
        # split over the cores (20,000 x 4,000 on a 2-core Xeon: 96-159 ms for k = 4-14 against
        # 150-194 ms for two whole products, which stream Mt from memory twice).
        W = np.asarray(W, dtype=np.float64)
        columns, shift = np.array([0, Mt.shape[1]]), np.zeros(W.shape[1])
        parts = map_on_cores(lambda start, stop: _block_products([Mt[start:stop]], columns, W, shift, True),
                             *row_ranges(Mt.shape[0]))
        return _join_products(*parts)

    def weighted_gram(self, weights, block_bytes=GRAM_BLOCK_BYTES):
        return _weighted_gram_by_columns(lambda start, stop: self.Mt[:, start:stop], self.Mt.shape[0],
                                         self.Mt.shape[1], weights, block_bytes // self.Mt.itemsize)

    def gram(self):
        return self.Mt.T @ self.Mt

    def rows(self, index):
        return self.Mt[index]


class _ImplicitFeatures:
    """What the sparse and the chunked forms share: the statistics and the rank-one corrections."""

    dtype = np.dtype(np.float64)
    Mt = None  # never formed

    def _set_statistics(self, moments, n_samples, n_total):
        self.n_samples, self.n_total = n_samples, n_total
        self.kept = np.flatnonzero(~no_spread(moments.maximum, moments.minimum))
        self.mean = moments.mean[self.kept]
        self.scale = np.sqrt(moments.centred[self.kept])
        # a feature whose spread underflows is as constant as one without spread
        usable = self.scale > 0
        self.kept, self.mean, self.scale = self.kept[usable], self.mean[usable], self.scale[usable]

    @property
    def n_kept(self):
        return self.kept.size

    def offset_ratio(self) -> float:
        """The largest ``|mean| / std`` of a kept feature: how many digits the rank-one centring
        of a product loses (its square, for a weighted Gram matrix)."""
        if self.kept.size == 0:
            return 0.0
        return float(np.max(np.abs(self.mean) * np.sqrt(self.n_samples) / self.scale))

    def _raw_weights(self, W):
        """``W`` (n_kept x k) mapped to raw features, and the shift ``mean^T W'`` of the centring."""
        full = np.zeros((self.n_total, W.shape[1]))
        full[self.kept] = W / self.scale[:, None]
        return full, (np.zeros(W.shape[1]) if self.centred_in_blocks else self.mean @ full[self.kept])

    #: the means the products subtract from the values before multiplying (exact), or None where
    #: a rank-one correction after them centres the products
    _centre = None

    @property
    def centred_in_blocks(self) -> bool:
        return self._centre is not None

    def _finish(self, raw_product, column_sums):
        """``T^T Mt`` from ``(X^T T)^T`` and ``T^T 1``."""
        if self.centred_in_blocks:
            return raw_product[:, self.kept] / self.scale
        return (raw_product[:, self.kept] - np.outer(column_sums, self.mean)) / self.scale

    def times(self, W):
        return self.fused(W, transposed=False)[0]

    def transposed_times(self, T):
        raw = self._raw_transposed(np.asarray(T, dtype=np.float64))
        return self._finish(raw, T.sum(axis=0))

    def weighted_gram(self, weights):
        """``Mt diag(weights) Mt^T`` from batches of dense rows (one pass per batch)."""
        q = self.n_samples
        A = np.empty((q, q))
        batch = max(1, min(q, BLOCK_TARGET_BYTES // (8 * max(self.n_kept, 1))))
        for start in range(0, q, batch):
            index = np.arange(start, min(q, start + batch))
            A[:, index] = self.times(weights[:, None] * self.rows(index).T)
        return (A + A.T) / 2

    def gram(self):
        """``Mt^T Mt`` from batches of unit vectors (one pass per batch)."""
        n = self.n_kept
        G = np.empty((n, n))
        batch = max(1, min(n, BLOCK_TARGET_BYTES // (8 * self.n_samples)))
        for start in range(0, n, batch):
            index = np.arange(start, min(n, start + batch))
            unit = np.zeros((n, index.size))
            unit[index, np.arange(index.size)] = 1.0
            G[index] = self.fused(unit)[1]
        return (G + G.T) / 2

    def rows(self, index):
        dense = self._raw_rows(np.asarray(index))
        return (dense[:, self.kept] - self.mean) / self.scale


class SparseFeatures(_ImplicitFeatures):
    """Normalised features of a SciPy sparse matrix, never densified (products with the CSR ``X``).

    ``X`` is a validated float64 CSR matrix and ``moments`` its :class:`~core.matrix.moments.ColumnMoments`
    (both from :func:`core.matrix.data_matrix`).
    """

    reads_data_per_product = True

    def __init__(self, X, moments):
        self.X = X
        self._set_statistics(moments, *self.X.shape)

    def fused(self, W, transposed=True):
        raw_weights, shift = self._raw_weights(np.asarray(W, dtype=np.float64))
        T = self.X @ raw_weights
        T -= shift
        if not transposed:
            return T, None
        return T, self._finish(self._raw_transposed(T), T.sum(axis=0))

    def _raw_transposed(self, T):
        return (self.X.T @ T).T

    def _raw_rows(self, index):
        return self.X[index].toarray()

    def weighted_gram(self, weights):
        """``Mt diag(w) Mt^T`` from sparse products: with ``d = w / scale^2`` on the kept columns,
        ``X diag(d) X^T - u 1^T - 1 u^T + (mean^T diag(d) mean) 1 1^T``, ``u = X diag(d) mean``.
        No row of ``X`` is made dense (batches of dense rows took 3 x 64 MB on any sparse input)."""
        d = np.zeros(self.n_total)
        d[self.kept] = np.asarray(weights, dtype=np.float64) / self.scale**2
        shifted = np.zeros(self.n_total)
        shifted[self.kept] = d[self.kept] * self.mean
        product = self.X.multiply(d[None, :]).tocsr() @ self.X.T
        A = product.toarray() if sparse.issparse(product) else np.asarray(product)
        u = self.X @ shifted
        A -= u[:, None]
        A -= u[None, :]
        A += float(self.mean @ shifted[self.kept])
        return (A + A.T) / 2


class ImplicitDenseFeatures(_ImplicitFeatures):
    """Normalised features of a dense ``X`` (float64 or float32, as given) as products with ``X``
    itself, slice by slice, the rows split over the cores: no normalised copy.

    Q-alpha takes them for float32 data, where the stored ``Mt`` would be a float64 copy of twice
    the input's bytes: a float32 slice is read in half the bytes and cast in the cache. Measured
    in one run on a 2-core Xeon, Q-alpha on 60,000 x 4,000 float32 (k = 4): an iteration 0.344-0.360
    s against 0.329-0.332 s over the stored ``Mt`` (the cast costs a little more than the bytes
    save), the time to the first report 1.5 s against 2.8 s (writing ``Mt`` was 0.5-1.5 s of fresh
    memory), and 1.9 GB less memory. The rank-one correction of the centring loses about ``eps *
    |mean| / std`` of a product: in float64 arithmetic on float32 values that is 2^-29 of the
    values' own resolution. Float64 data keep the stored ``Mt``: their offsets can be far beyond
    that. Also the exact float64 products that check a run made in float32.
    """

    #: products read ``X`` in memory, as :class:`DenseFeatures` reads ``Mt``
    reads_data_per_product = False

    def __init__(self, X, moments):
        self.X = X
        self._set_statistics(moments, *X.shape)
        self._columns = np.array([0, X.shape[1]])

    def _ranges(self, width):
        return row_ranges(self.X.shape[0], self.X.size * max(width, 1) >= SMALL_PRODUCT_WORK)

    def fused(self, W, transposed=True):
        raw_weights, shift = self._raw_weights(np.asarray(W, dtype=np.float64))
        parts = map_on_cores(lambda start, stop: _block_products([self.X[start:stop]], self._columns, raw_weights, shift,
                                                                 transposed), *self._ranges(raw_weights.shape[1]))
        T, raw = _join_products(*parts)
        return T, (None if raw is None else self._finish(raw, T.sum(axis=0)))

    def _raw_transposed(self, T):
        starts, stops = self._ranges(T.shape[1])
        parts = map_on_cores(lambda start, stop: _block_transposed([self.X[start:stop]], self._columns, T[start:stop]),
                             starts, stops)
        return _sum_arrays(*parts)

    def _raw_rows(self, index):
        return np.asarray(self.X[index], dtype=np.float64)

    def _normalised_columns(self, start, stop):
        """Kept features ``start:stop`` normalised, ``Mt[:, start:stop]`` (centred exactly: no
        rank-one correction)."""
        values = np.asarray(self.X[:, self.kept[start:stop]], dtype=np.float64)
        values -= self.mean[start:stop]
        values /= self.scale[start:stop]
        return values

    def weighted_gram(self, weights, block_bytes=GRAM_BLOCK_BYTES):
        # as the stored form sums it: batches of rows as products took five n x batch float64
        # arrays (200 x 50,000 float32: 194 MB beyond the data)
        return _weighted_gram_by_columns(self._normalised_columns, self.n_samples, self.n_kept, weights,
                                         block_bytes // 8)

    def gram(self, block_bytes=GRAM_BLOCK_BYTES):
        """``Mt^T Mt`` (n x n) from blocks of normalised rows of at most ``block_bytes``."""
        batch = max(1, block_bytes // (8 * max(self.n_kept, 1)))
        G = np.zeros((self.n_kept, self.n_kept))
        for start in range(0, self.n_samples, batch):
            part = self.rows(np.arange(start, min(self.n_samples, start + batch)))
            G += part.T @ part
        return G


def _weighted_gram_by_columns(columns, n_samples, n_kept, weights, block_values):
    """``Mt diag(weights) Mt^T`` (q x q) summed over blocks of normalised columns,
    ``columns(start, stop) = Mt[:, start:stop]``, of at most ``block_values`` values each, so no
    ``q x n`` temporary is made (blocks of 65,536 columns were a whole copy of 50,000 features).

    Each block's term is ``B B^T`` with ``B = part sqrt(|w|)``, which BLAS sums as a symmetric
    rank-k update (half the multiply-adds of a general product: 100 x 200,000 in 65 ms against
    102 on one thread of a 2-core AMD EPYC), less ``2 B_- B_-^T`` over the columns of negative
    weight where there are any: Q-alpha's ascent puts small negative weights on a few hundred to
    a few thousand of 200,000 features, and a general product for every block that had one took
    1.4x the time. A block with more than a quarter of its weights negative is one general product.
    The column range is split over the cores from :data:`GRAM_PARALLEL_WORK` on."""
    ranges = row_ranges(n_kept, n_samples * n_samples * n_kept / 2 >= GRAM_PARALLEL_WORK)
    # the block budget is shared by the cores' blocks, each a normalised part and its scaled copy
    block = max(1, min(GRAM_BLOCK_COLUMNS, block_values // (2 * len(ranges[0]) * max(n_samples, 1))))
    root = np.sqrt(np.abs(weights))
    negative = np.flatnonzero(weights < 0)
    if len(ranges[0]) == 1 and n_kept <= block:
        # one block on this thread, without the blocks' bookkeeping: 22-34 us against 56-64 on
        # 56 x 81 (the audit's problems, where the ascent forms one at every evaluation)
        return _block_gram(columns(0, n_kept), weights, root, negative)

    def summed(first, last):
        A = np.zeros((n_samples, n_samples), dtype=np.float64)
        for start in range(first, last, block):
            stop = min(last, start + block)
            below, above = np.searchsorted(negative, (start, stop))
            A += _block_gram(columns(start, stop), weights[start:stop], root[start:stop],
                             negative[below:above] - start)
        return A

    return _sum_arrays(*map_on_cores(summed, *ranges))


def _block_gram(part, weights, root, negative):
    """``part diag(weights) part^T`` for one block of columns, ``root = sqrt(|weights|)`` and
    ``negative`` the block's columns of negative weight (:func:`_weighted_gram_by_columns`)."""
    if 4 * negative.size > part.shape[1]:  # the update and its correction would cost more
        return np.multiply(part, weights, dtype=np.float64) @ part.T
    scaled = np.multiply(part, root, dtype=np.float64)
    gram = scaled @ scaled.T
    if negative.size:
        lowered = scaled[:, negative]
        gram -= 2.0 * (lowered @ lowered.T)
    return gram


def _block_products(pieces, column_starts, raw_weights, shift, transposed, centre=None):
    """``T_b = X_b W' - 1 shift^T`` and, if asked, ``(X_b^T T_b)^T`` of one row block, slice by slice
    (``X_b`` less ``centre`` where given, :func:`~core.matrix.kinds.block_pieces`).

    ``(X_s^T T_s)^T`` is formed as ``T_s^T X_s``: the same sums, and OpenBLAS runs the thin
    product 1.4x faster this way round (14.8 against 20.8 ms over a 2,000 x 4,000 block, k = 4)."""
    T = np.empty((pieces[0].shape[0], raw_weights.shape[1]))
    U = np.zeros((raw_weights.shape[1], int(column_starts[-1]))) if transposed else None
    for rows, parts in block_pieces(pieces, column_starts, centre):
        product = -shift
        for columns, values in parts:
            product = product + values @ raw_weights[columns]
        T[rows] = product
        if transposed:
            for columns, values in parts:
                U[:, columns] += product.T @ values
    return T, U


def _block_transposed(pieces, column_starts, T, centre=None):
    """``(X_b^T T_b)^T`` of one row block (``X_b`` less ``centre`` where given)."""
    U = np.zeros((T.shape[1], int(column_starts[-1])))
    for rows, parts in block_pieces(pieces, column_starts, centre):
        for columns, values in parts:
            U[:, columns] += T[rows].T @ values
    return U


def _sum_arrays(*arrays):
    total = arrays[0].copy()
    for array in arrays[1:]:
        total += array
    return total


def _join_products(*pairs):
    """Consecutive blocks' ``(T_b, U_b)`` as one pair: the T rows in order, the U summed (None
    when the pass has no transposed product)."""
    T = np.concatenate([pair[0] for pair in pairs])
    U = None if pairs[0][1] is None else _sum_arrays(*[pair[1] for pair in pairs])
    return T, U


class ChunkedFeatures(_ImplicitFeatures):
    """Normalised features of a Dask array (dense or with sparse chunks), one task per row block.

    With a ``dask.distributed`` client active, the passes run on its workers. Where a feature's
    mean is :data:`OFFSET_LIMIT` standard deviations from 0 or more, each block's values are
    centred before the products instead of by the rank-one correction after them, which would lose
    the digits of the offset (values 1e8 + N(0, 1): Q-alpha's weights 2.8e-6 from the ndarray
    run's, against 1.4e-9 centred, the values' own resolution); sparse chunks are then densified
    block by block.
    """

    reads_data_per_product = True

    def __init__(self, blocks, moments):
        self.blocks = blocks
        self._set_statistics(moments, *blocks.array.shape)
        self._starts = self.blocks.row_starts
        self._columns = self.blocks.column_starts
        if self.offset_ratio() > OFFSET_LIMIT:
            self._centre = np.zeros(self.n_total)
            self._centre[self.kept] = self.mean

    def fused(self, W, transposed=True):
        raw_weights, shift = self._raw_weights(np.asarray(W, dtype=np.float64))
        centre = self._centre
        # one tree carries each block's (T_b, U_b) to the client: on a cluster every task costs the
        # scheduler about 3 ms, and taking T and U apart was two getitem tasks per block
        T, raw = pass_over_blocks(self.blocks, _block_products, _join_products, (raw_weights,),
                                   lambda block, weights: (self._columns, weights, shift, transposed, centre))
        return T, (None if raw is None else self._finish(raw, T.sum(axis=0)))

    def _raw_transposed(self, T):
        return pass_over_blocks(self.blocks, _block_transposed, _sum_arrays, (),
                                 lambda block: (self._columns, T[self._starts[block]:self._starts[block + 1]],
                                                self._centre))

    def _raw_rows(self, index):
        rows = self.blocks.array[index].compute()
        return rows.toarray() if sparse.issparse(rows) else np.asarray(rows, dtype=np.float64)
