"""Where Q-alpha's side information comes from, resolved in one place for the app's pages, the
evaluation protocols and the rankers ([SW04] Def. 3 and Sec. 5).

A user names the side information once (:class:`SideInformation`): none, the samples of some
classes as the side data W (the rest are the main data), pairs of samples with different labels
that must stay apart, or a side data set of its own. :meth:`SideInformation.resolve` turns that
into what :func:`core.selection.qalpha.q_alpha` takes, on whatever samples it is handed: a
protocol that hands it a training fold keeps the held-out labels out of the side information too.

References
----------
.. [SW04] A. Shashua and L. Wolf, "Kernel feature selection with side data using a spectral
   approach", ECCV 2004.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data.dataset import side_class_mask
from ..errors import InputError
from .qalpha import pairs_from_labels

__all__ = ["SIDE_KINDS", "SideInformation", "ResolvedSide"]

#: The kinds of side information, as the Q-alpha page names them.
SIDE_KINDS = ("none", "side classes", "pairs", "side data")


@dataclass(frozen=True, eq=False)
class ResolvedSide:
    """Side information resolved on given samples: the rows that are main data (a boolean mask),
    their labels, and the side data or the pairs (indices into the main rows) for ``q_alpha``."""

    main_rows: np.ndarray
    labels: np.ndarray | None
    side: np.ndarray | None = None
    pairs: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class SideInformation:
    """The side information of a Q-alpha run, named once.

    Parameters
    ----------
    kind : one of :data:`SIDE_KINDS`
    side_classes : sequence
        For ``"side classes"``: the classes whose samples form the side data W.
    n_pairs : int
        For ``"pairs"``: how many pairs of samples with different labels (drawn by
        :func:`core.selection.qalpha.pairs_from_labels` with the run's seed).
    side : array_like, shape (n_side, n_features)
        For ``"side data"``: a fixed side data set (it uses no labels).
    """

    kind: str = "none"
    side_classes: tuple = ()
    n_pairs: int = 0
    side: object = None

    def __post_init__(self):
        if self.kind not in SIDE_KINDS:
            raise InputError(f"The kind of side information must be one of {', '.join(SIDE_KINDS)}; got {self.kind!r}.")
        object.__setattr__(self, "side_classes", tuple(self.side_classes))
        if self.kind == "side classes" and not self.side_classes:
            raise InputError("Choose at least one side class, or switch side information off.")
        if self.kind == "pairs" and (isinstance(self.n_pairs, bool) or int(self.n_pairs) < 1):
            raise InputError(f"Give at least one pair; got {self.n_pairs!r}.")
        if self.kind == "side data" and self.side is None:
            raise InputError("Side information from a side data set needs the side data.")

    @classmethod
    def from_options(cls, *, side=None, side_classes=None, n_pairs=None) -> "SideInformation":
        """At most one of the three keyword forms that :func:`core.selection.methods.q_alpha_ranker` takes."""
        given = [name for name, value in (("side", side), ("side_classes", side_classes), ("n_pairs", n_pairs))
                 if value is not None]
        if len(given) > 1:
            raise InputError("Give at most one kind of side information: side, side_classes or n_pairs.")
        if side is not None:
            return cls("side data", side=np.asarray(side, dtype=np.float64))
        if side_classes is not None:
            return cls("side classes", side_classes=side_classes)
        if n_pairs is not None:
            return cls("pairs", n_pairs=n_pairs)
        return cls()

    @property
    def uses_labels(self) -> bool:
        """Whether resolving it reads the labels (side classes and pairs do): a method run with it
        is then judged as a supervised one."""
        return self.kind in ("side classes", "pairs")

    def resolve(self, labels, n_samples: int, random_state=None) -> ResolvedSide:
        """The main rows, their labels and the side data or pairs, on ``n_samples`` samples with
        ``labels`` (None where no labels are handed; refused when this kind needs them)."""
        labels = None if labels is None else np.asarray(labels).ravel()
        if self.uses_labels and labels is None:
            raise InputError("This side information comes from the labels (side classes or pairs): pass the labels.")
        main_rows = np.ones(n_samples, dtype=bool)
        if self.kind == "side classes":
            main_rows = ~side_class_mask(labels, self.side_classes)
            return ResolvedSide(main_rows, labels[main_rows], side=None)
        if self.kind == "pairs":
            return ResolvedSide(main_rows, labels, pairs=pairs_from_labels(labels, int(self.n_pairs), random_state))
        return ResolvedSide(main_rows, labels, side=self.side if self.kind == "side data" else None)

    def split(self, X, labels=None, random_state=None):
        """``(main X, main labels, side X, pairs)`` for ``q_alpha`` on the samples ``X``."""
        resolved = self.resolve(labels, np.shape(X)[0], random_state)
        main = X if resolved.main_rows.all() else X[resolved.main_rows]
        side = X[~resolved.main_rows] if self.kind == "side classes" else resolved.side
        return main, resolved.labels, side, resolved.pairs
