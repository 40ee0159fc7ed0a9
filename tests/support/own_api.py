"""Is the Airflow API server on a port the one the test started? Its token says so.

A deployment's api-server binds the port it is told (``support.ports`` reserves it); until
it does, or when it could not (EADDRINUSE), whatever else listens there answers, and a
``200`` from ``/api/v2/version`` proves nothing. The test's own server signs its tokens
with the JWT secret the test gave it (``[api_auth] jwt_secret``): a token from
``/auth/token`` (all admins) that this secret verifies comes from it, anything else from
another server.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import jwt
import requests

ALGORITHMS = ["HS512", "HS384", "HS256"]  # Airflow signs with HS512 given a secret


class ForeignServer(AssertionError):
    """Another server answers on the port the test's API server was given."""


def own_token(base: str, jwt_secret: str, timeout: float = 5) -> str | None:
    """The all-admins token of the API server at ``base`` when it is the one signing with
    ``jwt_secret``; None while nothing answers or the server is not ready (no 200 or 201:
    Airflow 3.3 answers 201).

    Raises :class:`ForeignServer` for a 200 or 201 without such a token: another server's.
    """
    try:
        with requests.Session() as http:
            http.trust_env = False  # loopback: never through a proxy from the environment
            answer = http.get(f"{base}/auth/token", timeout=timeout,
                              headers={"Accept": "application/json"})
    except requests.RequestException:
        return None
    if answer.status_code not in (200, 201):
        return None
    try:
        token = str(answer.json()["access_token"])
        jwt.decode(token, jwt_secret, algorithms=ALGORITHMS,
                   options={"verify_aud": False, "verify_iss": False})
    except (ValueError, KeyError, TypeError, jwt.InvalidTokenError) as exc:
        raise ForeignServer(f"{base}/auth/token answered {answer.status_code} without a token "
                            f"of this deployment ({type(exc).__name__}: "
                            f"{answer.text[:200]!r}): another server holds the port") from exc
    return token


def wait_for_own_api_server(base: str, jwt_secret: str, *, alive: Callable[[], bool],
                            log_tail: Callable[[], str], timeout: float) -> str:
    """Wait until the API server at ``base`` is the test's own (:func:`own_token`) and
    return its token; fail at once, with its log's tail, when its process exited."""
    deadline = time.monotonic() + timeout
    while True:
        token = own_token(base, jwt_secret)
        if token is not None:
            return token
        if not alive():
            raise AssertionError(f"the API server for {base} exited:\n{log_tail()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for the API "
                                 f"server at {base}:\n{log_tail()}")
        time.sleep(0.5)
