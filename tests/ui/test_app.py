"""The Energy page in a real Airflow API server: only a signed-in user with the permission.

The page's plugin is loaded by Airflow's plugins manager; the users sign in through the
simple auth manager's own endpoint, as the UI does; the token is sent as the UI's
``_token`` cookie (what the page's iframe sends) or as a bearer token (a script).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from support.page_server import PageServer, running_page_server

pytestmark = pytest.mark.timeout(240)

PAGES = ["/tronenergy-ui/energy", "/tronenergy-ui/energy.json"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PageServer]:
    with running_page_server(tmp_path_factory.mktemp("energy-page-home")) as running:
        yield running


def _get(server: PageServer, path: str, *, cookie: str | None = None,
         bearer: str | None = None, accept: str = "text/html") -> httpx.Response:
    headers = {"Accept": accept}
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    cookies = {"_token": cookie} if cookie else None
    return httpx.get(server.root_url + path, headers=headers, cookies=cookies,
                     trust_env=False, timeout=20, follow_redirects=False)


def test_the_plugin_adds_the_energy_entry_to_the_navigation(server):
    plugins = httpx.get(f"{server.root_url}/api/v2/plugins", trust_env=False, timeout=20,
                        headers={"Authorization": f"Bearer {server.token('viewer')}"})
    assert plugins.status_code == 200, plugins.text
    [ours] = [p for p in plugins.json()["plugins"] if p["name"] == "tronenergy_energy"]
    [view] = ours["external_views"]
    assert (view["name"], view["href"], view["url_route"], view["destination"]) == \
        ("Energy", "/tronenergy-ui/energy", "tronenergy-energy", "nav")
    assert view["icon"].startswith("data:image/svg+xml,")  # nothing fetched for the icon
    assert ours["fastapi_apps"][0]["url_prefix"] == "/tronenergy-ui"


@pytest.mark.parametrize("path", PAGES)
def test_an_anonymous_request_gets_401_and_no_data(server, path):
    page = _get(server, path)
    assert page.status_code == 401, page.text
    assert "TRX" not in page.text and "Energy," not in page.text
    # A browser is offered the sign-in page (Airflow 3.3 adds ?next=, 3.1 does not).
    assert 'href="/auth/login' in page.text
    as_json = _get(server, path, accept="application/json")
    assert as_json.status_code == 401 and as_json.json() == {"detail": "Not authenticated"}
    forged = _get(server, path, cookie="not-a-jwt")
    assert forged.status_code in (401, 403) and "TRX" not in forged.text
    # A bad period is not looked at before the user is: still 401, not 400.
    assert _get(server, path + "?from=nonsense").status_code == 401


@pytest.mark.parametrize("path", PAGES)
def test_a_signed_in_user_without_the_permission_gets_403_and_no_data(server, path):
    token = server.token("viewer")
    # The viewer is signed in: Airflow's own API answers them.
    assert httpx.get(f"{server.root_url}/api/v2/dags", trust_env=False, timeout=20,
                     cookies={"_token": token}).status_code == 200
    for answer in (_get(server, path, cookie=token), _get(server, path, bearer=token)):
        assert answer.status_code == 403, answer.text
        assert "TRX" not in answer.text and '"spend"' not in answer.text
        assert "TRON Energy" in answer.text  # says which permission is missing


@pytest.mark.parametrize("user", ["admin", "lead"])
def test_a_user_with_the_permission_sees_the_page_as_themself(server, user):
    token = server.token(user)
    page = _get(server, "/tronenergy-ui/energy", cookie=token)  # as the UI's iframe
    assert page.status_code == 200, page.text
    assert f"for {user} in" in page.text and "<h1>Energy, " in page.text
    data = _get(server, "/tronenergy-ui/energy.json?from=2026-03-01&to=2026-03-03",
                bearer=token, accept="application/json")
    assert data.status_code == 200 and data.json()["user"] == user
    assert data.json()["period"]["days"] == 3 and data.json()["spend"]["totals"]["orders"] == 0
    bad = _get(server, "/tronenergy-ui/energy?from=2026-03-05&to=2026-03-01", cookie=token)
    assert bad.status_code == 400 and "ends" in bad.text


def test_the_callback_receiver_stays_open_to_the_service(server):
    """No sign-in in front of /tronenergy: unconfigured, it answers its own 503."""
    health = httpx.get(f"{server.root_url}/tronenergy/health", trust_env=False, timeout=20)
    assert health.status_code == 503, health.text
