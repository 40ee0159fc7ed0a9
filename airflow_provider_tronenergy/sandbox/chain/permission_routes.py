"""The node's permission reads and the control API's permission update.

``/wallet/getapprovedlist`` answers as java-tron does (``getsignweight`` is in
``routes``, reading the same permissions). ``POST /sandbox/chain/permissions/<address>``
applies what an ``AccountPermissionUpdateContract`` would (``owner`` and ``actives``, in
java-tron's JSON, checked by its rules and refused with its messages), from the control
API: the sandbox's node does not build or execute that contract yet.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from airflow_provider_tronenergy.sandbox import params
from airflow_provider_tronenergy.sandbox.chain import codec, wire
from airflow_provider_tronenergy.sandbox.chain.permissions import (
    PermissionUpdateError,
    approved_list,
)
from airflow_provider_tronenergy.sandbox.control import loopback_only, reply

router = APIRouter(include_in_schema=False)
control_router = APIRouter(prefix="/sandbox/chain", include_in_schema=False,
                           dependencies=[Depends(loopback_only)])


@router.post("/wallet/getapprovedlist")
async def get_approved_list(request: Request) -> Response:
    body = await wire.body(request)
    try:
        tx = codec.from_json(body)
    except codec.CodecError as exc:
        return wire.answer({"Error": f"class java.lang.IllegalArgumentException : {exc}"})
    return wire.answer(approved_list(tx, wire.visible(body)))


@control_router.get("/permissions/{address}")
async def permissions(request: Request, address: str) -> Response:
    """The account's ``owner_permission`` and ``active_permission``, as ``getaccount``."""
    checked = params.address(address, "address")
    return reply(request, wire.world(request).account_permissions_json(checked, True))


@control_router.post("/permissions/{address}")
async def update_permissions(request: Request, address: str) -> Response:
    """``{"owner": {...}, "actives": [{...}]}``: the account's permissions replaced."""
    checked = params.address(address, "address")
    body = params.json_object(await request.body())
    world = wire.world(request)
    world.advance()
    try:
        world.update_permissions(checked, body.get("owner"), body.get("actives"))
    except PermissionUpdateError as exc:
        raise params.invalid(str(exc)) from None
    return reply(request, world.account_permissions_json(checked, True))
