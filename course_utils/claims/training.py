"""A training step of the encoder in both frameworks: its throughput, and its GPU memory.

- ``train-throughput`` (a CUDA GPU only): equal-start AdamW steps
  (:func:`train_steps`) of a GPT-2-small-shaped encoder (:data:`THROUGHPUT`,
  the course's small one in smoke mode), PyTorch eager against JAX jit (the
  article's pairing), in tokens per second;
- ``train-memory`` (a CUDA GPU only): each allocator's peak over one step, with
  JAX donating its parameters and optimizer state (:data:`DONATED_ARGNUMS`) as
  an in-place PyTorch step does; :func:`step_memory_measured` turns what the
  allocators reported into the claim's samples.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from course_utils.claims.encoder import describe, encoder_setup, random_tokens
from course_utils.claims.harness import (
    Ctx,
    medians,
    paired,
    pairing_names,
    require_cuda,
)
from course_utils.claims.verdict_rule import Measured, NotTestable, paired_ratios

# Arguments of the JAX train step (params, opt_state, tokens, labels) it donates for
# the memory claim: the state a PyTorch step updates in place.
DONATED_ARGNUMS = (0, 1)
# train-throughput's workload: (shape, batch) in full mode, and in smoke mode.
THROUGHPUT = (("gpt2-small", 8), ("smoke", 8))


@dataclass
class TrainPair:
    """Equal-start AdamW train steps of the encoder, PyTorch and JAX, on one device kind."""

    torch_step: Callable[[], Any]
    torch_model: Any
    torch_opt: Any
    torch_batch: tuple[Any, Any]
    jax_step: Callable[[], Any]
    jax_train_step: Any  # the jitted (params, opt_state, tokens, labels) -> (params, opt_state, loss)
    box: dict[str, Any]  # the JAX state: "params", "opt"
    jax_batch: tuple[Any, Any]
    sizes: dict[str, int]


def _jax_adamw_step(ctx: Ctx, nnx_model: Any, lr: float, wd: float, donate: bool):
    """``(jitted step(params, opt_state, tokens, labels), {"params", "opt"})`` on ``ctx``'s device."""
    import jax
    import optax
    from flax import nnx

    graphdef, params, rest = nnx.split(nnx_model, nnx.Param, ...)
    params, rest = ctx.jax_put(params), ctx.jax_put(rest)
    if donate:
        # Donation deletes the step's inputs: copies, never the cached model's arrays
        # (device_put to the same device shares the buffers).
        params = jax.tree.map(lambda a: jax.numpy.array(a, copy=True), params)
    tx = optax.adamw(lr, weight_decay=wd)

    def train_step(params, opt_state, tok, labels):
        def loss_fn(p):
            logits = nnx.merge(graphdef, p, rest)(tok)
            return optax.softmax_cross_entropy_with_integer_labels(
                logits, labels
            ).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    jitted = jax.jit(train_step, donate_argnums=DONATED_ARGNUMS if donate else ())
    return jitted, {"params": params, "opt": ctx.jax_put(tx.init(params))}


def train_steps(
    ctx: Ctx, batch: int, *, donate: bool = False, shape: str | None = None
) -> TrainPair:
    """Equal-start train steps (AdamW, cross-entropy) of the encoder in both frameworks.

    ``shape`` is one of :data:`~course_utils.claims.encoder.SHAPES` (default:
    the course's encoder, or its smoke size).

    With ``donate``, the JAX step donates its parameters and optimizer state
    (:data:`DONATED_ARGNUMS`), so XLA writes the new ones into their buffers, as
    PyTorch's optimizer updates its tensors in place.
    """
    import torch
    from flax import nnx

    tm, jm, sizes = encoder_setup(ctx, shape)
    tm, jm = copy.deepcopy(tm), nnx.clone(jm)
    tok = random_tokens(batch, sizes["seq"], seed=2)
    labels = np.random.default_rng(3).integers(0, 2, batch)
    lr, wd = 1e-3, 0.01

    tok_t, lab_t = ctx.torch_put(tok), ctx.torch_put(labels)
    opt = torch.optim.AdamW(tm.parameters(), lr=lr, weight_decay=wd)

    def torch_step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(tm(tok_t), lab_t)
        loss.backward()
        opt.step()
        return loss.detach()

    jax_train_step, box = _jax_adamw_step(ctx, jm, lr, wd, donate)
    tok_j, lab_j = ctx.jax_put(tok), ctx.jax_put(labels.astype(np.int32))

    def jax_step():
        box["params"], box["opt"], loss = jax_train_step(
            box["params"], box["opt"], tok_j, lab_j
        )
        return loss

    return TrainPair(
        torch_step,
        tm,
        opt,
        (tok_t, lab_t),
        jax_step,
        jax_train_step,
        box,
        (tok_j, lab_j),
        sizes,
    )


def train_throughput(ctx: Ctx) -> Measured:
    require_cuda(ctx, "train-throughput", both=True)
    shape, batch = ctx.size(*THROUGHPUT)
    return throughput_of(ctx, shape, batch)


def throughput_of(ctx: Ctx, shape: str, batch: int) -> Measured:
    """The article's pairing on ``ctx``'s device: PyTorch eager / JAX jit train step time."""
    from course_utils import timing

    pair = train_steps(ctx, batch, shape=shape)
    num, den = pairing_names("train-throughput", "article")
    cmp = timing.compare(
        {num: pair.torch_step, den: pair.jax_step},
        rtol=1e-4,
        atol=1e-5,
        target_s=ctx.target_s,
    )
    med = medians(cmp)
    tokens = batch * pair.sizes["seq"]
    return paired(
        cmp,
        "train-throughput",
        "article",
        f"{shape} encoder ({describe(shape)}), AdamW step, batch {batch}: PyTorch "
        f"{tokens / med[num]:,.0f} tokens/s, JAX {tokens / med[den]:,.0f} tokens/s",
        {"tokens_per_s": {k: tokens / t for k, t in med.items()}},
    )


def _check_readings(
    torch_resident: int,
    torch_above: Sequence[int],
    jax_resident: int,
    jax_above: Sequence[int],
) -> None:
    """ValueError for readings no allocator can give (a measuring error, not a verdict)."""
    if len(torch_above) != len(jax_above) or not torch_above:
        raise ValueError(
            f"step_memory_measured: need equally many rounds, got "
            f"{len(torch_above)} and {len(jax_above)}"
        )
    if min(torch_resident, jax_resident) <= 0:
        raise ValueError("step_memory_measured: resident bytes must be positive")
    if min(*torch_above, *jax_above) < 0:
        raise ValueError(
            "step_memory_measured: a peak below the live bytes is a measuring error"
        )


def step_memory_measured(
    *,
    torch_resident: int,
    torch_above: Sequence[int],
    jax_resident: int,
    jax_above: Sequence[int],
    donated_bytes: int,
    batch: int,
    tolerance: float = 0.05,
) -> Measured:
    """The memory claim's samples from what each framework's allocator reported.

    ``*_resident``: bytes of the parameters, Adam state and batch, counted from
    the arrays (:func:`course_utils.memory.tree_bytes`), alive before and after
    a step; ``*_above``: per round, how far the allocator's peak rose above what
    was live when the step began (gradients, activations, optimizer
    temporaries, and on the JAX side any output not written into a donated
    buffer). A framework's step peak is resident + above; each sample is
    PyTorch's over JAX's, round by round. The two resident sets must agree
    within ``tolerance``, or the comparison would not be like with like.
    """
    _check_readings(torch_resident, torch_above, jax_resident, jax_above)
    gap = abs(torch_resident - jax_resident) / max(torch_resident, jax_resident)
    if gap > tolerance:
        raise NotTestable(
            f"not like with like: the resident state differs by {gap:.0%} (PyTorch "
            f"{torch_resident:,} B, JAX {jax_resident:,} B)"
        )
    from course_utils.memory import format_bytes

    torch_peaks = [torch_resident + a for a in torch_above]
    jax_peaks = [jax_resident + a for a in jax_above]
    mid = len(torch_peaks) // 2
    return Measured(
        paired_ratios(torch_peaks, jax_peaks),
        f"encoder AdamW step, batch {batch}, float32: peak PyTorch "
        f"{format_bytes(sorted(torch_peaks)[mid])}, JAX {format_bytes(sorted(jax_peaks)[mid])} "
        f"(resident {format_bytes(torch_resident)} vs {format_bytes(jax_resident)}; JAX donates "
        f"{format_bytes(donated_bytes)} of parameters and Adam state)",
        {
            "torch_resident_bytes": torch_resident,
            "jax_resident_bytes": jax_resident,
            "torch_above_bytes": list(torch_above),
            "jax_above_bytes": list(jax_above),
            "jax_donated_bytes": donated_bytes,
            "method": "torch.cuda.max_memory_allocated after reset_peak_memory_stats; JAX "
            "peak_bytes_in_use with the live bytes first lifted to the earlier peak "
            "(memory.jax_peak_above)",
        },
    )


def train_memory(ctx: Ctx) -> Measured:
    require_cuda(ctx, "train-memory", both=True)
    try:  # pragma: no cover - needs a GPU
        return train_memory_gpu(ctx)
    except NotTestable:  # pragma: no cover
        raise
    except Exception as err:  # pragma: no cover - report, do not crash the table
        raise NotTestable(
            f"the GPU measurement failed: {type(err).__name__}: {err}"[:200]
        ) from err


def train_memory_gpu(ctx: Ctx) -> Measured:
    """Each allocator's peak over one encoder step, same batch and precision, on the GPU."""
    from course_utils import memory

    batch = ctx.size(32, 8)
    pair = train_steps(ctx, batch, donate=True)
    pair.torch_step()  # creates the Adam state
    pair.jax_step()  # compiles, and replaces the state by the donated step's outputs
    pair.jax_step()

    def no_grads():  # PyTorch's step starts without gradients, as JAX's does
        pair.torch_opt.zero_grad(set_to_none=True)

    no_grads()
    torch_resident = memory.tree_bytes(
        (pair.torch_model, pair.torch_opt, pair.torch_batch)
    )
    jax_resident = memory.tree_bytes(
        (pair.box["params"], pair.box["opt"], pair.jax_batch)
    )
    torch_above, jax_above = [], []
    for _ in range(ctx.size(5, 3)):  # interleaved rounds
        torch_above.append(
            memory.torch_peak_above(
                pair.torch_step, before=no_grads, device=ctx.torch_device
            )
        )
        jax_above.append(memory.jax_peak_above(pair.jax_step, ctx.jax_device))
    donated = memory.tree_bytes([pair.box[k] for k in ("params", "opt")])
    return step_memory_measured(
        torch_resident=torch_resident,
        torch_above=torch_above,
        jax_resident=jax_resident,
        jax_above=jax_above,
        donated_bytes=donated,
        batch=batch,
    )
