"""One entry for the three kinds of data matrix: dense arrays, SciPy sparse matrices, Dask arrays.

:func:`data_matrix` is where data enter a computation. It asks once which kind it was given,
validates it as that kind (:func:`~core.validation.as_dense_array`,
:func:`~core.matrix.kinds.as_sparse_matrix`, :func:`~core.matrix.kinds.as_chunked_array`) and
returns a :class:`DataMatrix` that offers what the solvers need: the column moments, per-class
moments, the normalised features of Q-alpha as products ([WS03] Sec. 2), the variance of a set of
columns in a given unit, and a dense copy where an algorithm needs one (refused, with what to do,
for the kinds that must not be densified). The solvers never ask which kind they hold.

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..validation import as_dense_array, power_of_two_scale
from .cluster import hold_in_memory
from .kinds import as_chunked_array, as_sparse_matrix, is_chunked, is_sparse
from .moments import ColumnMoments, moments_of
from .normalised import OFFSET_LIMIT, ChunkedFeatures, DenseFeatures, ImplicitDenseFeatures, SparseFeatures

__all__ = ["DataMatrix", "data_matrix", "dense_matrix", "KINDS"]

#: The kinds of data matrix, as :attr:`DataMatrix.kind` names them.
KINDS = ("dense", "sparse", "chunked")

#: Sparse data with a feature past :data:`~core.matrix.normalised.OFFSET_LIMIT` are centred as a
#: dense copy where that copy takes at most this many times the sparse matrix's bytes (such
#: columns are nearly full anyway); chunked data are centred block by block.
DENSE_COPY_SHARE = 2.0


class DataMatrix:
    """A validated samples x features matrix of one of :data:`KINDS`. Build it with :func:`data_matrix`.

    Attributes
    ----------
    kind : str
        ``"dense"`` (a float64 NumPy array, or float32 as given: :meth:`dense` gives float64),
        ``"sparse"`` (float64 CSR) or ``"chunked"`` (a Dask array as row blocks within the memory
        limit).
    values
        The validated data: the array, the CSR matrix, or the Dask array (its row chunks merged).
    what : str
        The name messages use for these data (``"X"``, ``"side"``).
    placement : str
        For chunked data, where the passes read them and why (:func:`core.matrix.cluster.hold_in_memory`);
        "" for dense and sparse data, which are in memory.
    """

    def __init__(self, kind, values, what, *, blocks=None, placement=""):
        self.kind = kind
        self.values = values
        self.what = what
        self.placement = placement
        self._blocks = blocks  # the chunked kind's RowBlocks (values is their array)
        self._moments = None
        self._float64 = None  # the float64 copy of float32 dense data, made when asked for

    def __repr__(self):
        return f"DataMatrix({self.kind}, {self.shape[0]:,} samples x {self.shape[1]:,} features)"

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(int(size) for size in self.values.shape)

    def dense(self, refusal: str | None = None) -> np.ndarray:
        """The data as a float64 array; for sparse or chunked data ``InputError(refusal)``, which
        should say why the computation needs dense data and what to pass instead (by default: that
        this function needs a dense array, and how to make one)."""
        if self.kind == "dense":
            if self.values.dtype == np.float64:
                return self.values
            if self._float64 is None:
                # made once and handed to every caller of this matrix: read-only, so none can change it for the others
                self._float64 = np.asarray(self.values, dtype=np.float64)
                self._float64.flags.writeable = False
            return self._float64
        if refusal is None:
            refusal = (f"{self.what} is a sparse matrix; this function needs a dense array ({self.what}.toarray())."
                       if self.kind == "sparse" else
                       f"{self.what} is a Dask array; this function needs the data in memory as a dense array "
                       f"({self.what}.compute(), or a subset of it).")
        raise InputError(refusal)

    def submatrix(self, rows, columns) -> np.ndarray:
        """The given rows and columns (index arrays) as a dense float64 array: what a caller may
        densify of data too large to hold whole."""
        rows, columns = np.asarray(rows), np.asarray(columns)
        if self.kind == "dense":
            return np.asarray(self.values[np.ix_(rows, columns)], dtype=np.float64)
        part = self.values[rows][:, columns]
        if self.kind == "chunked":
            part = part.compute()
        return np.asarray(part.toarray() if hasattr(part, "toarray") else part, dtype=np.float64)

    def unit_scale(self) -> float:
        """A power of two to divide the data by so that their squares stay finite (1 for most data;
        sparse and chunked data are refused by their moments' pass instead, which reports where)."""
        return power_of_two_scale(self.values) if self.kind == "dense" else 1.0

    def rescaled(self, scale: float) -> "DataMatrix":
        """The data divided by ``scale`` (from :meth:`unit_scale`, so 1 for sparse and chunked data)."""
        if scale == 1.0:
            return self
        return DataMatrix(self.kind, self.values / scale, self.what, blocks=self._blocks, placement=self.placement)

    def moments(self) -> ColumnMoments:
        """Per-feature count, extremes, mean and centred sum of squares (one pass; kept)."""
        if self._moments is None:
            self._moments = self.class_moments(None)[0]
        return self._moments

    def class_moments(self, codes, n_classes: int | None = None) -> list[ColumnMoments]:
        """:class:`~core.matrix.moments.ColumnMoments` of the rows of each class (``codes`` in
        ``0 .. n_classes - 1``; ``None``: one group of all rows), in one pass."""
        # validated once, in data_matrix: the pass reads the data as they are
        return moments_of(self.kind, self._blocks if self.kind == "chunked" else self.values, codes, n_classes,
                          self.what)

    def normalised(self, dtype=np.float64, stored=False):
        """The features centred over the samples and scaled to unit norm ([WS03] Sec. 2), as the
        products of :mod:`core.matrix.normalised`: stored for dense data (in ``dtype``), implicit
        (a rank-one correction and a diagonal on the raw products) for sparse and chunked data and
        for dense float32 data in float64, whose stored copy would take twice their bytes
        (``stored=True`` stores it anyway: the gap criterion reads ``Mt`` itself)."""
        if self.kind == "dense":
            if self.values.dtype == np.float32 and np.dtype(dtype) == np.float64 and not stored:
                return ImplicitDenseFeatures(self.values, self.moments())
            return DenseFeatures(self.values, dtype)
        if np.dtype(dtype) != np.float64:
            raise InputError("dtype sets the precision of a dense copy; sparse and chunked data are used as they are, "
                             "with float64 products. Leave dtype out.")
        if self.kind == "sparse":
            features = SparseFeatures(self.values, self.moments())
            stored_bytes = self.values.data.nbytes + self.values.indices.nbytes + self.values.indptr.nbytes
            if (features.offset_ratio() > OFFSET_LIMIT
                    and 8 * self.shape[0] * self.shape[1] <= DENSE_COPY_SHARE * stored_bytes):
                return DenseFeatures(self.values.toarray())
            return features
        return ChunkedFeatures(self._blocks, self.moments())

    def exact_normalised(self):
        """:meth:`normalised` in float64 without a stored copy for dense data (products with the
        data themselves, as given): what a float32 run is checked against."""
        if self.kind == "dense":
            return ImplicitDenseFeatures(self.values, self.moments())
        return self.normalised()

    def scaled_variance(self, columns, scale) -> np.ndarray:
        """The variance over the samples of the given columns, each divided by ``scale``
        (``var(x_j / scale_j)``). On dense data the division comes first, so no square can overflow."""
        if self.kind == "dense":
            return (self.values[:, columns] / scale).var(axis=0)
        return self.moments().variance[columns] / np.asarray(scale, dtype=np.float64) ** 2


def data_matrix(X, what: str = "X", *, memory_limit: int | None = None, persist: bool | None = None) -> DataMatrix:
    """``X`` validated as the kind of matrix it is: the one place where the kinds are told apart.

    Parameters
    ----------
    X : array-like, scipy.sparse matrix, dask.array.Array or DataMatrix
        Samples x features. Dense input is converted to float64 (float32 is kept as given) and
        must be finite; a sparse matrix becomes float64 CSR with finite stored values (never
        densified); a Dask array is
        checked against ``memory_limit`` (its values are checked as the first pass reads them).
        A :class:`DataMatrix` is returned as it is.
    what : str
        The name messages use (``"X"``, ``"side"``, ``"pairs[0]"``).
    memory_limit : int, optional
        Bytes the row blocks of a Dask array may take at once (half the machine's memory by default).
    persist : bool or None
        Whether a Dask array is held in memory for the passes to come (:func:`core.matrix.cluster.hold_in_memory`;
        ``None``: on a ``dask.distributed`` cluster when it fits, else not); :attr:`DataMatrix.placement`
        says what was done and why. Ignored for other kinds and for a :class:`DataMatrix`.

    Raises
    ------
    InputError
        Whatever the kind's validation refuses, with what to do about it.
    """
    if isinstance(X, DataMatrix):
        return X
    if is_sparse(X):
        return DataMatrix("sparse", as_sparse_matrix(X, what), what)
    if is_chunked(X):
        blocks, placement = hold_in_memory(as_chunked_array(X, what, memory_limit), persist)
        return DataMatrix("chunked", blocks.array, what, blocks=blocks, placement=placement)
    # float32 kept: the normalised features take their products with it slice by slice in float64
    # (a whole float64 copy first was 2.9 of the 7.5 s before Q-alpha's first iteration at 60,000 x 4,000)
    return DataMatrix("dense", as_dense_array(X, what, keep_float32=True), what)


def dense_matrix(X, what: str = "X") -> np.ndarray:
    """``X`` as a finite float64 array, for the computations that need every value in memory
    (sparse LDA, SDR-SI, kernel Q-alpha, most baselines); sparse matrices and Dask arrays are
    refused with how to make a dense array of them."""
    return data_matrix(X, what).dense()
