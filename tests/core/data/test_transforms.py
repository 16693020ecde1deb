"""transform_values: log1p and per-feature z-scores, checked against NumPy and scikit-learn."""

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from core import Dataset, InputError, load_dataset, q_alpha, rank_features, transform_values, to_feature_family
from core.data.transforms import dispersion_ranking, transform_steps


def counts(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.poisson(3.0, (12, 7)).astype(float)
    X[:, 4] = 5.0  # a constant gene
    return Dataset(X, labels=np.repeat(["a", "b"], 6), feature_names_=tuple(f"g{j}" for j in range(7)),
                   sample_names_=tuple(f"s{i}" for i in range(12)), name="counts.csv", meta={"loaded_with": {"x": 1}})


def test_log1p_then_z_scores_are_numpys_and_scikit_learns():
    data = counts()
    logged = transform_values(data, log1p=True)
    np.testing.assert_array_equal(logged.X, np.log1p(data.X))
    both = transform_values(data, log1p=True, standardise=True)
    np.testing.assert_allclose(both.X, StandardScaler().fit_transform(np.log1p(data.X)), atol=1e-12)
    np.testing.assert_allclose(both.X[:, 4], 0.0, atol=1e-12)  # a constant gene is centred, not divided by zero
    np.testing.assert_allclose(transform_values(data, standardise=True).X,
                               StandardScaler().fit_transform(data.X), atol=1e-12)


def test_labels_names_and_the_recipe_are_kept():
    data = counts()
    both = transform_values(data, log1p=True, standardise=True)
    assert both.name == "counts.csv (log1p, z-scores)" and transform_values(data, standardise=True).name == "counts.csv (z-scores)"
    assert list(both.labels) == list(data.labels) and both.feature_names == data.feature_names
    assert both.sample_names == data.sample_names and both.meta["loaded_with"] == {"x": 1}
    assert both.meta["transform"] == dict(normalise_total=False, log1p=True, n_most_variable=None, standardise=True,
                                          min_nonzero_share=None, blanked=False)
    assert both.meta["transformed_from"] is data
    assert both.fingerprint != data.fingerprint and data.X.min() >= 0  # the input is untouched


def test_a_negative_value_refuses_log1p_and_names_where_it_is():
    data = counts()
    X = data.X.copy()
    X[7, 2] = -0.25
    centred = Dataset(X, feature_names_=data.feature_names_, sample_names_=data.sample_names_)
    with pytest.raises(InputError, match=r"'g2' holds -0.25 \(sample 's7'\).*leave log1p off"):
        transform_values(centred, log1p=True)
    # the z-scores alone take any values
    assert np.isfinite(transform_values(Dataset(X), standardise=True).X).all()


def test_nothing_asked_and_not_a_dataset_are_refused():
    with pytest.raises(InputError, match="Choose a transform"):
        transform_values(counts())
    for bad in (0, 8, 2.0, True):
        with pytest.raises(InputError, match="n_most_variable must be a whole number from 1 to 7"):
            transform_values(counts(), n_most_variable=bad)
    with pytest.raises(InputError, match="takes a Dataset"):
        transform_values(np.ones((3, 3)), log1p=True)


def test_images_keep_their_shape_and_a_feature_familys_basis_is_dropped():
    faces = load_dataset("ORL").subset_samples(range(20))
    scaled = transform_values(faces, standardise=True)
    assert scaled.image_shape == faces.image_shape and scaled.family is not None  # still pixels
    haar = to_feature_family(faces, "haar", levels=2)
    assert haar.family is not None and transform_values(haar, standardise=True).family is None


def test_q_alpha_is_blind_to_z_scores_and_not_to_log1p():
    """Q-alpha centres and normalises each feature itself (Wolf & Shashua 2003, Sec. 2), so
    z-scoring first leaves its weights as they were; log1p reshapes the values, and they change."""
    rng = np.random.default_rng(3)
    data = Dataset(rng.lognormal(0.0, 1.0, (40, 60)))
    raw = q_alpha(data.X, 2, random_state=0, tol=1e-12, max_iter=2000)
    scaled = q_alpha(transform_values(data, standardise=True).X, 2, random_state=0, tol=1e-12, max_iter=2000)
    logged = q_alpha(transform_values(data, log1p=True).X, 2, random_state=0, tol=1e-12, max_iter=2000)
    assert raw.converged and scaled.converged and logged.converged
    np.testing.assert_allclose(scaled.alpha, raw.alpha, atol=1e-8)
    assert np.abs(logged.alpha - raw.alpha).max() > 1e-3


def dispersions_with_pandas(X, n_bins=20):
    """The normalised dispersion written out with pandas (``cut`` for the bins, ``groupby`` for
    their statistics), as the reference for :func:`dispersion_ranking`."""
    import pandas as pd

    frame = pd.DataFrame({"mean": X.mean(axis=0), "variance": X.var(axis=0, ddof=1)})
    with np.errstate(divide="ignore", invalid="ignore"):
        frame["dispersion"] = np.log(frame.variance / frame["mean"]).replace([np.inf, -np.inf], np.nan)
    frame["bin"] = pd.cut(np.log1p(frame["mean"]), n_bins)
    groups = frame.groupby("bin", observed=True)["dispersion"]
    centre, spread, size = groups.transform("mean"), groups.transform("std"), groups.transform("count")
    normalised = (frame.dispersion - centre) / spread
    normalised[size == 1] = 1.0
    return normalised.fillna(-np.inf).to_numpy()


def test_the_dispersion_ranking_is_the_normalised_dispersion_of_pandas():
    rng = np.random.default_rng(8)
    levels = rng.lognormal(0.0, 2.0, 300)  # means over four decades, so the bins are uneven
    X = rng.poisson(levels * rng.gamma(2.0, 0.5, (60, 300)))
    X[:, 7] = 0.0  # never expressed: no dispersion
    X[:, 11] = 3.0  # constant: no dispersion
    X[:, 13] = rng.poisson(5000.0, 60)  # alone at the top of the range: scores 1
    expected = dispersions_with_pandas(X.astype(float))
    ranking = dispersion_ranking(X)
    np.testing.assert_array_equal(ranking, np.argsort(-expected, kind="stable"))
    assert expected[13] == 1.0 and expected[7] == expected[11] == -np.inf
    defined = np.isfinite(expected).sum()
    assert {7, 11} <= set(ranking[defined:])  # after every feature with a dispersion
    for bad in (-X, X[0], np.full((3, 2), np.nan)):
        with pytest.raises(InputError, match="non-negative values"):
            dispersion_ranking(bad)
    with pytest.raises(InputError, match="n_bins"):
        dispersion_ranking(X, n_bins=0)


def test_the_most_variable_features_are_kept_in_order_between_log1p_and_z_scores():
    """log1p of the features the dispersion ranks first (chosen on the values as given, as scanpy
    chooses them on their log1p), in their own order, then z-scores of those."""
    data = counts(5)
    kept = transform_values(data, log1p=True, n_most_variable=3, standardise=True)
    chosen = np.sort(dispersion_ranking(data.X)[:3])
    assert kept.feature_names == tuple(data.feature_names[j] for j in chosen)
    np.testing.assert_allclose(kept.X, StandardScaler().fit_transform(np.log1p(data.X)[:, chosen]), atol=1e-12)
    assert kept.name == "counts.csv (log1p, 3 most variable, z-scores)"
    assert kept.meta["transform"] == dict(normalise_total=False, log1p=True, n_most_variable=3, standardise=True,
                                          min_nonzero_share=None, blanked=False)
    assert transform_steps(dict(n_most_variable=2000)) == ["2,000 most variable"]
    # images lose their shape once pixels are dropped; all of them kept, nothing changes
    faces = load_dataset("ORL").subset_samples(range(20))
    assert transform_values(faces, n_most_variable=100).image_shape is None
    np.testing.assert_array_equal(transform_values(faces, n_most_variable=faces.n_features).X, faces.X)
    with pytest.raises(InputError, match="most variable features .* needs non-negative values.*keep every feature"):
        transform_values(transform_values(data, standardise=True), n_most_variable=3)


def test_z_scores_change_the_scale_readers_and_not_the_fisher_score():
    """What the docs say z-scores change: on the wine table (measurements from 0.13 to 1,680) the
    variance ranking, the Laplacian score and SPEC rank anew; the Fisher score, a ratio within
    each feature, ranks as before."""
    wine = load_dataset("wine")
    scaled = transform_values(wine, standardise=True)
    for method in ("variance", "laplacian", "spec"):
        assert list(rank_features(method, wine.X)[:5]) != list(rank_features(method, scaled.X)[:5]), method
    assert list(rank_features("fisher", wine.X, wine.labels)) == list(rank_features("fisher", scaled.X, wine.labels))


def test_equal_totals_come_first_and_the_dispersion_is_of_the_scaled_counts():
    """Each sample scaled to the median total (scanpy's normalize_total default); a sample of
    zeros stays zero; then log1p, and the most variable features of the scaled counts."""
    data = counts(2)
    X = data.X.copy()
    X[3] = 0.0
    data = Dataset(X, feature_names_=data.feature_names_, sample_names_=data.sample_names_, name="counts.csv")
    scaled = transform_values(data, normalise_total=True)
    totals = X.sum(axis=1)
    target = np.median(totals[totals > 0])
    np.testing.assert_allclose(np.delete(scaled.X.sum(axis=1), 3), target)
    assert not scaled.X[3].any() and scaled.name == "counts.csv (totals normalised)"
    every = transform_values(data, normalise_total=True, log1p=True, n_most_variable=3)
    chosen = np.sort(dispersion_ranking(scaled.X)[:3])
    np.testing.assert_allclose(every.X, np.log1p(scaled.X[:, chosen]))
    assert every.name == "counts.csv (totals normalised, log1p, 3 most variable)"
    with pytest.raises(InputError, match="Equal totals needs non-negative values.*leave them off"):
        transform_values(transform_values(data, standardise=True), normalise_total=True, log1p=True)


def test_near_empty_features_are_dropped_from_a_table_and_blanked_in_images():
    """Issue 59: a border pixel inked in 2 of 535 digits ranked above the strokes. The guard is
    scanpy's filter_genes(min_cells=...): counted here by hand."""
    from core.data.transforms import nonzero_share

    rng = np.random.default_rng(0)
    X = rng.random((50, 6)) + 0.1
    X[:, 2] = 0.0
    X[[3, 40], 2] = 5.0  # non-zero in 2 of 50 samples: 4 %
    X[:10, 4] = 0.0  # non-zero in 40 of 50
    table = Dataset(X, name="t")
    assert np.allclose(nonzero_share(X), [1, 1, 0.04, 1, 0.8, 1])
    dropped = transform_values(table, min_nonzero_share=0.05)
    assert dropped.feature_names == tuple(n for j, n in enumerate(table.feature_names) if j != 2)
    assert np.array_equal(dropped.X, np.delete(X, 2, axis=1))
    assert "features non-zero in < 0.05 of samples dropped" in dropped.name
    images = Dataset(X, name="im", image_shape=(2, 3))
    blanked = transform_values(images, min_nonzero_share=0.05)
    assert blanked.image_shape == (2, 3) and np.array_equal(blanked.X[:, 2], np.zeros(50))
    assert np.array_equal(np.delete(blanked.X, 2, axis=1), np.delete(X, 2, axis=1))
    assert "blanked" in blanked.name
    with pytest.raises(InputError, match="Every feature is non-zero in fewer than"):
        transform_values(Dataset(np.zeros((5, 3)) + np.eye(5, 3), name="z"), min_nonzero_share=0.5)
    with pytest.raises(InputError, match="min_nonzero_share must be a share"):
        transform_values(table, min_nonzero_share=1.5)
    # with the most variable features: the count applies to what is left
    both = transform_values(table, min_nonzero_share=0.05, n_most_variable=5)
    assert both.n_features == 5
    with pytest.raises(InputError, match="5 features are left"):
        transform_values(table, min_nonzero_share=0.05, n_most_variable=6)
