"""Timing shared by the benchmark scripts."""

import time


def best_of(function, repeats: int = 5) -> float:
    """The fastest of ``repeats`` runs of ``function()`` in seconds: the least disturbed by the
    other work of a shared machine."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)
