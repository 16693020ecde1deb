"""Anderson extrapolation of Q-alpha's alternation (issue 75): the mixing against the identity it
rests on (on a linear map it is GMRES, exact after as many steps as dimensions), and on Q-alpha
the same fixed point as the alternation alone, in fewer iterations, with the objective never
going down and no mixing far from a fixed point."""

import numpy as np
import pytest
from sklearn.datasets import load_wine

from core import load_dataset
from core.selection._qalpha import anderson
from core.selection.qalpha import q_alpha


def test_the_mixing_solves_a_linear_fixed_point_problem_in_as_many_steps_as_dimensions():
    """For ``g(x) = B x + c`` Anderson's mixing with memory at least the dimension d is GMRES on
    ``(I - B) x = c`` (Walker & Ni 2011, Th. 2.2): exact after d + 1 images, where the plain
    iteration with spectral radius 0.95 is still far away."""
    rng = np.random.default_rng(0)
    d = 4
    basis = np.linalg.qr(rng.standard_normal((d, d)))[0]
    B = (basis * np.array([0.95, 0.9, -0.5, 0.2])) @ basis.T
    c = rng.standard_normal(d)
    fixed = np.linalg.solve(np.eye(d) - B, c)
    mixing = anderson.Mixing(memory=d)
    x = plain = np.zeros(d)
    for _ in range(d + 2):
        image = B @ x + c
        mixed = mixing.next(0.0, x, image, (image, 2 * image))
        x = image if mixed is None else mixed[0]
        plain = B @ plain + c
    np.testing.assert_allclose(x, fixed, atol=1e-10)
    np.testing.assert_allclose(mixed[1], 2 * mixed[0], atol=1e-12)  # every part by the same coefficients
    assert np.linalg.norm(plain - fixed) > 0.1 * np.linalg.norm(fixed)


def test_the_mixing_waits_near_a_fixed_point_and_after_a_discard():
    """No mixing while the residual is above START_BELOW; after a discard the next images go
    unmixed, 1 after the first, 2 after the second, then 4, 8."""
    mixing = anderson.Mixing()
    point = np.zeros(3)
    assert mixing.next(1.0, point, point + 1.0, (point,)) is None
    assert mixing.next(10 * anderson.START_BELOW, point, point + 2.0, (point,)) is None
    assert mixing.next(anderson.START_BELOW, point, point + 3.0, (point,)) is not None
    for discards, paused in ((1, 1), (2, 2), (3, 4), (4, 8)):
        mixing = anderson.Mixing()
        for _ in range(discards):
            mixing.discarded()
        unmixed = [mixing.next(0.0, point, point + step, (point,)) is None for step in range(1, 12)]
        assert unmixed == [True] * paused + [False] * (11 - paused)


def test_the_mixing_combines_the_last_memory_plus_one_images_by_least_squares():
    """Memory 1, by hand: after images g_0, g_1, g_2 of points x_0, x_1, x_2 the next iterate is
    ``g_2 - gamma (g_2 - g_1)`` with ``gamma = <f_2 - f_1, f_2> / ||f_2 - f_1||^2`` (f = g - x): the
    oldest image has left the memory; each part keeps its own dtype (float32 here)."""
    rng = np.random.default_rng(2)
    points, images = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    mixing = anderson.Mixing(memory=1)
    for x, g in zip(points, images):
        mixed = mixing.next(0.0, x, g, (g.astype(np.float32), 3 * g))
    f1, f2 = images[1] - points[1], images[2] - points[2]
    gamma = (f2 - f1) @ f2 / ((f2 - f1) @ (f2 - f1))
    np.testing.assert_allclose(mixed[0], images[2] - gamma * (images[2] - images[1]), rtol=1e-6)
    np.testing.assert_allclose(mixed[1], 3 * (images[2] - gamma * (images[2] - images[1])), rtol=1e-12)
    assert mixed[0].dtype == np.float32 and mixed[1].dtype == np.float64


def test_the_mixings_coefficients_are_the_least_squares_ones_with_nearly_dependent_differences():
    """Memory 3, residual differences of which two are equal to 1e-13: the mixed iterate is the
    one from NumPy's SVD least squares on the differences at the same RCOND (the mixing takes them
    from the QR of the stacked differences)."""
    rng = np.random.default_rng(3)
    points = rng.standard_normal((5, 40))
    residuals = rng.standard_normal((5, 40))
    residuals[3] = residuals[2] + (residuals[2] - residuals[1]) + 1e-13 * rng.standard_normal(40)
    images = points + residuals
    mixing = anderson.Mixing(memory=3)
    for x, g in zip(points, images):
        mixed = mixing.next(0.0, x, g, (g,))
    kept = residuals[1:]
    gamma = np.linalg.lstsq(np.diff(kept, axis=0).T, kept[-1], rcond=anderson.RCOND)[0]
    expected = images[-1] - gamma @ np.diff(images[1:], axis=0)
    np.testing.assert_allclose(mixed[0], expected, rtol=1e-9, atol=1e-9)


def test_the_mixing_fits_while_its_kept_images_take_at_most_memory_bytes():
    """``(m + 1)`` kept images of ``2 (n + q k) + k n`` float64 values each: the most features
    whose images take at most MEMORY_BYTES fit, one more does not."""
    q, k = 10, 2
    per_feature = (anderson.MEMORY + 1) * 8 * (2 + k)
    fixed = (anderson.MEMORY + 1) * 8 * 2 * q * k
    n = (anderson.MEMORY_BYTES - fixed) // per_feature
    assert anderson.fits(n, q, k) and not anderson.fits(n + 1, q, k)


def test_the_turn_to_the_last_basis_undoes_a_rotation_within_the_span():
    """A new basis B = L W0 of the same span (W0 orthogonal): the turn from B^T L is W0^T, so B W
    is L again; for another span it is the orthogonal W nearest to B^T L (its polar factor)."""
    rng = np.random.default_rng(4)
    last = np.linalg.qr(rng.standard_normal((9, 3)))[0]
    W0 = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    new = last @ W0
    np.testing.assert_allclose(new @ anderson.turned_to_last(new.T @ last), last, atol=1e-12)
    other = np.linalg.qr(rng.standard_normal((9, 3)))[0]
    W = anderson.turned_to_last(other.T @ last)
    np.testing.assert_allclose(W.T @ W, np.eye(3), atol=1e-12)
    symmetric = W.T @ (other.T @ last)  # the polar factor leaves a symmetric positive semi-definite rest
    np.testing.assert_allclose(symmetric, symmetric.T, atol=1e-12)
    assert np.linalg.eigvalsh((symmetric + symmetric.T) / 2).min() >= -1e-12


def test_the_signed_qr_gives_the_same_column_signs_for_a_column_flipped_matrix():
    rng = np.random.default_rng(1)
    T = rng.standard_normal((8, 3))
    Q, R = anderson.signed_qr(T)
    Q_flipped, _ = anderson.signed_qr(T * np.array([1.0, -1.0, 1.0]))
    assert np.all(np.diag(R) >= 0) and np.allclose(Q @ R, T)
    np.testing.assert_allclose(Q_flipped * np.array([1.0, -1.0, 1.0]), Q, atol=1e-12)


@pytest.mark.parametrize("name, k", [("colon", 2), ("TOX-171", 5), ("ALLAML", 8)])
def test_the_extrapolated_alternation_reaches_the_alternations_fixed_point_in_fewer_iterations(name, k):
    """On bundled sets the default run mixes the alternation's iterates and ends where the
    alternation alone does at tol 1e-12 (within tol's reach, the same top 50, the objective within
    1e-10), in at most half its iterations."""
    X = load_dataset(name).X
    reference = q_alpha(X, k, accelerate=False, tol=1e-12, max_iter=50_000)
    alone = q_alpha(X, k, accelerate=False)
    result = q_alpha(X, k)
    assert result.converged and "Anderson extrapolation" in result.acceleration
    assert result.n_iter <= alone.n_iter / 2
    assert np.abs(result.alpha - reference.alpha).max() < 1e-5
    assert set(result.top(50)) == set(reference.top(50))
    assert result.objective == pytest.approx(reference.objective, rel=1e-10)


@pytest.mark.parametrize("name, k, most", [("colon", 8, 14), ("ORL", 8, 22)])
def test_the_mixed_q_basis_is_turned_to_the_last_one(name, k, most):
    """The alternation fixes Q's span, not its basis: each image's basis is turned to the last
    iterate's (orthogonal Procrustes), so the mixing does not spend its memory on the QR basis's
    slow drift within the span. Measured (2-core AMD EPYC): colon 12 iterations turned, 18 not;
    ORL 17 and 32."""
    X = load_dataset(name).X
    result = q_alpha(X, k)
    assert result.converged and result.evaluations == 0
    assert result.n_iter <= most


def _counting_discards(monkeypatch):
    discards = []
    real = anderson.Mixing.discarded

    def counted(self):
        discards.append(1)
        real(self)

    monkeypatch.setattr(anderson.Mixing, "discarded", counted)
    return discards


def test_a_mixed_point_that_lowers_the_objective_is_not_taken(monkeypatch):
    """TOX-171 at k = 8: mixed points go downhill there (2 of them); each is dropped, so the
    objective's history never falls, and the run ends at the alternation's weights."""
    discards = _counting_discards(monkeypatch)
    X = load_dataset("TOX-171").X
    result = q_alpha(X, 8)
    reference = q_alpha(X, 8, accelerate=False, tol=1e-12, max_iter=50_000)
    assert discards and result.converged
    assert np.all(np.diff(result.history) >= -1e-10 * np.abs(result.history[1:]))
    np.testing.assert_allclose(result.alpha, reference.alpha, atol=1e-5)


def test_a_run_with_side_data_is_mixed_in_the_operators_variable(monkeypatch):
    """Wine with a side class: the power step's variable is beta, alpha = S^1/2 beta normalised.
    Mixed as beta, no mixed point goes downhill and the run takes 12 iterations against the
    alternation's 22; mixed as alpha and read as beta (scaled twice), points were discarded and
    nothing was gained (the digits' λ path: 51 discards in 264 iterations, the alternation's 264)."""
    discards = _counting_discards(monkeypatch)
    X, y = load_wine(return_X_y=True)
    main, side = X[y != 0], X[y == 0]
    result = q_alpha(main, 2, side=side, lam=0.1)
    reference = q_alpha(main, 2, side=side, lam=0.1, accelerate=False, tol=1e-12, max_iter=50_000)
    assert not discards and result.converged and result.n_iter <= 15
    np.testing.assert_allclose(result.alpha, reference.alpha, atol=1e-5)


def _pbmc_like(seed=0):
    """700 cells x 765 genes in 10 types: log1p of negative-binomial counts whose means rise 4-fold
    on 20 marker genes per type (as benchmarks.bench_convergence.pbmc_sized)."""
    rng = np.random.default_rng(seed)
    types = np.repeat(np.arange(10), 70)
    means = np.tile(rng.gamma(0.6, 1.5, size=765), (10, 1))
    for t in range(10):
        means[t, rng.choice(765, 20, replace=False)] *= 4.0
    return np.log1p(rng.negative_binomial(2, 2 / (2 + means[types])).astype(np.float64))


def test_mixing_far_from_a_fixed_point_would_reach_another_one(monkeypatch):
    """Why mixing waits for the residual to fall below START_BELOW: on a PBMC-sized table at k = 4
    mixing from the first steps (with the downhill safeguard) settles at a lower fixed point than
    the alternation's; waiting, the default ends at the alternation's objective."""
    X = _pbmc_like()
    alone = q_alpha(X, 4, accelerate=False)
    result = q_alpha(X, 4)
    assert result.converged and result.objective >= alone.objective * (1 - 1e-9)
    monkeypatch.setattr(anderson, "START_BELOW", np.inf)
    early = q_alpha(X, 4)
    assert early.converged and early.objective < alone.objective * (1 - 1e-4)


def test_the_mixing_stays_off_where_its_memory_does_not_fit(monkeypatch):
    """Above MEMORY_BYTES of kept images the alternation runs unmixed: the run of accelerate=False."""
    X = load_dataset("colon").X
    assert anderson.fits(2_000, 62, 2)
    monkeypatch.setattr(anderson, "MEMORY_BYTES", 1_000)
    assert not anderson.fits(2_000, 62, 2)
    result, alone = q_alpha(X, 2), q_alpha(X, 2, accelerate=False)
    assert result.acceleration == "" and result.n_iter == alone.n_iter
    np.testing.assert_array_equal(result.alpha, alone.alpha)


def test_the_least_squares_are_numpys_at_the_same_cut():
    """LAPACK's gelss as the mixing calls it: NumPy's lstsq at RCOND on full-rank, rank-deficient
    (a column the sum of two others, which the cut leaves out: the least-norm solution) and wide
    systems (fewer rows than columns, where gelss would want a longer target)."""
    rng = np.random.default_rng(7)
    full = rng.standard_normal((6, 4))
    deficient = full.copy()
    deficient[:, 3] = deficient[:, 0] + deficient[:, 1]
    wide = rng.standard_normal((3, 5))
    for matrix in (full, deficient, wide, np.triu(full[:4])):
        target = rng.standard_normal(matrix.shape[0])
        expected = np.linalg.lstsq(matrix, target, rcond=anderson.RCOND)[0]
        np.testing.assert_allclose(anderson.least_squares(matrix, target), expected, rtol=1e-10, atol=1e-12)
    # the cut acts: the least-norm solution has no component along the dependent direction
    solution = anderson.least_squares(deficient, rng.standard_normal(6))
    null = np.array([1.0, 1.0, 0.0, -1.0]) / np.sqrt(3)
    assert abs(solution @ null) < 1e-10


def test_the_mixing_fits_exactly_at_its_memory_bytes(monkeypatch):
    """At equality the kept images fit: MEMORY_BYTES is the most they may take."""
    q, k, n = 10, 2, 1000
    per_image = 2 * (n + q * k) + k * n
    monkeypatch.setattr(anderson, "MEMORY_BYTES", (anderson.MEMORY + 1) * per_image * 8)
    assert anderson.fits(n, q, k) and not anderson.fits(n + 1, q, k)


def test_the_least_squares_are_lapacks_own_and_numpys_where_lapack_cannot(monkeypatch):
    """Tall and square systems go to gelss directly (NumPy's lstsq, ten microseconds more a step,
    is not called); wide ones and a failing gelss (info != 0) fall back to NumPy's."""
    rng = np.random.default_rng(8)
    numpys = np.linalg.lstsq
    calls = []

    def counted(*args, **kwargs):
        calls.append(args[0].shape)
        return numpys(*args, **kwargs)

    monkeypatch.setattr(anderson.np.linalg, "lstsq", counted)
    for shape in ((6, 4), (4, 4)):
        matrix, target = rng.standard_normal(shape), rng.standard_normal(shape[0])
        np.testing.assert_allclose(anderson.least_squares(matrix, target),
                                   numpys(matrix, target, rcond=anderson.RCOND)[0], rtol=1e-10)
    assert calls == []
    anderson.least_squares(rng.standard_normal((3, 5)), rng.standard_normal(3))
    assert calls == [(3, 5)]
    real = anderson.lapack

    def failing_gelss(matrix, target, cond):
        return None, None, None, 0, None, 1

    monkeypatch.setattr(anderson, "lapack", lambda name, *dtype: failing_gelss if name == "gelss" else real(name, *dtype))
    matrix, target = rng.standard_normal((6, 4)), rng.standard_normal(6)
    np.testing.assert_allclose(anderson.least_squares(matrix, target), numpys(matrix, target, rcond=anderson.RCOND)[0])
    assert calls[-1] == (6, 4)


def test_the_turn_falls_back_to_numpys_svd_where_gesdd_fails(monkeypatch):
    """gesdd's own failure (info != 0) on the k x k cross product: NumPy's SVD gives the turn."""
    rng = np.random.default_rng(9)
    last = np.linalg.qr(rng.standard_normal((9, 3)))[0]
    rotation = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    new = last @ rotation
    real = anderson.lapack

    def failing_gesdd(matrix):
        return np.zeros((3, 3)), np.zeros(3), np.zeros((3, 3)), 1

    monkeypatch.setattr(anderson, "lapack", lambda name, *dtype: failing_gesdd if name == "gesdd" else real(name, *dtype))
    np.testing.assert_allclose(new @ anderson.turned_to_last(new.T @ last), last, atol=1e-12)


def test_the_signed_qr_keeps_float32_and_the_turn_is_lapacks_gesdd(monkeypatch):
    """A float32 iterate's QR stays float32 (its signs in its own type, not float64's, which would
    double the iteration's products); the turn is gesdd's own SVD (NumPy's is not called)."""
    rng = np.random.default_rng(10)
    T = rng.standard_normal((30, 3)).astype(np.float32)
    Q, R = anderson.signed_qr(T)
    assert Q.dtype == R.dtype == np.float32 and np.all(np.diag(R) >= 0)
    np.testing.assert_allclose(Q @ R, T, atol=1e-5)

    def no_numpy_svd(*args, **kwargs):
        raise AssertionError("NumPy's SVD was called")

    monkeypatch.setattr(anderson.np.linalg, "svd", no_numpy_svd)
    last = np.linalg.qr(rng.standard_normal((9, 3)))[0]
    rotation = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    np.testing.assert_allclose((last @ rotation) @ anderson.turned_to_last((last @ rotation).T @ last), last,
                               atol=1e-12)
