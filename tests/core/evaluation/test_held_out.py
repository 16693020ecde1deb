"""Held-out evaluation: features chosen on the training folds, judged on the held-out fold."""

import numpy as np
import pytest

from core import InputError
from core.evaluation.compare import held_out_curves
from core.selection.methods import rank_features


def fisher(X, y):
    return rank_features("fisher", X, y)


def noise_with_shuffled_labels(seed=0, n_samples=120, n_features=2000):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n_samples, n_features)), rng.permutation(np.repeat([0, 1], n_samples // 2))


@pytest.mark.parametrize("method", ["fisher", "relieff", "mrmr", "Q-alpha (supervised)"])
def test_on_shuffled_labels_held_out_is_at_chance_and_in_sample_is_not(method):
    """Pure noise (120 samples x 2,000 features) with shuffled labels: chosen within the folds, the
    top 10 and 20 features classify the held-out samples at chance (0.5, two balanced classes)
    within twice the spread over folds; chosen once with every label (selection bias), the same
    judgement scores more than 0.1 above that."""
    X, y = noise_with_shuffled_labels(0)

    def rank(X_train, y_train):
        return rank_features(method, X_train, y_train)

    held_out = held_out_curves(X, y, rank, [10, 20], n_splits=5)
    in_sample = held_out_curves(X, y, rank, [10, 20], n_splits=5, select_within_folds=False)
    for mean, spread in zip(held_out["knn"], held_out["knn_sd"]):
        assert abs(mean - 0.5) <= 2 * spread, (mean, spread)
    assert np.mean(in_sample["knn"]) - np.mean(held_out["knn"]) > 0.1, (in_sample["knn"], held_out["knn"])


def test_held_out_equals_a_direct_computation_fold_by_fold():
    """One fold's numbers recomputed by hand: the ranking on the training fold, z-scores with the
    training fold's statistics, 1-NN by explicit distances."""
    from sklearn.model_selection import StratifiedKFold

    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], 20)
    X = rng.standard_normal((60, 30))
    X[:, :3] += 3 * y[:, None]  # three informative features
    curves = held_out_curves(X, y, fisher, [1, 3, 30], n_splits=4, random_state=7, n_runs=1)
    knn = np.zeros((4, 3))
    for fold, (train, test) in enumerate(StratifiedKFold(4, shuffle=True, random_state=7).split(X, y)):
        ranking = fisher(X[train], y[train])
        mean, sd = X[train].mean(axis=0), X[train].std(axis=0)
        for column, size in enumerate([1, 3, 30]):
            top = ranking[:size]
            A, B = ((X[train] - mean) / sd)[:, top], ((X[test] - mean) / sd)[:, top]
            nearest = np.argmin(((B[:, None, :] - A[None, :, :]) ** 2).sum(axis=2), axis=1)
            knn[fold, column] = np.mean(y[train][nearest] == y[test])
    assert np.allclose(curves["knn"], knn.mean(axis=0)) and np.allclose(curves["knn_sd"], knn.std(axis=0))
    assert curves["size"] == [1, 3, 30] and curves["n_splits"] == 4
    assert curves["knn"][1] > 0.8 and 0 <= min(curves["accuracy"]) and max(curves["nmi"]) <= 1


def test_each_ranking_sees_the_training_fold_only():
    """The ranker is handed the rows of one training fold at a time (never a held-out sample),
    with their labels; the folds' held-out parts cover every sample once."""
    X, y = noise_with_shuffled_labels(1, 60, 20)
    X[:, 0] = np.arange(60)  # a column that names each row
    seen = []

    def record(X_train, y_train):
        seen.append((X_train[:, 0].astype(int), y_train))
        return np.argsort(-X_train.var(axis=0))

    held_out_curves(X, y, record, [5], n_splits=3)
    assert len(seen) == 3
    held_out = [np.setdiff1d(np.arange(60), rows) for rows, _ in seen]
    assert sorted(np.concatenate(held_out).tolist()) == list(range(60))
    assert all(np.array_equal(labels, y[rows]) for rows, labels in seen)


def test_refuses_folds_the_classes_cannot_fill():
    X, y = noise_with_shuffled_labels(0, 12, 5)
    y[:] = 0
    y[:3] = 1
    with pytest.raises(InputError, match="smallest class has 3"):
        held_out_curves(X, y, fisher, [2], n_splits=5)
    with pytest.raises(InputError, match="sizes"):
        held_out_curves(X, y, fisher, [6], n_splits=3)
