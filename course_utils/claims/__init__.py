"""``course claims``: the source articles' claims, re-measured on this machine.

Importing this package imports neither jax nor torch.
"""
