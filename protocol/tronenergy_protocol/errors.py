"""The root of the provider's exception tree, and the protocol's family under it.

Defined here, below everything, because the code shared by the provider and the sandbox
raises them (``ProtocolError``) or builds on them (the sandbox's ``SandboxError``); the
provider's ``airflow_provider_tronenergy.errors`` builds the rest of the tree on this root
and re-exports both, and that is where users import them from. One class each, so
``except TronEnergyProviderError`` catches the provider's, the protocol's and the
sandbox's errors alike. This module imports nothing.
"""

from __future__ import annotations


class TronEnergyProviderError(Exception):
    """Base of every exception the provider raises; never carries a secret."""


class ProtocolError(TronEnergyProviderError, ValueError):
    """Text (an address, an amount) that the protocol's rules refuse; the message says why."""
