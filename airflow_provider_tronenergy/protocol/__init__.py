"""What the client and the sandbox truly share: signing, the address codec, the code table."""
