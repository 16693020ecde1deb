"""SDR and SDR-SI (Globerson & Tishby 2003; Globerson, Chechik & Tishby 2003) against their own
defining equations: the maximum-entropy fit reproduces the measurements and the marginals, the
Pythagorean identity gives the information in the measurements, an exact log-bilinear table is
recovered, the result is a local maximum of (3), and side data turn the reduction away from the
structure they share with the main data."""

import numpy as np
import pytest
from scipy import special

from core import InputError
from core.selection.projections import make_projection
from core.selection.sdr import (REBALANCE_CONDITION, _balanced, _condition, _lbfgs_fit, _maximum_entropy_fit,
                               _fit_terms, _newton_fit, _Table, conditional_table, mutual_information, sdr_si)


def _model(phi, psi, b):
    return special.softmax(psi @ phi.T + b, axis=1)


def _information_in_measurements(phi, X):
    table = _Table(X, "X")
    return table.information - _maximum_entropy_fit(phi, table)[0]


def test_the_divergence_and_its_gradients_equal_the_definition_and_central_differences():
    """``_fit_terms`` (computed in place, the rows' normalisation folded in): KL[P || p~] as its
    definition sums it over every cell, and each gradient entry as a central difference of it."""
    rng = np.random.default_rng(3)
    table = _Table(rng.random((5, 7)) + 0.01, "X")
    phi, psi, b = rng.normal(size=(7, 2)), rng.normal(size=(5, 2)), rng.normal(size=7)
    joint = table.weights[:, None] * table.conditional
    direct = float(np.sum(joint * np.log(table.conditional / _model(phi, psi, b))))
    kl, g_phi, g_psi, g_b = _fit_terms(phi, psi, b, table)
    assert kl == pytest.approx(direct, rel=1e-12)
    step = 1e-6
    for value, gradient, position in ((phi, g_phi, 0), (psi, g_psi, 1), (b, g_b, 2)):
        for index in np.ndindex(value.shape):
            arguments = [phi.copy(), psi.copy(), b.copy()]
            arguments[position][index] += step
            up = _fit_terms(*arguments, table)[0]
            arguments[position][index] -= 2 * step
            down = _fit_terms(*arguments, table)[0]
            assert gradient[index] == pytest.approx((up - down) / (2 * step), abs=1e-8)


def test_the__maximum_entropy_fit_matches_the_measurements_and_the_marginals():
    rng = np.random.default_rng(0)
    X = rng.random((12, 30)) ** 3
    phi = rng.standard_normal((30, 3))
    table = _Table(X, "X")
    kl, psi, b, converged = _maximum_entropy_fit(phi, table)
    assert converged
    weights, conditional = conditional_table(X)
    fitted = _model(phi, psi, b)
    # the constraints of the maximum-entropy problem: every sample's measurement <phi>, and P(j)
    assert np.allclose(fitted @ phi, conditional @ phi, atol=1e-7)
    assert np.allclose(weights @ fitted, weights @ conditional, atol=1e-9)
    # Pythagoras: I[P] - I[p~] = KL[P || p~] for the I-projection
    assert mutual_information(weights, conditional) - mutual_information(weights, fitted) == pytest.approx(kl, abs=1e-9)
    direct = float(weights @ special.xlogy(conditional, conditional / fitted).sum(axis=1))
    assert kl == pytest.approx(direct, abs=1e-12)


def test_an_exact_log_bilinear_table_is_recovered_in_its_dimension_and_not_below():
    rng = np.random.default_rng(1)
    phi, psi, b = rng.standard_normal((25, 2)), rng.standard_normal((40, 2)), rng.standard_normal(25)
    X = _model(phi, psi, b) * rng.uniform(1, 5, size=(40, 1))  # row totals are the sample weights
    exact = sdr_si(X, n_components=2, tol=1e-10, max_iter=2000)
    assert exact.converged
    assert exact.relevant_information == pytest.approx(exact.main_information, rel=1e-6)
    assert _information_in_measurements(phi, X) == pytest.approx(exact.main_information, rel=1e-6)
    one = sdr_si(X, n_components=1, tol=1e-10, max_iter=2000)
    assert one.relevant_information < 0.99 * exact.main_information


def test_the_information_in_the_measurements_grows_with_d_and_never_exceeds_the_table():
    rng = np.random.default_rng(2)
    X = rng.random((20, 15)) ** 4
    values = [sdr_si(X, n_components=d, tol=1e-9).relevant_information for d in (1, 2, 4)]
    assert 0 < values[0] <= values[1] + 1e-9 <= values[2] + 2e-9
    assert values[2] <= _Table(X, "X").information + 1e-12


def test_sdr_si_ends_at_a_local_maximum_of_its_objective_and_the_objective_ignores_the_gauge():
    rng = np.random.default_rng(3)
    X, side = rng.random((15, 20)) ** 3, rng.random((8, 20)) ** 3
    result = sdr_si(X, side, n_components=2, gamma=0.7, tol=1e-10, max_iter=3000)
    assert result.converged and not result.stopped
    assert np.all(np.diff(result.history) > -1e-9)  # L-BFGS on -L: L never falls

    def objective(phi):
        return _information_in_measurements(phi, X) - 0.7 * _information_in_measurements(phi, side)

    phi = result.feature_directions
    at_end = objective(phi)
    assert at_end == pytest.approx(result.objective, abs=1e-8)
    assert result.relevant_information - 0.7 * result.irrelevant_information == pytest.approx(result.objective)
    scale = np.abs(phi).max()
    for _ in range(6):
        assert objective(phi + 1e-3 * scale * rng.standard_normal(phi.shape)) <= at_end + 1e-9
    # (1) depends on phi only through its span: phi M with M invertible gives the same information
    assert objective(phi @ np.array([[2.0, 1.0], [0.5, -1.0]])) == pytest.approx(at_end, abs=1e-8)


def _faces_with_lighting(n, rng, with_identity=True):
    """40 'pixels': identity moves mass between pixels 0-9 and 10-19 (weakly), lighting between
    20-29 and 30-39 (strongly); side samples have lighting only."""
    identity = rng.choice([-1.0, 1.0], n) if with_identity else np.zeros(n)
    lighting = rng.standard_normal(n)
    X = np.ones((n, 40))
    X[:, 0:10] *= np.exp(0.3 * identity)[:, None]
    X[:, 10:20] *= np.exp(-0.3 * identity)[:, None]
    X[:, 20:30] *= np.exp(0.8 * lighting)[:, None]
    X[:, 30:40] *= np.exp(-0.8 * lighting)[:, None]
    return X * np.exp(0.05 * rng.standard_normal(X.shape)), identity, lighting


def test_side_data_turn_the_reduction_from_the_shared_structure_to_the_relevant_one():
    rng = np.random.default_rng(4)
    X, identity, lighting = _faces_with_lighting(80, rng)
    side, _, _ = _faces_with_lighting(40, rng, with_identity=False)
    test, test_identity, test_lighting = _faces_with_lighting(60, rng)

    def correlations(result):
        coordinate = result.transform(test)[:, 0]
        return abs(np.corrcoef(coordinate, test_identity)[0, 1]), abs(np.corrcoef(coordinate, test_lighting)[0, 1])

    plain = sdr_si(X, n_components=1)
    with_side = sdr_si(X, side, n_components=1, gamma=2.0)
    assert plain.converged and with_side.converged
    plain_identity, plain_lighting = correlations(plain)
    side_identity, side_lighting = correlations(with_side)
    assert plain_lighting > 0.9 and plain_identity < 0.3  # SDR keeps the strongest structure
    assert side_identity > 0.95 and side_lighting < 0.25  # SDR-SI the structure the side data lack
    assert with_side.irrelevant_information < 0.01 * plain.relevant_information
    # gamma trades the two informations: the side's falls as its weight grows
    irrelevant = [sdr_si(X, side, n_components=1, gamma=g).irrelevant_information for g in (0.25, 0.5, 1.0, 2.0, 4.0)]
    assert np.all(np.diff(irrelevant) < 0)


def test_gamma_zero_is_plain_sdr_and_the_run_is_deterministic():
    rng = np.random.default_rng(5)
    X, side = rng.random((10, 12)), rng.random((6, 12))
    plain = sdr_si(X, n_components=2)
    again = sdr_si(X, side, n_components=2, gamma=0.0)
    assert np.array_equal(plain.feature_directions, again.feature_directions)
    assert np.array_equal(sdr_si(X, side, 2).feature_directions, sdr_si(X, side, 2).feature_directions)


def test_a_progress_callback_sees_every_iteration_and_can_stop_the_run():
    rng = np.random.default_rng(6)
    X, side = rng.random((10, 12)) ** 2, rng.random((6, 12)) ** 2
    seen = []
    result = sdr_si(X, side, 2, progress=lambda report: seen.append((report.done, report.objective)) or len(seen) < 3)
    assert result.stopped and not result.converged and result.n_iter == 3
    assert [i for i, _ in seen] == [1, 2, 3] and list(result.history) == [o for _, o in seen]
    full = sdr_si(X, side, 2)
    assert full.n_iter > 3 and full.history[:3] == result.history


def test_the_projection_reports_what_it_fitted_and_warns_when_it_did_not_converge():
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(7)
    X, side = rng.random((20, 30)) ** 3, rng.random((8, 30)) ** 3
    model = make_projection("sdr_si", 3, gamma=0.5).fit(X, side=side)
    assert model.transform(X).shape == (20, 3) and model.result_.converged
    assert np.allclose(model.transform(X[:4]), conditional_table(X[:4])[1] @ model.result_.feature_directions)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        make_projection("sdr_si", 3, max_iter=2).fit(X, side=side)


@pytest.mark.parametrize("bad, message", [
    (lambda X, S: sdr_si(np.where(np.arange(12) == 4, -1.0, X), S), "non-negative values; X has -1 at sample 0, feature 4"),
    (lambda X, S: sdr_si(np.vstack([X, np.zeros(12)]), S), "Sample 10 of X is all zeros"),
    (lambda X, S: sdr_si(X, S[:, :5]), "side data have 5 features; X has 12"),
    (lambda X, S: sdr_si(X, S, n_components=12), "below the number of features"),
    (lambda X, S: sdr_si(X, S, gamma=-1.0), "gamma"),
    (lambda X, S: sdr_si(X, S, inner="bfgs"), "inner must be one of auto, newton, lbfgs"),
    (lambda X, S: make_projection("sdr_si", 2).fit(X), "needs side data"),
    (lambda X, S: make_projection("sdr_si", 2).transform(X), "Call fit"),
])
def test_bad_input_is_refused_with_what_to_do(bad, message):
    rng = np.random.default_rng(8)
    X, S = rng.random((10, 12)) + 0.01, rng.random((5, 12)) + 0.01
    with pytest.raises(InputError, match=message):
        bad(X, S)


def _sparse_counts(rate, seed=3):
    """Poisson counts in 3 classes (366 x 34), most cells 0 at low rates; class 0 is the side."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, 366)
    counts = rng.poisson(rate * rng.gamma(0.5, 2, (3, 34))[labels]).astype(float)
    counts[counts.sum(axis=1) == 0, 0] = 1
    return counts[labels != 0], counts[labels == 0]


@pytest.mark.parametrize("table", ["dense", "sparse counts"])
def test_newton_and_lbfgs_reach_the_same_maximum_entropy_fit(table):
    """The inner minimum of (2) by Newton's method equals L-BFGS's (the divergence to 1e-10), and
    satisfies the constraints of the maximum-entropy problem (the measurements and the feature
    marginal) to 1e-9 -- on sparse counts, where L-BFGS needs hundreds of steps, too."""
    rng = np.random.default_rng(4)
    X = rng.random((30, 20)) ** 3 if table == "dense" else _sparse_counts(0.5)[1]
    phi = rng.standard_normal((X.shape[1], 2))
    data = _Table(X, "X")
    newton, lbfgs = _newton_fit(phi, data), _lbfgs_fit(phi, data)
    assert newton[3] and lbfgs[3]
    assert newton[0] == pytest.approx(lbfgs[0], abs=1e-10)
    weights, conditional = conditional_table(X)
    fitted = _model(phi, newton[1], newton[2])
    assert np.allclose(weights[:, None] * fitted @ phi, weights[:, None] * conditional @ phi, rtol=0, atol=1e-9)
    assert np.allclose(weights @ fitted, weights @ conditional, rtol=0, atol=1e-9)
    # a warm start far from the answer (another phi's) still ends at the same minimum
    far = _newton_fit(100 * rng.standard_normal(phi.shape), data)
    assert _newton_fit(phi, data, far[1], far[2])[0] == pytest.approx(newton[0], abs=1e-10)


def test_on_sparse_counts_the_newton_fit_converges_where_lbfgs_stops_short():
    """Issue 35: on a sparse count table (0.5 per cell on average) the L-BFGS inner minima stop
    short and the fit reports not converged (its L is then not the maximum-entropy value); with
    Newton's the same fit converges, within the information bounds."""
    main, side = _sparse_counts(0.5, seed=9)
    with pytest.warns(Warning, match="did not converge"):
        before = sdr_si(main, side, 2, gamma=2.0, inner="lbfgs")
    after = sdr_si(main, side, 2, gamma=2.0)
    assert not before.converged and after.converged
    assert 0 < after.relevant_information <= after.main_information
    assert 0 <= after.irrelevant_information <= after.side_information
    assert after.objective == pytest.approx(after.relevant_information - 2.0 * after.irrelevant_information)


def test_a_feature_no_main_sample_has_gets_no_direction_and_the_rest_still_reduce():
    """A column that is zero in every main sample (a constant column shifted to zero, a gene no
    main cell expresses): its phi is 0, and the other features are reduced as without it. Its
    start used to divide by the root of P(j) = 0 (floored at 1e-300), give phi_j ~ 1e133, and
    end at I_M = 0 reported as converged."""
    rng = np.random.default_rng(6)
    main, side = rng.random((40, 9)) ** 2, rng.random((15, 9)) ** 2
    with_empty = sdr_si(np.column_stack([main[:, :4], np.zeros(40), main[:, 4:]]),
                        np.column_stack([side[:, :4], np.zeros(15), side[:, 4:]]), 2, gamma=1.0)
    without = sdr_si(main, side, 2, gamma=1.0)
    assert with_empty.converged and np.abs(with_empty.feature_directions[4]).max() < 1e-12
    assert with_empty.relevant_information > 0.5 * without.relevant_information > 0
    assert with_empty.objective == pytest.approx(without.objective, rel=1e-3)


def test_restating_the_model_keeps_it_and_makes_phi_centred_and_orthonormal():
    rng = np.random.default_rng(5)
    marginal = rng.dirichlet(np.ones(12))
    phi = rng.standard_normal((12, 3)) @ np.array([[1.0, 1.0, 0.0], [0.0, 1e-3, 0.0], [0.0, 0.0, 5.0]]) + 2.0
    psi, b = rng.standard_normal((7, 3)), rng.standard_normal(12)
    restated, to_new = _balanced(phi, marginal)
    assert np.allclose(restated.T @ (marginal[:, None] * restated), np.eye(3), atol=1e-10)
    assert np.allclose(marginal @ restated, 0.0, atol=1e-12)
    assert np.allclose(_model(restated, psi @ to_new, b), _model(phi, psi, b), rtol=0, atol=1e-12)
    assert _condition(phi, marginal) > 1e3 and _condition(restated, marginal) == pytest.approx(1.0)
    dependent = np.column_stack([phi[:, 0], 2.0 * phi[:, 0] + 1.0, phi[:, 2]])  # the second is the first
    assert _balanced(dependent, marginal)[1] is None and _condition(dependent, marginal) > 1e6


def test_on_a_uci_wine_turn_phi_stays_conditioned_and_the_objective_is_the_maximum_entropy_value():
    """The UCI table's wine turn with cultivar 1 as the side data, d = 4: L-BFGS used to drift
    along the model's freedom (phi M, psi M^-T) until phi's condition was 1e8; the side minima
    then stopped at Newton's 200 steps at 1.8-3.5 times their minimum, counted as converged, and
    the run ended 'converged' after 5 iterations with its objective 2.3 times the true value. Now phi stays conditioned and
    the objective equals the maximum-entropy values recomputed on an orthonormal basis of phi."""
    from core.data.bundled import load_dataset

    wine = load_dataset("wine")
    is_side = wine.labels == wine.classes[1]
    main, side = wine.X[~is_side], wine.X[is_side]
    result = sdr_si(main, side, n_components=4, gamma=2.0)
    phi = result.feature_directions
    marginal = _Table(main, "X").marginal
    assert result.converged and _condition(phi, marginal) <= REBALANCE_CONDITION
    basis = np.linalg.qr(phi - phi.mean(axis=0))[0]  # the same span, independently conditioned
    recomputed = _information_in_measurements(basis, main) - 2.0 * _information_in_measurements(basis, side)
    assert result.objective == pytest.approx(recomputed, abs=1e-9)


def test_a_start_with_fewer_directions_than_asked_for_converges_without_restarts():
    """3 main and 2 side samples give the start at most 5 directions: 3 of the 8 columns of phi
    stay zero, so phi cannot be restated. Restarting L-BFGS from the same point after every
    iteration (as a restatement by the identity did) ran all 500 iterations unconverged."""
    rng = np.random.default_rng(7)
    X, side = rng.random((3, 20)) ** 3, rng.random((2, 20)) ** 3
    result = sdr_si(X, side, n_components=8, gamma=0.5)
    assert result.converged and result.n_iter < 200
    assert np.count_nonzero(np.abs(result.feature_directions).max(axis=0)) == 5
