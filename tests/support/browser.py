"""The system browser the page tests drive: Debian's chromium through playwright."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CHROMIUM = "/usr/bin/chromium"
"""Debian's chromium: never a browser playwright downloads."""


def skip_without_browser() -> None:
    """Skip the calling test, saying why, when the system chromium cannot be driven."""
    import pytest

    reason = browser_missing()
    if reason:
        pytest.skip(reason)


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


@contextmanager
def browser_page(width: int = 1280, height: int = 720) -> Iterator[Any]:
    """A page of the system chromium, headless, ``width`` x ``height``; closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()
