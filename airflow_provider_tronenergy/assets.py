"""The ``tronenergy://`` asset URI scheme: what such a URI may look like, and its one form.

The provider's assets are named ``tronenergy://<name>[/<path>]``: the example DAGs'
``tronenergy://payout-batch-ready``, ``tronenergy://payouts-sent``, ``tronenergy://deposits``
and ``tronenergy://keeper/<dag_id>`` (``[tronenergy] batch_ready_asset`` names another).
Provider info registers :func:`sanitize_uri` for the scheme (``asset-uris``), so Airflow
calls it on every such URI a DAG declares, after its own normalisation (scheme lower-cased,
user info, trailing slashes and fragment dropped: ``tronenergy://deposits`` is stored as
``tronenergy://deposits/``). It lower-cases the name, so two DAGs that write it differently
share one asset, and refuses what the provider never means (a user, a port, a query, an
empty or relative path segment): a DAG with such a URI fails to load, instead of declaring
an asset no producer updates.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import SplitResult

SCHEME: Final = "tronenergy"
NAME: Final = re.compile(r"[a-z0-9][a-z0-9._-]*")
FORM: Final = "tronenergy://<name>[/<path>] (name: letters, digits, '.', '_', '-')"


def sanitize_uri(uri: SplitResult) -> SplitResult:
    """The URI in its one form, or ValueError naming what is wrong and the form expected."""
    shown = uri.geturl()
    name = uri.netloc.lower()

    def refused(why: str) -> ValueError:
        return ValueError(f"asset URI {shown!r}: {why}; a {SCHEME} asset is {FORM}")

    if "@" in name or ":" in name:
        raise refused("no user or port belongs in it")
    if not NAME.fullmatch(name):
        raise refused("its name is missing or holds other characters")
    if uri.query:
        raise refused("no query belongs in it")
    segments = uri.path.split("/")[1:]
    if uri.path not in ("", "/") and any(s in ("", ".", "..") for s in segments):
        raise refused("a path segment is empty, '.' or '..'")
    return uri._replace(netloc=name)
