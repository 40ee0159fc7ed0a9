"""The chain itself, from Airflow: a TRON full node's HTTP API on connection type ``tron_node``.

Payouts, the keeper, deposit proofs and the deposit scan cannot work without a node:
:meth:`TronNodeHook.required` refuses a ``tron_node_conn_id`` that is None or names no
connection (:class:`~..errors.ConnectionMissing`, before anything is bought, signed or
credited). A payout batch's preparation may go without on-chain checks, but only when the
person writes ``tron_node_conn_id=None`` (:meth:`TronNodeHook.chosen`); a typo is never
read as "no node" (``hooks.lookup``). The hook reads; it never signs a transaction.
Before its client reads anything for a task, the node's block 0 is checked against the
connection's ``network`` (:meth:`TronNodeHook.check_chain`, :mod:`~..node.network`).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow.providers.common.compat.connection import get_async_connection
from airflow.providers.common.compat.sdk import BaseHook

from airflow_provider_tronenergy.client.bounded import NODE_MAX_ANSWER_BYTES
from airflow_provider_tronenergy.client.core import Timeout
from airflow_provider_tronenergy.hooks import forms, lookup
from airflow_provider_tronenergy.hooks.blocking import off_loop
from airflow_provider_tronenergy.hooks.tronenergy import (
    TronEnergyConnectionError,
    _mask,
    _max_answer_bytes,
    _timeout,
    connection_extras,
)
from airflow_provider_tronenergy.node.chain_parameters import ChainParameters
from airflow_provider_tronenergy.node.models import (
    Block,
    BlockBody,
    BroadcastAnswer,
    ChainAccount,
    ContractInfo,
    Resources,
    TransactionInfo,
)
from airflow_provider_tronenergy.node.multicall import MAX_MULTICALL_CHUNK, MULTICALL_CHUNK
from airflow_provider_tronenergy.node.network import (
    CUSTOM,
    DEFAULT_NETWORK,
    Network,
    WrongChain,
    check_genesis,
    network_of,
    same_chain,
)
from airflow_provider_tronenergy.node.permissions import AccountPermissions
from airflow_provider_tronenergy.node.tokens import token_names
from airflow_provider_tronenergy.node.trx_costs import TrxFees
from airflow_provider_tronenergy.node.trx_receipts import BlockTrx
from tronenergy_protocol.address import is_valid_address
from tronenergy_protocol.explorer import Explorer, ExplorerError, explorer_of
from tronenergy_protocol.numbers import parse_decimal, parse_int

NODE_TIMEOUT = Timeout(10.0, 10.0)
NODE_NEEDED = "this task reads the chain through a TRON node"
"""What a hook built without saying what needs it names when its connection is missing."""

if TYPE_CHECKING:
    from airflow.sdk import Connection

    from airflow_provider_tronenergy.node.client import TronNodeClient


class TronNodeHook(BaseHook):
    """Balances, resources, estimates and receipts read from a TRON full node.

    :param tron_node_conn_id: an Airflow connection of type ``tron_node``: host is the
        node's HTTP root (TronGrid, a Nile gateway, an own java-tron), password the
        optional API key; extras ``network`` (``mainnet`` when absent, ``nile``, ``shasta``,
        or ``custom`` with ``genesis_block_id``: the chain the node must be on, checked by
        :meth:`check_chain`), ``usdt_contract`` (the network's USDT by default; another is
        refused; a custom chain names its own), ``timeout`` (seconds, ``[connect, read]``
        or ``[connect, read, total]``), ``max_retries``, ``max_answer_bytes``,
        ``tokens`` (short names of the TRC-20 contracts payout rows may name),
        ``explorer_url`` (the block explorer the payout links point to; the network's
        TronScan by default), ``multicall`` (a Multicall contract: recipients' balances read
        many per request), ``multicall_chunk`` and ``requests_per_second`` (the node key's
        rate, kept together by everyone using this URL and key through the purchase
        journal's database: ``pace.store``; absent: unpaced).
    """

    conn_name_attr = "tron_node_conn_id"
    default_conn_name = "tron_node_default"
    conn_type = "tron_node"
    hook_name = "TRON Node"

    def __init__(self, tron_node_conn_id: str = default_conn_name, *,
                 needs: str = NODE_NEEDED, setting: str = conn_name_attr, otherwise: str = "",
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tron_node_conn_id = tron_node_conn_id
        # What a missing connection's error says (hooks.lookup): the parameter the id came
        # from, what needs the node, and where the person may go without it.
        self._needs, self._setting, self._otherwise = needs, setting, otherwise
        self._conn: Connection | None = None
        # Read through Airflow's async lookup (a trigger): Airflow masked its secrets then,
        # in the thread its lookup runs in; masking again from another thread would ask the
        # triggerer's supervisor from there (:meth:`aconnection`).
        self._masked_by_lookup = False
        self._chain: Network | None = None
        self._genesis: str | None = None
        self._wrong: str | None = None

    def __repr__(self) -> str:
        return f"TronNodeHook(tron_node_conn_id={self.tron_node_conn_id!r})"

    @classmethod
    def required(cls, conn_id: str | None, *, needs: str,
                 setting: str = conn_name_attr) -> TronNodeHook:
        """The hook of ``conn_id``, its connection looked up now: work that cannot be done
        without a node (payouts, the keeper, deposit proofs, the scan) fails here, before
        anything is bought, signed or credited, when ``conn_id`` is None, blank or names
        no connection (:class:`~..errors.ConnectionMissing`, naming ``setting`` and
        ``needs``)."""
        hook = cls(conn_id or "", needs=needs, setting=setting)
        hook._conn = lookup.existing(hook.get_connection, conn_id, setting=setting, needs=needs)
        return hook

    @classmethod
    def chosen(cls, conn_id: str | None, *, needs: str, without: str,
               setting: str = conn_name_attr) -> TronNodeHook | None:
        """None when ``conn_id`` is None: the person chose to go without a node (``without``
        says what that means, e.g. "plan without on-chain checks"). Otherwise as
        :meth:`required`: blank text, or an id that names no connection, is refused, and
        the error says how to go without on purpose."""
        if conn_id is None:
            return None
        otherwise = f"pass {setting}=None to {without}"
        hook = cls(conn_id, needs=needs, setting=setting, otherwise=otherwise)
        hook.connection()
        return hook

    def connection(self) -> Connection:
        """This hook's connection, looked up once; one that does not exist is a
        :class:`~..errors.ConnectionMissing` (``hooks.lookup``), never retried."""
        if self._conn is None:
            self._conn = lookup.existing(self.get_connection, self.tron_node_conn_id,
                                         setting=self._setting, needs=self._needs,
                                         otherwise=self._otherwise)
        return self._conn

    @classmethod
    def node_settings(cls, conn: Connection, *, mask: bool = True) -> dict[str, Any]:
        """Keyword arguments for :class:`~..node.client.TronNodeClient`, checked."""
        extras = connection_extras(conn, TronNodeConnectionError)
        url = (conn.host or "").rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise TronNodeConnectionError(
                f"connection {conn.conn_id!r}: host must be the node's URL with its scheme, "
                "e.g. https://api.trongrid.io")
        if conn.port and url.count(":") < 2:
            url = f"{url}:{conn.port}"
        if mask:
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
        network = cls.network(conn)
        if network.explorer_url is not None:
            cls.explorer(conn)  # a bad one fails before anything is signed, not after
        cls.requests_per_second(conn)
        return {"url": url, "api_key": conn.password or None,
                "usdt_contract": network.usdt_contract,
                "timeout": timeout, "max_retries": retries, "max_answer_bytes": limit,
                **cls._multicall(conn, extras), **cls._tokens(conn, extras, network.usdt_contract)}

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
    def _tokens(conn: Connection, extras: dict[str, Any], usdt: str) -> dict[str, Any]:
        """Extra ``tokens``: short names payout rows may use, checked
        (:func:`~..node.tokens.token_names`); none: no setting."""
        try:
            names = token_names(extras.get("tokens"), usdt)
            more = {name: contract for name, contract in names.items() if contract != usdt}
            return {"tokens": more} if more else {}
        except ValueError as exc:
            raise TronNodeConnectionError(f"connection {conn.conn_id!r}: {exc}") from None

    @staticmethod
    def requests_per_second(conn: Connection) -> Decimal | None:
        """Extra ``requests_per_second``: the connection's shared pace, checked (above 0, at
        most 1000); None (absent or empty): unpaced."""
        from airflow_provider_tronenergy.pace.store import checked_rate

        extras = connection_extras(conn, TronNodeConnectionError)
        value = extras.get("requests_per_second")
        if value in (None, ""):
            return None
        try:
            return checked_rate(parse_decimal(value, "requests_per_second"))
        except (TypeError, ValueError) as exc:
            raise TronNodeConnectionError(f"connection {conn.conn_id!r}: {exc}") from None

    @classmethod
    def network(cls, conn: Connection) -> Network:
        """The chain the connection means (extras ``network``, ``genesis_block_id``,
        ``usdt_contract``, ``explorer_url``: :func:`~..node.network.network_of`), checked."""
        extras = connection_extras(conn, TronNodeConnectionError)
        try:
            return network_of(extras)
        except ValueError as exc:
            raise TronNodeConnectionError(f"connection {conn.conn_id!r}: {exc}") from None

    @classmethod
    def explorer(cls, conn: Connection) -> Explorer:
        """Extra ``explorer_url``: the block explorer of this node's chain (the payouts'
        links); default the network's TronScan. A custom chain without one has none."""
        network = cls.network(conn)
        if network.explorer_url is None:
            raise TronNodeConnectionError(
                f"connection {conn.conn_id!r}: network {CUSTOM} names no explorer_url, so no "
                "link to a block explorer is shown")
        try:
            return explorer_of(network.explorer_url)
        except ExplorerError as exc:
            raise TronNodeConnectionError(f"connection {conn.conn_id!r}: extra {exc}") from None

    def get_explorer(self) -> Explorer:
        """The explorer of this hook's connection (:meth:`explorer`)."""
        return self.explorer(self.connection())

    def get_conn(self) -> TronNodeClient:
        """One client per hook instance (one connection pool for all reads), handed out once
        its node is on the connection's chain (:meth:`check_chain`)."""
        client = self._client
        self.check_chain()
        return client

    def check_chain(self) -> str:
        """The node's block 0 id, once it is the connection's ``network``'s; read once per
        hook instance (a task try, a trigger run), so every reader of the hook is checked
        before anything moves.

        :raises WrongChain: the node's block 0 is another chain's (or it has none), naming
            the connection, the network it says and what the node answered.
        """
        client = self._client
        if self._wrong is not None:  # a chain does not change under a hook: no read again
            raise WrongChain(self._wrong)
        if self._genesis is None:
            assert self._chain is not None  # set with the client
            try:
                self._genesis = check_genesis(self.tron_node_conn_id, self._chain,
                                              client.get_genesis_block_id())
            except WrongChain as exc:
                self._wrong = str(exc)
                raise
        return self._genesis

    def check_same_chain(self, other: TronNodeHook) -> None:
        """Both hooks' nodes on their connections' chain, and on one chain (a payout sent
        through one and confirmed through the other); else :class:`WrongChain` naming both."""
        same_chain((self.tron_node_conn_id, self.check_chain()),
                   (other.tron_node_conn_id, other.check_chain()))

    async def acheck_chain(self) -> str:
        """:meth:`check_chain` for a trigger: the connection read on the event loop through
        Airflow's async lookup (:meth:`aconnection`), block 0 in a thread."""
        await self.aconnection()
        return await off_loop(self.check_chain)

    async def aconnection(self) -> Connection:
        """:meth:`connection` for a trigger, read on the event loop through Airflow's async
        lookup: a triggerer's supervisor is never asked from another thread (Airflow 3.1's
        answers then come out of order and the triggerer stops)."""
        if self._conn is None:
            self._conn = await lookup.aexisting(
                lambda conn_id: get_async_connection(conn_id, hook=self),
                self.tron_node_conn_id, setting=self._setting, needs=self._needs,
                otherwise=self._otherwise)
            self._masked_by_lookup = True
        return self._conn

    @classmethod
    async def arequired(cls, conn_id: str | None, *, needs: str,
                        setting: str = conn_name_attr) -> TronNodeHook:
        """:meth:`required` for a trigger (:meth:`aconnection`)."""
        hook = cls(conn_id or "", needs=needs, setting=setting)
        await hook.aconnection()
        return hook

    @cached_property
    def _client(self) -> TronNodeClient:
        """The client, its chain not yet checked (:meth:`get_conn` checks it)."""
        from airflow_provider_tronenergy.node.client import TronNodeClient

        conn = self.connection()
        settings = self.node_settings(conn, mask=not self._masked_by_lookup)
        self._chain = self.network(conn)
        try:
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

    def get_trx_balances(self, owner: str, addresses: Sequence[str]) -> dict[str, int] | None:
        """TRX of each address in sun, as :meth:`get_usdt_balances` reads USDT."""
        return self.get_conn().get_trx_balances(owner, addresses)

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

    def get_trx_fees(self) -> TrxFees:
        """The chain's figures a TRX transfer pays by (``node.trx_costs``)."""
        return self.get_conn().get_trx_fees()

    def get_block_trx(self, number: int, *, solidified: bool = False) -> BlockTrx | None:
        """Block ``number`` with each transaction's contract, result and TRX transfer."""
        return self.get_conn().get_block_trx(number, solidified=solidified)

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
        except (NodeError, ValueError, WrongChain) as exc:
            return False, str(exc)
        network = self._chain.name if self._chain else DEFAULT_NETWORK
        return True, f"Connected to {network}: head block {block.number}"

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """Form layout for Airflow releases that read it from the hook (< 3.2): the form
        provider info gives 3.2+ (``hooks.forms``), the extras in the Extra JSON placeholder."""
        return forms.NODE.legacy_behaviour()


class TronNodeConnectionError(TronEnergyConnectionError):
    """The ``tron_node`` connection is missing a field or holds a malformed extra."""
