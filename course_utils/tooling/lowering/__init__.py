"""The lowering check: every program a notebook jits, lowered for CUDA and TPU on a CPU
while the notebook tests run, so that a GPU or TPU failure shows up without one
(docs/AUTHORING.md).

- ``export``: lowers a jitted JAX program for GPUs and TPUs on a CPU (``jax.export``)
- ``record``: records each program a notebook's kernel compiles, and checks it (an IPython extension)
"""
