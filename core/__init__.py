"""Spectral feature selection: Q-alpha (Wolf & Shashua) and greedy sparse LDA/PCA (Moghaddam,
Weiss & Avidan), with their data model, loaders, feature families, baselines and evaluations.

A plain library: nothing here imports Streamlit. Submodules are imported on demand
(``from core.qalpha import q_alpha``); this package exports only the shared types.
"""

from .dataset import Dataset
from .errors import InputError, Stopped
from .progress import Progress

__all__ = ["Dataset", "InputError", "Progress", "Stopped"]
__version__ = "0.1.0"
