"""The node's permission routes, and the control API's permission update.

``/wallet/accountpermissionupdate`` builds an unsigned ``AccountPermissionUpdateContract``
as java-tron's ``AccountPermissionUpdateServlet`` does (``JsonFormat.merge`` of the body
with its ``visible``, the actuator's ``validate`` at building, ``Permission_id``); signed
under the owner's permission and broadcast, it is executed in its block
(``transactions``), for the chain parameter ``getUpdateAccountPermissionFee``.
``/wallet/getapprovedlist`` answers as java-tron does (``getsignweight`` is in
``routes``, reading the same permissions). ``POST /sandbox/chain/permissions/<address>``
applies the same update at once, with no transaction and no fee, for tests' set-up.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from tronenergy_sandbox import params
from tronenergy_sandbox.chain import codec, update_contract, wire
from tronenergy_sandbox.chain.permissions import (
    PermissionUpdateError,
    approved_list,
    update_message,
)
from tronenergy_sandbox.chain.routes import (
    CONTRACT_VALIDATE,
    permission_id,
    unsigned,
)
from tronenergy_sandbox.control import loopback_only, reply

router = APIRouter(include_in_schema=False)
control_router = APIRouter(prefix="/sandbox/chain", include_in_schema=False,
                           dependencies=[Depends(loopback_only)])


@router.api_route("/wallet/accountpermissionupdate", methods=["GET", "POST"])
async def account_permission_update(request: Request) -> Response:
    """An unsigned update: the body is the contract (``owner_address``, ``owner``,
    ``witness``, ``actives``), checked as the actuator's ``validate`` checks it."""
    if request.method == "GET":
        return wire.nothing()  # java-tron's doGet is empty
    call = await wire.call(request)
    world = wire.world(request)
    world.advance()
    try:
        update = update_contract.from_json(call.params, call.visible)
    except codec.CodecError as exc:
        return wire.failure(exc)
    try:
        world.new_permissions(update)
    except PermissionUpdateError as exc:
        return wire.answer({"Error": CONTRACT_VALIDATE + str(exc)})
    return wire.answer(unsigned(
        world, update_contract.UPDATE, update_contract.to_json(update, False), call.visible,
        permission_id=permission_id(call.params)))


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
        world.update_permissions(checked, update_message(checked, body.get("owner"),
                                                         body.get("actives")))
    except PermissionUpdateError as exc:
        raise params.invalid(str(exc)) from None
    return reply(request, world.account_permissions_json(checked, True))
