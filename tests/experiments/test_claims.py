"""A claim checks what its sentence states: a curve said to rise must not fall anywhere along it
by more than its noise, not only end above where it starts; too few runs leave it undecided."""

import numpy as np
from scipy.stats import norm

from experiments import run_experiment
from experiments.registry import trend_claim


def test_a_curve_that_dips_in_the_middle_does_not_rise_though_its_ends_do():
    x = np.array([2, 3, 5, 10])
    dipping = np.array([0.84, 0.60, 0.90, 1.00])
    claim = trend_claim("rises", {"curve": (x, dipping, np.full(4, 0.02))})
    assert claim.holds is False and claim.verdict == "Does not hold"
    assert "0.84 at 2 -> 0.60 at 3" in claim.evidence


def test_a_rising_curve_holds_and_a_noisy_one_is_undecided():
    x = np.arange(5)
    rising = np.array([0.1, 0.3, 0.29, 0.6, 0.9])  # the small step back is within its noise
    assert trend_claim("rises", {"c": (x, rising, np.full(5, 0.01))}).holds is True
    noisy = trend_claim("rises", {"c": (x, rising, np.full(5, 0.1))})
    assert noisy.holds is None and noisy.verdict == "Undecided with these runs"
    assert trend_claim("falls", {"c": (x, rising[::-1], np.full(5, 0.01))}, rising=False).holds is True
    # one curve against the claim decides it, whatever the others say
    both = trend_claim("rises", {"a": (x, rising, np.full(5, 0.01)), "b": (x, rising[::-1], np.full(5, 0.01))})
    assert both.holds is False and "b: " in both.evidence


def test_fig_1a_reports_the_dip_from_two_to_three_features():
    """For n = 2 the leading eigenvector of [[a, b], [b, c]] is positive exactly when b > 0, so
    P = Phi(mean / sd) = Phi(1/sqrt(2)) = 0.76 for N(1/6, 2/36) entries; at n = 3 it is lower.
    The claim that the probability grows with n therefore fails, and says where."""
    result = run_experiment("positivity", quick=True)
    table = result.table[result.table.distribution == "N(1/6, 2/36)"].set_index("n").probability
    assert abs(table[2] - norm.cdf(1 / np.sqrt(2))) < 0.15
    grows = next(claim for claim in result.claims if claim.statement.startswith("The probability grows with n"))
    assert grows.holds is False and "at 2 ->" in grows.evidence and "at 3" in grows.evidence
    assert result.to_json()["claims"][1]["holds"] is False


def test_the_quick_svm_curve_is_undecided_not_passed():
    result = run_experiment("weston_svm", quick=True)
    falls = next(claim for claim in result.claims if claim.statement.startswith("Test error falls"))
    assert falls.holds is None and "could be noise" in falls.evidence
    assert result.to_json()["claims"][-1]["holds"] is None
