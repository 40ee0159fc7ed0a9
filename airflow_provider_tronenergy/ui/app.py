"""The Energy page's app on the API server: Airflow's auth manager decides every request.

The signed-in user is read as Airflow's own REST API reads it (``core_api.security.get_user``:
the ``Authorization: Bearer`` token, else the ``_token`` cookie the UI's sign-in sets, which
the UI's iframe sends because the page is on the UI's origin). No user: 401, with a link
to the sign-in page. A user the auth manager does not grant ``GET`` on the custom view
``RESOURCE_NAME``: 403. Neither ever gets a figure.
"""

from __future__ import annotations

import html
import logging
import threading
from datetime import date, datetime, timezone
from typing import Any

# Imported by the plugin's app on its first request, in the API server only: FastAPI reads
# the routes' annotations (``Request``) from this module's names.
from airflow.api_fastapi.auth.managers.models.base_user import BaseUser
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

log = logging.getLogger(__name__)

# The resource an auth manager grants (``is_authorized_custom_view``): FAB's role
# permission "can read on TRON Energy", Keycloak's custom resource of that name; the
# simple auth manager grants every role at least VIEWER.
RESOURCE_NAME = "TRON Energy"


def _login_url(path: str) -> str:
    """The auth manager's sign-in page, coming back to ``path`` where it can."""
    from airflow.api_fastapi.app import get_auth_manager

    from airflow_provider_tronenergy.ui.urls import base_path

    manager = get_auth_manager()
    try:
        url = manager.get_url_login(next_url=path)
    except TypeError:  # an auth manager whose get_url_login takes no argument
        url = manager.get_url_login()
    return url if url.startswith(("http://", "https://")) else f"{base_path()}{url}"


def _refusal_page(status: int, detail: str, login: str | None) -> str:
    link = (f'<p><a href="{html.escape(login)}" target="_top">Sign in to Airflow</a></p>'
            if login else "")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{status}</title></head>"
            f"<body><h1>{status}</h1><p>{html.escape(detail)}</p>{link}</body></html>")


class _Stores:
    """The stores, opened on the first request and kept (one pool each per process)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stores: Any = None

    def get(self) -> Any:
        """The configured :class:`~.data.Stores`."""
        from airflow_provider_tronenergy.ui.data import Stores

        with self._lock:
            if self._stores is None:
                self._stores = Stores.configured()
            return self._stores


stores = _Stores()


def _today() -> date:
    return datetime.now(timezone.utc).date()


def create_app() -> FastAPI:
    """The page's routes, each behind ``signed_in_user`` (imports Airflow's API server)."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.core_api.security import get_user

    app = FastAPI(title="TRON energy page", docs_url=None, redoc_url=None, openapi_url=None)

    def permitted_user(user: BaseUser = Depends(get_user)) -> BaseUser:  # noqa: B008
        if not get_auth_manager().is_authorized_custom_view(
                method="GET", resource_name=RESOURCE_NAME, user=user):
            raise HTTPException(status_code=403, detail=(
                f"{user.get_name()} may not see the Energy page: the auth manager does not "
                f"grant GET on {RESOURCE_NAME!r}"))
        return user

    @app.exception_handler(HTTPException)
    async def refused(request: Request, exc: HTTPException) -> Response:
        """401 and 403 as a short page for a browser, as JSON for anything else."""
        detail = str(exc.detail)
        if "text/html" not in request.headers.get("accept", ""):
            return JSONResponse({"detail": detail}, status_code=exc.status_code,
                                headers=exc.headers)
        login = None
        if exc.status_code == 401:
            login = _login_url(str(request.url.path))
        return HTMLResponse(_refusal_page(exc.status_code, detail, login),
                            status_code=exc.status_code, headers=exc.headers)

    @app.get("/energy.json")
    def energy_json(request: Request,
                    user: BaseUser = Depends(permitted_user)) -> dict[str, Any]:  # noqa: B008
        """The page's figures for the period asked (``from``, ``to``), as JSON."""
        return {**_figures(request), "user": user.get_name()}

    @app.get("/energy", response_class=HTMLResponse)
    def energy_page(request: Request,
                    user: BaseUser = Depends(permitted_user)) -> str:  # noqa: B008
        """The page for the period asked (``from``, ``to``; the last 7 days by default)."""
        from airflow_provider_tronenergy.ui.page import render
        from airflow_provider_tronenergy.ui.urls import base_path

        return render(_figures(request), base=base_path(), today=_today(),
                      user=user.get_name())

    def _figures(request: Request) -> dict[str, Any]:
        """Everything the page shows; only ever called after the user was checked."""
        import sqlalchemy as sa
        from airflow.utils.session import create_session

        from airflow_provider_tronenergy.sqlstore import StoreError, StoreNotShared
        from airflow_provider_tronenergy.ui.data import page_data
        from airflow_provider_tronenergy.ui.events import read_batch_events, read_sent_tokens
        from airflow_provider_tronenergy.ui.period import Period
        from airflow_provider_tronenergy.ui.tokens import page_explorer
        from tronenergy_protocol.explorer import ExplorerError

        try:
            period = Period.parse(request.query_params.get("from"),
                                  request.query_params.get("to"), today=_today())
        except ValueError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from None
        try:
            explorer = page_explorer()
        except ExplorerError as exc:  # names the setting and the fix; never its value
            raise HTTPException(status_code=503, detail=str(exc)) from None
        try:
            with create_session() as session:
                events = read_batch_events(session, period)
                sent_tokens = read_sent_tokens(session)
            return page_data(stores.get(), period, events, sent_tokens=sent_tokens,
                             explorer=explorer)
        except StoreNotShared as exc:
            # Another host's file would be shown as the deployment's: refused as the
            # workers refuse it; the message names the setting (no secret in it).
            log.error("the Energy page reads no per-host store: %s", exc)
            raise HTTPException(status_code=503, detail=str(exc)) from None
        except (StoreError, sa.exc.SQLAlchemyError) as exc:
            log.exception("the Energy page could not read a store")
            raise HTTPException(status_code=503, detail=(
                f"a store the page reads is unavailable ({type(exc).__name__}); see the API "
                "server's log")) from None

    return app
