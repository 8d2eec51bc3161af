"""The forward check, ``course forward-check``: the course against the newest jax, flax,
optax, orbax and torch, read from their wheels, never installed (docs/VERSIONS.md).

- ``command``: the ``course forward-check`` command and its report
- ``records``: what a release deprecates or removes, read from its Python sources without importing it
- ``uses``: the names the course uses from those packages, resolved from imports and attribute chains
"""
