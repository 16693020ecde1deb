"""Spectral feature selection: Q-alpha (Wolf & Shashua) and greedy sparse LDA/PCA (Moghaddam,
Weiss & Avidan), with their data model, loaders, feature families, baselines and evaluations.

A plain library (nothing here imports Streamlit). The names a user needs come from here::

    from core import load_dataset, q_alpha, greedy_slda, rank_features

and are loaded on first use, so ``import core`` stays light. The rooms behind them, each
depending only on those listed before it:

- ``core.errors``, ``core.progress``, ``core.validation``, ``core.limits``: what every room shares.
- ``core.matrix``: one entry for dense, sparse and chunked (Dask) data matrices.
- ``core.data``: the :class:`Dataset` type, loaders for images and tables, bundled and generated sets, stores on disk.
- ``core.features``: feature families (Haar wavelets, Haar-like features) built from images.
- ``core.selection``: Q-alpha and its kernel, side-information and topographic forms; greedy sparse
  LDA/PCA; SDR-SI; the baselines; scikit-learn selectors.
- ``core.evaluation``: clustering and classification measures, stability, selection curves,
  per-class statistics of features (markers).
- ``core.plots``: Plotly figures from arrays.
- ``core.cli``: ``python -m core``, selection from the command line for data too big for a browser.
"""

from __future__ import annotations

import importlib

from .data.dataset import Dataset
from .errors import InputError, Stopped
from .progress import Progress

__version__ = "0.1.0"

#: Public name -> the module that defines it (imported on first use, PEP 562).
_PUBLIC = {
    # data
    "load_dataset": "core.data.bundled", "list_datasets": "core.data.bundled",
    "load_images": "core.data.loaders", "load_table": "core.data.loaders", "load_side_data": "core.data.loaders",
    "LoadLimits": "core.limits", "open_store": "core.data.stores",
    "weston_linear": "core.data.generators", "weston_nonlinear": "core.data.generators",
    "topographic_data": "core.data.generators", "ben_dor": "core.data.generators",
    "random_matrix": "core.data.generators", "transform_values": "core.data.transforms",
    # data matrices of any kind
    "data_matrix": "core.matrix", "DataMatrix": "core.matrix",
    # feature families
    "to_feature_family": "core.features.families", "to_haar": "core.features.wavelets",
    "haar_basis": "core.features.wavelets", "to_haar_like": "core.features.haarlike",
    # selection
    "q_alpha": "core.selection.qalpha", "QAlphaResult": "core.selection.qalpha",
    "QAlphaParameters": "core.selection.qalpha", "topographic_map": "core.selection.topographic",
    "sparsity_gap": "core.selection.sparsity", "SparsityGap": "core.selection.sparsity",
    "default_k": "core.selection.sparsity", "DefaultK": "core.selection.sparsity",
    "weight_share_count": "core.selection.sparsity", "SideInformation": "core.selection.side",
    "pairs_from_labels": "core.selection.qalpha", "q_alpha_ranker": "core.selection.methods",
    "q_alpha_path": "core.selection.lambda_path", "QAlphaPath": "core.selection.lambda_path",
    "choose_settings": "core.selection.automatic", "AutoSettings": "core.selection.automatic",
    "clustering_stability": "core.selection.automatic",
    "kernel_q_alpha": "core.selection.kernel_qalpha",
    "greedy_slda": "core.selection.slda", "greedy_spca": "core.selection.spca", "exact_slda": "core.selection.exact",
    "sparse_eigenvector": "core.selection.spca",
    "sdr_si": "core.selection.sdr",
    "rank_features": "core.selection.methods", "score_features": "core.selection.scorers",
    "make_projection": "core.selection.projections", "SCORERS": "core.selection.scorers",
    "METHODS": "core.selection.methods",
    "QAlphaSelector": "core.selection.selectors", "GreedySLDASelector": "core.selection.selectors",
    # evaluation
    "clustering_accuracy": "core.evaluation.metrics", "pairwise_accuracy": "core.evaluation.metrics",
    "nmi": "core.evaluation.metrics", "selection_stability": "core.evaluation.metrics",
    "kuncheva_index": "core.evaluation.metrics", "jaccard_index": "core.evaluation.metrics",
    "accuracy_curve": "core.evaluation.metrics", "class_markers": "core.evaluation.markers",
    "held_out_curves": "core.evaluation.compare", "compare_methods": "core.evaluation.compare",
    "selection_modules": "core.selection.modules", "ranking_across_modules": "core.selection.modules",
}

__all__ = sorted(["Dataset", "InputError", "Progress", "Stopped", *_PUBLIC])


def __getattr__(name: str):
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        globals()[name] = value  # looked up once
        return value
    raise AttributeError(f"module 'core' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
