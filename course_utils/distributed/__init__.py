"""Distributed training on one machine and on many: what lesson 05 launches and measures.

Importing this package imports neither jax nor torch. Modules:

- ``launch``: ``torchrun`` and ``jax.distributed`` launches with timeouts, built
  from ``ports`` (free ports), ``processes`` (running, watching and cleaning up
  the process trees), ``results`` (the launch's result and each rank's report)
  and ``excerpts`` (the scripts' marked regions the lesson shows)
- ``problem``: the small regression problem every demo solves, with a float64
  NumPy oracle for its gradients
- ``cost``: communication volume per step (formulas) and the collectives found
  in compiled XLA programs
- ``worker``: what a launched script uses to read its inputs and report results
- ``verdicts``: lesson 05's claims, each judged in one call from the lesson's results

The launched scripts themselves (run them with ``torchrun -m`` or ``python -m``):
``torch_ddp``, ``torch_tp``, ``torch_fsdp`` (and ``torch_all``, the three in one
launch), ``jax_multiprocess``, ``torch_gpt`` (lesson 12's GPT with FSDP2 and tensor
parallelism), and ``torch_check`` (runs an exercise's function on
several processes).

Elsewhere: ``course_utils.meshes`` picks the devices a JAX mesh gets (the accelerators,
or simulated CPUs), and ``course_utils.gpt.shard`` shards lesson 12's GPT.
"""
