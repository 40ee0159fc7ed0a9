"""The period a person chooses on the Energy page: whole UTC days, first to last, inclusive."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any, Final

DAY_MS: Final = 86_400_000
HOUR_MS: Final = 3_600_000
DEFAULT_DAYS: Final = 7
MAX_DAYS: Final = 400
"""A year and a margin: the page is measured on a year of data (bench/energy_page.py)."""


@dataclass(frozen=True)
class Period:
    """``first`` to ``last`` (UTC days, both included)."""

    first: date
    last: date

    def __post_init__(self) -> None:
        if self.last < self.first:
            raise ValueError(f"the period ends ({self.last}) before it starts ({self.first})")
        if len(self) > MAX_DAYS:
            raise ValueError(f"the period is {len(self)} days; at most {MAX_DAYS}")

    def __len__(self) -> int:
        return (self.last - self.first).days + 1

    @property
    def start_ms(self) -> int:
        """The first day's midnight, UTC, in ms since the epoch (included)."""
        return _ms(self.first)

    @property
    def end_ms(self) -> int:
        """The midnight after the last day, UTC, in ms since the epoch (excluded)."""
        return _ms(self.last) + DAY_MS

    @property
    def start(self) -> datetime:
        """The first day's midnight, UTC."""
        return datetime(self.first.year, self.first.month, self.first.day, tzinfo=timezone.utc)

    @property
    def end(self) -> datetime:
        """The midnight after the last day, UTC (excluded)."""
        return self.start + timedelta(days=len(self))

    def days(self) -> list[date]:
        """Every day of the period, in order."""
        return [self.first + timedelta(days=n) for n in range(len(self))]

    def day_index(self, ms: int) -> int:
        """Which day of the period ``ms`` falls on (0 = the first)."""
        return (ms - self.start_ms) // DAY_MS

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the days, and the bounds the figures were read between."""
        return {"first": self.first.isoformat(), "last": self.last.isoformat(),
                "days": len(self), "start": self.start.isoformat(),
                "end": self.end.isoformat()}

    @classmethod
    def ending(cls, last: date, days: int = DEFAULT_DAYS) -> Period:
        """The ``days`` days up to ``last``."""
        return cls(last - timedelta(days=days - 1), last)

    @classmethod
    def parse(cls, first: str | None, last: str | None, *, today: date) -> Period:
        """From the page's ``from`` / ``to`` (``YYYY-MM-DD``; empty: the last 7 days up to
        ``to``, or up to today). ValueError names what is wrong."""
        end = _day(last, "to") if last else today
        if not first:
            return cls.ending(end)
        return cls(_day(first, "from"), end)


def _ms(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=timezone.utc).timestamp()) * 1000


def _day(text: str, name: str) -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{name} must be a day as YYYY-MM-DD, not {text[:40]!r}") from None


def utc_text(ms: int | None) -> str | None:
    """A time in ms as ISO 8601 UTC, to the second (None stays None)."""
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="seconds")
