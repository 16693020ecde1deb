"""Data sets in and out: the :class:`~core.data.dataset.Dataset` type and where data come from.

- :mod:`.dataset`: ``Dataset`` (samples x features, labels, names, image shape, feature family).
- :mod:`.loaders`: folders and ZIPs of images, and the entry for tables (:mod:`.tables`: CSV/TSV,
  Excel, Parquet, AnnData, NumPy, with orientation, labels and missing values).
- :mod:`.bundled`: the data sets shipped in ``assets/``.
- :mod:`.generators`: the papers' synthetic data sets, each with its ground truth.
- :mod:`.transforms`: values transformed before selection (``log1p``, per-feature z-scores).
- :mod:`.stores`: data on disk opened lazily (``.h5ad``, Zarr, ``.npy``) for the command line.
"""
