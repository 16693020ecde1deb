"""Baselines: every one runs through the common interface on Weston data, faces and genes;
the label-aware filters find the planted features; projections learn from training data only."""

import numpy as np
import pytest

from core.baselines import (PROJECTIONS, SCORERS, CPCA, OPCA, PCAProjection, make_projection,
                            score_features)
from core.bundled import load_dataset
from core.errors import InputError
from core.synthetic import weston_linear

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
        result = score_features(method, X, y, **FAST_OPTIONS.get(method, {}))
        assert result.scores.shape == (X.shape[1],) and not np.isnan(result.scores).any()
        assert sorted(result.ranking) == list(range(X.shape[1]))
        assert result.info.cost and result.info.citation and result.seconds >= 0


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
    projection = make_projection(method, 3)
    projection.fit(train, side=side)
    before = projection.transform(test).copy()
    refit = make_projection(method, 3).fit(train, side=side)
    assert np.allclose(refit.transform(test), before)  # nothing of the test set was learnt
    assert before.shape == (30, 3)
    poisoned = make_projection(method, 3).fit(np.vstack([train, test * 100]), side=side)
    assert not np.allclose(poisoned.transform(test), before)  # had it seen the test set, it would differ


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
    from core.baselines import rank_features
    from core.qalpha import q_alpha
    from core.slda import greedy_slda

    data = weston_linear(80, random_state=1)
    X, y = data.X, data.labels
    assert np.array_equal(rank_features("Q-alpha", X, y, n_clusters=2), q_alpha(X, 2).ranking)
    assert np.array_equal(rank_features("Q-alpha (supervised)", X, y), q_alpha(X, labels=y).ranking)
    assert np.array_equal(rank_features("sparse LDA", X, y), greedy_slda(X, y).backward_order)
    assert np.array_equal(rank_features("fisher", X, y), score_features("fisher", X, y).ranking)
    with pytest.raises(InputError, match="Unknown method 'nope'.*Q-alpha.*fisher"):
        rank_features("nope", X, y)
