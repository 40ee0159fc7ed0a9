"""Where the Energy page lives on the API server (shared by the plugin and the app)."""

from __future__ import annotations

from urllib.parse import urlsplit

URL_PREFIX = "/tronenergy-ui"
PAGE_PATH = "/energy"


def base_path() -> str:
    """The path of ``[api] base_url`` (``""`` at the root): the page's URL starts with it."""
    try:
        from airflow.configuration import conf

        base_url = conf.get("api", "base_url", fallback="") or ""
    except Exception:  # a plugin must load even where the configuration cannot be read
        return ""
    return urlsplit(base_url).path.rstrip("/")


def page_href() -> str:
    """Where the UI's iframe opens the page (same origin: it carries the sign-in cookie)."""
    return f"{base_path()}{URL_PREFIX}{PAGE_PATH}"
