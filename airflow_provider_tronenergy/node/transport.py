"""tronpy's HTTP provider, made safe to point at a node nobody vouches for.

tronpy posts through a plain ``requests`` session: it follows redirects (and
sends ``TRON-PRO-API-KEY`` to wherever they lead: requests strips only
``Authorization``), reads any body whole, and bounds a call only per read. Here
every call goes through the client's :func:`~..client.deadline.exchange`: never
redirected, its answer capped (decompressed) and the whole call under one
deadline. Imported only when a node client is built (it imports tronpy).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urljoin

import requests
from tronpy.providers import HTTPProvider

from airflow_provider_tronenergy.client.bounded import BodyError
from airflow_provider_tronenergy.client.core import Timeout
from airflow_provider_tronenergy.client.deadline import (
    DeadlineAdapter,
    DeadlineExceeded,
    DeadlineRetry,
    exchange,
)
from airflow_provider_tronenergy.client.wire import redirect_message
from airflow_provider_tronenergy.node.errors import NodeError

API_KEY_HEADER = "TRON-PRO-API-KEY"


class BoundedProvider(HTTPProvider):  # type: ignore[misc]  # tronpy ships no types
    """One node root, its key sent there only; each call bounded in time and bytes."""

    def __init__(self, url: str, *, api_key: str | None, timeout: Timeout, max_answer_bytes: int,
                 max_retries: int, pool_size: int = 16) -> None:
        super().__init__(url.rstrip("/") + "/", timeout=timeout.read)
        # tronpy sends keys only to URLs containing "trongrid", and then its own shared
        # keys when none is given: this provider sends the connection's key, or none.
        self.use_api_key = False
        if api_key:
            self.sess.headers[API_KEY_HEADER] = api_key
        self.bounds = timeout
        self.max_answer_bytes = max_answer_bytes
        # Resends within the call's one deadline: none after it, no wait past it.
        retry = DeadlineRetry(total=max_retries, connect=max_retries, read=max_retries,
                              status=max_retries, redirect=0, backoff_factor=0.5,
                              status_forcelist=(429, 500, 502, 503, 504),
                              allowed_methods=frozenset({"POST"}),
                              respect_retry_after_header=True, raise_on_status=False,
                              raise_on_redirect=False)
        adapter = DeadlineAdapter(max_retries=retry, pool_maxsize=pool_size)
        self.sess.mount("http://", adapter)
        self.sess.mount("https://", adapter)

    def make_request(self, method: str, params: Any = None) -> dict[str, Any]:
        """POST ``params`` to ``method`` (``wallet/getaccount``...) and read its JSON object."""
        payload = self.json_answer(method, params)
        if not isinstance(payload, dict):
            raise ValueError("the node's answer is not a JSON object")
        return payload

    def json_answer(self, method: str, params: Any = None) -> Any:
        """POST ``params`` to ``method`` and decode its JSON answer, whatever its type: the
        few calls java-tron answers with an array (``gettransactioninfobyblocknum``)."""
        url = urljoin(self.endpoint_uri, method)
        request = self.sess.prepare_request(requests.Request("POST", url, json=params or {}))
        settings = self.sess.merge_environment_settings(url, {}, None, None, None)
        try:
            answer = exchange(
                self.sess.get_adapter(url), request, connect=self.bounds.connect,
                read=self.bounds.read, total=self.bounds.overall, limit=self.max_answer_bytes,
                verify=settings["verify"], proxies=settings["proxies"])
        except DeadlineExceeded as exc:
            raise NodeError(f"node call {method} failed: {exc}", path=method) from None
        except BodyError as exc:
            raise NodeError(f"node call {method} failed: {exc}", status=exc.status,
                            path=method) from None
        if 300 <= answer.status < 400:
            raise NodeError(f"node call {method} {redirect_message(answer.status, answer.headers)}",
                            status=answer.status, path=method)
        if answer.status >= 400:
            raise NodeError(f"node call {method} failed", status=answer.status, path=method)
        return json.loads(answer.body)
