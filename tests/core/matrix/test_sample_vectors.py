"""The leading eigenvectors of Mt diag(w) Mt^T from products (core.matrix.sample_vectors),
checked against the explicit matrix: subspace iteration and the block Krylov start."""

import numpy as np
import pytest
from scipy import linalg, sparse

from core.errors import InputError
from core.matrix import data_matrix, sample_vectors
from core.matrix.normalised import preprocess_features
from core.matrix.sample_vectors import krylov_sample_vectors, leading_sample_vectors
from core.selection.qalpha import q_alpha
from test_matrix import sparse_counts


@pytest.mark.parametrize("signs", ["positive", "mixed"])
def test_subspace_iteration_beyond_the_gram_limit(monkeypatch, signs):
    """Above GRAM_LIMIT samples the leading eigenvectors of Mt diag(w) Mt^T come from products."""
    X, _ = sparse_counts(400, 60)
    features = data_matrix(sparse.csr_matrix(X)).normalised()
    weights = np.random.default_rng(2).random(features.n_kept) + (0.0 if signs == "positive" else -0.3)
    Mt, _, _, _ = preprocess_features(X)
    values, vectors = linalg.eigh(Mt @ np.diag(weights) @ Mt.T)
    reference = vectors[:, np.argsort(-np.abs(values))[:3]]
    monkeypatch.setattr(sample_vectors, "GRAM_LIMIT", 100)
    found = leading_sample_vectors(features, weights, 3)
    assert found.converged and found.passes > 1, found
    # the same subspace: singular values of the overlap are 1
    assert np.allclose(linalg.svdvals(reference.T @ found.vectors), 1.0, atol=1e-6)
    # the residual it reports is the vectors' own, recomputed here from the explicit matrix
    A = Mt @ np.diag(weights) @ Mt.T
    mu = np.einsum("qi,qi->i", found.vectors, A @ found.vectors)
    true = np.linalg.norm(A @ found.vectors - found.vectors * mu, axis=0).max() / np.abs(mu).max()
    assert true <= sample_vectors.SUBSPACE_RTOL and found.residual <= sample_vectors.SUBSPACE_RTOL
    # the start is fixed: the same vectors whatever the global random state
    np.random.seed(1)
    assert np.array_equal(leading_sample_vectors(features, weights, 3).vectors, found.vectors)


def test_subspace_iteration_that_runs_out_of_passes_says_so(monkeypatch):
    X, _ = sparse_counts(400, 60)
    features = data_matrix(sparse.csr_matrix(X)).normalised()
    weights = np.random.default_rng(2).random(features.n_kept)
    monkeypatch.setattr(sample_vectors, "GRAM_LIMIT", 100)
    found = leading_sample_vectors(features, weights, 3, max_passes=2)
    assert not found.converged and found.passes == 2 and found.residual > sample_vectors.SUBSPACE_RTOL


def test_products_the_subspace_iteration_hands_on_are_its_vectors_times_the_features(monkeypatch):
    """``products`` is ``vectors^T Mt`` from the last pass (no pass of its own), both when the
    passes run out and when the residual test stops the iteration, and None for mixed signs."""
    X, _ = sparse_counts(400, 60)
    features = data_matrix(sparse.csr_matrix(X)).normalised()
    Mt, _, _, _ = preprocess_features(X)
    weights = np.random.default_rng(2).random(features.n_kept)
    monkeypatch.setattr(sample_vectors, "GRAM_LIMIT", 100)
    for found in (leading_sample_vectors(features, weights, 3, max_passes=2),
                  leading_sample_vectors(features, weights, 3)):
        assert found.products is not None
        assert np.allclose(found.products, found.vectors.T @ Mt, rtol=0, atol=1e-10)
    assert leading_sample_vectors(features, weights - 0.3, 3).products is None


def _explicit_residual(Mt, weights, vectors):
    """The largest eigen-residual of ``vectors`` for the explicit ``A_w``, relative to max |mu|."""
    A = Mt @ np.diag(weights) @ Mt.T
    mu = np.einsum("qi,qi->i", vectors, A @ vectors)
    return np.linalg.norm(A @ vectors - vectors * mu, axis=0).max() / np.abs(mu).max(), mu


def test_two_krylov_passes_span_data_of_rank_up_to_twice_the_block(monkeypatch):
    """Normalised features of rank 20 with blocks of k + 10 = 12 columns (the oversampling set to
    10 here): one block cannot hold
    the range, two can, so after two passes the Krylov vectors are the explicit eigenvectors (the
    subspace iteration's two passes keep only the last block and are not). The bound does not
    know it yet (the second block's image is beyond the passes) and says so; after a third pass
    it does, and the run stops there."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((400, 20)) @ rng.standard_normal((20, 60))
    features = data_matrix(X).normalised()
    Mt, _, _, _ = preprocess_features(X)
    weights = rng.random(features.n_kept)
    values, vectors = linalg.eigh(Mt @ np.diag(weights) @ Mt.T)
    reference = vectors[:, np.argsort(-values)[:2]]
    monkeypatch.setattr(sample_vectors, "GRAM_LIMIT", 100)
    monkeypatch.setattr(sample_vectors, "KRYLOV_OVERSAMPLING", 10)
    found = krylov_sample_vectors(features, weights, 2, passes=2, rtol=1e-8)
    assert found.passes == 2 and np.allclose(linalg.svdvals(reference.T @ found.vectors), 1.0, rtol=0, atol=1e-10)
    assert _explicit_residual(Mt, weights, found.vectors)[0] <= 1e-12 and not found.converged
    longer = krylov_sample_vectors(features, weights, 2, passes=5, rtol=1e-8)
    assert longer.passes == 3 and longer.converged and longer.residual <= 1e-8
    assert np.allclose(linalg.svdvals(reference.T @ longer.vectors), 1.0, rtol=0, atol=1e-10)
    subspace = leading_sample_vectors(features, weights, 2, max_passes=2)
    assert not subspace.converged and _explicit_residual(Mt, weights, subspace.vectors)[0] > 1e-6


@pytest.mark.parametrize("passes", [1, 2, 3])
def test_krylov_vectors_carry_a_true_residual_bound_and_their_products(monkeypatch, passes):
    """On full-rank counts: the residual reported is at least the vectors' own (recomputed from
    the explicit matrix), converged says whether it is within rtol, ``products`` is
    ``vectors^T Mt``; the subspace iteration that runs out of passes reports a bound as true."""
    X, _ = sparse_counts(400, 60)
    features = data_matrix(sparse.csr_matrix(X)).normalised()
    Mt, _, _, _ = preprocess_features(X)
    weights = np.random.default_rng(2).random(features.n_kept)
    monkeypatch.setattr(sample_vectors, "GRAM_LIMIT", 100)
    for found in (krylov_sample_vectors(features, weights, 3, passes), leading_sample_vectors(features, weights, 3, max_passes=passes)):
        true, _ = _explicit_residual(Mt, weights, found.vectors)
        # a finite bound of the vectors returned, from one pass on (the subspace iteration used to
        # report the residual of the vectors before the last pass: none after one pass)
        assert np.isfinite(found.residual) and true <= found.residual * (1 + 1e-9)
        assert found.converged == (found.residual <= sample_vectors.SUBSPACE_RTOL)
        assert np.allclose(found.vectors.T @ found.vectors, np.eye(3), rtol=0, atol=1e-12)
        assert np.allclose(found.products, found.vectors.T @ Mt, rtol=0, atol=1e-10)


def test_krylov_vectors_of_data_with_fewer_directions_than_k_are_completed(monkeypatch):
    """Normalised features of rank 2 (three distinct rows) with k = 4: the two Ritz vectors are
    A_w's two eigenvectors, two orthonormal directions complete them, and with those neither a
    residual nor the products are claimed; Q-alpha runs from such a start."""
    rng = np.random.default_rng(9)
    X = rng.standard_normal((3, 50))[np.arange(400) % 3]
    features = data_matrix(X).normalised()
    Mt, _, _, _ = preprocess_features(X)
    weights = rng.random(features.n_kept)
    values, vectors = linalg.eigh(Mt @ np.diag(weights) @ Mt.T)
    monkeypatch.setattr(sample_vectors, "GRAM_LIMIT", 100)
    found = krylov_sample_vectors(features, weights, 4, passes=2)
    assert found.vectors.shape == (400, 4) and np.allclose(found.vectors.T @ found.vectors, np.eye(4), atol=1e-12)
    assert np.allclose(linalg.svdvals(vectors[:, np.argsort(-values)[:2]].T @ found.vectors[:, :2]), 1.0, atol=1e-10)
    assert not found.converged and found.residual == np.inf and found.products is None
    result = q_alpha(X, 3, max_iter=50, tol=1e-6)
    assert np.isfinite(result.alpha).all() and np.allclose(result.Q.T @ result.Q, np.eye(3), atol=1e-8)


def test_the_krylov_space_holds_more_than_the_subspace_iteration_of_the_same_passes(monkeypatch):
    """From the same first block the two-pass Krylov space contains the two-pass subspace
    iteration's, so its k leading Rayleigh quotients (Ritz values) are at least as large, one by
    one, and its vectors lie nearer the explicit eigenvectors."""
    X, _ = sparse_counts(400, 60, random_state=3)
    features = data_matrix(sparse.csr_matrix(X)).normalised()
    Mt, _, _, _ = preprocess_features(X)
    weights = np.random.default_rng(5).random(features.n_kept)
    values, vectors = linalg.eigh(Mt @ np.diag(weights) @ Mt.T)
    reference = vectors[:, np.argsort(-values)[:3]]
    monkeypatch.setattr(sample_vectors, "GRAM_LIMIT", 100)
    monkeypatch.setattr(sample_vectors, "KRYLOV_OVERSAMPLING", sample_vectors.SUBSPACE_OVERSAMPLING)  # one first block
    krylov = krylov_sample_vectors(features, weights, 3, passes=2)
    subspace = leading_sample_vectors(features, weights, 3, max_passes=2)
    krylov_values, subspace_values = (_explicit_residual(Mt, weights, v.vectors)[1] for v in (krylov, subspace))
    assert np.all(krylov_values >= subspace_values - 1e-12)
    assert linalg.svdvals(reference.T @ krylov.vectors).min() > linalg.svdvals(reference.T @ subspace.vectors).min()
    # weights of both signs: the subspace iteration on the samples' side (no products)
    mixed = krylov_sample_vectors(features, weights - 0.3, 3, passes=2)
    assert mixed.products is None and mixed.passes == 2
    with pytest.raises(InputError, match="passes must be a positive integer"):
        krylov_sample_vectors(features, weights, 3, passes=0)


def test_fewer_features_than_samples_take_the_features_side_and_equal_the_samples_side():
    """2,310 x 19 (segmentation): the q x q eigenproblem took 0.3 s of Q-alpha's start; from the
    19 x 19 matrix D^1/2 K D^1/2 the same eigenvectors, checked against LAPACK on A_w itself."""
    from scipy import linalg

    from core.matrix import data_matrix
    from core.matrix.sample_vectors import leading_sample_vectors

    rng = np.random.default_rng(8)
    X = rng.standard_normal((300, 12)) @ rng.standard_normal((12, 12))
    features = data_matrix(X).normalised()
    weights = rng.random(features.n_kept)
    A = (features.Mt * weights) @ features.Mt.T
    values, exact = linalg.eigh(A)
    for k in (1, 3, 12, 15):  # 15 > the 12 features: three directions of eigenvalue 0 complete them
        found = leading_sample_vectors(features, weights, k).vectors
        assert found.shape == (300, k)
        np.testing.assert_allclose(found.T @ found, np.eye(k), atol=1e-12)
        live = min(k, 12)
        leading = exact[:, ::-1][:, :live]
        np.testing.assert_allclose(found[:, :live] @ found[:, :live].T, leading @ leading.T, atol=1e-9)
        np.testing.assert_allclose(np.linalg.norm(A @ found[:, :live] - found[:, :live] * values[::-1][:live], axis=0),
                                   0, atol=1e-10 * values[-1])


@pytest.mark.parametrize("positive", [True, False])
def test_leading_eigenpairs_are_lapacks_whole_decompositions_leading_ones(positive):
    """The ``count`` pairs of largest magnitude, largest first, against NumPy's whole decomposition;
    a matrix with a NaN is refused, as SciPy's checks refuse it."""
    rng = np.random.default_rng(3)
    B = rng.standard_normal((30, 50))
    A = B @ B.T if positive else (B[:, :30] + B[:, :30].T) / 2
    values, vectors = sample_vectors.leading_eigenpairs(A, 4, positive)
    all_values, all_vectors = np.linalg.eigh(A)
    order = np.argsort(-np.abs(all_values))[:4]
    np.testing.assert_allclose(values, all_values[order], rtol=1e-12)
    np.testing.assert_allclose(np.abs(np.sum(vectors * all_vectors[:, order], axis=0)), 1.0, atol=1e-10)
    A[2, 3] = np.nan
    with pytest.raises(ValueError):
        sample_vectors.leading_eigenpairs(A, 4, positive)
