"""Data matrices of three kinds behind one entry: dense arrays, SciPy sparse matrices, Dask arrays.

:func:`data_matrix` validates a matrix once, where it enters a computation, and returns a
:class:`DataMatrix` that offers the column moments, the normalised features' products and a
dense copy where an algorithm needs one. Beneath it: :mod:`.kinds` (validation of the sparse and
chunked containers, row blocks), :mod:`.cluster` (where chunked passes run: a ``dask.distributed``
cluster, data held in memory), :mod:`.moments` (one-pass column statistics),
:mod:`.normalised` (Q-alpha's normalised features as products) and :mod:`.sample_vectors` (the
leading eigenvectors of their weighted Gram matrix, from those products). Beside them, what
several rooms above share: :mod:`.threads` (BLAS threads), :mod:`.neighbours` (nearest samples)
and :mod:`.kmeans` (k-means with seeded starts, and the agreement of two partitions).
"""

from .adapter import KINDS, DataMatrix, data_matrix, dense_matrix
from .cluster import connect_scheduler
from .moments import ColumnMoments

__all__ = ["KINDS", "ColumnMoments", "DataMatrix", "connect_scheduler", "data_matrix", "dense_matrix"]
