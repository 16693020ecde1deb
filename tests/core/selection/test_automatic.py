"""Q-alpha's k and λ chosen from the data (issue 35): deterministic given the seed, blind to the
labels, the same weights as a plain run at the chosen settings, stability that measures what it
says; a search on top of the plain estimator (issue 49) that takes what q_alpha takes, reports
its progress and stops inside a solve."""

import numpy as np
import pytest
import scipy.sparse as sp

from core import InputError, Stopped, load_dataset, q_alpha
from core.data.generators import weston_linear
from core.selection.automatic import (AUTO_LAMBDAS, AutoSettings, choose_settings, clustering_stability,
                                      estimate_n_clusters, shrunk_scaling)
from core.selection.qalpha import feature_scaling
from core.validation import zscores


@pytest.fixture(scope="module")
def wine_turn():
    """Wine with class 1 as side data and classes 2 and 3 as main data (a turn of the UCI protocol)."""
    wine = load_dataset("wine")
    side = wine.labels == wine.classes[0]
    return wine.X[~side], wine.X[side], wine.labels[~side]


def blobs(n_clusters, n_per, n_features, spread, seed):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 10.0, size=(n_clusters, n_features))
    return np.vstack([centre + rng.normal(0.0, spread, size=(n_per, n_features)) for centre in centres])


def test_same_choice_on_a_fixed_seed(wine_turn):
    main, side, labels = wine_turn
    first = choose_settings(main, side=side, n_clusters=2, random_state=3)
    second = choose_settings(main, side=side, n_clusters=2, random_state=3)
    assert (first.k, first.lam, first.weighting) == (second.k, second.lam, second.weighting)
    assert [c.stability for c in first.candidates] == [c.stability for c in second.candidates]


def test_auto_result_equals_a_plain_run_at_the_chosen_settings(wine_turn):
    main, side, _ = wine_turn
    auto = choose_settings(main, side=side, n_clusters=2, random_state=0)
    assert isinstance(auto, AutoSettings)
    result = auto.results[(auto.k, auto.lam)]
    assert result.k in (2, 4) and result.lam in AUTO_LAMBDAS
    plain = q_alpha(main, result.k, side=side, lam=result.lam, random_state=0)
    np.testing.assert_allclose(result.alpha, plain.alpha, atol=1e-12)
    # every candidate's weights are the plain run's at its settings, reached in as many iterations
    # (the data prepared once, and each λ's uniform start shared by both k)
    for (k, lam), alpha in auto.alphas.items():
        alone = q_alpha(main, k, side=side, lam=lam, random_state=0)
        np.testing.assert_allclose(alpha, alone.alpha, atol=1e-12)
        assert auto.results[(k, lam)].n_iter == alone.n_iter
    # the options reach every solve as q_alpha takes them (a random start, two starts; the gap
    # criterion, whose ascent starts from equal weights)
    for options in (dict(init="random", n_init=2), dict(criterion="gap"), dict(accelerate=False, tol=1e-9)):
        searched = choose_settings(main, side=side, n_clusters=2, random_state=1, **options)
        for (k, lam), result in searched.results.items():
            alone = q_alpha(main, k, side=side, lam=lam, random_state=1, **options)
            np.testing.assert_allclose(result.alpha, alone.alpha, atol=1e-12)
            assert (result.n_iter, result.criterion, result.tol) == (alone.n_iter, alone.criterion, alone.tol)


def test_the_choice_is_the_most_stable_candidate_and_says_so(wine_turn):
    main, side, _ = wine_turn
    auto = choose_settings(main, side=side, n_clusters=2, random_state=0)
    weighted = [c for c in auto.candidates if c.k is not None]
    assert len(weighted) == 2 * len(AUTO_LAMBDAS) and auto.candidates[0].k is None
    best = max(weighted, key=lambda c: c.stability)
    assert (auto.k, auto.lam) == (best.k, best.lam)
    assert auto.weighting == ("shrunk_sqrt_alpha" if best.stability > auto.candidates[0].stability else "none")
    assert f"k = {auto.k}" in auto.reason and f"λ = {auto.lam:g}" in auto.reason
    assert sum(row["chosen"] for row in auto.table()) == 1
    # each candidate's score is clustering_stability of its features on the same resamples
    Z = zscores(main)
    assert auto.candidates[0].stability == pytest.approx(clustering_stability(Z, 2, random_state=0).mean(), abs=1e-12)
    alpha = auto.alphas[(best.k, best.lam)]
    assert best.stability == pytest.approx(clustering_stability(Z * shrunk_scaling(alpha), 2, random_state=0).mean(),
                                           abs=1e-12)
    expected = Z * shrunk_scaling(alpha) if auto.weighting_helps else Z
    np.testing.assert_allclose(auto.kmeans_features(main, alpha), expected)


def test_weights_win_where_few_features_carry_the_clusters():
    """Weston's linear data: 6 of 202 features carry the two classes; the other 196 are noise, so
    unweighted k-means finds no stable grouping and the weighted data do."""
    data = weston_linear(200, random_state=0)
    auto = choose_settings(data.X, n_clusters=2, random_state=0)
    assert auto.weighting == "shrunk_sqrt_alpha" and auto.lam == 0.0 and not auto.chose_lam
    assert auto.weighted_best.stability > auto.unweighted.stability + 0.2
    assert set(auto.results[(auto.k, auto.lam)].top(6)) & set(range(6))


def test_stability_is_one_on_separated_clusters_and_low_on_noise():
    separated = blobs(3, 40, 5, 0.1, seed=0)
    np.testing.assert_allclose(clustering_stability(separated, 3, random_state=0), 1.0)
    noise = np.random.default_rng(1).normal(size=(120, 20))
    assert clustering_stability(noise, 3, random_state=0).mean() < 0.6


def test_stability_is_the_rand_index_of_scikit_learns_k_means_on_the_same_resamples():
    """Lange et al.'s stability as the function states it: for each pair of subsets (drawn as the
    function draws them), k-means with one start seeded ``seed + 2 * pair + subset`` fitted on each,
    their adjusted Rand index on the samples both hold (here labelled by each fit's centres)."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score

    from core.selection.automatic import N_RESAMPLES, RESAMPLE_FRACTION, _resample_pairs

    wine, colon, lung = (zscores(load_dataset(name).X) for name in ("wine", "colon", "lung_small"))
    # colon (62 x 2,000) and lung_small (73 x 325) are clustered in the span of their samples
    for Z, n_clusters, seed in ((wine, 3, 0), (wine, 5, 7), (colon, 2, 0), (lung, 3, 1)):
        pairs = _resample_pairs(Z.shape[0], N_RESAMPLES, RESAMPLE_FRACTION, np.random.default_rng(seed))
        expected = []
        for position, (first, second) in enumerate(pairs):
            shared = np.intersect1d(first, second)
            labels = [KMeans(n_clusters, n_init=1, random_state=seed + 2 * position + offset).fit(Z[rows])
                      .predict(Z[shared]) for offset, rows in enumerate((first, second))]
            expected.append(adjusted_rand_score(*labels))
        np.testing.assert_allclose(clustering_stability(Z, n_clusters, random_state=seed), expected, atol=1e-12)


def test_wide_data_are_clustered_in_the_span_of_their_samples_at_the_same_stopping_shift():
    """k-means sees distances only: the coordinates keep every inner product of the samples, and
    the tolerance, relative to the mean of the features' variances, stops at the same shift."""
    from core.selection.automatic import KMEANS_TOL, SPAN_BELOW, _span_coordinates

    X = np.random.default_rng(4).normal(size=(30, 200)) * np.linspace(0.5, 3.0, 200)
    coordinates, tol = _span_coordinates(X)
    assert coordinates.shape == (30, 30)
    np.testing.assert_allclose(coordinates @ coordinates.T, X @ X.T, atol=1e-10)
    for rows in (np.arange(30), np.arange(3, 27)):  # any subset: the shift is relative to its variances
        assert tol * np.mean(np.var(coordinates[rows], axis=0)) == pytest.approx(
            KMEANS_TOL * np.mean(np.var(X[rows], axis=0)), rel=1e-12)
    narrow = X[:, : int(SPAN_BELOW * 30)]
    assert _span_coordinates(narrow)[0] is narrow and _span_coordinates(narrow)[1] == KMEANS_TOL


def test_the_search_runs_on_one_blas_thread_where_its_solves_are_small(wine_turn, monkeypatch):
    """BLAS threads left spinning by a solve slow the k-means after it; on one BLAS thread, each
    candidate is scored on a second thread while the next is solved, with the same scores."""
    from core.matrix import threads
    from core.selection import automatic

    held = []

    solve = automatic._solve

    def recording(*args, **kwargs):
        held.append(threads.one_thread_holders())
        return solve(*args, **kwargs)

    import threading

    scored_on, stability = [], automatic._stability

    def scoring(*args):
        scored_on.append(threading.current_thread().name)
        return stability(*args)

    monkeypatch.setattr(automatic, "_solve", recording)
    monkeypatch.setattr(automatic, "_stability", scoring)
    main, side, _ = wine_turn
    overlapped = choose_settings(main, side=side, n_clusters=2, random_state=0)
    assert held and min(held) >= 1
    # each candidate scored on the second thread while the next is solved
    assert len(scored_on) == 7 and all(name.startswith("stability") for name in scored_on)
    # the search's largest products: samples x features x the largest k it may try (2 x 10), here
    # above a limit its solves' own products stay below (they hold one thread inside, not before)
    monkeypatch.setattr(threads, "SMALL_PRODUCT_WORK", main.shape[0] * main.shape[1] * 20 - 1)
    held.clear()
    choose_settings(main, side=side, n_clusters=2, random_state=0)
    assert held == [0] * len(held) and held
    monkeypatch.setattr(threads, "SMALL_PRODUCT_WORK", 1.0)  # every product large: threads as they are
    held.clear()
    scored_on.clear()
    one_by_one = choose_settings(main, side=side, n_clusters=2, random_state=0)
    assert held == [0] * len(held) and held
    # scored here, one after another (a one-thread limit beside a large solve would slow it)
    assert scored_on == [threading.current_thread().name] * 7
    assert [c.stability for c in overlapped.candidates] == [c.stability for c in one_by_one.candidates]


def test_each_lambdas_uniform_start_is_computed_once_for_both_k(wine_turn, monkeypatch):
    """The search computes the uniform start at each λ once, at the larger k, and both solves at
    that λ take it (the smaller k its first columns): three computations for six solves."""
    from core.selection import automatic

    computed, given = [], []
    real_vectors, real_solve = automatic.uniform_vectors, automatic._solve

    def counted(problem, prepared, init):
        computed.append((problem.lam, prepared.k))
        return real_vectors(problem, prepared, init)

    def recorded(prepared, lam, **options):
        given.append((prepared.k, lam, options["uniform"] is not None and options["uniform"].shape[1]))
        return real_solve(prepared, lam, **options)

    monkeypatch.setattr(automatic, "uniform_vectors", counted)
    monkeypatch.setattr(automatic, "_solve", recorded)
    main, side, _ = wine_turn
    choose_settings(main, side=side, n_clusters=2, random_state=0)
    assert computed == [(lam, 4) for lam in AUTO_LAMBDAS]
    assert given == [(k, lam, 4) for k in (2, 4) for lam in AUTO_LAMBDAS]


def test_number_of_clusters_from_the_spectrum():
    assert estimate_n_clusters(blobs(4, 30, 50, 1.0, seed=2)) == 4
    assert estimate_n_clusters(blobs(2, 30, 50, 1.0, seed=3)) == 2
    assert estimate_n_clusters(blobs(4, 30, 50, 1.0, seed=2), max_clusters=4) == 4  # the largest allowed
    # three points repeated span two directions, fewer than the rule reads a gap from (two clusters);
    # the rounding of the Gram matrix's zero eigenvalues (2e-11 here, 1e-15 of the largest) is not
    # taken for a third direction, whose ratio to the second would win (three clusters)
    corners = np.repeat(np.array([[0.0, 0.0, 0.0, 1.0], [5.0, 1.0, 0.0, 2.0], [1.0, 7.0, 3.0, 0.0]]), 20, axis=0)
    assert estimate_n_clusters(corners) == 2
    assert estimate_n_clusters(np.hstack([corners, corners @ np.ones((4, 300))])) == 2  # wide: Z Z^T
    auto = choose_settings(blobs(4, 30, 50, 1.0, seed=2), random_state=0)
    assert auto.n_clusters == 4 and auto.n_clusters_estimated
    assert "estimated from the spectrum" in auto.reason


def test_shrunk_scaling_between_equal_weights_and_qalpha_geometry():
    alpha = np.abs(np.random.default_rng(4).normal(size=30))
    np.testing.assert_allclose(shrunk_scaling(alpha, 1.0), 1.0)
    np.testing.assert_allclose(shrunk_scaling(alpha, 0.0), feature_scaling(alpha) / np.sqrt(alpha.mean()))
    half = shrunk_scaling(alpha)
    assert np.all((half >= np.minimum(1.0, shrunk_scaling(alpha, 0.0)) - 1e-12)
                  & (half <= np.maximum(1.0, shrunk_scaling(alpha, 0.0)) + 1e-12))
    with pytest.raises(InputError, match="shrink"):
        shrunk_scaling(alpha, 1.5)


def test_refusals_say_what_to_do(wine_turn):
    main, side, labels = wine_turn
    with pytest.raises(InputError, match="n_clusters"):
        choose_settings(main, side=side, n_clusters=1)
    with pytest.raises(InputError, match="label-free"):
        choose_settings(main, side=side, labels=labels)
    with pytest.raises(InputError, match="passed to q_alpha, which does not take them.*n_start"):
        choose_settings(main, side=side, n_clusters=2, n_start=3)
    with pytest.raises(InputError, match="tol"):
        choose_settings(main, side=side, n_clusters=2, tol=-1.0)
    with pytest.raises(InputError, match="lam"):
        choose_settings(main, side=side, n_clusters=2, lam=-1.0)
    with pytest.raises(InputError, match="random_state"):
        choose_settings(main, side=side, n_clusters=2, random_state=1.5)
    # given values are kept
    fixed = choose_settings(main, side=side, k=3, n_clusters=2, random_state=0)
    assert fixed.k == 3 and fixed.chose_lam and not fixed.chose_k
    # a resample holds 80% of the samples: 8 clusters of 10 samples is one too many
    with pytest.raises(InputError, match="8 clusters need more samples than the 10"):
        clustering_stability(main[:10], 8)
    with pytest.raises(InputError, match="fraction"):
        clustering_stability(main, 2, fraction=1.5)
    with pytest.raises(InputError, match="fraction"):
        clustering_stability(main, 2, fraction=0.0)
    with pytest.raises(InputError, match="n_resamples"):
        clustering_stability(main, 2, n_resamples=0)


def test_the_table_and_the_stability_seed():
    X = blobs(3, 20, 6, 2.0, seed=8)
    auto = choose_settings(X, n_clusters=3, random_state=0)
    rows = auto.table()
    assert [row["setting"] for row in rows] == [c.label for c in auto.candidates]
    assert [row["stability"] for row in rows] == [c.stability for c in auto.candidates]
    assert [(row["k"], row["lam"], row["stability_sd"]) for row in rows] == [
        (c.k, c.lam, c.stability_sd) for c in auto.candidates]
    assert sum(row["chosen"] for row in rows) == 1
    # the default seed is 0: on overlapping clusters another seed scores otherwise
    noisy = blobs(3, 20, 6, 9.0, seed=8)
    default = clustering_stability(noisy, 3)
    np.testing.assert_array_equal(default, clustering_stability(noisy, 3, random_state=0))
    assert not np.array_equal(default, clustering_stability(noisy, 3, random_state=1))


def test_the_search_takes_sparse_and_chunked_data_as_q_alpha_does(wine_turn):
    """The solves run on the data as given (sparse products, Dask row blocks); k-means clusters
    a dense copy of the standardised values: the same choice and weights as on the dense array."""
    import dask.array as da

    main, side, _ = wine_turn
    dense = choose_settings(main, side=side, n_clusters=2, random_state=0, solver="power")
    for kind in (sp.csr_matrix(main), da.from_array(main, chunks=(40, main.shape[1]))):
        other = choose_settings(kind, side=side, n_clusters=2, random_state=0, solver="power")
        assert (other.k, other.lam, other.weighting) == (dense.k, dense.lam, dense.weighting)
        for key, alpha in dense.alphas.items():
            np.testing.assert_allclose(other.alphas[key], alpha, atol=1e-8)


def test_too_large_a_dense_copy_is_refused_with_the_reason(wine_turn, monkeypatch):
    import core.selection.automatic as automatic

    main, side, _ = wine_turn
    monkeypatch.setattr(automatic, "DENSE_COPY_LIMIT", main.size * 8 - 1)
    with pytest.raises(InputError, match="needs them dense.*Give k and lam to q_alpha yourself"):
        choose_settings(sp.csr_matrix(main), side=side, n_clusters=2)


def test_progress_reaches_inside_each_solve_and_stop_stops_it(wine_turn):
    main, side, _ = wine_turn
    reports = []
    choose_settings(main, side=side, n_clusters=2, random_state=0, progress=reports.append)
    candidates = 1 + 2 * len(AUTO_LAMBDAS)
    assert {report.total for report in reports} == {candidates} and reports[-1].done == candidates
    assert reports[-1].message == f"k = 4, λ = {AUTO_LAMBDAS[-1]:g}"  # the last candidate, once scored
    inside = [report for report in reports if "iteration" in report.message]
    assert inside and all(report.objective is not None for report in inside)
    # a solve's iterations are reported as its candidate's: the candidates done before it, its label
    assert inside[0].message == f"k = 2, λ = {AUTO_LAMBDAS[0]:g}: iteration 1" and inside[0].done == 0
    assert inside[-1].message.startswith(f"k = 4, λ = {AUTO_LAMBDAS[-1]:g}: iteration ")
    assert inside[-1].done == candidates - 2  # the unweighted data and five solves scored before it
    # without side data λ is 0, and the label says so
    plain = []
    choose_settings(main, n_clusters=2, random_state=0, progress=plain.append)
    assert any(report.message == "k = 2, λ = 0: iteration 1" for report in plain)
    # False during the first solve's third iteration stops there: no further solve is made
    seen = []

    def stop_early(report):
        seen.append(report)
        return False if "iteration 3" in report.message else None

    with pytest.raises(Stopped, match="while solving Q-alpha at k = 2, λ = 0.1"):
        choose_settings(main, side=side, n_clusters=2, random_state=0, progress=stop_early)
    assert "iteration 3" in seen[-1].message and all("λ = 1" not in report.message for report in seen)


def test_an_estimated_number_of_clusters_fits_the_resamples():
    """Six samples: a resample holds five, so at most four clusters may be estimated (the
    spectrum alone would ask for more); each candidate says whether its Q-alpha run converged."""
    X = weston_linear(20, random_state=0).X[:6]
    auto = choose_settings(X, random_state=0)
    assert auto.n_clusters_estimated and 2 <= auto.n_clusters <= 4
    assert [row["converged"] is None for row in auto.table()] == [True] + [False] * (len(auto.candidates) - 1)
    with pytest.raises(InputError, match="ask for fewer clusters, or set k and λ yourself"):
        choose_settings(X, n_clusters=5)
