"""The system browser the page tests drive: Debian's chromium through playwright."""

from __future__ import annotations

import os

CHROMIUM = "/usr/bin/chromium"
"""Debian's chromium: never a browser playwright downloads."""


def browser_missing() -> str:
    """Why the system chromium cannot be driven here ("" when it can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        return f"playwright is not installed ({exc}); it is a dev dependency"
    if not os.access(CHROMIUM, os.X_OK):
        return (f"no {CHROMIUM}: install Debian's chromium (apt-get install chromium), "
                "as .ci/run does")
    return ""
