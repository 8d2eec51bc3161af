"""Helpers for the *JAX and PyTorch, side by side* course.

The top level is what lessons and exercises import; importing it is cheap
(jax and torch are imported inside the functions that need them). Its one side
effects are two: part of the thread policy (``contention``): unless already set,
``OMP_WAIT_POLICY=PASSIVE`` before PyTorch loads its OpenMP runtime, so that
PyTorch's idle threads sleep instead of spinning on the cores JAX's threads need
when the two are timed in alternation; and ``rfc3987_syntax`` left out (see
:data:`SKIPPED_IMPORTS`). Student-facing modules:

- ``config``: smoke mode, sizes, and where the course lives
- ``env``: versions, devices, threads, precision; ``setup()`` at the top of every lesson
- ``devices``: device detection: each framework's device (``torch_device``, ``jax_device``) and the rules that choose it (``accelerator_kind``, ``choose_torch_device``, ``device_kind``, ``compared_kind``, ``device_problem``); lessons reach them through ``env``
- ``meshes``: which devices a mesh gets (the accelerators when there are enough, else simulated CPUs)
- ``timing``: honest benchmarks (``sync``, ``bench``, ``compare``, ``compile_report``)
- ``peaks``: each accelerator's published peak (a measured one for a CPU), achieved FLOP/s, MFU and the roofline
- ``stats``: the quartiles (and IQR) every timing table, plot whisker and verdict's spread uses
- ``contention``: the one thread policy and whether a timed section ran beside other work
- ``cell_notes``: a note said once per notebook cell (a contended run's cause, a table's footer)
- ``parity``: ``to_numpy`` and ``assert_close`` over mixed pytrees
- ``plots``: training curves, timing bars, break-even plots
- ``data``: scikit-learn's digits, NCHW to NHWC, one batch order for both frameworks
- ``exercises``: ``check``, the self-test after every exercise stub
- ``variants``: a student's own variant of an exercise's data (the ``VARIANT`` parameter, the grader's seed)
- ``expect``: ``expect_error``, a sharp bit's error shown in a line (and a failure when it does not happen)
- ``errors``: ``CourseError``, the one error base the ``course`` command, the grader and the claims raise
- ``quiz``: the self-checking review quiz that ends each lesson (``quiz.load(lesson)``; its questions in ``quizzes/``)
- ``strict``: turns the frameworks' deprecation warnings into errors
- ``compat``: the few calls whose spelling differs between supported jax/flax versions
- ``hosted``: the name the setup cell imports for ``install/``'s ``hosted``
- ``interop``: arrays across frameworks (DLPack) and a torch function called from JAX
- ``full_run``: a lesson's result from a real full run, saved by the lesson and shipped in ``full_runs/``, shown beside a smoke run
- ``memory``: peak memory of one training step in each framework, with the method named (XLA's plan, the torch profiler, the allocators' counters and a step's own peak on them)
- ``numpy_mlp``: a two-layer MLP in NumPy with hand-written backprop (the float64 oracle)
- ``residuals``: what reverse-mode autodiff saves for the backward pass, in both frameworks (lesson 02's rematerialisation; not numerical error)
- ``kmeans``: k-means in both frameworks (lesson 03)
- ``cartpole``: a batched CartPole simulation in both frameworks (lesson 03)
- ``torch_logs``: PyTorch's compile logs (``TORCH_LOGS``) collected for one block (lesson 03)
- ``keras_backends``: one Keras model on the JAX and the PyTorch backend (lesson 06)
- ``keras_child``: the child process that measures one Keras backend
- ``forwards``: a model of either framework as a plain function of a batch (``torch_forward``, ``jit_forward``)
- ``checklist``: the step-by-step port, the migration checklist and each of its checks (lessons 07, 08)
- ``profiles``: profiler traces of both frameworks read back as top-ops tables (lesson 09)
- ``kernels``: custom kernels (lesson 10): Triton's status and skip message, Pallas's interpret choice, the tile picture
- ``gpt/``: the GPT of lessons 11 and 12 in one folder: ``model``, ``sample``, ``convert``, ``data``, ``train``, ``shard``, ``checkpoint``, ``export``
- ``distributed/``: the distributed-training scripts and their launcher (lesson 05)
- ``install/``: the frameworks' builds for this machine (``frameworks``, run by ``make``) and the setup cell's install on Colab and Kaggle (``hosted``); stdlib only

Subpackages that import the frameworks at the top: ``models`` (the CNN and the
transformer block, both frameworks), ``convert`` (their weight-layout converters)
and ``gpt`` (its ``model``, ``sample`` and ``convert``; ``import course_utils.gpt``
itself is light). ``claims`` holds the claims registry and the one verdict rule:
lessons take every verdict from it (``claims.judge``, ``claims.faster``), and
``course claims`` runs its benchmarks. Subpackages for other audiences, never
imported by a lesson: ``tooling`` (what the ``course`` command drives) and
``grading`` (the instructor's grader); ``grading`` may use ``tooling``, never the
other way. Three top-level modules serve them, never a lesson: ``cli``, the ``course``
command, which mounts every room's verbs (it stands above them all); below both,
``student_version``, the exercise marker grammar (solutions, stubs, visible and hidden
tests) and the student notebook made from a master, and ``lessons``, the lesson
manifest: the lessons, their numbers and titles, masters, student notebooks and Chinese
twins, the one module that reads the notebook folders.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

if "torch" not in sys.modules:  # read once, when torch loads its OpenMP runtime
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# jsonschema, which nbformat imports to read any notebook, builds about 40 lark grammars
# at import when the optional rfc3987-syntax is installed (jupyter-events asks for it):
# 1.3 CPU-s in every process that reads a notebook (the grader, each `course` command,
# the test workers) against 0.1 s without it. It only checks "iri" string formats, which
# no notebook schema uses; jsonschema skips that check when the import fails.
SKIPPED_IMPORTS = ("rfc3987_syntax",)
for _name in SKIPPED_IMPORTS:
    sys.modules.setdefault(_name, None)  # type: ignore[arg-type]

__version__ = "0.1.0"

# ``course_utils.env`` etc. without an explicit import (the light modules only).
_SUBMODULES = (
    "config",
    "data",
    "devices",
    "env",
    "exercises",
    "expect",
    "parity",
    "plots",
    "strict",
    "timing",
)

__all__ = list(_SUBMODULES)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
