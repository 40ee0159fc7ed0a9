"""A TRON full node's HTTP API, read through tronpy (docs/decisions.md: why tronpy).

Framework-free like the service's client: the ``tron_node`` hook builds one from a
connection, and anything else can too. It reads, and broadcasts transactions someone
else signed (:meth:`TronNodeClient.broadcast`): nothing here holds a key. tronpy is
imported when a client is built, never by a DAG file.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from airflow_provider_tronenergy.client.bounded import NODE_MAX_ANSWER_BYTES, check_limit
from airflow_provider_tronenergy.client.core import Timeout
from airflow_provider_tronenergy.node.chain_parameters import ChainParameters
from airflow_provider_tronenergy.node.deposit_reads import TransferReads, valid_address
from airflow_provider_tronenergy.node.errors import NodeError, UnreliableNode
from airflow_provider_tronenergy.node.models import (
    USDT_MAINNET,
    Block,
    BlockBody,
    BroadcastAnswer,
    ChainAccount,
    ContractInfo,
    Resources,
    TransactionInfo,
    block_receipts,
)
from airflow_provider_tronenergy.node.multicall import (
    AGGREGATE,
    MAX_MULTICALL_CHUNK,
    MULTICALL_CHUNK,
    MULTICALL_CONCURRENCY,
    decode_balances,
    encode_balances,
    encode_trx_balances,
)
from airflow_provider_tronenergy.node.network import genesis_id
from airflow_provider_tronenergy.node.pace import Pace
from airflow_provider_tronenergy.node.permissions import AccountPermissions
from airflow_provider_tronenergy.node.tokens import token_names
from airflow_provider_tronenergy.node.trx_reads import TrxReads
from tronenergy_protocol.ids import TX_HASH

T = TypeVar("T")
log = logging.getLogger(__name__)
_NO_ESTIMATE = "does not support estimate energy"
MAX_TRANSFER_ENERGY = 1_000_000
"""No token transfer needs more: USDT's first transfer at java-tron's highest energy factor
(x 11) is about 330,000. A node estimating more is not believed (energy is bought from it)."""


class TronNodeClient(TransferReads, TrxReads):
    """Read accounts, resources, USDT balances, estimates and receipts from a node.

    :param url: the node's HTTP root (``https://api.trongrid.io``, ``http://node:8090``).
    :param api_key: sent as ``TRON-PRO-API-KEY`` when given (TronGrid and most gateways).
    :param usdt_contract: the USDT TRC20 contract (mainnet by default; Nile has its own).
    :param timeout: seconds per read, ``(connect, read)`` or ``(connect, read, total)``;
        ``total`` (default connect + read) bounds a whole call, its resends included.
    :param max_retries: resends of a read on no answer, 429 or 5xx (reads only, so safe).
    :param max_answer_bytes: the largest answer read (decompressed); a larger one fails.
    :param multicall: a Multicall contract (``aggregate``, :mod:`~.multicall`) through which
        :meth:`get_usdt_balances` and :meth:`get_trx_balances` read many balances per
        request; None: they read none.
    :param multicall_chunk: balances per request (1 to 500).
    :param tokens: short names of TRC-20 contracts payout rows may name (the connection's
        ``tokens`` extra, :func:`~.tokens.token_names`); ``USDT`` is always ``usdt_contract``.
    :param pace: the connection's shared request pace (:mod:`~.pace`): every request and
        resend waits for its slot, and a 429 or 503 slows every sharer; None: unpaced.

    A redirect is never followed (the key would reach another host): it fails, naming
    its status and the host it points to.
    """

    def __init__(self, url: str, *, api_key: str | None = None,
                 usdt_contract: str = USDT_MAINNET,
                 timeout: float | tuple[float, ...] | Timeout = 10.0,
                 max_retries: int = 3,
                 max_answer_bytes: int = NODE_MAX_ANSWER_BYTES,
                 multicall: str | None = None, multicall_chunk: int = MULTICALL_CHUNK,
                 pace: Pace | None = None, tokens: Mapping[str, str] | None = None) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError("node URL must start with http:// or https://")
        self.usdt_contract = valid_address(usdt_contract, "usdt_contract")
        self.token_contracts = token_names(tokens, self.usdt_contract)
        self.multicall = None if multicall is None else valid_address(multicall, "multicall")
        if isinstance(multicall_chunk, bool) or not isinstance(multicall_chunk, int) \
                or not 1 <= multicall_chunk <= MAX_MULTICALL_CHUNK:
            raise ValueError(f"multicall_chunk must be 1 to {MAX_MULTICALL_CHUNK}, "
                             f"got {multicall_chunk!r}")
        self.multicall_chunk = multicall_chunk
        from tronpy import Tron

        from airflow_provider_tronenergy.node.transport import BoundedProvider

        # Estimating a batch reads concurrently (onchain.NODE_CONCURRENCY): one pooled
        # connection per thread.
        self._provider = BoundedProvider(
            url, api_key=api_key, timeout=Timeout.of(timeout),
            max_answer_bytes=check_limit(max_answer_bytes), max_retries=max_retries, pace=pace)
        self._tron = Tron(self._provider)

    def __repr__(self) -> str:
        return (f"TronNodeClient(usdt_contract={self.usdt_contract!r}, "
                f"multicall={self.multicall!r})")

    def for_token(self, contract: str) -> TronNodeClient:
        """This client (its connection pool, pace and key) reading another TRC-20 contract:
        balances, transfer estimates and the energy factor of ``contract``. Close the
        original, not the copy (they share one pool)."""
        bound = copy.copy(self)
        bound.usdt_contract = valid_address(contract, "contract")
        return bound

    def close(self) -> None:
        """Close the connection pool."""
        self._provider.sess.close()

    def __enter__(self) -> TronNodeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, what: str, call: Callable[[], T]) -> T:
        """Run one tronpy call; any failure becomes a :class:`NodeError` naming the call only.

        The exception text of requests and tronpy can hold the node URL (some gateways
        put their key in it), so only the failure's kind and HTTP status travel on.
        """
        import requests
        from tronpy import exceptions as tronpy_errors

        answer_errors = (tronpy_errors.ApiError, tronpy_errors.UnknownError,
                         tronpy_errors.BugInJavaTron, tronpy_errors.TvmError,
                         tronpy_errors.ValidationError, tronpy_errors.TransactionError)
        try:
            return call()
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else None
            raise NodeError(f"node call {what} failed", status=status, path=what) from None
        except (requests.RequestException, *answer_errors, ValueError, KeyError,
                TypeError) as exc:
            raise NodeError(f"node call {what} failed ({type(exc).__name__})",
                            path=what) from None

    @staticmethod
    def _checked(what: str, read: Callable[[], T]) -> T:
        """Read an answer into models; one the chain could not have sent is a
        :class:`NodeError` naming the call and why (the reason is this module's own text)."""
        try:
            return read()
        except ValueError as exc:
            raise NodeError(f"node call {what} answered what the chain cannot hold: {exc}",
                            path=what) from None

    # -- accounts --------------------------------------------------------------------------

    def _account_read(self, what: str, read: Callable[[str], Any], address: str) -> dict[str, Any]:
        """One per-address read; the node's ``{}`` (tronpy's AddressNotFound) is no account."""
        from tronpy.exceptions import AddressNotFound

        valid_address(address, "address")

        def answer() -> dict[str, Any]:
            try:
                return dict(read(address))
            except AddressNotFound:
                return {}

        return self._call(what, answer)

    def get_account(self, address: str) -> ChainAccount:
        """Activation and TRX balance (``wallet/getaccount``)."""
        return ChainAccount.from_node(address, self._account_read(
            "wallet/getaccount", self._tron.get_account, address))

    def get_permissions(self, address: str) -> AccountPermissions:
        """The account's owner and active permissions (``wallet/getaccount``)."""
        return AccountPermissions.from_node(address, self._account_read(
            "wallet/getaccount", self._tron.get_account, address))

    def get_resources(self, address: str) -> Resources:
        """Energy and bandwidth limits and use (``wallet/getaccountresource``)."""
        return Resources.from_node(address, self._account_read(
            "wallet/getaccountresource", self._tron.get_account_resource, address))

    def get_usdt_balance(self, address: str) -> int:
        """USDT in micro-units: the contract's ``balanceOf(address)``, a constant call."""
        from tronpy.abi import trx_abi

        valid_address(address, "address")
        parameter = trx_abi.encode(["address"], [address]).hex()
        result = self._call("wallet/triggerconstantcontract", lambda: self._constant(
            address, "balanceOf(address)", parameter))
        return int(result, 16) if result else 0

    def get_usdt_balances(self, owner: str, addresses: Sequence[str]) -> dict[str, int] | None:
        """USDT of each address in micro-units, ``multicall_chunk`` per request (the
        multicall contract's ``aggregate`` of ``balanceOf``, a constant call from ``owner``),
        a few requests side by side; None when this client names no multicall contract.

        An answer that is not one 32-byte balance per address asked is an
        :class:`UnreliableNode` (retryable; nothing is judged on it).
        """
        return self._multicall_reads(owner, addresses, lambda chunk: encode_balances(
            self.usdt_contract, chunk))

    def get_trx_balances(self, owner: str, addresses: Sequence[str]) -> dict[str, int] | None:
        """TRX of each address in sun (0: no account, or an account holding none) read as
        :meth:`get_usdt_balances` reads USDT: the multicall's own ``getEthBalance``."""
        return self._multicall_reads(owner, addresses, lambda chunk: encode_trx_balances(
            str(self.multicall), chunk))

    def _multicall_reads(self, owner: str, addresses: Sequence[str],
                         encode: Callable[[list[str]], str]) -> dict[str, int] | None:
        if self.multicall is None:
            return None
        valid_address(owner, "owner")
        holders = list(dict.fromkeys(valid_address(a, "address") for a in addresses))
        chunks = [holders[i:i + self.multicall_chunk]
                  for i in range(0, len(holders), self.multicall_chunk)]
        if len(chunks) <= 1:
            read = [self._balances(owner, chunk, encode(chunk)) for chunk in chunks]
        else:
            with ThreadPoolExecutor(min(MULTICALL_CONCURRENCY, len(chunks)),
                                    thread_name_prefix="tronenergy-multicall") as pool:
                read = list(pool.map(lambda chunk: self._balances(
                    owner, chunk, encode(chunk)), chunks))
        return {a: balance for chunk, balances in zip(chunks, read, strict=True)
                for a, balance in zip(chunk, balances, strict=True)}

    def _balances(self, owner: str, holders: list[str], parameter: str) -> list[int]:
        """One ``aggregate`` request: the balances of ``holders``, checked."""
        path = "wallet/triggerconstantcontract"
        multicall = self.multicall
        assert multicall is not None
        answer = self._call(path, lambda: self._tron.trigger_constant_contract(
            owner, multicall, AGGREGATE, parameter))
        try:
            return decode_balances(answer, len(holders))
        except ValueError as exc:
            raise UnreliableNode(f"node call {path} (multicall {multicall}) answered what the "
                                 f"contract cannot: {exc}", path=path) from None

    def call_constant(self, contract: str, selector: str) -> str | None:
        """A view call without arguments (``decimals()``, ``symbol()``) of ``contract``:
        its ``constant_result[0]`` ('' when empty); None when the call reverts or the node
        refuses it (no contract there). No answer at all is a :class:`NodeError`."""
        from tronpy.exceptions import ApiError, TvmError, ValidationError

        valid_address(contract, "contract")

        def call() -> str | None:
            try:
                answer = self._tron.trigger_constant_contract(contract, contract, selector, "")
            except (TvmError, ApiError, ValidationError):
                return None
            results = answer.get("constant_result") or [""]
            return results[0] if isinstance(results, list) and isinstance(results[0], str) \
                else None

        return self._call("wallet/triggerconstantcontract", call)

    def _constant(self, owner: str, selector: str, parameter: str) -> str:
        from tronpy.exceptions import TvmError

        try:
            return str(self._tron.trigger_const_smart_contract_function(
                owner, self.usdt_contract, selector, parameter))
        except TvmError as exc:
            raise ValueError(f"contract call reverted: {exc}") from None

    # -- estimates ---------------------------------------------------------------------------

    def estimate_transfer_energy(self, owner: str, to: str, units: int) -> int | None:
        """Energy a USDT ``transfer(to, units)`` from ``owner`` needs, or None if unknown.

        ``wallet/estimateenergy`` where the node offers it, else the energy a constant
        call of the transfer used; None when the node can say neither (e.g. the call
        would revert because ``owner`` lacks the USDT): the caller then falls back to
        the service's rule.
        """
        from tronpy.abi import trx_abi
        from tronpy.exceptions import ApiError, TvmError, UnknownError

        valid_address(owner, "owner")
        valid_address(to, "to")
        if units <= 0:
            raise ValueError("units must be a positive integer")
        parameter = trx_abi.encode(["address", "uint256"], [to, units]).hex()
        selector = "transfer(address,uint256)"

        def estimate() -> int | None:
            try:
                return int(self._tron.get_estimated_energy(owner, self.usdt_contract, selector,
                                                           parameter))
            except (ApiError, UnknownError, KeyError) as exc:
                # Not offered (_NO_ESTIMATE), or refused: the constant call says why.
                log.debug("estimateenergy unavailable (%s); trying a constant call",
                          "not offered" if _NO_ESTIMATE in str(exc) else type(exc).__name__)
            except TvmError:
                return None
            try:
                answer = self._tron.trigger_constant_contract(owner, self.usdt_contract,
                                                              selector, parameter)
            except TvmError:
                return None
            used = answer.get("energy_used")
            return used if isinstance(used, int) and not isinstance(used, bool) and used > 0 \
                else None

        energy = self._call("wallet/estimateenergy", estimate)
        if energy is not None and not 0 < energy <= MAX_TRANSFER_ENERGY:
            raise ValueError(f"the node estimates {energy:,} energy for one USDT transfer to "
                             f"{to}: outside 1 to {MAX_TRANSFER_ENERGY:,}, not believed")
        return energy

    # -- the chain's parameters --------------------------------------------------------------

    def get_chain_parameters(self) -> ChainParameters:
        """The chain's fees (``wallet/getchainparameters``), each checked against its range."""
        payload = self._call("wallet/getchainparameters", lambda: dict(
            self._provider.make_request("wallet/getchainparameters", {"visible": True})))
        return ChainParameters.from_node(payload)

    def get_contract_info(self, contract: str | None = None) -> ContractInfo | None:
        """A contract's dynamic-energy state (``wallet/getcontractinfo``), USDT's by default;
        None when the node knows no contract there (java-tron answers ``{}``)."""
        address = valid_address(contract or self.usdt_contract, "contract")
        payload = self._call("wallet/getcontractinfo", lambda: dict(
            self._provider.make_request("wallet/getcontractinfo",
                                        {"value": address, "visible": True})))
        if not payload:
            return None
        return ContractInfo.from_node(address, payload)

    # -- transactions and blocks -------------------------------------------------------------

    def get_transaction_info(self, tx_hash: str, *,
                             solidified: bool = False) -> TransactionInfo | None:
        """A transaction's receipt, or None while the node does not know it.

        ``solidified=True`` asks the solidity API, which knows a transaction only once
        it can no longer be reverted (about a minute on mainnet).
        """
        from tronpy.exceptions import TransactionNotFound

        if not isinstance(tx_hash, str) or not TX_HASH.fullmatch(tx_hash):
            raise ValueError("tx_hash must be 64 hexadecimal characters")
        path = ("walletsolidity" if solidified else "wallet") + "/gettransactioninfobyid"

        def read() -> dict[str, Any]:
            try:
                if solidified:
                    return dict(self._tron.get_solid_transaction_info(tx_hash))
                return dict(self._tron.get_transaction_info(tx_hash))
            except TransactionNotFound:
                return {}

        payload = self._call(path, read)
        if not payload:
            return None
        return self._checked(path, lambda: TransactionInfo.from_node(tx_hash, payload,
                                                                   solidified=solidified))

    def get_now_block(self) -> Block:
        """The head block (``wallet/getnowblock``), its id checked against its number."""
        payload = self._call("wallet/getnowblock", self._tron.get_latest_block)
        return self._checked("wallet/getnowblock", lambda: Block.from_node(payload))

    def get_solid_block(self) -> Block:
        """The latest solidified block (``walletsolidity/getnowblock``): nothing at or below it
        can be reverted, so a receipt read there is final."""
        path = "walletsolidity/getnowblock"
        payload = self._call(path, lambda: self._provider.make_request(path, {"visible": True}))
        return self._checked(path, lambda: Block.from_node(payload))

    def get_block(self, number: int, *, solidified: bool = False) -> BlockBody | None:
        """Block ``number`` read by number (``getblockbynum``): its header and its txIDs;
        None while the node has not produced it (with ``solidified=True``: not solidified).

        What a head or a receipt says is checked against it (``payout.trust``); one
        request, whatever the block holds.
        """
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise ValueError(f"number must be a block number of 1 or more, got {number!r}")
        path = ("walletsolidity" if solidified else "wallet") + "/getblockbynum"
        payload = self._call(path, lambda: dict(self._provider.make_request(
            path, {"num": number, "visible": True})))
        if not payload:
            return None
        return self._checked(path, lambda: BlockBody.from_node(number, payload))

    def get_genesis_block_id(self) -> str | None:
        """Block 0's ``blockID`` (``wallet/getblockbynum {"num": 0}``), lower hex: what tells
        this node's chain; None when the node answers no block 0. An id that cannot be a
        block 0's (not 64 hex, its number not 0) is a :class:`NodeError`."""
        path = "wallet/getblockbynum"
        payload = self._call(path, lambda: dict(self._provider.make_request(
            path, {"num": 0, "visible": True})))
        if not payload:
            return None
        return self._checked(path, lambda: genesis_id(payload.get("blockID"), "block 0's id"))

    def get_block_receipts(self, number: int, *,
                           solidified: bool = False) -> list[TransactionInfo]:
        """The receipts of every transaction in block ``number``, in block order.

        One request per block however many transfers it holds
        (``gettransactioninfobyblocknum``), so a batch is followed within a request budget.
        java-tron answers ``[]`` for a block without transactions and for one it has not
        produced yet (with ``solidified=True``: not solidified yet), so read the head
        (:meth:`get_now_block`, :meth:`get_solid_block`) before taking ``[]`` as "none".
        Every receipt must name a transaction (64 hex) and this block, once; else
        :class:`NodeError`.
        """
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise ValueError(f"number must be a block number of 1 or more, got {number!r}")
        path = ("walletsolidity" if solidified else "wallet") + "/gettransactioninfobyblocknum"
        payload = self._call(path, lambda: self._provider.json_answer(
            path, {"num": number, "visible": True}))
        return self._checked(path, lambda: block_receipts(number, payload,
                                                          solidified=solidified))

    # -- sending ---------------------------------------------------------------------------

    def broadcast(self, signed: dict[str, Any]) -> BroadcastAnswer:
        """Offer a signed transaction (``wallet/broadcasthex``: the very bytes journaled).

        Safe to repeat: the chain takes a txID once, and a node that already has it
        answers ``DUP_TRANSACTION_ERROR`` (accepted). No answer is a :class:`NodeError`;
        it says nothing about whether the node took it.
        """
        from airflow_provider_tronenergy.node.transactions import encoded

        txid = str(signed.get("txID", "")).lower()
        if not TX_HASH.fullmatch(txid):
            raise ValueError("a signed transaction carries its 64-hex txID")
        path = "wallet/broadcasthex"
        payload = self._call(path, lambda: self._provider.make_request(
            path, {"transaction": encoded(signed).hex()}))
        return self._checked(path, lambda: BroadcastAnswer.from_node(txid, payload))
