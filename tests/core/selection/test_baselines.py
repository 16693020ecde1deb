"""Baselines: every one runs through the common interface on Weston data, faces and genes;
the label-aware filters find the planted features; projections learn from training data only."""

import time

import numpy as np
import pytest

from core.selection.projections import PROJECTIONS, CPCA, OPCA, PCAProjection, make_projection
from core.selection.scorers import SCORERS, score_features
from core.data.bundled import load_dataset
from core.errors import InputError
from core.data.generators import weston_linear

FAST_OPTIONS = {"forward_wrapper": dict(max_candidates=12, n_features_to_select=4),
                "backward_wrapper": dict(max_candidates=10, n_features_to_select=4),
                "fsca": dict(n_features_to_select=20), "adaboost": dict(n_estimators=30)}


def small_sets():
    weston = weston_linear(200, random_state=0)
    faces = load_dataset("warpAR10P")
    faces_small = faces.images()[:, ::3, ::3].reshape(faces.n_samples, -1)  # 20 x 14 pixels
    genes = load_dataset("colon")
    return {"Weston": (weston.X, weston.labels), "faces": (faces_small, faces.labels),
            "genes": (genes.X[:, :300], genes.labels)}


@pytest.mark.parametrize("method", list(SCORERS))
def test_every_scorer_runs_on_weston_faces_and_genes(method):
    for name, (X, y) in small_sets().items():
        if SCORERS[method][0].models_counts:  # counts or intensities: Weston's and colon's values shifted
            X = X - min(X.min(), 0.0)
        start = time.perf_counter()
        result = score_features(method, X, y, **FAST_OPTIONS.get(method, {}))
        wall = time.perf_counter() - start
        assert result.scores.shape == (X.shape[1],) and not np.isnan(result.scores).any()
        assert sorted(result.ranking) == list(range(X.shape[1]))
        # the time reported is the scoring's own: measured (not zero), and within the call around it
        assert result.info.cost and result.info.citation and 0 < result.seconds <= wall


@pytest.mark.parametrize("method", list(SCORERS))
def test_every_scorer_ranks_constant_features_last(method):
    """Issue 76: the Laplacian score ranked segmentation's constant region_pixel_count (9 in every
    row) first, its 0 / 0 coming out -1e-18, the best score. Every scorer ranks a feature without
    spread last and scores it -inf; the others keep the order they have without it."""
    data = weston_linear(60, random_state=1)
    X, y = data.X[:, :12], data.labels
    if SCORERS[method][0].models_counts:
        X = X - X.min()
    with_constants = np.insert(X, [0, 7], 9.0, axis=1)  # columns 0 and 8 hold 9 everywhere
    options = {**FAST_OPTIONS.get(method, {})}
    result = score_features(method, with_constants, y, **options)
    assert list(result.ranking[-2:]) == [0, 8] and list(result.constant_features) == [0, 8]
    assert np.all(np.isneginf(result.scores[[0, 8]])) and np.isfinite(np.delete(result.scores, [0, 8])).all()
    assert len(set(result.ranking[:12])) == 12 and not {0, 8} & set(result.ranking[:12])


@pytest.mark.parametrize("method", ["pearson", "fisher", "ks", "relieff", "mutual_information"])
def test_label_aware_filters_rank_weston_relevant_features_first(method):
    data = weston_linear(200, random_state=0)
    top = score_features(method, data.X, data.labels).ranking[:3]
    assert set(top) <= set(range(6))


@pytest.mark.parametrize("method", ["rfe_svm", "lasso", "l1_logistic", "l21", "adaboost", "forward_wrapper"])
def test_embedded_and_wrapper_find_relevant_features(method):
    data = weston_linear(200, random_state=0)
    top = score_features(method, data.X, data.labels, **FAST_OPTIONS.get(method, {})).ranking[:2]
    assert set(top) <= set(range(6))


def test_the_dispersion_ranks_as_scanpys_highly_variable_genes_and_needs_counts():
    """The scorer is :func:`dispersion_ranking` as scores (tested against pandas there, and
    against scanpy in benchmarks/bench_transforms.py); values with negatives are refused."""
    from core.data.transforms import dispersion_ranking

    tox = load_dataset("TOX-171")
    result = score_features("dispersion", tox.X)
    np.testing.assert_array_equal(result.ranking, dispersion_ranking(tox.X))
    assert not result.info.supervised and result.info.models_counts
    with pytest.raises(InputError, match="needs non-negative values.*Choose another method"):
        score_features("dispersion", load_dataset("colon").X)


def test_unsupervised_scores_ignore_labels():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 10))
    X[:, 4] *= 10
    assert score_features("variance", X).ranking[0] == 4
    assert score_features("fsca", X).ranking[0] == 4


@pytest.mark.parametrize("method", list(PROJECTIONS))
def test_projections_fit_on_training_data_only(method):
    rng = np.random.default_rng(0)
    train, test = rng.standard_normal((60, 12)), rng.standard_normal((30, 12))
    side = rng.standard_normal((20, 12))
    if method == "sdr_si":  # a model of co-occurrences: non-negative data
        train, test, side = np.abs(train), np.abs(test), np.abs(side)
    projection = make_projection(method, 3)
    projection.fit(train, side=side)
    before = projection.transform(test).copy()
    refit = make_projection(method, 3).fit(train, side=side)
    assert np.allclose(refit.transform(test), before)  # nothing of the test set was learnt
    assert before.shape == (30, 3)
    poisoned = make_projection(method, 3).fit(np.vstack([train, test * 100]), side=side)
    assert not np.allclose(poisoned.transform(test), before)  # had it seen the test set, it would differ


@pytest.mark.parametrize("method", ["lle", "isomap"])
def test_manifold_embeddings_unroll_a_swiss_roll(method):
    """LLE and Isomap (the lecture's non-linear extraction) recover the position along a Swiss
    roll as their first coordinate, where no direction of PCA can; new points land beside their
    training neighbours. (With 12 neighbours the graph short-circuits across the roll's layers
    and both fail: the neighbourhood matters, as the papers say.)"""
    from scipy.stats import spearmanr
    from sklearn.datasets import make_swiss_roll

    X, position = make_swiss_roll(800, noise=0.05, random_state=0)
    train, test = slice(0, 700), slice(700, 800)
    embedding = make_projection(method, 2, n_neighbors=10).fit(X[train])
    assert abs(spearmanr(embedding.transform(X[train])[:, 0], position[train]).statistic) > 0.99
    assert abs(spearmanr(embedding.transform(X[test])[:, 0], position[test]).statistic) > 0.99
    linear = make_projection("pca", 2).fit(X[train]).transform(X[train])
    assert max(abs(spearmanr(linear[:, c], position[train]).statistic) for c in range(2)) < 0.5


def test_pca_cpca_opca_definitions():
    rng = np.random.default_rng(1)
    main = rng.standard_normal((200, 5)) * [5, 3, 1, 1, 1]
    side = rng.standard_normal((200, 5)) * [10, 1, 1, 1, 1]
    pca = PCAProjection(1).fit(main)
    assert abs(pca.components_[0, 0]) > 0.99  # the largest main variance
    cpca = CPCA(1, side_components=1).fit(main, side)
    assert abs(cpca.components_[0, 1]) > 0.99  # side's first direction projected out
    opca = OPCA(1).fit(main, side)
    ratio = (main.var(axis=0) / side.var(axis=0))
    assert np.argmax(np.abs(opca.components_[0])) == np.argmax(ratio)


def test_bad_input():
    X = np.random.default_rng(0).standard_normal((20, 5))
    with pytest.raises(InputError, match="Unknown baseline"):
        score_features("magic", X)
    with pytest.raises(InputError, match="supervised: give the labels"):
        score_features("fisher", X)
    with pytest.raises(InputError, match="needs side data"):
        CPCA(2).fit(X)
    with pytest.raises(InputError, match="Call fit before transform"):
        PCAProjection(2).transform(X)
    with pytest.raises(InputError, match="Unknown projection"):
        make_projection("ica")


@pytest.mark.parametrize("shape", [(35, 13, 300), (60, 40, 12)])
def test_opca_equals_generalised_eigenproblem(shape):
    """The sample-space OPCA returns the leading generalised eigenvectors of
    (C_main, C_side + reg I), normalised so that v^T S v = 1, as a dense solver does."""
    from scipy import linalg

    q, p, n = shape
    rng = np.random.default_rng(3)
    X = rng.standard_normal((q, n)) @ rng.standard_normal((n, n)) * 0.2 + rng.standard_normal((q, n))
    side = rng.standard_normal((p, n)) * np.linspace(0.1, 2.0, n)
    model = OPCA(4).fit(X, side)
    S = np.cov(side, rowvar=False) + model.reg_ * np.eye(n)
    values, vectors = linalg.eigh(np.cov(X, rowvar=False), S, subset_by_index=[n - 4, n - 1])
    assert np.allclose(model.explained_ratio_, values[::-1], rtol=1e-8)
    overlap = np.abs(model.components_ @ S @ vectors[:, ::-1])
    assert np.allclose(np.diag(overlap), 1.0, atol=1e-8)


def test_rank_features_dispatches_to_each_method():
    from core.selection.methods import rank_features
    from core.selection.qalpha import q_alpha
    from core.selection.slda import greedy_slda

    data = weston_linear(80, random_state=1)
    X, y = data.X, data.labels
    assert np.array_equal(rank_features("Q-alpha", X, y, n_clusters=2), q_alpha(X, 2).ranking)
    assert np.array_equal(rank_features("Q-alpha (supervised)", X, y), q_alpha(X, labels=y).ranking)
    assert np.array_equal(rank_features("sparse LDA", X, y), greedy_slda(X, y).backward_order)
    assert np.array_equal(rank_features("fisher", X, y), score_features("fisher", X, y).ranking)
    with pytest.raises(InputError, match="Unknown method 'nope'.*Q-alpha.*fisher"):
        rank_features("nope", X, y)


# ------------------------------------------------------------------ perfect separators (issue: Fisher ranked them last)
SUPERVISED = [m for m, (info, _) in SCORERS.items() if info.supervised]


def separator_data(n_classes):
    """Noise features and, at column 7, a feature exactly 2 in class 1 and 0 elsewhere (no spread
    within any class, like nci9's gene 2773)."""
    rng = np.random.default_rng(5)
    y = np.repeat(np.arange(n_classes), 20)
    X = rng.standard_normal((y.size, 40))
    X[:, 7] = np.where(y == 1, 2.0, 0.0)
    return X, y


@pytest.mark.parametrize("method", SUPERVISED)
def test_every_supervised_scorer_ranks_a_perfect_two_class_separator_first(method):
    X, y = separator_data(2)
    if SCORERS[method][0].models_counts:  # counts: the same data shifted to non-negative values
        X = X - X.min()
    result = score_features(method, X, y, **FAST_OPTIONS.get(method, {}))
    assert result.ranking[0] == 7 and np.isfinite(result.scores).all()


@pytest.mark.parametrize("method", ["fisher", "pearson", "ks", "mutual_information", "relieff", "surf",
                                    "multisurf", "mrmr", "mim", "jmi", "cmim", "disr", "fcbf", "cfs", "t_score",
                                    "gini", "trace_ratio"])
def test_filters_rank_a_one_class_separator_first_among_several_classes(method):
    X, y = separator_data(4)
    assert score_features(method, X, y).ranking[0] == 7


def test_fisher_orders_perfect_separators_by_their_between_class_spread_above_all_others():
    X, y = separator_data(3)
    X[:, 11] = np.where(y == 2, 0.5, 0.0)  # separates too, with less spread between the classes
    X[:, 3] += 5 * y  # a strong but imperfect feature
    scores = score_features("fisher", X, y).scores
    assert list(np.argsort(-scores)[:3]) == [7, 11, 3]
    assert np.isfinite(scores).all()


def test_fisher_ranks_nci9_gene_2773_first():
    """On nci9 gene 2773 is 2.0 in the 6 samples of class 6 and 0 in the other 54: it used to rank
    9,711th of 9,712 (score 0 from 0/0); scikit-learn's f_classif ranks it first (inf)."""
    data = load_dataset("nci9")
    column = data.X[:, 2773]
    assert set(np.unique(column[data.labels == 6])) == {2.0} and set(np.unique(column[data.labels != 6])) == {0.0}
    assert score_features("fisher", data.X, data.labels).ranking[0] == 2773


# ------------------------------------------------------------------ mutual information
def test_discrete_mutual_information_is_the_contingency_table_estimate():
    from sklearn.metrics import mutual_info_score

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 80)
    X = rng.choice([-2.0, 0.0, 2.0], size=(80, 30))
    X[:, 4] = np.where(y == 0, 2.0, X[:, 4])
    scores = score_features("mutual_information", X, y).scores
    assert np.allclose(scores, [mutual_info_score(y, X[:, j]) for j in range(30)], atol=1e-12)


def test_mutual_information_ranking_does_not_depend_on_the_seed_on_colon():
    from scipy.stats import spearmanr

    data = load_dataset("colon")  # genes coded -2, 0, 2: two seeds agreed only at rho 0.25
    first, second = (score_features("mutual_information", data.X, data.labels, random_state=seed)
                     for seed in (0, 1))
    assert spearmanr(first.scores, second.scores).statistic >= 0.99
    assert np.array_equal(first.ranking, second.ranking)


def test_discrete_features_detected_given_or_refused():
    from core.selection.filters import discrete_feature_mask

    rng = np.random.default_rng(1)
    X = np.column_stack([rng.integers(0, 3, 60), rng.standard_normal(60), rng.integers(0, 9, 60)]).astype(float)
    assert list(discrete_feature_mask(X)) == [True, False, True]
    assert list(discrete_feature_mask(X, [1])) == [False, True, False]
    assert list(discrete_feature_mask(X, False)) == [False] * 3
    assert list(discrete_feature_mask(X[:12])) == [True, False, False]  # 12 samples: at most 4 levels
    y = np.repeat([0, 1], 30)
    with pytest.raises(InputError, match="discrete_features must be 'auto'"):
        score_features("mutual_information", X, y, discrete_features="yes")
    with pytest.raises(InputError, match="mask has 2 entries for 3 features"):
        score_features("mutual_information", X, y, discrete_features=np.array([True, False]))
    with pytest.raises(InputError, match="indices must be integers in 0..2"):
        score_features("mutual_information", X, y, discrete_features=[5])


# ------------------------------------------------------------------ graphs, Laplacian score, ReliefF family
def brute_force_graph(X, n_neighbors, weight, width):
    q = X.shape[0]
    distance = np.array([[np.sum((X[i] - X[j]) ** 2) for j in range(q)] for i in range(q)])
    S = np.zeros((q, q))
    for i in range(q):
        others = sorted((distance[i, j], j) for j in range(q) if j != i)[:n_neighbors]
        for d, j in others:
            value = 1.0 if weight == "binary" else np.exp(-d / width)
            S[i, j] = S[j, i] = value
    return S


@pytest.mark.parametrize("weight", ["heat", "binary"])
def test_knn_graph_and_laplacian_score_match_their_definitions(weight):
    from core.selection._scoring import knn_graph
    from core.selection.filters import laplacian_score

    rng = np.random.default_rng(2)
    X = rng.standard_normal((25, 6))
    S = brute_force_graph(X, 4, weight, 3.0)
    assert np.allclose(knn_graph(X, 4, weight, width=3.0), S)
    D = np.diag(S.sum(axis=1))
    expected = []
    for f in X.T:  # He, Cai & Niyogi 2005, Eqs. 1-3: f~ = f - (f'D1 / 1'D1) 1, L_r = f~'L f~ / f~'D f~
        centred = f - (f @ D.sum(axis=1)) / D.sum()
        expected.append(centred @ (D - S) @ centred / (centred @ D @ centred))
    assert np.allclose(-laplacian_score(X, n_neighbors=4, weight=weight, width=3.0), expected)
    default = score_features("laplacian", X).scores
    assert not np.allclose(default, score_features("laplacian", X, weight="binary").scores)
    with pytest.raises(InputError, match="graph weight must be one of heat, binary"):
        score_features("laplacian", X, weight="cosine")
    with pytest.raises(InputError, match="width must be positive"):
        score_features("laplacian", X, width=0.0)


def brute_force_relief(X, y, rule, metric):
    """ReliefF's weights with neighbourhoods chosen by ``rule(distances to i, i)``: loops only."""
    span = np.where(np.ptp(X, axis=0) > 0, np.ptp(X, axis=0), 1.0)
    Z = X / span
    q, n = X.shape
    classes = list(np.unique(y))
    prior = {c: np.mean(y == c) for c in classes}

    def distance(i, j):
        return np.sum(np.abs(Z[i] - Z[j])) if metric == "manhattan" else np.sqrt(np.sum((Z[i] - Z[j]) ** 2))

    table = np.array([[distance(i, j) if i != j else np.inf for j in range(q)] for i in range(q)])
    weights = np.zeros(n)
    for i in range(q):
        for c in classes:
            members = [j for j in range(q) if y[j] == c and j != i]
            chosen = rule(table, i, members)
            if not chosen:
                continue
            difference = np.mean([np.abs(Z[j] - Z[i]) for j in chosen], axis=0)
            weights += -difference if c == y[i] else prior[c] / (1 - prior[y[i]]) * difference
    return weights / q


def relief_rules():
    def nearest(table, i, members):
        return sorted(members, key=lambda j: (table[i, j], j))[:3]

    def surf(table, i, members):
        threshold = np.mean([table[a, b] for a in range(len(table)) for b in range(len(table)) if a != b])
        return [j for j in members if table[i, j] < threshold]

    def multisurf(table, i, members):
        others = [table[i, j] for j in range(len(table)) if j != i]
        return [j for j in members if table[i, j] < np.mean(others) - np.std(others) / 2]
    return {"relieff": nearest, "surf": surf, "multisurf": multisurf}


@pytest.mark.parametrize("method", ["relieff", "surf", "multisurf"])
@pytest.mark.parametrize("metric", ["manhattan", "euclidean"])
def test_relief_family_matches_its_definition(method, metric):
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], [9, 7, 8])
    X = rng.standard_normal((24, 5)) + y[:, None] * [1.0, 0, 0, 0.5, 0]
    options = {"n_neighbors": 3} if method == "relieff" else {}
    scores = score_features(method, X, y, metric=metric, **options).scores
    assert np.allclose(scores, brute_force_relief(X, y, relief_rules()[method], metric), atol=1e-12)


def test_relieff_distance_is_kononenkos_manhattan_by_default():
    X, y = weston_linear(60, random_state=2).X, weston_linear(60, random_state=2).labels
    default = score_features("relieff", X, y).scores
    assert np.allclose(default, score_features("relieff", X, y, metric="manhattan").scores)
    assert not np.allclose(default, score_features("relieff", X, y, metric="euclidean").scores)
    with pytest.raises(InputError, match="distance must be one of manhattan, euclidean"):
        score_features("relieff", X, y, metric="cosine")


# ------------------------------------------------------------------ SPEC, MCFS, UDFS, NDFS, mRMR
def planted_clusters(n_noise=30, random_state=0):
    """Three groups of 20 samples told apart by features 0-3, whose group means lie 3 apart with
    a spread of 0.3 within each group; the other features are noise of spread 1."""
    rng = np.random.default_rng(random_state)
    y = np.repeat([0, 1, 2], 20)
    centres = 3.0 * np.array([[1, -1, 0, 1], [-1, 0, 1, 1], [0, 1, -1, -1]])
    X = rng.standard_normal((60, 4 + n_noise))
    X[:, :4] = centres[y] + 0.3 * rng.standard_normal((60, 4))
    return X, y


@pytest.mark.parametrize("style", ["phi1", "phi2", "phi3"])
def test_spec_matches_the_spectral_expansions_of_zhao_and_liu(style):
    """Eqs. 8-10 of Zhao & Liu (2007) through the full eigendecomposition of the normalised
    Laplacian: phi1 = sum_j lambda_j a_j^2, phi2 = sum_{j>1} lambda_j a_j^2 / sum_{j>1} a_j^2,
    phi3 = sum_{j=2..k} (2 - lambda_j) a_j^2, with a_j = xi_j' f^."""
    from core.selection.clustering_scores import spec_score

    X, _ = planted_clusters(6)
    sigma2 = 7.0
    q = X.shape[0]
    S = np.array([[np.exp(-np.sum((X[i] - X[j]) ** 2) / (2 * sigma2)) for j in range(q)] for i in range(q)])
    degree = S.sum(axis=1)
    L = np.eye(q) - S / np.sqrt(np.outer(degree, degree))
    values, vectors = np.linalg.eigh(L)
    expected = []
    for f in X.T:
        f_hat = np.sqrt(degree) * f / np.linalg.norm(np.sqrt(degree) * f)
        a = vectors.T @ f_hat
        if style == "phi1":
            expected.append(-np.sum(values * a ** 2))
        elif style == "phi2":
            expected.append(-np.sum(values[1:] * a[1:] ** 2) / np.sum(a[1:] ** 2))
        else:
            expected.append(np.sum((2 - values[1:3]) * a[1:3] ** 2))
    assert np.allclose(spec_score(X, style=style, n_clusters=3, sigma2=sigma2), expected, atol=1e-10)
    assert set(score_features("spec", X, style=style, n_clusters=3).ranking[:4]) == {0, 1, 2, 3}


def test_mcfs_embedding_and_sparse_regressions_match_the_paper():
    from scipy import linalg
    from core.selection.clustering_scores import _lasso_with_cardinality, _normalised_affinity, _spectral_embedding
    from core.selection._scoring import knn_graph

    X, _ = planted_clusters(20)
    S = knn_graph(X, 5)
    D = np.diag(S.sum(axis=1))
    embedding = _spectral_embedding(*_normalised_affinity(S), 3)
    values, vectors = linalg.eigh(D - S, D)  # Cai, Zhang & He 2010, Eq. 2: L y = lambda D y
    for column in embedding.T:
        residual = (D - S) @ column - ((column @ (D - S) @ column) / (column @ D @ column)) * D @ column
        assert np.linalg.norm(residual) <= 1e-8 * np.linalg.norm(D @ column)
    projector = vectors[:, :3] @ np.linalg.pinv(vectors[:, :3])
    assert np.allclose(projector @ embedding, embedding, atol=1e-8)  # the three smallest
    assert values[2] < 1e-10 < values[3]  # three groups, three pieces: their indicators
    # Eq. 4, the L1-regularised regression, at the cardinality asked for: the lasso's optimality
    # conditions hold at one penalty (correlations with the residual are +-alpha where active, within it elsewhere)
    target = embedding[:, 1]
    coefficients = _lasso_with_cardinality(X, target, 5)
    assert np.count_nonzero(coefficients) == 5
    centred = X - X.mean(axis=0)
    residual = target - target.mean() - centred @ coefficients
    correlation = centred.T @ residual / X.shape[0]
    active = coefficients != 0
    penalty = np.abs(correlation[active]).mean()
    assert np.allclose(correlation[active], penalty * np.sign(coefficients[active]), rtol=1e-8)
    assert np.all(np.abs(correlation[~active]) <= penalty * (1 + 1e-8))
    scores = score_features("mcfs", X, n_clusters=3, n_features_to_select=4).scores
    assert set(np.argsort(-scores)[:4]) == {0, 1, 2, 3} and np.count_nonzero(scores) <= 12


def test_mcfs_lasso_stops_at_the_first_point_of_the_whole_path_with_the_cardinality():
    """The path run in rounds (1.5 times the cardinality's steps, doubled when short) gives the
    point a single run to the cap of 4 c + 10 steps gives: the largest penalty with c non-zero
    coefficients. On the faces some eigenvectors need more than the first round's 85 steps (lasso
    drops); with fewer samples than c the count is never reached and the path's end is returned."""
    from sklearn.linear_model import lars_path
    from core.selection.clustering_scores import _lasso_with_cardinality, _normalised_affinity, _spectral_embedding
    from core.selection._scoring import knn_graph

    X = load_dataset("warpAR10P").X
    embedding = _spectral_embedding(*_normalised_affinity(knn_graph(X, 5)), 10)
    needed = []
    for rows, target in [(slice(None), column) for column in embedding.T[1:6]] + [(slice(0, 40), embedding[:40, 1])]:
        # centred as the function centres them: the 40-sample path's end is ill-conditioned, and
        # centring the rows twice moved it by 1.0e-12 on an AMD EPYC (not on a Xeon)
        _, _, path = lars_path(X[rows] - X[rows].mean(axis=0), target - target.mean(), method="lasso",
                               max_iter=4 * 50 + 10)
        counts = np.count_nonzero(path, axis=0)
        first = np.flatnonzero(counts >= 50)
        needed.append(first[0] if first.size else None)
        expected = path[:, first[0] if first.size else -1]
        assert np.allclose(_lasso_with_cardinality(X[rows], target, 50), expected, rtol=0, atol=1e-12)
    assert needed[-1] is None and max(step for step in needed[:-1]) > 85  # both the early end and a second round


def test_udfs_local_scatter_eigenproblem_and_monotone_objective(monkeypatch):
    from scipy import linalg
    import core.selection.clustering_scores as baselines

    X, _ = planted_clusters(10)
    q, k = X.shape[0], 4
    L = baselines._udfs_local_scatter(X, k, 1e-3)
    expected = np.zeros((q, q))
    H = np.eye(k + 1) - 1 / (k + 1)
    for i in range(q):  # Yang et al. 2011, Eq. 9, with explicit selection matrices S_i
        order = [i] + [j for j in np.argsort([np.sum((X[i] - X[j]) ** 2) if j != i else np.inf for j in range(q)])[:k]]
        selection = np.zeros((q, k + 1))
        selection[order, np.arange(k + 1)] = 1
        gram = H @ X[order] @ X[order].T @ H
        expected += selection @ H @ np.linalg.inv(gram + 1e-3 * np.trace(gram) / (k + 1) * np.eye(k + 1)) @ H @ selection.T
    assert np.allclose(L, expected, atol=1e-10)
    # the matrix-free eigensolver (Woodbury inverse, Lanczos) gives the dense one's subspace
    rng = np.random.default_rng(0)
    Z, diagonal = rng.standard_normal((50, 6)), rng.uniform(0.5, 3.0, 50)
    dense = baselines._smallest_eigenvectors(Z, diagonal, 3, np.ones(50))
    monkeypatch.setattr(baselines, "_UDFS_DENSE_LIMIT", 0)
    lanczos = baselines._smallest_eigenvectors(Z, diagonal, 3, np.ones(50))
    assert np.allclose(np.abs(linalg.svdvals(dense.T @ lanczos)), 1.0, atol=1e-8)
    result = baselines.udfs(X, n_clusters=3)
    monkeypatch.undo()
    assert result.converged and result.n_iter >= 3
    history = result.objective_history
    assert np.all(np.diff(history) <= 1e-10 * np.abs(history[1:]))  # the paper's Theorem 1
    assert np.allclose(baselines.udfs(X, n_clusters=3).scores, result.scores, atol=1e-6)
    assert set(np.argsort(-result.scores)[:4]) == {0, 1, 2, 3}


def test_ndfs_regression_identity_and_fixed_point():
    import core.selection.clustering_scores as baselines

    X, _ = planted_clusters(12)
    rng = np.random.default_rng(4)
    F, d_inverse = rng.uniform(0, 1, (60, 3)), rng.uniform(0.1, 2.0, 16)
    W, factor = baselines._ndfs_regression(X, F, d_inverse, 0.7)
    direct = np.linalg.solve(X.T @ X + 0.7 * np.diag(1 / d_inverse), X.T @ F)  # features x features
    assert np.allclose(W, direct, atol=1e-10)
    result = baselines.ndfs(X, n_clusters=3)
    assert result.converged and result.n_iter < 300
    assert set(np.argsort(-result.scores)[:4]) == {0, 1, 2, 3}
    assert np.array_equal(baselines.ndfs(X, n_clusters=3).scores, result.scores)  # deterministic


def test_ndfs_and_udfs_warn_when_they_stop_short():
    from sklearn.exceptions import ConvergenceWarning

    X, _ = planted_clusters(12)
    for method in ("udfs", "ndfs"):
        with pytest.warns(ConvergenceWarning, match="did not converge in 2 iterations"):
            score_features(method, X, n_clusters=3, max_iter=2)


@pytest.mark.parametrize("name", ["udfs", "ndfs"])
def test_udfs_and_ndfs_converged_means_the_scores_have_stopped_moving(name):
    """Converged is a step test on the scores, checked from outside: one iteration fewer gives
    scores within tol of the largest. The objective's relative change (the earlier test) stopped
    here while the scores still moved by 2e-4 (UDFS, at 162 iterations) and 3e-4 (NDFS, 65), and
    NDFS's top 20 was not the limit's."""
    from core.selection import clustering_scores

    data = load_dataset("colon")
    X = data.X[:, np.argsort(-data.X.var(axis=0), kind="stable")[:200]]
    selector = getattr(clustering_scores, name)
    result = selector(X)
    assert result.converged
    one_fewer = selector(X, max_iter=result.n_iter - 1)
    assert not one_fewer.converged
    step = np.abs(result.scores - one_fewer.scores).max() / result.scores.max()
    assert step <= 1e-6
    assert "a step test, not a certificate of stationarity" in result.criterion
    limit = selector(X, max_iter=20000, tol=1e-9)
    assert set(np.argsort(-result.scores)[:20]) == set(np.argsort(-limit.scores)[:20])


def test_step_criterion_reads_the_rate_and_the_distance_it_implies():
    from core.selection._scoring import score_step, step_criterion

    assert score_step(np.array([1.0, 0.5]), np.array([2.0, 0.25])) == 0.5
    rate, steps = 0.9, 1e-3 * 0.9 ** np.arange(30)
    # a geometric tail sums to step rate / (1 - rate) beyond the last step
    said = step_criterion(steps, 1e-6)
    assert f"x{rate:.3g} per iteration" in said and f"about {steps[-1] * 9:.2g} of the largest" in said
    assert "not shrinking" in step_criterion(1e-3 * 1.1 ** np.arange(30), 1e-6)
    assert "too few" in step_criterion([1e-3, 1e-4], 1e-6)


@pytest.mark.parametrize("criterion", ["difference", "quotient"])
def test_mrmr_matches_its_definition_by_brute_force(criterion):
    from sklearn.metrics import mutual_info_score

    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 70)
    X = rng.standard_normal((70, 12))
    X[:, 2] += 1.5 * y
    X[:, 5] = X[:, 2] + 0.1 * rng.standard_normal(70)  # relevant but redundant with feature 2
    X[:, 9] += 1.0 * y
    mean, spread = X.mean(axis=0), X.std(axis=0)
    codes = (X > mean - spread).astype(int) + (X > mean + spread)  # Peng et al.'s three states
    relevance = [mutual_info_score(y, codes[:, j]) for j in range(12)]
    order = [int(np.argmax(relevance))]
    while len(order) < 6:
        merit = {}
        for j in set(range(12)) - set(order):
            redundancy = np.mean([mutual_info_score(codes[:, j], codes[:, s]) for s in order])
            merit[j] = relevance[j] - redundancy if criterion == "difference" else relevance[j] / max(redundancy, 1e-12)
        order.append(max(sorted(merit), key=lambda j: merit[j]))
    result = score_features("mrmr", X, y, n_features_to_select=6, criterion=criterion)
    assert list(result.ranking[:6]) == order
    assert np.unique(result.scores).size == 12  # six ranked, the rest below them by relevance
    rest = [j for j in np.argsort(-np.array(relevance), kind="stable") if j not in order]
    assert set(result.ranking[6:8]) <= set(rest[:3])  # the next by relevance (ties of the discretisation aside)
    with pytest.raises(InputError, match="criterion must be one of difference, quotient"):
        score_features("mrmr", X, y, criterion="sum")


def test_rank_features_hands_the_number_of_clusters_to_the_clustering_scorers():
    from core.selection.methods import rank_features

    X, y = planted_clusters(12)
    for method in ("mcfs", "udfs", "ndfs"):
        assert np.array_equal(rank_features(method, X, y, n_clusters=3),
                              score_features(method, X, n_clusters=3).ranking)


def test_udfs_and_ndfs_check_their_input_when_called_directly():
    from core.selection.clustering_scores import ndfs, udfs

    X, _ = planted_clusters(6)
    with pytest.raises(InputError, match="n_clusters must be a positive integer"):
        udfs(X, n_clusters=0)
    with pytest.raises(InputError, match="gamma must be"):
        udfs(X, gamma=-1.0)
    with pytest.raises(InputError, match="beta must be"):
        ndfs(X, beta="1")
    with pytest.raises(InputError, match="NaN"):
        ndfs(np.full((10, 4), np.nan))


@pytest.mark.parametrize("name", ["udfs", "ndfs"])
def test_a_run_that_meets_tol_on_its_last_iteration_converged(name):
    import core.selection.clustering_scores as baselines

    X, _ = planted_clusters(12)
    run = getattr(baselines, name)
    full = run(X, n_clusters=3)
    assert full.converged
    exact = run(X, n_clusters=3, max_iter=full.n_iter)
    assert exact.converged and exact.n_iter == full.n_iter
    assert not run(X, n_clusters=3, max_iter=full.n_iter - 1).converged
