"""The rest of scikit-feature's catalogue, each against an independent computation of its
paper's formula on a small case: entropies counted with ``collections.Counter``, greedy criteria
re-derived step by step, exhaustive subsets, SciPy's and scikit-learn's statistics, and the
optimality conditions of the L2,1 models. Also UDFS's one answer whatever the solver and the BLAS
threads, and every scorer as scikit-learn's ``score_func``."""

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from sklearn.feature_selection import SelectKBest, SelectPercentile
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from core.data.bundled import load_dataset
from core.selection import clustering_scores, sparse_learning
from core.selection.information import INFORMATION_CRITERIA
from core.selection.scorers import SCORERS, ScoreFunction, score_features


# ----------------------------------------------------------------- entropies by counting

def entropy(*columns):
    """Plug-in joint entropy (nats) of the given discrete columns, by counting tuples."""
    counts = Counter(zip(*columns))
    total = sum(counts.values())
    return -sum(c / total * math.log(c / total) for c in counts.values())


def information(a, b):
    return entropy(a) + entropy(b) - entropy(a, b)


def conditional_information(a, b, given):
    return entropy(a, given) + entropy(b, given) - entropy(a, b, given) - entropy(given)


def brute_force_order(X, y, criterion, steps, beta=0.5):
    """The greedy order of one criterion of Brown et al. (2012), each candidate's value computed
    from counted entropies with the criterion's formula as its paper writes it."""
    columns = [X[:, k].tolist() for k in range(X.shape[1])]
    labels = y.tolist()
    chosen = []
    for _ in range(steps):
        best, best_value = None, -np.inf
        for k in range(X.shape[1]):
            if k in chosen:
                continue
            relevance = information(columns[k], labels)
            redundancies = [information(columns[k], columns[j]) for j in chosen]
            conditionals = [conditional_information(columns[k], columns[j], labels) for j in chosen]
            s = len(chosen)
            if not chosen:
                value = relevance
            elif criterion == "mim":
                value = relevance
            elif criterion == "mifs":
                value = relevance - beta * sum(redundancies)
            elif criterion == "mrmr":
                value = relevance - sum(redundancies) / s
            elif criterion == "cife":
                value = relevance - sum(redundancies) + sum(conditionals)
            elif criterion == "jmi":
                value = relevance - (sum(redundancies) - sum(conditionals)) / s
            elif criterion == "cmim":  # min_j I(X_k; Y | X_j)
                value = min(conditional_information(columns[k], labels, columns[j]) for j in chosen)
            elif criterion == "icap":
                value = relevance - sum(max(0.0, r - c) for r, c in zip(redundancies, conditionals))
            elif criterion == "disr":
                value = sum((entropy(columns[k], columns[j]) + entropy(labels) - entropy(columns[k], columns[j], labels))
                            / entropy(columns[k], columns[j], labels) for j in chosen)
            if value > best_value + 1e-12:
                best, best_value = k, value
        chosen.append(best)
    return chosen


def discrete_data(seed, n_samples=60, n_features=9, n_classes=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n_samples)
    X = rng.integers(0, 3, (n_samples, n_features)).astype(float) - 1  # values -1, 0, 1: discrete
    X[:, 2] = np.where(rng.random(n_samples) < 0.8, y % 3, X[:, 2]) - 1  # relevant
    X[:, 5] = np.where(rng.random(n_samples) < 0.9, X[:, 2], X[:, 5])  # redundant with 2
    X[:, 7] = np.where(rng.random(n_samples) < 0.6, (y + 1) % 3, X[:, 7]) - 1  # relevant, less
    return X, y


@pytest.mark.parametrize("criterion", list(INFORMATION_CRITERIA))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_information_criteria_choose_as_their_formulas_by_counted_entropies(criterion, seed):
    X, y = discrete_data(seed)
    expected = brute_force_order(X, y, criterion, 6)
    ranking = score_features(criterion, X, y, n_features_to_select=6).ranking
    assert list(ranking[:6]) == expected


def test_mrmr_is_the_mean_redundancy_criterion_not_a_fixed_beta():
    """scikit-feature's mRMR runs LCSI with beta = 0.8 (its default) instead of 1/|S|: on data where
    the two differ, ours follows Peng et al.'s Eq. 7."""
    for seed in range(20):
        X, y = discrete_data(seed, n_features=12)
        fixed = brute_force_order(X, y, "mifs", 6, beta=0.8)
        if fixed != brute_force_order(X, y, "mrmr", 6):
            assert list(score_features("mrmr", X, y, n_features_to_select=6).ranking[:6]) == \
                brute_force_order(X, y, "mrmr", 6)
            return
    pytest.fail("no seed told the two criteria apart")


def symmetric_uncertainty(a, b):
    total = entropy(a) + entropy(b)
    return 2 * information(a, b) / total if total > 0 else 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fcbf_keeps_the_predominant_features_of_yu_and_liu(seed):
    X, y = discrete_data(seed)
    columns, labels = [X[:, k].tolist() for k in range(X.shape[1])], y.tolist()
    with_class = [symmetric_uncertainty(c, labels) for c in columns]
    remaining = sorted([k for k in range(X.shape[1]) if with_class[k] > 0], key=lambda k: (-with_class[k], k))
    predominant = []
    while remaining:
        p = remaining.pop(0)
        predominant.append(p)
        remaining = [q for q in remaining if symmetric_uncertainty(columns[p], columns[q]) < with_class[q]]
    ranking = score_features("fcbf", X, y).ranking
    assert list(ranking[:len(predominant)]) == predominant
    assert 5 not in predominant  # the copy of feature 2 is redundant


@pytest.mark.parametrize("seed", [0, 1])
def test_cfs_adds_the_feature_of_largest_merit_at_every_step(seed):
    X, y = discrete_data(seed)
    columns, labels = [X[:, k].tolist() for k in range(X.shape[1])], y.tolist()

    def merit(subset):
        k = len(subset)
        r_cf = sum(symmetric_uncertainty(columns[f], labels) for f in subset) / k
        pairs = list(itertools.combinations(subset, 2))
        r_ff = sum(symmetric_uncertainty(columns[a], columns[b]) for a, b in pairs) / len(pairs) if pairs else 0.0
        return k * r_cf / math.sqrt(k + k * (k - 1) * r_ff)

    chosen = []
    for _ in range(5):
        chosen.append(max((f for f in range(X.shape[1]) if f not in chosen), key=lambda f: (merit(chosen + [f]), -f)))
    assert list(score_features("cfs", X, y, n_features_to_select=5).ranking[:5]) == chosen


# ----------------------------------------------------------------- statistical filters

def test_chi_square_equals_scikit_learns_chi2_on_counts():
    from sklearn.feature_selection import chi2

    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, 80)
    X = rng.poisson(3.0 + y[:, None] * np.linspace(0, 1, 12), (80, 12)).astype(float)
    assert np.allclose(score_features("chi_square", X, y).scores, chi2(X, y)[0], rtol=1e-10)


def test_chi_square_refuses_negative_values_with_what_to_do():
    X = np.random.default_rng(0).standard_normal((20, 4))
    with pytest.raises(ValueError, match="non-negative"):
        score_features("chi_square", X, np.repeat([0, 1], 10))


def test_t_score_is_welchs_t_and_one_vs_rest_with_more_classes():
    from scipy import stats

    rng = np.random.default_rng(4)
    y = np.repeat([0, 1], [15, 25])
    X = rng.standard_normal((40, 10)) + y[:, None] * np.linspace(0, 2, 10)
    expected = np.abs(stats.ttest_ind(X[y == 1], X[y == 0], equal_var=False).statistic)
    assert np.allclose(score_features("t_score", X, y).scores, expected, rtol=1e-10)
    y3 = np.repeat([0, 1, 2], [10, 12, 18])
    best = np.max([np.abs(stats.ttest_ind(X[y3 == c], X[y3 != c], equal_var=False).statistic) for c in range(3)], axis=0)
    assert np.allclose(score_features("t_score", X, y3).scores, best, rtol=1e-10)


def test_gini_index_is_the_best_split_decrease_of_impurity_by_brute_force():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, 30)
    X = np.round(rng.standard_normal((30, 6)) + y[:, None] * [0, 1, 0, 2, 0, 0.5], 1)

    def impurity(labels):
        if not labels:
            return 0.0
        return 1 - sum((c / len(labels)) ** 2 for c in Counter(labels).values())

    expected = []
    for column in X.T:
        before = impurity(y.tolist())
        splits = [(len(y[column <= v]) * impurity(y[column <= v].tolist())
                   + len(y[column > v]) * impurity(y[column > v].tolist())) / len(y) for v in np.unique(column)]
        expected.append(before - min(splits))
    assert np.allclose(score_features("gini", X, y).scores, expected, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_trace_ratio_finds_the_subset_of_largest_ratio_among_all_subsets(seed):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], 8)
    X = rng.standard_normal((24, 9)) * rng.uniform(0.3, 3, 9) + np.outer(y, rng.uniform(0, 1.5, 9))
    means = np.array([X[y == c].mean(axis=0) for c in range(3)])
    between = sum(8 * (means[c] - X.mean(axis=0)) ** 2 for c in range(3))
    within = sum(((X[y == c] - means[c]) ** 2).sum(axis=0) for c in range(3))
    best = max(itertools.combinations(range(9), 3), key=lambda s: between[list(s)].sum() / within[list(s)].sum())
    ranking = score_features("trace_ratio", X, y, n_features_to_select=3).ranking
    assert set(ranking[:3]) == set(best)


# ----------------------------------------------------------------- L2,1 models

def two_blobs(seed=0, n_samples=40, n_features=8):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], [14, 13, 13])[:n_samples]
    X = rng.standard_normal((y.size, n_features))
    X[:, 1] += 2.0 * (y == 1)
    X[:, 4] += 2.0 * (y == 2)
    return X, y


def standardised(X, y):
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    return Z, np.eye(3)[y]


def test_rfs_minimises_an_l21_loss_with_an_l21_penalty():
    """Nie et al. 2010, Eq. 3: at the optimum every perturbation of W raises
    |X W - Y|_{2,1} + gamma |W|_{2,1}; a squared loss's optimum (the "l21" scorer) is not it."""
    X, y = two_blobs()
    model = sparse_learning.rfs(X, y, gamma=0.5, tol=1e-8, max_iter=20000)
    assert model.converged and model.residual <= 1e-8
    Z, Y = standardised(X, y)

    def objective(W):
        return np.linalg.norm(Z @ W - Y, axis=1).sum() + 0.5 * np.linalg.norm(W, axis=1).sum()

    best = objective(model.weights)
    assert math.isclose(model.objective_history[-1], best, rel_tol=1e-9)
    rng = np.random.default_rng(1)
    for _ in range(200):
        assert objective(model.weights + 1e-3 * rng.standard_normal(model.weights.shape)) >= best - 1e-9
    squared = sparse_learning.l21_least_squares(X, y, gamma=0.5, tol=1e-8, max_iter=20000)
    assert objective(squared.weights) > best + 1e-3


def test_l21_least_squares_satisfies_the_group_lasso_optimality_conditions():
    X, y = two_blobs(1)
    gamma = 4.0
    model = sparse_learning.l21_least_squares(X, y, gamma=gamma, tol=1e-10, max_iter=50000)
    assert model.converged
    Z, Y = standardised(X, y)
    gradient = 2 * Z.T @ (Z @ model.weights - Y)
    norms = np.linalg.norm(model.weights, axis=1)
    active = norms > 1e-6 * norms.max()
    assert np.allclose(gradient[active] + gamma * model.weights[active] / norms[active, None], 0, atol=1e-3)
    assert (np.linalg.norm(gradient[~active], axis=1) <= gamma * (1 + 1e-3)).all()
    assert active[[1, 4]].all()


@pytest.mark.parametrize("sizes", [None, (30, 7, 3)])
def test_l21_logistic_satisfies_its_optimality_conditions(sizes):
    """KKT in W at the intercepts that are optimal for it, found here by Newton's method. With
    classes of 30, 7 and 3 those intercepts lie far from the log odds they start at, so a solver
    that left them there (its intercept gradient dropped) fails this; balanced classes hid it."""
    X, y = two_blobs(2)
    if sizes is not None:
        y = np.repeat([0, 1, 2], sizes)
        X = np.random.default_rng(3).standard_normal((y.size, 8))
        X[:, 1] += 2.0 * (y == 1)
        X[:, 4] += 2.0 * (y == 2)
    model = sparse_learning.l21_logistic(X, y, gamma=0.2, tol=1e-9, max_iter=100000)
    assert model.converged
    Z, Y = standardised(X, y)
    signs = 2 * Y - 1
    W = model.weights
    # the intercepts: the optimum of the loss given W, by Newton's method per task
    b = np.zeros(3)
    for _ in range(50):
        p = 1 / (1 + np.exp(-signs * (Z @ W + b)))
        b -= (-(signs * (1 - p)).mean(axis=0)) / np.maximum((p * (1 - p)).mean(axis=0), 1e-12)
    def loss_gradient(W, b):  # of the mean logistic loss in W, p the probability of each sample's own sign
        p = 1 / (1 + np.exp(-signs * (Z @ W + b)))
        return Z.T @ (-signs * (1 - p)) / Z.shape[0]

    gradient = loss_gradient(W, b)
    share = Y.mean(axis=0)  # at W = 0 the intercepts' optimum is the log odds of each class
    penalty = 0.2 * np.linalg.norm(loss_gradient(np.zeros_like(W), np.log(share / (1 - share))), axis=1).max()
    norms = np.linalg.norm(W, axis=1)
    active = norms > 1e-6 * norms.max()
    assert np.allclose(gradient[active] + penalty * W[active] / norms[active, None], 0, atol=1e-5)
    assert (np.linalg.norm(gradient[~active], axis=1) <= penalty * (1 + 1e-4)).all()
    assert active[[1, 4]].all()


def test_the_l21_scorers_cite_the_loss_they_minimise_and_warn_when_stopped_short():
    assert "Nie" in SCORERS["rfs"][0].citation and "Nie" not in SCORERS["l21"][0].citation
    X, y = two_blobs()
    with pytest.warns(Warning, match="did not converge"):
        score_features("rfs", X, y, max_iter=3)
    stopped = sparse_learning.l21_least_squares(X, y, max_iter=2, tol=1e-12)
    assert not stopped.converged and stopped.residual > stopped.tol and stopped.n_iter == 2


# ----------------------------------------------------------------- UDFS: one answer

def test_udfs_takes_the_average_frame_when_its_first_step_is_ill_posed():
    """With fewer samples than features the first step's eigenvalue gamma has multiplicity
    n - rank: the row norms are those of the average frame, sqrt(k P_ii / m), P the projector on
    the null space (from SciPy's null_space, an independent basis)."""
    from scipy.linalg import null_space

    Z = np.random.default_rng(0).standard_normal((30, 6))
    norms, dimension = clustering_scores._average_first_frame(Z, 4)
    basis = null_space(Z.T)
    assert dimension == basis.shape[1] == 24
    assert np.allclose(norms, np.sqrt(4 * np.sum(basis ** 2, axis=1) / 24), atol=1e-12)
    assert clustering_scores._average_first_frame(Z[:8], 4)[0] is None  # rank 6 of 8: m = 2 < 4


def test_udfs_says_when_its_first_step_was_ill_posed():
    X = load_dataset("lung_small").X
    assert "ill-posed" in clustering_scores.udfs(X, n_clusters=7).note
    assert clustering_scores.udfs(X[:, :40], n_clusters=3).note == ""  # 73 samples, 40 features


@pytest.mark.parametrize("name", ["lung_small", "colon", "warpAR10P", "GLIOMA"])
def test_udfs_gives_one_top_50_whatever_the_blas_threads_and_the_eigensolver(name, monkeypatch):
    from threadpoolctl import threadpool_limits

    data = load_dataset(name)
    tops = []
    for threads in (1, 2):
        with threadpool_limits(threads):
            tops.append(np.argsort(-clustering_scores.udfs(data.X, n_clusters=data.classes.size).scores,
                                   kind="stable")[:50].tolist())
    if name == "lung_small":  # 325 features: the dense solver against Lanczos
        monkeypatch.setattr(clustering_scores, "_UDFS_DENSE_LIMIT", 10 ** 6)
        tops.append(np.argsort(-clustering_scores.udfs(data.X, n_clusters=7).scores, kind="stable")[:50].tolist())
    assert all(top == tops[0] for top in tops)


# ----------------------------------------------------------------- scikit-learn

@parametrize_with_checks([SelectKBest(ScoreFunction(method), k=2)
                          for method in ("fisher", "variance", "jmi", "t_score", "gini", "trace_ratio", "laplacian")])
def test_score_functions_pass_scikit_learns_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("method", list(SCORERS))
def test_every_scorer_is_a_score_func_for_select_k_best(method):
    data = load_dataset("lung_small")
    X, y = data.X[:, :60], data.labels
    if SCORERS[method][0].models_counts:
        X = X - X.min()
    options = {"n_features_to_select": 5, "max_candidates": 8} if "wrapper" in method else {}
    labels = y if SCORERS[method][0].supervised else None
    selector = SelectKBest(ScoreFunction(method, **options), k=7).fit(X, labels)
    expected = score_features(method, X, labels, **options).scores
    assert np.array_equal(selector.scores_, expected)
    kept = selector.get_support()
    assert kept.sum() == 7 and expected[kept].min() >= expected[~kept].max()  # the 7 best (ties either way)


def test_a_score_function_works_in_a_pipeline_and_refuses_what_it_cannot_score():
    import pickle

    from sklearn.linear_model import LogisticRegression

    data = load_dataset("colon")
    pipeline = make_pipeline(SelectPercentile(ScoreFunction("jmi"), percentile=2), LogisticRegression(max_iter=500))
    assert pipeline.fit(data.X, data.labels).score(data.X, data.labels) > 0.8
    assert pickle.loads(pickle.dumps(ScoreFunction("mifs", beta=0.8))) == ScoreFunction("mifs", beta=0.8)
    with pytest.raises(ValueError, match="supervised"):
        SelectKBest(ScoreFunction("fisher"), k=3).fit(data.X)
    with pytest.raises(ValueError, match="Unknown baseline"):
        ScoreFunction("relief")


@pytest.mark.parametrize("method", ["jmi", "mrmr", "cfs"])
def test_a_k_past_the_greedy_steps_takes_the_next_by_relevance_not_by_column(method):
    """The greedy searches take n_features_to_select (here 20) steps; SelectKBest with k = 30 took
    the other 10 by column index (the unreached features tied). Now they follow by relevance: the
    10 past the greedy 20 are those of the largest I(X; Y) (SU for CFS) among the rest."""
    from sklearn.feature_selection import SelectKBest

    from core.selection.filters import discrete_mutual_information, discretise
    from core.selection.information import _discrete_target, symmetric_uncertainty

    rng = np.random.default_rng(0)
    y = np.arange(120) % 2
    X = rng.standard_normal((120, 80))
    X[:, 40:] += np.linspace(0.2, 1.5, 40) * y[:, None]  # relevance grows with the column
    scores = ScoreFunction(method, n_features_to_select=20)(X, y)
    assert np.unique(scores).size == X.shape[1]
    greedy = np.argsort(-scores, kind="stable")[:20]
    codes, levels = discretise(X, 1.0, "auto")
    target, n_target = _discrete_target(y)
    relevance = (symmetric_uncertainty(codes, levels, target, n_target) if method == "cfs"
                 else discrete_mutual_information(codes, levels, target, n_target))
    rest = [f for f in np.argsort(-relevance, kind="stable") if f not in set(greedy)]
    support = SelectKBest(ScoreFunction(method, n_features_to_select=20), k=30).fit(X, y).get_support(indices=True)
    assert set(support) == set(greedy) | set(rest[:10])


def test_fcbf_counts_a_tie_as_redundant_as_yu_and_liu_write_it():
    """Yu & Liu's Fig. 1 removes F_q when SU(F_p, F_q) >= SU(F_q, C). A feature equal to the class
    ties with every other (SU(C, F_q) = SU(F_q, C)), so it removes them all: the rest follow by SU
    alone (1, its copy 2, then 3). Were ties kept (>), the copy would fall behind 3, which the
    noisy feature 1 does not make redundant."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    noisy = np.where(rng.random(400) < 0.1, 1 - y, y)
    weaker = np.where(rng.random(400) < 0.3, 1 - y, y)
    X = np.column_stack([y, noisy, noisy, weaker]).astype(float)
    labels = y.tolist()
    assert symmetric_uncertainty(X[:, 1].tolist(), X[:, 3].tolist()) < symmetric_uncertainty(X[:, 3].tolist(), labels)
    assert list(score_features("fcbf", X, y, discrete_features=True).ranking) == [0, 1, 2, 3]
