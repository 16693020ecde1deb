"""Q-alpha's eigenproblem for one data set at one λ, matrix-free: the layer under every stage of
the solver (:mod:`core.selection._qalpha`).

* :class:`Problem` -- the operator ``C(Q)`` of [WS03] Definition 2 step 2 whose leading eigenvector
  gives alpha (``G(Q)``, ``S^1/2 G S^1/2`` with side data, ``G - lam B`` with pairs, ``2 G - (M M^T)
  o (M M^T)`` for the gap criterion), its products, dense form and objective, and
  :meth:`Problem.measure`, the numbers of an iterate ``(alpha, Q)`` computed from the data.
* :class:`Evaluation` -- the criterion as a function of alpha alone (``Q`` the exact leading
  eigenvectors of ``A_alpha``), its gradient, and whether ``Q`` is determined (:class:`Undetermined`).
* The pieces the variants add: :func:`side_variance` ([SW04] Def. 3), :func:`pair_factor`
  ([SW04] Sec. 5), and :func:`float64_problem`, the same problem over the data in float64.

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from .._spectral import eigen_residual, norm, orient, side_scaling, subspace_residual
from ...errors import InputError
from ...matrix import data_matrix, dense_matrix, sample_vectors
from ...matrix.threads import one_blas_thread

#: Above this many features the leading eigenvector of G is not taken from a dense matrix.
DENSE_LIMIT = 600

#: Up to this order the leading eigenpairs of ``A_alpha`` (or of its dual) come from a dense
#: decomposition (LAPACK's ``syevr``, the leading ``k + 1`` where every weight is positive); beyond
#: it from ARPACK on the explicit matrix, warm-started from the previous evaluation's leading
#: vector. Four leading pairs on one thread of a 2-core AMD EPYC, LAPACK's subset / ARPACK:
#: 0.27 / 0.58 ms at 100, 0.62 / 0.50 at 150, 1.7 / 0.7 at 250, 4.9 / 1.2 at 400, 15 / 2.4 at 630
#: (all of them by LAPACK, for weights of both signs: 0.8 to 50 ms).
DENSE_EIGEN_LIMIT = 150

#: From this many samples on (dense float64 data, the sum criterion) the ascent's evaluations find
#: ``A_alpha``'s leading eigenpairs by ARPACK on the products ``v -> M^T (alpha o M v)`` without
#: forming ``A_alpha``: 35-40 pairs of thin passes (``2 q n`` multiply-adds each) against ``q^2 n / 2``
#: to form it. One BLAS thread of a 2-core AMD EPYC, an iterate 5% from a fixed point, formed /
#: matrix-free: TOX-171 (171 x 5,748) 10.6 / 16.2 ms, warpPIE10P (210 x 2,420) 4.9 / 3.5 and 7.5 / 9.0
#: (k = 2, 5), ORL (400 x 1,024) 9.8 / 7.3 and 8.4 / 6.7, a PBMC-sized table (630 x 750) 13.3 / 8.3
#: and 16.7 / 6.4.
MATRIX_FREE_FROM = 300

#: ``|lambda_k| - |lambda_{k+1}|`` at most this multiple of ``eps |lambda_1|`` is "equal to
#: working precision": ``Q`` is not determined. The ascent stops when it has been so for
#: UNDETERMINED_AFTER evaluations in a row without the residuals passing.
UNDETERMINED_GAP_EPS = 1e3
UNDETERMINED_AFTER = 10


class Problem:
    """The eigenproblem of step 2 for one data set, matrix-free.

    Holds the normalised features (``q x n`` products, :mod:`core.matrix.normalised`) and what the
    variants add: the scaling ``s`` with ``S = diag(s)^2 = (D + lam I)^{-1}`` (side information,
    symmetric form ``S^1/2 G S^1/2``) or the pair matrix ``Wp`` with ``B = Wp Wp^T`` (pairwise side
    information).
    """

    def __init__(self, features, criterion, side_scale=None, pair_factor=None, lam=0.0):
        self.features = features
        self.Mt = features.Mt  # dense data only (the gap criterion)
        self.q, self.n = features.n_samples, features.n_kept
        self.criterion = criterion
        self.side_scale = side_scale
        self.pair_factor = pair_factor
        self.lam = lam
        self._gram = None

    # products with the pieces of G ------------------------------------------
    def g_matvec(self, Pt, v):
        """``G(Q) v`` for ``P = M Q`` stored as ``Pt`` (``k x n``)."""
        _, U = self.features.fused((Pt * v).T)  # T = M^T (p_l o v) (q x k), U = T^T M^T (k x n)
        return np.einsum("ln,ln->n", Pt, U)

    def square_matvec(self, v):
        """``((M M^T) o (M M^T)) v``: the ``trace(A_alpha^2)`` part of the gap criterion."""
        A = (self.Mt * v) @ self.Mt.T  # q x q affinity M^T diag(v) M
        return np.einsum("qn,qn->n", A @ self.Mt, self.Mt)

    def criterion_matvec(self, Pt, v):
        if self.criterion == "sum":
            return self.g_matvec(Pt, v)
        return 2.0 * self.g_matvec(Pt, v) - self.square_matvec(v)

    def operator_matvec(self, Pt, v):
        """The symmetric operator whose leading eigenvector gives alpha."""
        if self.side_scale is not None:
            return self.side_scale * self.criterion_matvec(Pt, self.side_scale * v)
        out = self.criterion_matvec(Pt, v)
        if self.pair_factor is not None:
            out -= self.lam * (self.pair_factor @ (self.pair_factor.T @ v))
        return out

    # dense forms -------------------------------------------------------------
    def gram(self):
        if self._gram is None:
            self._gram = self.features.gram()
        return self._gram

    def dense_operator(self, Pt):
        C = self.gram() * (Pt.T @ Pt)
        if self.criterion == "gap":
            C = 2.0 * C - self.gram() ** 2
        if self.side_scale is not None:
            C *= np.outer(self.side_scale, self.side_scale)
        elif self.pair_factor is not None:
            C -= self.lam * (self.pair_factor @ self.pair_factor.T)
        return C

    # the weights a run begins at ----------------------------------------------
    def equal_beta(self, dtype=np.float64):
        """Every ``beta`` equal, of unit norm: where a run begins when nothing gives a direction."""
        return np.full(self.n, 1.0 / np.sqrt(self.n), dtype=dtype)

    def given_beta(self, alpha0, dtype=np.float64):
        """The weights ``alpha0`` (a warm start, or the iterate another method left) in the
        operator's variable, or None where they give no direction (None, all zero, not finite)."""
        if alpha0 is None or not np.all(np.isfinite(alpha0)) or not np.any(alpha0):
            return None
        return self.to_beta(np.asarray(alpha0, dtype=dtype))

    # alpha from the operator's eigenvector ----------------------------------
    def to_alpha(self, beta):
        alpha = beta if self.side_scale is None else self.side_scale * beta
        return orient(alpha / norm(alpha))

    def to_beta(self, alpha):
        beta = alpha if self.side_scale is None else alpha / self.side_scale
        return beta / norm(beta)

    def objective(self, alpha, Z, Pt=None):
        """Criterion value at unit ``alpha``; ``Z = A_alpha Q`` gives ``alpha^T G alpha``."""
        value = float(np.vdot(Z, Z))
        if self.criterion == "gap":
            value = 2.0 * value - float(alpha @ self.square_matvec(alpha))
        if self.side_scale is not None:
            value /= float(np.sum((alpha / self.side_scale) ** 2))
        elif self.pair_factor is not None:
            value -= self.lam * float(np.sum((self.pair_factor.T @ alpha) ** 2))
        return value

    # the numbers of an iterate -------------------------------------------------
    def measure(self, alpha, Q, fixed_Q):
        """The numbers of the iterate ``(alpha, Q)`` computed by products with the data, as the
        alternation computes them: ``(objective, eigenvalue, alpha_residual, Q_residual, Pt)`` with
        ``Q`` orthonormal. What decides ``converged`` for a run that did not compute them this way."""
        features = self.features
        Pt = features.transposed_times(Q)
        beta = self.to_beta(alpha)
        eigenvalue, alpha_residual = eigen_residual(beta, self.operator_matvec(Pt, beta))
        Z = features.times((Pt * alpha).T)
        Q_residual = 0.0 if fixed_Q else subspace_residual(Q, Z)
        return self.objective(alpha, Z), eigenvalue, alpha_residual, Q_residual, Pt

@dataclass(frozen=True)
class Undetermined:
    """``|lambda_k| = |lambda_{k+1}|`` of ``A_alpha`` to working precision: Q is not determined.
    ``lambda_k`` and ``lambda_next`` are the two magnitudes; ``determined`` the nearest numbers of
    clusters below and above ``k`` whose last eigenvalue stands apart from the next."""

    k: int
    lambda_k: float
    lambda_next: float
    determined: tuple

    @property
    def message(self) -> str:
        others = " or ".join(f"k = {j}" for j in self.determined)
        advice = f" The eigenvalues of A_alpha separate at {others}: use that k." if others else ""
        return (f"A_alpha's eigenvalues {self.k} and {self.k + 1} are equal to working precision "
                f"(magnitudes {self.lambda_k:.12g} and {self.lambda_next:.12g}), so Q, its {self.k} leading "
                f"eigenvectors, is not determined at k = {self.k}: its last column is one arbitrary choice "
                "among directions of equal eigenvalue, and the fixed point with it." + advice)


def leading_pairs(A, count, previous, positive, negative_bound=None):
    """The ``count`` eigenpairs of the symmetric ``A`` of largest magnitude, largest first, and
    the magnitudes of those found (at least ``count + 1`` where ``A`` has them), for the gap
    diagnosis. ``positive``: ``A`` is positive semi-definite (every weight non-negative); else
    ``negative_bound``, if given, is at least ``-lambda_min(A)``: where the ``count + 1`` largest
    eigenvalues all exceed it they are those of largest magnitude, and LAPACK finds them alone."""
    q = A.shape[0]
    if q <= DENSE_EIGEN_LIMIT:
        if not positive and negative_bound is not None and count + 1 < q:
            values, vectors = sample_vectors.leading_eigenpairs(A, count + 1, True)
            if values[-1] > negative_bound:
                return values[:count], vectors[:, :count], np.abs(values)
        values, vectors = sample_vectors.leading_eigenpairs(A, count + 1, positive)
        return values[:count], vectors[:, :count], np.abs(values)
    try:
        return arpack_pairs(A, count, previous)
    except ArpackNoConvergence:
        return _by_magnitude(*linalg.eigh(A), count)


def arpack_pairs(A, count, previous):
    """The ``count`` eigenpairs of largest magnitude of the symmetric ``A`` (an array or a
    :class:`~scipy.sparse.linalg.LinearOperator`) and one more, by ARPACK warm-started from
    ``previous``; as :func:`leading_pairs`. Raises ``ArpackNoConvergence`` where ARPACK fails."""
    q = A.shape[0]
    wanted = min(count + 1, q - 1)
    values, vectors = eigsh(A, k=wanted, which="LM", v0=previous, tol=0.0, ncv=min(q, max(2 * wanted + 1, 20)))
    return _by_magnitude(values, vectors, count)


def _by_magnitude(values, vectors, count):
    order = np.argsort(-np.abs(values), kind="stable")
    return values[order[:count]], vectors[:, order[:count]], np.abs(values[order])


def evaluates_dual(features, k) -> bool:
    """Whether :class:`Evaluation` takes ``A_alpha``'s eigenpairs from the features' side (fewer
    features than samples)."""
    return k + 1 < features.n_kept < features.n_samples


def evaluates_matrix_free(problem, k) -> bool:
    """Whether :class:`Evaluation` finds ``A_alpha``'s eigenpairs from products with the data
    without forming it (:data:`MATRIX_FREE_FROM`): dense float64 data, the sum criterion."""
    features = problem.features
    return (not evaluates_dual(features, k) and features.Mt is not None and features.dtype == np.float64
            and problem.criterion == "sum" and features.n_samples >= MATRIX_FREE_FROM)


class Evaluation:
    """``theta``, ``C beta`` and the eigenpairs of ``A_alpha`` at the unit ``beta`` of an iterate,
    computed once per point and shared by the objective, the gradient and the callback.

    With fewer features than samples (``n < q``) and no negative weight, the eigenpairs come from
    the ``n x n`` matrix ``B = D^1/2 K D^1/2`` (``K = M M^T`` the features' Gram matrix, formed once;
    ``D = diag(alpha)``), whose nonzero eigenvalues are ``A_alpha``'s: for ``B y = w y``,
    ``q = M^T D^1/2 y / sqrt(w)`` is an eigenvector of ``A_alpha`` and ``M q = K D^1/2 y / sqrt(w)``,
    so an evaluation reads no data at all (600 digit images, 64 pixels: a 64 x 64 problem instead of
    600 x 600). From :data:`MATRIX_FREE_FROM` samples on (dense float64 data, the sum criterion)
    ``A_alpha`` is not formed: ARPACK takes its pairs from the products ``M^T (alpha o M v)``
    (a PBMC-sized λ path, 31 evaluations: 1.27 s against 0.91 s, the same iterates). With
    ``spectrum`` (the Newton ascent, :func:`.ascent.takes_newton_steps`) the formed ``A_alpha``'s
    every eigenpair is kept, for the Hessian's products (:meth:`hessian_times`)."""

    def __init__(self, problem, k, spectrum=False):
        self.problem, self.k = problem, k
        self.key = None
        self.count = 0
        self.hessian_products = 0
        self.low_gap_run = 0
        self.gap = None
        self.vectors = None
        features = problem.features if problem is not None else None
        self.dual = features is not None and evaluates_dual(features, k)
        self.matrix_free = features is not None and evaluates_matrix_free(problem, k)
        # every eigenpair of the formed A_alpha, for the Hessian's products (:meth:`hessian_times`):
        # asked for where A_alpha is formed (:func:`.ascent.takes_newton_steps`)
        self.spectrum = spectrum
        self._gram_squared = None

    def at(self, x):
        key = x.tobytes()
        if key == self.key:
            return self
        self.key = key
        self.count += 1
        problem, k = self.problem, self.k
        size = norm(x)
        beta = x / size
        alpha = beta if problem.side_scale is None else problem.side_scale * beta
        positive = bool(np.all(alpha >= 0))
        previous = self.vectors[:, 0] if self.vectors is not None else None
        if self.dual and positive:
            values, Pt, magnitudes, self.Q_residual = self._dual_pairs(alpha, previous)
            if problem.criterion == "gap" and self._gram_squared is None:
                self._gram_squared = problem.gram() ** 2
            diagonal = self._gram_squared @ alpha if problem.criterion == "gap" else None
        elif self.matrix_free:
            values, vectors, magnitudes, Pt = self._matrix_free_pairs(alpha, previous, positive)
            diagonal = None
        else:
            A = problem.features.weighted_gram(alpha)
            # Weyl: the unit-norm features' negative weights lower A's spectrum by at most their sum
            # (widened by 1e-4 against the norms' rounding, 1e-15 in float64, 1e-7 in float32; the
            # doubled sum failed 150 of the audit's 293 such evaluations, which then paid twice, and
            # this 101); L-BFGS's iterates put small negative weights on about half
            negative_bound = None if positive else -(1.0 + 1e-4) * float(alpha[alpha < 0].sum())
            with one_blas_thread():  # a q x q decomposition: threads cost more than they save
                if self.spectrum:
                    self.all_values, self.all_vectors = sample_vectors.leading_eigenpairs(A, A.shape[0])
                    values, vectors = self.all_values[:k], self.all_vectors[:, :k]
                    magnitudes = np.abs(self.all_values)
                else:
                    values, vectors, magnitudes = leading_pairs(A, k, None if self.dual else previous, positive,
                                                                negative_bound)
            Pt = problem.features.transposed_times(vectors)  # rows p_l = M q_l
            self.Q_residual = subspace_residual(vectors, A @ vectors)
            self.sample_vectors, self.vectors = vectors, (None if self.dual else vectors)
            # ((M M^T) o (M M^T)) alpha = diag(M A_alpha M^T)
            diagonal = np.einsum("qn,qn->n", A @ problem.Mt, problem.Mt) if problem.criterion == "gap" else None
        g_alpha = np.einsum("l,ln,ln->n", values, Pt, Pt)  # G(Q) alpha, Q exact
        image = g_alpha if diagonal is None else 2.0 * g_alpha - diagonal
        if problem.side_scale is not None:
            image = problem.side_scale * image
        elif problem.pair_factor is not None:
            image = image - problem.lam * (problem.pair_factor @ (problem.pair_factor.T @ beta))
        self.size, self.beta, self.alpha, self.image = size, beta, alpha, image
        self.theta, self.alpha_residual = eigen_residual(beta, image)
        self.values, self.Pt = values, Pt
        self._note_gap(magnitudes)
        return self

    def _matrix_free_pairs(self, alpha, previous, positive):
        """The leading eigenpairs of ``A_alpha`` by ARPACK on its products with the data, without
        forming it (:data:`MATRIX_FREE_FROM`); from the formed matrix where ARPACK fails. Returns
        ``(values, vectors, magnitudes, Pt)`` and sets Q's residual, ``||A Q - Q Q^T A Q||_F`` from
        one more product."""
        features = self.problem.features
        q = features.n_samples

        def product(V):
            V = np.asarray(V, dtype=np.float64).reshape(q, -1)
            return features.times((features.transposed_times(V) * alpha).T)

        operator = LinearOperator((q, q), matvec=product, matmat=product, dtype=np.float64)
        # one BLAS thread, as the ascent runs (run_ascent): ARPACK's small dense steps gain nothing from more
        with one_blas_thread():
            try:
                values, vectors, magnitudes = arpack_pairs(operator, self.k, previous)
            except ArpackNoConvergence:
                values, vectors, magnitudes = leading_pairs(features.weighted_gram(alpha), self.k, previous, positive)
        Pt = features.transposed_times(vectors)  # rows p_l = M q_l
        self.Q_residual = subspace_residual(vectors, features.times((Pt * alpha).T))
        self.sample_vectors, self.vectors = vectors, vectors
        return values, vectors, magnitudes, Pt

    def _dual_pairs(self, alpha, previous):
        """The leading eigenvalues of ``A_alpha``, ``P^T = (M Q)^T``, the magnitudes found and Q's
        residual, from ``B = D^1/2 K D^1/2``; the eigenvectors ``Y`` of ``B`` are kept for :meth:`Q`."""
        K, k = self.problem.gram(), self.k
        root = np.sqrt(alpha)
        B = root[:, None] * K * root[None, :]
        with one_blas_thread():
            values, Y, magnitudes = leading_pairs(B, k, previous, True)
        scale = np.sqrt(np.clip(values, 0.0, None))
        live = scale > 0
        Pt = np.zeros((k, K.shape[0]))
        Pt[live] = (K @ (root[:, None] * Y[:, live])).T / scale[live, None]
        self.vectors, self.sample_vectors, self.root = Y, None, root
        # ||A q - w q|| = ||M^T D^1/2 (B y - w y)|| / sqrt(w) <= ||B y - w y|| sqrt(||B||_2 / w): the
        # record's Q residual (the returned iterate's is recomputed from the data)
        return values, Pt, magnitudes, subspace_residual(Y, B @ Y)

    def Q(self):
        """The ``k`` leading eigenvectors of ``A_alpha`` at the current point, orthonormal (``q x k``):
        from the dual form, ``M^T D^1/2 Y / sqrt(w)`` (one thin pass), completed where ``w = 0``."""
        if self.sample_vectors is not None:
            return self.sample_vectors
        return sample_vectors.from_feature_side(self.problem.features, self.root, self.values, self.vectors, self.k)

    def _note_gap(self, magnitudes):
        """Whether ``|lambda_k| = |lambda_{k+1}|`` to working precision at this point (``self.gap``,
        an :class:`Undetermined` or None), and for how many evaluations in a row."""
        k = self.k
        self.gap = None
        if magnitudes.size <= k or magnitudes[0] == 0:
            self.low_gap_run = 0
            return
        resolution = UNDETERMINED_GAP_EPS * np.finfo(np.float64).eps * magnitudes[0]
        if magnitudes[k - 1] - magnitudes[k] > resolution:
            self.low_gap_run = 0
            return
        self.low_gap_run += 1
        separated = magnitudes[:-1] - magnitudes[1:] > resolution  # separated[j - 1]: k = j is determined
        below = [j for j in range(k - 1, 0, -1) if separated[j - 1]][:1]
        above = [j for j in range(k + 1, magnitudes.size) if separated[j - 1]][:1]
        self.gap = Undetermined(k, float(magnitudes[k - 1]), float(magnitudes[k]), tuple(below + above))

    def objective(self, x):
        return -self.at(x).theta

    def gradient(self, x):
        e = self.at(x)
        return -(2.0 / e.size) * (e.image - e.theta * e.beta)

    def hessian_times(self, x, v):
        """The Hessian of ``-theta(x / ||x||)`` (:meth:`objective`) times ``v``, exact, for an
        evaluation made with ``spectrum``. With ``psi(beta) = beta^T C(Q(beta)) beta`` (homogeneous
        of degree 2, gradient ``2 C beta``) and ``b = x / ||x||``, it is ``-(H_psi v - 2 (g b^T + b g^T) v
        - 2 theta v + 8 theta b b^T v) / ||x||^2`` with ``g = 2 C b``; ``H_psi`` is ``S H_phi S`` with side
        data, ``H_phi - 2 lam Wp Wp^T`` with pairs, ``2 H_phi - 2 (M M^T) o (M M^T)`` for the gap
        criterion, where ``H_phi`` is :meth:`_sum_hessian_times`."""
        e = self.at(x)
        problem = self.problem
        u = v if problem.side_scale is None else problem.side_scale * v
        product = self._sum_hessian_times(u)
        if problem.criterion == "gap":
            product = 2.0 * (product - problem.square_matvec(u))
        if problem.side_scale is not None:
            product *= problem.side_scale
        elif problem.pair_factor is not None:
            product -= 2.0 * problem.lam * (problem.pair_factor @ (problem.pair_factor.T @ v))
        gradient, along = 2.0 * e.image, float(e.beta @ v)
        product -= 2.0 * along * gradient + 2.0 * float(gradient @ v) * e.beta + 2.0 * e.theta * v
        product += 8.0 * e.theta * along * e.beta
        return -product / e.size ** 2

    def _sum_hessian_times(self, u):
        """``H_phi u`` for ``phi(alpha) = sum_{l<=k} lambda_l(A_alpha)^2`` ([WS03] Eq. 1) at this point.
        With ``A_alpha = sum_m lambda_m q_m q_m^T`` (every pair, largest magnitude first) and
        ``p_m = M q_m``, the derivative of ``A`` along ``u`` is ``A_u``, and ``W_ml = q_m^T A_u q_l``
        (``W = Q_all^T M^T (u o P)``). First-order perturbation gives ``d lambda_l = W_ll`` and ``d q_l =
        sum_{m != l} q_m W_ml / (lambda_l - lambda_m)``; within the leading k the two terms of a pair
        ``l, m`` sum to ``W_ml p_l o p_m`` (``lambda_l / (lambda_l - lambda_m) + lambda_m / (lambda_m -
        lambda_l) = 1``), so no difference of two leading eigenvalues divides, and ``H_phi u = 2 sum_{l,m<=k}
        W_ml p_l o p_m + 4 sum_{l<=k} lambda_l p_l o r_l`` with ``r_l = sum_{m>k} p_m W_ml / (lambda_l -
        lambda_m)``, ``M`` times the trailing eigenvectors' combination. Two thin passes over the data."""
        self.hessian_products += 1
        features, k, Pt = self.problem.features, self.k, self.Pt
        values, vectors = self.all_values, self.all_vectors
        W = vectors.T @ features.times((Pt * u).T)
        leading = np.einsum("ml,ln,mn->n", W[:k], Pt, Pt)
        if vectors.shape[1] == k:  # A_alpha has no eigenpair beyond the leading k
            return 2.0 * leading
        differences = values[None, :k] - values[k:, None]
        # equal across the k-th (Q not determined, which the gap diagnosis says): no derivative of Q
        trailing = np.divide(W[k:], differences, out=np.zeros_like(W[k:]), where=differences != 0)
        R = features.transposed_times(vectors[:, k:] @ trailing)
        return 2.0 * leading + 4.0 * np.einsum("l,ln,ln->n", self.values, Pt, R)

def side_variance(side, kept, scale, n_samples, n_features) -> np.ndarray:
    """``D`` of [SW04] Def. 3 for the kept features: each side feature's variance divided by the
    same feature's variance in the main data (``scale`` are the main features' centred norms).
    ``side`` is of any kind :func:`core.matrix.data_matrix` takes."""
    side = data_matrix(side, "side")
    if side.shape[1] != n_features:
        raise InputError(f"The side data have {side.shape[1]} features but the main data "
                         f"have {n_features}; both must describe the same features.")
    if side.shape[0] < 2:
        raise InputError("The side data need at least 2 samples to have a variance.")
    # var(side) / (scale^2 / n)
    return n_samples * side.scaled_variance(kept, scale)


@dataclass(frozen=True)
class SideVariances:
    """Side information given as the side variances ``D`` themselves (one per feature) rather than
    as side data: what :func:`core.selection.topographic.topographic_map` builds from its earlier rounds."""

    diagonal: np.ndarray


def pair_factor(pairs, shape, features):
    """Columns ``x o y`` (one per pair) of the normalised features, so ``B = Wp Wp^T`` ([SW04] Sec. 5)."""
    n_samples, n_features = shape
    kept, mean, scale = features.kept, features.mean, features.scale
    if isinstance(pairs, tuple) and len(pairs) == 2 and np.ndim(pairs[0]) == 2:
        first = dense_matrix(pairs[0], "pairs[0]")
        second = dense_matrix(pairs[1], "pairs[1]")
        if first.shape != second.shape or first.shape[1] != n_features:
            raise InputError(f"The two arrays of pairs must both be (n_pairs x {n_features}); "
                             f"got {first.shape} and {second.shape}.")
        first = (first[:, kept] - mean) / scale
        second = (second[:, kept] - mean) / scale
    else:
        index = np.asarray(pairs)
        if index.ndim != 2 or index.shape[1] != 2 or index.shape[0] < 1:
            raise InputError("pairs must be an (n_pairs x 2) array of sample indices or a tuple "
                             "of two (n_pairs x n_features) arrays.")
        if not np.issubdtype(index.dtype, np.integer):
            raise InputError("Index pairs must be integers (sample indices).")
        if index.min() < 0 or index.max() >= n_samples:
            raise InputError(f"A pair refers to sample {int(index.max() if index.max() >= n_samples else index.min())}, "
                             f"but there are only {n_samples} samples (valid: 0 to {n_samples - 1}).")
        first, second = features.rows(index[:, 0]), features.rows(index[:, 1])
    return np.ascontiguousarray((first * second).T, dtype=features.dtype)


def float64_problem(prepared, lam):
    """The run's eigenproblem over the data in float64: products on the data as given (no
    normalised copy, but for the gap criterion), for a run made in a lower precision."""
    data = prepared.data
    features = data.normalised(stored=True) if prepared.criterion == "gap" else data.exact_normalised()
    if not np.array_equal(features.kept, prepared.features.kept):
        features = data.normalised(stored=True)
    side_scale = None
    if prepared.side is not None:
        diagonal = (prepared.side.diagonal[features.kept] if isinstance(prepared.side, SideVariances) else
                    side_variance(prepared.side, features.kept, features.scale, *data.shape))
        side_scale = side_scaling(diagonal, lam)
    factor = None if prepared.pairs is None else pair_factor(prepared.pairs, data.shape, features)
    return Problem(features, prepared.criterion, side_scale=side_scale, pair_factor=factor, lam=lam)
