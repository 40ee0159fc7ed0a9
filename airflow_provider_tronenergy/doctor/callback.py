"""The callback route, proven with its secret: a signed probe (``callbacks.verify``'s
``tronenergy.probe``) posted where the service posts callbacks. The receiver answers it
200 only when the signature matches a secret it holds; it stores nothing."""

from __future__ import annotations

from typing import Final

import requests

from airflow_provider_tronenergy.callbacks.verify import probe_body, split_secrets
from airflow_provider_tronenergy.doctor.report import Check
from tronenergy_protocol.signing import sign_callback

TIMEOUT: Final = (5.0, 10.0)
NAME: Final = "callback route"
SECRET_FIX: Final = (
    "give the receiver the secret of the tronenergy connection's extra webhook_secret: the "
    "API server's plugin reads that connection (or TRONENERGY_WEBHOOK_SECRET in the API "
    "server's environment); tronenergy-receiver its --webhook-secret-file or "
    "TRONENERGY_WEBHOOK_SECRET")


def probe(url: str, secret: str | None, conn_id: str) -> Check:
    """POST the probe to ``url`` signed with the connection's secret (the first one listed
    while a rotation lists two: ``"new,old"``); what the answer says of the route and secret."""
    listed = split_secrets(secret)
    if not listed:
        return Check.failed(NAME, f"{conn_id} has no webhook_secret extra",
                            f"set the extra webhook_secret on {conn_id}: the key's webhook "
                            "secret the service signs callbacks with")
    body = probe_body()
    headers = {"Content-Type": "application/json", "X-Signature": sign_callback(listed[0], body)}
    try:
        answer = requests.post(url, data=body, headers=headers, timeout=TIMEOUT,
                               allow_redirects=False)
    except requests.RequestException as exc:
        return Check.failed(NAME, f"{url}: unreachable ({type(exc).__name__})",
                            "start the receiver (the API server with the provider installed, "
                            "or tronenergy-receiver) and pass the URL the service posts to, "
                            "reachable from here")
    try:
        said = answer.json()
    except ValueError:
        said = {}
    said = said if isinstance(said, dict) else {}
    status = answer.status_code
    if status == 200 and said.get("probe") is True:
        return Check.passed(NAME, f"{url}: the receiver accepts this connection's secret")
    if status == 403:
        return Check.failed(NAME, f"{url}: the receiver refused the probe's signature "
                            f"({said.get('error', 'forbidden')}): its secret is not {conn_id}'s",
                            SECRET_FIX)
    if status == 503:
        return Check.failed(NAME, f"{url}: the receiver is unavailable "
                            f"({said.get('error', 'no reason given')})",
                            "set the receiver's webhook secret and make its callback store "
                            "reachable (its log says which)")
    if status == 200 or (status == 400 and said.get("error") == "invalid_body"):
        return Check.failed(NAME, f"{url}: the receiver took the signature but answered no "
                            "probe (a release without it)", "install this release of the "
                            "provider where the receiver runs")
    if 300 <= status < 400:
        return Check.failed(NAME, f"{url}: redirected ({status}); the service does not follow "
                            "redirects", "pass the final URL (with its scheme and path)")
    return Check.failed(NAME, f"{url}: answered {status}", "pass the URL the service posts "
                        "callbacks to: the API server's /tronenergy/callbacks or the "
                        "receiver's /callbacks")
