"""The period a person asks for: whole UTC days, both ends included, bounded."""

from __future__ import annotations

from datetime import date

import pytest

from airflow_provider_tronenergy.ui.period import MAX_DAYS, Period

TODAY = date(2026, 3, 10)


def test_by_default_the_last_seven_days_up_to_today():
    period = Period.parse(None, None, today=TODAY)
    assert (period.first, period.last, len(period)) == (date(2026, 3, 4), TODAY, 7)
    assert period.end_ms - period.start_ms == 7 * 86_400_000
    assert period.to_dict()["start"] == "2026-03-04T00:00:00+00:00"
    assert period.to_dict()["end"] == "2026-03-11T00:00:00+00:00"


def test_from_and_to_are_both_included():
    period = Period.parse("2026-02-27", "2026-03-01", today=TODAY)
    assert [d.isoformat() for d in period.days()] == ["2026-02-27", "2026-02-28",
                                                      "2026-03-01"]
    assert period.day_index(period.start_ms) == 0
    assert period.day_index(period.end_ms - 1) == 2
    assert Period.parse("", "2026-03-01", today=TODAY).first == date(2026, 2, 23)


@pytest.mark.parametrize(("first", "last", "says"), [
    ("2026-03-02", "2026-03-01", "ends"),
    ("yesterday", None, "from must be a day"),
    (None, "2026-13-01", "to must be a day"),
    ("2024-01-01", "2026-03-01", f"at most {MAX_DAYS}"),
])
def test_a_bad_period_is_refused_saying_why(first, last, says):
    with pytest.raises(ValueError, match=says):
        Period.parse(first, last, today=TODAY)
