"""The Q-alpha family of spectral feature selection (Wolf & Shashua), matrix-free.

Implemented
-----------
* :func:`q_alpha` -- the power-embedded Q-alpha method ([WS03] Definition 2, [SW04] Definition 1)
  and the basic alternating scheme ([WS03] Sec. 3); the sum-of-squared-eigenvalues criterion
  (Eq. 1) or the spectral gap ([WS03] Sec. 2); a supervised mode; side information given as a side
  data set ([SW04] Definition 3) or as pairs of points in different clusters ([SW04] Sec. 5, Eq. 3).
* :func:`topographic_map` -- the topographical model of all relevant feature subsets ([SW04] Sec. 4).
* :func:`find_sparsity_gap` / :func:`sparsity_gap` -- where the sorted weights break, and how
  clearly.
* :func:`positive_eigenvector_probability` -- the simulation of [WS03] Fig. 1a.

Notation
--------
The papers' ``M`` is ``n features x q samples``; public functions take ``X`` = ``M.T`` in
scikit-learn orientation. Every feature (row ``m_i`` of ``M``) is centred over the samples and
scaled to unit norm; a constant feature has no direction, is left out, and gets ``alpha_i = 0``.

Matrix-free products: with ``P = M Q`` (``n x k``),
``G = (M M^T) o (P P^T)``, so ``G v = sum_l p_l o M (M^T (p_l o v))`` costs ``O(n q k)``;
``A_alpha Q = M^T (alpha o P)`` never needs the ``q x q`` affinity; and
``alpha^T G alpha = ||A_alpha Q||_F^2``, so the objective comes free with the Q step. The cost
is linear in the number of features, which is what lets Q-alpha run on 10^5-10^6 of them
(genomics, text, Haar coefficients) without forming the ``n x n`` matrix ``G``.

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003.
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
.. [Sha] A. Shashua, "A new paradigm for feature selection" (talk).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from ._spectral import LAM_MAX, check_clusters, check_settings, orient, result_warnings, side_scaling
from ..errors import InputError
from ..progress import ProgressCallback, report, warn_not_converged
from ..matrix import data_matrix, dense_matrix
from ..matrix.normalised import DenseFeatures, leading_sample_vectors, preprocess_features
from ..matrix.threads import blas_threads_for
from ..validation import as_labels as _as_labels
from ..validation import check_positive_int as _check_positive_int
from ..validation import check_real as _check_real
from ..validation import require_finite as _require_finite

__all__ = [
    "QAlphaParameters",
    "QAlphaResult",
    "TopographicMap",
    "PositivityResult",
    "q_alpha",
    "topographic_map",
    "SparsityGap",
    "find_sparsity_gap",
    "sparsity_gap",
    "positive_eigenvector_probability",
    "preprocess_features",
    "pairs_from_labels",
    "feature_scaling",
]

#: Above this many features the leading eigenvector of G is not taken from a dense matrix.
DENSE_LIMIT = 600

#: A sparsity gap is called clear when the two groups of weights it separates explain at least
#: this share of the weights' variance (:func:`find_sparsity_gap`). Measured on the bundled
#: sets: sorted weights that fall smoothly (every face and gene set, with and without side
#: classes) score 0.63-0.82; planted relevant features (Weston 0.98, madelon 0.93, Ben-Dor 0.89)
#: and wine with a side class (0.85) stand out.
GAP_CLEAR = 0.85

#: Up to this many features the default solver decomposes G densely. Beyond it a Lanczos solve
#: per iteration is faster: 0.8 vs 0.8 ms at 100 features, 0.8 vs 5.9 ms at 400 and 1.3 vs 40 ms
#: at 600 (72 samples; Ben-Dor's 600 genes took 15 s instead of 0.45 s with dense steps).
AUTO_DENSE_LIMIT = 100



#: Q-alpha's criteria, by the value ``criterion`` takes, with the name a reader is shown:
#: Eq. (1) of [WS03] (the sum of the k largest squared eigenvalues of A_alpha) and the gap form
#: (that sum minus the rest).
CRITERION_NAMES = {"sum": "sum of eigenvalues²", "gap": "spectral gap"}


# ---------------------------------------------------------------------------- results
def _check_criterion(criterion) -> None:
    if criterion not in CRITERION_NAMES:
        raise InputError(f"criterion must be 'sum' or 'gap'; got {criterion!r}.")


@dataclass(frozen=True)
class QAlphaParameters:
    """The settings of a Q-alpha run apart from the data: what the app builds from its widgets,
    keys its caches with (:attr:`key`) and hands to :func:`q_alpha` (:meth:`run`); one type, so
    two pages that mean the same run share its result.

    The checks that need no data are made here; those that do (``k < n_samples``) in the run.
    ``k`` is None in the supervised mode (it is the number of classes minus one).
    """

    k: int | None = None
    supervised: bool = False
    lam: float = 0.0
    criterion: str = "sum"
    init: str = "uniform"
    n_init: int = 1
    max_iter: int = 500
    tol: float = 1e-6
    random_state: int | None = 0

    def __post_init__(self):
        if self.supervised != bool(self.supervised):
            raise InputError(f"supervised must be True or False; got {self.supervised!r}.")
        if self.supervised and self.k is not None:
            raise InputError("In the supervised mode k is the number of classes minus one: leave k out.")
        if not self.supervised and (self.k is None or isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer))
                                    or self.k < 1):
            raise InputError(f"k (the number of clusters) must be a positive integer; got {self.k!r}.")
        _check_criterion(self.criterion)
        if self.random_state is not None and (isinstance(self.random_state, bool)
                                              or not isinstance(self.random_state, (int, np.integer))):
            raise InputError(f"random_state must be an integer or None; got {self.random_state!r}.")
        lam, n_init, max_iter = check_settings(lam=self.lam, init=self.init, n_init=self.n_init,
                                               max_iter=self.max_iter)
        tol = _check_real(self.tol, "tol", low=0.0, low_open=True)
        # plain Python numbers: equal settings give equal keys whatever types the widgets returned
        for name, value in (("k", None if self.k is None else int(self.k)), ("lam", lam), ("n_init", n_init),
                            ("max_iter", max_iter), ("tol", tol), ("supervised", bool(self.supervised)),
                            ("random_state", None if self.random_state is None else int(self.random_state))):
            object.__setattr__(self, name, value)

    @property
    def key(self) -> str:
        """A text that two equal settings share (for cache keys and saved parameters)."""
        return json.dumps(asdict(self), sort_keys=True)

    def run(self, X, *, labels=None, side=None, pairs=None, progress=None, **options) -> "QAlphaResult":
        """:func:`q_alpha` on ``X`` with these settings (``labels`` for the supervised mode);
        ``options`` are q_alpha's other arguments (``solver``, ``dtype``, ...)."""
        if self.supervised and labels is None:
            raise InputError("The supervised mode needs the labels of the samples.")
        return q_alpha(X, self.k, labels=labels if self.supervised else None, side=side, pairs=pairs,
                       lam=self.lam, criterion=self.criterion, init=self.init, n_init=self.n_init,
                       max_iter=self.max_iter, tol=self.tol, random_state=self.random_state,
                       progress=progress, **options)


@dataclass(frozen=True, eq=False)
class QAlphaResult:
    """Outcome of :func:`q_alpha`.

    Attributes
    ----------
    alpha : ndarray, shape (n_features,)
        Unit-norm feature weights, oriented so that their sum is positive; 0 for features left out.
    Q : ndarray, shape (n_samples, k)
        Orthonormal basis of the leading eigenvectors of ``A_alpha`` (the cluster subspace).
    objective : float
        Final value of the criterion: ``alpha^T G alpha`` (sum of the k largest squared
        eigenvalues of ``A_alpha``), the gap criterion, the side-information quotient
        ``alpha^T G alpha / alpha^T (D + lam I) alpha``, or ``alpha^T (G - lam B) alpha``.
    history : ndarray
        Objective after each iteration of the best start.
    n_iter : int
        Iterations of the best start.
    converged : bool
        Whether the change of alpha fell below ``tol`` within ``max_iter`` iterations.
    eigenvalue : float
        Leading eigenvalue of the operator whose eigenvector alpha is, at the last iteration.
    method, criterion, solver : str
        What was run.
    k : int
        Number of clusters (columns of Q).
    lam : float
        Weight of the side information (0 when none).
    constant_features : ndarray of int
        Features left out because they do not vary over the samples.
    side_diagonal : ndarray or None
        ``D`` of [SW04] Def. 3 over all features (side variance relative to main variance; the
        summed squared alphas of earlier rounds in :func:`topographic_map`).
    restart_objectives : ndarray
        Final objective of each start (``n_init`` values); the best one is returned.
    stopped : bool
        Whether the ``progress`` callback asked the iteration to stop (by returning ``False``)
        before it converged; the weights are then those of the last iteration done.
    warnings : tuple of str
        What the caller should know about this result: an objective that stopped being finite
        (``converged`` is then False), or weights of both signs (the positivity that [WS03]
        observes does not hold for this operator, e.g. strong pairwise side information).
    auto : AutoSettings or None
        When k or lam was ``"auto"``: what was chosen, from which candidates, and why
        (:class:`core.selection.automatic.AutoSettings`).
    """

    alpha: np.ndarray
    Q: np.ndarray
    objective: float
    history: np.ndarray
    n_iter: int
    converged: bool
    eigenvalue: float
    method: str
    criterion: str
    solver: str
    k: int
    lam: float
    constant_features: np.ndarray
    side_diagonal: np.ndarray | None = None
    restart_objectives: np.ndarray = field(default_factory=lambda: np.zeros(0))
    stopped: bool = False
    warnings: tuple = ()
    auto: "AutoSettings | None" = None

    @property
    def ranking(self) -> np.ndarray:
        """Feature indices from the largest weight to the smallest."""
        return np.argsort(-self.alpha, kind="stable")

    def top(self, n_features: int) -> np.ndarray:
        """Indices of the ``n_features`` largest weights."""
        return self.ranking[:n_features]

    @property
    def n_selected(self) -> int:
        """Number of features above the sparsity gap (:func:`sparsity_gap`)."""
        return self.gap.n_selected

    @cached_property
    def gap(self) -> SparsityGap:
        """Where the sorted weights break and how clearly (:func:`find_sparsity_gap`)."""
        return find_sparsity_gap(self.alpha)

    @cached_property
    def default_k(self) -> "DefaultK":
        """How many features to select when nobody says: the sparsity gap's count where the gap
        is clear, else the smallest count holding half of the squared weight (:func:`default_k`)."""
        return default_k(self.alpha, self.gap)


@dataclass(frozen=True)
class SparsityGap:
    """Outcome of :func:`find_sparsity_gap`.

    Attributes
    ----------
    n_selected : int
        Number of weights in the high group (at least 1).
    separability : float
        Share of the weights' variance explained by the split into the two groups (between-group
        over total variance, Otsu's eta), in [0, 1]: 1 when the weights take two values, 0.75
        for weights spread evenly between their extremes, 0 when all are equal.
    ratio : float
        Mean of the high group over the mean of the low group (``inf`` when the low group's mean
        is not positive).
    clear : bool
        Whether ``separability >= threshold``: the weights break into a few high values and a
        tail, rather than falling smoothly.
    threshold : float
        The separability a clear gap needs.
    """

    n_selected: int
    separability: float
    ratio: float
    clear: bool
    threshold: float = GAP_CLEAR


@dataclass(frozen=True, eq=False)
class TopographicMap:
    """Outcome of :func:`topographic_map` ([SW04] Sec. 4, Fig. 2).

    Attributes
    ----------
    alphas : ndarray, shape (rounds, n_features)
        The weight vector of each round.
    directions : ndarray, shape (rounds, n_features, 2)
        Per round, each feature's unit direction in the frame of the two leading eigenvectors
        of that round's G (the MDS-like coordinization of [SW04] Sec. 4); 0 for left-out features.
    coordinates : ndarray, shape (rounds, n_features)
        The same direction as an angle in radians: the 1-D coordinate of each feature per round.
    spectra : ndarray, shape (rounds, n_eigenvalues)
        Leading eigenvalues of each round's G.
    results : tuple of QAlphaResult
        The full result of each round.
    """

    alphas: np.ndarray
    directions: np.ndarray
    coordinates: np.ndarray
    spectra: np.ndarray
    results: tuple

    @property
    def stopped(self) -> bool:
        """The progress callback stopped a round: the rounds after it were not run."""
        return any(result.stopped for result in self.results)


@dataclass(frozen=True, eq=False)
class PositivityResult:
    """Outcome of :func:`positive_eigenvector_probability` ([WS03] Fig. 1a)."""

    n_values: np.ndarray
    probability: np.ndarray
    n_trials: int
    mean: float
    std: float


# ---------------------------------------------------------------------------- operators
class _Problem:
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

    @property
    def is_psd(self):
        return self.criterion == "sum" and self.pair_factor is None

    # alpha from the operator's eigenvector ----------------------------------
    def to_alpha(self, beta):
        alpha = beta if self.side_scale is None else self.side_scale * beta
        return orient(alpha / np.linalg.norm(alpha))

    def to_beta(self, alpha):
        beta = alpha if self.side_scale is None else alpha / self.side_scale
        return beta / np.linalg.norm(beta)

    def objective(self, alpha, Z, Pt=None):
        """Criterion value at unit ``alpha``; ``Z = A_alpha Q`` gives ``alpha^T G alpha``."""
        value = float(np.sum(Z * Z))
        if self.criterion == "gap":
            value = 2.0 * value - float(alpha @ self.square_matvec(alpha))
        if self.side_scale is not None:
            value /= float(np.sum((alpha / self.side_scale) ** 2))
        elif self.pair_factor is not None:
            value -= self.lam * float(np.sum((self.pair_factor.T @ alpha) ** 2))
        return value


def _leading_eigvec(problem, Pt, beta0, solver, eig_tol, power_steps):
    """Leading (largest algebraic) eigenvector of the step-2 operator and its eigenvalue."""
    if solver == "dense":
        C = problem.dense_operator(Pt)
        if problem.n <= 2 * DENSE_LIMIT:
            values, vectors = linalg.eigh(C, subset_by_index=[problem.n - 1, problem.n - 1])
            return vectors[:, 0], float(values[0])
        # Explicit G that is too large for a full decomposition: Lanczos on the stored matrix.
        values, vectors = eigsh(C, k=1, which="LA", v0=beta0, tol=eig_tol)
        return vectors[:, 0], float(values[0])
    if solver == "lanczos":
        op = LinearOperator((problem.n, problem.n), dtype=problem.features.dtype,
                            matvec=lambda v: problem.operator_matvec(Pt, np.ravel(v)))
        try:
            values, vectors = eigsh(op, k=1, which="LA", v0=beta0, tol=eig_tol,
                                    ncv=min(problem.n, 20), maxiter=max(1000, 10 * problem.n))
        except ArpackNoConvergence as exc:  # keep the best Ritz vector; convergence is reported
            if exc.eigenvectors.shape[1] == 0:
                raise
            values, vectors = exc.eigenvalues, exc.eigenvectors
        return vectors[:, 0], float(values[0])
    # Power steps warm-started from the previous alpha: the fixed point is the same (alpha an
    # eigenvector of G(Q)), and the operator is positive semi-definite so no shift is needed.
    beta = beta0
    value = 0.0
    for _ in range(power_steps):
        image = problem.operator_matvec(Pt, beta)
        value = float(beta @ image)
        beta = image / np.linalg.norm(image)
    return beta, value


def _class_subspace(labels, q):
    """Orthonormal basis of the centred class-indicator matrix: the supervised Q (c - 1 columns)."""
    classes, codes = np.unique(labels, return_inverse=True)
    indicator = np.zeros((q, classes.size))
    indicator[np.arange(q), codes] = 1.0
    indicator -= indicator.mean(axis=0)
    Q, R = np.linalg.qr(indicator)
    keep = np.abs(np.diag(R)) > 1e-10 * np.sqrt(q)
    return Q[:, keep][:, : classes.size - 1]


# ---------------------------------------------------------------------------- the iteration
def _run(problem, Q0, *, method, fixed_Q, max_iter, tol, solver, eig_tol, power_steps, progress,
         random_state=None, alpha0=None):
    if solver == "power" and method == "power" and not fixed_Q and power_steps == 1:
        return _run_simultaneous(problem, Q0, max_iter=max_iter, tol=tol, progress=progress,
                                 random_state=random_state, alpha0=alpha0)
    features = problem.features
    Q = Q0
    Pt = features.transposed_times(Q)  # k x n, rows p_l = M q_l
    beta, alpha = _start_weights(problem, alpha0)
    history = []
    converged = stopped = False
    eigenvalue = np.nan
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        # Steps 1-2: alpha = leading eigenvector of G(Q^(r-1)) (or of its side-information form).
        beta, eigenvalue = _leading_eigvec(problem, Pt, beta, solver, eig_tol, power_steps)
        new_alpha = problem.to_alpha(beta)
        beta = problem.to_beta(new_alpha)
        change = float(np.linalg.norm(new_alpha - alpha))
        alpha = new_alpha
        # Steps 3-4: Z = A_alpha Q^(r-1) = M^T (alpha o P); ||Z||_F^2 = alpha^T G(Q^(r-1)) alpha.
        Z = features.times((Pt * alpha).T)
        history.append(problem.objective(alpha, Z))
        # With Q fixed (supervised) alpha is one leading eigenvector: an exact solve has it at
        # once; power steps reach it only over as many iterations as alpha needs to settle (one
        # step was taken for the answer before, off the eigenvector: an objective 6% lower on the
        # AR faces, tests/core/selection/test_qalpha.py)
        exact_once = fixed_Q and solver != "power"
        if exact_once or (n_iter > 1 and change <= tol):
            converged = True
        if report(progress, n_iter, max_iter, history[-1]) and not converged:
            stopped = True
        if converged or stopped:
            break
        if fixed_Q:
            continue
        # Step 5 (power-embedded): one orthogonal-iteration step, Z -> Q R.
        if method == "power":
            Q, R = np.linalg.qr(Z)
            if np.min(np.abs(np.diag(R))) <= 1e-13 * np.max(np.abs(np.diag(R))):
                # A_alpha has rank below k: keep the columns it spans and complete the basis.
                Q = leading_sample_vectors(features, alpha, Q.shape[1], random_state)
        else:  # basic scheme: Q = the k leading eigenvectors of A_alpha
            Q = leading_sample_vectors(features, alpha, Q.shape[1], random_state)
        Pt = features.transposed_times(Q)
    return dict(alpha=alpha, Q=Q, history=np.asarray(history), n_iter=n_iter,
                converged=converged, eigenvalue=eigenvalue, stopped=stopped)


#: The simultaneous iteration refreshes P = M Q exactly this often (P is otherwise updated as U R^-1).
_P_REFRESH = 10


def _run_simultaneous(problem, Q0, *, max_iter, tol, progress, random_state=None, alpha0=None):
    """Power-embedded Q-alpha with one power step on alpha, two passes over the data per iteration.

    Alpha and Q are updated from the same iterate: with ``T = M^T (alpha o P) = A_alpha Q`` and
    ``U = M T``, ``G(Q) alpha = sum_l p_l o u_l`` gives the power step on alpha, ``T -> Q R`` the
    orthogonal-iteration step on Q, and ``M Q_new = U R^{-1}`` the next ``P``: one product with
    ``M^T`` and one with ``M`` per iteration instead of four. The fixed points are those of
    Definition 2 (alpha an eigenvector of G(Q), Q spanning the leading eigenvectors of A_alpha);
    ``history`` holds ``alpha^T G(Q) alpha = ||T||_F^2`` of each iterate.
    """
    features = problem.features
    Q = Q0
    Pt = features.transposed_times(Q)
    beta, alpha = _start_weights(problem, alpha0)
    history = []
    converged = stopped = False
    eigenvalue = np.nan
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        # T = A_alpha Q (q x k) and U = (M T)^T (k x n): one pass over the data
        T, U = features.fused((Pt * alpha).T)
        history.append(problem.objective(alpha, T))
        if report(progress, n_iter, max_iter, history[-1]):
            stopped = True
            break
        image = np.einsum("ln,ln->n", Pt, U)  # G(Q) alpha
        if problem.side_scale is not None:  # the symmetric operator S^1/2 G S^1/2 acting on beta
            image *= problem.side_scale
        eigenvalue = float(beta @ image)
        beta = image / np.linalg.norm(image)
        new_alpha = problem.to_alpha(beta)
        beta = problem.to_beta(new_alpha)
        change = float(np.linalg.norm(new_alpha - alpha))
        alpha = new_alpha
        Q, R = np.linalg.qr(T)
        diag = np.abs(np.diag(R))
        if diag.min() <= 1e-10 * diag.max() or n_iter % _P_REFRESH == 0:
            if diag.min() <= 1e-13 * diag.max():
                Q = leading_sample_vectors(features, alpha, Q.shape[1], random_state)
            Pt = features.transposed_times(Q)
        else:
            # P_new = (M T) R^-1, i.e. Pt_new = R^-T U; R is k x k and well conditioned here.
            Pt = np.linalg.inv(R).T @ U
        if n_iter > 1 and change <= tol:
            converged = True
            break
    return dict(alpha=alpha, Q=Q, history=np.asarray(history), n_iter=n_iter,
                converged=converged, eigenvalue=eigenvalue, stopped=stopped)


def _start_weights(problem, alpha0=None):
    """The first iterate of the weights, in the operator's variable (``beta``) and as ``alpha``:
    every ``beta`` equal, or a warm start from ``alpha0`` (the weights at a neighbouring lambda)."""
    if alpha0 is None or not np.all(np.isfinite(alpha0)) or not np.any(alpha0):
        beta = np.full(problem.n, 1.0 / np.sqrt(problem.n), dtype=problem.features.dtype)
    else:
        beta = problem.to_beta(np.asarray(alpha0, dtype=problem.features.dtype))
    return beta, problem.to_alpha(beta)


def _initial_Q(problem, k, init, rng):
    if init == "uniform":
        # Every alpha equal: A = M^T M (q x q); its k leading eigenvectors. With side
        # information "equal" is meant in the symmetric variable, alpha ~ (D + lam I)^{-1/2} 1,
        # so the start already discounts the structure the side data carry.
        alpha0 = problem.to_alpha(np.ones(problem.n, dtype=problem.features.dtype))
        return leading_sample_vectors(problem.features, alpha0, k, rng)
    Q, _ = np.linalg.qr(rng.standard_normal((problem.q, k)))
    return Q


def _resolve_solver(solver, n, psd, streamed=False):
    solvers = ("auto", "dense", "lanczos", "power")
    if solver not in solvers:
        raise InputError(f"solver must be one of {solvers}; got {solver!r}.")
    if solver == "auto":
        # On sparse and chunked data every product is a pass over the data: the simultaneous
        # power iteration needs one pass per iteration where a Lanczos solve needs tens.
        if streamed and psd:
            return "power"
        if n <= AUTO_DENSE_LIMIT:
            return "dense"
        # Positive semi-definite (the sum criterion without pairs): power steps reach the same
        # fixed point 7-18x sooner than Lanczos solves, whole runs (the bundled sets at tol 1e-6:
        # the same top 5%, objectives within 3e-10; benchmarks/bench_qalpha.py, bench_tools.py)
        return "power" if psd else "lanczos"
    if solver == "power" and not psd:
        raise InputError("The power solver needs a positive semi-definite operator; the gap "
                         "criterion and pairwise side information make it indefinite. "
                         "Use solver='lanczos' or 'auto'.")
    return solver


def _pair_factor(pairs, shape, features):
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


def q_alpha(X, k="auto", *, labels=None, side=None, pairs=None, lam="auto", criterion="sum",
            method="power", init="uniform", n_init=1, random_state=None, max_iter=500,
            tol=1e-6, solver="auto", eig_tol=1e-10, power_steps=1,
            progress: ProgressCallback | None = None,
            dtype=np.float64, memory_limit: int | None = None, n_clusters: int | None = None) -> QAlphaResult:
    """Select features by the Q-alpha algorithm: positive, sparse weights from spectral coherence.

    Maximises ``trace(Q^T A_alpha^T A_alpha Q)`` over unit ``alpha`` and orthonormal ``Q``
    (``A_alpha = sum_i alpha_i m_i m_i^T``), [WS03] Definition 1 / Eq. (1).

    Parameters
    ----------
    X : array_like, scipy.sparse matrix or dask.array.Array, shape (n_samples, n_features)
        Main data (the papers' ``M`` is ``X.T``). Sparse matrices are never densified: centring
        and scaling enter the products (:mod:`core.matrix.normalised`). Dask arrays (dense or with sparse
        chunks, in memory, on disk or on a ``dask.distributed`` cluster) are read one row block
        at a time, one pass per iteration with the power solver. The gap criterion and
        :func:`topographic_map` need dense data.
    k : int or "auto"
        Number of clusters (columns of Q), ``1 <= k < n_samples``. ``"auto"`` (the default)
        chooses it from the data without labels (:func:`core.selection.automatic.choose_settings`:
        c or 2c for the ``n_clusters`` c, whichever gives k-means the most reproducible clusters;
        the result's ``auto`` says what was chosen and why). With ``labels`` it is ignored: the
        supervised mode uses ``c - 1`` for ``c`` classes.
    labels : array_like, shape (n_samples,), optional
        Supervised mode. [WS03] and [SW04] defer it to a technical report; we fix ``Q`` to the
        orthonormalised, centred class-indicator matrix (``c - 1`` columns), so
        ``G_ij = (m_i^T m_j) m_i^T Q Q^T m_j`` weighs pairs of features by how well both separate
        the class means, and alpha is the leading eigenvector of this single ``G`` (one step).
    side : array_like, shape (n_side, n_features), optional
        Side data ([SW04] Definition 3): alpha is the leading eigenvector of ``(D + lam I)^{-1} G``
        with ``D = diag`` of the side features' variances. So that ``lam`` does not depend on
        units, each side variance is divided by the same feature's variance in the main data
        (the side data get the main data's feature scaling). Solved in the symmetric form
        ``S^{1/2} G S^{1/2}``, ``S = (D + lam I)^{-1}``; the objective is the quotient of Eq. (2).
    pairs : (n_pairs, 2) int array, or tuple of two (n_pairs, n_features) arrays, optional
        Pairs of points known to lie in different clusters ([SW04] Sec. 5): alpha is the leading
        eigenvector of ``G - lam B``, ``B = sum_pairs (x o y)(x o y)^T`` (Eq. 3), with ``x, y``
        normalised like the main features. Index pairs refer to rows of ``X``.
    lam : float or "auto"
        Weight of the side information (``>= 0``). For ``side``, ``lam = 0`` is admissible only
        when no side variance vanishes. ``"auto"`` (the default): 0 without side information;
        with it, chosen from 0.1, 1 and 10 as k is (the supervised mode needs it given).
    criterion : {"sum", "gap"}
        ``"sum"``: the sum of the k largest squared eigenvalues of ``A_alpha`` (Eq. 1).
        ``"gap"``: ``sum_{i<=k} lambda_i^2 - sum_{j>k} lambda_j^2`` ([WS03] Sec. 2), i.e.
        ``alpha^T (2 G - (M M^T) o (M M^T)) alpha``.
    method : {"power", "basic"}
        ``"power"``: the power-embedded iteration ([WS03] Definition 2): one orthogonal-iteration
        step ``Z = A_alpha Q``, ``Z -> QR`` per update of alpha. ``"basic"``: alternate alpha
        and the exact k leading eigenvectors of ``A_alpha`` ([WS03] Sec. 3).
    init : {"uniform", "random"}
        ``Q^(0)``: ``"uniform"`` takes the k leading eigenvectors of ``M^T M`` (every alpha
        equal), which finds Weston's relevant features where random starts often do not
        (measured on Weston's linear data, 200 samples, k = 2, data seeds 0-9: from random
        starts the six largest weights held no relevant feature in 7 of 10 seeds; from this
        start features 0, 1 and 2 were the three largest in 10 of 10); ``"random"`` a random
        orthonormal matrix.
    n_init : int
        Number of starts; the first uses ``init``, the others random ``Q^(0)``. The start with
        the largest final objective is returned.
    random_state : int, Generator or None
        Seeds the random starts.
    max_iter : int
        Maximum number of iterations per start.
    tol : float
        Convergence: the Euclidean change of the unit vector alpha between two iterations is at
        most ``tol``.
    solver : {"auto", "dense", "lanczos", "power"}
        How step 2 finds the leading eigenvector. ``"dense"`` forms ``G`` explicitly;
        ``"lanczos"`` runs ARPACK on products with ``G`` (matrix-free), warm-started from the
        previous alpha; ``"power"`` takes ``power_steps`` products per iteration (matrix-free;
        converges to the same fixed point, for the ``"sum"`` criterion without pairs). With one
        power step, alpha and Q are updated simultaneously from the same iterate, which needs
        two passes over the data per iteration instead of four (see ``_run_simultaneous``).
        ``"auto"``: dense up to 100 features; beyond, power steps where they apply (the sum
        criterion without pairs) and Lanczos otherwise; power steps for sparse and chunked data
        (one pass over the data per iteration).
    eig_tol : float
        Relative tolerance of the Lanczos solver.
    power_steps : int
        Products with G per iteration for ``solver="power"``.
    progress : callable(report), optional
        Called after every iteration with a :class:`core.progress.Progress` (``done`` the
        iteration of this start, ``total`` = ``max_iter``, ``objective``). If it returns ``False``
        (exactly), the iteration stops there (and no further start is made): the result has
        ``stopped=True`` and the weights of the last iteration done, so a user interface can
        offer a "Stop" that keeps them. A run that ends at ``max_iter`` unconverged warns
        ``ConvergenceWarning`` (besides ``converged=False``).
    dtype : numpy dtype
        Working precision of the normalised dense data (float64 by default; float32 halves
        memory and time on very large data). Sparse and chunked data use float64 products.
    memory_limit : int, optional
        Bytes the row blocks of a Dask array may take at once (half the machine's memory by
        default); chunks that do not fit are refused with the chunk size that would.
    n_clusters : int, optional
        For ``"auto"``: the clusters k-means will be asked for (estimated from the spectrum when
        not given). The automatic choice needs dense data and an integer ``random_state``
        (None means 0).

    Returns
    -------
    QAlphaResult

    Raises
    ------
    InputError
        On invalid shapes, NaN/inf, ``k`` out of range, negative ``lam``, side data with another
        number of features, vanishing side variances with ``lam = 0``, pairs out of range, or
        when every feature is constant.
    """
    has_side = side is not None or pairs is not None
    auto_k, auto_lam = (isinstance(value, str) and value == "auto" for value in (k, lam))
    if labels is not None:
        if auto_lam and has_side:
            raise InputError("With labels (the supervised mode) give lam: the automatic choice is label-free "
                             "and made for the unsupervised mode.")
        k, auto_k = (None, False) if auto_k else (k, False)
    if auto_lam and not has_side:
        lam, auto_lam = 0.0, False
    if auto_k or auto_lam:
        from .automatic import choose_settings

        check_settings(lam=0.0 if auto_lam else lam, init=init, n_init=n_init, max_iter=max_iter)
        auto = choose_settings(X, side=side, pairs=pairs, k=k, lam=lam, n_clusters=n_clusters,
                               random_state=0 if random_state is None else random_state, init=init, n_init=n_init,
                               criterion=criterion, method=method, max_iter=max_iter, tol=tol, solver=solver,
                               eig_tol=eig_tol, power_steps=power_steps, dtype=dtype, memory_limit=memory_limit)
        return replace(auto.results[(auto.k, auto.lam)], auto=auto)
    lam, n_init, max_iter = check_settings(lam=lam, init=init, n_init=n_init, max_iter=max_iter)
    prepared = _prepare(X, k, labels=labels, side=side, pairs=pairs, criterion=criterion, method=method,
                        max_iter=max_iter, tol=tol, solver=solver, eig_tol=eig_tol, power_steps=power_steps,
                        dtype=dtype, memory_limit=memory_limit)
    return _solve(prepared, lam, init=init, n_init=n_init, random_state=random_state, progress=progress)


@dataclass(eq=False)
class _Prepared:
    """What a Q-alpha run needs that does not depend on ``lam``: the normalised features, the side
    variances ``D`` or the pairs' factor, the checked settings. Built once for a λ path."""

    features: object
    n_features: int
    constant: np.ndarray
    criterion: str
    method: str
    fixed_Q: bool
    labels: object
    k: int
    side_diagonal: np.ndarray | None  # D of the kept features
    side_diagonal_full: np.ndarray | None
    pair_factor: np.ndarray | None
    settings: dict  # max_iter, tol, solver, eig_tol, power_steps
    dtype: object


def _prepare(X, k, *, labels, side, pairs, criterion, method, max_iter, tol, solver, eig_tol, power_steps,
             dtype, memory_limit) -> _Prepared:
    """The checks of :func:`q_alpha` and everything of a run that ``lam`` does not change."""
    data = data_matrix(X, memory_limit=memory_limit)
    n_samples, n_features = data.shape
    _check_criterion(criterion)
    if criterion == "gap":
        data.dense("The gap criterion needs q x q products per feature and runs on dense in-memory data "
                   "only; use criterion='sum' on sparse or chunked data, or pass a dense subset.")
    if method not in ("power", "basic"):
        raise InputError(f"method must be 'power' or 'basic'; got {method!r}.")
    if side is not None and pairs is not None:
        raise InputError("Give side information either as a side data set or as pairs, not both.")
    power_steps = _check_positive_int(power_steps, "power_steps")
    tol = _check_real(tol, "tol", low=0.0, low_open=True)
    eig_tol = _check_real(eig_tol, "eig_tol", low=0.0)

    fixed_Q = labels is not None
    if fixed_Q:
        labels = _as_labels(labels, n_samples)
        n_classes = np.unique(labels).size
        if n_classes < 2:
            raise InputError("The supervised mode needs at least two classes in the labels.")
        if k is not None and k != n_classes - 1:
            raise InputError(f"With labels, k is the number of classes minus one ({n_classes - 1}); "
                             f"got k={k}. Leave k out or set it to {n_classes - 1}.")
        k = n_classes - 1
    if k is None:
        raise InputError("Give k, the number of clusters, or labels for the supervised mode.")
    k = check_clusters(n_samples, k)

    features = data.normalised(dtype)
    kept, scale = features.kept, features.scale
    if kept.size == 0:
        raise InputError("Every feature is constant over the samples (or varies only by rounding at its "
                         "magnitude, e.g. values near 1e16 that differ by less than 1): there is nothing to "
                         "select. Check that the right columns were loaded; subtract a common offset first.")
    constant = np.setdiff1d(np.arange(n_features), kept)

    diagonal = side_diagonal_full = None
    if side is not None:
        if isinstance(side, _SideVariances):
            diagonal = side.diagonal[kept]
        else:
            diagonal = side_variance(side, kept, scale, n_samples, n_features)
        side_diagonal_full = np.zeros(n_features)
        side_diagonal_full[kept] = diagonal

    pair_factor = None
    if pairs is not None:
        pair_factor = _pair_factor(pairs, data.shape, features)
    return _Prepared(features=features, n_features=n_features, constant=constant, criterion=criterion,
                     method=method, fixed_Q=fixed_Q, labels=labels, k=k, side_diagonal=diagonal,
                     side_diagonal_full=side_diagonal_full, pair_factor=pair_factor, dtype=dtype,
                     settings=dict(max_iter=max_iter, tol=tol, solver=solver, eig_tol=eig_tol, power_steps=power_steps))


def _solve(prepared, lam, *, init="uniform", n_init=1, random_state=None, progress=None, warm=None) -> QAlphaResult:
    """Q-alpha at ``lam`` on prepared data. ``warm``, a result at a neighbouring ``lam``, is the
    first start (its ``Q`` and ``alpha``) instead of ``init``."""
    features, dtype, settings = prepared.features, prepared.dtype, prepared.settings
    kept = features.kept
    side_scale = None
    if prepared.side_diagonal is not None:
        side_scale = side_scaling(prepared.side_diagonal, lam).astype(dtype)
    problem = _Problem(features, prepared.criterion, side_scale=side_scale, pair_factor=prepared.pair_factor, lam=lam)
    solver = _resolve_solver(settings["solver"], kept.size, problem.is_psd, features.reads_data_per_product)
    rng = np.random.default_rng(random_state)
    n_samples = features.n_samples

    best, restart_objectives, stopped = None, [], False
    # thin products: one BLAS thread where threads cost more than they save (core.matrix.threads)
    with blas_threads_for(n_samples * kept.size * prepared.k):
        for start in range(n_init):
            alpha0 = None
            if prepared.fixed_Q:
                Q0 = _class_subspace(prepared.labels, n_samples)
            elif start == 0 and warm is not None:
                Q0, alpha0 = warm.Q, warm.alpha[kept]
            else:
                Q0 = _initial_Q(problem, prepared.k, init if start == 0 else "random", rng)
            run = _run(problem, Q0.astype(dtype), method=prepared.method, fixed_Q=prepared.fixed_Q,
                       max_iter=settings["max_iter"], tol=settings["tol"], solver=solver, eig_tol=settings["eig_tol"],
                       power_steps=settings["power_steps"], progress=progress, random_state=rng, alpha0=alpha0)
            restart_objectives.append(run["history"][-1])
            if best is None or run["history"][-1] > best["history"][-1]:
                best = run
            stopped = run["stopped"]
            if prepared.fixed_Q or stopped:
                break

    alpha = np.zeros(prepared.n_features)
    alpha[kept] = best["alpha"]
    _require_finite(alpha, "Q-alpha's weights")
    notes, converged = result_warnings(alpha, best["history"], best["converged"])
    if not converged and not stopped:
        warn_not_converged("Q-alpha", best["n_iter"], stacklevel=4)  # the caller of q_alpha, q_alpha_path or at
    method = prepared.method
    return QAlphaResult(
        alpha=alpha, Q=np.asarray(best["Q"], dtype=np.float64), objective=float(best["history"][-1]),
        history=best["history"].astype(np.float64), n_iter=best["n_iter"],
        converged=converged, eigenvalue=float(best["eigenvalue"]),
        method="supervised" if prepared.fixed_Q else ("power-embedded" if method == "power" else "basic"),
        criterion=prepared.criterion, solver=solver, k=prepared.k, lam=float(lam), constant_features=prepared.constant,
        side_diagonal=prepared.side_diagonal_full, restart_objectives=np.asarray(restart_objectives),
        stopped=bool(stopped), warnings=notes,
    )


@dataclass(frozen=True)
class _SideVariances:
    """Side information given as the side variances ``D`` themselves (one per feature) rather than
    as side data: what :func:`topographic_map` builds from its earlier rounds."""

    diagonal: np.ndarray


# ---------------------------------------------------------------------------- extensions
def topographic_map(X, k, rounds=2, lam=0.01, *, n_eigenvalues=10, **options) -> TopographicMap:
    """Topographical model of all relevant feature subsets ([SW04] Sec. 4, Fig. 2).

    Round 1 is plain Q-alpha. Round ``r > 1`` runs Q-alpha with side information whose diagonal
    ``D`` is the sum of ``alpha^2`` over the earlier rounds, so that features already chosen are
    inhibited and another solution set can surface. Each round also places every feature in the
    frame of the two leading eigenvectors of that round's ``G`` (as in multi-dimensional
    scaling) and keeps only the direction of that 2-D point: one coordinate per feature and round.

    Parameters
    ----------
    X : array_like, shape (n_samples, n_features)
    k : int
        Number of clusters.
    rounds : int
        Number of rounds (``>= 1``).
    lam : float
        ``> 0``: the ridge of ``D + lam I`` (small values inhibit earlier features strongly).
    n_eigenvalues : int
        How many leading eigenvalues of each round's G to keep.
    **options
        Passed to :func:`q_alpha` (``init``, ``max_iter``, ``tol``, ``random_state``,
        ``progress``, ...). A round the progress callback stops is the last: the map holds the
        rounds done (``TopographicMap.stopped``).
    """
    rounds = _check_positive_int(rounds, "rounds")
    lam = _check_real(lam, "lam (the topographical map needs lam > 0)", low=0.0, high=LAM_MAX, low_open=True)
    for reserved in ("side", "pairs", "labels"):
        if reserved in options:
            raise InputError(f"topographic_map does not take {reserved!r}: each round's side "
                             "information is made from the earlier rounds.")
    X = dense_matrix(X)
    n_features = X.shape[1]
    accumulated = np.zeros(n_features)
    results, directions, spectra = [], [], []
    features = None
    for r in range(rounds):
        result = q_alpha(X, k, lam=lam, side=_SideVariances(accumulated) if r > 0 else None, **options)
        if features is None:
            features = DenseFeatures(X)
            Mt, kept = features.Mt, features.kept
        accumulated = accumulated + result.alpha**2
        results.append(result)
        # The coordinate frame: leading eigenvectors of this round's G (not of its SI form).
        Pt = result.Q.T @ Mt
        n_kept = kept.size
        n_eig = min(max(n_eigenvalues, 2), n_kept)
        if n_kept <= 2 * DENSE_LIMIT:
            G = (Mt.T @ Mt) * (Pt.T @ Pt)
            values, vectors = linalg.eigh(G, subset_by_index=[n_kept - n_eig, n_kept - 1])
        else:
            problem = _Problem(features, "sum")
            op = LinearOperator((n_kept, n_kept), dtype=Mt.dtype,
                                matvec=lambda v: problem.g_matvec(Pt, np.ravel(v)))
            values, vectors = eigsh(op, k=min(n_eig, n_kept - 1), which="LA",
                                    v0=np.ones(n_kept) / np.sqrt(n_kept))
        order = np.argsort(-values)
        values, vectors = values[order], vectors[:, order]
        frame = vectors[:, :2] * np.where(vectors[:, 0].sum() < 0, -1.0, 1.0)
        norms = np.linalg.norm(frame, axis=1, keepdims=True)
        unit = np.divide(frame, norms, out=np.zeros_like(frame), where=norms > 0)
        full = np.zeros((n_features, 2))
        full[kept] = unit
        directions.append(full)
        spectrum = np.full(n_eigenvalues, np.nan)
        spectrum[: values.size] = values[:n_eigenvalues]
        spectra.append(spectrum)
        if result.stopped:  # the callback asked to stop: no further round
            break
    directions = np.asarray(directions)
    return TopographicMap(
        alphas=np.asarray([res.alpha for res in results]),
        directions=directions,
        coordinates=np.arctan2(directions[..., 1], directions[..., 0]),
        spectra=np.asarray(spectra),
        results=tuple(results),
    )


def pairs_from_labels(labels, n_pairs, random_state=None) -> np.ndarray:
    """Random pairs of samples with different labels: the side information of [SW04] Sec. 5.

    Returns an ``(n_pairs, 2)`` array of sample indices (distinct pairs where possible), for
    ``q_alpha(X, k, pairs=..., lam=...)`` when the known "different cluster" pairs come from labels.
    """
    labels = np.asarray(labels).ravel()
    n_pairs = _check_positive_int(n_pairs, "n_pairs")
    if np.unique(labels).size < 2:
        raise InputError("Pairs of points in different clusters need at least two distinct labels.")
    rng = np.random.default_rng(random_state)
    first = rng.integers(0, labels.size, size=4 * n_pairs + 16)
    second = rng.integers(0, labels.size, size=first.size)
    different = labels[first] != labels[second]
    candidates = np.unique(np.sort(np.c_[first, second][different], axis=1), axis=0)
    candidates = candidates[rng.permutation(len(candidates))]
    return candidates[:n_pairs]


def q_alpha_ranker(params: "QAlphaParameters", *, side=None, side_classes=None, n_pairs: int | None = None):
    """A ranking function ``rank(X, y)`` for the evaluation protocols (:func:`core.held_out_curves`,
    stability and accuracy curves) that runs Q-alpha with ``params`` and takes its side
    information ([SW04] Def. 3, Sec. 5) from the samples it is handed, so that a protocol that
    hands it a training fold keeps the held-out labels out of the side information too.

    Parameters
    ----------
    params : QAlphaParameters
        The run (k, criterion, λ, starts, tolerance, seed, supervised or not).
    side : array_like, shape (n_side, n_features), optional
        A fixed side data set W (it uses no labels).
    side_classes : sequence, optional
        The samples of ``X`` whose label in ``y`` is one of these classes form W; the others
        are the main data.
    n_pairs : int, optional
        Pairs of samples of ``X`` with different labels in ``y`` that must stay apart
        (:func:`pairs_from_labels` with ``params.random_state``).

    At most one of ``side``, ``side_classes`` and ``n_pairs``. ``rank`` returns the features'
    indices by decreasing alpha.
    """
    if sum(option is not None for option in (side, side_classes, n_pairs)) > 1:
        raise InputError("Give at most one kind of side information: side, side_classes or n_pairs.")
    fixed_side = None if side is None else np.asarray(side, dtype=np.float64)

    def rank(X, y=None):
        X = np.asarray(X, dtype=np.float64)
        if (side_classes is not None or n_pairs is not None or params.supervised) and y is None:
            raise InputError("This ranking takes its side information or its Q from the labels: pass y.")
        main, labels, side_X, pairs = X, None if y is None else np.asarray(y).ravel(), fixed_side, None
        if side_classes is not None:
            in_side = np.isin(labels, list(side_classes))
            if not in_side.any() or in_side.all():
                raise InputError(f"The side classes {list(side_classes)} must leave samples on both sides.")
            main, labels, side_X = X[~in_side], labels[~in_side], X[in_side]
        elif n_pairs is not None:
            pairs = pairs_from_labels(labels, n_pairs, random_state=params.random_state)
        return params.run(main, labels=labels, side=side_X, pairs=pairs).ranking

    return rank


def feature_scaling(alpha) -> np.ndarray:
    """Per-feature factors that give the samples Q-alpha's geometry: ``sqrt(max(alpha, 0))``.

    The affinity of [WS03] Definition 1, ``A_alpha = sum_i alpha_i m_i m_i^T``, is the Gram
    matrix of the normalised features (centred, unit norm: :func:`preprocess_features`) scaled
    by ``sqrt(alpha_i)``; so k-means or nearest neighbours on the standardised ``X`` times
    ``feature_scaling(alpha)`` see the distances that alpha was optimised for. Tiny negative
    weights (rounding) count as 0.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    if not np.isfinite(alpha).all():
        raise InputError("alpha contains NaN or infinite values.")
    return np.sqrt(np.clip(alpha, 0.0, None))


def find_sparsity_gap(alpha, threshold: float = GAP_CLEAR) -> SparsityGap:
    """Where the sorted weights break, and how clearly ([WS03] Sec. 4, [Sha] "sparsity gap").

    The sorted weights of Q-alpha often fall into a few high values and a long tail near zero.
    The break is found as the two-group split of the sorted weights with the largest
    between-group variance (Otsu's criterion on the 1-D values). The split exists for any
    weights; whether it is a gap is measured by the share of the weights' variance that the
    split explains (``separability``): on weights that fall smoothly it stays near the 0.75 of
    evenly spread values, where a few features stand out it approaches 1.

    Parameters
    ----------
    alpha : array_like, shape (n_features,)
    threshold : float, default GAP_CLEAR
        The separability from which the gap counts as clear (see :data:`GAP_CLEAR`).

    Returns
    -------
    SparsityGap
    """
    alpha = np.asarray(alpha, dtype=np.float64).ravel()
    if alpha.size == 0:
        raise InputError("alpha is empty.")
    if not np.isfinite(alpha).all():
        raise InputError("alpha contains NaN or infinite values.")
    threshold = _check_real(threshold, "threshold", low=0.0, high=1.0)
    if alpha.size == 1:
        return SparsityGap(1, 0.0, float("inf") if alpha[0] > 0 else 1.0, False, threshold)
    values = np.sort(alpha)[::-1]
    n = values.size
    head = np.arange(1, n)  # size of the high group
    cumulative = np.cumsum(values)[:-1]
    high_mean = cumulative / head
    low_mean = (values.sum() - cumulative) / (n - head)
    between = head * (n - head) * (high_mean - low_mean) ** 2 / n ** 2
    best = int(np.argmax(between))
    total = float(values.var())
    # weights equal to rounding have no split worth the name
    separability = float(min(between[best] / total, 1.0)) if total > (1e-12 * np.abs(values).max()) ** 2 else 0.0
    ratio = float(high_mean[best] / low_mean[best]) if low_mean[best] > 0 else float("inf")
    return SparsityGap(int(head[best]), separability, ratio, separability >= threshold, threshold)


#: Share of the squared weight that the default selection holds when the sorted weights show no
#: clear sparsity gap (:func:`default_k`).
DEFAULT_WEIGHT_SHARE = 0.5


@dataclass(frozen=True)
class DefaultK:
    """Outcome of :func:`default_k`: the count ``k`` and the rule that chose it, in words."""

    k: int
    rule: str


def weight_share_count(alpha, share: float = DEFAULT_WEIGHT_SHARE) -> int:
    """The smallest number of features whose weights hold ``share`` of the squared weight.

    With the sorted positive weights ``a_1 >= a_2 >= ...``, the smallest ``K`` with
    ``sum_{i<=K} a_i^2 >= share * sum_i a_i^2`` (negative weights, possible with side information,
    count as 0: they mark features the criterion pushes away). Q-alpha's alpha has unit norm, so
    without negative weights the total is 1 and the ``K`` features hold half of ``||alpha||^2``.
    """
    alpha = np.asarray(alpha, dtype=np.float64).ravel()
    if alpha.size == 0 or not np.isfinite(alpha).all():
        raise InputError("alpha must be a non-empty vector of finite weights.")
    if not 0.0 < share <= 1.0:
        raise InputError(f"share must be in (0, 1]; got {share}.")
    squared = np.sort(np.maximum(alpha, 0.0))[::-1] ** 2
    total = squared.sum()
    if total == 0.0:
        return int(alpha.size)
    return int(min(np.searchsorted(np.cumsum(squared), share * total * (1.0 - 1e-12)) + 1, alpha.size))


def default_k(alpha, gap: SparsityGap | None = None, share: float = DEFAULT_WEIGHT_SHARE) -> DefaultK:
    """The number of features a page selects before the user chooses: the count above the
    sparsity gap when the gap is clear ([WS03] Sec. 4), else :func:`weight_share_count`.

    Where the weights fall smoothly the gap's best split is an arbitrary point of a smooth curve
    (about 40% of the pixels of the AR faces); half of the squared weight is a stated rule that
    keeps the features carrying most of the weighting (20% of the AR pixels;
    ``benchmarks/bench_default_k.py`` checks it on every bundled set against half the features).
    """
    gap = find_sparsity_gap(alpha) if gap is None else gap
    if gap.clear:
        return DefaultK(int(gap.n_selected), "sparsity gap")
    return DefaultK(weight_share_count(alpha, share), f"{share:.0%} of the squared weight")


def sparsity_gap(alpha) -> int:
    """Number of features above the break in the sorted weights: ``find_sparsity_gap(alpha).n_selected``.

    Parameters
    ----------
    alpha : array_like, shape (n_features,)

    Returns
    -------
    int
    """
    return find_sparsity_gap(alpha).n_selected


def positive_eigenvector_probability(n_values, n_trials=200, mean=1.0 / 6.0,
                                     std=np.sqrt(2.0) / 6.0, random_state=None) -> PositivityResult:
    """Probability that the leading eigenvector of a random symmetric G is non-negative ([WS03] Fig. 1a).

    ``G`` is symmetric with i.i.d. ``N(mean, std^2)`` entries on and above the diagonal; the
    leading eigenvector (sign fixed so that it sums to a positive number) counts as positive when
    none of its entries is negative. The defaults are the distribution of [WS03] Proposition 2.
    """
    n_values = np.atleast_1d(np.asarray(n_values))
    if n_values.ndim != 1 or n_values.size == 0 or not np.issubdtype(n_values.dtype, np.integer) \
            or n_values.min() < 1:
        raise InputError("n_values must be a list of positive integers (matrix sizes).")
    n_trials = _check_positive_int(n_trials, "n_trials")
    if not std >= 0:
        raise InputError(f"std must be non-negative; got {std!r}.")
    rng = np.random.default_rng(random_state)
    probability = np.empty(n_values.size)
    for index, n in enumerate(n_values):
        positive = 0
        for _ in range(n_trials):
            upper = np.triu(rng.normal(mean, std, size=(n, n)))
            G = upper + np.triu(upper, 1).T
            _, vector = linalg.eigh(G, subset_by_index=[n - 1, n - 1])
            vector = orient(vector[:, 0])
            positive += bool(np.all(vector >= 0))
        probability[index] = positive / n_trials
    return PositivityResult(n_values=n_values, probability=probability, n_trials=n_trials,
                            mean=float(mean), std=float(std))
