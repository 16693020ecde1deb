"""k-means with seeded starts, in NumPy: the clusterings scikit-learn's ``KMeans`` finds, without
its per-call cost.

The Q-alpha page scores k-means on the top K features each time the hand stops on a new K, five
seeded starts on 130 x K values on the AR faces. ``KMeans(n_init=1).fit_predict`` spent 1.5 ms a
start there, mostly checking its input and seeding through its validated helpers (the seeding
alone 0.9 ms), and the page's k-means was about 14 of the server's 30 ms of CPU per K report
(``benchmarks/bench_users.py``). The same algorithm on the arrays as they are, the starts side by
side, takes 2.3-4.2x less time on the faces' top 20 to 2,400 pixels (4.2 ms against 9.9 at the
page's default K of 420; ``benchmarks/bench_metrics.py``).

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

__all__ = ["seeded_kmeans"]


def seeded_kmeans(Z, n_clusters: int, n_runs: int = 5, random_state=0, *, max_iter: int = 300,
                  tol: float = 1e-4) -> list[np.ndarray]:
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

    Returns
    -------
    list of arrays of shape (n_samples,)
        Each start's cluster of every sample, ``0 .. n_clusters - 1``: the labels
        ``sklearn.cluster.KMeans(n_clusters, n_init=1, random_state=random_state + run)`` gives.
    """
    X = np.array(Z, dtype=np.float64, order="C")
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise InputError(f"k-means needs a 2-D array of samples by features; got shape {np.shape(Z)}.")
    if not np.isfinite(X).all():
        raise InputError("k-means needs finite values; the data hold NaN or infinite values.")
    n_clusters, n_runs = int(n_clusters), int(n_runs)
    if not 1 <= n_clusters <= X.shape[0]:
        raise InputError(f"k-means needs between 1 and {X.shape[0]} clusters (the samples); got {n_clusters}.")
    if n_runs < 1:  # no start asked for: no clustering (as one KMeans call per start gave)
        return []
    X -= X.mean(axis=0)
    squared_norms = np.einsum("ij,ij->i", X, X)
    stop_shift = tol * float(np.mean(np.var(X, axis=0)))
    # the starts run side by side, each NumPy call serving all of them: on 130 samples a call's
    # own cost is most of the work
    random_state = random_seed(random_state)
    draws = [np.random.RandomState(random_state + run) for run in range(n_runs)]
    return list(_lloyd(X, _greedy_kmeans_plusplus(X, squared_norms, n_clusters, draws), stop_shift, max_iter))


def _squared_distances(rows: np.ndarray, row_norms: np.ndarray, X: np.ndarray, squared_norms: np.ndarray) -> np.ndarray:
    """Squared distances of ``rows`` to every sample of ``X``, from the norms (never below 0)."""
    distances = -2.0 * (rows @ X.T)
    distances += row_norms[:, None]
    distances += squared_norms[None, :]
    return np.maximum(distances, 0.0, out=distances)


def _greedy_kmeans_plusplus(X: np.ndarray, squared_norms: np.ndarray, n_clusters: int, draws: list) -> np.ndarray:
    """Greedy k-means++ seeding of one start per ``RandomState`` of ``draws``: the initial
    centres, ``(starts, n_clusters, n_features)``, rows of ``X``."""
    n_samples, starts = X.shape[0], np.arange(len(draws))
    unit = np.ones(n_samples)
    trials = 2 + int(np.log(n_clusters))
    chosen = np.empty((len(draws), n_clusters), dtype=np.intp)
    chosen[:, 0] = [draw.choice(n_samples, p=unit / n_samples) for draw in draws]
    nearest = _squared_distances(X[chosen[:, 0]], squared_norms[chosen[:, 0]], X, squared_norms)
    potential = nearest @ unit
    for c in range(1, n_clusters):
        candidates = np.array([np.searchsorted(total, draw.uniform(size=trials) * start_potential)
                               for total, draw, start_potential in zip(np.cumsum(nearest, axis=1), draws, potential)])
        np.minimum(candidates, n_samples - 1, out=candidates)
        flat = candidates.ravel()
        with_candidate = _squared_distances(X[flat], squared_norms[flat], X, squared_norms).reshape(
            len(draws), trials, n_samples)
        np.minimum(nearest[:, None, :], with_candidate, out=with_candidate)
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


def _lloyd(X: np.ndarray, centres: np.ndarray, stop_shift: float, max_iter: int) -> np.ndarray:
    """Lloyd's iterations from ``centres`` (``(starts, n_clusters, n_features)``, changed in
    place), each start until it stops: the labels, ``(starts, n_samples)``."""
    starts, n_clusters, _ = centres.shape
    found = np.empty((starts, X.shape[0]), dtype=np.intp)
    previous = np.full_like(found, -1)
    running = np.arange(starts)
    for _ in range(max_iter):
        labels = _nearest(X, centres[running])
        sizes = np.bincount((labels + n_clusters * np.arange(running.size)[:, None]).ravel(),
                            minlength=running.size * n_clusters).reshape(running.size, n_clusters).astype(np.float64)
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
        close = ~settled & (shift <= stop_shift)  # stopped on the shift: the labels of the final centres
        if close.any():
            found[running[close]] = _nearest(X, moved[close])
        previous[running] = labels
        running = running[~settled & ~close]
        if running.size == 0:
            return found
    found[running] = _nearest(X, centres[running])
    return found


def _cluster_sums(X: np.ndarray, labels: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The sum of each cluster's samples, per start: ``(starts, n_clusters, n_features)``. A sparse
    product with the samples' memberships, which adds each cluster's samples in sample order, as
    scikit-learn's compiled loop does (so that the centres agree to the last bit); gathering the
    samples for ``np.add.reduceat`` took 4-6x as long on the faces' top 400-2,400 pixels."""
    starts, n_clusters = sizes.shape
    clusters = (labels + n_clusters * np.arange(starts)[:, None]).ravel()
    by_cluster = np.argsort(clusters, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(sizes.ravel())]).astype(np.intp)
    membership = csr_array((np.ones(clusters.size), by_cluster % X.shape[0], bounds),
                           shape=(starts * n_clusters, X.shape[0]))
    return (membership @ X).reshape(starts, n_clusters, X.shape[1])


def _take_farthest(X, centres, labels, sums, sizes) -> None:
    """Give each empty cluster of one start, in turn, one of the samples farthest from their
    centres, moving it from the cluster it was in (``sums`` and ``sizes`` in place)."""
    empty = np.flatnonzero(sizes == 0)
    distances = np.sum((X - centres[labels]) ** 2, axis=1)
    if distances.max() == 0:  # fewer distinct samples than clusters: nothing to move
        return
    farthest = np.argpartition(distances, -empty.size)[:-empty.size - 1:-1]
    for cluster, sample in zip(empty, farthest):
        sums[labels[sample]] -= X[sample]
        sums[cluster] = X[sample]
        sizes[cluster] = 1.0
        sizes[labels[sample]] -= 1.0
