"""Hooks: connections turned into clients (``tronenergy``: the service; ``tron_node``: a TRON
full node; ``tron_signer``: a signer). The wait for an order they hand out is ``orders``'."""
