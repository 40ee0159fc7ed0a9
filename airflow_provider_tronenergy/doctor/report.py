"""A check's result and how the doctor prints them: plain lines for people, JSON for
machines, every known secret blanked out of both."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Final

REDACTED: Final = "***"
MIN_SECRET: Final = 4
"""Shorter values are not blanked: "***" for every "1" would hide the figures."""


class Status(str, Enum):
    """PASS, FAIL, or SKIP: not checked because the person said so (an empty conn id)."""

    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclass(frozen=True)
class Check:
    """One line of the doctor's report: what was checked, what it found, and the fix."""

    name: str
    status: Status
    detail: str
    fix: str = ""

    @classmethod
    def passed(cls, name: str, detail: str) -> Check:
        return cls(name, Status.PASS, detail)

    @classmethod
    def failed(cls, name: str, detail: str, fix: str) -> Check:
        return cls(name, Status.FAIL, detail, fix)

    @classmethod
    def skipped(cls, name: str, detail: str) -> Check:
        return cls(name, Status.SKIP, detail)

    @property
    def failing(self) -> bool:
        return self.status is Status.FAIL


def exit_code(checks: Iterable[Check]) -> int:
    """1 when any line failed, else 0."""
    return 1 if any(check.failing for check in checks) else 0


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret of at least :data:`MIN_SECRET` characters blanked,
    longest first (a secret inside another is not left half shown)."""
    for secret in sorted({s for s in secrets if s and len(s) >= MIN_SECRET}, key=len,
                         reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def as_text(checks: Sequence[Check]) -> str:
    """One line per check, its fix on the next; a last line with the verdict."""
    width = max((len(c.name) for c in checks), default=0)
    lines = []
    for check in checks:
        lines.append(f"{check.status.value}  {check.name:<{width}}  {check.detail}")
        if check.fix:
            lines.append(f"{'':6}{'':<{width}}  fix: {check.fix}")
    failed = sum(c.failing for c in checks)
    lines.append(f"{failed} of {len(checks)} checks failed: do not move money until they pass"
                 if failed else f"all {len(checks)} checks passed")
    return "\n".join(lines)


def as_json(checks: Sequence[Check]) -> str:
    """``{"ok": ..., "checks": [{"name", "status", "detail", "fix"}, ...]}``."""
    return json.dumps({"ok": exit_code(checks) == 0,
                       "checks": [{**asdict(c), "status": c.status.value} for c in checks]},
                      indent=2)
