"""Q-alpha family: the papers' claims and independent re-computations of every quantity."""

import warnings

import numpy as np
import pytest
from scipy import linalg
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans
from sklearn.datasets import load_wine
from sklearn.exceptions import ConvergenceWarning

from core.errors import InputError
from core.data.bundled import load_dataset
from core.selection.sparsity import GAP_CLEAR, find_sparsity_gap, positive_eigenvector_probability, sparsity_gap
from core.selection.qalpha import preprocess_features, q_alpha
from core.selection.topographic import topographic_map
from core.data.generators import ben_dor, random_matrix, topographic_data, weston_linear


def non_decreasing(history, rtol=1e-9):
    history = np.asarray(history)
    return bool(np.all(np.diff(history) >= -rtol * np.abs(history[1:])))


def explicit_G(X, Q):
    """G_ij = (m_i^T m_j) m_i^T Q Q^T m_j straight from [WS03] Definition 2, step 1 (loops)."""
    M = X - X.mean(axis=0)
    M = (M / np.linalg.norm(M, axis=0)).T  # rows m_i, unit norm
    n = M.shape[0]
    G = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            G[i, j] = (M[i] @ M[j]) * (M[i] @ Q @ Q.T @ M[j])
    return M, G


def hungarian_accuracy(truth, found):
    _, truth = np.unique(truth, return_inverse=True)
    _, found = np.unique(found, return_inverse=True)
    table = np.zeros((truth.max() + 1, found.max() + 1))
    np.add.at(table, (truth, found), 1)
    rows, cols = linear_sum_assignment(-table)
    return table[rows, cols].sum() / truth.size


# ------------------------------------------------------------------ the papers' claims
@pytest.mark.parametrize("seed", range(10))
def test_weston_linear_relevant_features_on_top(seed, backend):
    """The same check on a NumPy array, a sparse matrix and Dask arrays (dense and sparse chunks)."""
    data = weston_linear(200, random_state=seed)
    result = q_alpha(backend(data.X), 2)
    assert result.converged
    assert set(result.top(3)) == {0, 1, 2}
    alpha = result.alpha
    assert alpha.min() >= -1e-6 * alpha.max()  # positive
    # sparse: the sorted weights break right after the relevant features, far above the tail
    assert sparsity_gap(alpha) <= 6
    assert np.sort(alpha)[-3] > 5 * np.sort(alpha)[-7]
    assert non_decreasing(result.history)


def test_positivity_on_random_data():
    negative_runs = 0
    for seed in range(40):
        result = q_alpha(random_matrix(50, 200, random_state=seed).X, 2)
        negative_runs += result.alpha.min() < -1e-6 * result.alpha.max()
        assert non_decreasing(result.history)
    assert negative_runs <= 2  # at least 95 % of the runs are positive


def test_positive_eigenvector_probability_fig1a():
    result = positive_eigenvector_probability([3, 10, 20, 40, 80], n_trials=200, random_state=0)
    assert result.probability.shape == (5,)
    assert np.all((result.probability >= 0) & (result.probability <= 1))
    # [WS03] Fig. 1a: close to 1 once n > 20
    assert result.probability[-2:].min() >= 0.98
    assert result.probability[0] < 0.95
    # a mean of 0 gives no positive bias: large random matrices are almost never positive
    unbiased = positive_eigenvector_probability([40], n_trials=50, mean=0.0, std=1.0, random_state=0)
    assert unbiased.probability[0] <= 0.05


def test_wine_side_information_clustering():
    """[SW04] Sec. 6 UCI protocol on wine: paper reports 0.9635 (Q-alpha-SI) vs 0.7280 (raw)."""
    X, y = load_wine(return_X_y=True)
    accuracies = []
    for side_class in range(3):
        main = y != side_class
        result = q_alpha(X[main], 2, side=X[~main], lam=0.1)
        assert result.converged and non_decreasing(result.history)
        assert result.alpha.min() >= -1e-6 * result.alpha.max()
        standardised = (X[main] - X[main].mean(axis=0)) / X[main].std(axis=0)
        for run in range(20):
            found = KMeans(2, n_init=1, random_state=run).fit_predict(standardised * result.alpha)
            accuracies.append(hungarian_accuracy(y[main], found))
    assert np.mean(accuracies) >= 0.93


@pytest.mark.parametrize("seed", range(4))
def test_topographic_map_two_solution_sets(seed):
    data = topographic_data(random_state=seed)
    sets = data.meta["solution_sets"]
    hybrid = data.meta["hybrid"]
    irrelevant = np.arange(9, 20)
    # Three clusters span two dimensions once the features are centred, hence k = 2.
    topo = topographic_map(data.X, 2, rounds=2, lam=0.1)
    assert topo.alphas.shape == (2, 20) and topo.directions.shape == (2, 20, 2)
    assert topo.coordinates.shape == (2, 20) and topo.spectra.shape[0] == 2

    def dominant_set(alpha):
        return max(sets, key=lambda name: alpha[sets[name]].sum())

    first, second = dominant_set(topo.alphas[0]), dominant_set(topo.alphas[1])
    assert first != second
    for round_alpha, name in zip(topo.alphas, (first, second)):
        top6 = set(np.argsort(-round_alpha)[:6])
        assert top6 == set(sets[name]) | set(hybrid)
        # hybrids weigh high in both rounds: above every irrelevant feature
        assert round_alpha[hybrid].min() > round_alpha[irrelevant].max()
    for result in topo.results:
        assert result.converged and non_decreasing(result.history)
    # directions are unit vectors for every kept feature
    assert np.allclose(np.linalg.norm(topo.directions, axis=2), 1.0)


# ------------------------------------------------------------------ independent re-computation
def test_matrix_free_G_equals_definition():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 9))
    Q, _ = np.linalg.qr(rng.standard_normal((12, 3)))
    M, G = explicit_G(X, Q)
    from core.matrix.normalised import DenseFeatures
    from core.selection._qalpha.problem import Problem as _Problem
    features = DenseFeatures(X)
    Mt = features.Mt
    problem = _Problem(features, "sum")
    Pt = (Mt.T @ Q).T
    assert np.allclose(problem.dense_operator(Pt), G, atol=1e-12)
    v = rng.standard_normal(9)
    assert np.allclose(problem.g_matvec(Pt, v), G @ v, atol=1e-12)
    # trace(Q^T A^T A Q) = alpha^T G alpha for any alpha ([WS03] Sec. 3)
    A = M.T @ np.diag(v) @ M
    assert np.isclose(np.trace(Q.T @ A.T @ A @ Q), v @ G @ v)


@pytest.mark.parametrize("criterion", ["sum", "gap"])
def test_converged_objective_is_the_spectral_criterion(criterion):
    data = weston_linear(80, random_state=3)
    result = q_alpha(data.X, 2, criterion=criterion, tol=1e-10, max_iter=2000)
    assert result.converged
    Mt, kept, _, _ = preprocess_features(data.X)
    A = Mt @ np.diag(result.alpha[kept]) @ Mt.T
    squared = np.sort(linalg.eigvalsh(A) ** 2)[::-1]
    expected = squared[:2].sum() if criterion == "sum" else squared[:2].sum() - squared[2:].sum()
    assert np.isclose(result.objective, expected, rtol=1e-6)
    # at the fixed point alpha is the leading eigenvector of G(Q)
    _, G = explicit_G(data.X, result.Q)
    if criterion == "gap":
        M = (Mt.T)
        G = 2 * G - (M @ M.T) ** 2
    values, vectors = linalg.eigh(G)
    assert abs(vectors[:, -1] @ result.alpha) > 1 - 1e-6


def test_solvers_agree():
    data = weston_linear(100, random_state=1)
    dense = q_alpha(data.X, 2, solver="dense", tol=1e-9)
    lanczos = q_alpha(data.X, 2, solver="lanczos", tol=1e-9)
    power = q_alpha(data.X, 2, solver="power", tol=1e-9, max_iter=5000)
    assert lanczos.solver == "lanczos" and power.solver == "power"
    assert np.abs(dense.alpha - lanczos.alpha).max() < 1e-7
    assert np.abs(dense.alpha - power.alpha).max() < 1e-5
    assert non_decreasing(power.history)
    basic = q_alpha(data.X, 2, method="basic", tol=1e-9)
    assert basic.method == "basic" and np.abs(dense.alpha - basic.alpha).max() < 1e-5


def test_side_information_is_leading_eigenvector_of_DinvG():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 15))
    X[:20, :3] += 3.0
    side = rng.standard_normal((25, 15)) * np.linspace(0.2, 2.0, 15)
    lam = 0.05
    result = q_alpha(X, 2, side=side, lam=lam, tol=1e-11, max_iter=5000)
    assert result.converged
    D = side.var(axis=0) / X.var(axis=0)
    assert np.allclose(result.side_diagonal, D)
    _, G = explicit_G(X, result.Q)
    operator = np.diag(1.0 / (D + lam)) @ G
    values, vectors = linalg.eig(operator)
    leading = np.real(vectors[:, np.argmax(np.real(values))])
    leading /= np.linalg.norm(leading)
    assert abs(leading @ result.alpha) > 1 - 1e-6
    quotient = result.alpha @ G @ result.alpha / (result.alpha @ np.diag(D + lam) @ result.alpha)
    assert np.isclose(result.objective, quotient, rtol=1e-8)
    assert non_decreasing(result.history)


def test_side_information_suppresses_the_side_structure():
    """Two structures in the main data; the side data carry only the unwanted (stronger) one."""
    plain_unwanted = informed_wanted = 0
    for seed in range(10):
        rng = np.random.default_rng(seed)
        wanted, unwanted = rng.integers(0, 2, 120), rng.integers(0, 2, 120)
        X = rng.standard_normal((120, 30))
        X[:, 0:3] += 3.0 * wanted[:, None]
        X[:, 3:6] += 3.6 * unwanted[:, None]
        side = rng.standard_normal((60, 30))
        side[:, 3:6] += 3.6 * rng.integers(0, 2, 60)[:, None]
        plain_unwanted += set(q_alpha(X, 1).top(3)) == {3, 4, 5}
        informed_wanted += set(q_alpha(X, 1, side=side, lam=0.1).top(3)) == {0, 1, 2}
    assert plain_unwanted >= 8
    assert informed_wanted == 10


def test_pairwise_side_information():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((30, 12))
    pairs = np.array([[0, 5], [1, 7], [2, 9], [3, 4]])
    lam = 2.0
    result = q_alpha(X, 2, pairs=pairs, lam=lam, tol=1e-11, max_iter=5000)
    as_arrays = q_alpha(X, 2, pairs=(X[pairs[:, 0]], X[pairs[:, 1]]), lam=lam, tol=1e-11, max_iter=5000)
    assert np.allclose(result.alpha, as_arrays.alpha, atol=1e-8)
    M, G = explicit_G(X, result.Q)
    B = np.zeros((12, 12))
    for i, j in pairs:  # F_rs = x_r y_r x_s y_s ([SW04] Sec. 5)
        x, y = M[:, i], M[:, j]
        B += np.outer(x * y, x * y)
    values, vectors = linalg.eigh(G - lam * B)
    assert abs(vectors[:, -1] @ result.alpha) > 1 - 1e-6
    assert np.isclose(result.objective, result.alpha @ (G - lam * B) @ result.alpha, rtol=1e-8)
    assert non_decreasing(result.history)


def test_supervised_mode_finds_weston_features():
    data = weston_linear(200, random_state=0)
    result = q_alpha(data.X, labels=data.labels)
    assert result.method == "supervised" and result.k == 1 and result.converged
    assert set(result.top(3)) == {0, 1, 2}
    # Q is the orthonormalised centred class indicator
    assert np.allclose(result.Q.T @ result.Q, np.eye(1))
    assert np.allclose(result.Q.sum(axis=0), 0, atol=1e-12)


@pytest.mark.parametrize("with_side", [False, True])
def test_supervised_power_steps_reach_the_leading_eigenvector(with_side):
    """Supervised, alpha is the leading eigenvector of G(Q) for the fixed class subspace Q, with
    side data of (D + λI)^-1 G: power steps iterate until alpha settles and reach it, as the
    exact eigensolver does at once (one step had been taken for the answer: cos 0.986 on wine, 6%
    of the objective lost on the AR faces)."""
    from core.data.bundled import load_dataset

    wine = load_dataset("wine")
    X, labels, side = wine.X, wine.labels, None
    if with_side:
        X, labels, side = wine.X[wine.labels != 2], wine.labels[wine.labels != 2], wine.X[wine.labels == 2]
    power = q_alpha(X, labels=labels, side=side, lam=0.5, solver="power", tol=1e-10, max_iter=5000, accelerate=False)
    exact = q_alpha(X, labels=labels, side=side, lam=0.5, solver="dense")
    assert power.converged and power.n_iter > 1 and exact.n_iter == 1
    # accelerated (the default), a request for power steps with Q fixed is one exact solve
    asked = q_alpha(X, labels=labels, side=side, lam=0.5, solver="power", tol=1e-10)
    assert asked.solver == "dense" and asked.n_iter == 1 and np.allclose(asked.alpha, exact.alpha, atol=1e-12)
    assert abs(power.alpha @ exact.alpha) / (np.linalg.norm(power.alpha) * np.linalg.norm(exact.alpha)) > 1 - 1e-12
    assert np.isclose(power.objective, exact.objective, rtol=1e-10)
    assert np.array_equal(power.ranking[:5], exact.ranking[:5])


def test_constant_features_get_zero_weight_and_are_reported():
    data = weston_linear(100, random_state=0)
    X = np.hstack([data.X, np.full((100, 2), 7.0)])
    result = q_alpha(X, 2)
    assert list(result.constant_features) == [202, 203]
    assert np.all(result.alpha[202:] == 0)
    assert set(result.top(3)) == {0, 1, 2}


def test_restarts_keep_best_and_are_deterministic():
    data = random_matrix(30, 60, random_state=4)
    first = q_alpha(data.X, 2, init="random", n_init=4, random_state=11)
    again = q_alpha(data.X, 2, init="random", n_init=4, random_state=11)
    assert np.array_equal(first.alpha, again.alpha)
    assert first.restart_objectives.shape == (4,)
    assert np.isclose(first.objective, first.restart_objectives.max())


def test_progress_callback_reports_each_iteration():
    seen = []
    result = q_alpha(weston_linear(60, random_state=0).X, 2, progress=lambda report: seen.append((report.done, report.objective)))
    assert [i for i, _ in seen] == list(range(1, result.n_iter + 1))
    assert np.allclose([f for _, f in seen], result.history)


def test_sparsity_gap():
    assert sparsity_gap([0.9, 0.8, 0.85, 0.01, 0.02, 0.0, 0.03, 0.01]) == 3
    assert sparsity_gap(np.r_[np.full(5, 1.0), np.full(500, 1e-3)]) == 5
    assert sparsity_gap([0.5]) == 1
    with pytest.raises(InputError, match="NaN"):
        sparsity_gap([0.1, np.nan])


@pytest.mark.parametrize("seed", range(5))
def test_sparsity_gap_against_every_split(seed):
    """The split and its separability by brute force: every cut of the sorted weights, the
    between-group share of the variance computed from the two groups themselves."""
    rng = np.random.default_rng(seed)
    alpha = np.r_[rng.uniform(0.5, 1.0, rng.integers(1, 6)), rng.exponential(0.05, rng.integers(5, 60))]
    values = np.sort(alpha)[::-1]
    shares = [(len(high) * (high.mean() - values.mean()) ** 2 + len(low) * (low.mean() - values.mean()) ** 2)
              / (values.size * values.var()) for high, low in (np.split(values, [c]) for c in range(1, values.size))]
    gap = find_sparsity_gap(rng.permutation(alpha))
    assert gap.n_selected == 1 + int(np.argmax(shares))
    assert gap.separability == pytest.approx(max(shares), rel=1e-12)
    high, low = np.split(values, [gap.n_selected])
    assert gap.ratio == pytest.approx(high.mean() / low.mean(), rel=1e-12)
    assert gap.clear == (gap.separability >= GAP_CLEAR)


def test_sparsity_gap_strength_known_values():
    two_values = find_sparsity_gap(np.r_[np.full(4, 1.0), np.full(40, 0.01)])
    assert (two_values.n_selected, two_values.clear) == (4, True) and two_values.separability == pytest.approx(1.0)
    even = find_sparsity_gap(np.linspace(1.0, 0.0, 2001))  # evenly spread: Otsu's eta of a uniform is 3/4
    assert even.separability == pytest.approx(0.75, abs=1e-3) and not even.clear
    assert even.n_selected == pytest.approx(1000, abs=1)
    assert find_sparsity_gap(np.r_[1.0, np.zeros(9)]).ratio == np.inf
    constant = find_sparsity_gap(np.full(7, 0.3))
    assert constant.separability == 0.0 and not constant.clear
    with pytest.raises(InputError, match="threshold"):
        find_sparsity_gap([1.0, 0.0], threshold=1.5)


def test_ben_dor_relevant_genes_stand_out(backend):
    """Ben-Dor's planted genes give a clear sparsity gap, whichever form the data take."""
    data = ben_dor(random_state=0)
    result = q_alpha(backend(data.X), 2)
    assert result.gap.clear and result.converged
    relevant = set(data.meta["relevant"].tolist())
    assert len(set(result.top(result.n_selected)) & relevant) >= 0.9 * result.n_selected


def test_sparsity_gap_is_clear_on_planted_features_and_not_on_faces():
    """What GAP_CLEAR was chosen from: planted relevant features stand out, the AR faces' weights
    fall smoothly (the issue's "sparsity gap of 991 of 2,400" that was not one)."""
    assert q_alpha(weston_linear(random_state=0).X, 2).gap.clear
    assert q_alpha(ben_dor(random_state=0).X, 2).gap.clear
    faces = load_dataset("warpAR10P")
    result = q_alpha(faces.X, 10, solver="power")
    assert not result.gap.clear and result.gap.separability < GAP_CLEAR - 0.03
    assert result.n_selected == result.gap.n_selected == sparsity_gap(result.alpha)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("kwargs, message", [
    (dict(k=0), "1 <= k < n_samples"),
    (dict(k=20), "1 <= k < n_samples"),
    (dict(k=2, lam=-1.0), "lam must be at least 0"),
    (dict(k=2, side=np.ones((5, 4))), "side data have 4 features"),
    (dict(k=2, pairs=np.array([[0, 25]])), "only 20 samples"),
    (dict(k=2, pairs=np.array([[0, 1, 2]])), "n_pairs x 2"),
    (dict(k=2, criterion="median"), "criterion"),
    (dict(k=2, solver="power", criterion="gap"), "positive semi-definite"),
    (dict(labels=np.zeros(20)), "two classes"),
    (dict(k=3, labels=np.arange(20) % 2), "number of classes minus one"),
])
def test_bad_arguments(kwargs, message):
    X = np.random.default_rng(0).standard_normal((20, 6))
    kwargs = dict(kwargs)  # the parameters are shared by every run of the test: pop from a copy
    k = kwargs.pop("k", None)
    with pytest.raises(InputError, match=message):
        q_alpha(X, k, **kwargs)


def test_the_messages_of_refused_arguments_are_whole():
    """The messages a user reads, whole (a match on part of one passes a message garbled around it)."""
    from core.selection.qalpha import QAlphaParameters

    X = np.random.default_rng(0).standard_normal((20, 6))
    with pytest.raises(InputError, match=r"^Give side information either as a side data set or as pairs, not both\.$"):
        q_alpha(X, 2, side=np.ones((5, 6)) + np.arange(6), pairs=np.array([[0, 1]]))
    with pytest.raises(InputError, match=r"^In the supervised mode k is the number of classes minus one: leave k out\.$"):
        QAlphaParameters(supervised=True, k=3)
    with pytest.raises(InputError, match=r"^The supervised mode needs the labels of the samples\.$"):
        QAlphaParameters(supervised=True).run(X)


def test_a_float32_run_of_the_gap_criterion_is_checked_and_ends_where_float64_does():
    """The float64 check of a float32 run builds the gap criterion's products from the stored
    normalised features (the implicit ones of the sum criterion do not carry them)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 30))
    X[:30, :4] += 2
    single = q_alpha(X, 2, criterion="gap", dtype=np.float32, tol=1e-6)
    double = q_alpha(X, 2, criterion="gap", tol=1e-6)
    assert single.converged and double.converged
    assert np.abs(single.alpha - double.alpha).max() <= 1e-5


def test_bad_data():
    with pytest.raises(InputError, match="NaN or infinite"):
        q_alpha(np.array([[1.0, np.nan], [2.0, 3.0], [1.0, 1.0]]), 1)
    with pytest.raises(InputError, match="NaN or infinite"):
        q_alpha(np.array([[1.0, np.inf], [2.0, 3.0], [1.0, 1.0]]), 1)
    with pytest.raises(InputError, match="at least 2 samples"):
        q_alpha(np.ones((1, 5)), 1)
    with pytest.raises(InputError, match="Every feature is constant"):
        q_alpha(np.ones((6, 5)), 1)
    with pytest.raises(InputError, match="2-D"):
        q_alpha(np.ones(5), 1)


def test_zero_lambda_needs_nonvanishing_side_variance():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 5))
    side = rng.standard_normal((6, 5))
    side[:, 2] = 1.0
    with pytest.raises(InputError, match="zero side variance"):
        q_alpha(X, 2, side=side, lam=0.0)
    assert q_alpha(X, 2, side=side, lam=0.1).converged
    assert q_alpha(X, 2, side=rng.standard_normal((6, 5)), lam=0.0).alpha.shape == (5,)


def test_topographic_map_bad_input():
    X = topographic_data(random_state=0).X
    with pytest.raises(InputError, match="lam > 0"):
        topographic_map(X, 2, rounds=2, lam=0.0)
    with pytest.raises(InputError, match="rounds"):
        topographic_map(X, 2, rounds=0)
    with pytest.raises(InputError, match="side"):
        topographic_map(X, 2, side=X)


def test_pairs_from_labels():
    from core.selection.qalpha import pairs_from_labels
    labels = np.array([0, 0, 1, 1, 2, 2, 2])
    pairs = pairs_from_labels(labels, 8, random_state=0)
    assert pairs.shape == (8, 2)
    assert np.all(labels[pairs[:, 0]] != labels[pairs[:, 1]])
    assert len({tuple(p) for p in pairs}) == 8
    assert np.array_equal(pairs, pairs_from_labels(labels, 8, random_state=0))
    with pytest.raises(InputError, match="two distinct labels"):
        pairs_from_labels(np.zeros(5), 3)


@pytest.mark.parametrize("solver", ["dense", "power"])
def test_progress_returning_false_stops_the_run(solver):
    """A progress callback that returns False ends the iteration there: the result is the last
    iterate, marked stopped and not converged; any other return value changes nothing."""
    data = weston_linear(200, random_state=1)
    calls = []

    def stop_at_three(report):
        calls.append(report.done)
        return False if report.done == 3 else None

    result = q_alpha(data.X, 2, solver=solver, n_init=3, random_state=0, progress=stop_at_three)
    assert result.stopped and not result.converged and result.n_iter == 3 and calls == [1, 2, 3]
    assert result.history.size == 3 and result.restart_objectives.size == 1
    assert np.isfinite(result.alpha).all() and np.isclose(np.linalg.norm(result.alpha), 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # stopped by the caller: no warning to raise max_iter
        q_alpha(data.X, 2, solver=solver, progress=stop_at_three)
    full = q_alpha(data.X, 2, solver=solver, progress=lambda report: True)
    assert not full.stopped and full.converged
    assert np.allclose(full.alpha, q_alpha(data.X, 2, solver=solver).alpha)


def test_the_uniform_start_finds_westons_features_where_random_starts_do_not():
    """The measurement q_alpha's docstring gives for ``init``: on Weston's linear data (200
    samples, k = 2, data seeds 0-9) the uniform start puts features 0-2 on top in every seed,
    a single random start leaves every relevant feature out of the six largest weights in 7."""
    random_misses = uniform_finds = 0
    for seed in range(10):
        data = weston_linear(200, random_state=seed)
        random_start = q_alpha(data.X, 2, init="random", n_init=1, random_state=seed).alpha
        random_misses += not np.any(np.argsort(-random_start)[:6] < 6)
        uniform_start = q_alpha(data.X, 2, init="uniform", n_init=1, random_state=seed).alpha
        uniform_finds += set(np.argsort(-uniform_start)[:3]) == {0, 1, 2}
    assert (uniform_finds, random_misses) == (10, 7)


def test_parameters_type_runs_q_alpha_and_keys_equal_settings_alike():
    """QAlphaParameters: equal settings (whatever number types the widgets gave) share one key,
    its run is q_alpha's with those settings, and settings that need no data are checked at once."""
    from core.selection.qalpha import QAlphaParameters

    data = weston_linear(60, random_state=3)
    settings = QAlphaParameters(k=np.int64(2), lam=np.float64(0.1), max_iter=200)
    assert settings.key == QAlphaParameters(k=2, max_iter=200).key == QAlphaParameters(max_iter=200).key
    assert settings.key != QAlphaParameters(k=2, max_iter=200, random_state=1).key
    assert np.array_equal(settings.run(data.X).alpha, q_alpha(data.X, 2, max_iter=200, random_state=0).alpha)
    supervised = QAlphaParameters(supervised=True)
    assert np.array_equal(supervised.run(data.X, labels=data.labels).alpha, q_alpha(data.X, labels=data.labels).alpha)
    capped = QAlphaParameters(k=2, max_iter=3).run(data.X)  # its max_iter, not q_alpha's default
    assert capped.n_iter == 3 and not capped.converged
    for bad, message in [(dict(k=0), "positive integer"), (dict(k=2.5), "positive integer"),
                         (dict(supervised=True, k=2), "leave k out"),
                         (dict(k=2, criterion="median"), "criterion"), (dict(k=2, init="spectral"), "init"),
                         (dict(k=2, tol=0.0), "tol"), (dict(k=2, lam=-1.0), "lam"),
                         (dict(k=2, random_state="seven"), "random_state")]:
        with pytest.raises(InputError, match=message):
            QAlphaParameters(**bad)
    with pytest.raises(InputError, match="needs the labels"):
        supervised.run(data.X)


@pytest.mark.parametrize("accelerate", ["always", False])
def test_a_run_whose_objective_stopped_being_finite_is_not_reported_converged(monkeypatch, accelerate):
    """The solver's own flag is not the last word: a history that stopped being finite makes the
    result say not converged, with a note and a ConvergenceWarning (q_alpha used to report the
    solver's converged=True here)."""
    from sklearn.exceptions import ConvergenceWarning

    from core.selection._qalpha import ascent, iterate

    owner, name = (ascent, "run_ascent") if accelerate == "always" else (iterate, "alternate")
    real_run = getattr(owner, name)

    def diverging(*args, **kwargs):
        run = real_run(*args, **kwargs)
        return dict(run, history=np.append(run["history"], np.inf), converged=True)

    monkeypatch.setattr(owner, name, diverging)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        result = q_alpha(weston_linear(60, random_state=0).X, 2, accelerate=accelerate)
    assert not result.converged and any("stopped being finite" in note for note in result.warnings)


def test_q_alpha_ranker_takes_side_information_from_the_samples_it_is_handed():
    """Side classes: W = the samples of those classes among those handed over, M = the rest; pairs:
    drawn from the labels handed over; a fixed side set as is. Each equals the run made by hand."""
    from core.selection.qalpha import QAlphaParameters, pairs_from_labels
    from core.selection.methods import q_alpha_ranker

    wine = load_dataset("wine")
    X, y = wine.X[::2], wine.labels[::2]  # a "training fold"
    params = QAlphaParameters(k=2, lam=0.3, random_state=4)
    main, side = X[y != 2], X[y == 2]
    by_hand = params.run(main, side=side).ranking
    assert np.array_equal(q_alpha_ranker(params, side_classes=[2])(X, y), by_hand)
    assert np.array_equal(q_alpha_ranker(params, side=side)(main), by_hand)
    pairs = pairs_from_labels(y, 30, random_state=4)
    assert np.array_equal(q_alpha_ranker(params, n_pairs=30)(X, y), params.run(X, pairs=pairs).ranking)
    with pytest.raises(InputError, match="at most one"):
        q_alpha_ranker(params, side=side, n_pairs=3)
    with pytest.raises(InputError, match="pass y"):
        q_alpha_ranker(params, side_classes=[2])(X)
    with pytest.raises(InputError, match="at least one class as main data"):
        q_alpha_ranker(params, side_classes=[0, 1, 2])(X, y)


def test_default_k_is_the_gap_where_clear_else_the_fewest_features_holding_half_the_squared_weight():
    from core.selection.sparsity import default_k, find_sparsity_gap, weight_share_count

    rng = np.random.default_rng(3)
    for _ in range(50):  # brute force: the smallest K whose top-K squares reach the share
        alpha = rng.standard_normal(rng.integers(1, 40))
        share = rng.uniform(0.05, 1.0)
        positive = np.sort(np.maximum(alpha, 0))[::-1] ** 2
        expected = (next(K for K in range(1, alpha.size + 1) if positive[:K].sum() >= share * positive.sum() - 1e-15)
                    if positive.sum() > 0 else alpha.size)
        assert weight_share_count(alpha, share) == expected
    smooth = np.linspace(1.0, 0.0, 100)
    chosen = default_k(smooth)
    assert not find_sparsity_gap(smooth).clear and chosen.rule == "50% of the squared weight"
    assert chosen.k == weight_share_count(smooth) == 21  # 21 of 100 ranks hold half of sum (1 - i/99)^2
    gapped = np.r_[np.full(7, 1.0), np.full(93, 0.01)]
    assert default_k(gapped).k == 7 and default_k(gapped).rule == "sparsity gap"
    assert weight_share_count([-1.0, 0.0, 0.0]) == 3  # nothing positive: every feature
    with pytest.raises(InputError):
        weight_share_count([np.nan, 1.0])
    with pytest.raises(InputError):
        weight_share_count([1.0], share=0.0)


def test_defaults_are_one_plain_solve_on_every_kind_of_matrix():
    """``q_alpha(X)`` is the plain estimator (issue 49): k = DEFAULT_K, one solve, on dense,
    sparse and chunked data alike, the same weights on each; λ is DEFAULT_LAM with side data
    and recorded as 0 without it. The search over k and λ is ``choose_settings``, not a default."""
    import dask.array as da
    import scipy.sparse as sp

    from core import QAlphaParameters, QAlphaSelector
    from core.selection.qalpha import DEFAULT_K, DEFAULT_LAM

    X = weston_linear(60, random_state=0).X
    calls = []
    dense = q_alpha(X, progress=calls.append)
    assert dense.k == DEFAULT_K and dense.lam == 0.0 and dense.converged and calls
    assert not hasattr(dense, "auto")
    for other in (sp.csr_matrix(X), da.from_array(X, chunks=(20, X.shape[1]))):
        result = q_alpha(other)
        assert result.k == DEFAULT_K and result.converged
        np.testing.assert_allclose(result.alpha, dense.alpha, atol=1e-6)
    side = q_alpha(X[:40], side=X[40:])
    assert side.lam == DEFAULT_LAM
    np.testing.assert_allclose(side.alpha, q_alpha(X[:40], DEFAULT_K, side=X[40:], lam=DEFAULT_LAM).alpha)
    # one default for k across the function, the parameters and the selector
    assert QAlphaParameters().k == DEFAULT_K and QAlphaParameters().lam == DEFAULT_LAM
    assert QAlphaSelector().fit(X).result_.k == DEFAULT_K and QAlphaSelector().lam == DEFAULT_LAM
