"""The doctor's flags, in a module that imports nothing heavy: Airflow's CLI reads them at
every ``airflow`` call (:mod:`.airflow_cli`)."""

from __future__ import annotations

from typing import Any, Final

TRONENERGY_CONN_ID: Final = "tronenergy_default"
TRON_NODE_CONN_ID: Final = "tron_node_default"
TRON_SIGNER_CONN_ID: Final = "tron_signer_default"
"""The hooks' ``default_conn_name`` (tests/doctor holds them equal)."""

FLAGS: Final[tuple[tuple[str, dict[str, Any]], ...]] = (
    ("--tronenergy-conn-id", {"default": TRONENERGY_CONN_ID,
                              "help": "the service's connection (default %(default)s)"}),
    ("--tron-node-conn-id", {"default": TRON_NODE_CONN_ID,
                             "help": "the node's connection (default %(default)s; '' for "
                                     "none)"}),
    ("--confirm-node-conn-id", {"default": "",
                                "help": "the payouts' confirming node, if they have one"}),
    ("--tron-signer-conn-id", {"default": TRON_SIGNER_CONN_ID,
                               "help": "the payout signer's connection (default %(default)s; "
                                       "'' for none)"}),
    ("--sender", {"default": "",
                  "help": "the hot wallet the payouts are sent from"}),
    ("--permission-id", {"type": int, "default": 0,
                         "help": "the sender's permission the signer signs under (default "
                                 "0, the owner's)"}),
    ("--callback-url", {"default": None,
                        "help": "the URL the service posts callbacks to ('' where none are "
                                "received)"}),
    ("--migrate", {"action": "store_true",
                   "help": "create or migrate the stores first (the one step that writes)"}),
    ("--json", {"action": "store_true", "help": "print JSON instead of text"}),
)
"""The doctor's flags: this command's and the Airflow CLI command's (:mod:`.airflow_cli`)."""
