"""Modules of correlated features in a selection (core.selection.modules): three planted groups
found as three, named in the selection's order, against a direct computation of the silhouette;
one group said as one; the interleaved ordering."""

import numpy as np
import pytest

from core.errors import InputError
from core.selection.modules import across_modules, selection_modules


def planted(seed=0, n=200):
    """Nine features in three groups of three (each a shared signal plus noise), and two of noise."""
    rng = np.random.default_rng(seed)
    signals = rng.normal(size=(n, 3))
    X = np.repeat(signals, 3, axis=1) + 0.3 * rng.normal(size=(n, 9))
    return np.hstack([X, rng.normal(size=(n, 2))])


def test_three_planted_groups_are_three_modules_numbered_in_the_selections_order():
    X = planted()
    selected = np.array([3, 4, 0, 6, 5, 1, 7, 2, 8])  # group 1 first, then 0, then 2
    modules = selection_modules(X, selected)
    assert modules.n_modules == 3
    groups = {m: set(modules.members(m)) for m in range(3)}
    assert groups == {0: {3, 4, 5}, 1: {0, 1, 2}, 2: {6, 7, 8}}
    # the silhouette of the chosen grouping, from its definition
    Z = (X[:, selected] - X[:, selected].mean(axis=0)) / X[:, selected].std(axis=0)
    D = 1 - np.abs(Z.T @ Z / len(Z))
    labels = modules.module
    a = np.array([D[i, (labels == labels[i]) & (np.arange(9) != i)].mean() for i in range(9)])
    b = np.array([min(D[i, labels == other].mean() for other in set(labels) - {labels[i]}) for i in range(9)])
    assert modules.silhouette == pytest.approx(np.mean((b - a) / np.maximum(a, b)), rel=1e-9)
    summary = modules.summary([f"f{j}" for j in range(11)], top_k=4)
    assert [row["named"] for row in summary] == [["f3", "f4", "f5"], ["f0", "f1", "f2"], ["f6", "f7", "f8"]]
    assert [row["in_top"] for row in summary] == [2, 1, 1] and [row["first_rank"] for row in summary] == [1, 3, 4]
    assert list(across_modules(modules)) == [3, 0, 6, 4, 1, 7, 5, 2, 8]


def test_one_correlated_group_is_one_module_and_bad_input_is_refused():
    rng = np.random.default_rng(1)
    signal = rng.normal(size=(150, 1))
    X = signal + 0.2 * rng.normal(size=(150, 6))
    modules = selection_modules(X, np.arange(6))
    assert modules.n_modules == 1 and np.isnan(modules.silhouette)
    with pytest.raises(InputError, match="column indices"):
        selection_modules(X, [0, 9])
    with pytest.raises(InputError, match="repeat"):
        selection_modules(X, [0, 0, 1])


def test_a_ranking_across_modules_interleaves_its_head_and_keeps_the_rest():
    """Issue 77 (3): the whole ranking with its first features taken across their modules (the
    order across_modules gives them), the others after them in the ranking's order; a permutation."""
    from core.selection.modules import ranking_across_modules
    from core.selection.methods import rank_features
    from core.selection.qalpha import q_alpha

    X = planted()
    ranking = np.array([3, 4, 0, 6, 5, 1, 7, 2, 8, 9, 10])
    reordered = ranking_across_modules(X, ranking, n_grouped=9)
    assert list(reordered) == [3, 0, 6, 4, 1, 7, 5, 2, 8, 9, 10]
    assert list(ranking_across_modules(X, ranking, n_grouped=2)) == list(ranking)  # too few to group
    whole = rank_features("Q-alpha (across modules)", X, n_clusters=3)
    assert sorted(whole) == list(range(11))
    plain = q_alpha(X, 3).ranking
    assert list(whole) == list(ranking_across_modules(X, plain))
