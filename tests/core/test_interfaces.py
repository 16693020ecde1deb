"""One convention for random_state, no parameter silently rewritten, wrong types named (issue 58,
points 7 and 12). Each test failed on the code before (e1e011a)."""

import warnings

import numpy as np
import pytest

from core.data.generators import weston_linear
from core.errors import InputError
from core.evaluation.metrics import kmeans_scores
from core.selection.automatic import choose_settings
from core.selection.qalpha import pairs_from_labels, q_alpha
from core.selection.selectors import QAlphaSelector
from core.validation import check_random_state, random_seed


def test_pairs_from_a_999_to_1_split_are_all_there_and_valid():
    labels = np.r_[np.zeros(999), 1]
    pairs = pairs_from_labels(labels, 50, random_state=0)
    assert pairs.shape == (50, 2) and len({tuple(p) for p in pairs}) == 50
    assert np.all(labels[pairs[:, 0]] != labels[pairs[:, 1]]) and np.all(pairs[:, 0] < pairs[:, 1])
    every = pairs_from_labels(labels, 999, random_state=1)
    assert len({tuple(p) for p in every}) == 999
    with pytest.raises(InputError, match="only 999 pairs"):
        pairs_from_labels(labels, 1000)


def test_pairs_are_uniform_over_the_pairs_with_different_labels():
    """Classes of 2, 3 and 5 samples: 6, 10 and 15 different-label pairs between them (31 in
    all); the pairs drawn fall between the classes in those proportions."""
    labels = np.array([0] * 2 + [1] * 3 + [2] * 5)
    counts = np.zeros(3)
    for seed in range(400):
        pair = pairs_from_labels(labels, 1, random_state=seed)[0]
        kinds = tuple(sorted(labels[pair]))
        counts[{(0, 1): 0, (0, 2): 1, (1, 2): 2}[kinds]] += 1
    expected = 400 * np.array([6, 10, 15]) / 31
    assert np.all(np.abs(counts - expected) <= 4 * np.sqrt(expected))


@pytest.mark.parametrize("value", [None, 3, np.int64(3), np.random.default_rng(0)])
def test_random_state_takes_none_an_integer_or_a_generator_everywhere(value):
    data = weston_linear(40, random_state=0)
    Z, labels = data.X[:, :6], data.labels
    accuracy, _ = kmeans_scores(Z, labels, n_runs=2, random_state=value)
    assert accuracy.shape == (2,)
    assert pairs_from_labels(labels, 5, random_state=value).shape == (5, 2)
    assert q_alpha(data.X, 2, init="random", random_state=value, max_iter=50).alpha.shape == (data.n_features,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chosen = choose_settings(data.X[:, :20], k=2, lam="auto", random_state=value)
    assert chosen.k == 2
    assert isinstance(check_random_state(value), np.random.Generator) and isinstance(random_seed(value), int)


@pytest.mark.parametrize("value", [1.5, "7", True, -1, np.random.RandomState(0)])
def test_a_random_state_of_another_kind_is_an_input_error_naming_it(value):
    data = weston_linear(40, random_state=0)
    for call in (lambda: kmeans_scores(data.X[:, :6], data.labels, random_state=value),
                 lambda: q_alpha(data.X, 2, random_state=value),
                 lambda: pairs_from_labels(data.labels, 3, random_state=value),
                 lambda: choose_settings(data.X[:, :20], k=2, lam="auto", random_state=value)):
        with pytest.raises(InputError, match="random_state"):
            call()


def test_the_same_integer_gives_the_same_result():
    data = weston_linear(40, random_state=0)
    assert np.array_equal(q_alpha(data.X, 2, init="random", random_state=5, max_iter=30).alpha,
                          q_alpha(data.X, 2, init="random", random_state=5, max_iter=30).alpha)
    first = kmeans_scores(data.X, data.labels, random_state=np.random.default_rng(9))
    second = kmeans_scores(data.X, data.labels, random_state=np.random.default_rng(9))
    assert np.array_equal(first[0], second[0])


def test_the_selector_refuses_a_supervised_k_that_q_alpha_refuses():
    data = weston_linear(40, random_state=0)
    with pytest.raises(InputError, match="number of classes minus one"):
        QAlphaSelector(k=3, supervised=True).fit(data.X, data.labels)
    assert QAlphaSelector(k=1, supervised=True).fit(data.X, data.labels).k_ == 1


def test_the_selector_says_when_it_uses_fewer_clusters_than_asked():
    X = weston_linear(6, random_state=0).X
    with pytest.warns(UserWarning, match="k = 5 was used"):
        selector = QAlphaSelector(k=8).fit(X)
    assert selector.k_ == 5 == selector.result_.k


def test_the_parameters_type_hands_every_setting_to_q_alpha():
    """QAlphaParameters.run is q_alpha with its settings: k, side data, pairs, λ and the seed each
    reach the solve (the app runs Q-alpha only through it)."""
    from core.selection.qalpha import QAlphaParameters

    rng = np.random.default_rng(1)
    X, side = rng.standard_normal((30, 50)), rng.standard_normal((12, 50))
    pairs = np.array([[0, 3], [4, 9], [10, 20]])
    settings = QAlphaParameters(k=3, lam=0.3, init="random", random_state=4, max_iter=300)
    for options in (dict(side=side), dict(pairs=pairs)):
        expected = q_alpha(X, 3, lam=0.3, init="random", random_state=4, max_iter=300, **options)
        assert np.array_equal(settings.run(X, **options).alpha, expected.alpha)
    other_seed = QAlphaParameters(k=3, lam=0.3, init="random", random_state=5, max_iter=300).run(X, side=side)
    assert not np.array_equal(other_seed.Q, settings.run(X, side=side).Q)


def test_refusals_name_what_was_wrong():
    from scipy import sparse

    X = np.random.default_rng(2).standard_normal((20, 30))
    for options, message in [(dict(tol=0.0), "tol must be greater than 0"), (dict(tol="1e-6"), "tol must be a number"),
                             (dict(side=X[:5], pairs=np.array([[0, 1]])), "either as a side data set or as pairs, not both"),
                             (dict(side=X[:1]), "side data need at least 2 samples")]:
        with pytest.raises(InputError, match=message):
            q_alpha(X, 2, **options)
    with pytest.raises(InputError, match="dense in-memory data only"):
        q_alpha(sparse.csr_matrix(X), 2, criterion="gap")
    with pytest.raises(InputError, match="supervised must be True or False"):
        from core.selection.qalpha import QAlphaParameters
        QAlphaParameters(supervised="yes")


def test_a_result_names_its_method_and_the_warning_its_residual():
    from sklearn.exceptions import ConvergenceWarning

    X = np.random.default_rng(3).standard_normal((25, 40))
    assert q_alpha(X, 2).method == "power-embedded"
    assert q_alpha(X, 2, method="basic").method == "basic"
    assert q_alpha(X, labels=np.arange(25) % 2).method == "supervised"
    with pytest.warns(ConvergenceWarning) as caught:
        result = q_alpha(X, 2, tol=1e-15, max_iter=4)
    assert f"residual {result.residual:.2e} against tol 1e-15" in str(caught[0].message)


def test_a_float32_run_below_its_precision_says_so_and_pairs_are_checked_too():
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 300))
    pairs = np.array([[0, 1], [2, 9], [5, 30]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        loose = q_alpha(X, 2, pairs=pairs, lam=0.5, dtype=np.float32, tol=1e-5, solver="lanczos")
    assert loose.converged and not any("working precision" in note for note in loose.warnings)
    # its residual, recomputed here in float64 with the pairs, is below tol
    from tests.core.selection.test_qalpha_convergence import dense_truth
    assert max(dense_truth(X, loose, pairs=pairs, lam=0.5)[:2]) <= 1e-5


@pytest.mark.parametrize("accelerate", ["always", False])
def test_a_float32_run_whose_float64_check_fails_goes_on_in_float64(monkeypatch, accelerate):
    """Were a float32 run to say it converged too early (here: its record is cut after two
    iterations and marked converged with residuals of 0), the check in float64 against the data
    finds the true residual, and the run goes on in float64 from there until it converges, with a
    note that says so. (Before, it stopped there unconverged and told the user to raise max_iter.)"""

    from core.selection._qalpha import ascent, iterate

    owner, name = (ascent, "run_ascent") if accelerate == "always" else (iterate, "alternate")
    real_run, calls = getattr(owner, name), []

    def says_converged_early(*args, **kwargs):
        calls.append(kwargs.get("trace"))
        if len(calls) > 1:  # the continuation in float64: the real thing
            return real_run(*args, **kwargs)
        run = real_run(*args, **dict(kwargs, max_iter=2))
        residuals = np.array(run["residuals"])
        residuals[-1] = 0.0
        return dict(run, converged=True, residuals=residuals, settled=True)  # settled: the ascent's own verdict

    monkeypatch.setattr(owner, name, says_converged_early)
    X = np.random.default_rng(5).standard_normal((30, 200))
    result = q_alpha(X, 2, dtype=np.float32, accelerate=accelerate)
    assert len(calls) == 2 and calls[1] is not None  # one continuation, from the float32 run's record
    assert result.converged and result.n_iter > 2 and result.residual <= 1e-6
    assert any("went on in float64 and converged" in note for note in result.warnings)
    from tests.core.selection.test_qalpha_convergence import dense_truth
    assert max(dense_truth(X, result)[:2]) <= 1e-6
