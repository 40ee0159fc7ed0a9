"""Test support: real receivers and a signed-request helper for talking to the sandbox."""
