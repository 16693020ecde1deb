"""Q-alpha's k and λ chosen from the data, without labels: the setting under which k-means finds
the most reproducible clusters (issue 35; the protocol that judged it is
``docs/protocol_automatic_settings.md``).

Why stability. Nothing in Q-alpha's objective says which k or λ to use, and no label may be
used to choose them. Clustering stability (Lange, Roth, Braun & Buhmann, Neural Computation
16(6), 2004; used to choose features for clustering by Roth & Lange, NIPS 2003) asks the one
question a user can check without labels: if the samples were drawn again, would k-means find the
same groups? Each candidate weighting of the features is scored by the agreement (adjusted Rand
index) of k-means fitted on two random subsets of the main samples, on the samples the subsets
share; the same subsets and seeds serve every candidate, so the comparison is paired.

The candidates: the standardised data with no weighting, and the standardised features scaled by
``sqrt((1 + alpha / mean(alpha)) / 2)`` for k in {c, 2c} (c, the clusters asked for) and λ in
{0.1, 1, 10}. Shrinking the weights half-way to equal is part of the rule: on the tuning sets
(wine, iris, breast cancer, digits, Weston's and Ben-Dor's generators) the full ``sqrt(alpha)``
weighting lost up to 0.22 pairwise accuracy to the standardised data on digits and 0.075 on
breast cancer; the half-shrunk one up to 0.077 at λ = 0.1 and 0.031 at λ = 1 and 10 (digits), and
the stability score steers away from the worst of those. When the unweighted data give the most stable
clusters the rule says so (``weighting == "none"``): the weights did not make the groups more
reproducible, and the app warns that weighting may hurt k-means on such data.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from ..errors import InputError, Stopped
from ..matrix import data_matrix, dense_matrix
from ..matrix.kmeans import adjusted_rand, seeded_kmeans
from ..matrix.threads import blas_threads_for, one_blas_thread, small_products
from ..progress import Progress, report_or_stop
from ..validation import check_positive_int, check_real, random_seed, zscores
from ._qalpha.prepare import problem_at, with_k
from ._qalpha.start import uniform_vectors
from .qalpha import _prepare_as_q_alpha, _solve

__all__ = ["AUTO_LAMBDAS", "AUTO_K_MULTIPLES", "DENSE_COPY_LIMIT", "WEIGHT_SHRINK", "N_RESAMPLES", "RESAMPLE_FRACTION",
           "AutoCandidate", "AutoSettings", "choose_settings", "clustering_stability", "estimate_n_clusters",
           "shrunk_scaling"]

#: λ values tried when λ is chosen (the grid the paper's 0.1 and the former UCI rule's 10 span).
AUTO_LAMBDAS = (0.1, 1.0, 10.0)
#: k values tried, as multiples of the number of clusters c.
AUTO_K_MULTIPLES = (1, 2)
#: How far the weights are pulled towards equal weights before they scale the features.
WEIGHT_SHRINK = 0.5
#: Pairs of random subsets that score each candidate, and the fraction of samples in each subset.
N_RESAMPLES = 8
RESAMPLE_FRACTION = 0.8
#: Clusters considered when their number is estimated from the spectrum.
MAX_ESTIMATED_CLUSTERS = 10
#: Squared singular values below this fraction of the largest are rounding, not directions: the
#: spectrum comes from a Gram matrix, whose eigenvalues carry errors of a few ``eps`` times the
#: largest per thousand rows (at most 1e-12 at GRAM_LIMIT's 4,096).
SPECTRUM_ROUNDING = 1e-10


def shrunk_scaling(alpha, shrink: float = WEIGHT_SHRINK) -> np.ndarray:
    """Per-feature factors ``sqrt(shrink + (1 - shrink) alpha_i / mean(alpha))`` for standardised
    features: ``shrink = 0`` is Q-alpha's own geometry up to a constant (:func:`feature_scaling`),
    ``shrink = 1`` equal weights. Negative weights count as 0."""
    alpha = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, None)
    if not np.isfinite(alpha).all():
        raise InputError("alpha contains NaN or infinite values.")
    if not 0.0 <= shrink <= 1.0:
        raise InputError(f"shrink must lie in [0, 1]; got {shrink!r}.")
    mean = alpha.mean()
    relative = alpha / mean if mean > 0 else np.ones_like(alpha)
    return np.sqrt(shrink + (1.0 - shrink) * relative)


def _resample_pairs(n_samples: int, n_resamples: int, fraction: float, rng) -> list[tuple[np.ndarray, np.ndarray]]:
    size = max(int(round(fraction * n_samples)), 2)
    return [(np.sort(rng.choice(n_samples, size, replace=False)), np.sort(rng.choice(n_samples, size, replace=False)))
            for _ in range(n_resamples)]


def _stability(X: np.ndarray, n_clusters: int, pairs, seed: int) -> np.ndarray:
    """Adjusted Rand index of k-means on each pair of subsets, on the samples they share: the
    clusterings of scikit-learn's ``KMeans(n_clusters, n_init=1, random_state=seed + 2 * pair +
    subset)`` fitted on each subset, by :func:`core.matrix.kmeans.seeded_kmeans` with its
    starts side by side on the whole array (PBMC-sized: a candidate's 16 fits in 39 ms against
    75 by 16 calls of ``KMeans``, wide data in the span of their samples, :func:`_span_coordinates`)."""
    # BLAS threads beside k-means only contend (core.matrix.threads: NumPy's and SciPy's pools
    # spin on the same cores), and the products here are small
    with one_blas_thread():
        coordinates, tol = _span_coordinates(X)
        found = seeded_kmeans(coordinates, n_clusters, random_state=seed, tol=tol,
                              rows=[rows for pair in pairs for rows in pair])
    scores = []
    for first, second in zip(found[::2], found[1::2]):
        shared = (first >= 0) & (second >= 0)
        scores.append(adjusted_rand(first[shared], second[shared]))
    return np.asarray(scores, dtype=np.float64)


#: k-means works on the samples' coordinates in their own span when the features number more than
#: this many times the samples (:func:`_span_coordinates`).
SPAN_BELOW = 4.0
#: scikit-learn's ``KMeans`` tolerance: the centres' summed squared shift that stops Lloyd's
#: iterations, relative to the mean of the features' variances.
KMEANS_TOL = 1e-4


def _span_coordinates(X: np.ndarray) -> tuple[np.ndarray, float]:
    """The samples (rows of ``X``, ``n x d``) as coordinates in the span of the rows, ``n x n``,
    where ``d > SPAN_BELOW n``, with the k-means tolerance that stops at the same shift.

    k-means sees the samples only through their distances, and ``X^T = Q R`` gives rows of
    ``R^T`` with the same inner products (``X X^T = R^T R``), so the same clusters from n
    coordinates instead of d; scikit-learn's tolerance is relative to the mean of the features'
    variances, whose sum the turn keeps, so it is scaled by ``n / d``. The same labels on the
    bundled sets (tested). Scoring a candidate took 37 ms against 93 on TOX-171 (171 x 5,748),
    16 against 33 on warpAR10P (130 x 2,400), 6.5 against 9.1 on colon (62 x 2,000); on ORL
    (400 x 1,024) 35 against 33 and on the PBMC-sized table (630 x 765) 51 against 39, where the
    QR costs more than it saves: hence :data:`SPAN_BELOW`.
    """
    n_samples, n_features = X.shape
    if n_features <= SPAN_BELOW * n_samples:
        return X, KMEANS_TOL
    triangle = linalg.qr(X.T, mode="r", check_finite=False)[0][:n_samples]
    return np.ascontiguousarray(triangle.T), KMEANS_TOL * n_samples / n_features


def clustering_stability(X, n_clusters: int, *, n_resamples: int = N_RESAMPLES, fraction: float = RESAMPLE_FRACTION,
                         random_state: int = 0) -> np.ndarray:
    """How reproducible k-means' clusters of ``X`` are: for each of ``n_resamples`` pairs of random
    subsets (``fraction`` of the samples each, without replacement), the adjusted Rand index between
    k-means (``n_clusters``, one start) fitted on each subset, on the samples both hold
    (Lange, Roth, Braun & Buhmann 2004). Returns the ``n_resamples`` indices; 1 is perfect
    agreement, 0 what chance gives. Deterministic given ``random_state``."""
    X = dense_matrix(X)
    n_clusters = _check_clusters(n_clusters, X.shape[0])
    fraction = check_real(fraction, "fraction", low=0.0, high=1.0, low_open=True)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    random_state = random_seed(random_state)
    rng = np.random.default_rng(random_state)
    return _stability(X, n_clusters, _resample_pairs(X.shape[0], n_resamples, fraction, rng), random_state)


def _check_clusters(n_clusters, n_samples: int) -> int:
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, (int, np.integer)) or n_clusters < 2:
        raise InputError(f"n_clusters must be an integer of at least 2; got {n_clusters!r}.")
    if n_clusters >= n_samples * RESAMPLE_FRACTION:
        raise InputError(f"{n_clusters} clusters need more samples than the {n_samples} given (each resample holds "
                         f"{RESAMPLE_FRACTION:.0%} of them): ask for fewer clusters, or set k and λ yourself.")
    return int(n_clusters)


def _feasible_clusters(n_samples: int) -> int:
    """The most clusters a resample of ``n_samples`` can hold (at least 2)."""
    return max(2, min(MAX_ESTIMATED_CLUSTERS, int(np.ceil(n_samples * RESAMPLE_FRACTION)) - 1))


def estimate_n_clusters(X, max_clusters: int = MAX_ESTIMATED_CLUSTERS) -> int:
    """A number of clusters from the spectrum of the standardised data: one more than the position
    of the largest ratio between consecutive squared singular values among the first
    ``max_clusters`` (c clusters span c - 1 directions beyond the mean; the eigengap heuristic,
    von Luxburg, Statistics and Computing 17, 2007, Sec. 8.3). Used only when nobody says how many
    clusters k-means should find."""
    X = dense_matrix(X)
    top = _leading_variances(zscores(X), max_clusters + 1)
    top = top[top > SPECTRUM_ROUNDING * top[0]] if top.size and top[0] > 0 else top[:0]
    if top.size < 3:
        return 2
    ratios = top[:-1] / top[1:]
    return int(np.argmax(ratios[: max_clusters - 1]) + 2)


def _leading_variances(Z: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` largest squared singular values of ``Z``, largest first: eigenvalues of the
    smaller Gram matrix, found alone by LAPACK (630 x 765: 26 ms against 61 for the singular values
    of ``Z``, one thread of a 2-core AMD EPYC; equal to 3e-15 of the largest)."""
    gram = Z @ Z.T if Z.shape[0] <= Z.shape[1] else Z.T @ Z
    size = gram.shape[0]
    count = min(count, size)
    values = linalg.eigh(gram, eigvals_only=True, subset_by_index=[size - count, size - 1], driver="evr",
                         check_finite=False)
    return values[::-1]


@dataclass(frozen=True)
class AutoCandidate:
    """One setting the rule scored: ``k`` and ``lam`` None for the unweighted data."""

    k: int | None
    lam: float | None
    stability: float
    stability_sd: float
    converged: bool | None = None  # Q-alpha's run at (k, λ); None for the unweighted data

    @property
    def label(self) -> str:
        return "no weighting" if self.k is None else f"k = {self.k}, λ = {self.lam:g}"


@dataclass(frozen=True, eq=False)
class AutoSettings:
    """Outcome of :func:`choose_settings`.

    Attributes
    ----------
    k, lam : int, float
        Q-alpha's settings: those of the most stable weighted candidate.
    n_clusters : int
        The clusters k-means is asked for (given, or :func:`estimate_n_clusters`).
    n_clusters_estimated : bool
        Whether ``n_clusters`` was estimated from the spectrum.
    candidates : tuple of AutoCandidate
        Every setting scored, in the order tried (no weighting first).
    chose_k, chose_lam : bool
        Which of k and λ were chosen (the others were given).
    results : dict
        Q-alpha's result for each ``(k, lam)`` tried (the chosen one is ``results[(k, lam)]``).
    """

    k: int
    lam: float
    n_clusters: int
    n_clusters_estimated: bool
    candidates: tuple
    chose_k: bool
    chose_lam: bool
    results: dict

    @property
    def weighted_best(self) -> AutoCandidate:
        """The most stable weighted candidate (the first of equals: smaller k, smaller λ)."""
        return max((c for c in self.candidates if c.k is not None), key=lambda c: c.stability)

    @property
    def unweighted(self) -> AutoCandidate:
        return next(c for c in self.candidates if c.k is None)

    @property
    def weighting(self) -> str:
        """How k-means should see the features: ``"shrunk_sqrt_alpha"`` (scaled by
        :func:`shrunk_scaling` of the weights) or ``"none"``, when no weighting made the clusters
        more reproducible than none."""
        return "shrunk_sqrt_alpha" if self.weighted_best.stability > self.unweighted.stability else "none"

    @property
    def weighting_helps(self) -> bool:
        return self.weighting != "none"

    @property
    def alphas(self) -> dict:
        """Q-alpha's weights for each ``(k, lam)`` tried."""
        return {key: result.alpha for key, result in self.results.items()}

    @property
    def reason(self) -> str:
        """The choice in a sentence a user can check."""
        best, plain = self.weighted_best, self.unweighted
        chosen = " and ".join(([f"k = {self.k}"] if self.chose_k else []) + ([f"λ = {self.lam:g}"] if self.chose_lam else []))
        clusters = (f"{self.n_clusters} clusters (estimated from the spectrum)" if self.n_clusters_estimated
                    else f"{self.n_clusters} clusters")
        text = (f"{chosen or 'These settings'}: k-means into {clusters} found the most reproducible groups with "
                f"these weights (agreement between resamples {best.stability:.2f} ± {best.stability_sd:.2f}, "
                f"adjusted Rand index, of {len(self.candidates) - 1} weighted settings tried)")
        if self.weighting_helps:
            return text + f"; unweighted standardised data: {plain.stability:.2f}."
        return (text + f". Unweighted standardised data gave more reproducible groups ({plain.stability:.2f}): "
                "on these data the weights may make k-means worse than no weighting.")

    def kmeans_features(self, X, alpha) -> np.ndarray:
        """What k-means should cluster: the standardised ``X`` scaled by :func:`shrunk_scaling` of
        ``alpha``, or unscaled when ``weighting == "none"``."""
        Z = zscores(dense_matrix(X))
        return Z * shrunk_scaling(alpha) if self.weighting_helps else Z

    def table(self) -> list[dict]:
        """The candidates as rows (setting, stability mean and sd, whether its Q-alpha run converged, chosen)."""
        best = self.weighted_best if self.weighting_helps else self.unweighted
        return [dict(setting=c.label, k=c.k, lam=c.lam, stability=c.stability, stability_sd=c.stability_sd,
                     converged=c.converged, chosen=c is best) for c in self.candidates]


#: Largest dense copy (bytes) that :func:`choose_settings` makes of sparse or chunked main data for
#: k-means, which clusters the standardised values; beyond it the search refuses and says why.
DENSE_COPY_LIMIT = 2 << 30


def choose_settings(X, *, side=None, pairs=None, k="auto", lam="auto", n_clusters=None, random_state=0,
                    progress=None, **q_alpha_options) -> AutoSettings:
    """Choose Q-alpha's ``k`` and ``lam`` from the main data (and the side data or pairs) alone.

    A search on top of :func:`core.selection.qalpha.q_alpha`, as scikit-learn's ``LassoCV`` is on
    ``Lasso``: each candidate (k in {c, 2c}, λ in :data:`AUTO_LAMBDAS`, and the unweighted data) is
    one ``q_alpha`` solve scored by :func:`clustering_stability` on the same resamples; the most
    stable weighted candidate gives k and λ, and the unweighted data win when they are more stable
    still (see the module's text). The chosen run is ``results[(k, lam)]``.

    Parameters
    ----------
    X : array_like, scipy.sparse matrix or dask.array.Array, shape (n_samples, n_features)
        Main data, of any kind :func:`q_alpha` takes; the solves run on it as given. k-means
        clusters the standardised values, so sparse and chunked data are copied dense once for
        it, up to :data:`DENSE_COPY_LIMIT` bytes (beyond, the search refuses and says what to pass).
    side, pairs : optional
        Side information as :func:`q_alpha` takes it. Without either, λ is 0.
    k, lam : "auto" or a value
        What to choose; a value is kept as given.
    n_clusters : int, optional
        The clusters k-means will be asked for (the number of classes to find); estimated from
        the spectrum (:func:`estimate_n_clusters`) when not given.
    random_state : int, numpy Generator or None
        Seeds the resamples, k-means and every solve; the choice is deterministic given an
        integer (:func:`core.validation.check_random_state`: None or a Generator give a seed drawn
        from them, once, for all of these).
    progress : callable, optional
        Called with a :class:`core.progress.Progress` after each iteration of each solve and after
        each candidate is scored (``done`` and ``total`` count candidates; the message names the
        candidate). ``False`` stops at once, inside a solve too (raises :class:`core.errors.Stopped`).
    **q_alpha_options
        Passed to every solve (``criterion``, ``init``, ``max_iter``, ``tol``, ``solver``, ...).

    Returns
    -------
    AutoSettings
    """
    for reserved in ("labels", "progress"):
        if reserved in q_alpha_options:
            raise InputError(f"choose_settings does not take {reserved!r} for Q-alpha: the choice is label-free "
                             "and reports its own progress.")
    # validated (and on a cluster held in memory, per q_alpha's persist) once for every solve
    data = data_matrix(X, memory_limit=q_alpha_options.pop("memory_limit", None),
                       persist=q_alpha_options.pop("persist", None))
    n_samples, n_features = data.shape
    # the whole search on one BLAS thread where its solves' products are small (as each solve
    # runs, core.matrix.threads): threads left spinning by one step slowed the next (NumPy's and
    # SciPy's pools, and scikit-learn's k-means on OpenMP before: its stability took 1.26 s within
    # the search against 0.55 s for the same calls alone). With every product on two threads the
    # search took 1.5-1.7 s against 0.8 on the PBMC-sized table, 0.33-0.54 against 0.21 on ORL
    largest_k = int(k) if isinstance(k, (int, np.integer)) else max(AUTO_K_MULTIPLES) * MAX_ESTIMATED_CLUSTERS
    work = n_samples * n_features * largest_k
    with blas_threads_for(work):
        return _search(data, side, pairs, k, lam, n_clusters, random_state, progress, q_alpha_options,
                       overlap=small_products(work))


def _search(data, side, pairs, k, lam, n_clusters, random_state, progress, q_alpha_options, *,
            overlap: bool) -> AutoSettings:
    """:func:`choose_settings` after its input is read; ``overlap``: score each candidate while
    the next is solved (where the search runs on one BLAS thread: elsewhere the scoring's own
    one-thread limit, process-wide, would slow the solve beside it)."""
    n_samples = data.shape[0]
    random_state = random_seed(random_state)
    estimated = n_clusters is None
    dense = _dense_copy(data)
    standardised = zscores(dense)
    if estimated:
        n_clusters = estimate_n_clusters(dense, _feasible_clusters(n_samples))
    n_clusters = _check_clusters(n_clusters, n_samples)
    chose_k, has_side = _is_auto(k), side is not None or pairs is not None
    chose_lam = _is_auto(lam) and has_side
    ks = sorted({min(multiple * n_clusters, n_samples - 1) for multiple in AUTO_K_MULTIPLES}) if chose_k else [k]
    # the data prepared once (normalised, side variances) for every solve, as q_alpha prepares them;
    # a λ given is checked and read as q_alpha reads it (0 without side information)
    prepared, given_lam, solve_options = _prepare_as_q_alpha(
        data, ks[-1], side=side, pairs=pairs, lam=AUTO_LAMBDAS[0] if _is_auto(lam) else lam,
        random_state=random_state, **q_alpha_options)
    lams = AUTO_LAMBDAS if chose_lam else [given_lam]
    settings = [(k_value, lam_value) for k_value in ks for lam_value in lams]
    total = 1 + len(settings)
    resamples = _resample_pairs(n_samples, N_RESAMPLES, RESAMPLE_FRACTION, np.random.default_rng(random_state))

    def scored(features, k_value=None, lam_value=None, converged=None):
        values = _stability(features, n_clusters, resamples, random_state)
        return AutoCandidate(k_value, lam_value, float(values.mean()), float(values.std(ddof=1)), converged)

    uniform = {}  # at each λ the uniform start's vectors, once for both k (20 ms each at 630 samples)
    candidates, results = [], {}
    # each candidate is scored on a second thread while the next one is solved: both run on one
    # BLAS thread, so the two cores work at once (PBMC-sized 0.80 s -> 0.68, TOX-171 0.32 -> 0.25;
    # the GIL keeps the rest apart); progress is reported from this thread, each candidate once it
    # is scored, in order
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="stability") as scoring:
        submit = scoring.submit if overlap else _done_now
        pending = submit(scored, standardised)
        for k_value, lam_value in settings:
            label = f"k = {k_value}, λ = {lam_value:g}"
            if lam_value not in uniform and len(ks) > 1:
                uniform[lam_value] = uniform_vectors(problem_at(prepared, lam_value), prepared,
                                                     solve_options["init"])
            result = _solve(with_k(prepared, k_value), lam_value, uniform=uniform.get(lam_value),
                            progress=_within_candidate(progress, len(candidates), total, label), **solve_options)
            if result.stopped:
                raise Stopped(f"Stopped by the progress callback while solving Q-alpha at {label}.")
            results[(result.k, result.lam)] = result
            candidates.append(pending.result())
            pending = submit(scored, standardised * shrunk_scaling(result.alpha), result.k, result.lam,
                             result.converged)
            report_or_stop(progress, len(candidates), total, message=candidates[-1].label)
        candidates.append(pending.result())
    report_or_stop(progress, len(candidates), total, message=candidates[-1].label)
    best = max(candidates[1:], key=lambda c: c.stability)
    return AutoSettings(k=best.k, lam=best.lam, n_clusters=n_clusters, n_clusters_estimated=estimated,
                        candidates=tuple(candidates), chose_k=chose_k, chose_lam=chose_lam, results=results)


def _done_now(function, *args) -> Future:
    """``function(*args)`` run here, as a finished future."""
    future = Future()
    future.set_result(function(*args))
    return future


def _dense_copy(data) -> np.ndarray:
    """The main data as a dense array for k-means: a copy of sparse or chunked data where it fits."""
    if data.kind == "dense":
        return data.dense()
    needed = 8 * data.shape[0] * data.shape[1]
    if needed > DENSE_COPY_LIMIT:
        raise InputError(f"Choosing k and λ clusters the standardised main data with k-means, which needs them dense: "
                         f"{data.shape[0]:,} x {data.shape[1]:,} values take {needed / 2**30:.1f} GiB, more than the "
                         f"{DENSE_COPY_LIMIT / 2**30:.0f} GiB allowed. Give k and lam to q_alpha yourself, or choose "
                         "them on a subset (the features of highest variance, or fewer samples).")
    return data.submatrix(np.arange(data.shape[0]), np.arange(data.shape[1]))


def _within_candidate(progress, done: int, total: int, label: str):
    """A solve's progress as the search's: the same step count (candidates), the solve's
    objective, and the callback's ``False`` handed back to the solve so Stop acts at once."""
    if progress is None:
        return None

    def forward(step):
        return progress(Progress(done, total, step.objective, f"{label}: iteration {step.done}"))

    return forward


def _is_auto(value) -> bool:
    return isinstance(value, str) and value == "auto"
