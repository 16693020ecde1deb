"""The leading eigenvectors of ``A_w = Mt diag(w) Mt^T`` (q x q) from products with the features.

Q-alpha ([WS03] Sec. 3) needs the ``k`` leading eigenvectors of ``A_alpha``: at its start (every
alpha equal), and where ``A_alpha Q`` loses rank. Up to :data:`GRAM_LIMIT` samples they come from
the explicit matrix; beyond it from passes over the data through the products of
:mod:`core.matrix.normalised`:

* :func:`leading_sample_vectors`: subspace iteration to a residual tolerance (Halko, Martinsson &
  Tropp 2011, Alg. 4.4), one fused pass per iteration;
* :func:`krylov_sample_vectors`: a block Krylov space of a few passes (Musco & Musco 2015), for a
  start that needs only to lie near the eigenvectors: every pass's block is kept, so two passes
  span what a subspace iteration reaches in more.

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
.. [MM15] C. Musco and C. Musco, "Randomized block Krylov methods for stronger and faster
   approximate singular value decomposition", NeurIPS 2015.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from ..validation import check_positive_int

__all__ = ["GRAM_LIMIT", "SampleVectors", "leading_eigenpairs", "from_feature_side", "leading_sample_vectors",
           "krylov_sample_vectors"]

#: Up to this many samples the leading eigenvectors of ``Mt diag(w) Mt^T`` come from the explicit
#: ``q x q`` matrix (128 MB); beyond it from a subspace iteration with products.
GRAM_LIMIT = 4096
#: Subspace iteration beyond GRAM_LIMIT: extra columns, pass limit, and the eigen-residual of the
#: leading Ritz vectors (relative to the largest eigenvalue) at which it stops.
SUBSPACE_OVERSAMPLING = 10
SUBSPACE_MAX_PASSES = 100
SUBSPACE_RTOL = 1e-8
#: Extra columns of each block of the Krylov start beyond k. Its space holds ``passes`` blocks, so
#: a single block's range-finder margin of 10 is not needed ([MM15] analyse blocks of k columns).
#: Measured on a 2-core Xeon against 10 (float32 planted data, 20,000 x 4,000, k = 4, tol 1e-10):
#: start-up in iterations' time 4.6 against 6.0, 144 iterations against 145, 80/80 both; Weston
#: linear, 6,000 samples, k = 2, seeds 0-9: 10/10 both, 18-27 iterations against 24-30. At 2:
#: 158 iterations.
KRYLOV_OVERSAMPLING = 4


def leading_eigenpairs(A, count, positive=False):
    """``(values, vectors)``: the ``count`` eigenpairs of the symmetric ``A`` of largest
    ``|eigenvalue|``, largest first. ``positive``: ``A`` is positive semi-definite, so they are the
    ``count`` largest, which LAPACK finds alone (630 x 630: 15 ms against 48 for every pair, one
    thread of a 2-core AMD EPYC)."""
    q = A.shape[0]
    if positive and count < q and A.dtype == np.float64 and np.isfinite(A).all():
        # LAPACK's dsyevr as linalg.eigh(subset_by_index) calls it, without its wrapper's checks and
        # workspace query: a quarter of the call at 55 x 55 (245 against 330 us, one thread), which
        # Q-alpha's ascent makes at every evaluation
        values, vectors, found, _, info = linalg.lapack.dsyevr(A, compute_v=1, range="I", il=q - count + 1, iu=q)
        if info != 0 or found != count:
            values, vectors = linalg.eigh(A, subset_by_index=[q - count, q - 1])
        values = values[:count]
    elif positive and count < q:
        values, vectors = linalg.eigh(A, subset_by_index=[q - count, q - 1])
    else:
        values, vectors = linalg.eigh(A)
    order = np.argsort(-np.abs(values), kind="stable")[:count]
    return values[order], vectors[:, order]


@dataclass(frozen=True)
class SampleVectors:
    """The ``k`` leading eigenvectors of ``A_w`` (:func:`leading_sample_vectors`) and how they were found.

    Attributes
    ----------
    vectors : ndarray, shape (n_samples, k)
        Orthonormal; largest eigenvalue magnitude first.
    converged : bool
        Whether every vector's eigen-residual ``||A_w v - mu v||`` is at most
        ``rtol`` times the largest ``|mu|`` (always True from the explicit matrix).
    passes : int
        Passes over the data the subspace iteration took (0 from the explicit matrix).
    residual : float
        The largest of those residuals, relative to the largest ``|mu|`` (0.0 from the explicit matrix).
    products : ndarray of shape (k, n_kept), or None
        ``vectors^T Mt``, where the subspace iteration's last pass gave it without another pass
        (``Y^T Mt = S^-1 Z^T (T^T Mt)`` for ``T = Y S Z^T``); None otherwise.
    """

    vectors: np.ndarray
    converged: bool = True
    passes: int = 0
    residual: float = 0.0
    products: np.ndarray | None = None


def _vectors_times_features(sigma, right_t, U, k):
    """``Y^T Mt`` for the first ``k`` left singular vectors ``Y`` of ``T = Y S Z^T``, from
    ``U = T^T Mt``; None where a singular value is zero (Y is then not determined by T)."""
    if not np.all(sigma[:k] > 0):
        return None
    return (right_t[:k] @ U) / sigma[:k, None]


#: The subspace iteration starts from this fixed Gaussian matrix, not from a caller's seed: the
#: leading eigenvectors are a property of the data, so two calls give the same vectors.
SUBSPACE_SEED = 0


def _ritz_residual(image, vectors, values, k):
    """Largest ``||A v_i - mu_i v_i||`` over the first ``k`` Ritz pairs, relative to ``max |mu|``."""
    gap = image[:, :k] - vectors[:, :k] * values[:k]
    return float(np.max(np.linalg.norm(gap, axis=0))) / max(float(np.max(np.abs(values[:k]))), np.finfo(float).tiny)


def _norm_bound(weights):
    """An upper bound on ``||Mt diag(sqrt w)||_2``: its Frobenius norm ``sqrt(sum w)``, as every
    normalised feature has unit norm."""
    return float(np.sqrt(np.sum(weights)))


def _ritz_bound(basis, images, sigma, right_t, k, weights):
    """An upper bound on :func:`_ritz_residual` for the first ``k`` left singular vectors
    ``y_i = Mw z_i / sigma_i`` of ``Mw basis`` (``Mw = Mt diag(sqrt w)``, ``basis`` orthonormal,
    ``z_i = basis Z_i``), from ``images = Mw^T Mw basis`` alone, so without another pass.

    ``A_w y_i - sigma_i^2 y_i = Mw r_i / sigma_i`` with ``r_i = Mw^T Mw z_i - sigma_i^2 z_i``, and
    ``||Mw||_2`` at most :func:`_norm_bound`.
    """
    if not np.all(sigma[:k] > 0):
        return np.inf
    Z = right_t[:k].T
    gap = np.linalg.norm(images @ Z - (basis @ Z) * sigma[:k] ** 2, axis=0)
    return float(np.max(_norm_bound(weights) * gap / sigma[:k])) / float(sigma[0]) ** 2


def leading_sample_vectors(features, weights, k, rtol=SUBSPACE_RTOL, max_passes=SUBSPACE_MAX_PASSES) -> SampleVectors:
    """The ``k`` leading eigenvectors of ``A_w = Mt diag(w) Mt^T`` (q x q), largest magnitude first.

    Up to :data:`GRAM_LIMIT` samples from the explicit matrix (the ``n x n`` one of the features
    where they are fewer and ``w >= 0``: :func:`_dual_sample_vectors`). Beyond it by subspace iteration
    (Halko, Martinsson & Tropp, SIAM Review 2011, Alg. 4.4) with ``k + 10`` columns from a fixed
    start (:data:`SUBSPACE_SEED`), until the ``k`` leading Ritz vectors' eigen-residuals are at most
    ``rtol`` relative to the largest eigenvalue, or after ``max_passes`` iterations (``converged``
    False). For non-negative ``w`` (Q-alpha's weights) on the features'
    side, one fused pass per iteration: ``V <- diag(sqrt w) Mt^T Mt diag(sqrt w) V``, and the left
    singular vectors ``Y`` of ``T = Mt diag(sqrt w) V`` approximate the eigenvectors of ``A_w``
    (the next pass gives ``A_w Y`` and so the residual of the vectors before it); for weights of
    both signs on the samples' side, two passes per iteration.
    """
    if features.n_samples <= GRAM_LIMIT:
        if features.n_kept < features.n_samples and np.all(weights >= 0):
            return _dual_sample_vectors(features, weights, k)
        return SampleVectors(leading_eigenpairs(features.weighted_gram(weights), k, bool(np.all(weights >= 0)))[1])
    rng = np.random.default_rng(SUBSPACE_SEED)
    columns = min(k + SUBSPACE_OVERSAMPLING, features.n_kept, features.n_samples)
    positive = bool(np.all(weights >= 0))
    root = np.sqrt(np.abs(weights))[:, None]
    V = rng.standard_normal((features.n_kept if positive else features.n_samples, columns))
    previous = None  # (vectors, sigma, right singular vectors) of the last positive pass
    residual, passes = np.inf, 0
    for passes in range(1, max_passes + 1):
        V, R = np.linalg.qr(V)
        if positive:
            T, U = features.fused(root * V)
            left, sigma, right_t = np.linalg.svd(T, full_matrices=False)
            if previous is not None:
                # T = A_w T_prev R^-1 with T_prev = Y S Z^T, so A_w Y = T R Z S^-1
                old_vectors, old_sigma, old_right_t, old_U = previous
                safe = np.where(old_sigma > 0, old_sigma, np.inf)
                image = (T @ R @ old_right_t.T) / safe
                residual = _ritz_residual(image, old_vectors, old_sigma ** 2, k)
                if residual <= rtol:
                    return SampleVectors(old_vectors[:, :k], True, passes, residual,
                                         _vectors_times_features(old_sigma, old_right_t, old_U, k))
            previous = (left, sigma, right_t, U)
            vectors, products = left, _vectors_times_features(sigma, right_t, U, k)
            basis, V = V, root * U.T
        else:
            image = features.times(weights[:, None] * features.transposed_times(V).T)
            values, rotation = linalg.eigh(V.T @ image)
            order = np.argsort(-np.abs(values), kind="stable")
            values, rotation = values[order], rotation[:, order]
            vectors = V @ rotation
            residual = _ritz_residual(image @ rotation, vectors, values, k)
            if residual <= rtol:
                return SampleVectors(vectors[:, :k], True, passes, residual)
            V = image
            products = None
    if positive:
        # the residual above is the previous vectors'; the ones returned have only a bound
        residual = _ritz_bound(basis, V, sigma, right_t, k, weights)
    return SampleVectors(vectors[:, :k], False, passes, residual, products)


def _dual_sample_vectors(features, weights, k) -> SampleVectors:
    """:func:`leading_sample_vectors` where there are fewer features than samples, from the ``n x n``
    matrix ``B = D^1/2 K D^1/2`` (``K = Mt^T Mt``, ``D = diag(w)``, ``w >= 0``), whose nonzero
    eigenvalues are ``A_w``'s: for ``B y = mu y``, ``Mt D^1/2 y / sqrt(mu)`` is a unit eigenvector
    of ``A_w``. Segmentation's 2,310 x 19 table: a 19 x 19 problem instead of 1,848 x 1,848 (0.3 s
    of a Q-alpha start). Where ``A_w`` has fewer than ``k`` nonzero eigenvalues, the rest are an
    orthonormal completion (any is an eigenvector of the eigenvalue 0)."""
    root = np.sqrt(weights)
    B = root[:, None] * features.gram() * root[None, :]
    values, Y = leading_eigenpairs(B, min(k, B.shape[0]), True)
    return SampleVectors(from_feature_side(features, root, values, Y, k))


def from_feature_side(features, root, values, Y, k) -> np.ndarray:
    """The ``k`` leading eigenvectors of ``A_w = Mt D Mt^T`` (``q x k``, orthonormal) from the
    leading eigenpairs ``(values, Y)`` of ``B = D^1/2 K D^1/2`` on the features' side (``root`` =
    ``D^1/2``): ``Mt D^1/2 y / sqrt(mu)`` for each ``mu`` above rounding. Where there are fewer
    than ``k`` of those, the rest is an orthonormal completion (any is an eigenvector of the
    eigenvalue 0). One thin pass over the data."""
    values = np.asarray(values, dtype=np.float64)
    live = values > np.finfo(np.float64).eps * max(float(values.max(initial=0.0)), 0.0) * max(len(root), 1)
    vectors = np.zeros((features.n_samples, k))
    vectors[:, :int(live.sum())] = features.times(root[:, None] * Y[:, live]) / np.sqrt(values[live])
    # orthonormal to rounding already; QR keeps the columns' spans in order (and signs, by R's
    # diagonal), and its Householder factor completes the zero columns with orthonormal ones
    Q, R = np.linalg.qr(vectors)
    return Q * np.where(np.diag(R) < 0, -1.0, 1.0)


#: Directions of the Krylov blocks' span below this fraction of its largest singular value are
#: left out of the Rayleigh-Ritz step: the blocks align with the leading directions as the passes
#: go on, and the coordinates of those directions carry rounding divided by their size.
KRYLOV_RCOND = 1e-10


def krylov_sample_vectors(features, weights, k, passes, rtol=SUBSPACE_RTOL) -> SampleVectors:
    """The ``k`` leading eigenvectors of ``A_w = Mt diag(w) Mt^T`` from a block Krylov space of at
    most ``passes`` passes over the data ([MM15] Alg. 2).

    With ``Mw = Mt diag(sqrt w)`` and ``B = Mw^T Mw`` (features x features), pass ``i`` takes an
    orthonormal block ``V_i`` of ``k +`` :data:`KRYLOV_OVERSAMPLING` columns and gives ``T_i = Mw V_i`` and ``T_i^T Mt``
    (one fused pass, :meth:`fused`); ``V_{i+1}`` is ``B V_i = diag(sqrt w) (T_i^T Mt)^T`` made
    orthogonal to the blocks before it. The ``T_i`` span the Krylov space
    ``{T_1, A_w T_1, ..., A_w^{p-1} T_1}``, where a subspace iteration keeps only its last block,
    and the Rayleigh-Ritz step on it needs no further pass: for an orthonormal basis
    ``Q = [T_1 ... T_p] G``, ``Q^T Mt = G^T [T_1^T Mt; ...]``, and the vectors are ``Q P`` for the
    left singular vectors ``P`` of ``Q^T Mw``. Stops early where the residual bound is at most
    ``rtol``.

    Up to :data:`GRAM_LIMIT` samples, and for weights of both signs, this is
    :func:`leading_sample_vectors` (with ``max_passes=passes``).

    Returns
    -------
    SampleVectors
        ``residual`` is an upper bound on the vectors' eigen-residual relative to the largest Ritz
        value: exact for the part of ``A_w y`` the passes determine, :func:`_norm_bound` times the
        rest; ``converged`` whether it is at most ``rtol``;
        ``products`` the vectors times the features, from the passes.
    """
    passes = check_positive_int(passes, "passes")
    if features.n_samples <= GRAM_LIMIT or not np.all(weights >= 0):
        return leading_sample_vectors(features, weights, k, rtol=rtol, max_passes=passes)
    n_kept = features.n_kept
    columns = min(k + KRYLOV_OVERSAMPLING, n_kept, features.n_samples)
    root = np.sqrt(weights)
    V = np.linalg.qr(np.random.default_rng(SUBSPACE_SEED).standard_normal((n_kept, columns)))[0]
    blocks, sample_blocks, feature_blocks = [], [], []  # V_i, T_i = Mw V_i, T_i^T Mt
    for done in range(1, passes + 1):
        T, U = features.fused(root[:, None] * V)
        blocks.append(V)
        sample_blocks.append(T)
        feature_blocks.append(U)
        basis = np.hstack(blocks)
        vectors, products, residual = _krylov_ritz(basis, np.hstack(sample_blocks), np.vstack(feature_blocks),
                                                   weights, k)
        width = min(columns, n_kept - basis.shape[1])
        if residual <= rtol or done == passes or width == 0:
            break
        # Householder QR of [basis, B V_i]: its trailing columns are orthonormal and orthogonal to
        # the basis even where B V_i adds no new direction (data of low rank)
        image = root[:, None] * U.T
        V = np.linalg.qr(np.hstack([basis, image]))[0][:, basis.shape[1]:basis.shape[1] + width]
    return SampleVectors(vectors, residual <= rtol, done, residual, products)


def _krylov_ritz(basis, samples, features_side, weights, k):
    """Rayleigh-Ritz on the span of ``samples = Mw basis`` (``basis`` orthonormal) from
    ``features_side = samples^T Mt``: the ``k`` Ritz vectors, the vectors times ``Mt``, and the
    residual bound of :func:`krylov_sample_vectors`."""
    left, spread, right_t = np.linalg.svd(samples, full_matrices=False)
    rank = int(np.sum(spread > KRYLOV_RCOND * spread[0]))
    span = left[:, :rank]  # orthonormal basis Q of the Krylov space
    span_times_features = (right_t[:rank] @ features_side) / spread[:rank, None]  # Q^T Mt
    rotation, sigma, right = np.linalg.svd(span_times_features * np.sqrt(weights), full_matrices=False)
    if rank < k:
        # the data hold fewer directions than k (A_w has rank below k): the Ritz vectors, then
        # orthonormal directions beside them, of which neither the products nor a residual are known
        return np.hstack([span @ rotation, left[:, rank:k]]), None, np.inf
    rotation, sigma, right = rotation[:, :k], sigma[:k], right[:k].T
    vectors = span @ rotation
    # A_w y_i = sigma_i Mw z_i for z_i = Mw^T y_i / sigma_i; Mw is known on the basis' span only
    inside = basis.T @ right
    outside = np.linalg.norm(right - basis @ inside, axis=0)
    known = np.linalg.norm(samples @ inside * sigma - vectors * sigma ** 2, axis=0)
    bound = np.max(known + sigma * _norm_bound(weights) * outside) / max(float(sigma[0]) ** 2, np.finfo(float).tiny)
    return vectors, rotation.T @ span_times_features, float(bound)
