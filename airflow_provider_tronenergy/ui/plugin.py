"""The Energy page's plugin: an ``external_views`` entry and the app it shows, on the API server.

Registered through the ``airflow.plugins`` entry point (``tronenergy_energy``). Every
Airflow component imports plugins, so this module stays cheap: the FastAPI app is built
on its first request (``LazyPageApp``). docs/decisions.md says why an external view over a
server-rendered page rather than a React app.

The page lives at ``/tronenergy-ui/energy`` (under ``[api] base_url``'s path), apart from
the callback receiver's ``/tronenergy``: the receiver stays open to the service, while
every request here is checked against Airflow's auth manager (``ui.app``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from urllib.parse import quote

from airflow.plugins_manager import AirflowPlugin

from airflow_provider_tronenergy.ui.urls import URL_PREFIX, page_href
from tronenergy_protocol.serving import ASGIApp, LazyApp

log = logging.getLogger(__name__)


URL_ROUTE = "tronenergy-energy"
# A bolt, as a data: URL: the nav icon needs no file served and nothing fetched.
ICON = "data:image/svg+xml," + quote(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" '
    'stroke="#c58b00" stroke-width="2" stroke-linejoin="round">'
    '<path d="M13 2 4 14h7l-1 8 9-12h-7z"/></svg>')


def build_page_app() -> ASGIApp:
    """The page's FastAPI app (imports deferred to the first request)."""
    from airflow_provider_tronenergy.ui.app import create_app

    return create_app()


class LazyPageApp(LazyApp):
    """The page's app, built on its first request; 503 until it can."""

    def __init__(self, build: Callable[[], ASGIApp] = build_page_app,
                 *, retry: float = 5.0) -> None:
        super().__init__(build, what="the tronenergy Energy page", retry=retry,
                         unavailable={"detail": "the Energy page failed to start; see the "
                                                "API server log"})


page_app = LazyPageApp()


class TronEnergyPagePlugin(AirflowPlugin):
    """The **Energy** entry in the UI's navigation, and the page's app behind it."""

    name = "tronenergy_energy"
    fastapi_apps = [
        {"app": page_app, "url_prefix": URL_PREFIX, "name": "TRON energy page"},
    ]
    external_views = [
        {"name": "Energy", "href": page_href(), "url_route": URL_ROUTE, "destination": "nav",
         "icon": ICON},
    ]
