"""Custom kernels (lesson 10): is Triton here, which mode each kernel language runs in.

Triton is an optional extra (``pip install ".[kernels]"``, a ~200 MB wheel): a lesson
asks :func:`setup_triton` before importing it, which chooses Triton's interpreter
(``TRITON_INTERPRET=1``) when no CUDA GPU is present and says, when Triton is absent,
why its cells are skipped and how to install it. Pallas ships with jax:
:func:`pallas_interpret` says whether ``pallas_call`` must run in its interpreter on
this backend. :func:`plot_tiles` draws which program of a grid computed which tile;
:func:`count_graphs` counts the graphs Dynamo hands its backend (one graph: no break).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

INSTALL_HINT = 'pip install ".[kernels]"'


@dataclass(frozen=True)
class TritonStatus:
    """Whether Triton can run here, and how (compiled on a GPU or interpreted)."""

    available: bool
    interpreted: bool
    version: str | None
    reason: str

    def line(self) -> str:
        """One line for the notebook: the mode, or why the Triton cells are skipped."""
        if not self.available:
            return f"Triton cells skipped: {self.reason}"
        mode = (
            "interpreted on the CPU (TRITON_INTERPRET=1)"
            if self.interpreted
            else ("compiled for the CUDA GPU")
        )
        return f"Triton {self.version}: {mode}"

    def skipped(self) -> str:
        """The short line a skipped Triton cell prints (the setup cell said why)."""
        return "Triton absent: skipped (see the setup cell)"


def _cuda_present() -> bool:
    """A CUDA GPU that PyTorch can use (imports torch, which every lesson has by then)."""
    import torch

    return bool(torch.cuda.is_available())


def setup_triton(
    find_spec: Callable[[str], Any] = importlib.util.find_spec,
) -> TritonStatus:
    """Prepare Triton before its first import: interpreter mode on a machine without CUDA.

    ``TRITON_INTERPRET`` is read when Triton loads, so this must run before any
    ``import triton``; it is set only when no CUDA GPU is present (a GPU compiles the
    kernels natively). ``find_spec`` is injectable for the tests.
    """
    if find_spec("triton") is None:
        return TritonStatus(
            False,
            False,
            None,
            "Triton is not installed (it is an optional extra of about 200 MB, "
            f"so the default install leaves it out). Install it with `{INSTALL_HINT}` "
            "(or `pip install triton`) and restart the kernel to run them; "
            "the Pallas and PyTorch cells run either way.",
        )
    interpreted = not _cuda_present()
    if interpreted:
        os.environ["TRITON_INTERPRET"] = "1"
    version = importlib.import_module("triton").__version__
    reason = "no CUDA GPU: the interpreter" if interpreted else "a CUDA GPU"
    return TritonStatus(True, interpreted, version, reason)


def pallas_interpret(block_shape: tuple[int, ...] | None = None) -> bool:
    """Whether ``pallas_call`` must use its interpreter on JAX's default backend.

    On a GPU Pallas lowers through Triton (or Mosaic GPU), on a TPU through Mosaic;
    the CPU has no Pallas backend, so it interprets. Mosaic TPU tiles the last two
    dimensions by (8, 128): a block smaller than that runs interpreted on a TPU too.
    """
    import jax

    backend = jax.default_backend()
    if backend == "cpu":
        return True
    if backend == "tpu" and block_shape is not None and len(block_shape) >= 2:
        return block_shape[-2] % 8 != 0 or block_shape[-1] % 128 != 0
    return False


def plot_tiles(
    ids: Any, block_shape: tuple[int, int], ax: Any = None, title: str = ""
) -> Any:
    """Colour each element by the program that wrote it, with the block grid drawn over it.

    ``ids`` is a 2-D array of program numbers (what the lesson's tile kernels write);
    blocks that reach past the array's edge are drawn dashed where they overhang.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    ids = np.asarray(ids)
    if ax is None:
        _, ax = plt.subplots(figsize=(4, 3.4))
    ax.imshow(ids, cmap="tab20", interpolation="nearest", vmin=0, vmax=19)
    n_rows, n_cols = ids.shape
    bm, bn = block_shape
    grid = (-(-n_rows // bm), -(-n_cols // bn))
    for i in range(grid[0]):
        for j in range(grid[1]):
            ragged = (i + 1) * bm > n_rows or (j + 1) * bn > n_cols
            box = plt.Rectangle(
                (j * bn - 0.5, i * bm - 0.5), bn, bm, fill=False, lw=1.5,
                ls="--" if ragged else "-", ec="black",
            )  # fmt: skip
            ax.add_patch(box)
            cy, cx = (
                min(i * bm + bm / 2, n_rows - 0.5),
                min(j * bn + bn / 2, n_cols - 0.5),
            )
            ax.text(
                cx - 0.5, cy - 0.5, f"({i},{j})", ha="center", va="center", fontsize=8
            )
    ax.set_xlim(-0.5, grid[1] * bn - 0.5)
    ax.set_ylim(grid[0] * bm - 0.5, -0.5)
    ax.set_title(title or f"grid {grid}, blocks {block_shape}")
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    return ax


def count_graphs(fn: Callable[..., Any], *args: Any, fullgraph: bool = False) -> int:
    """The graphs Dynamo records for ``fn(*args)`` from an empty cache (1: no graph break).

    The backend runs each recorded graph as it is, so nothing is compiled by Inductor;
    with ``fullgraph=True`` a graph break raises instead of splitting the function.
    """
    import torch

    graphs = []

    def keep(gm: Any, example_inputs: Any) -> Any:
        graphs.append(gm)
        return gm.forward

    torch.compiler.reset()
    torch.compile(fn, backend=keep, fullgraph=fullgraph)(*args)
    return len(graphs)
