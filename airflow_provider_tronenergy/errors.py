"""The root of every exception the provider raises, and of the rooms that share one.

``except TronEnergyProviderError`` catches whatever the provider raised and nothing
else. Each room keeps its own family under it, so a caller picks the room it means:
the service's errors are not the node's, and a journal that refuses is not a store
that cannot open. A class keeps the built-in base its callers already catch
(``ValueError`` for a bad value, ``RuntimeError`` for a state that refuses)::

    TronEnergyProviderError
    ├── TronEnergyError             client.errors: the service's answer, or none (its tree there)
    ├── NodeError                   node.errors: a TRON node read failed
    │   ├── UnreliableNode          an answer the chain cannot hold (payout.trust checks it)
    │   └── LaggingNode             deposits.scan: ``[]`` for a block it has not got (held)
    ├── BodyError (ValueError)      client.bounded: an answer not read whole
    │   ├── AnswerTooLarge
    │   └── UnreadableEncoding
    ├── DeadlineExceeded (TimeoutError)   client.deadline: no answer within the deadline
    ├── ProtocolError (ValueError)  text the wire rules refuse
    │   ├── AddressError            protocol.address
    │   ├── NumberError             protocol.numbers
    │   └── ExplorerError           protocol.explorer: an explorer_url that is no explorer's root
    ├── TronEnergyConnectionError (ValueError)   hooks.tronenergy: an unusable connection
    │   ├── TronNodeConnectionError              hooks.tron_node
    │   └── TronSignerConnectionError            hooks.tron_signer
    ├── SignerError (ValueError)    signer: a key or signer that cannot sign for its address
    │   ├── SignerKeyNotFound       no such key (signer.kms maps the service's answers)
    │   ├── SignerKeyUnsuitable     not a secp256k1 signing key
    │   ├── SignerNotPermitted      the credentials may not use the key
    │   ├── SignerKeyDisabled       disabled or pending deletion
    │   ├── SignerThrottled         retryable: the service asked to slow down
    │   └── SignerUnavailable       retryable: no answer, or the service failed inside
    ├── JournalError (RuntimeError) journal.store: the purchase journal refuses
    │   ├── JournalRace
    │   └── OrderMismatch           journal.verify
    ├── IdentityError (ValueError)  journal.identity: a purchase_key that names nothing
    ├── StoreError (RuntimeError)   sqlstore: a store that cannot be used as configured
    ├── CallbackError               the callback receiver and its store
    │   ├── ConfigError (ValueError)     callbacks.config
    │   ├── Rejection                    callbacks.verify: a callback refused, with its status
    │   ├── Overloaded (RuntimeError)    callbacks.batcher
    │   └── CommitTimeout (RuntimeError) callbacks.batcher
    ├── UnknownOutcome, EnergyGone  purchase.outcomes: a purchase stops to ask, or buys anew
    ├── PayoutInputError (ValueError)  payout.rows: payouts that cannot be sent as given
    ├── PayoutRefused (RuntimeError)   payout.funds: a batch the sender cannot pay
    ├── FundsInFlight (RuntimeError)   payout.funds: payable only if transfers in flight fail
    ├── WalletBusy (RuntimeError)   payout.lease: another task holds the sender's lease
    │   └── LeaseLost               this task's lease lapsed and was taken: nothing claimed
    ├── BudgetSpent                 payout.trust: a watch step's requests ran out (inside the watch)
    ├── ScanSettingsError (ValueError)  deposits.scan: a scan's settings or addresses refused
    ├── KeeperPolicyError (ValueError)  keeper.policy: a keeper's rules that cannot be followed
    ├── KeeperBlind (RuntimeError)  keeper.keep: the price or the chain unread, nothing bought
    ├── PayoutJournalError (RuntimeError)  payout.journal: the payout journal refuses
    │   ├── PayoutRace
    │   └── PayoutConflict          payout.send: an identity journaled for another payout
    └── SandboxError                sandbox.errors: the emulated service refuses
        ├── WorldError
        ├── ForbiddenError          sandbox.control
        ├── ParameterError (ValueError)  sandbox.chain.parameters: a change the chain refuses
        ├── PermissionUpdateError (ValueError)  sandbox.chain.permissions: an update refused
        └── CodecError (ValueError)      sandbox.chain.jsonbytes: a transaction that cannot be read

``BodyError`` and ``DeadlineExceeded`` stay inside the HTTP plumbing: each client turns
them into its own (a ``TransportError`` or a ``NodeError``) before a caller sees them.
This module imports nothing of the package, so any room can import it.
"""

from __future__ import annotations


class TronEnergyProviderError(Exception):
    """Base of every exception the provider raises; never carries a secret."""


class ProtocolError(TronEnergyProviderError, ValueError):
    """Text (an address, an amount) that the protocol's rules refuse; the message says why."""


class CallbackError(TronEnergyProviderError):
    """A callback refused, a receiver overloaded or misconfigured."""
