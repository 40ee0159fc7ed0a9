"""The key that signs payouts, on its own connection type ``tron_signer``.

Kept apart from the service's and the node's connections, so that who may read it
can be limited on its own (a secrets backend path, a connection only the payout
DAG's workers see). One of: a local private key (hex, in the password field, masked in
every log from the moment it is read); a key in AWS KMS (extra ``kms_key_id``, with
``region_name`` and ``aws_conn_id``: :mod:`~airflow_provider_tronenergy.signer.kms`);
or an external signer named by import path in the extra (``signer_class``, with
``signer_kwargs``), so an HSM signs. With KMS or an external signer the key never
reaches Airflow. docs/money-safety.md says what holding a hot-wallet key in
Airflow means and how to limit it.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow.providers.common.compat.sdk import BaseHook

from airflow_provider_tronenergy.hooks import forms, lookup
from airflow_provider_tronenergy.hooks.tronenergy import (
    TronEnergyConnectionError,
    _mask,
    connection_extras,
)
from airflow_provider_tronenergy.signer import LocalKeySigner, Signer, SignerError, load_signer
from airflow_provider_tronenergy.signer.kms import KmsSigner, kms_client

if TYPE_CHECKING:
    from airflow.sdk import Connection

SIGNER_NEEDED = ("payouts are signed with this connection's key or signer; nothing is signed "
                 "without it")
"""What needs the signer's connection, for the error of an id that names none."""

TEXT_EXTRAS = ("signer_class", "kms_key_id", "region_name", "endpoint_url", "aws_conn_id",
               "address")
"""The signer connection's extras that are text (``signer_kwargs`` is an object)."""


class TronSignerConnectionError(TronEnergyConnectionError):
    """The ``tron_signer`` connection holds neither a usable key nor a usable signer class."""


class TronSignerHook(BaseHook):
    """Hands out the :class:`~airflow_provider_tronenergy.signer.Signer` of a connection.

    :param tron_signer_conn_id: a connection of type ``tron_signer``: password = the
        private key in hex; or extra ``{"kms_key_id": "alias/...", "region_name": "...",
        "aws_conn_id": "aws_default"}`` (``aws_conn_id`` optional: without it boto3's
        default credential chain; optional ``endpoint_url``); or extra
        ``{"signer_class": "package.module:Class", "signer_kwargs": {...}}``; optional
        extra ``address``: the address it must sign for (a key or a signer for another
        address is refused before anything is signed).

    An id that names no connection is a :class:`~..errors.ConnectionMissing` (never
    retried), naming ``setting`` and ``needs`` (``hooks.lookup``), before anything is
    signed. A signer's named errors (:class:`~airflow_provider_tronenergy.signer.SignerThrottled`,
    ...) reach the caller as themselves, the connection named; any other refusal is a
    :class:`TronSignerConnectionError`.
    """

    conn_name_attr = "tron_signer_conn_id"
    default_conn_name = "tron_signer_default"
    conn_type = "tron_signer"
    hook_name = "TRON Signer"

    def __init__(self, tron_signer_conn_id: str = default_conn_name, *,
                 needs: str = SIGNER_NEEDED, setting: str = conn_name_attr,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tron_signer_conn_id = tron_signer_conn_id
        self._needs, self._setting = needs, setting  # what a missing connection's error says

    def __repr__(self) -> str:
        return f"TronSignerHook(tron_signer_conn_id={self.tron_signer_conn_id!r})"

    @classmethod
    def signer_of(cls, conn: Connection) -> Signer:
        """The connection's signer, checked; no message repeats the key."""
        _mask(conn.password)
        extras = connection_extras(conn, TronSignerConnectionError)
        name = conn.conn_id
        wrong = [key for key in TEXT_EXTRAS if extras.get(key) not in (None, "")
                 and not isinstance(extras[key], str)]
        if wrong:
            raise TronSignerConnectionError(
                f"connection {name!r}: extra {wrong[0]} must be text, not "
                f"{type(extras[wrong[0]]).__name__}")
        signer_class = extras.get("signer_class")
        kms_key_id = extras.get("kms_key_id")
        signer: Signer
        try:
            if sum(1 for way in (signer_class, kms_key_id, conn.password) if way) > 1:
                raise SignerError("give one of a private key (password), kms_key_id or "
                                  "signer_class, not both")
            if kms_key_id:
                signer = KmsSigner(cls.kms_client_of(extras), kms_key_id,
                                   address=extras.get("address") or None)
            elif signer_class:
                kwargs = extras.get("signer_kwargs") or {}
                if not isinstance(kwargs, dict):
                    raise SignerError("signer_kwargs must be an object")
                signer = load_signer(signer_class, kwargs)
            elif conn.password:
                signer = LocalKeySigner(conn.password)
            else:
                raise SignerError("no private key (password) and no signer_class")
        except SignerError as exc:
            if type(exc) is not SignerError:  # a named error keeps its name (and retryable)
                raise type(exc)(f"connection {name!r}: {exc}") from None
            raise TronSignerConnectionError(f"connection {name!r}: {exc}") from None
        expected = extras.get("address")
        if expected and expected != signer.address:
            raise TronSignerConnectionError(
                f"connection {name!r} signs for {signer.address}, but its extra says "
                f"{expected}")
        return signer

    @staticmethod
    def kms_client_of(extras: dict[str, Any]) -> Any:
        """The KMS client: credentials from the Airflow ``aws`` connection ``aws_conn_id``
        (the Amazon provider's ``AwsBaseHook``: role assumption, profiles, its region),
        or boto3's default chain when the extra names none."""
        region = extras.get("region_name") or None
        endpoint = extras.get("endpoint_url") or None
        aws_conn_id = extras.get("aws_conn_id") or None
        if aws_conn_id is None:
            return kms_client(region, endpoint_url=endpoint)
        try:
            from airflow.providers.amazon.aws.hooks.base_aws import AwsBaseHook
        except ImportError:
            raise SignerError(f"aws_conn_id {aws_conn_id!r} needs the Amazon provider "
                              "(apache-airflow-providers-amazon); without it, leave aws_conn_id "
                              "out and boto3's default credential chain is used") from None
        aws = AwsBaseHook(aws_conn_id=aws_conn_id, client_type="kms", region_name=region)
        return kms_client(region or aws.conn_region_name, endpoint_url=endpoint,
                          session=aws.get_session(region_name=region))

    def get_conn(self) -> Signer:
        """The signer (built once per hook); it never leaves the worker's memory."""
        return self._signer

    @cached_property
    def _signer(self) -> Signer:
        return self.signer_of(lookup.existing(self.get_connection, self.tron_signer_conn_id,
                                              setting=self._setting, needs=self._needs))

    @property
    def address(self) -> str:
        """The address this connection signs for."""
        return self.get_conn().address

    def test_connection(self) -> tuple[bool, str]:
        """The UI's Test button: build the signer and name its address (never the key)."""
        try:
            return True, f"Signs for {self.address}"
        except SignerError as exc:
            return False, str(exc)

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """Form layout for Airflow releases that read it from the hook (< 3.2): the form
        provider info gives 3.2+ (``hooks.forms``), the extras in the Extra JSON placeholder."""
        return forms.SIGNER.legacy_behaviour()
