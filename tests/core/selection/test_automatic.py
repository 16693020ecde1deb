"""Q-alpha's k and λ chosen from the data (issue 35): deterministic given the seed, blind to the
labels, the same weights as a plain run at the chosen settings, and stability that measures what
it says."""

import numpy as np
import pytest
import scipy.sparse as sp

from core import InputError, load_dataset, q_alpha
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


def test_shuffled_labels_leave_the_choice_unchanged(wine_turn):
    """The rule takes no labels; the one number a page takes from them, the clusters to find, is
    the count of classes, which a shuffle keeps."""
    main, side, labels = wine_turn
    shuffled = np.random.default_rng(0).permutation(labels)
    assert not np.array_equal(shuffled, labels)
    chosen = [q_alpha(main, side=side, n_clusters=np.unique(y).size, random_state=0) for y in (labels, shuffled)]
    assert (chosen[0].k, chosen[0].lam, chosen[0].auto.weighting) == (chosen[1].k, chosen[1].lam, chosen[1].auto.weighting)
    np.testing.assert_array_equal(chosen[0].alpha, chosen[1].alpha)


def test_auto_result_equals_a_plain_run_at_the_chosen_settings(wine_turn):
    main, side, _ = wine_turn
    result = q_alpha(main, side=side, n_clusters=2, random_state=0)
    assert isinstance(result.auto, AutoSettings)
    assert result.k in (2, 4) and result.lam in AUTO_LAMBDAS
    plain = q_alpha(main, result.k, side=side, lam=result.lam, random_state=0)
    np.testing.assert_allclose(result.alpha, plain.alpha, atol=1e-12)
    assert plain.auto is None
    # every candidate's weights are the plain run's at its settings
    for (k, lam), alpha in result.auto.alphas.items():
        np.testing.assert_allclose(alpha, q_alpha(main, k, side=side, lam=lam, random_state=0).alpha, atol=1e-12)


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
    result = q_alpha(data.X, n_clusters=2, random_state=0)
    assert result.auto.weighting == "shrunk_sqrt_alpha" and result.lam == 0.0 and not result.auto.chose_lam
    assert result.auto.weighted_best.stability > result.auto.unweighted.stability + 0.2
    assert set(result.top(6)) & set(range(6))


def test_stability_is_one_on_separated_clusters_and_low_on_noise():
    separated = blobs(3, 40, 5, 0.1, seed=0)
    np.testing.assert_allclose(clustering_stability(separated, 3, random_state=0), 1.0)
    noise = np.random.default_rng(1).normal(size=(120, 20))
    assert clustering_stability(noise, 3, random_state=0).mean() < 0.6


def test_number_of_clusters_from_the_spectrum():
    assert estimate_n_clusters(blobs(4, 30, 50, 1.0, seed=2)) == 4
    assert estimate_n_clusters(blobs(2, 30, 50, 1.0, seed=3)) == 2
    result = q_alpha(blobs(4, 30, 50, 1.0, seed=2), random_state=0)
    assert result.auto.n_clusters == 4 and result.auto.n_clusters_estimated
    assert "estimated from the spectrum" in result.auto.reason


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
        q_alpha(main, side=side, n_clusters=1)
    with pytest.raises(InputError, match="give lam"):
        q_alpha(main, labels=labels, side=side)
    with pytest.raises(InputError, match="give k and lam for sparse or chunked data"):
        q_alpha(sp.csr_matrix(main), side=side, n_clusters=2)
    with pytest.raises(InputError, match="random_state"):
        choose_settings(main, side=side, n_clusters=2, random_state=None)
    # given values are kept
    fixed = q_alpha(main, 3, side=side, n_clusters=2, random_state=0)
    assert fixed.k == 3 and fixed.auto.chose_lam and not fixed.auto.chose_k
    assert q_alpha(main, 3, side=side, lam=0.5).auto is None


def test_an_estimated_number_of_clusters_fits_the_resamples():
    """Six samples: a resample holds five, so at most four clusters may be estimated (the
    spectrum alone would ask for more); each candidate says whether its Q-alpha run converged."""
    X = weston_linear(20, random_state=0).X[:6]
    result = q_alpha(X, random_state=0)
    assert result.auto.n_clusters_estimated and 2 <= result.auto.n_clusters <= 4
    assert [row["converged"] is None for row in result.auto.table()] == [True] + [False] * (len(result.auto.candidates) - 1)
    with pytest.raises(InputError, match="ask for fewer clusters, or set k and λ yourself"):
        q_alpha(X, n_clusters=5)
