"""The sandbox's TRON chain, a room of its own: accounts, blocks, transactions, charging.

``accounts`` (activation, token holders, simulated transfers) is a part of the
world's database like the others; the rest of the chain (blocks, signed
transactions, execution and charging, the node's routes and the control API)
lives beside it here.
"""
