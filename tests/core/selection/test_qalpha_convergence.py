"""Q-alpha's convergence report against independent dense computations (issue 58, points 1-5):
converged means the returned iterate's residuals are below tol; what fails says so; the
eigenvalue, objective and history belong to the returned (alpha, Q)."""

import warnings

import numpy as np
import pytest
from scipy import linalg
from sklearn.exceptions import ConvergenceWarning

from core.data.generators import random_matrix, weston_linear
from core.matrix import sample_vectors
from core.selection import _spectral
from core.selection.kernel_qalpha import kernel_q_alpha
from core.selection.qalpha import pairs_from_labels, q_alpha


def dense_truth(X, result, *, side=None, pairs=None, lam=0.0, criterion="sum", supervised=False):
    """(alpha's eigen-residual, Q's subspace residual, leading eigenvalue of C(Q), alpha^T C alpha)
    at the returned (alpha, Q), from the explicit matrices; residuals relative to the true 2-norms."""
    centred = X - X.mean(axis=0)
    norms = np.linalg.norm(centred, axis=0)
    kept = np.flatnonzero(norms > 1e-12)
    Mt = centred[:, kept] / norms[kept]
    alpha, Q = result.alpha[kept], result.Q
    gram = Mt.T @ Mt
    P = Mt.T @ Q
    C = gram * (P @ P.T)
    if criterion == "gap":
        C = 2 * C - gram ** 2
    beta = alpha
    if side is not None:
        D = X.shape[0] * (side[:, kept] / norms[kept]).var(axis=0)
        s = 1 / np.sqrt(D + lam)
        C, beta = C * np.outer(s, s), alpha / s
    if pairs is not None:
        W = (Mt[pairs[:, 0]] * Mt[pairs[:, 1]]).T
        C = C - lam * W @ W.T
    beta = beta / np.linalg.norm(beta)
    theta = beta @ C @ beta
    spectrum = linalg.eigvalsh(C)
    alpha_residual = np.linalg.norm(C @ beta - theta * beta) / np.abs(spectrum).max()
    A = (Mt * alpha) @ Mt.T
    AQ = A @ Q
    Q_residual = 0.0 if supervised else np.linalg.norm(AQ - Q @ (Q.T @ AQ)) / np.abs(linalg.eigvalsh(A)).max()
    return alpha_residual, Q_residual, spectrum[-1], theta


def problem(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 60))
    labels = np.arange(40) % 3
    X[:, :8] += 2.0 * rng.standard_normal((3, 8))[labels]
    side = rng.standard_normal((20, 60))
    side[:, 8:14] += 3.0 * rng.standard_normal((2, 6))[np.arange(20) % 2]
    return X, side, labels


VARIANTS = [("power", "plain", "sum"), ("power", "side", "sum"), ("power", "labels", "sum"),
            ("lanczos", "plain", "sum"), ("lanczos", "side", "gap"), ("lanczos", "pairs", "sum"),
            ("lanczos", "labels", "sum"), ("dense", "plain", "gap"), ("dense", "side", "sum"),
            ("dense", "pairs", "gap")]


@pytest.mark.parametrize("solver, variant, criterion", VARIANTS)
@pytest.mark.parametrize("tol", [1e-6, 1e-9])
def test_converged_means_both_residuals_are_below_tol_and_the_numbers_are_the_returned_iterates(
        solver, variant, criterion, tol):
    X, side, labels = problem(1)
    options = dict(side=side if variant == "side" else None, lam=0.5,
                   pairs=pairs_from_labels(labels, 25, random_state=0) if variant == "pairs" else None)
    if variant == "labels":
        result = q_alpha(X, labels=labels, solver=solver, criterion=criterion, tol=tol, max_iter=5000)
    else:
        result = q_alpha(X, 2, solver=solver, criterion=criterion, tol=tol, max_iter=5000, **options)
    assert result.converged
    alpha_residual, Q_residual, leading, theta = dense_truth(
        X, result, side=options["side"], pairs=options["pairs"], lam=0.5, criterion=criterion,
        supervised=variant == "labels")
    assert max(alpha_residual, Q_residual) <= tol
    assert result.residual <= tol and result.residuals.shape == (result.n_iter, 2)
    # eigenvalue: the leading eigenvalue of C(Q) (the Rayleigh quotient's error is the residual squared)
    assert abs(result.eigenvalue - leading) <= 1e-8 * abs(leading)
    # objective and the last history entry: alpha^T C alpha of the pair returned
    assert abs(result.objective - theta) <= 1e-10 * abs(theta) and result.history[-1] == result.objective


def test_the_side_data_eigenvalue_under_the_power_solver_is_the_operators():
    X, side, _ = problem(2)
    values = {solver: q_alpha(X, 3, side=side, lam=0.1, solver=solver, tol=1e-10, max_iter=5000)
              for solver in ("power", "lanczos", "dense")}
    for result in values.values():
        assert result.converged
        assert np.isclose(result.eigenvalue, dense_truth(X, result, side=side, lam=0.1)[2], rtol=1e-9)
    assert np.allclose(values["power"].alpha, values["dense"].alpha, atol=1e-7)


def _failing_eigsh(op, *args, **kwargs):
    from scipy.sparse.linalg import ArpackNoConvergence

    n = op.shape[0]
    raise ArpackNoConvergence("ARPACK error -1: No convergence", np.zeros(1), np.ones((n, 1)) / np.sqrt(n))


@pytest.mark.parametrize("supervised", [False, True])
def test_an_inner_solver_that_fails_makes_the_run_unconverged_and_says_what_failed(monkeypatch, supervised):
    X, _, labels = problem(3)
    monkeypatch.setattr(_spectral, "eigsh", _failing_eigsh)
    with pytest.warns(ConvergenceWarning, match="ARPACK"):
        if supervised:
            result = q_alpha(X, labels=labels, solver="lanczos")
        else:
            # the Lanczos solves of step 2 belong to the alternation (the ascent solves no eigenproblem of G)
            result = q_alpha(X, 2, solver="lanczos", max_iter=20, accelerate=False)
    assert not result.converged
    assert any("inner eigensolver failed" in note and "ARPACK" in note for note in result.warnings)


def test_kernel_inner_solver_failure_is_reported(monkeypatch):
    X, _, _ = problem(4)
    monkeypatch.setattr(_spectral, "eigsh", _failing_eigsh)
    monkeypatch.setattr("core.selection.kernel_qalpha.AUTO_DENSE_LIMIT", 10)
    with pytest.warns(ConvergenceWarning, match="ARPACK"):
        result = kernel_q_alpha(X, 2, kernel="rbf", max_iter=20)
    assert not result.converged


def test_a_step_below_tol_is_not_convergence():
    """The old test stopped when alpha moved by less than tol; on slowly converging data that was
    31 x tol from where the same solver settles. Now, where the run says converged, its
    residuals (recomputed densely) are below tol; where a cap stops it first, it says not converged."""
    X = random_matrix(50, 200, random_state=0).X
    # the alternation's own steps (the default's handover depends on max_iter)
    result = q_alpha(X, 2, solver="power", tol=1e-6, max_iter=5000, accelerate=False)
    assert result.converged and max(dense_truth(X, result)[:2]) <= 1e-6
    with pytest.warns(ConvergenceWarning, match="residual"):
        capped = q_alpha(X, 2, solver="power", tol=1e-6, max_iter=result.n_iter - 1, accelerate=False)
    assert not capped.converged and max(dense_truth(X, capped)[:2]) > 1e-6 * 0.1


def test_float32_convergence_is_checked_against_the_data_in_float64():
    X, side, _ = problem(5)
    loose = q_alpha(X, 2, side=side, lam=0.5, dtype=np.float32, tol=1e-5)
    assert loose.converged and max(dense_truth(X, loose, side=side, lam=0.5)[:2]) <= 1e-5
    # at 1e-12 the float32 data's rounding shows: the check in float64 fails, and the run goes on in float64
    tight = q_alpha(X, 2, side=side, lam=0.5, dtype=np.float32, tol=1e-12, max_iter=300)
    note = next(note for note in tight.warnings if "went on in float64" in note)
    assert note.startswith("In float32 the residuals fell below tol = 1e-12") and "but against the data in float64" in note
    assert tight.converged and max(dense_truth(X, tight, side=side, lam=0.5)[:2]) <= 1e-12


def test_above_the_gram_limit_the_uniform_start_is_deterministic_without_a_seed(monkeypatch):
    """The subspace iteration starts from a fixed matrix: init='uniform' needs no random_state."""
    monkeypatch.setattr(sample_vectors, "GRAM_LIMIT", 20)
    X = weston_linear(60, random_state=1).X
    first = q_alpha(X, 2, random_state=None)
    np.random.seed(7)
    second = q_alpha(X, 2, random_state=None)
    assert np.array_equal(first.alpha, second.alpha) and first.converged
    assert max(dense_truth(X, first)[:2]) <= 1e-6


@pytest.mark.parametrize("k", [2, 4])
def test_the_few_pass_uniform_start_reaches_the_weights_of_the_exact_start(monkeypatch, k):
    """Beyond the Gram limit the uniform start stops after START_PASSES passes: with k = 4 on
    data of 3 group directions its last vector lies in the noise's bulk and would not reach
    START_RTOL in 100 passes. The run from it ends at the weights the run from the exact
    eigenvectors of the explicit Gram matrix ends at, the 30 planted features on top."""
    from core.selection._qalpha import start as qa_start

    rng = np.random.default_rng(3)
    groups = rng.integers(0, 4, 600)
    X = rng.standard_normal((600, 150))
    planted = np.arange(30).reshape(3, 10) * 4 + 1
    for group in range(3):
        X[np.ix_(np.flatnonzero(groups == group), planted[group])] += 1.5
    # the alternation alone both times: the start is what differs (beyond the limit the ascent does not run)
    exact = q_alpha(X, k, tol=1e-10, max_iter=2000, accelerate=False)
    monkeypatch.setattr(sample_vectors, "GRAM_LIMIT", 20)
    few = q_alpha(X, k, tol=1e-10, max_iter=2000, accelerate=False)
    assert exact.start_passes == 0 and few.start_passes == qa_start.START_PASSES == 2
    assert exact.converged and few.converged and np.allclose(few.alpha, exact.alpha, rtol=0, atol=1e-9)
    assert set(np.argsort(-few.alpha)[:30]) == set(planted.ravel())
    assert q_alpha(X, k, init="random", random_state=0, max_iter=1).start_passes == 0
    # three starts: the uniform one's passes, the random ones' none, summed over the starts
    assert q_alpha(X, k, n_init=3, random_state=0, max_iter=1).start_passes == 2


@pytest.mark.parametrize("solver", ["power", "lanczos"])
def test_a_run_that_does_not_converge_takes_exactly_max_iter_iterations(solver):
    X, _, _ = problem(6)
    with pytest.warns(ConvergenceWarning, match="^Q-alpha did not converge in 7 iterations"):
        result = q_alpha(X, 2, solver=solver, tol=1e-14, max_iter=7)
    assert not result.converged and result.n_iter == 7
    assert result.history.shape == (7,) and result.residuals.shape == (7, 2)
    assert result.residual == result.residuals[-1].max() > 1e-14


@pytest.mark.parametrize("solver, method", [("power", "power"), ("lanczos", "power"), ("dense", "basic")])
def test_more_clusters_than_the_data_have_ranks_still_give_an_orthonormal_q_and_a_true_residual(solver, method):
    """Data of rank 2 (three distinct rows, centred) with k = 3: A_alpha Q has rank 2, and the
    iteration completes Q from A_alpha's own eigenvectors (its rank-deficient branch)."""
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((3, 40))
    X = rows[np.arange(30) % 3] + 1e-9 * rng.standard_normal((30, 40))
    # a random start: from the uniform one these data are a fixed point at once
    result = q_alpha(X, 3, solver=solver, method=method, tol=1e-6, max_iter=2000, init="random", random_state=0)
    assert result.n_iter > 1
    assert np.allclose(result.Q.T @ result.Q, np.eye(3), atol=1e-8)
    assert np.isfinite(result.alpha).all() and result.converged
    assert max(dense_truth(X, result)[:2]) <= 1e-6


def test_the_automatic_solver_is_the_documented_one():
    rng = np.random.default_rng(8)
    small, large = rng.standard_normal((30, 80)), rng.standard_normal((30, 150))
    pairs = np.array([[0, 1], [2, 3]])
    assert q_alpha(small, 2).solver == q_alpha(large, 2).solver == "power"  # positive semi-definite
    assert q_alpha(small, 2, criterion="gap").solver == "dense"  # indefinite, up to 100 features
    assert q_alpha(large, 2, criterion="gap").solver == "lanczos"  # indefinite, beyond
    assert q_alpha(large, 2, pairs=pairs, lam=0.1).solver == "lanczos"
    from scipy import sparse

    # the same for every container: the same data take the same path
    assert q_alpha(sparse.csr_matrix(small), 2).solver == "power"
    assert q_alpha(sparse.csr_matrix(small), 2, pairs=pairs, lam=0.1).solver == "dense"


def test_pairs_given_as_arrays_are_checked_and_named():
    from core.errors import InputError

    X, _, _ = problem(9)
    with pytest.raises(InputError, match=r"both be \(n_pairs x 60\); got \(3, 60\) and \(2, 60\)"):
        q_alpha(X, 2, pairs=(X[:3], X[3:5]), lam=0.1)
    with pytest.raises(InputError, match=r"refers to sample 40, but there are only 40 samples \(valid: 0 to 39\)"):
        q_alpha(X, 2, pairs=np.array([[0, 40]]), lam=0.1)
    with pytest.raises(InputError, match=r"refers to sample -1"):
        q_alpha(X, 2, pairs=np.array([[-1, 3]]), lam=0.1)
    # pairs as two arrays of samples give the same weights as the same pairs by index
    index = np.array([[0, 5], [7, 12], [3, 30]])
    by_rows = q_alpha(X, 2, pairs=(X[index[:, 0]], X[index[:, 1]]), lam=0.3, solver="dense")
    by_index = q_alpha(X, 2, pairs=index, lam=0.3, solver="dense")
    assert np.allclose(by_rows.alpha, by_index.alpha, atol=1e-10)


def test_the_subspace_residual_is_its_definition():
    """``||Z - Q Q^T Z||_F / ||Z||_2`` computed densely (the 2-norm by an SVD), for float64 and
    float32 ``Z``, an invariant subspace (0) and ``Z = 0`` (1: nothing is spanned)."""
    from core.selection._spectral import subspace_residual

    rng = np.random.default_rng(5)
    A = rng.standard_normal((30, 30))
    A = A + A.T
    Q = np.linalg.qr(rng.standard_normal((30, 3)))[0]
    for Z in (A @ Q, (A @ Q).astype(np.float32)):
        Z64 = Z.astype(np.float64)
        expected = np.linalg.norm(Z64 - Q @ (Q.T @ Z64)) / np.linalg.svd(Z64, compute_uv=False)[0]
        assert subspace_residual(Q, Z) == pytest.approx(expected, rel=1e-6 if Z.dtype == np.float32 else 1e-12)
    invariant = np.linalg.eigh(A)[1][:, -3:]
    assert subspace_residual(invariant, A @ invariant) < 1e-14
    assert subspace_residual(Q, np.zeros((30, 3))) == 1.0


def test_the_iterations_norm_is_numpys():
    """_spectral.norm, the iterations' lean norm: NumPy's value to the last bit in float64 (vectors
    and matrices, as Frobenius), within float32's rounding for float32 arrays, 0 for zeros."""
    from core.selection._spectral import norm

    rng = np.random.default_rng(9)
    for x in (rng.standard_normal(101), rng.standard_normal((55, 3)), np.asfortranarray(rng.standard_normal((7, 4)))):
        assert norm(x) == float(np.linalg.norm(x))
    single = rng.standard_normal(300).astype(np.float32)
    assert norm(single) == pytest.approx(float(np.linalg.norm(single)), rel=1e-6)
    assert norm(np.zeros(5)) == 0.0


def test_the_diagnosis_reads_the_runs_own_image_and_finds_the_same():
    """A converged alternation hands the certification A_alpha Q of its last iterate (no pass made
    again): the diagnosis of an undetermined Q (k beyond the data's rank) and of a determined one is
    the one made from the data; a float32 run's image, too coarse for a zero eigenvalue, is not
    handed on by the float64 check."""
    from core.selection._qalpha import certify
    from core.selection._qalpha.prepare import prepare, problem_at
    from core.selection._qalpha.problem import float64_problem

    rng = np.random.default_rng(10)
    low_rank = rng.standard_normal((40, 3)) @ rng.standard_normal((3, 60))
    settings = dict(labels=None, side=None, pairs=None, criterion="sum", method="power", max_iter=1000, tol=1e-6,
                    solver="auto", eig_tol=1e-10, power_steps=1, memory_limit=None)
    for X, k, undetermined in ((low_rank, 4, True), (random_matrix(40, 60, random_state=1).X, 2, False)):
        prepared = prepare(X, k, dtype=np.float64, **settings)
        problem = problem_at(prepared, 0.0)
        features = problem.features
        alpha = np.abs(rng.standard_normal(features.n_kept))
        alpha /= np.linalg.norm(alpha)
        Q = np.linalg.eigh(features.weighted_gram(alpha))[1][:, ::-1][:, :k]  # A_alpha's leading vectors
        image = features.times((features.transposed_times(Q) * alpha).T)
        from_image = certify.diagnose(problem, alpha, Q, k, True, image)
        from_data = certify.diagnose(problem, alpha, Q, k, True)
        assert (from_image is None) == (from_data is None) == (not undetermined)
    X = random_matrix(40, 60, random_state=2).X
    prepared = prepare(X, 2, dtype=np.float32, **settings)
    run = q_alpha(X, 2)
    kept = prepared.features.kept
    single = dict(alpha=run.alpha[kept].astype(np.float32), Q=run.Q.astype(np.float32), residuals=np.zeros((1, 2)),
                  history=np.ones(1), eigenvalue=1.0, converged=True, image=np.ones((40, 2), dtype=np.float32))
    checked, _ = certify.checked_in_float64(float64_problem(prepared, 0.0), prepared, single)
    assert checked["image"] is None


def test_the_diagnosis_threshold_scales_with_the_largest_eigenvalue():
    """"Equal to working precision" is relative to A_alpha's largest eigenvalue (43 here): a fourth
    direction of eigenvalue 9e-13, below 1e3 eps times it but above 1e3 eps over it, is rounding, and
    Q's fourth column is undetermined; at 9e-11 it stands clear."""
    from core.selection._qalpha import certify
    from core.selection._qalpha.prepare import prepare, problem_at

    rng = np.random.default_rng(11)
    base = rng.standard_normal((40, 3)) @ rng.standard_normal((3, 10000))
    extra = np.outer(rng.standard_normal(40), rng.standard_normal(10000))
    settings = dict(labels=None, side=None, pairs=None, criterion="sum", method="power", max_iter=1000, tol=1e-6,
                    solver="auto", eig_tol=1e-10, power_steps=1, memory_limit=None, dtype=np.float64)
    for size, undetermined in ((1e-7, True), (1e-6, False)):
        prepared = prepare(base + size * extra, 4, **settings)
        problem = problem_at(prepared, 0.0)
        features = problem.features
        alpha = np.full(features.n_kept, 1 / np.sqrt(features.n_kept))
        Q = np.linalg.eigh(features.weighted_gram(alpha))[1][:, ::-1][:, :4]
        found = certify.diagnose(problem, alpha, Q, 4, True)
        assert (found is not None) == undetermined
        if undetermined:
            assert found.k == 4 and found.determined == (3,) and found.lambda_k < 1e-11


def test_a_float32_run_is_checked_with_a_float64_q_and_says_so_where_it_falls_short():
    """The float64 check measures the float32 run's weights with Q made orthonormal in float64; a
    run short of tol there, out of iterations, is unconverged with a note that names the precision
    and what it was checked against."""
    from core.selection._qalpha import certify
    from core.selection._qalpha.prepare import prepare
    from core.selection._qalpha.problem import float64_problem

    X = random_matrix(40, 60, random_state=3).X
    settings = dict(labels=None, side=None, pairs=None, criterion="sum", method="power", max_iter=1000, tol=1e-6,
                    solver="auto", eig_tol=1e-10, power_steps=1, memory_limit=None, dtype=np.float32)
    prepared = prepare(X, 2, **settings)
    exact = q_alpha(X, 2, tol=1e-12)
    kept = prepared.features.kept
    rough = exact.alpha[kept] + 1e-3 * np.random.default_rng(3).random(kept.size)  # 1e-3 off: short of tol
    run = dict(alpha=rough.astype(np.float32), Q=exact.Q.astype(np.float32), residuals=np.zeros((1, 2)),
               history=np.ones(1), eigenvalue=1.0, converged=True, image=None)
    checked, note = certify.checked_in_float64(float64_problem(prepared, 0.0), prepared, run)
    assert checked["Q"].dtype == np.float64 and not checked["converged"]
    np.testing.assert_allclose(checked["Q"].T @ checked["Q"], np.eye(2), atol=1e-14)
    assert note.startswith("In float32 the residuals fell below tol = 1e-06, but against the data in float64 they are")


def test_the_verdict_takes_the_runs_own_diagnosis_and_image_and_refuses_non_finite_weights(monkeypatch):
    """The certification's verdict: a diagnosis the ascent made at the last iterate is the one
    said (not made again); a run's A_alpha Q saves the pass its Ritz values would take; weights that
    came out NaN are refused with the name of what came out so."""
    from core.errors import InputError
    from core.selection._qalpha import certify
    from core.selection._qalpha.prepare import prepare, problem_at
    from core.selection._qalpha.problem import Undetermined

    X = random_matrix(40, 60, random_state=4).X
    settings = dict(labels=None, side=None, pairs=None, criterion="sum", method="power", max_iter=1000, tol=1e-6,
                    solver="auto", eig_tol=1e-10, power_steps=1, memory_limit=None, dtype=np.float64)
    prepared = prepare(X, 2, **settings)
    problem = problem_at(prepared, 0.0)
    exact = q_alpha(X, 2, tol=1e-12)
    alpha, Q = exact.alpha[prepared.features.kept], exact.Q
    run = dict(alpha=alpha, Q=Q, history=np.ones(1), converged=True, failures=(), residuals=np.zeros((1, 2)),
               n_iter=1)
    said = Undetermined(k=2, lambda_k=1.0, lambda_next=1.0, determined=(1,))
    with pytest.warns(ConvergenceWarning):
        notes, _ = certify.verdict(problem, prepared, dict(run, undetermined=said))
    assert said.message in notes
    image = problem.features.times((problem.features.transposed_times(Q) * alpha).T)

    def no_pass(*args):
        raise AssertionError("a pass was made again")

    monkeypatch.setattr(problem.features, "times", no_pass)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        notes, converged = certify.verdict(problem, prepared, dict(run, image=image))
    assert converged and notes == ()
    with pytest.raises(InputError, match="^Q-alpha's weights came out NaN or infinite"):
        certify.verdict(problem, prepared, dict(run, alpha=np.full_like(alpha, np.nan)))
