"""The Q-alpha family of spectral feature selection (Wolf & Shashua), matrix-free.

Implemented
-----------
* :func:`q_alpha` -- the power-embedded Q-alpha method ([WS03] Definition 2, [SW04] Definition 1)
  and the basic alternating scheme ([WS03] Sec. 3); the sum-of-squared-eigenvalues criterion
  (Eq. 1) or the spectral gap ([WS03] Sec. 2); a supervised mode; side information given as a side
  data set ([SW04] Definition 3) or as pairs of points in different clusters ([SW04] Sec. 5, Eq. 3).
* :func:`pairs_from_labels` -- pairs of samples in different classes, the side information of [SW04] Sec. 5.
* :func:`feature_scaling` -- the per-feature factors that give the samples Q-alpha's geometry.

Built on it: :mod:`.topographic` (the topographical map, [SW04] Sec. 4), :mod:`.sparsity` (the
sparsity gap and the default number of features), :mod:`.lambda_path` (a grid of λ),
:mod:`.automatic` (k and λ chosen from the data, on top of this estimator as ``LassoCV`` is on
``Lasso``).

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

import inspect
import json
from dataclasses import asdict, dataclass, field
from functools import cache, cached_property

import numpy as np

from ._qalpha import certify, iterate
from ._qalpha.prepare import CRITERION_NAMES, check_criterion as _check_criterion, prepare as _prepare, problem_at
from ._qalpha.problem import SideVariances, float64_problem, side_variance
from ._qalpha.start import first_iterate
from ._spectral import check_settings, continued_note
from ..errors import InputError
from ..progress import ProgressCallback
from ..matrix.normalised import preprocess_features
from ..matrix.threads import blas_threads_for
from ..validation import check_positive_int as _check_positive_int
from ..validation import check_real as _check_real
from ..validation import check_random_state
from .sparsity import DefaultK, SparsityGap, default_k, find_sparsity_gap

__all__ = ["DEFAULT_K", "DEFAULT_LAM", "DEFAULT_MAX_ITER", "QAlphaParameters", "QAlphaResult", "SideVariances", "q_alpha", "side_variance",
           "pairs_from_labels", "feature_scaling", "preprocess_features"]

#: Q-alpha's number of clusters (columns of Q, the k of [WS03] Eq. 1) when nobody gives one: two,
#: the fewest that have a structure to find. The same default for :func:`q_alpha`,
#: :class:`QAlphaParameters`, :class:`core.selection.selectors.QAlphaSelector` and the app's
#: Q-alpha page; the supervised mode takes the number of classes minus one instead.
DEFAULT_K = 2

#: Iterations per start when nobody says. Convergence is a residual test on the returned iterate,
#: which on slowly converging data takes more iterations than a test on the step did (Ben-Dor's
#: planted genes: 591 against 420; benchmarks/bench_solvers.py), so the cap is 1,000, not 500.
DEFAULT_MAX_ITER = 1000

#: The weight of side information when nobody gives one: the value [SW04]'s experiments and the
#: app's Q-alpha page start from. Without side data or pairs λ has no role (the result records 0).
DEFAULT_LAM = 0.1

@dataclass(frozen=True)
class QAlphaParameters:
    """The settings of a Q-alpha run apart from the data: what the app builds from its widgets,
    keys its caches with (:attr:`key`) and hands to :func:`q_alpha` (:meth:`run`); one type, so
    two pages that mean the same run share its result.

    The checks that need no data are made here; those that do (``k < n_samples``) in the run.
    ``k`` left out is :data:`DEFAULT_K`, as in :func:`q_alpha`; it stays None in the supervised
    mode (it is the number of classes minus one). ``lam`` left out is :data:`DEFAULT_LAM`.
    """

    k: int | None = None
    supervised: bool = False
    lam: float = DEFAULT_LAM
    criterion: str = "sum"
    init: str = "uniform"
    n_init: int = 1
    max_iter: int = DEFAULT_MAX_ITER
    tol: float = 1e-6
    random_state: int | None = 0

    def __post_init__(self):
        if self.supervised != bool(self.supervised):
            raise InputError(f"supervised must be True or False; got {self.supervised!r}.")
        if self.supervised and self.k is not None:
            raise InputError("In the supervised mode k is the number of classes minus one: leave k out.")
        if not self.supervised and self.k is None:
            object.__setattr__(self, "k", DEFAULT_K)
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
        The criterion at the returned ``(alpha, Q)``: ``alpha^T G(Q) alpha`` (sum of the k largest
        squared eigenvalues of ``A_alpha`` at a fixed point), the gap criterion, the side-information
        quotient ``alpha^T G alpha / alpha^T (D + lam I) alpha``, or ``alpha^T (G - lam B) alpha``.
    history : ndarray
        The objective of each iterate of the best start; the last is :attr:`objective`.
    n_iter : int
        Iterations of the best start.
    converged : bool
        Whether the returned iterate's residuals (:attr:`residuals`) are both at most ``tol``, and
        no inner eigensolver failed on the way. Nothing else makes it True.
    eigenvalue : float
        Rayleigh quotient ``beta^T C(Q) beta`` of the returned iterate, ``C(Q)`` the operator whose
        leading eigenvector alpha is (``G(Q)``, ``S^1/2 G S^1/2`` with side data, ``2G - (M M^T) o
        (M M^T)`` for the gap criterion, ``G - lam B`` with pairs; ``beta = alpha`` except with side
        data, ``beta ~ S^-1/2 alpha``). Equal to :attr:`objective` up to rounding.
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
        summed squared alphas of earlier rounds in :func:`core.selection.topographic.topographic_map`).
    restart_objectives : ndarray
        Final objective of each start (``n_init`` values); the best one is returned.
    stopped : bool
        Whether the ``progress`` callback asked the iteration to stop (by returning ``False``)
        before it converged; the weights are then those of the last iteration done.
    warnings : tuple of str
        What the caller should know about this result: an inner eigensolver that failed or an
        objective that stopped being finite (``converged`` is then False), or weights of both signs
        (the positivity that [WS03] observes does not hold for this operator, e.g. strong pairwise
        side information).
    residuals : ndarray, shape (n_iter, 2)
        Per iterate of the best start: alpha's relative eigen-residual ``||C beta - theta beta|| /
        ||C beta||`` and Q's subspace residual ``||Z - Q Q^T Z||_F / ||Z||_2`` with ``Z = A_alpha Q``
        (0 when Q is fixed, the supervised mode). Both denominators are at most the operator's
        2-norm, so these are never smaller than the residuals relative to ``||C||_2`` and ``||A_alpha||_2``.
    tol : float
        The tolerance the residuals were tested against.
    start_passes : int
        Passes over the data that ``init="uniform"`` took to find ``Q^(0)`` beyond
        :data:`core.matrix.sample_vectors.GRAM_LIMIT` samples (at most
        :data:`core.selection._qalpha.start.START_PASSES`); 0 from the explicit Gram
        matrix, a random or a warm start.
    evaluations : int
        Evaluations of the criterion by the quasi-Newton ascent (``accelerate=True``), each one
        pass over the data for ``A_alpha`` (``q^2 n`` multiply-adds) and a thin one for ``M Q``:
        line searches make them more than :attr:`n_iter`. 0 where the alternation ran alone.
    hessian_products : int
        Products with the criterion's Hessian that the ascent's Newton steps took (each two thin
        passes over the data, ``2 q n k`` multiply-adds); 0 where it took quasi-Newton ones.
    acceleration : str
        "Anderson extrapolation" where iterates of the alternation were mixed
        (:mod:`core.selection._qalpha.anderson`), "quasi-Newton (L-BFGS)" or "Newton (trust region)"
        where the ascent ran (:mod:`core.selection._qalpha.ascent`), joined by " + ", "" for the alternation of
        [WS03] Definition 2 alone (``accelerate=False``, the supervised mode, or steps that did not
        come near a fixed point).
    data_placement : str
        For a Dask array, where the iterations read the data and why: held in the workers' (or
        this process's) memory, or read from their source (a file, or the tasks that make them) at every pass (``persist``); "" for
        data in memory.
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
    residuals: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    tol: float = np.nan
    start_passes: int = 0
    data_placement: str = ""
    evaluations: int = 0
    hessian_products: int = 0
    acceleration: str = ""

    @property
    def residual(self) -> float:
        """The larger of the returned iterate's two residuals (alpha's and Q's): ``converged`` is
        ``residual <= tol`` (and no inner solver failed)."""
        return float(self.residuals[-1].max()) if len(self.residuals) else np.nan

    @property
    def ranking(self) -> np.ndarray:
        """Feature indices from the largest weight to the smallest."""
        return np.argsort(-self.alpha, kind="stable")

    def top(self, n_features: int) -> np.ndarray:
        """Indices of the ``n_features`` largest weights."""
        return self.ranking[:n_features]

    @property
    def n_selected(self) -> int:
        """Number of features above the sparsity gap (:func:`core.selection.sparsity.sparsity_gap`)."""
        return self.gap.n_selected

    @cached_property
    def gap(self) -> SparsityGap:
        """Where the sorted weights break and how clearly (:func:`core.selection.sparsity.find_sparsity_gap`)."""
        return find_sparsity_gap(self.alpha)

    @cached_property
    def default_k(self) -> "DefaultK":
        """How many features to select when nobody says: the sparsity gap's count where the gap
        is clear, else the smallest count holding half of the squared weight (:func:`core.selection.sparsity.default_k`)."""
        return default_k(self.alpha, self.gap)


def q_alpha(X, k=None, *, labels=None, side=None, pairs=None, lam=DEFAULT_LAM, criterion="sum",
            method="power", init="uniform", n_init=1, random_state=None, max_iter=DEFAULT_MAX_ITER,
            tol=1e-6, solver="auto", eig_tol=1e-10, power_steps=1,
            progress: ProgressCallback | None = None,
            dtype=np.float64, memory_limit: int | None = None, persist: bool | None = None,
            accelerate=True) -> QAlphaResult:
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
        :func:`core.selection.topographic.topographic_map` need dense data.
    k : int, optional
        Number of clusters (columns of Q), ``1 <= k < n_samples``; :data:`DEFAULT_K` (2) when left
        out. With ``labels`` it is the number of classes minus one (``c - 1`` for ``c`` classes)
        and may be left out. To choose k and λ from the data instead, call
        :func:`core.selection.automatic.choose_settings`, a search on top of this estimator.
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
    lam : float
        Weight of the side information (``>= 0``; :data:`DEFAULT_LAM`, 0.1, when left out). For
        ``side``, ``lam = 0`` is admissible only when no side variance vanishes. Without side data
        or pairs it has no role, and the result records 0.
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
        orthonormal matrix. Beyond 4,096 samples the uniform start is a block Krylov space of
        at most 2 passes over the data (:attr:`QAlphaResult.start_passes`).
    n_init : int
        Number of starts; the first uses ``init``, the others random ``Q^(0)``. The start with
        the largest final objective is returned.
    random_state : int, Generator or None
        Seeds the random starts.
    max_iter : int
        Maximum number of iterations per start.
    tol : float
        Convergence: both residuals of the returned iterate are at most ``tol``: alpha's relative
        eigen-residual ``||C beta - theta beta|| / ||C beta||`` and Q's subspace residual
        ``||A_alpha Q - Q Q^T A_alpha Q||_F / ||A_alpha Q||_2`` (:attr:`QAlphaResult.residuals`;
        with labels, alpha's alone). What it bounds (Davis-Kahan): the angle between ``beta`` and
        the leading eigenvector of ``C(Q)`` is at most ``tol ||C||_2 / delta``, ``delta`` the gap
        between C's two largest eigenvalues; likewise Q's angle to an invariant subspace of
        ``A_alpha``. It does not bound the distance to the limit of the iteration where the gap is small.
    solver : {"auto", "dense", "lanczos", "power"}
        How step 2 finds the leading eigenvector. ``"dense"`` forms ``G`` explicitly;
        ``"lanczos"`` runs ARPACK on products with ``G`` (matrix-free), warm-started from the
        previous alpha; ``"power"`` takes ``power_steps`` products per iteration (matrix-free;
        converges to the same fixed point, for the ``"sum"`` criterion without pairs). With one
        power step, alpha and Q are updated simultaneously from the same iterate, which needs
        two passes over the data per iteration instead of four (see ``core.selection._qalpha.iterate``).
        ``"auto"``: power steps where they apply (the sum criterion without pairs), else dense
        up to 100 features and Lanczos beyond; the same for every container, so that dense,
        sparse and chunked copies of the same data take the same path.
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
        Working precision of the normalised copy of dense data that the iterations read (float64
        by default). float32 halves that copy: from float64 data of 200 x 50,000 (76 MB) a run adds
        48 MB instead of 86 (``benchmarks/bench_copies.py``). Input given in float32 is validated
        as a float64 copy first, so float32 saves nothing on it: give float64 data. A float32 run
        whose residuals pass is checked in float64 against the data (no copy) before it is called
        converged. Sparse and chunked data use float64 products.
    memory_limit : int, optional
        Bytes the row blocks of a Dask array may take at once (half the machine's memory by
        default); chunks that do not fit are refused with the chunk size that would.
    accelerate : True, False or "always"
        How the fixed point is reached (:mod:`core.selection._qalpha.ascent`, issue 75).
        ``True`` (the default): the alternation of Definition 2 runs first, its iterates
        extrapolated by Anderson's mixing once its residuals fall below 1e-2
        (:mod:`core.selection._qalpha.anderson`: the same two passes a step, a mixed point that
        lowers the objective not taken; ten bundled sets at k = 2, 5, 8: median 18 iterations
        against 40), and where its linear rate predicts more steps than the typical cost of the
        quasi-Newton ascent over alpha (:func:`~core.selection._qalpha.ascent.cost_ratio`,
        decided on the residuals alone, so runs are reproducible), it hands over to the ascent,
        which goes on from its iterate (100 x 20,000 with 200 planted features, k = 2: 69
        iterations in 0.47 s against 931 in 3.2 s on a 2-core AMD EPYC,
        ``benchmarks/bench_convergence.py``); where each step of the alternation solves the
        operator's eigenproblem (dense or Lanczos steps: the gap criterion, pairs) the ascent runs
        from the start. ``"always"``: the ascent from the start (fewest iterations: 7-11 on the bundled
        sets, where the alternation takes 24-209; each costs a weighted Gram matrix, so on small
        problems it can take longer). ``False``: the alternation alone, as before issue 75. The
        ascent runs where ``A_alpha`` can be formed (up to 4,096 samples) and Q is not fixed (not
        the supervised mode); :attr:`QAlphaResult.evaluations` and ``acceleration`` say whether it
        ran. All three test convergence on the same residuals of the returned iterate.
    persist : bool or None
        Whether a Dask array is held in memory across the iterations
        (:func:`core.matrix.cluster.hold_in_memory`): ``None`` on a ``dask.distributed`` cluster
        when the data take at most half of the workers' memory, else not; ``True``, ``False``
        as asked. :attr:`QAlphaResult.data_placement` says which and why.

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
    prepared, lam, solve_options = _prepare_as_q_alpha(**locals())  # exactly its parameters, here
    return _solve(prepared, lam, progress=progress, **solve_options)


def _prepare_as_q_alpha(X, k=None, **options):
    """What :func:`q_alpha` makes of ``X``, ``k`` and ``options`` (its keywords, its defaults for
    the rest) before it solves: ``(prepared, lam, solve_options)``, ``lam`` checked (0 without side
    information) and ``solve_options`` the rest :func:`_solve` takes but ``progress``. One place
    for :func:`q_alpha` itself and for a search that prepares the data once and solves at several
    ``k`` (:func:`~core.selection._qalpha.prepare.with_k`) and λ."""
    q_alpha_signature, prepare_options = _signatures()
    try:
        arguments = q_alpha_signature.bind(X, k, **options)
    except TypeError as error:
        raise InputError(f"These options are passed to q_alpha, which does not take them: {error}.") from None
    arguments.apply_defaults()
    given = arguments.arguments
    lam, given["n_init"], given["max_iter"] = check_settings(lam=given["lam"], init=given["init"],
                                                             n_init=given["n_init"], max_iter=given["max_iter"])
    if given["side"] is None and given["pairs"] is None:
        lam = 0.0
    if k is None and given["labels"] is None:
        k = DEFAULT_K
    prepared = _prepare(X, k, **{name: given[name] for name in prepare_options})
    return prepared, lam, {name: given[name] for name in ("init", "n_init", "random_state")}


@cache
def _signatures():
    """:func:`q_alpha`'s signature and the options :func:`_prepare` takes after ``X`` and ``k``,
    read once: reading them took 70 us of a 3.5 ms run on the audit's small problems."""
    return inspect.signature(q_alpha), tuple(inspect.signature(_prepare).parameters)[2:]


def _solve(prepared, lam, *, init="uniform", n_init=1, random_state=None, progress=None, warm=None,
           uniform=None) -> QAlphaResult:
    """Q-alpha at ``lam`` on prepared data, by the stages of :mod:`core.selection._qalpha` in order:
    the eigenproblem at ``lam``, each start's first iterate, the iteration, the certification, the
    result. ``warm``, a result at a neighbouring ``lam``, is the first start (its ``Q`` and
    ``alpha``) instead of ``init``; ``uniform``, the uniform start's vectors for this ``lam`` at
    this ``k`` or more where the caller computed them (:func:`~core.selection._qalpha.start.uniform_vectors`)."""
    problem = problem_at(prepared, lam)
    rng = check_random_state(random_state)
    best, restart_objectives, stopped, start_passes = None, [], False, 0
    # thin products: one BLAS thread where threads cost more than they save (core.matrix.threads)
    with blas_threads_for(problem.q * problem.n * prepared.k):
        for index in range(n_init):
            start = first_iterate(problem, prepared, index, init, rng, warm, uniform)
            start_passes += start.passes
            run = iterate.one_start(problem, prepared, start, progress)
            restart_objectives.append(run["history"][-1])
            if best is None or run["history"][-1] > best["history"][-1]:
                best = run
            stopped = run["stopped"]
            if prepared.fixed_Q or stopped:
                break

    precision_note = None
    if best["converged"] and np.dtype(prepared.dtype) != np.float64:
        problem64 = float64_problem(prepared, lam)
        checked, precision_note = certify.checked_in_float64(problem64, prepared, best)
        best = checked
        if precision_note is not None and best["n_iter"] < prepared.settings["max_iter"]:
            # the precision, not the problem, stopped it: the one way back from certify to iterate
            best = iterate.continue_in_float64(problem64, prepared, checked, progress)
            precision_note = continued_note(prepared.dtype, prepared.settings["tol"], checked, best, "against the data")
    notes, converged = certify.verdict(problem, prepared, best, precision_note, stopped)
    return _result(prepared, lam, best, converged, notes, stopped, restart_objectives, start_passes)


def _result(prepared, lam, run, converged, notes, stopped, restart_objectives, start_passes) -> QAlphaResult:
    """The :class:`QAlphaResult` of a certified run: the weights over all features (0 for those
    left out) and what the run recorded."""
    alpha = np.zeros(prepared.n_features)
    alpha[prepared.features.kept] = run["alpha"]
    method = prepared.method
    return QAlphaResult(
        alpha=alpha, Q=np.asarray(run["Q"], dtype=np.float64), objective=float(run["history"][-1]),
        history=run["history"].astype(np.float64), n_iter=run["n_iter"],
        converged=converged, eigenvalue=float(run["eigenvalue"]),
        method="supervised" if prepared.fixed_Q else ("power-embedded" if method == "power" else "basic"),
        criterion=prepared.criterion, solver=prepared.solver, k=prepared.k, lam=float(lam),
        constant_features=prepared.constant, side_diagonal=prepared.side_diagonal_full,
        restart_objectives=np.asarray(restart_objectives), stopped=bool(stopped), warnings=notes,
        residuals=run["residuals"].astype(np.float64), tol=prepared.settings["tol"], start_passes=start_passes,
        data_placement=prepared.data.placement, evaluations=int(run.get("evaluations", 0)),
        hessian_products=int(run.get("hessian_products", 0)), acceleration=_acceleration(run),
    )


def _acceleration(run) -> str:
    """What accelerated the run, for :attr:`QAlphaResult.acceleration`."""
    ascent = "Newton (trust region)" if run.get("hessian_products", 0) else "quasi-Newton (L-BFGS)"
    return " + ".join(name for name, used in (("Anderson extrapolation", run.get("mixed", 0)),
                                              (ascent, run.get("evaluations", 0))) if used)


def pairs_from_labels(labels, n_pairs, random_state=None) -> np.ndarray:
    """Random pairs of samples with different labels: the side information of [SW04] Sec. 5.

    Returns an ``(n_pairs, 2)`` array of distinct pairs ``(i, j)``, ``i < j``, drawn uniformly
    from all pairs of samples with different labels, for ``q_alpha(X, k, pairs=..., lam=...)``
    when the known "different cluster" pairs come from labels. However unbalanced the classes
    (one sample against 999), every pair asked for is returned; asking for more pairs than exist
    is an :class:`~core.errors.InputError` that says how many there are.
    """
    labels = np.asarray(labels).ravel()
    n_pairs = _check_positive_int(n_pairs, "n_pairs")
    rng = check_random_state(random_state)
    classes, codes, sizes = np.unique(labels, return_inverse=True, return_counts=True)
    if classes.size < 2:
        raise InputError("Pairs of points in different clusters need at least two distinct labels.")
    # pairs of classes (a < b) weighted by how many sample pairs they hold: uniform over sample pairs
    first_class, second_class = np.triu_indices(classes.size, k=1)
    weights = sizes[first_class].astype(np.float64) * sizes[second_class]
    available = int(weights.sum())
    if n_pairs > available:
        raise InputError(f"There are only {available:,} pairs of samples with different labels; "
                         f"ask for at most that many (got n_pairs={n_pairs:,}).")
    members = [np.flatnonzero(codes == c) for c in range(classes.size)]
    if 2 * n_pairs >= available:  # most of them: list them all (at most twice what is asked) and choose
        every = np.concatenate([np.sort(np.stack(np.meshgrid(members[a], members[b], indexing="ij"), -1).reshape(-1, 2),
                                        axis=1) for a, b in zip(first_class, second_class)])
        return every[np.sort(rng.choice(len(every), size=n_pairs, replace=False))]
    chosen = np.zeros((0, 2), dtype=np.intp)
    while len(chosen) < n_pairs:
        draw = 2 * (n_pairs - len(chosen)) + 16
        which = rng.choice(weights.size, size=draw, p=weights / weights.sum())
        left = np.array([members[c][rng.integers(sizes[c])] for c in first_class[which]], dtype=np.intp)
        right = np.array([members[c][rng.integers(sizes[c])] for c in second_class[which]], dtype=np.intp)
        fresh = np.sort(np.c_[left, right], axis=1)
        # keep the first draw of each pair, in the order drawn (np.unique alone would sort them)
        combined = np.concatenate([chosen, fresh])
        _, first = np.unique(combined, axis=0, return_index=True)
        chosen = combined[np.sort(first)]
    return chosen[:n_pairs]


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
