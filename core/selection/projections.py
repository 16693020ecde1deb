"""Feature-combination baselines, as [SW04] Sec. 6 compares against: projections fitted on training
data and applied to new data (PCA, CPCA, OPCA, kernel PCA, LPP, LLE, Isomap, SDR-SI), each with
``fit(X, side=None)`` and ``transform(X)``, learning only from what ``fit`` is given.

References
----------
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from ..errors import InputError
from ..matrix import dense_matrix
from ..validation import check_positive_int
from ._scoring import _REF_LECTURE, BaselineInfo, knn_graph

__all__ = ["PROJECTIONS", "make_projection", "PCAProjection", "CPCA", "OPCA", "KernelPCAProjection", "LPP",
           "LLEProjection", "IsomapProjection", "SDRSI"]


class _Projection:
    """Base: ``fit(X, side=None)`` learns ``mean_`` and ``components_`` (d x n_features)."""

    info: BaselineInfo
    needs_side = False
    #: Models the data as co-occurrence counts or intensities: fitted on the non-negative data as
    #: given, never on standardised values (which have negative entries).
    models_counts = False

    def __init__(self, n_components: int = 10):
        if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or n_components < 1:
            raise InputError(f"n_components must be a positive integer; got {n_components!r}.")
        self.n_components = int(n_components)

    def _check(self, X, side):
        X = dense_matrix(X)
        if X.shape[0] < 2:
            raise InputError("fit needs a samples x features matrix with at least two samples.")
        if self.needs_side:
            if side is None:
                raise InputError(f"{self.info.name} needs side data: fit(X, side=...).")
            side = dense_matrix(side, "side")
            if side.shape[1] != X.shape[1] or side.shape[0] < 2:
                raise InputError(f"The side data must have at least 2 samples and {X.shape[1]} features.")
        return X, side

    def transform(self, X):
        if not hasattr(self, "components_"):
            raise InputError("Call fit before transform.")
        return (dense_matrix(X) - self.mean_) @ self.components_.T

    def fit_transform(self, X, side=None):
        return self.fit(X, side).transform(X)


def _leading_directions(C, d):
    values, vectors = linalg.eigh(C, subset_by_index=[C.shape[0] - d, C.shape[0] - 1])
    return vectors[:, ::-1].T, values[::-1]


class PCAProjection(_Projection):
    """Principal component analysis of the main data."""

    info = BaselineInfo("PCA", "combination", False, "O(q n min(q, n))", "Pearson 1901; Shashua & Wolf, ECCV 2004, Sec. 6")

    def fit(self, X, side=None):
        X, _ = self._check(X, None)
        self.mean_ = X.mean(axis=0)
        _, _, Vt = np.linalg.svd(X - self.mean_, full_matrices=False)
        self.components_ = Vt[: min(self.n_components, Vt.shape[0])]
        return self


class CPCA(_Projection):
    """Constrained PCA: PCA of the main data after projecting out the side data's principal
    subspace of dimension ``side_components`` (Diamantaras & Kung 1996, as in [SW04] Sec. 6)."""

    info = BaselineInfo("CPCA", "combination", False, "O((q + p) n min(q, n))", "Diamantaras & Kung 1996; Shashua & Wolf, ECCV 2004, Sec. 6")
    needs_side = True

    def __init__(self, n_components: int = 10, side_components: int = 5):
        super().__init__(n_components)
        self.side_components = int(side_components)

    def fit(self, X, side=None):
        X, side = self._check(X, side)
        _, _, side_basis = np.linalg.svd(side - side.mean(axis=0), full_matrices=False)
        side_basis = side_basis[: min(self.side_components, side_basis.shape[0])]
        self.mean_ = X.mean(axis=0)
        centred = X - self.mean_
        projected = centred - (centred @ side_basis.T) @ side_basis
        _, _, Vt = np.linalg.svd(projected, full_matrices=False)
        self.components_ = Vt[: min(self.n_components, Vt.shape[0])]
        return self


class OPCA(_Projection):
    """Oriented PCA: directions maximising main variance over side variance, the generalised
    eigenproblem ``C_main v = lambda (C_side + reg I) v`` (Diamantaras & Kung 1996). ``reg``:
    ``None`` takes ``1e-3`` times the mean side variance (the side covariance is singular when
    it has fewer samples than features); the value used is ``reg_``.

    Solved in the samples' space: ``S = C_side + reg I`` is a rank-``p`` matrix plus a ridge, so
    ``S^{-1/2}`` is explicit from a thin SVD of the side data, and the leading eigenvectors of
    ``S^{-1/2} C_main S^{-1/2}`` come from a thin SVD of the whitened main data:
    ``O((q + p)^2 n)`` instead of ``O(n^3)``. The directions ``v = S^{-1/2} u`` satisfy
    ``v^T S v = 1``, as a generalised eigensolver returns them; at most ``q - 1`` (the rank of
    ``C_main``) directions are returned.
    """

    info = BaselineInfo("OPCA", "combination", False, "O((q + p)^2 n)", "Diamantaras & Kung 1996; Shashua & Wolf, ECCV 2004, Sec. 6")
    needs_side = True

    def __init__(self, n_components: int = 10, reg: float | None = None):
        super().__init__(n_components)
        self.reg = reg

    def fit(self, X, side=None):
        X, side = self._check(X, side)
        self.mean_ = X.mean(axis=0)
        n_features = X.shape[1]
        side_scaled = (side - side.mean(axis=0)) / np.sqrt(side.shape[0] - 1)
        main_scaled = (X - self.mean_) / np.sqrt(X.shape[0] - 1)
        mean_side_variance = float(np.einsum("ij,ij->", side_scaled, side_scaled)) / n_features
        self.reg_ = float(1e-3 * max(mean_side_variance, 1e-12)) if self.reg is None else float(self.reg)
        if not self.reg_ > 0:
            raise InputError(f"OPCA needs a positive ridge reg; got {self.reg!r}.")
        # C_side = U diag(sigma^2) U^T with U the left singular vectors of the side data (as n x p)
        _, sigma, side_rows = np.linalg.svd(side_scaled, full_matrices=False)
        keep = sigma > 1e-12 * max(sigma.max(initial=0.0), 1e-300)
        U, sigma = side_rows[keep].T, sigma[keep]
        # S^{-1/2} = U diag((sigma^2 + reg)^-1/2) U^T + reg^-1/2 (I - U U^T), applied to rows
        def whiten(rows):
            coordinates = rows @ U
            return ((coordinates * (sigma**2 + self.reg_) ** -0.5) @ U.T
                    + (rows - coordinates @ U.T) / np.sqrt(self.reg_))
        _, values, directions = np.linalg.svd(whiten(main_scaled), full_matrices=False)
        rank = int(np.sum(values > 1e-12 * max(values.max(initial=0.0), 1e-300)))
        d = min(self.n_components, n_features, max(rank, 1))
        self.components_ = whiten(directions[:d])  # rows v^T = (S^{-1/2} u)^T, S symmetric
        self.explained_ratio_ = values[:d] ** 2  # the generalised eigenvalues lambda
        return self


class KernelPCAProjection(_Projection):
    """Kernel PCA (Schoelkopf et al. 1998; the lecture) with an RBF kernel, via scikit-learn."""

    info = BaselineInfo("kernel PCA", "combination", False, "O(q^3)", "Schoelkopf, Smola & Mueller 1998; " + _REF_LECTURE)

    def __init__(self, n_components: int = 10, gamma: float | None = None):
        super().__init__(n_components)
        self.gamma = gamma

    def fit(self, X, side=None):
        from sklearn.decomposition import KernelPCA

        X, _ = self._check(X, None)
        self.model_ = KernelPCA(n_components=min(self.n_components, X.shape[0] - 1), kernel="rbf",
                                gamma=self.gamma).fit(X)
        self.components_ = self.model_.eigenvectors_.T  # marks the object as fitted
        return self

    def transform(self, X):
        if not hasattr(self, "model_"):
            raise InputError("Call fit before transform.")
        return self.model_.transform(np.asarray(X, dtype=np.float64))


class LPP(_Projection):
    """Locality preserving projections / Laplacianfaces (He & Niyogi 2003; the lecture): PCA to
    at most ``pca_components`` dimensions, then the directions that keep k-NN neighbours close,
    ``X^T L X a = lambda X^T D X a`` with the smallest ``lambda``."""

    info = BaselineInfo("LPP (Laplacianfaces)", "combination", False, "O(q^2 n + q^3)", "He & Niyogi, NIPS 2003; " + _REF_LECTURE)

    def __init__(self, n_components: int = 10, n_neighbors: int = 5, pca_components: int = 50):
        super().__init__(n_components)
        self.n_neighbors = n_neighbors
        self.pca_components = pca_components

    def fit(self, X, side=None):
        X, _ = self._check(X, None)
        pca = PCAProjection(min(self.pca_components, X.shape[0] - 1, X.shape[1])).fit(X)
        Z = pca.transform(X)
        S = knn_graph(Z, self.n_neighbors)
        d = S.sum(axis=1)
        L = np.diag(d) - S
        left, right = Z.T @ L @ Z, Z.T @ (d[:, None] * Z)
        right[np.diag_indices_from(right)] += 1e-9 * np.trace(right) / right.shape[0]
        k = min(self.n_components, Z.shape[1])
        _, vectors = linalg.eigh(left, right, subset_by_index=[0, k - 1])
        self.mean_ = pca.mean_
        self.components_ = vectors.T @ pca.components_
        return self


class _ManifoldEmbedding(_Projection):
    """A scikit-learn manifold learner fitted on training data; new samples are placed by its own
    out-of-sample rule (``transform``), so nothing of them is learnt."""

    def __init__(self, n_components: int = 10, n_neighbors: int = 10):
        super().__init__(n_components)
        self.n_neighbors = check_positive_int(n_neighbors, "n_neighbors")

    def _model(self, n_components, n_neighbors):
        raise NotImplementedError

    def fit(self, X, side=None):
        X, _ = self._check(X, None)
        n_neighbors = min(self.n_neighbors, X.shape[0] - 1)
        n_components = min(self.n_components, X.shape[0] - 1, X.shape[1])
        try:
            self.model_ = self._model(n_components, n_neighbors).fit(X)
        except (ValueError, np.linalg.LinAlgError) as exc:
            raise InputError(f"{self.info.name} could not embed these data ({exc}); try more neighbours.") from None
        self.components_ = np.zeros((n_components, X.shape[1]))  # marks the object as fitted (non-linear map)
        return self

    def transform(self, X):
        if not hasattr(self, "model_"):
            raise InputError("Call fit before transform.")
        return self.model_.transform(dense_matrix(X))


class LLEProjection(_ManifoldEmbedding):
    """Locally linear embedding (Roweis & Saul, Science 2000; the lecture), scikit-learn's standard
    variant with a dense eigensolver (deterministic)."""

    info = BaselineInfo("LLE", "combination", False, "O(q^2 n + q^3)", "Roweis & Saul, Science 2000; " + _REF_LECTURE)

    def _model(self, n_components, n_neighbors):
        from sklearn.manifold import LocallyLinearEmbedding

        return LocallyLinearEmbedding(n_neighbors=n_neighbors, n_components=n_components, eigen_solver="dense")


class IsomapProjection(_ManifoldEmbedding):
    """Isomap (Tenenbaum, de Silva & Langford, Science 2000; the lecture): classical MDS of the
    geodesic distances of the k-NN graph, via scikit-learn (dense eigensolver, deterministic)."""

    info = BaselineInfo("Isomap", "combination", False, "O(q^2 log q + q^3)",
                        "Tenenbaum, de Silva & Langford, Science 2000; " + _REF_LECTURE)

    def _model(self, n_components, n_neighbors):
        from sklearn.manifold import Isomap

        return Isomap(n_neighbors=n_neighbors, n_components=n_components, eigen_solver="dense")


class SDRSI(_Projection):
    """Sufficient dimensionality reduction with side information (Globerson, Chechik & Tishby,
    UAI 2003), the next best method after Q-alpha-SI in Shashua & Wolf's AR-faces comparison
    (ECCV 2004, Sec. 6): each sample as a distribution over its features, reduced to the
    expectations of ``n_components`` functions of the features that keep the information about
    the main samples and lose the side samples' (:func:`core.selection.sdr.sdr_si`). The data must be
    non-negative (counts, intensities). ``gamma`` weighs the side information; the fit's
    convergence is in ``result_``."""

    info = BaselineInfo("SDR-SI", "combination", False, "O((q + p) n d) per iteration",
                        "Globerson, Chechik & Tishby, UAI 2003; Shashua & Wolf, ECCV 2004, Sec. 6")
    needs_side = True
    models_counts = True

    def __init__(self, n_components: int = 10, gamma: float = 1.0, max_iter: int = 500, tol: float = 1e-5):
        super().__init__(n_components)
        self.gamma, self.max_iter, self.tol = gamma, max_iter, tol

    def fit(self, X, side=None):
        from .sdr import sdr_si

        X, side = self._check(X, side)
        d = min(self.n_components, X.shape[1] - 1)
        # sdr_si warns ConvergenceWarning itself when it does not converge
        self.result_ = sdr_si(X, side, d, gamma=self.gamma, max_iter=self.max_iter, tol=self.tol)
        self.components_ = self.result_.feature_directions.T
        return self

    def transform(self, X):
        if not hasattr(self, "result_"):
            raise InputError("Call fit before transform.")
        return self.result_.transform(X)


PROJECTIONS: dict[str, type] = {"pca": PCAProjection, "cpca": CPCA, "opca": OPCA, "sdr_si": SDRSI,
                                "kernel_pca": KernelPCAProjection, "lpp": LPP, "lle": LLEProjection,
                                "isomap": IsomapProjection}


def make_projection(method: str, n_components: int = 10, **options):
    """A feature-combination baseline by name (see :data:`PROJECTIONS`)."""
    if method not in PROJECTIONS:
        raise InputError(f"Unknown projection {method!r}; choose one of {', '.join(PROJECTIONS)}.")
    return PROJECTIONS[method](n_components, **options)
