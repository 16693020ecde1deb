"""k-means with seeded starts, in NumPy: the clusterings scikit-learn's ``KMeans`` finds, without
its per-call cost; and the agreement of two partitions (the contingency table, the adjusted Rand
index). Beneath evaluation and selection both: k-means judges a selection
(:mod:`core.evaluation.metrics`) and scores the stability that chooses Q-alpha's settings
(:mod:`core.selection.automatic`).

The Q-alpha page scores k-means on the top K features each time the hand stops on a new K, five
seeded starts on 130 x K values on the AR faces. ``KMeans(n_init=1).fit_predict`` spent 1.5 ms a
start there, mostly checking its input and seeding through its validated helpers (the seeding
alone 0.9 ms), and the page's k-means was about 14 of the server's 30 ms of CPU per K report
(``benchmarks/bench_users.py``). The same algorithm on the arrays as they are, the starts side by
side, takes 2.3-4.2x less time on the faces' top 20 to 2,400 pixels (4.2 ms against 9.9 at the
page's default K of 420; ``benchmarks/bench_metrics.py``).

Clustering stability (:mod:`core.selection.automatic`) fits k-means on 16 random subsets of the
samples for each candidate weighting; given ``rows``, each start clusters its own subset, side by
side on the whole array (the others weigh nothing in its sums): the clusterings of ``KMeans``
fitted on each subset, tested, in 39 ms against 75 for the 16 calls on the PBMC-sized table.

The algorithm is scikit-learn's default, with its conventions, so that a start seeded ``s``
gives the clustering ``KMeans(n_clusters, n_init=1, random_state=s).fit_predict`` gives (tested
on data sets of several shapes; the two can part only where two distances tie to the last bit):

* seeding: k-means++ (Arthur & Vassilvitskii, SODA 2007) in its greedy form, which they report
  trying: the first centre a sample drawn uniformly, each next one the best of ``2 + ln k``
  samples drawn with probability proportional to their squared distance to the nearest centre,
  best meaning the smallest sum of those distances once it is added; the draws those of
  ``numpy.random.RandomState(s)``;
* Lloyd's iterations on the data less its mean (for accurate distances), at most ``max_iter``,
  stopped when no label changes or when the centres move by at most ``tol`` times the mean of the
  features' variances (summed squared shifts); an empty cluster takes the sample farthest from the
  centre it was assigned to. Where the iterations stop on the shift, the labels are those of
  the final centres.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_array

from ..errors import InputError
from ..validation import random_seed

__all__ = ["adjusted_rand", "contingency_table", "labelled_pair", "seeded_kmeans"]


def seeded_kmeans(Z, n_clusters: int, n_runs: int = 5, random_state=0, *, max_iter: int = 300,
                  tol: float = 1e-4, rows=None) -> list[np.ndarray]:
    """The clusters k-means finds in ``Z``, one start per run with the seeds ``random_state``,
    ``random_state + 1``, ...: the same seeds on two feature sets give paired runs.

    Parameters
    ----------
    Z : array of shape (n_samples, n_features)
        The samples, as they are to be compared (standardise them first for scale-free clusters).
    n_clusters : int
        Clusters to find, between 1 and ``n_samples``.
    n_runs : int
        Seeded starts, one clustering each.
    random_state : int, numpy Generator or None
        The first start's seed (:func:`core.validation.check_random_state`'s convention: a
        Generator or None give a seed drawn from them).
    max_iter, tol
        Lloyd's iterations at most, and the centres' summed squared shift, relative to the mean
        of the features' variances, below which they stop.
    rows : sequence of integer arrays, optional
        One per start, which then number ``len(rows)`` (``n_runs`` is not used): start ``run``
        clusters the samples ``Z[rows[run]]`` alone (in the order of the samples), as ``KMeans``
        fitted on ``Z[np.sort(rows[run])]`` does, and labels the others -1. Clustering stability's resamples (:mod:`core.selection.automatic`) run
        so, 16 starts in one call on the whole array instead of 16 calls on copies of its parts.

    Returns
    -------
    list of arrays of shape (n_samples,)
        Each start's cluster of every sample, ``0 .. n_clusters - 1``: the labels
        ``sklearn.cluster.KMeans(n_clusters, n_init=1, random_state=random_state + run)`` gives
        (fitted on ``Z[np.sort(rows[run])]``, where given, and -1 for the samples outside it).
    """
    X = np.array(Z, dtype=np.float64, order="C")
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise InputError(f"k-means needs a 2-D array of samples by features; got shape {np.shape(Z)}.")
    if not np.isfinite(X).all():
        raise InputError("k-means needs finite values; the data hold NaN or infinite values.")
    member = None if rows is None else _membership(rows, X.shape[0])
    n_clusters, n_runs = int(n_clusters), int(n_runs) if member is None else member.shape[0]
    smallest = X.shape[0] if member is None else int(member.sum(axis=1).min(initial=X.shape[0]))
    if not 1 <= n_clusters <= smallest:
        raise InputError(f"k-means needs between 1 and {smallest} clusters (the samples it clusters); got {n_clusters}.")
    if n_runs < 1:  # no start asked for: no clustering (as one KMeans call per start gave)
        return []
    X -= X.mean(axis=0)
    squared_norms = np.einsum("ij,ij->i", X, X)
    if member is None:
        stop_shift = np.full(n_runs, tol * float(np.mean(np.var(X, axis=0))))
    else:  # the mean of each start's features' variances: its squared norms' mean less its mean's
        counts = member.sum(axis=1)
        means = (member @ X) / counts[:, None]
        spread = member @ squared_norms / counts - np.einsum("sf,sf->s", means, means)
        stop_shift = tol * np.maximum(spread, 0.0) / X.shape[1]
    # the starts run side by side, each NumPy call serving all of them: on 130 samples a call's
    # own cost is most of the work
    random_state = random_seed(random_state)
    draws = [np.random.RandomState(random_state + run) for run in range(n_runs)]
    centres = _greedy_kmeans_plusplus(X, squared_norms, n_clusters, draws, member)
    return list(_lloyd(X, centres, stop_shift, max_iter, member))


def _membership(rows, n_samples: int) -> np.ndarray:
    """Which samples each start clusters, ``(starts, n_samples)`` of 0 and 1."""
    member = np.zeros((len(rows), n_samples))
    for start, chosen in enumerate(rows):
        chosen = np.asarray(chosen)
        if chosen.ndim != 1 or chosen.size == 0 or not np.issubdtype(chosen.dtype, np.integer):
            raise InputError("rows must hold one non-empty array of sample indices per start.")
        if chosen.min() < 0 or chosen.max() >= n_samples or np.unique(chosen).size != chosen.size:
            raise InputError(f"rows must index distinct samples among the {n_samples} given (0 to {n_samples - 1}).")
        member[start, chosen] = 1.0
    return member


def _squared_distances(rows: np.ndarray, row_norms: np.ndarray, X: np.ndarray, squared_norms: np.ndarray) -> np.ndarray:
    """Squared distances of ``rows`` to every sample of ``X``, from the norms (never below 0)."""
    distances = -2.0 * (rows @ X.T)
    distances += row_norms[:, None]
    distances += squared_norms[None, :]
    return np.maximum(distances, 0.0, out=distances)


def _greedy_kmeans_plusplus(X: np.ndarray, squared_norms: np.ndarray, n_clusters: int, draws: list,
                            member=None) -> np.ndarray:
    """Greedy k-means++ seeding of one start per ``RandomState`` of ``draws``: the initial
    centres, ``(starts, n_clusters, n_features)``, rows of ``X``. ``member`` (``(starts,
    n_samples)``, 0 or 1): the samples each start clusters; the others weigh 0 in every sum, and a
    running sum over zeros keeps its value, so the draws fall where they fall on the members alone."""
    n_samples, starts = X.shape[0], np.arange(len(draws))
    unit = np.ones(n_samples)
    trials = 2 + int(np.log(n_clusters))
    chosen = np.empty((len(draws), n_clusters), dtype=np.intp)
    if member is None:
        chosen[:, 0] = [draw.choice(n_samples, p=unit / n_samples) for draw in draws]
        last = np.full((len(draws), 1), n_samples - 1)
    else:
        members = [np.flatnonzero(row) for row in member]
        chosen[:, 0] = [held[draw.choice(held.size, p=np.ones(held.size) / held.size)]
                        for held, draw in zip(members, draws)]
        last = np.array([[held[-1]] for held in members])
    nearest = _squared_distances(X[chosen[:, 0]], squared_norms[chosen[:, 0]], X, squared_norms)
    if member is not None:
        nearest *= member
    potential = nearest @ unit
    for c in range(1, n_clusters):
        candidates = np.array([np.searchsorted(total, draw.uniform(size=trials) * start_potential)
                               for total, draw, start_potential in zip(np.cumsum(nearest, axis=1), draws, potential)])
        np.minimum(candidates, last, out=candidates)
        flat = candidates.ravel()
        with_candidate = _squared_distances(X[flat], squared_norms[flat], X, squared_norms).reshape(
            len(draws), trials, n_samples)
        np.minimum(nearest[:, None, :], with_candidate, out=with_candidate)
        if member is not None:
            with_candidate *= member[:, None, :]
        potentials = with_candidate @ unit
        best = np.argmin(potentials, axis=1)
        potential, nearest, chosen[:, c] = potentials[starts, best], with_candidate[starts, best], candidates[starts, best]
    return X[chosen]


def _nearest(X: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Each sample's nearest centre (the first of equals), per start: ``centres`` is
    ``(starts, n_clusters, n_features)``, the labels ``(starts, n_samples)``."""
    starts, n_clusters, n_features = centres.shape
    products = (X @ centres.reshape(starts * n_clusters, n_features).T).reshape(X.shape[0], starts, n_clusters)
    distances = np.einsum("skf,skf->sk", centres, centres)[:, None, :] - 2.0 * products.transpose(1, 0, 2)
    return np.argmin(distances, axis=2)


def _lloyd(X: np.ndarray, centres: np.ndarray, stop_shift, max_iter: int, member=None) -> np.ndarray:
    """Lloyd's iterations from ``centres`` (``(starts, n_clusters, n_features)``, changed in
    place), each start until it stops: the labels, ``(starts, n_samples)``. ``stop_shift``: each
    start's (or one for all); ``member``: the samples each start clusters (as
    :func:`_greedy_kmeans_plusplus` takes it), the others labelled -1."""
    starts, n_clusters, _ = centres.shape
    stop_shift = np.broadcast_to(np.asarray(stop_shift, dtype=np.float64), (starts,))
    outside = np.zeros((starts, X.shape[0]), dtype=bool) if member is None else member == 0
    found = np.empty((starts, X.shape[0]), dtype=np.intp)
    previous = np.full_like(found, -1)
    running = np.arange(starts)
    for _ in range(max_iter):
        labels = _assigned(X, centres[running], outside[running])
        # each start's clusters and, last, the samples it leaves out (counted, never summed)
        slots = np.bincount((labels + (n_clusters + 1) * np.arange(running.size)[:, None]).ravel(),
                            minlength=running.size * (n_clusters + 1)).reshape(running.size, n_clusters + 1)
        sizes = slots[:, :n_clusters].astype(np.float64)
        sums = _cluster_sums(X, labels, sizes)
        for start in np.flatnonzero((sizes == 0).any(axis=1)):
            _take_farthest(X, centres[running[start]], labels[start], sums[start], sizes[start])
        held = sizes > 0
        moved = np.empty_like(sums)
        # times the reciprocal, as the compiled loop scales them: the same centres to the last bit
        moved[held] = sums[held] * (1.0 / sizes[held])[:, None]
        for start, cluster in zip(*np.nonzero(~held)):  # still empty: at the largest cluster's centre
            moved[start, cluster] = moved[start, np.argmax(sizes[start])]
        shift = np.sum((moved - centres[running]) ** 2, axis=(1, 2))
        centres[running] = moved
        settled = np.all(labels == previous[running], axis=1)
        found[running[settled]] = labels[settled]
        close = ~settled & (shift <= stop_shift[running])  # stopped on the shift: the labels of the final centres
        if close.any():
            found[running[close]] = _assigned(X, moved[close], outside[running[close]])
        previous[running] = labels
        running = running[~settled & ~close]
        if running.size == 0:
            break
    else:
        found[running] = _assigned(X, centres[running], outside[running])
    found[found == n_clusters] = -1
    return found


def _assigned(X: np.ndarray, centres: np.ndarray, outside: np.ndarray) -> np.ndarray:
    """:func:`_nearest`, with the samples a start leaves out given the label ``n_clusters``."""
    labels = _nearest(X, centres)
    labels[outside] = centres.shape[1]
    return labels


def _cluster_sums(X: np.ndarray, labels: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The sum of each cluster's samples, per start: ``(starts, n_clusters, n_features)``; a label
    of ``n_clusters`` (a sample the start leaves out) is in none. A sparse product with the
    samples' memberships, which adds each cluster's samples in sample order, as scikit-learn's
    compiled loop does (so that the centres agree to the last bit); gathering the samples for
    ``np.add.reduceat`` took 4-6x as long on the faces' top 400-2,400 pixels."""
    starts, n_clusters = sizes.shape
    keys = (labels + (n_clusters + 1) * np.arange(starts)[:, None]).ravel()
    by_cluster = np.argsort(keys, kind="stable")
    by_cluster = by_cluster[labels.ravel()[by_cluster] < n_clusters]
    bounds = np.concatenate([[0], np.cumsum(sizes.ravel())]).astype(np.intp)
    membership = csr_array((np.ones(by_cluster.size), by_cluster % X.shape[0], bounds),
                           shape=(starts * n_clusters, X.shape[0]))
    return (membership @ X).reshape(starts, n_clusters, X.shape[1])


def _take_farthest(X, centres, labels, sums, sizes) -> None:
    """Give each empty cluster of one start, in turn, one of the samples farthest from their
    centres, moving it from the cluster it was in (``sums`` and ``sizes`` in place); among the
    samples the start clusters, in their order, as scikit-learn does on them alone."""
    empty = np.flatnonzero(sizes == 0)
    inside = np.flatnonzero(labels < centres.shape[0])
    distances = np.sum((X[inside] - centres[labels[inside]]) ** 2, axis=1)
    if distances.max() == 0:  # fewer distinct samples than clusters: nothing to move
        return
    farthest = inside[np.argpartition(distances, -empty.size)[:-empty.size - 1:-1]]
    for cluster, sample in zip(empty, farthest):
        sums[labels[sample]] -= X[sample]
        sums[cluster] = X[sample]
        sizes[cluster] = 1.0
        sizes[labels[sample]] -= 1.0


# ---------------------------------------------------------------- agreement of two partitions
def labelled_pair(truth, found):
    """Two labellings of the same samples as codes ``0 .. c - 1`` each (validated)."""
    truth, found = np.asarray(truth).ravel(), np.asarray(found).ravel()
    if truth.shape != found.shape or truth.size == 0:
        raise InputError(f"Two labellings of the same samples are needed; got {truth.size} and {found.size} labels.")
    _, truth = np.unique(truth, return_inverse=True)
    _, found = np.unique(found, return_inverse=True)
    return truth, found


def contingency_table(truth, found) -> np.ndarray:
    """Counts of the samples in each class (rows) and cluster (columns), of labels from
    :func:`labelled_pair` (every row and column holds a sample)."""
    table = np.zeros((truth.max() + 1, found.max() + 1))
    np.add.at(table, (truth, found), 1)
    return table


def adjusted_rand(truth, found) -> float:
    """Adjusted Rand index of two labellings (Hubert & Arabie, Journal of Classification 2, 1985):
    the share of sample pairs the two agree on (together in both, or apart in both), less what
    chance gives, over its largest value less that. 1 for the same partition, about 0 for
    independent ones; labellings that both keep every sample together, or both keep every sample
    apart, score 1, as scikit-learn's ``adjusted_rand_score`` has it.

    From the pair counts of the contingency table, as scikit-learn computes it (equal to its
    function within 1e-12, tested): its function took 1.1 ms a call on 500 samples against 0.1,
    mostly checking its input, and clustering stability calls it 8 times for each candidate of
    :func:`core.selection.automatic.choose_settings`.
    """
    truth, found = labelled_pair(truth, found)
    table = contingency_table(truth, found)
    n = truth.size
    together_both = float(np.sum(table * table)) - n  # ordered pairs together in both
    together_truth = float(np.sum(table.sum(axis=1) ** 2)) - n
    together_found = float(np.sum(table.sum(axis=0) ** 2)) - n
    apart_found = together_truth - together_both  # together in truth only
    apart_truth = together_found - together_both
    apart_both = float(n) * n - n - together_both - apart_found - apart_truth
    if apart_found == 0 and apart_truth == 0:
        return 1.0
    numerator = 2.0 * (together_both * apart_both - apart_found * apart_truth)
    denominator = ((together_both + apart_found) * (apart_found + apart_both)
                   + (together_both + apart_truth) * (apart_truth + apart_both))
    return numerator / denominator
