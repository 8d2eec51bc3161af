"""Distributed training on one machine and on many: what lesson 05 launches and measures.

Importing this package imports neither jax nor torch. Modules:

- ``launch``: free ports, ``torchrun`` and ``jax.distributed`` launches with
  timeouts, process-tree cleanup, and each rank's results collected
- ``problem``: the small regression problem every demo solves, with a float64
  NumPy oracle for its gradients
- ``cost``: communication volume per step (formulas) and the collectives found
  in compiled XLA programs
- ``worker``: what a launched script uses to read its inputs and report results

The launched scripts themselves (run them with ``torchrun -m`` or ``python -m``):
``torch_ddp``, ``torch_tp``, ``torch_fsdp`` (and ``torch_all``, the three in one
launch), ``jax_multiprocess``, and ``torch_check`` (runs an exercise's function on
several processes).
"""
