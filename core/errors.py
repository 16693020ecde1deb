"""The one error type of the library.

Every public entry point (loaders, algorithms, transforms) reports bad input by raising
:class:`InputError`. Its message is written for the person who supplied the input: it says what
was wrong and what to do, so that a user interface can show it as it is.
"""


class InputError(ValueError):
    """Bad input to a public function of :mod:`core`; the message is meant for the user."""
