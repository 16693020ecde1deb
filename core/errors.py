"""The library's exceptions.

Every public entry point (loaders, algorithms, transforms) reports bad input by raising
:class:`InputError`. Its message is written for the person who supplied the input: it says what
was wrong and what to do, so that a user interface can show it as it is. :class:`Stopped` ends a
computation whose progress callback asked it to stop before it had a result to give.
"""


class InputError(ValueError):
    """Bad input to a public function of :mod:`core`; the message is meant for the user."""


class Stopped(Exception):
    """A long computation was stopped by its progress callback (which returned False) before it
    had a result: a greedy path, a bootstrap or an experiment has no meaningful partial result.
    (Iterative solvers return theirs instead, with ``stopped=True``.)"""
