"""Side information named once and resolved in one place (issue 49): the Q-alpha page, the
Compare protocol and the rankers all get their main data, side data and pairs from
SideInformation, and the registry of methods says which of them read labels."""

import numpy as np
import pytest

from core import InputError, load_dataset
from core.selection.methods import METHODS, SPECTRAL_RANKERS, is_supervised, offered_methods
from core.selection.qalpha import pairs_from_labels
from core.selection.scorers import SCORERS
from core.selection.side import SIDE_KINDS, SideInformation


@pytest.fixture(scope="module")
def wine():
    return load_dataset("wine")


def test_each_kind_resolves_to_what_q_alpha_takes(wine):
    X, y = wine.X, wine.labels
    none = SideInformation().split(X, y)
    assert none[0] is X and none[2] is None and none[3] is None and not SideInformation().uses_labels
    main, labels, side, pairs = SideInformation("side classes", side_classes=[wine.classes[0]]).split(X, y)
    by_hand = y == wine.classes[0]
    np.testing.assert_array_equal(main, X[~by_hand])
    np.testing.assert_array_equal(side, X[by_hand])
    np.testing.assert_array_equal(labels, y[~by_hand])
    # a link's text names the class in the labels' own type
    text = SideInformation("side classes", side_classes=[str(wine.classes[0])]).split(X, y)
    np.testing.assert_array_equal(text[1], labels)
    main, labels, side, pairs = SideInformation("pairs", n_pairs=20).split(X, y, random_state=3)
    np.testing.assert_array_equal(pairs, pairs_from_labels(y, 20, random_state=3))
    assert main is X and side is None
    W = X[:5] * 2
    assert SideInformation("side data", side=W).split(X)[2] is W


def test_the_dataset_split_and_the_resolution_agree(wine):
    information = SideInformation("side classes", side_classes=list(wine.classes[1:]))
    main, side = wine.split_by_class(list(wine.classes[1:]))
    resolved = information.split(wine.X, wine.labels)
    np.testing.assert_array_equal(main.X, resolved[0])
    np.testing.assert_array_equal(side.X, resolved[2])


def test_refusals_say_what_to_do(wine):
    with pytest.raises(InputError, match="one of none"):
        SideInformation("classes")
    with pytest.raises(InputError, match="at least one side class"):
        SideInformation("side classes")
    with pytest.raises(InputError, match="at least one pair"):
        SideInformation("pairs", n_pairs=0)
    with pytest.raises(InputError, match="needs the side data"):
        SideInformation("side data")
    with pytest.raises(InputError, match="pass the labels"):
        SideInformation("pairs", n_pairs=3).split(wine.X)
    with pytest.raises(InputError, match="do not occur"):
        SideInformation("side classes", side_classes=[99]).split(wine.X, wine.labels)
    with pytest.raises(InputError, match="main data"):
        SideInformation("side classes", side_classes=list(wine.classes)).split(wine.X, wine.labels)
    with pytest.raises(InputError, match="at most one kind"):
        SideInformation.from_options(side=wine.X, n_pairs=3)
    assert set(SIDE_KINDS) == {"none", "side classes", "pairs", "side data"}


def test_the_registry_knows_who_reads_labels():
    assert set(METHODS) == set(SPECTRAL_RANKERS) | set(SCORERS)
    assert not is_supervised("Q-alpha") and is_supervised("Q-alpha (supervised)") and is_supervised("sparse LDA")
    assert is_supervised("Q-alpha", SideInformation("pairs", n_pairs=5))
    assert is_supervised("Q-alpha (across modules)", SideInformation("pairs", n_pairs=5))
    assert not is_supervised("Q-alpha (across modules)")
    assert not is_supervised("Q-alpha", SideInformation("side data", side=np.ones((2, 3))))
    for name, (info, _) in SCORERS.items():
        assert is_supervised(name) == info.supervised
    assert "sparse LDA" in offered_methods(2, True) and "sparse LDA" not in offered_methods(3, True)
    assert "dispersion" in offered_methods(3, True) and "dispersion" not in offered_methods(3, False)
    # without labels, only what reads none
    assert offered_methods(0, True) == [m for m in METHODS if not METHODS[m].supervised and not METHODS[m].two_classes]
    with pytest.raises(InputError, match="Unknown method"):
        is_supervised("lasso regression")


def test_sparse_pca_ranks_features_in_the_order_its_forward_search_adds_them_up_to_its_feature_limit():
    """Issue 59: Sparse LDA/PCA could not be chosen on Compare. Sparse PCA's ranking is the greedy
    forward search of [MWA07] Sec. 6, checked here by brute force: each step adds the feature whose
    addition gives the covariance restricted to the chosen set the largest leading eigenvalue."""
    from core.selection.methods import SPARSE_PCA_MAX_FEATURES, rank_features

    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 6)) @ rng.normal(size=(6, 6))
    C = np.cov(X, rowvar=False)
    chosen = []
    for _ in range(6):
        rest = [j for j in range(6) if j not in chosen]
        gains = [np.linalg.eigvalsh(C[np.ix_(chosen + [j], chosen + [j])])[-1] for j in rest]
        chosen.append(rest[int(np.argmax(gains))])
    assert list(rank_features("sparse PCA", X)) == chosen
    assert not is_supervised("sparse PCA")
    assert "sparse PCA" in offered_methods(0, True, SPARSE_PCA_MAX_FEATURES)
    assert "sparse PCA" not in offered_methods(3, True, SPARSE_PCA_MAX_FEATURES + 1)
