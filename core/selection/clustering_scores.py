"""Unsupervised baselines that score features by how well they preserve a clustering of the
samples: SPEC (Zhao & Liu 2007), MCFS (Cai, Zhang & He 2010), UDFS (Yang et al. 2011) and NDFS
(Li et al. 2012); each takes the number of clusters as ``n_clusters``.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from ..errors import InputError
from ..matrix.threads import blas_threads_for, one_blas_thread
from ..validation import check_real
from ._scoring import IterativeScores, score_step, step_criterion, _scores_of, _safe_divide, _check_iterative, _unit_scale, _squared_distances, knn_graph, rbf_similarity

__all__ = ["SPEC_STYLES", "spec_score", "mcfs_score", "udfs_score", "udfs", "ndfs_score", "ndfs"]


SPEC_STYLES = ("phi1", "phi2", "phi3")


def spec_score(X, y=None, style="phi2", n_clusters=5, sigma2=None):
    """SPEC, spectral feature selection (Zhao & Liu, ICML 2007, Sec. 3).

    On the RBF similarity :func:`rbf_similarity` (``sigma2`` by default half the mean squared
    distance between samples), degrees ``D`` and normalised Laplacian
    ``L = I - D^-1/2 S D^-1/2`` with eigenpairs ``(lambda_j, xi_j)``, each feature ``f`` is
    normalised to ``f^ = D^1/2 f / |D^1/2 f|`` and scored by

    * ``phi1 = f^T L f^`` (Eq. 8), lower is better;
    * ``phi2 = f^T L f^ / (1 - (f^T xi_1)^2)`` (Eq. 9), lower is better, the default: it
      discounts the trivial eigenvector, along which a constant feature lies;
    * ``phi3 = sum_{j=2}^{n_clusters} (2 - lambda_j) (f^T xi_j)^2`` (Eq. 10), higher is better.

    Returned so that higher is better (``-phi1``, ``-phi2``, ``phi3``); a feature that is
    constant (``f^`` on ``xi_1``) scores below all others.
    """
    if style not in SPEC_STYLES:
        raise InputError(f"SPEC's style must be one of {', '.join(SPEC_STYLES)}; got {style!r}.")
    A, root_degree = _normalised_affinity(rbf_similarity(X, sigma2))
    F = root_degree[:, None] * X
    norms = np.linalg.norm(F, axis=0)
    F = F / np.where(norms > 0, norms, 1.0)
    trivial = root_degree / np.linalg.norm(root_degree)
    along_trivial = (trivial @ F) ** 2
    degenerate = (norms <= 0) | (along_trivial >= 1 - 1e-12)
    if style == "phi3":
        k = int(min(max(n_clusters, 2), X.shape[0]))
        # eigenvalues of L are 1 - those of A; the k smallest of L are A's k largest
        values, vectors = linalg.eigh(A, subset_by_index=[X.shape[0] - k, X.shape[0] - 1])
        values, vectors = values[::-1][1:], vectors[:, ::-1][:, 1:]
        scores = ((1 + values)[:, None] * (vectors.T @ F) ** 2).sum(axis=0)
    else:
        phi1 = 1 - np.einsum("ij,ij->j", F, A @ F)
        scores = -(phi1 if style == "phi1" else _safe_divide(phi1, np.where(degenerate, 0.0, 1 - along_trivial)))
    return np.where(degenerate, scores.min(initial=0.0) - 1.0, scores) if degenerate.any() else scores


def _normalised_affinity(S):
    """``D^-1/2 S D^-1/2`` (``I`` minus the normalised Laplacian) and ``D^1/2``'s diagonal."""
    root_degree = np.sqrt(S.sum(axis=1))
    return S / root_degree[:, None] / root_degree[None, :], root_degree


def _spectral_embedding(affinity, root_degree, n_clusters):
    """The ``n_clusters`` eigenvectors of ``L y = lambda D y`` with the smallest eigenvalues
    (``L = D - S``), from the symmetric ``D^-1/2 S D^-1/2`` of :func:`_normalised_affinity`. The
    first is the constant one when the graph is connected; when it falls into c pieces the first
    c span their indicators, so ``n_clusters`` well-separated groups are described either way
    (as in spectral clustering)."""
    q = affinity.shape[0]
    k = int(min(n_clusters, q))
    _, vectors = linalg.eigh(affinity, subset_by_index=[q - k, q - 1])
    return vectors[:, ::-1] / root_degree[:, None]


def _lasso_with_cardinality(X, target, cardinality):
    """The L1-regularised regression of ``target`` on ``X`` (with intercept) at the largest penalty
    where ``cardinality`` coefficients are non-zero, by the LARS-lasso path (Efron et al. 2004)."""
    from sklearn.linear_model import lars_path

    centred, goal = X - X.mean(axis=0), target - target.mean()
    # A lasso step may drop a variable, so the path needs more steps than ``cardinality`` (60 to
    # 104 for 50 on the four ASU sets), up to a cap of 4 ``cardinality`` + 10; lars_path cannot
    # resume, so it is run again with twice the steps until the count is reached, the path ends
    # early (every feature it can take is in, as with fewer samples than ``cardinality``) or the
    # cap is met. Running to the cap at once took 1.5 times as long on the faces.
    cap = 4 * cardinality + 10
    # with n samples the (centred) lasso holds at most n - 1 features: the count is never reached
    steps = min(cardinality + cardinality // 2 + 10, cap) if cardinality < X.shape[0] else cap
    while True:
        _, _, path = lars_path(centred, goal, method="lasso", max_iter=steps)
        reached = np.flatnonzero(np.count_nonzero(path, axis=0) >= cardinality)
        if reached.size or path.shape[1] <= steps or steps == cap:
            return path[:, reached[0] if reached.size else -1]
        steps = min(2 * steps, cap)


def mcfs_score(X, y=None, n_clusters=5, n_features_to_select=100, n_neighbors=5, weight="heat", width=None):
    """MCFS, multi-cluster feature selection (Cai, Zhang & He, KDD 2010, Sec. 3).

    The ``n_clusters`` eigenvectors ``y_k`` of ``L y = lambda D y`` with the smallest eigenvalues
    on the k-NN graph (:func:`knn_graph`, Eqs. 1-2; :func:`_spectral_embedding`) are each regressed on the features with an L1 penalty
    whose cardinality is ``n_features_to_select`` (Eq. 4, by LARS); a feature's score is its
    largest absolute coefficient over the eigenvectors (Eq. 5). Features never chosen score 0.
    """
    Y = _spectral_embedding(*_normalised_affinity(knn_graph(X, n_neighbors, weight, width)), n_clusters)
    Y = Y - Y.mean(axis=0)
    # the constant eigenvector of a connected graph has nothing to regress
    informative = np.linalg.norm(Y, axis=0) > 1e-10 * np.abs(Y).max()
    cardinality = int(min(n_features_to_select, X.shape[1]))
    return np.max([np.abs(_lasso_with_cardinality(X, y, cardinality)) for y in Y[:, informative].T]
                  + [np.zeros(X.shape[1])], axis=0)


def _udfs_local_scatter(X, n_neighbors, ridge):
    """``L = sum_i S_i H (X~_i^T X~_i + lambda I)^-1 H S_i^T`` (Yang et al. 2011, Eq. 9): over each
    sample's neighbourhood (itself and its ``n_neighbors`` nearest), the centred Gram matrix's
    regularised inverse, placed at the neighbourhood's rows and columns (samples x samples).
    ``lambda = ridge`` times the Gram matrix's mean diagonal (scale-free)."""
    q = X.shape[0]
    size = int(min(n_neighbors, q - 1)) + 1
    distances = _squared_distances(X)
    np.fill_diagonal(distances, -1.0)  # each sample first in its own neighbourhood
    neighbourhoods = np.argsort(distances, axis=1, kind="stable")[:, :size]
    H = np.eye(size) - 1.0 / size
    L = np.zeros((q, q))
    for members in neighbourhoods:
        local = H @ X[members]
        gram = local @ local.T
        regularised = gram + (ridge * max(np.trace(gram) / size, 1e-300)) * np.eye(size)
        L[np.ix_(members, members)] += H @ np.linalg.solve(regularised, H)
    return L


#: feature counts up to which UDFS solves its eigenproblem densely; above, matrix-free. Measured
#: on colon's first genes (2 cores, quiet machine): per iteration 10 ms dense against 1.1 ms
#: matrix-free at 100 genes, 12 against 1.2 at 200, 107 against 13 at 1,000 (so 100 is generous)
_UDFS_DENSE_LIMIT = 100


def _smallest_eigenvectors(Z, diagonal, k, start):
    """The ``k`` eigenvectors of ``Z Z^T + diag(diagonal)`` with the smallest eigenvalues.

    Dense up to :data:`_UDFS_DENSE_LIMIT` rows; above, as the largest of the inverse by Lanczos,
    applying the inverse by the Woodbury identity (``O(n r)`` per product, never ``n x n``)."""
    n, r = Z.shape
    if n <= _UDFS_DENSE_LIMIT:
        P = Z @ Z.T
        P[np.diag_indices(n)] += diagonal
        return linalg.eigh(P, subset_by_index=[0, k - 1])[1]
    from scipy.sparse.linalg import LinearOperator, eigsh

    inverse_diagonal = 1.0 / diagonal
    scaled = Z * inverse_diagonal[:, None]
    core_factor = linalg.cho_factor(np.eye(r) + Z.T @ scaled)

    def apply_inverse(v):
        v = v.reshape(n, -1)
        return inverse_diagonal[:, None] * v - scaled @ linalg.cho_solve(core_factor, scaled.T @ v)

    operator = LinearOperator((n, n), matvec=apply_inverse, matmat=apply_inverse, dtype=np.float64)
    _, vectors = eigsh(operator, k=k, which="LA", v0=start, tol=1e-10)
    return vectors


def udfs_score(X, y=None, **options):
    """UDFS scores (:func:`udfs`); warns ``ConvergenceWarning`` if it did not converge."""
    return _scores_of(udfs(X, **options), "UDFS")


def _average_first_frame(Z, k):
    """Row norms of the first UDFS step's solution when that step is ill-posed, and the dimension
    of its solution space (``None, m`` when it is well-posed).

    The first step (``D = I``) wants the ``k`` eigenvectors of ``Z Z^T + gamma I`` with the
    smallest eigenvalues. When ``Z`` (features x r) has rank ``r < n - k + 1``, as whenever there
    are fewer samples than features, the smallest eigenvalue, ``gamma``, has multiplicity ``m = n -
    rank Z >= k``: every orthonormal ``k``-frame of the null space of ``Z^T`` solves the step
    equally, and which one an eigensolver returns depends on its rounding (the solver, the BLAS
    threads). Instead of one of them, take the average over all of them: a uniformly random frame
    of an ``m``-dimensional space with projector ``P`` has ``E |w_i|^2 = (k / m) P_ii``, so the row
    norms ``sqrt(k P_ii / m)`` depend on the null space alone, not on a basis of it.
    """
    n = Z.shape[0]
    left, singular, _ = linalg.svd(Z, full_matrices=False)
    rank = int(np.sum(singular > singular.max(initial=0.0) * max(Z.shape) * np.finfo(np.float64).eps))
    dimension = n - rank
    if dimension < k:
        return None, dimension
    leverage = np.maximum(1.0 - np.einsum("ij,ij->i", left[:, :rank], left[:, :rank]), 0.0)
    return np.sqrt(k * leverage / dimension), dimension


#: UDFS row norms below this share of the largest count as zero. The iteration stops at a relative
#: change of the objective of 1e-6, which the large rows dominate: rows under 1e-4 of the largest
#: still differed by 20% between one and two BLAS threads on colon (2 cores, numpy 2.4), so
#: ordering them would make the ranking depend on rounding; they tie at 0, in index order
_UDFS_ZERO_ROW = 1e-4


def udfs(X, n_clusters=5, n_neighbors=5, gamma=0.1, ridge=1e-3, max_iter=5000, tol=1e-6) -> IterativeScores:
    """UDFS, unsupervised discriminative feature selection (Yang et al., IJCAI 2011, Sec. 3).

    ``min_{W^T W = I} Tr(W^T M W) + gamma ||W||_{2,1}``, ``M = X^T L X`` with ``L`` the local
    discriminative scatter of :func:`_udfs_local_scatter` and ``W`` features x ``n_clusters``,
    solved as the paper's Algorithm 1: ``W`` = the eigenvectors of ``M + gamma D`` with the
    smallest eigenvalues, ``D_ii = 1 / (2 |w_i|)``, until no score changes by more than ``tol``
    of the largest in one iteration (:func:`~._scoring.score_step`). Scores are the row norms
    ``|w_i|``. The data are centred and divided by their root mean square first, so ``gamma``
    does not depend on the data's unit.

    ``converged`` is a step test on the scores, and the result's ``criterion`` says so with the
    rate at which the steps shrank and the distance to the limit that rate implies. The
    alternation contracts slowly: on colon's 500 most variable genes (2 cores) the objective's
    relative change, the paper's test, fell under 1e-6 at 158 iterations while the top 50 shared
    only 40 with the limit's; the scores' step falls under 1e-6 at 2,516 iterations (3.2 s),
    whose top 50 are the limit's. Hence ``max_iter`` 5,000.

    With fewer samples than features the first step (``D = I``) is ill-posed: its smallest
    eigenvalue is repeated, far more often than ``n_clusters``, and any frame of that eigenspace
    solves it. Then the first step takes the row norms of the average frame
    (:func:`_average_first_frame`), one answer whatever the eigensolver and the BLAS threads, and
    the result's ``note`` says so. Row norms under :data:`_UDFS_ZERO_ROW` of the largest are
    returned as 0.
    """
    X, n_clusters, n_neighbors, max_iter, tol = _check_iterative(X, n_clusters, n_neighbors, max_iter, tol)
    gamma, ridge = check_real(gamma, "gamma", low=0.0, low_open=True), check_real(ridge, "ridge", low=0.0, low_open=True)
    # thin products and small factorisations: one BLAS thread is faster (core.matrix.threads)
    with blas_threads_for(float(X.shape[0]) * X.shape[0] * X.shape[1]):
        return _udfs_iterations(X, n_clusters, n_neighbors, gamma, ridge, max_iter, tol)


def _udfs_iterations(X, n_clusters, n_neighbors, gamma, ridge, max_iter, tol):
    Xs = _unit_scale(X)
    values, vectors = linalg.eigh(_udfs_local_scatter(Xs, n_neighbors, ridge))
    keep = values > values.max() * 1e-12
    Z = Xs.T @ (vectors[:, keep] * np.sqrt(values[keep]))  # M = Z Z^T
    k = int(min(n_clusters, X.shape[1] - 1))
    diagonal = np.full(X.shape[1], gamma)
    start = np.ones(X.shape[1])
    history, steps = [], []
    row_norms = None
    note = ""
    first_norms, dimension = _average_first_frame(Z, k)
    if first_norms is not None:
        note = (f"The first step was ill-posed: the smallest eigenvalue of X^T L X + gamma I has multiplicity "
                f"{dimension} (features {X.shape[1]} minus the rank of X^T L X) for {k} eigenvectors wanted, "
                f"so any {k} of its eigenvectors solve it; the step took the row norms averaged over all of them.")
        # no objective is recorded for it: the average is not a frame, and the history holds the
        # objectives of the iterates W only
        diagonal = gamma / (2 * np.maximum(first_norms, 1e-12))
        start = first_norms
    for _ in range(max_iter):
        W = _smallest_eigenvectors(Z, diagonal, k, start)
        previous, row_norms = row_norms, np.linalg.norm(W, axis=1)
        history.append(np.sum((Z.T @ W) ** 2) + gamma * row_norms.sum())
        if previous is not None:
            steps.append(score_step(previous, row_norms))
        converged = bool(steps) and steps[-1] <= tol
        if converged:
            break
        diagonal = gamma / (2 * np.maximum(row_norms, 1e-12))
        start = W.sum(axis=1)
    scores = np.where(row_norms >= _UDFS_ZERO_ROW * row_norms.max(), row_norms, 0.0)
    return IterativeScores(scores, np.asarray(history), converged, note, np.asarray(steps), step_criterion(steps, tol))


def _ndfs_regression(X, F, d_inverse, beta):
    """``W = (X^T X + beta D)^-1 X^T F`` and ``K (K + beta I)^-1`` (= ``X (X^T X + beta D)^-1 X^T``)
    through the samples x samples ``K = X D^-1 X^T`` (push-through identity), never features x
    features."""
    K = (X * d_inverse) @ X.T
    factor = linalg.cho_factor(K + beta * np.eye(X.shape[0]))
    projected = linalg.cho_solve(factor, F)
    return d_inverse[:, None] * (X.T @ projected), factor


def ndfs_score(X, y=None, **options):
    """NDFS scores (:func:`ndfs`); warns ``ConvergenceWarning`` if it did not converge."""
    return _scores_of(ndfs(X, **options), "NDFS")


def ndfs(X, n_clusters=5, n_neighbors=5, alpha=1.0, beta=1.0, gamma=1e8, max_iter=3000, tol=1e-6,
         random_state=0) -> IterativeScores:
    """NDFS, nonnegative discriminative feature selection (Li et al., AAAI 2012, Sec. 3).

    ``min Tr(F^T L F) + alpha (|X W - F|_F^2 + beta |W|_{2,1})`` over nonnegative cluster
    indicators ``F`` (samples x ``n_clusters``, ``F^T F = I`` enforced by the penalty ``gamma``)
    and ``W``, ``L`` the normalised Laplacian of the k-NN heat graph. The paper's alternation:
    ``W = (X^T X + beta D)^-1 X^T F``; ``F <- F o (gamma F) / (M F + gamma F F^T F)`` with
    ``M = L + alpha (I - X (X^T X + beta D)^-1 X^T)`` (Eq. 13; damped to the same fixed points,
    see the code); ``D_ii = 1 / (2 |w_i|)``; until no score changes by more than ``tol`` of the
    largest in one iteration, a step test said in words by the result's ``criterion`` (as
    :func:`udfs`; on colon's 500 most variable genes, 956 iterations in 0.3 s, hence ``max_iter``
    3,000). ``F`` starts from spectral clustering
    (k-means with ``random_state`` on the graph's embedding) plus 0.2. Scores are ``|w_i|``.
    The data are centred and divided by their root mean square first (unit-free ``alpha``, ``beta``).
    """
    X, n_clusters, n_neighbors, max_iter, tol = _check_iterative(X, n_clusters, n_neighbors, max_iter, tol)
    alpha, beta, gamma = (check_real(value, name, low=0.0, low_open=True)
                          for value, name in ((alpha, "alpha"), (beta, "beta"), (gamma, "gamma")))
    # thin products and small factorisations: one BLAS thread is faster (core.matrix.threads)
    with blas_threads_for(float(X.shape[0]) * X.shape[0] * X.shape[1]):
        return _ndfs_iterations(X, n_clusters, n_neighbors, alpha, beta, gamma, max_iter, tol, random_state)


def _ndfs_iterations(X, n_clusters, n_neighbors, alpha, beta, gamma, max_iter, tol, random_state):
    from sklearn.cluster import KMeans

    Xs = _unit_scale(X)
    q = X.shape[0]
    affinity, root_degree = _normalised_affinity(knn_graph(Xs, n_neighbors))
    laplacian = np.eye(q) - affinity
    k = int(min(n_clusters, q - 1))
    embedding = _spectral_embedding(affinity, root_degree, k)
    with one_blas_thread():  # k-means opens its own BLAS limit: nested in ours (core.matrix.threads)
        clusters = KMeans(k, n_init=10, random_state=random_state).fit_predict(embedding)
    F = np.eye(k)[clusters] + 0.2
    F /= np.linalg.norm(F, axis=0)
    d_inverse = np.ones(X.shape[1])
    history, steps = [], []
    row_norms = None
    for _ in range(max_iter):
        W, factor = _ndfs_regression(Xs, F, d_inverse, beta)
        previous, row_norms = row_norms, np.linalg.norm(W, axis=1)
        history.append(np.sum(F * (laplacian @ F)) + alpha * (np.sum((Xs @ W - F) ** 2) + beta * row_norms.sum()))
        if previous is not None:
            steps.append(score_step(previous, row_norms))
        converged = bool(steps) and steps[-1] <= tol
        if converged:
            break
        M_F = laplacian @ F + alpha * beta * linalg.cho_solve(factor, F)
        # The paper's rule with two changes that keep its fixed points (F o (M F + gamma F F^T F
        # - gamma F) = 0). M F is split into its signed parts, as in semi-NMF (Ding, Li & Jordan
        # 2010), so a negative (M F)_ij near F_ij = 0 cannot flip a sign or divide by ~0. The
        # ratio is taken to the power 1/2, as orthogonal NMF does (Ding et al., KDD 2006): where
        # gamma dominates, the plain rule maps a column of norm f to norm 1/f and oscillates with
        # period two (on colon its objective alternated 1.27 / 1.70 for 300 iterations).
        numerator = gamma * F + np.maximum(-M_F, 0)
        denominator = np.maximum(M_F, 0) + gamma * F @ (F.T @ F)
        F = F * np.sqrt(np.divide(numerator, denominator, out=np.zeros_like(F), where=denominator > 0))
        d_inverse = 2 * np.maximum(row_norms, 1e-12)
    return IterativeScores(row_norms, np.asarray(history), converged, "", np.asarray(steps), step_criterion(steps, tol))
