"""The lambda path of Q-alpha with side information: every point a fixed point at its lambda,
equal to a cold solve there, for fewer iterations than the cold solves."""

import numpy as np
import pytest

from core import InputError, QAlphaPath, load_dataset, pairs_from_labels, q_alpha, q_alpha_path
from core.selection.lambda_path import DEFAULT_LAMS

TOL = 1e-10  # the solvers' tolerance on the residuals, tight so that cold and warm meet


@pytest.fixture(scope="module")
def wine_split():
    wine = load_dataset("wine")
    X = (wine.X - wine.X.mean(axis=0)) / wine.X.std(axis=0)
    main = np.isin(wine.labels, [1, 2])
    return X[main], X[~main], wine.labels[main]


@pytest.fixture(scope="module")
def faces_split():
    """AR faces averaged over blocks of 4 x 2 pixels (300 features, so that a cold solve per lambda stays quick):
    people 1-5 main, person 6 side."""
    faces = load_dataset("warpAR10P")
    images = faces.images().reshape(-1, 15, 4, 20, 2).mean(axis=(2, 4)).reshape(faces.n_samples, -1)
    return images[faces.labels <= 5], images[faces.labels == 6]


def selected(result):
    return set(result.top(max(result.gap.n_selected, 3)).tolist())


@pytest.mark.parametrize("case, accelerate", [("wine", True), ("faces", True), ("faces", False)])
def test_every_point_equals_a_cold_solve(case, accelerate, wine_split, faces_split):
    """Each warm-started point is the cold solve's fixed point. The alternation alone needs fewer
    iterations warm than cold; by default, where it hands over to the ascent, iterations of the
    two kinds do not compare (an evaluation of the ascent costs tens of steps), so the count is
    the alternation's claim."""
    main, side = (wine_split[:2] if case == "wine" else faces_split)
    path = q_alpha_path(main, 2, side=side, tol=TOL, accelerate=accelerate)
    assert isinstance(path, QAlphaPath) and np.array_equal(path.lams, DEFAULT_LAMS) and path.converged
    warm_iterations = cold_iterations = 0
    for lam, result in zip(path.lams, path.results):
        cold = q_alpha(main, 2, side=side, lam=lam, tol=TOL, accelerate=accelerate)
        assert result.lam == lam and result.converged
        assert selected(result) == selected(cold), lam
        assert np.allclose(result.alpha, cold.alpha, atol=1e-6), (lam, np.abs(result.alpha - cold.alpha).max())
        assert result.objective == pytest.approx(cold.objective, rel=1e-8)
        warm_iterations += result.n_iter
        cold_iterations += cold.n_iter
    # the first point is a cold start too; the warm ones need fewer iterations
    assert accelerate or warm_iterations < cold_iterations, (warm_iterations, cold_iterations)


def test_the_ends_of_the_path(wine_split):
    """Large lambda: the side data hardly count (unsupervised Q-alpha); small lambda: the features
    the side class varies in as much as the main classes are suppressed."""
    main, side, _ = wine_split
    path = q_alpha_path(main, 2, side=side, lams=[1e-4, 1e4], tol=TOL)
    plain = q_alpha(main, 2, tol=TOL)
    assert np.allclose(path.results[1].alpha, plain.alpha, atol=1e-3)
    D = path.results[0].side_diagonal
    low, high = path.results[0].alpha, path.results[1].alpha
    shared = np.argsort(-D)[:3]  # the features the side class varies in most
    assert (low[shared] ** 2).sum() < (high[shared] ** 2).sum()


def test_between_grid_points_is_solved_exactly(wine_split):
    main, side, _ = wine_split
    path = q_alpha_path(main, 2, side=side, lams=[0.01, 0.1, 1.0], tol=TOL)
    assert path.at(0.1) is path.results[1] and path.nearest(0.2) == 1 and path.nearest(0.5) == 2
    between = path.at(0.05)
    cold = q_alpha(main, 2, side=side, lam=0.05, tol=TOL)
    assert between.lam == 0.05 and np.allclose(between.alpha, cold.alpha, atol=1e-6)
    assert between.n_iter < cold.n_iter  # warm-started from the nearest point
    with pytest.raises(InputError, match="lam must be greater than 0"):
        path.at(0.0)


def test_pairs_path_equals_cold_solves(wine_split):
    main, _, labels = wine_split
    pairs = pairs_from_labels(labels, 60, random_state=0)
    path = q_alpha_path(main, 2, pairs=pairs, lams=[0.01, 0.1, 1.0], tol=TOL)
    for lam, result in zip(path.lams, path.results):
        cold = q_alpha(main, 2, pairs=pairs, lam=lam, tol=TOL)
        assert np.allclose(result.alpha, cold.alpha, atol=1e-6), lam


def test_weights_and_gap_strength_along_the_path(wine_split):
    main, side, _ = wine_split
    path = q_alpha_path(main, 2, side=side, lams=[1e-3, 1e-2, 1e-1, 1.0])
    assert path.weights.shape == (4, main.shape[1])
    assert np.allclose(np.linalg.norm(path.weights, axis=1), 1.0)
    assert path.gap_strength.shape == (4,) and np.all((path.gap_strength >= 0) & (path.gap_strength <= 1))
    top = path.top_features(3)
    peaks = path.weights.max(axis=0)  # each feature's largest weight anywhere on the path
    others = np.setdiff1d(np.arange(main.shape[1]), top)
    assert top.size == 3 and peaks[top].min() >= peaks[others].max()


def test_a_stopped_path_keeps_the_points_done(wine_split):
    main, side, _ = wine_split
    reports = []
    path = q_alpha_path(main, 2, side=side, progress=lambda report: reports.append(report) or len(reports) < 3)
    assert path.stopped and np.array_equal(path.lams, DEFAULT_LAMS[-3:]) and len(path.results) == 3
    assert [r.done for r in reports] == [1, 2, 3] and reports[0].total == DEFAULT_LAMS.size
    assert "lambda = 100" in reports[0].message


@pytest.mark.parametrize("options, message", [
    (dict(), "needs side information"),
    (dict(side="wine", lams=[]), "lams is empty"),
    (dict(side="wine", lams=[0.1, -1.0]), "lam must be greater than 0"),
    (dict(side="wine", lams=["a"]), "lams must be a list of positive numbers"),
])
def test_bad_paths_are_refused(wine_split, options, message):
    main, side, _ = wine_split
    if options.get("side") == "wine":
        options["side"] = side
    with pytest.raises(InputError, match=message):
        q_alpha_path(main, 2, **options)
