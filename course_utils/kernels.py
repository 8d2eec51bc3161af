"""Custom kernels (lesson 10): is Triton here, which backend each kernel language runs on.

Triton is an optional extra (``pip install ".[kernels]"``, a ~200 MB wheel): a lesson
asks :func:`setup_triton` before importing it, which chooses Triton's interpreter
(``TRITON_INTERPRET=1``) when no CUDA GPU is present and says, when Triton is absent,
why its cells are skipped and how to install it. Pallas ships with jax:
:func:`pallas_backend` says which backend runs a ``pallas_call`` on a device (Triton
on a GPU, Mosaic TPU, or the interpreter; the rule is :func:`choose_pallas_backend`),
:func:`use_triton_on_gpus` makes every jax lower a ``pallas_call`` through Triton on a
GPU, and :func:`filter_triton_deprecation` lets only the Triton backend's deprecation
through. :func:`per_platform` builds one program holding each platform's call.
:func:`pad_to_blocks` pads an array to whole blocks, so that no backend reads or writes
outside it. :func:`plot_tiles` draws which program of a grid computed which tile;
:func:`count_graphs` counts the graphs Dynamo hands its backend (one graph: no break).
:func:`out_of_bounds_errors` turns an out-of-block access that Pallas's TPU interpreter
found into a one-line ``IndexError``; :func:`inductor_kernels` and :func:`xla_kernels`
list the kernels each compiler makes of a function; :func:`matmul_loop_pallas` is the
tiled matmul's GPU route and :func:`matmul_loop_kernel` its kernel; :func:`folded` shows
a timing table, folded when its times cannot be judged, and :func:`shown` a function's
source in a fold.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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

    Triton (3.7) reads ``TRITON_INTERPRET`` when ``@triton.jit`` wraps a kernel, so this
    must run before any kernel is defined; lessons run it before ``import triton``. It is
    set only when no CUDA GPU is present (a GPU compiles the kernels natively).
    ``find_spec`` is injectable for the tests.
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


# What jax >= 0.11 says when a kernel lowers through Pallas's Triton backend; a lesson
# filters exactly this message, and only where a kernel may lower there.
PALLAS_TRITON_DEPRECATION = r"The Pallas Triton backend is deprecated"
# The jax flag that sends a pallas_call without compiler parameters to Mosaic GPU
# (jax 0.9 to 0.11.1, on by default); jax 0.11.2 removed it and lowers to Triton again.
MOSAIC_GPU_FLAG = "jax_pallas_use_mosaic_gpu"


@dataclass(frozen=True)
class PallasBackend:
    """Which Pallas backend runs a kernel here, and why.

    ``name`` is ``"triton"`` (a GPU of sm_80 or newer), ``"mosaic_tpu"`` or
    ``"interpreter"``.
    """

    name: str
    reason: str

    @property
    def interpret(self) -> bool:
        """The ``interpret=`` argument of ``pallas_call``."""
        return self.name == "interpreter"

    def compiler_params(self) -> Any:
        """The ``compiler_params=`` of ``pallas_call``: Triton's on the Triton backend.

        Passing them chooses the Triton backend explicitly, whatever a jax between 0.9
        and 0.11.1 would choose by default (Mosaic GPU); :func:`use_triton_on_gpus`
        does the same for every call at once.
        """
        if self.name != "triton":
            return None
        from jax.experimental.pallas import triton as pltriton

        return pltriton.CompilerParams()

    def line(self) -> str:
        """One line for the notebook: the backend and why it was chosen."""
        return f"Pallas backend: {self.name} ({self.reason})"


def choose_pallas_backend(
    platform: str,
    compute_capability: tuple[int, int] | None = None,
    block_shape: tuple[int | None, ...] | None = None,
    array_shape: tuple[int, ...] | None = None,
) -> PallasBackend:
    """The Pallas backend for a ``pallas_call`` kernel on ``platform`` (``"cpu"``,
    ``"gpu"``, ``"tpu"``).

    ``compute_capability`` is the GPU's ``(major, minor)``; ``block_shape`` is the
    kernel's smallest block. On a GPU of sm_80 or newer: the Triton backend (what
    :func:`use_triton_on_gpus` makes every jax choose); below sm_80 (a T4 is sm_75)
    Pallas has no GPU backend, so it interprets. On a TPU, Mosaic tiles the last two
    dimensions by (8, 128) and a 1-D block by 128: other blocks interpret (a dimension
    the block spans whole, given ``array_shape``, is fine). ``None`` in a block shape is
    a squeezed dimension of size 1. The CPU has no Pallas backend.
    """
    if block_shape is not None:
        block_shape = tuple(1 if b is None else b for b in block_shape)
    if platform == "tpu":
        return _tpu_backend(block_shape, array_shape)
    if platform != "gpu":
        return PallasBackend("interpreter", f"Pallas has no {platform} backend")
    cc = tuple(compute_capability or (0, 0))
    sm = f"sm_{cc[0]}{cc[1]}"
    if cc < (8, 0):
        return PallasBackend(
            "interpreter", f"a {sm} GPU: Pallas's GPU backends need sm_80 or newer"
        )
    return PallasBackend("triton", f"a {sm} GPU")


def _tpu_backend(
    block_shape: tuple[int, ...] | None, array_shape: tuple[int, ...] | None
) -> PallasBackend:
    """Mosaic TPU when the block tiles by (8, 128) (or spans a dimension whole)."""
    if block_shape is not None:
        dims = (8, 128) if len(block_shape) >= 2 else (128,)
        tail = block_shape[-len(dims) :]
        whole = tuple(array_shape[-len(dims) :]) if array_shape else (0,) * len(dims)
        if any(b % d and b != n for b, d, n in zip(tail, dims, whole, strict=True)):
            return PallasBackend(
                "interpreter",
                f"Mosaic TPU tiles blocks by {dims}; a {tuple(block_shape)} block "
                "does not fit",
            )
    return PallasBackend("mosaic_tpu", "a TPU")


# A GPU and a TPU that a program run elsewhere may be compiled for: an Ampere GPU
# and a TPU, so that a program exported for either platform carries a compiled kernel.
ELSEWHERE = {"gpu": (8, 0), "tpu": None}


def choose_pallas_backends(
    platform: str,
    compute_capability: tuple[int, int] | None = None,
    block_shape: tuple[int | None, ...] | None = None,
    array_shape: tuple[int, ...] | None = None,
) -> dict[str, PallasBackend]:
    """The backend for each platform a program may be compiled for: ``cuda``, ``tpu``,
    and ``default`` (the interpreter: the CPU, any other platform).

    The platform the program runs on gets :func:`choose_pallas_backend` for this
    device; the other gets it for :data:`ELSEWHERE`'s device of that platform.
    """
    out = {}
    for key, kind in (("cuda", "gpu"), ("tpu", "tpu")):
        cc = compute_capability if platform == kind else ELSEWHERE[kind]
        out[key] = choose_pallas_backend(kind, cc, block_shape, array_shape)
    out["default"] = choose_pallas_backend("cpu")
    return out


def _device(device: Any = None) -> tuple[str, tuple[int, int] | None]:
    """A JAX device's platform and compute capability (JAX's first device by default)."""
    import jax

    device = device if device is not None else jax.devices()[0]
    cc = None
    if device.platform == "gpu":
        capability = str(getattr(device, "compute_capability", "0.0"))
        major, _, minor = capability.partition(".")
        cc = (int(major), int(minor or 0))
    return device.platform, cc


def pallas_backend(
    block_shape: tuple[int | None, ...] | None = None,
    array_shape: tuple[int, ...] | None = None,
    device: Any = None,
) -> PallasBackend:
    """:func:`choose_pallas_backend` for ``device`` (JAX's first device by default)."""
    platform, cc = _device(device)
    return choose_pallas_backend(platform, cc, block_shape, array_shape)


def pallas_backends(
    block_shape: tuple[int | None, ...] | None = None,
    array_shape: tuple[int, ...] | None = None,
    device: Any = None,
) -> dict[str, PallasBackend]:
    """:func:`choose_pallas_backends` for ``device`` (JAX's first device by default)."""
    platform, cc = _device(device)
    return choose_pallas_backends(platform, cc, block_shape, array_shape)


def use_triton_on_gpus() -> str:
    """Make a ``pallas_call`` without compiler parameters lower through Triton on a GPU,
    on every jax, and let only the Triton backend's deprecation warning through.

    By default such a call lowers on a GPU through Triton up to jax 0.8, through Mosaic
    GPU from 0.9 to 0.11.1 (the flag :data:`MOSAIC_GPU_FLAG`, on by default; the route
    is deprecated from 0.10), and through Triton again from 0.11.2, which removed the
    flag. Turning the flag off where it exists gives Triton everywhere. Returns a line
    saying so. Call it once, before the first kernel is traced.
    """
    import jax
    from jax.experimental import pallas  # noqa: F401 - jax 0.7 defines the flag there

    try:
        jax.config.update(MOSAIC_GPU_FLAG, False)
        how = f"{MOSAIC_GPU_FLAG} set to False"
    except AttributeError:  # jax 0.11.2 and newer: Triton is the default again
        how = "this jax's default"
    warnings.filterwarnings(
        "ignore", message=PALLAS_TRITON_DEPRECATION, category=DeprecationWarning
    )
    return f"Pallas on a GPU: the Triton backend for every pallas_call ({how})"


def per_platform(
    launch: Callable[[PallasBackend], Callable[..., Any]],
    backends: dict[str, PallasBackend],
) -> Callable[..., Any]:
    """One function that runs ``launch(backend)`` with the backend of the platform it is
    compiled for (``jax.lax.platform_dependent``): a jitted program then holds a Triton
    kernel for CUDA, a Mosaic one for TPU, and the interpreter elsewhere.

    An export names one platform: ``platforms=["tpu"]`` holds the Mosaic kernel, and
    ``platforms=["cuda"]`` the Triton one only with
    ``disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(name)]`` for the
    Triton call's name, which has no compatibility guarantee. An export for several
    platforms fails, since each branch is lowered for every one of them.
    """
    import jax

    branches = {key: launch(backend) for key, backend in backends.items()}
    # Under jit the platform is chosen when the program is lowered; called eagerly,
    # platform_dependent would pick this platform's branch at once and drop the others.
    return jax.jit(lambda *args: jax.lax.platform_dependent(*args, **branches))


def filter_triton_deprecation(*backends: PallasBackend) -> str:
    """Where one of ``backends`` is Triton, ignore exactly its deprecation warning.

    jax 0.11 deprecates Pallas's Triton backend; the course's strict mode turns
    deprecations into errors. The filter matches :data:`PALLAS_TRITON_DEPRECATION` by
    message, so every other deprecation still fails the run. Returns a line saying so.
    """
    if not any(b.name == "triton" for b in backends):
        return "Pallas's Triton backend: not used by these kernels"
    warnings.filterwarnings(
        "ignore", message=PALLAS_TRITON_DEPRECATION, category=DeprecationWarning
    )
    return (
        f'Pallas\'s Triton backend: jax 0.11+ warns "{PALLAS_TRITON_DEPRECATION} ..."; '
        "that message alone is filtered, for the kernels that may lower there"
    )


def pad_to_blocks(
    x: Any, block_shape: tuple[int, ...], value: float = float("nan")
) -> Any:
    """``x`` padded at the end of each dimension to a whole number of blocks.

    A kernel launched on the padded array reads and writes only inside it, on every
    Pallas backend; the launcher slices the result back. The NaN default makes a
    missing mask show in the result instead of passing by chance.
    """
    import jax.numpy as jnp

    pads = [(0, -n % b) for n, b in zip(x.shape, block_shape, strict=True)]
    return jnp.pad(x, pads, constant_values=value)


def pallas_interpret(block_shape: tuple[int, ...] | None = None) -> bool:
    """Whether ``pallas_call`` must interpret here (:func:`pallas_backend` says why)."""
    return pallas_backend(block_shape).interpret


def plot_tiles(
    ids: Any, block_shape: tuple[int, int], ax: Any = None, title: str = ""
) -> Any:
    """Colour each element by the program that wrote it, one outlined block per program.

    ``ids`` is a 2-D array of program numbers (what the lesson's tile kernels write).
    Each block is labelled inside the array with its program and its block ``(i, j)``;
    the part of a block past the array's edge is hatched, and the axes' one legend
    entry names that hatching.
    """
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.patches import Patch, Rectangle

    ids = np.asarray(ids)
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3))
    n_rows, n_cols = ids.shape
    bm, bn = block_shape
    gm, gn = math.ceil(n_rows / bm), math.ceil(n_cols / bn)
    height, width = gm * bm, gn * bn
    cmap = plt.get_cmap("Set3")
    ax.imshow(ids % 12, cmap=cmap, vmin=0, vmax=11, interpolation="nearest",
              extent=(0, n_cols, n_rows, 0), aspect="auto")  # fmt: skip
    over = {"facecolor": "0.92", "edgecolor": "0.55", "hatch": "//", "lw": 0}
    for x, y, w, h in ((n_cols, 0, width - n_cols, height),
                       (0, n_rows, n_cols, height - n_rows)):  # fmt: skip
        if w > 0 and h > 0:
            ax.add_patch(Rectangle((x, y), w, h, **over))
    for i in range(gm):
        for j in range(gn):
            ax.add_patch(Rectangle((j * bn, i * bm), bn, bm, fill=False, lw=1.5))
            x1, y1 = min((j + 1) * bn, n_cols), min((i + 1) * bm, n_rows)
            program = int(ids[i * bm, j * bn])
            ax.text((j * bn + x1) / 2, (i * bm + y1) / 2,
                    f"program {program}, block ({i}, {j})",
                    ha="center", va="center", fontsize=8)  # fmt: skip
    ax.add_patch(Rectangle((0, 0), n_cols, n_rows, fill=False, lw=2.5, ec="black"))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_xticks(sorted({*range(0, width + 1, bn), n_cols}))  # block edges, array edge
    ax.set_yticks(sorted({*range(0, height + 1, bm), n_rows}))
    ax.legend(handles=[Patch(**{**over, "lw": 1}, label="past the array's edge")],
              loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)  # fmt: skip
    ax.set_title(title or f"grid {(gm, gn)}, blocks {block_shape}")
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    return ax


def count_graphs(fn: Callable[..., Any], *args: Any, fullgraph: bool = False) -> int:
    """The graphs Dynamo records for ``fn(*args)`` from an empty cache (1: no graph break).

    The backend runs each recorded graph as it is, so nothing is compiled by Inductor;
    with ``fullgraph=True`` a graph break raises instead of splitting the function.
    """
    import torch

    from course_utils.timing.counters import DynamoGraphs

    graphs = DynamoGraphs()
    torch.compiler.reset()
    torch.compile(fn, backend=graphs, fullgraph=fullgraph)(*args)
    return len(graphs)


@contextmanager
def out_of_bounds_errors() -> Iterator[None]:
    """Inside the block, an out-of-block access found by Pallas's TPU interpreter is
    raised as the one-line ``IndexError`` it is.

    ``interpret=pltpu.InterpretParams()`` checks each read and write of a kernel
    against its block. It raises ``IndexError`` inside a host callback, which reaches
    the caller as a ``JaxRuntimeError`` holding that line among many frames, and jax's
    callback logger prints the frames once more. Here the logger is quiet, and the
    error comes out as ``IndexError: Out-of-bounds read ...``.
    """
    import logging

    import jax

    log = logging.getLogger("jax._src.callback")
    was = log.disabled
    log.disabled = True
    try:
        yield
    except jax.errors.JaxRuntimeError as err:
        found = [
            line.strip().removeprefix("IndexError: ").removeprefix("ValueError: ")
            for line in str(err).splitlines()
            if "Out-of-bounds" in line
        ]
        if not found:
            raise
        raise IndexError(found[-1]) from None
    finally:
        log.disabled = was


def inductor_kernels(fn: Callable[..., Any], *args: Any) -> list[str]:
    """The kernels Inductor generates for ``fn(*args)``: their names in its output code.

    Inductor's generated code compiles each kernel through ``async_compile``; this
    compiles ``fn`` from an empty cache and lists those lines' names.
    """
    import re

    import torch
    from torch._inductor.utils import run_and_get_code

    torch.compiler.reset()
    _, codes = run_and_get_code(torch.compile(fn), *args)
    return re.findall(r"^(\w+) = async_compile\.", "\n".join(codes), flags=re.M)


def xla_kernels(fn: Callable[..., Any], *args: Any) -> list[str]:
    """The fusions in the entry computation of XLA's optimised program for ``fn``.

    XLA launches each fusion its entry computation calls as one kernel; the names
    (``wrapped_reduce``, ``subtract_exponential_fusion``) say what each holds.
    """
    import re

    import jax

    hlo = jax.jit(fn).lower(*args).compile().as_text()
    entry = hlo[hlo.index("ENTRY") :]
    entry = entry[: entry.index("\n}")]
    return re.findall(r"^\s*(?:ROOT )?%?([\w.-]+) = .*? fusion\(", entry, flags=re.M)


def matmul_loop_kernel(a_ref: Any, b_ref: Any, c_ref: Any, *, bk: int) -> None:
    """One program: a ``bm x K`` strip of A times a ``K x bn`` strip of B, K in steps."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    def step(k: Any, acc: Any) -> Any:
        ks = pl.ds(k * bk, bk)  # a bk-wide window of the two strips
        return acc + jnp.dot(
            a_ref[:, ks], b_ref[ks, :], preferred_element_type=jnp.float32
        )

    zero = jnp.zeros(c_ref.shape, jnp.float32)
    c_ref[...] = jax.lax.fori_loop(0, a_ref.shape[1] // bk, step, zero)


def matmul_loop_pallas(
    a: Any, b: Any, bm: int = 128, bk: int = 128, bn: int = 128, interpret: Any = False
) -> Any:
    """``a @ b`` in float32 by a Pallas kernel whose programs each loop over K.

    Lesson 10's GPU route: Pallas's Triton backend runs a grid's programs at once, so
    steps along a K grid axis would race on one output block. Here a 2-D grid gives
    each program whole strips of A and B, and the program loops over K inside, as a
    Triton matmul does. K is padded to a power of two times ``bk`` (Triton's blocks
    are powers of two) and M, N to whole blocks, with zeros, which add nothing.
    """
    import functools

    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    (m, k), n = a.shape, b.shape[1]
    k_pad = pl.cdiv(pl.next_power_of_2(k), bk) * bk
    a_pad = jnp.pad(a, ((0, -m % bm), (0, k_pad - k)))
    b_pad = jnp.pad(b, ((0, k_pad - k), (0, -n % bn)))
    c = pl.pallas_call(
        functools.partial(matmul_loop_kernel, bk=bk),
        out_shape=jax.ShapeDtypeStruct((a_pad.shape[0], b_pad.shape[1]), jnp.float32),
        grid=(a_pad.shape[0] // bm, b_pad.shape[1] // bn),
        in_specs=[
            pl.BlockSpec((bm, k_pad), lambda i, j: (i, 0)),
            pl.BlockSpec((k_pad, bn), lambda i, j: (0, j)),
        ],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
        interpret=interpret,
    )(a_pad, b_pad)
    return c[:m, :n]


@dataclass(frozen=True)
class Folded:
    """A timing table and the lines read from it, shown open or folded in ``<details>``."""

    markdown: str
    summary: str = ""  # the fold's summary line; "" shows the table open

    def _repr_markdown_(self) -> str:
        if not self.summary:
            return self.markdown
        return (
            f"<details><summary>{self.summary}</summary>\n\n{self.markdown}\n\n"
            "</details>"
        )


def shown(fn: Callable[..., Any], summary: str) -> Folded:
    """``fn``'s source in a fold, less its function-local imports (this module imports
    no framework at the top, so its kernels import jax inside)."""
    import inspect

    lines = inspect.getsource(fn).splitlines(keepends=True)
    code = "".join(
        line for line in lines if not line.lstrip().startswith(("import ", "from "))
    )
    return Folded(f"```python\n{code}```", summary)


def folded(comparison: Any, *more: str, interpreted: bool = False) -> Folded:
    """``comparison``'s table with ``more`` Markdown under it, folded when its times
    cannot be judged: the kernels ran ``interpreted``, or other work contended for the
    cores while the rounds ran. The fold's summary says which.
    """
    text = "\n\n".join([comparison._repr_markdown_(), *more])
    contention = getattr(comparison, "contention", None)
    if interpreted:
        why = "the kernels ran interpreted, so these times are a simulation's"
    elif contention is not None and contention.contended:
        why = "other work shared the cores, so no verdict is drawn from these rounds"
    else:
        return Folded(text)
    return Folded(text, f"Timing table, folded: {why}")
