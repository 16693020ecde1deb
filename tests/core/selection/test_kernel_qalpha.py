"""Kernel Q-alpha: Definition 2 of 000 checked against linear Q-alpha and against its own formulas."""

import numpy as np
import pytest

from core.data.bundled import load_dataset
from core.errors import InputError
from core.selection.kernel_qalpha import kernel_matrix, kernel_memory_bytes, kernel_q_alpha
from core.selection.qalpha import preprocess_features, q_alpha
from core.data.generators import weston_linear


def cosine(a, b):
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


@pytest.mark.parametrize("seed", range(3))
def test_linear_kernel_reproduces_q_alpha_on_weston(seed):
    data = weston_linear(200, random_state=seed)
    assert cosine(kernel_q_alpha(data.X, 2).alpha, q_alpha(data.X, 2).alpha) >= 0.999


def test_linear_kernel_reproduces_q_alpha_on_faces():
    faces = load_dataset("warpAR10P")
    pixels = faces.images()[:, ::2, ::2].reshape(faces.n_samples, -1)  # 600 pixels, 30 x 20
    assert cosine(kernel_q_alpha(pixels, 5).alpha, q_alpha(pixels, 5).alpha) >= 0.999


def test_definition_2_quantities():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((25, 8))
    result = kernel_q_alpha(X, 2, "poly", degree=3, coef0=0.5, max_iter=3, tol=1e-14)
    Mt, _, _, _ = preprocess_features(X)
    V = kernel_matrix(Mt, "poly", 3, 0.5)
    M = Mt.T
    assert np.allclose(V, (M @ M.T + 0.5) ** 3)
    E = result.Q
    assert np.allclose(E.T @ V @ E, np.eye(2), atol=1e-8)  # Q = Phi^T E is orthonormal
    # G_ij = k(m_i, m_j) v_i^T E E^T v_j, by loops
    G = np.array([[V[i, j] * (V[:, i] @ E @ E.T @ V[:, j]) for j in range(8)] for i in range(8)])
    assert np.allclose(G, V * (V @ E @ E.T @ V))


def test_positive_and_sparse_on_weston_with_poly_and_rbf():
    for seed in range(3):
        data = weston_linear(200, random_state=seed)
        for kernel, options in (("poly", dict(degree=2)), ("poly", dict(degree=3)), ("rbf", dict(gamma=5.0))):
            result = kernel_q_alpha(data.X, 2, kernel, **options)
            alpha = result.alpha
            assert result.converged
            assert alpha.min() >= -1e-6 * alpha.max()
            assert set(result.top(2)) <= {0, 1, 2} and result.n_selected <= 6
            ordered = np.sort(alpha)[::-1]
            assert ordered[1] > 50 * ordered[6]  # a sharp break after the relevant features


def test_what_the_kernel_adds_few_strong_over_many_weak():
    """Linear Q-alpha prefers 40 weakly coupled features (correlation 0.3) to 3 strongly coupled
    ones (0.9); the RBF kernel reshapes the affinities and picks the strong group."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        weak = 0.7 * rng.standard_normal(300)[:, None] + rng.standard_normal((300, 40))
        strong = 0.95 * rng.standard_normal(300)[:, None] + 0.3 * rng.standard_normal((300, 3))
        X = np.hstack([weak, strong, rng.standard_normal((300, 20))])
        linear = kernel_q_alpha(X, 1).alpha
        rbf = kernel_q_alpha(X, 1, "rbf", gamma=5.0).alpha
        assert (linear[:40] ** 2).sum() > 0.9
        assert (rbf[40:43] ** 2).sum() > 0.9


def test_exactly_decorrelated_features_no_dot_product_kernel_can_single_out_a_group():
    """[SW04] Sec. 2: with M M^T diagonal, linear Q-alpha's G is diagonal and one feature is chosen.
    Here x1, x2 and x1*x2 (a third-order dependence) plus 16 other Walsh functions of a full 2^7
    factorial design: every feature is exactly orthogonal to every other. Dot-product and RBF
    kernels then give V = a I + b 1 1^T, which treats all features alike: kernel Q-alpha returns
    equal weights, and the relevant triple is not found. (Documented in core.selection.kernel_qalpha.)"""
    levels = np.array(np.meshgrid(*[[-1.0, 1.0]] * 7, indexing="ij")).reshape(7, -1).T  # 128 x 7
    relevant = [levels[:, 0], levels[:, 1], levels[:, 0] * levels[:, 1]]
    others = [np.prod(levels[:, list(subset)], axis=1)
              for subset in [(i,) for i in range(2, 7)] + [(i, j, l) for i in range(2, 7)
                                                          for j in range(i + 1, 7) for l in range(j + 1, 7)]
              + [(2, 3, 4, 5, 6)]]
    X = np.column_stack(relevant + others)
    assert X.shape == (128, 19)
    assert np.allclose(X.T @ X, 128 * np.eye(19))  # decorrelated
    linear = q_alpha(X, 1).alpha
    assert np.sum(linear > 1e-6) == 1  # G diagonal: a single feature
    for kernel, options in (("poly", dict(degree=3, coef0=1.0)), ("rbf", dict(gamma=5.0))):
        alpha = kernel_q_alpha(X, 1, kernel, **options).alpha
        assert np.allclose(alpha, alpha.mean(), rtol=1e-6)


def test_memory_guard_and_bad_input():
    X = np.random.default_rng(0).standard_normal((20, 30))
    with pytest.raises(InputError, match="needs about .* GB .* more than the limit"):
        kernel_q_alpha(X, 2, memory_limit=kernel_memory_bytes(30) - 1)
    with pytest.raises(InputError, match="degree must be an integer of at least 1"):
        kernel_q_alpha(X, 2, "poly", degree=0)
    with pytest.raises(InputError, match="gamma must be greater than 0"):
        kernel_q_alpha(X, 2, "rbf", gamma=0.0)
    with pytest.raises(InputError, match="not symmetric"):
        kernel_q_alpha(X, 2, lambda A, B: np.triu(A @ B.T) + 1.0)
    with pytest.raises(InputError, match="must return a 30 x 30 matrix"):
        kernel_q_alpha(X, 2, lambda A, B: np.ones((3, 3)))
    with pytest.raises(InputError, match="kernel must be one of"):
        kernel_q_alpha(X, 2, "sigmoid")
    with pytest.raises(InputError, match="1 <= k < n_samples"):
        kernel_q_alpha(X, 20)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(InputError, match="NaN or infinite"):
        kernel_q_alpha(bad, 2)


def test_side_information_and_callable_kernel():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 12))
    side = rng.standard_normal((15, 12))
    linear_si = kernel_q_alpha(X, 2, side=side, lam=0.1)
    assert cosine(linear_si.alpha, q_alpha(X, 2, side=side, lam=0.1).alpha) >= 0.999
    custom = kernel_q_alpha(X, 2, lambda A, B: (A @ B.T) ** 2)
    assert cosine(custom.alpha, kernel_q_alpha(X, 2, "poly", degree=2, coef0=0.0).alpha) >= 0.999999


@pytest.mark.parametrize("bad, message", [
    (dict(k=0), "k \\(the number of clusters\\) must be an integer with 1 <= k < n_samples = 30"),
    (dict(k=30), "k \\(the number of clusters\\) must be an integer with 1 <= k < n_samples = 30"),
    (dict(lam=-1.0), "lam"), (dict(lam=1e13), "lam"),
    (dict(init="spectral"), "init must be 'uniform' or 'random'"),
    (dict(n_init=0), "n_init must be a positive integer"), (dict(max_iter=0), "max_iter must be a positive integer")])
def test_q_alpha_and_kernel_q_alpha_check_their_common_parameters_alike(bad, message):
    """One set of checks for the parameters both algorithms take (core.selection._spectral: check_clusters, check_settings): the same
    input is refused by both with the same words."""
    import inspect

    X = np.random.default_rng(0).standard_normal((30, 12))
    parameters = dict(k=2, lam=0.0, init="uniform", n_init=1, max_iter=50) | bad
    for algorithm in (q_alpha, kernel_q_alpha):
        with pytest.raises(InputError, match=message):
            algorithm(X, parameters["k"],
                      **{name: value for name, value in parameters.items() if name != "k"})
    assert "_side_diagonal" not in inspect.signature(q_alpha).parameters  # topographic_map's own affair


@pytest.mark.parametrize("seed", range(3))
def test_power_solver_reaches_the_eigen_solvers_fixed_point_where_there_is_one(seed):
    """Weston's data with a polynomial kernel have one clear maximum: the matrix-free power steps
    (solver="power") and the exact eigenvector per iteration (the printed step 3) end at the same
    weights, and float32 products at the same weights to about 1e-5."""
    data = weston_linear(200, random_state=seed)
    exact = kernel_q_alpha(data.X, 2, "poly", degree=2)
    power = kernel_q_alpha(data.X, 2, "poly", degree=2, solver="power", max_iter=2000)
    single = kernel_q_alpha(data.X, 2, "poly", degree=2, solver="power", max_iter=2000, dtype=np.float32)
    assert exact.converged and power.converged and single.converged
    assert np.abs(power.alpha - exact.alpha).max() < 1e-5
    assert np.abs(single.alpha - exact.alpha).max() < 1e-4
    assert set(power.top(3)) == set(exact.top(3)) == {0, 1, 2}
    assert single.alpha.dtype == np.float64 and single.Q.dtype == np.float64


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # the 4-iteration run
@pytest.mark.parametrize("power_steps", [1, 3])
def test_power_solver_with_side_data_reaches_the_eigen_solvers_fixed_point(power_steps):
    """The power step's first product also serves the E-step (which then takes the weights the
    iteration started from): with side data, and with extra power steps, the fixed point is still
    the printed algorithm's, and the reported objective is alpha^T G alpha / |S^-1/2 alpha|^2 of
    the weights and E returned."""
    data = weston_linear(200, random_state=0)
    main, side = data.X[:150], data.X[150:]
    exact = kernel_q_alpha(main, 2, "poly", degree=2, side=side, lam=0.5)
    power = kernel_q_alpha(main, 2, "poly", degree=2, side=side, lam=0.5, solver="power", power_steps=power_steps,
                           max_iter=3000)
    assert exact.converged and power.converged
    assert np.abs(power.alpha - exact.alpha).max() < 1e-5
    Mt, kept, _, scale = preprocess_features(main)
    V = kernel_matrix(Mt, "poly", degree=2)
    from core.selection._spectral import side_scaling
    from core.selection.qalpha import side_variance
    scaling = side_scaling(side_variance(side, kept, scale, *main.shape), 0.5)
    # after 4 iterations the weights still move: the objective must be of the ones returned
    early = kernel_q_alpha(main, 2, "poly", degree=2, side=side, lam=0.5, solver="power", power_steps=power_steps,
                           max_iter=4, tol=1e-14)
    for result in (power, early):
        P = V @ result.Q
        G = V * (P @ P.T)
        alpha = result.alpha[kept]
        assert result.objective == pytest.approx(alpha @ G @ alpha / np.sum((alpha / scaling) ** 2), rel=1e-10)


def test_power_solver_keeps_q_orthonormal_and_refuses_indefinite_kernels():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 12))
    result = kernel_q_alpha(X, 2, "rbf", gamma=2.0, solver="power", max_iter=7, tol=1e-14)
    Mt, _, _, _ = preprocess_features(X)
    V = kernel_matrix(Mt, "rbf", gamma=2.0)
    assert np.allclose(result.Q.T @ V @ result.Q, np.eye(2), atol=1e-8)  # E^T V E = I after the recursion
    with pytest.raises(InputError, match="positive semi-definite"):
        kernel_q_alpha(X, 2, "poly", degree=2, coef0=-0.5, solver="power")
    with pytest.raises(InputError, match="positive semi-definite"):
        kernel_q_alpha(X, 2, lambda a, b: a @ b.T, solver="power")
    with pytest.raises(InputError, match="solver must be"):
        kernel_q_alpha(X, 2, solver="lanczos")
    with pytest.raises(InputError, match="dtype must be"):
        kernel_q_alpha(X, 2, dtype=np.int64)


def test_a_k_beyond_the_features_that_vary_is_said():
    """Three features vary (two are constant): k = 5 runs at k = 3, with a warning and a note
    (it was clamped without a word)."""
    X = np.random.default_rng(0).standard_normal((30, 5))
    X[:, 3:] = 2.0
    with pytest.warns(UserWarning, match="more than the 3 feature"):
        result = kernel_q_alpha(X, 5, "rbf")
    assert result.k == 3 and any("ran with k = 3" in note for note in result.warnings)


def test_the_uniform_starts_lanczos_failure_falls_back_to_the_dense_decomposition(monkeypatch):
    """ARPACK that does not converge in the uniform start no longer escapes as an exception: the
    start comes from the dense decomposition, and the run ends where the Lanczos start's does."""
    from scipy.sparse.linalg import ArpackNoConvergence

    import core.selection.kernel_qalpha as kernel_module

    X = load_dataset("warpAR10P").X[:, :300]
    monkeypatch.setattr(kernel_module, "AUTO_DENSE_LIMIT", 10)
    lanczos = kernel_q_alpha(X, 3, "rbf", gamma=5.0)

    def failing(*args, **kwargs):
        raise ArpackNoConvergence("ARPACK error -1: No convergence", np.zeros(0), np.zeros((300, 0)))

    monkeypatch.setattr(kernel_module, "eigsh", failing)
    dense = kernel_q_alpha(X, 3, "rbf", gamma=5.0)
    assert dense.converged and np.abs(dense.alpha - lanczos.alpha).max() <= 1e-6


@pytest.mark.parametrize("solver", ["power", "eigen"])
def test_a_float32_run_whose_float64_check_fails_goes_on_in_float64(monkeypatch, solver):
    """A float32 run that says it converged early (its record cut after two iterations, residuals
    set to 0) is checked with the float64 kernel matrix, found short, and goes on in float64 to
    convergence, with a note where its tol was the run's (tol at least FLOAT32_RESIDUAL); removing
    the check leaves it at two iterations."""
    import core.selection.kernel_qalpha as kernel_module

    real_run, calls = kernel_module._run_start, []

    def says_converged_early(*args, **kwargs):
        calls.append(kwargs.get("trace"))
        if len(calls) > 1:
            return real_run(*args, **kwargs)
        run = real_run(*args, **dict(kwargs, max_iter=2))
        residuals = np.array(run["residuals"])
        residuals[-1] = 0.0
        return dict(run, converged=True, residuals=residuals)

    monkeypatch.setattr(kernel_module, "_run_start", says_converged_early)
    X = weston_linear(60, random_state=0).X
    result = kernel_q_alpha(X, 2, "rbf", dtype=np.float32, solver=solver, tol=1e-3)
    assert len(calls) == 2 and calls[1] is not None
    assert result.converged and result.n_iter > 2 and result.residual <= 1e-3
    assert any("went on in float64 and converged" in note for note in result.warnings)
    assert result.solver.endswith("float32 products to iteration 2, float64 from iteration 3")


def test_a_float32_run_goes_on_in_float64_below_the_residual_its_rounding_allows():
    """Issue 75: float32 runs had gone to tol unmixed (their rounding misled the mixing near tol),
    so the Kernel page's fast mode took 3-9x the iterations of float64 (lung_small at gamma 5: 537
    against 151; warpAR10P at gamma 20: 165 against 39) and on lung_small at gamma 20 settled at
    another fixed point (objective 1.004094 against 1.000027). Now they are mixed down to
    FLOAT32_RESIDUAL and go on in float64: the float64 run's fixed point, in about its iterations,
    and the solver says where the precision changed; no note (the change is the plan)."""
    from core.selection.kernel_qalpha import FLOAT32_RESIDUAL

    X = load_dataset("lung_small").X
    for gamma, most in ((20.0, 25), (2.0, 60)):
        double = kernel_q_alpha(X, 2, "rbf", gamma=gamma, solver="power")
        single = kernel_q_alpha(X, 2, "rbf", gamma=gamma, solver="power", dtype=np.float32)
        assert single.converged and single.acceleration == "Anderson extrapolation" and not single.warnings
        assert single.n_iter <= most and single.n_iter <= double.n_iter + 8
        assert single.objective == pytest.approx(double.objective, rel=1e-9)
        assert set(single.top(20)) == set(double.top(20))
        switched = int(single.solver.rsplit(" ", 1)[1])
        assert single.solver == (f"kernel power; float32 products to iteration {switched - 1}, "
                                 f"float64 from iteration {switched}")
        assert single.residuals[switched - 2].max() <= FLOAT32_RESIDUAL < single.residuals[switched - 3].max()
    # mixed float32 points whose Gram matrix is singular at float32's rounding (eigenvalues of -1e-7
    # of its trace; a float64 ridge of 1e-12 raised LinAlgError): the page's digits at k = 10
    digits = load_dataset("digits").X
    single = kernel_q_alpha(digits, 10, "rbf", gamma=5.0, solver="power", dtype=np.float32, random_state=0)
    double = kernel_q_alpha(digits, 10, "rbf", gamma=5.0, solver="power", random_state=0)
    assert single.converged and single.objective == pytest.approx(double.objective, rel=1e-9)


def test_a_power_run_that_has_not_arrived_by_half_its_budget_goes_on_with_exact_steps():
    """Issue 75: on a PBMC-shaped table (10 types, k = 10) the Kernel page's fast mode ran its
    1,000 power steps and ended unconverged (residual 4.6e-4) where exact steps converge in 8.
    Past half of max_iter the run goes on with exact steps, to the exact solver's fixed point;
    a run that arrives before is the power run it always was."""
    from core.selection.kernel_qalpha import kernel_q_alpha

    rng = np.random.default_rng(0)
    types = rng.integers(0, 10, 300)
    X = rng.normal(size=(300, 160))
    X[:, :60] += (np.eye(10)[types] @ rng.normal(size=(10, 60))) * 1.5
    from core.selection.kernel_qalpha import kernel_matrix
    from core.selection.qalpha import preprocess_features

    power = kernel_q_alpha(X, 10, "rbf", gamma=5.0, solver="power", dtype="float32", max_iter=200)
    assert power.converged and power.solver.startswith("kernel power, then exact steps from iteration 101")
    assert 100 < power.n_iter < 200
    # a fixed point of Definition 2, checked from the definitions: E V-orthonormal spans the leading
    # eigenvectors of A_alpha (as V D V E = E Lambda), alpha the leading eigenvector of G = V o (V E E^T V)
    Mt, kept, _, _ = preprocess_features(X)
    V = kernel_matrix(Mt, "rbf", gamma=5.0)
    E, alpha = power.Q, power.alpha[kept]
    np.testing.assert_allclose(E.T @ V @ E, np.eye(10), atol=1e-6)
    P = V @ E
    G = V * (P @ P.T)
    values, vectors = np.linalg.eigh(G)
    assert abs(vectors[:, -1] @ alpha) == pytest.approx(1.0, abs=1e-5)
    from core.data.bundled import load_dataset

    quick = kernel_q_alpha(load_dataset("lung_small").X, 5, "rbf", gamma=5.0, solver="power", dtype="float32",
                           max_iter=200)
    assert quick.converged and "exact steps" not in quick.solver and quick.n_iter < 100


@pytest.mark.parametrize("name, gamma, most", [("lung_small", 2.0, 40), ("colon", 5.0, 35)])
def test_the_power_iteration_in_float64_is_mixed_and_reaches_the_unmixed_fixed_point(monkeypatch, name, gamma, most):
    """In float64 the kernel power iteration's iterates are mixed (Anderson): lung_small at gamma 2
    34 iterations against 104 unmixed, colon at gamma 5 26 against 79; the weights within 1e-5 of
    the unmixed run's to tol 1e-10, the same top 20, the objective within 1e-10, and its history
    never falls. float32 runs are mixed too, to FLOAT32_RESIDUAL, and reach the same top 20."""
    from core.selection._qalpha import anderson

    X = load_dataset(name).X
    k = 7 if name == "lung_small" else 2
    mixed = kernel_q_alpha(X, k, "rbf", gamma=gamma, solver="power")
    float32 = kernel_q_alpha(X, k, "rbf", gamma=gamma, solver="power", dtype=np.float32)
    monkeypatch.setattr(anderson, "fits", lambda *shape: False)
    alone = kernel_q_alpha(X, k, "rbf", gamma=gamma, solver="power")
    reference = kernel_q_alpha(X, k, "rbf", gamma=gamma, solver="power", tol=1e-10, max_iter=20_000)
    assert mixed.converged and mixed.acceleration == "Anderson extrapolation" and alone.acceleration == ""
    assert float32.acceleration == "Anderson extrapolation" and float32.n_iter <= most + 10
    assert set(float32.top(20)) == set(reference.top(20))
    assert mixed.n_iter <= most < alone.n_iter
    assert np.abs(mixed.alpha - reference.alpha).max() < 1e-5
    assert set(mixed.top(20)) == set(reference.top(20))
    assert mixed.objective == pytest.approx(reference.objective, rel=1e-10)
    assert np.all(np.diff(mixed.history) >= -1e-10 * np.abs(mixed.history[1:]))


def test_a_float32_run_builds_its_kernel_matrix_once(monkeypatch):
    """The float64 kernel matrix is built once and kept: the float32 products are a cast of it, the
    uniform start reads it without a copy, and the float64 check and tail use it (it had been built
    again for them, and copied for the start)."""
    import core.selection.kernel_qalpha as kernel_module

    built, real = [], kernel_module.kernel_matrix

    def counted(*args, **kwargs):
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(kernel_module, "kernel_matrix", counted)
    X = load_dataset("lung_small").X
    single = kernel_q_alpha(X, 2, "rbf", gamma=2.0, solver="power", dtype=np.float32)
    assert single.converged and "float64 from iteration" in single.solver and len(built) == 1


def test_a_float32_run_out_of_iterations_at_the_switch_says_no_false_tol(monkeypatch):
    """A float32 run whose float32 phase passes at max_iter (here its record cut after two
    iterations, residuals set to 0) has no iteration left for float64: it is unconverged and warns
    so, without a note that its residuals fell below tol (its phase ends at FLOAT32_RESIDUAL)."""
    import core.selection.kernel_qalpha as kernel_module
    from sklearn.exceptions import ConvergenceWarning

    real_run = kernel_module._run_start

    def passes_at_max_iter(*args, **kwargs):
        run = real_run(*args, **kwargs)
        residuals = np.array(run["residuals"])
        residuals[-1] = 0.0
        return dict(run, converged=True, residuals=residuals)

    monkeypatch.setattr(kernel_module, "_run_start", passes_at_max_iter)
    X = weston_linear(60, random_state=0).X
    with pytest.warns(ConvergenceWarning, match="did not converge in 2 iterations"):
        short = kernel_q_alpha(X, 2, "rbf", dtype=np.float32, solver="eigen", max_iter=2)
    assert not short.converged and short.n_iter == 2
    assert not any("fell below tol" in note for note in short.warnings)
