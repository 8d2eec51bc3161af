"""One language-model training step in each framework, written once (lessons 11 and 12).

The JAX step is a pure function of ``(params, opt_state, x, y)``: the model's
structure (its NNX ``graphdef``) is closed over, so the same function runs on
one device, data-parallel or tensor-parallel, depending only on the shardings
``jax.jit`` is given (:mod:`course_utils.gpt.shard`). The PyTorch step is the
usual ``zero_grad`` / ``backward`` / ``step`` on a module and its optimizer,
whatever wraps the module (FSDP2, DTensor) or not.

Both optimizers are AdamW with the same hyperparameters and decoupled weight
decay applied to every parameter, so a run can be compared (and resumed) in
each. Both models have ``loss(tokens, targets)`` (:mod:`course_utils.gpt.model`).
``batches`` is any iterable of ``(x, y)`` token arrays ``(batch, seq)``.
jax, flax, optax and torch are imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = [
    "ADAMW",
    "check_adam_step",
    "check_recipe",
    "jax_adamw",
    "jax_loss",
    "jax_run",
    "jax_split",
    "jax_step",
    "torch_adamw",
    "torch_run",
    "torch_step",
]

ADAMW = {"lr": 3e-3, "b1": 0.9, "b2": 0.99, "eps": 1e-8, "weight_decay": 0.01}


# ----------------------------------------------------------------- JAX


def jax_split(model: Any) -> tuple[Any, Any, Any]:
    """``(graphdef, params, rest)`` of an NNX model: what the pure step works on."""
    from flax import nnx

    return nnx.split(model, nnx.Param, ...)


def jax_adamw(**overrides: float) -> Any:
    """``optax.adamw`` with :data:`ADAMW` (decoupled decay on every parameter)."""
    import optax

    h = {**ADAMW, **overrides}
    return optax.adamw(
        h["lr"], h["b1"], h["b2"], h["eps"], weight_decay=h["weight_decay"]
    )


def jax_loss(graphdef: Any, rest: Any) -> Callable[[Any, Any, Any], Any]:
    """``loss(params, x, y)``: the merged model's own ``loss(x, y)`` (mean cross-entropy)."""
    from flax import nnx

    # plain arrays: merge reuses a State's own variables, made outside the traced
    # function, and nnx.scan refuses a variable from another trace level
    rest = nnx.to_pure_dict(rest)

    def loss(params, x, y):
        return nnx.merge(graphdef, params, rest).loss(x, y)

    return loss


def jax_step(graphdef: Any, rest: Any, tx: Any) -> Callable[..., Any]:
    """The pure training step ``(params, opt_state, x, y) -> (params, opt_state, loss)``.

    Not jitted: the caller jits it, with or without shardings and donation.
    """
    import jax
    import optax

    loss_fn = jax_loss(graphdef, rest)

    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return step


def jax_run(
    step: Callable[..., Any], params: Any, opt_state: Any, batches: Iterable
) -> tuple[Any, Any, list[float]]:
    """Run a jitted ``step`` over ``batches``; return the final state and each loss."""
    import jax

    losses = []
    for x, y in batches:
        params, opt_state, loss = step(params, opt_state, x, y)
        losses.append(loss)
    return params, opt_state, [float(v) for v in jax.device_get(losses)]


def check_adam_step(
    after: Mapping[str, Any],
    reference: Mapping[str, Any],
    grads: Mapping[str, Any],
    atol: float = 1e-6,
) -> str:
    """Compare one AdamW step of two frameworks, element by element; return a summary line.

    ``after`` and ``reference`` map parameter names to the parameters after the step,
    ``grads`` to the gradients of that step. Adam's first update is ``lr·g/(|g| + ε)``,
    whose slope ``lr/ε`` near ``g = 0`` turns float32 rounding of a gradient into a
    visible step. So an element may differ by more than ``atol`` only where its
    gradient is below ``100·ε``; anywhere else an ``AssertionError`` names the tensor.
    """
    import numpy as np

    eps = ADAMW["eps"]
    n_elements, n_other, other_grad = 0, 0, 0.0
    for name, ref in reference.items():
        gap = np.abs(np.asarray(after[name]) - np.asarray(ref))
        g = np.abs(np.asarray(grads[name]))
        off = gap > atol
        if (g[off] >= 100 * eps).any():
            raise AssertionError(
                f"one AdamW step: {name} differs by up to {gap[off].max():.1e} where "
                f"its gradient is not near zero"
            )
        n_elements += gap.size
        n_other += int(off.sum())
        other_grad = max(other_grad, float(g[off].max(initial=0.0)))
    return (
        f"equal within {atol:g} at {n_elements - n_other:,} of {n_elements:,} elements; "
        f"the gradients of the other {n_other} are at most {other_grad:.1e} (ε = {eps:g})"
    )


def check_recipe(
    make_recipe: Callable[[Any], tuple[Any, Any]],
    model: Any,
    schedule: Callable[[Any], Any],
    mask: Callable[[Any], Any],
    params: Any,
    steps: int,
) -> str:
    """Check a PyTorch training recipe against an optax one; return a summary line.

    ``make_recipe(model)`` returns PyTorch's ``(optimizer, scheduler)``; it is built on
    a copy of ``model``, and its scheduler is stepped ``steps`` times. ``schedule`` is
    the optax schedule and ``mask(params)`` the tree of booleans saying where optax's
    AdamW decays the NNX ``params``. The learning rates must agree at every step, and
    the parameter groups with weight decay must hold the tensors the mask decays,
    named as in PyTorch; otherwise an ``AssertionError`` says what differs.
    """
    import copy

    import jax
    import jax.numpy as jnp
    import numpy as np

    from course_utils.gpt.convert import gpt_nnx_tensors_to_torch
    from course_utils.parity import assert_close

    model = copy.deepcopy(model)
    optimizer, scheduler = make_recipe(model)
    lrs_torch = []
    for _ in range(steps):
        lrs_torch.append(scheduler.get_last_lr()[0])
        optimizer.step()  # no gradients: nothing moves, and the scheduler may step
        scheduler.step()
    lrs_jax = np.asarray(jax.jit(jax.vmap(schedule))(jnp.arange(steps)))
    assert_close(
        lrs_jax,
        np.array(lrs_torch),
        rtol=1e-6,
        atol=1e-9,
        name="learning rate at every step",
    )
    names = {id(p): n for n, p in model.named_parameters()}
    decayed_torch = {
        names[id(p)]
        for group in optimizer.param_groups
        if group["weight_decay"] > 0
        for p in group["params"]
    }
    mask_np = jax.tree.map(
        lambda p, m: np.full(p.shape, float(m), np.float32), params, mask(params)
    )
    decayed_jax = {
        n for n, t in gpt_nnx_tensors_to_torch(mask_np).items() if bool(t.all())
    }
    if decayed_jax != decayed_torch:
        raise AssertionError(
            f"decayed in one framework only: {sorted(decayed_jax ^ decayed_torch)}"
        )
    return (
        f"the schedules agree at all {steps} steps, peak {max(lrs_torch):.1e}; both decay "
        f"the same {len(decayed_torch)} of {len(names)} tensors"
    )


# ----------------------------------------------------------------- PyTorch


def torch_adamw(model: Any, foreach: bool | None = False, **overrides: float) -> Any:
    """``torch.optim.AdamW`` with :data:`ADAMW` on every parameter of ``model``.

    ``foreach=False`` by default: the per-parameter loop also accepts a mix of
    DTensors and plain tensors (a tensor-parallel model whose embeddings stay
    replicated). ``foreach=None`` is PyTorch's own default (the multi-tensor
    kernels on a GPU), for timing a plain model.
    """
    import torch

    h = {**ADAMW, **overrides}
    return torch.optim.AdamW(
        model.parameters(),
        lr=h["lr"],
        betas=(h["b1"], h["b2"]),
        eps=h["eps"],
        weight_decay=h["weight_decay"],
        foreach=foreach,
    )


def torch_step(model: Any, optimizer: Any, x: Any, y: Any) -> Any:
    """One AdamW step in training mode; returns the loss (a detached tensor).

    ``model.train()`` first, as the JAX step's model is always in training mode:
    a model left in evaluation mode (after a validation pass) trains as it should.
    """
    model.train()
    optimizer.zero_grad(set_to_none=True)
    loss = model.loss(x, y)  # a wrapped model (FSDP2, DTensor) has it too
    loss.backward()
    optimizer.step()
    return loss.detach()


def torch_run(model: Any, optimizer: Any, batches: Iterable) -> list[float]:
    """Train over ``batches`` (NumPy or torch token arrays); return each step's loss.

    The batches go to the device of the model's first parameter.
    """
    import torch

    device = next(model.parameters()).device

    def as_tensor(a):
        return torch.as_tensor(a, device=device)

    return [
        float(torch_step(model, optimizer, as_tensor(x), as_tensor(y)))
        for x, y in batches
    ]
