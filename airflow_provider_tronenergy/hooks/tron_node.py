"""The chain itself, from Airflow: a TRON full node's HTTP API on connection type ``tron_node``.

Optional: a payout DAG without a node connection runs as before, with no on-chain
checks (and says so). The hook reads; it never signs or sends a transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal
from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow.providers.common.compat.sdk import BaseHook

from airflow_provider_tronenergy.client.bounded import NODE_MAX_ANSWER_BYTES
from airflow_provider_tronenergy.client.core import Timeout
from airflow_provider_tronenergy.hooks.tronenergy import (
    TronEnergyConnectionError,
    _mask,
    _max_answer_bytes,
    _timeout,
    connection_explorer,
)
from airflow_provider_tronenergy.node.models import (
    USDT_MAINNET,
    Block,
    BlockBody,
    BroadcastAnswer,
    ChainAccount,
    ChainParameters,
    ContractInfo,
    Resources,
    TransactionInfo,
)
from airflow_provider_tronenergy.node.multicall import MAX_MULTICALL_CHUNK, MULTICALL_CHUNK
from airflow_provider_tronenergy.node.permissions import AccountPermissions
from airflow_provider_tronenergy.protocol.address import is_valid_address
from airflow_provider_tronenergy.protocol.explorer import Explorer
from airflow_provider_tronenergy.protocol.numbers import parse_decimal, parse_int

NODE_TIMEOUT = Timeout(10.0, 10.0)

if TYPE_CHECKING:
    from airflow.sdk import Connection

    from airflow_provider_tronenergy.node.client import TronNodeClient


class TronNodeHook(BaseHook):
    """Balances, resources, estimates and receipts read from a TRON full node.

    :param tron_node_conn_id: an Airflow connection of type ``tron_node``: host is the
        node's HTTP root (TronGrid, a Nile gateway, an own java-tron), password the
        optional API key; extras ``usdt_contract``, ``timeout`` (seconds, ``[connect, read]``
        or ``[connect, read, total]``), ``max_retries``, ``max_answer_bytes``,
        ``explorer_url`` (the block explorer the payout links point to), ``multicall`` (a
        Multicall contract: recipients' balances read many per request),
        ``multicall_chunk`` and ``requests_per_second`` (the node key's rate, kept together
        by everyone using this URL and key through the purchase journal's database:
        ``pace.store``; absent: unpaced).
    """

    conn_name_attr = "tron_node_conn_id"
    default_conn_name = "tron_node_default"
    conn_type = "tron_node"
    hook_name = "TRON Node"

    def __init__(self, tron_node_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tron_node_conn_id = tron_node_conn_id

    def __repr__(self) -> str:
        return f"TronNodeHook(tron_node_conn_id={self.tron_node_conn_id!r})"

    @classmethod
    def if_defined(cls, conn_id: str) -> TronNodeHook | None:
        """The hook of ``conn_id``, or None when it is empty or no such connection exists.

        A node is optional where this is asked (a payout batch without one runs with no
        on-chain checks, and says so): Airflow's "not found" is answered here, so the
        payout room that asks never sees one of Airflow's exceptions.
        """
        from airflow.providers.common.compat.sdk import AirflowNotFoundException

        if not conn_id:
            return None
        hook = cls(conn_id)
        try:
            hook.get_connection(conn_id)
        except AirflowNotFoundException:
            return None
        return hook

    @classmethod
    def node_settings(cls, conn: Connection) -> dict[str, Any]:
        """Keyword arguments for :class:`~..node.client.TronNodeClient`, checked."""
        extras: dict[str, Any] = conn.extra_dejson if conn.extra else {}
        url = (conn.host or "").rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise TronNodeConnectionError(
                f"connection {conn.conn_id!r}: host must be the node's URL with its scheme, "
                "e.g. https://api.trongrid.io")
        if conn.port and url.count(":") < 2:
            url = f"{url}:{conn.port}"
        _mask(conn.password)
        try:
            retries = parse_int(extras["max_retries"], "max_retries") \
                if extras.get("max_retries") not in (None, "") else 3
        except (TypeError, ValueError) as exc:
            raise TronNodeConnectionError(f"connection {conn.conn_id!r}: {exc}") from None
        if retries < 0:
            raise TronNodeConnectionError(
                f"connection {conn.conn_id!r}: max_retries must not be negative")
        try:
            timeout = _timeout(extras, NODE_TIMEOUT)
            limit = _max_answer_bytes(extras, NODE_MAX_ANSWER_BYTES)
        except TronEnergyConnectionError as exc:
            raise TronNodeConnectionError(f"connection {conn.conn_id!r}: {exc}") from None
        cls.explorer(conn)  # a bad one fails before anything is signed, not after
        cls.requests_per_second(conn)
        return {"url": url, "api_key": conn.password or None,
                "usdt_contract": extras.get("usdt_contract") or USDT_MAINNET,
                "timeout": timeout, "max_retries": retries, "max_answer_bytes": limit,
                **cls._multicall(conn, extras)}

    @staticmethod
    def _multicall(conn: Connection, extras: dict[str, Any]) -> dict[str, Any]:
        """Extras ``multicall`` (a base58 ``T...`` contract; none: no batched balance reads)
        and ``multicall_chunk`` (balances per request), checked."""
        address = extras.get("multicall")
        if address in (None, ""):
            return {}
        if not isinstance(address, str) or not is_valid_address(address):
            raise TronNodeConnectionError(
                f"connection {conn.conn_id!r}: multicall must be a contract's base58 address "
                f"(T...), got {str(address)[:40]!r}")
        chunk = extras.get("multicall_chunk")
        try:
            size = MULTICALL_CHUNK if chunk in (None, "") else parse_int(chunk, "multicall_chunk")
        except (TypeError, ValueError) as exc:
            raise TronNodeConnectionError(f"connection {conn.conn_id!r}: {exc}") from None
        if not 1 <= size <= MAX_MULTICALL_CHUNK:
            raise TronNodeConnectionError(
                f"connection {conn.conn_id!r}: multicall_chunk must be 1 to "
                f"{MAX_MULTICALL_CHUNK}, got {size}")
        return {"multicall": address, "multicall_chunk": size}

    @staticmethod
    def requests_per_second(conn: Connection) -> Decimal | None:
        """Extra ``requests_per_second``: the connection's shared pace, checked (above 0, at
        most 1000); None (absent or empty): unpaced."""
        from airflow_provider_tronenergy.pace.store import checked_rate

        extras: dict[str, Any] = conn.extra_dejson if conn.extra else {}
        value = extras.get("requests_per_second")
        if value in (None, ""):
            return None
        try:
            return checked_rate(parse_decimal(value, "requests_per_second"))
        except (TypeError, ValueError) as exc:
            raise TronNodeConnectionError(f"connection {conn.conn_id!r}: {exc}") from None

    @classmethod
    def explorer(cls, conn: Connection) -> Explorer:
        """Extra ``explorer_url``: the block explorer of this node's chain (the payouts'
        links); default mainnet TronScan."""
        return connection_explorer(conn, TronNodeConnectionError)

    def get_explorer(self) -> Explorer:
        """The explorer of this hook's connection (:meth:`explorer`)."""
        return self.explorer(self.get_connection(self.tron_node_conn_id))

    def get_conn(self) -> TronNodeClient:
        """One client per hook instance: one connection pool for all reads."""
        return self._client

    @cached_property
    def _client(self) -> TronNodeClient:
        from airflow_provider_tronenergy.node.client import TronNodeClient

        conn = self.get_connection(self.tron_node_conn_id)
        try:
            settings = self.node_settings(conn)
            rate = self.requests_per_second(conn)
            if rate is not None:
                from airflow_provider_tronenergy.pace.store import connection_pace

                settings["pace"] = connection_pace(settings["url"], settings["api_key"], rate)
            return TronNodeClient(**settings)
        except ValueError as exc:
            raise TronNodeConnectionError(f"connection {conn.conn_id!r}: {exc}") from None

    @property
    def usdt_contract(self) -> str:
        """The USDT contract this connection reads balances and estimates against."""
        return self.get_conn().usdt_contract

    def get_account(self, address: str) -> ChainAccount:
        """Activation and TRX balance of ``address``."""
        return self.get_conn().get_account(address)

    def get_resources(self, address: str) -> Resources:
        """Energy and bandwidth of ``address``."""
        return self.get_conn().get_resources(address)

    def get_usdt_balance(self, address: str) -> int:
        """USDT of ``address`` in micro-units."""
        return self.get_conn().get_usdt_balance(address)

    def get_usdt_balances(self, owner: str, addresses: Sequence[str]) -> dict[str, int] | None:
        """USDT of each address, many per request through the connection's ``multicall``;
        None when it names none."""
        return self.get_conn().get_usdt_balances(owner, addresses)

    def estimate_transfer_energy(self, owner: str, to: str, units: int) -> int | None:
        """Energy of a USDT transfer from ``owner`` to ``to``, or None if the node cannot say."""
        return self.get_conn().estimate_transfer_energy(owner, to, units)

    def get_chain_parameters(self) -> ChainParameters:
        """The chain's fees: energy and bandwidth prices, account creation, free bandwidth."""
        return self.get_conn().get_chain_parameters()

    def get_contract_info(self, contract: str | None = None) -> ContractInfo | None:
        """A contract's energy factor (USDT's by default), or None if there is no contract."""
        return self.get_conn().get_contract_info(contract)

    def get_transaction_info(self, tx_hash: str, *,
                             solidified: bool = False) -> TransactionInfo | None:
        """A transaction's receipt, or None while unknown (to the solidity API, if asked)."""
        return self.get_conn().get_transaction_info(tx_hash, solidified=solidified)

    def get_now_block(self) -> Block:
        """The chain's head block."""
        return self.get_conn().get_now_block()

    def get_solid_block(self) -> Block:
        """The latest solidified block: receipts at or below it are final."""
        return self.get_conn().get_solid_block()

    def get_block_receipts(self, number: int, *,
                           solidified: bool = False) -> list[TransactionInfo]:
        """Receipts of every transaction in block ``number``, in order (one request a block)."""
        return self.get_conn().get_block_receipts(number, solidified=solidified)

    def get_block(self, number: int, *, solidified: bool = False) -> BlockBody | None:
        """Block ``number``'s header and txIDs, or None while the node has none."""
        return self.get_conn().get_block(number, solidified=solidified)

    def get_permissions(self, address: str) -> AccountPermissions:
        """The account's owner and active permissions."""
        return self.get_conn().get_permissions(address)

    def broadcast(self, signed: dict[str, Any]) -> BroadcastAnswer:
        """Offer a signed transaction (the hook is then a whole ``node.protocol.Node``)."""
        return self.get_conn().broadcast(signed)

    def close(self) -> None:
        """Close the client's pool; the next call opens a new one."""
        if "_client" in self.__dict__:
            self.__dict__.pop("_client").close()

    def test_connection(self) -> tuple[bool, str]:
        """The UI's Test button: read the head block."""
        from airflow_provider_tronenergy.node.errors import NodeError

        try:
            block = self.get_now_block()
        except (NodeError, ValueError) as exc:
            return False, str(exc)
        return True, f"Connected: head block {block.number}"

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """Form layout for Airflow releases that read it from the hook (< 3.2)."""
        return {
            "hidden_fields": ["schema", "login"],
            "relabeling": {"host": "Node URL", "password": "API key (TRON-PRO-API-KEY)"},
            "placeholders": {
                "host": "https://api.trongrid.io",
                "password": "optional",
                "extra": json.dumps({"usdt_contract": USDT_MAINNET, "timeout": 10,
                                     "max_retries": 3}),
            },
        }


class TronNodeConnectionError(TronEnergyConnectionError):
    """The ``tron_node`` connection is missing a field or holds a malformed extra."""
