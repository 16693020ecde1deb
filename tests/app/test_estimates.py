"""The rest of a run said at the rate of its steps so far (pages/ui/estimates.RestOfRun)."""

import pytest

from pages.ui.estimates import RestOfRun


def test_rest_is_the_rate_since_the_first_report_times_the_steps_left():
    rest = RestOfRun()
    assert rest.seconds(0.0, 0, 7) is None  # nothing done: no anchor yet
    assert rest.seconds(5.0, 1, 7) is None  # the first step (cold, or k-means only) is left out of the rate
    assert rest.seconds(6.0, 2, 7) == pytest.approx(1.0 * 5)
    assert rest.seconds(9.0, 4, 7) == pytest.approx(4.0 / 3 * 3)  # (9 - 5) s over 3 steps, 3 left
    assert rest.seconds(12.0, 7, 7) is None  # done


def test_reports_skipped_by_the_progress_interval_still_give_the_mean_rate():
    rest = RestOfRun()
    assert rest.seconds(3.0, 3, 13) is None  # the first report the page saw came at step 3
    assert rest.seconds(3.0, 3, 13) is None  # no step since
    assert rest.seconds(7.0, 5, 13) == pytest.approx(2.0 * 8)


def test_reports_inside_a_step_take_the_time_spent_on_it_off_the_rest():
    """choose_settings reports each iteration of a solve with the count of settings done so far
    (issue 49): the rest counts down within a step instead of growing with it."""
    rest = RestOfRun()
    assert rest.seconds(1.0, 1, 7) is None
    assert rest.seconds(3.0, 2, 7) == pytest.approx(2.0 * 5)
    assert rest.seconds(4.0, 2, 7) == pytest.approx(2.0 * 5 - 1.0)  # a second into the third setting
    assert rest.seconds(20.0, 2, 7) == 0.0  # a slow step: never below nothing
    assert rest.seconds(21.0, 3, 7) == pytest.approx(10.0 * 4)
