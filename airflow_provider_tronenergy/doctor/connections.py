"""The connections' checks: each reachable and authenticated, one chain, the service's
balance and prices, and the signer allowed to sign for the sender.

Each function takes what it checks and returns one :class:`~.report.Check`; a failure
of the call becomes a failing line naming the connection, never a crash. The chain check
calls ``TronNodeHook.check_chain()`` (block 0 against the connection's ``network``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

from airflow_provider_tronenergy.client.errors import TronEnergyError
from airflow_provider_tronenergy.client.models import Account, Price
from airflow_provider_tronenergy.doctor.report import Check
from airflow_provider_tronenergy.errors import ConnectionMissing, TronEnergyProviderError
from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from airflow_provider_tronenergy.hooks.tron_signer import TronSignerHook
from airflow_provider_tronenergy.hooks.tronenergy import TronEnergyHook
from airflow_provider_tronenergy.node.errors import NodeError
from airflow_provider_tronenergy.node.models import Block
from airflow_provider_tronenergy.node.network import WrongChain

T = TypeVar("T")
READ_ERRORS: Final = (TronEnergyProviderError, TronEnergyError, NodeError, ValueError, OSError)
"""What a read through a hook raises when it fails: the provider's errors, a bad value,
the network."""


def missing(name: str, conn_id: str, flag: str) -> Check:
    return Check.failed(name, f"connection {conn_id!r} does not exist",
                        f"define it (the Airflow UI, a secrets backend, or AIRFLOW_CONN_"
                        f"{conn_id.upper()}) or name another with {flag}")


def attempt(name: str, conn_id: str, flag: str, fix: str,
            read: Callable[[], T]) -> tuple[T | None, Check | None]:
    """``read()``, or the failing line that says why it could not be done."""
    try:
        return read(), None
    except ConnectionMissing:  # the hooks' lookup (hooks.lookup): the id names nothing
        return None, missing(name, conn_id, flag)
    except READ_ERRORS as exc:
        return None, Check.failed(name, f"{conn_id}: {type(exc).__name__}: {exc}", fix)
    except Exception as exc:  # a report line, not a crash; its message is not printed
        # Not one of the provider's errors: its message is not known to be free of secrets.
        return None, Check.failed(name, f"{conn_id}: unexpected {type(exc).__name__}", fix)


def service(hook: TronEnergyHook) -> tuple[Account | None, Check]:
    """An authenticated call: ``GET /energy/account`` signed with the API key and secret."""
    name, conn_id = "service", hook.tronenergy_conn_id
    account, failure = attempt(
        name, conn_id, "--tronenergy-conn-id",
        "set the connection's host to the service's base URL (with /v1), login to the API "
        "key and password to the API secret of one key", lambda: hook.get_conn().get_account())
    if failure is not None or account is None:
        return None, failure or Check.failed(name, f"{conn_id}: no account", "")
    return account, Check.passed(name, f"{conn_id}: authenticated as {account.username}")


def balance_and_prices(hook: TronEnergyHook, account: Account | None) -> Check:
    """The service's balance and its price for one transfer's energy, as figures."""
    name = "service balance and prices"
    if account is None:
        return Check.failed(name, "not read: the service did not answer an authenticated call",
                            "fix the service line above")
    price, failure = attempt(name, hook.tronenergy_conn_id, "--tronenergy-conn-id",
                             "the service answers the account but not its prices: retry, "
                             "then ask the service", lambda: hook.get_conn().get_price())
    if failure is not None or price is None:
        return failure or Check.failed(name, "no price", "")
    return Check.passed(name, figures(account, price))


def figures(account: Account, price: Price) -> str:
    return (f"balance {account.balance} TRX (available {account.available_balance}, frozen "
            f"{account.frozen_amount}, {account.pending_orders_count} orders pending); "
            f"{price.energy_per_transfer:,} energy for {price.rent_time} h costs "
            f"{price.price_65k_1hour} TRX, {price.price_per_10k} TRX per 10,000 energy, "
            f"orders of {price.min_energy:,} to {price.max_energy:,} energy")


def node(name: str, hook: TronNodeHook, flag: str) -> Check:
    """The node answers: its head block. A node on another chain answered (its block 0):
    that is the chain line's failure, with its own fix, not this one's."""
    conn_id = hook.tron_node_conn_id

    def head() -> Block | None:
        try:
            return hook.get_now_block()
        except WrongChain:
            return None

    block, failure = attempt(name, conn_id, flag,
                             f"set {conn_id}'s host to a TRON full node's HTTP root (e.g. "
                             "https://api.trongrid.io) that this host can reach, and its "
                             "password to the node's API key if it needs one", head)
    if failure is not None:
        return failure
    if block is None:
        return Check.passed(name, f"{conn_id}: answers, on another chain than its connection "
                            "says (the chain line)")
    return Check.passed(name, f"{conn_id}: head block {block.number:,}")


def network_of(hook: TronNodeHook) -> tuple[str, str]:
    """The connection's network and its block 0 id, as the hook reads them."""
    network = TronNodeHook.network(hook.connection())
    return network.name, network.genesis_block_id


def chain(name: str, hook: TronNodeHook, flag: str) -> Check:
    """Block 0 of the node is the block 0 of the connection's ``network``: the hook's
    ``check_chain()``."""
    conn_id = hook.tron_node_conn_id
    fix = (f"set {conn_id}'s extra network to the chain its host serves (mainnet, nile, "
           "shasta, or custom with genesis_block_id), or point its host at a node of that "
           "network")
    network, failure = attempt(name, conn_id, flag, fix, lambda: network_of(hook))
    if failure is not None or network is None:
        return failure or Check.failed(name, "no network", fix)
    _, failure = attempt(name, conn_id, flag, fix, hook.check_chain)
    if failure is not None:
        return failure
    return Check.passed(name, f"{conn_id}: block 0 is {network[0]}'s")


def same_chain(node_hook: TronNodeHook, confirm_hook: TronNodeHook) -> Check:
    """The confirming node names the same network as the node."""
    name = "one chain"
    pair, failure = attempt(name, confirm_hook.tron_node_conn_id, "--confirm-node-conn-id",
                            "", lambda: (network_of(node_hook), network_of(confirm_hook)))
    if failure is not None or pair is None:
        return failure or Check.failed(name, "not read", "")
    (net, genesis), (other, other_genesis) = pair
    if (net, genesis) != (other, other_genesis):
        return Check.failed(
            name, f"{node_hook.tron_node_conn_id} names {net} {genesis}".rstrip() + ", "
            f"{confirm_hook.tron_node_conn_id} names {other} {other_genesis}".rstrip(),
            "point both node connections at one network (the same network extra and "
            "genesis_block_id)")
    return Check.passed(name, f"{node_hook.tron_node_conn_id} and "
                        f"{confirm_hook.tron_node_conn_id} both name {net}")


def signer(hook: TronSignerHook) -> tuple[str | None, Check]:
    """The signer is built and its address derived (never the key itself)."""
    name, conn_id = "signer", hook.tron_signer_conn_id
    address, failure = attempt(
        name, conn_id, "--tron-signer-conn-id",
        "give the connection one of: the private key in hex (password), kms_key_id with "
        "region_name, or signer_class", lambda: hook.address)
    if failure is not None or address is None:
        return None, failure or Check.failed(name, "no address", "")
    return address, Check.passed(name, f"{conn_id}: signs for {address}")


def permission(signer_address: str | None, sender: str | None, permission_id: int,
               node_hook: TronNodeHook | None, *, node_answers: bool = True) -> Check:
    """The signer may sign the sender's USDT transfers: its key (weight) reaches the
    threshold of permission ``permission_id`` (0: the owner's) on chain. ``node_hook`` None:
    the person named no node (only "the signer is the sender" is checked)."""
    name = "signer and sender"
    if not sender:
        return Check.failed(name, "no sender given", "pass --sender, the hot wallet's address "
                            "the payouts are sent from")
    if signer_address is None:
        return Check.failed(name, "not checked: no signer address", "fix the signer line above")
    if node_hook is None:
        if signer_address == sender and permission_id == 0:
            return Check.passed(name, f"the signer is the sender {sender} (its permission "
                                "not read: no node)")
        return Check.failed(name, f"not checked: {signer_address} is not {sender} and no node "
                            "reads the permission", "name a node connection")
    conn_id = node_hook.tron_node_conn_id
    if not node_answers:
        return Check.failed(name, f"not checked: {conn_id} does not answer",
                            "fix the node line above")
    permissions, failure = attempt(name, conn_id, "--tron-node-conn-id",
                                   f"activate {sender} on the node's chain, or fix the node "
                                   "line above", lambda: node_hook.get_permissions(sender))
    if failure is not None or permissions is None:
        return failure or Check.failed(name, "no permissions", "")
    refusal = permissions.refusal(permission_id, [signer_address])
    if refusal is not None:
        return Check.failed(
            name, refusal, f"sign with the sender's key, or add {signer_address} to the "
            f"sender's permission {permission_id} with a weight that reaches its threshold "
            "(and pass that --permission-id)")
    how = "is the sender" if signer_address == sender else f"signs for {sender}"
    return Check.passed(name, f"{signer_address} {how} under permission {permission_id}")
