"""What the provider and the sandbox truly share, free of any framework: the service's wire
protocol (``signing``, ``codes``, ``ids``, ``numbers``), the chain's address codec and
figures (``address``, ``energy``, ``explorer``), how a console script serves an ASGI app
(``serving``) and the root of the error tree (``errors``)."""
