"""What the client and the sandbox truly share: signing, address codec, codes, ASCII numbers
and the chain's energy figures (``energy``)."""
