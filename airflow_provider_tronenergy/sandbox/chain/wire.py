"""java-tron's HTTP conventions, shared by the node's routes (``sandbox/node.py``, ``routes``).

Answers are plain JSON (no service envelope); a refused call answers
``{"code": NAME, "message": <hex of the text>}`` inside ``result`` or at the top,
as java-tron prints a ``Return``; a request it cannot read answers ``{"Error": ...}``.
An unreadable body is an empty request, as java-tron treats one.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from airflow_provider_tronenergy.protocol.address import is_valid_address
from airflow_provider_tronenergy.sandbox.api import sandbox
from airflow_provider_tronenergy.sandbox.world import World


def answer(payload: dict[str, Any]) -> Response:
    """A JSON answer, as java-tron sends every one (status 200)."""
    return Response(json.dumps(payload), media_type="application/json")


def refusal(code: str, message: str) -> dict[str, Any]:
    """A ``Return`` that failed: its code name and its message's bytes in hex."""
    return {"code": code, "message": message.encode().hex()}


def error(code: str, message: str) -> Response:
    """A refused call whose ``Return`` sits under ``result`` (trigger and estimate calls)."""
    return answer({"result": refusal(code, message)})


async def body(request: Request) -> dict[str, Any]:
    """The request's JSON object; ``{}`` when there is none or it is not an object."""
    try:
        value = json.loads(await request.body() or b"{}")
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {}


def address(payload: dict[str, Any], key: str = "address") -> str | None:
    """A base58 address field, or None when absent or invalid."""
    value = payload.get(key)
    return value if isinstance(value, str) and is_valid_address(value) else None


def visible(payload: dict[str, Any]) -> bool:
    """java-tron's ``visible``: base58 addresses in the answer (else hex)."""
    return payload.get("visible") is True


def world(request: Request) -> World:
    """The world the sandbox serving ``request`` holds."""
    return sandbox(request).world
