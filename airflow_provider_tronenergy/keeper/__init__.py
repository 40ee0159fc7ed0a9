"""An energy keeper: keeps hot wallets supplied with rented energy, within a cap and a budget."""
