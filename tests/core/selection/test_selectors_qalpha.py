"""QAlphaSelector: the scikit-learn contract and agreement with q_alpha."""

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import check_estimator

from core.errors import InputError
from core.selection.qalpha import q_alpha
from core.selection.sparsity import sparsity_gap
from core.selection.selectors import QAlphaSelector
from core.data.generators import weston_linear


@pytest.mark.parametrize("selector", [QAlphaSelector(), QAlphaSelector(supervised=True)],
                         ids=["unsupervised", "supervised"])
def test_check_estimator(selector):
    # No expected failures: every scikit-learn check passes.
    check_estimator(selector)


def test_selector_matches_q_alpha_and_selects_weston_features():
    data = weston_linear(200, random_state=0)
    selector = QAlphaSelector(k=2).fit(data.X)
    result = q_alpha(data.X, 2)
    assert np.array_equal(selector.alpha_, result.alpha)
    assert selector.n_iter_ == result.n_iter
    assert selector.get_support().sum() == sparsity_gap(result.alpha)
    assert set(np.flatnonzero(selector.get_support())) == {0, 1, 2}
    assert selector.ranking_[result.ranking[0]] == 1
    assert selector.transform(data.X).shape == (200, 3)


@pytest.mark.parametrize("wanted, count", [(5, 5), (0.1, 20), ("auto", 3)])
def test_number_of_features(wanted, count):
    data = weston_linear(100, random_state=1)
    selector = QAlphaSelector(n_features_to_select=wanted).fit(data.X)
    assert selector.get_support().sum() == count


def test_in_a_pipeline_with_labels():
    data = weston_linear(200, random_state=2)
    model = make_pipeline(QAlphaSelector(supervised=True, n_features_to_select=6), LinearSVC())
    model.fit(data.X[:150], data.labels[:150])
    assert {0, 1, 2} <= set(np.flatnonzero(model[0].get_support()))
    # Features 0-2 carry the label in 70 % of the samples ([WS03] Sec. 5): about 0.85 is the ceiling
    # with them alone; six noise features give chance (0.5).
    assert model.score(data.X[150:], data.labels[150:]) >= 0.75


def test_side_data_through_fit():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 10))
    side = rng.standard_normal((20, 10))
    selector = QAlphaSelector(lam=0.1).fit(X, side=side)
    assert np.allclose(selector.alpha_, q_alpha(X, 2, side=side, lam=0.1).alpha)


def test_bad_parameters():
    X = np.random.default_rng(0).standard_normal((20, 5))
    with pytest.raises(InputError, match="n_features_to_select"):
        QAlphaSelector(n_features_to_select=-2).fit(X)
    with pytest.raises(InputError, match="labels y"):
        QAlphaSelector(supervised=True).fit(X)
