"""Q-alpha's Newton ascent (issue 75): the Hessian's products against second differences of the
criterion computed from its definition, the route that takes them, and what they report (their fixed
point against the alternation's run to 1e-12 is tested beside L-BFGS's, in test_qalpha_quasi_newton)."""

import numpy as np
import pytest

from core.matrix import data_matrix
from core.selection._qalpha import ascent
from core.selection._qalpha import problem as qa_problem
from core.selection._qalpha.problem import Problem
from core.selection.qalpha import q_alpha

from tests.core.selection.test_qalpha_convergence import problem
from tests.core.selection.test_qalpha_quasi_newton import criterion_by_hand, variant_problem


@pytest.mark.parametrize("signs", ["positive", "mixed"])
@pytest.mark.parametrize("variant", ["plain", "side", "pairs", "gap"])
def test_the_hessians_products_are_the_criterions_second_derivatives(variant, signs):
    """``d^T H d`` against the second difference of ``-theta`` computed from the explicit matrices,
    and ``H v`` against the difference of gradients along ``v``, at points of every sign."""
    X, side, _ = problem(7)
    k, lam = 3, 0.3
    problem_, criterion, options = variant_problem(variant, X, side, lam)
    evaluation = qa_problem.Evaluation(problem_, k, spectrum=True)
    rng = np.random.default_rng(2)
    x = 1.7 * (np.abs(rng.standard_normal(problem_.n)) + 0.1)
    if signs == "mixed":
        x[rng.choice(problem_.n, 6, replace=False)] *= -0.05
    direction, other = rng.standard_normal((2, problem_.n))

    def minus_theta(point):
        return -criterion_by_hand(X, point / np.linalg.norm(point), k, criterion=criterion, **options)

    step = 1e-4
    second = (minus_theta(x + step * direction) - 2 * minus_theta(x) + minus_theta(x - step * direction)) / step ** 2
    product = evaluation.hessian_times(x, direction)
    assert direction @ product == pytest.approx(second, rel=1e-4, abs=1e-6)
    step = 1e-6
    differenced = (evaluation.gradient(x + step * other) - evaluation.gradient(x - step * other)) / (2 * step)
    np.testing.assert_allclose(evaluation.hessian_times(x, other), differenced, rtol=0,
                               atol=1e-6 * np.abs(differenced).max())
    assert evaluation.hessian_products == 2


def test_newton_steps_are_taken_on_many_features_few_samples_and_formed_a_alpha_only(monkeypatch):
    """From NEWTON_FROM features and up to DENSE_EIGEN_LIMIT samples; never in the features' dual
    form or matrix-free, whose evaluations keep no eigenpairs of a formed A_alpha (shown with the
    feature bound lowered, where a dual and a matrix-free problem are small enough to make)."""
    rng = np.random.default_rng(0)

    def takes(shape, k=2, dtype=np.float64, criterion="sum"):
        features = data_matrix(rng.standard_normal(shape).astype(dtype)).normalised()
        return ascent.takes_newton_steps(Problem(features, criterion), k)

    assert takes((60, ascent.NEWTON_FROM))
    assert not takes((60, ascent.NEWTON_FROM - 1))
    assert not takes((qa_problem.DENSE_EIGEN_LIMIT + 1, ascent.NEWTON_FROM))  # no full spectrum there
    monkeypatch.setattr(ascent, "NEWTON_FROM", 1)
    assert takes((60, 80))
    assert not takes((60, 20))  # fewer features than samples: the dual form
    monkeypatch.setattr(qa_problem, "MATRIX_FREE_FROM", 50)
    assert not takes((60, 400))  # matrix-free from 50 samples here


def test_the_hessian_products_reported_are_those_made(monkeypatch):
    made = []
    original = qa_problem.Evaluation._sum_hessian_times

    def counting(self, u):
        made.append(1)
        return original(self, u)

    monkeypatch.setattr(qa_problem.Evaluation, "_sum_hessian_times", counting)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 2_500))
    X[25:, rng.choice(2_500, 25, replace=False)] += 1.0
    result = q_alpha(X, 2)
    assert result.converged and result.hessian_products == len(made) > 0
    assert "Newton" in result.acceleration


def test_newton_steps_take_fewer_iterations_than_quasi_newton_ones_on_planted_data(monkeypatch):
    """On 100 x 5,000 with 50 planted (k = 2): 40 iterations against L-BFGS's 50, the same weights
    within tol's reach and the same top 50."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 5_000))
    X[50:, rng.choice(5_000, 50, replace=False)] += 1.0
    newton = q_alpha(X, 2)
    monkeypatch.setattr(ascent, "NEWTON_FROM", np.inf)
    quasi = q_alpha(X, 2)
    assert newton.converged and quasi.converged and newton.hessian_products > 0 == quasi.hessian_products
    assert newton.n_iter < quasi.n_iter
    assert set(newton.top(50)) == set(quasi.top(50))
    np.testing.assert_allclose(newton.alpha, quasi.alpha, atol=1e-4)


def test_the_hessians_product_is_finite_where_two_leading_eigenvalues_are_equal():
    """Features ``u1, u2, (u1 + u2) / sqrt 2, (u1 - u2) / sqrt 2, u3`` (orthonormal ``u``, centred, of
    four samples) with weights 1, 1, 1, 1, 0.3: ``A_alpha``'s two leading eigenvalues are equal,
    which ``phi`` at k = 2 does not see (its leading subspace stands clear of the third), and the
    product is the difference of gradients along ``v``. A form dividing by ``lambda_1 - lambda_2``
    (0 or a rounding error here) gives inf, NaN or an error of the product's own size."""
    u = np.linalg.qr(np.column_stack([np.ones(4), np.eye(4)[:, :3]]))[0][:, 1:]  # orthogonal to 1
    features = np.column_stack([u[:, 0], u[:, 1], (u[:, 0] + u[:, 1]) / np.sqrt(2),
                                (u[:, 0] - u[:, 1]) / np.sqrt(2), u[:, 2]])
    problem_ = Problem(data_matrix(features).normalised(), "sum")
    evaluation = qa_problem.Evaluation(problem_, 2, spectrum=True)
    x = np.array([1.0, 1.0, 1.0, 1.0, 0.3])
    evaluation.at(x)
    assert evaluation.all_values[0] == pytest.approx(evaluation.all_values[1], rel=1e-14)
    v = np.array([0.3, -0.7, 0.5, -0.2, 0.4])
    step = 1e-6
    differenced = (evaluation.gradient(x + step * v) - evaluation.gradient(x - step * v)) / (2 * step)
    product = evaluation.hessian_times(x, v)
    assert np.all(np.isfinite(product))
    np.testing.assert_allclose(product, differenced, rtol=0, atol=1e-7)


@pytest.mark.parametrize("steps", ["Newton", "L-BFGS"])
def test_the_ascent_alone_reaches_a_tight_tol_without_stopping_on_its_own_criteria(steps, monkeypatch):
    """The ascent from the equal weights on planted 60 x 2,500 (theta 5.3, so SciPy's default
    gradient tolerance of 1e-5 is a residual of about 1e-6) to tol 1e-8: it ends only at tol or
    max_iter, not at SciPy's own gradient tolerance or evaluation budget (L-BFGS takes more than 20
    evaluations here). Below about 1e-8 the criterion's changes are below its rounding, and the
    alternation goes on from the ascent's last iterate (:func:`core.selection._qalpha.iterate.one_start`)."""
    from core.selection._spectral import IterationTrace

    monkeypatch.setattr(ascent, "NEWTON_FROM", 1 if steps == "Newton" else np.inf)
    rng = np.random.default_rng(4)
    X = rng.standard_normal((60, 2_500))
    X[30:, rng.choice(2_500, 25, replace=False)] += 1.0
    problem_ = Problem(data_matrix(X).normalised(), "sum")
    trace = IterationTrace()
    _, _, evaluations, products, _ = ascent.ascend(problem_, 2, problem_.equal_beta(), max_iter=500, tol=1e-8,
                                                   trace=trace, progress=None)
    assert trace.history[-1] < 10.0
    assert max(trace.residuals[-1]) <= 1e-8, (trace.n_iter, trace.residuals[-1])
    assert (products > 0) == (steps == "Newton")
    if steps == "L-BFGS":
        assert evaluations > 20


def test_eigenvalues_equal_across_the_kth_take_no_part_in_the_hessians_product():
    """Where ``lambda_k`` equals ``lambda_{k+1}`` exactly (Q not determined there; the ascent's gap
    diagnosis says so) the product stays finite: that pair's derivative of Q is left out."""
    X, _, _ = problem(3)
    evaluation = qa_problem.Evaluation(Problem(data_matrix(X).normalised(), "sum"), 1, spectrum=True)
    x = np.abs(np.random.default_rng(0).standard_normal(X.shape[1])) + 0.1
    evaluation.at(x)
    evaluation.all_values = evaluation.all_values.copy()
    evaluation.all_values[1] = evaluation.all_values[0]
    with np.errstate(all="raise"):
        product = evaluation.hessian_times(x, np.ones(X.shape[1]))
    assert np.all(np.isfinite(product))
