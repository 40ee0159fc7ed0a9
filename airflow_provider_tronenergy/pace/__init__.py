"""A node connection's request pace, shared by every process through a store (see store)."""
