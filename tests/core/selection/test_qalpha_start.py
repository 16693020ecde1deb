"""The start stage of Q-alpha's solver (core.selection._qalpha.start): where each start begins,
checked against what it is built from (the data's products, the neighbour's result), not against
its own earlier output."""

import numpy as np
import pytest

from core.selection._qalpha.prepare import prepare, problem_at
from core.selection._qalpha.start import first_iterate, first_weights
from core.selection.qalpha import QAlphaParameters, q_alpha


def planted(seed=0, q=50, n=80):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((q, n))
    X[: q // 2, :6] += 2.0
    return X


def prepared_for(X, k=2, accelerate=True, **options):
    settings = dict(labels=None, side=None, pairs=None, criterion="sum", method="power", max_iter=1000, tol=1e-6,
                    solver="auto", eig_tol=1e-10, power_steps=1, dtype=np.float64, memory_limit=None)
    settings.update(options)
    prepared = prepare(X, k, accelerate=accelerate, **settings)
    return prepared, problem_at(prepared, 0.0)


def test_the_uniform_start_is_the_leading_eigenvectors_and_hands_on_its_products(monkeypatch):
    """init="uniform": Q^(0) spans the k leading eigenvectors of M^T M (every weight equal), from the
    explicit Gram matrix up to GRAM_LIMIT samples. Beyond it (made small here) a block Krylov space
    of two passes, whose last pass gives (M Q^(0))^T: the start hands it on, so the run's first
    product is not made again."""
    from core.matrix import sample_vectors

    X = planted()
    prepared, problem = prepared_for(X)
    start = first_iterate(problem, prepared, 0, "uniform", np.random.default_rng(0))
    Mt = problem.features.Mt
    leading = np.linalg.eigh(Mt @ Mt.T)[1][:, -2:]
    np.testing.assert_allclose(np.linalg.svd(leading.T @ start.Q, compute_uv=False), 1.0, atol=1e-10)
    assert start.passes == 0 and start.alpha is None and start.beta is None

    monkeypatch.setattr(sample_vectors, "GRAM_LIMIT", 20)
    prepared, problem = prepared_for(X)
    start = first_iterate(problem, prepared, 0, "uniform", np.random.default_rng(0))
    assert start.passes >= 1 and start.Pt is not None
    np.testing.assert_allclose(start.Q.T @ start.Q, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(start.Pt, start.Q.T @ Mt, atol=1e-10)


def test_a_warm_start_begins_at_the_neighbours_weights_and_subspace():
    """A λ path's next solve starts from its neighbour's Q and weights (the kept features'): for the
    alternation as its first iterate, for the ascent alone as its first point."""
    X = planted(1)
    neighbour = q_alpha(X, 2)
    for accelerate in (True, "always"):
        prepared, problem = prepared_for(X, accelerate=accelerate)
        start = first_iterate(problem, prepared, 0, "uniform", np.random.default_rng(0), warm=neighbour)
        np.testing.assert_array_equal(start.Q, neighbour.Q)
        np.testing.assert_array_equal(start.alpha, neighbour.alpha[prepared.features.kept])
        if accelerate == "always":
            np.testing.assert_allclose(start.beta, problem.to_beta(neighbour.alpha[prepared.features.kept]),
                                       rtol=1e-12)


def test_the_ascent_alone_begins_at_equal_weights_and_later_starts_one_step_from_random():
    """accelerate="always" from the uniform start needs no Q: every beta equal. A later start is
    random: Q^(0) random orthonormal, and the ascent begins at C(Q^(0)) 1, normalised."""
    X = planted(2)
    prepared, problem = prepared_for(X, accelerate="always")
    first = first_iterate(problem, prepared, 0, "uniform", np.random.default_rng(0))
    assert first.Q is None
    np.testing.assert_array_equal(first.beta, np.full(problem.n, 1 / np.sqrt(problem.n)))
    later = first_iterate(problem, prepared, 1, "uniform", np.random.default_rng(0))
    assert later.Q is not None
    np.testing.assert_allclose(later.Q.T @ later.Q, np.eye(2), atol=1e-12)
    uniform = np.full(problem.n, 1 / np.sqrt(problem.n))
    image = problem.operator_matvec(later.Q.T @ problem.features.Mt, uniform)
    np.testing.assert_allclose(later.beta, image / np.linalg.norm(image), rtol=1e-10)


def test_a_start_that_sees_no_structure_begins_at_equal_weights():
    """A Q^(0) that meets no feature makes C(Q^(0)) 1 zero: the ascent begins at equal weights,
    not at 0 / 0."""
    X = planted(3)
    prepared, problem = prepared_for(X)
    beta = first_weights(problem, np.zeros((X.shape[0], 1)), None, None)
    assert np.isfinite(beta).all()
    np.testing.assert_array_equal(beta, np.full(problem.n, 1 / np.sqrt(problem.n)))


def test_the_parameters_hand_the_starts_and_the_progress_to_the_run():
    """QAlphaParameters.run passes n_init (the starts made) and the progress callback."""
    X = planted(4)
    heard = []
    result = QAlphaParameters(k=2, n_init=3, random_state=0, init="random").run(X, progress=heard.append)
    assert result.restart_objectives.size == 3
    assert heard and heard[0].done == 1


@pytest.mark.parametrize("accelerate", [True, "always"])
def test_every_start_is_counted(accelerate):
    X = planted(5)
    result = q_alpha(X, 2, n_init=2, random_state=0, accelerate=accelerate)
    assert result.restart_objectives.size == 2 and result.converged


def test_the_uniform_start_of_fewer_columns_is_the_first_columns_of_more(monkeypatch):
    """A search over k at one λ computes the uniform start once (uniform_vectors, at the largest
    k) and each run takes its first columns: the same eigenvectors of the explicit matrix as its
    own start, on both sides (the samples' Gram matrix and the features' where they are fewer).
    Where the start is a Krylov space (its columns depend on k), the runs start alone."""
    from core.errors import InputError
    from core.matrix import sample_vectors
    from core.selection._qalpha.prepare import with_k
    from core.selection._qalpha.start import uniform_vectors

    for X in (planted(), planted(q=50, n=30)):
        prepared, problem = prepared_for(X, k=4)
        shared = uniform_vectors(problem, prepared, "uniform")
        assert shared.shape == (50, 4)
        for k in (1, 2, 3, 4):
            alone = first_iterate(problem, with_k(prepared, k), 0, "uniform", np.random.default_rng(0))
            given = first_iterate(problem, with_k(prepared, k), 0, "uniform", np.random.default_rng(0),
                                  uniform=shared)
            np.testing.assert_allclose(np.abs(given.Q.T @ alone.Q), np.eye(k), atol=1e-10)
            # taken as given, not computed again
            other = np.linalg.qr(np.random.default_rng(k).standard_normal((50, 4)))[0]
            taken = first_iterate(problem, with_k(prepared, k), 0, "uniform", None, uniform=other)
            np.testing.assert_array_equal(taken.Q, other[:, :k])
    assert uniform_vectors(problem, prepared, "random") is None
    assert uniform_vectors(problem, prepared_for(X, k=4, accelerate="always")[0], "uniform") is None
    assert uniform_vectors(problem, prepared_for(X, labels=np.arange(50) % 3, k=None)[0], "uniform") is None
    monkeypatch.setattr(sample_vectors, "GRAM_LIMIT", 40)
    assert uniform_vectors(problem, prepared, "uniform") is None
    with pytest.raises(InputError, match="1 <= k < n_samples = 50"):
        with_k(prepared, 50)
    with pytest.raises(InputError, match="supervised"):
        with_k(prepared_for(X, labels=np.arange(50) % 3, k=None)[0], 2)
