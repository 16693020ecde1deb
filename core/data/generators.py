"""Synthetic data sets of the papers, each with its ground truth.

Every generator is deterministic given ``random_state`` and returns a :class:`~core.data.dataset.Dataset`
whose ``meta`` holds the ground truth: ``meta["relevant"]`` (indices of the relevant features) and,
where the paper defines them, the solution sets or partitions.

References
----------
.. [WS03] L. Wolf and A. Shashua, "Feature selection for unsupervised and supervised inference:
   the emergence of sparsity in a weighted-based approach", ICCV 2003, Sec. 5.
.. [W01] J. Weston, S. Mukherjee, O. Chapelle, M. Pontil, T. Poggio and V. Vapnik, "Feature
   selection for SVMs", NIPS 2001 (the data [WS03] follows "precisely").
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004, Sec. 4 and Fig. 2.
.. [Sha] A. Shashua, "A new paradigm for feature selection" (talk), slides 30-31: the
   synthetic model of Ben-Dor, Friedman and Yakhini (RECOMB 2000).
"""

from __future__ import annotations

import numpy as np

from .dataset import Dataset
from ..errors import InputError

__all__ = ["weston_linear", "weston_nonlinear", "topographic_data", "ben_dor", "random_matrix"]


def _check_count(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f"{name} must be an integer of at least {minimum}; got {value!r}.")
    return int(value)


def weston_linear(n_samples: int = 200, random_state=None, noise_std: float = 20.0) -> Dataset:
    """Weston et al.'s "linear" problem: 6 relevant features out of 202 ([WS03] Sec. 5, [W01]).

    The label ``y`` is -1 or +1 with equal probability. With probability 0.7 the first three
    features are ``y * N(i, 1)`` (i = 1, 2, 3) and the next three ``N(0, 1)``; otherwise the first
    three are ``N(0, 1)`` and the next three ``y * N(i - 3, 1)`` (i = 4, 5, 6). The remaining 196
    features are ``N(0, 20)``, read as a standard deviation of 20 (the papers do not say; Q-alpha
    normalises every feature, so the choice does not affect it).

    Returns
    -------
    Dataset
        ``n_samples x 202``, labels in {-1, +1}; ``meta["relevant"] = [0, 1, 2, 3, 4, 5]``.
    """
    n_samples = _check_count(n_samples, "n_samples", 2)
    rng = np.random.default_rng(random_state)
    y = rng.choice(np.array([-1, 1]), size=n_samples)
    X = rng.normal(0.0, noise_std, size=(n_samples, 202))
    first_group = rng.random(n_samples) < 0.7
    means = np.array([1.0, 2.0, 3.0])
    informative = y[:, None] * rng.normal(means, 1.0, size=(n_samples, 3))
    plain = rng.normal(0.0, 1.0, size=(n_samples, 3))
    X[:, 0:3] = np.where(first_group[:, None], informative, plain)
    informative = y[:, None] * rng.normal(means, 1.0, size=(n_samples, 3))
    plain = rng.normal(0.0, 1.0, size=(n_samples, 3))
    X[:, 3:6] = np.where(first_group[:, None], plain, informative)
    names = [f"relevant {j + 1}" for j in range(6)] + [f"noise {j + 1}" for j in range(196)]
    return Dataset(X, labels=y, feature_names_=names, name="Weston linear", kind="synthetic",
                   source="Weston et al., NIPS 2001, as used in Wolf & Shashua, ICCV 2003 (Sec. 5)",
                   meta={"relevant": np.arange(6), "random_state": random_state})


def weston_nonlinear(n_samples: int = 200, random_state=None, noise_std: float = 20.0) -> Dataset:
    """Weston et al.'s "non-linear" problem: 2 relevant features out of 52 ([W01]).

    For ``y = -1`` the first two features are drawn from ``N(mu_1, I)`` or ``N(mu_2, I)`` with
    equal probability, ``mu_1 = (-3/4, -3)``, ``mu_2 = (3/4, 3)``; for ``y = +1`` from
    ``N(mu_3, I)`` or ``N(mu_4, I)``, ``mu_3 = (3, -3)``, ``mu_4 = (-3, 3)``. The other 50
    features are ``N(0, 20)`` (standard deviation 20). No single feature separates the classes.
    """
    n_samples = _check_count(n_samples, "n_samples", 2)
    rng = np.random.default_rng(random_state)
    y = rng.choice(np.array([-1, 1]), size=n_samples)
    centres = {-1: np.array([[-0.75, -3.0], [0.75, 3.0]]), 1: np.array([[3.0, -3.0], [-3.0, 3.0]])}
    which = rng.integers(0, 2, size=n_samples)
    mean = np.where((y == -1)[:, None], centres[-1][which], centres[1][which])
    X = rng.normal(0.0, noise_std, size=(n_samples, 52))
    X[:, :2] = mean + rng.normal(size=(n_samples, 2))
    names = ["relevant 1", "relevant 2"] + [f"noise {j + 1}" for j in range(50)]
    return Dataset(X, labels=y, feature_names_=names, name="Weston non-linear", kind="synthetic",
                   source="Weston et al., NIPS 2001 (non-linear problem)",
                   meta={"relevant": np.arange(2), "random_state": random_state})


def topographic_data(random_state=None, n_samples: int = 150, separation: float = 2.0,
                     noise_std: float = 0.5) -> Dataset:
    """The topographical-map data of [SW04] Sec. 4 / Fig. 2: 20 features, two solution sets.

    The samples carry two independent partitions into three clusters of equal size. Features
    "1", "2", "3" induce the first partition (feature ``c`` is raised by ``separation`` on the
    samples of cluster ``c``, plus Gaussian noise), features "A", "B", "C" the second one. The
    hybrid features "1A", "2B", "3C" are the sums of 1 + A, 2 + B, 3 + C, so they belong to both
    solutions. The 11 irrelevant features are random permutations of the entries of feature "1".
    (The paper does not give its cluster model; this is the simplest one with the stated
    structure.)

    Returns
    -------
    Dataset
        ``n_samples x 20``; labels = first partition; ``meta`` holds ``"partitions"`` (2 x
        n_samples), ``"solution_sets"`` ({"123": [0, 1, 2], "ABC": [3, 4, 5]}), ``"hybrid"``
        ([6, 7, 8]) and ``"relevant"`` (0-8).
    """
    n_samples = _check_count(n_samples, "n_samples", 6)
    rng = np.random.default_rng(random_state)
    first = np.arange(n_samples) % 3
    rng.shuffle(first)
    second = np.arange(n_samples) % 3
    rng.shuffle(second)
    X = np.empty((n_samples, 20))
    for c in range(3):
        X[:, c] = separation * (first == c) + rng.normal(0.0, noise_std, n_samples)
        X[:, 3 + c] = separation * (second == c) + rng.normal(0.0, noise_std, n_samples)
        X[:, 6 + c] = X[:, c] + X[:, 3 + c]
    for j in range(9, 20):
        X[:, j] = rng.permutation(X[:, 0])
    names = ["1", "2", "3", "A", "B", "C", "1A", "2B", "3C"] + [f"perm {j - 8}" for j in range(9, 20)]
    return Dataset(X, labels=first, feature_names_=names, name="Topographical map ([SW04] Sec. 4)",
                   kind="synthetic", source="Shashua & Wolf, ECCV 2004, Sec. 4 and Fig. 2",
                   meta={"partitions": np.vstack([first, second]),
                         "solution_sets": {"123": np.arange(3), "ABC": np.arange(3, 6)},
                         "hybrid": np.arange(6, 9), "relevant": np.arange(9),
                         "random_state": random_state})


def ben_dor(a: int = 25, b: int = 47, m: int = 600, e: float = 0.72, d: float = 555.0,
            s: float = 0.75, random_state=None) -> Dataset:
    """The synthetic gene-expression model of Ben-Dor, Friedman & Yakhini ([Sha] slides 30-31).

    Parameters (defaults: the slide's leukemia-like setting)
    ----------
    a, b : int
        Number of samples of class A and of class B.
    m : int
        Number of features (genes).
    e : float
        Fraction of irrelevant features (the first ``round((1 - e) m)`` features are relevant).
    d : float
        Size of the interval of means: class means are drawn uniformly from ``[-1.5 d, 1.5 d]``.
    s : float
        Spread (standard-deviation coefficient).

    A relevant feature draws a mean ``mu_A`` and ``mu_B`` per class and samples each class from
    ``N(mu, (s |mu|)^2)`` (standard deviation proportional to the mean, as ``N(A, sA)`` on the
    slide). An irrelevant feature is ``N(0, s^2)``, literally as on the slide.
    """
    a = _check_count(a, "a (class A samples)", 1)
    b = _check_count(b, "b (class B samples)", 1)
    m = _check_count(m, "m (features)", 2)
    if not 0.0 <= e <= 1.0:
        raise InputError(f"e (fraction of irrelevant features) must lie in [0, 1]; got {e}.")
    if d <= 0 or s <= 0:
        raise InputError(f"d and s must be positive; got d={d}, s={s}.")
    rng = np.random.default_rng(random_state)
    n_relevant = int(round((1.0 - e) * m))
    labels = np.array(["A"] * a + ["B"] * b)
    X = rng.normal(0.0, s, size=(a + b, m))
    mean_a = rng.uniform(-1.5 * d, 1.5 * d, n_relevant)
    mean_b = rng.uniform(-1.5 * d, 1.5 * d, n_relevant)
    X[:a, :n_relevant] = rng.normal(mean_a, s * np.abs(mean_a), size=(a, n_relevant))
    X[a:, :n_relevant] = rng.normal(mean_b, s * np.abs(mean_b), size=(b, n_relevant))
    names = [f"relevant gene {j + 1}" for j in range(n_relevant)] + \
            [f"irrelevant gene {j + 1}" for j in range(m - n_relevant)]
    return Dataset(X, labels=labels, feature_names_=names, name="Ben-Dor synthetic genes",
                   kind="synthetic",
                   source="Ben-Dor, Friedman & Yakhini, RECOMB 2000; as in Shashua's talk",
                   meta={"relevant": np.arange(n_relevant), "random_state": random_state,
                         "parameters": dict(a=a, b=b, m=m, e=e, d=d, s=s)})


def random_matrix(n_samples: int = 50, n_features: int = 200, random_state=None) -> Dataset:
    """Standard normal noise: the "random data matrix" of [WS03] Fig. 1b (no relevant features)."""
    n_samples = _check_count(n_samples, "n_samples", 2)
    n_features = _check_count(n_features, "n_features", 2)
    rng = np.random.default_rng(random_state)
    return Dataset(rng.standard_normal((n_samples, n_features)), name="Random matrix",
                   kind="synthetic", source="i.i.d. N(0, 1) entries (Wolf & Shashua, ICCV 2003, Fig. 1b)",
                   meta={"relevant": np.arange(0), "random_state": random_state})
