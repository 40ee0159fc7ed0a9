"""The shape of the ids both sides exchange: order ids and transaction hashes.

One rule, read by the client (every answer's ids), the purchase journal (ids a
person types) and the node client (receipts).
"""

from __future__ import annotations

import re
from typing import Final

ORDER_ID: Final = re.compile(r"[!-~]{1,128}")
"""An order id: 1 to 128 printable ASCII characters, no spaces."""

TX_HASH: Final = re.compile(r"[0-9a-fA-F]{64}")
"""A transaction id: 32 bytes in hex."""
