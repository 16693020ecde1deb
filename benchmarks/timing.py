"""Timing shared by the benchmark scripts."""

import statistics
import time


def times_of(function, repeats: int) -> list[float]:
    """The seconds each of ``repeats`` runs of ``function()`` took."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return times


def best_of(function, repeats: int = 5) -> float:
    """The fastest of ``repeats`` runs of ``function()`` in seconds: the least disturbed by the
    other work of a shared machine."""
    return min(times_of(function, repeats))


def median_p90(times) -> tuple[float, float]:
    """The median and the 90th percentile (the nearest rank) of ``times``, NaN (a failed
    measure) left out; NaN for both when nothing is left."""
    times = sorted(t for t in times if t == t)
    if not times:
        return float("nan"), float("nan")
    return statistics.median(times), times[min(len(times) - 1, int(round(0.9 * (len(times) - 1))))]
