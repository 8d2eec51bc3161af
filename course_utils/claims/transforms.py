"""JAX's function transformations: third derivatives, and vmap over environments.

- ``higher-order`` and ``jax-2-5x``: the third derivative of sin(x²)+exp(cos x)
  at many points, ``torch.compile(vmap(grad³))`` with ``torch.func`` against
  ``jax.jit(jax.vmap(grad³))`` (the registry's fair "compiled" pairing), both
  checked against :func:`third_derivative_analytic`;
- ``vmap-simulation``: one step of many CartPole environments
  (:mod:`course_utils.cartpole`), PyTorch batched by hand and compiled against
  ``jax.vmap`` + ``jit`` (the "compiled" pairing);
- ``vmap-loop``: JAX alone, one step of the article's 64 environments, a Python
  loop over the jitted one-environment step against ``jax.vmap`` + ``jit``.
"""

from __future__ import annotations

import numpy as np

from course_utils.claims.harness import Ctx, medians, paired, pairing_names
from course_utils.claims.verdict_rule import Measured


def third_derivative_analytic(x: np.ndarray) -> np.ndarray:
    """d³/dx³ [sin(x²) + exp(cos x)] in float64, the oracle."""
    x = np.asarray(x, dtype=np.float64)
    s2, c2 = np.sin(x**2), np.cos(x**2)
    return (
        -12 * x * s2
        - 8 * x**3 * c2
        + np.exp(np.cos(x)) * np.sin(x) * (3 * np.cos(x) + 1 - np.sin(x) ** 2)
    )


def higher_order(ctx: Ctx) -> Measured:
    """The registry's fair "compiled" pairing: ``torch.compile(torch.func)`` against ``jax.jit``.

    It serves both "higher-order" and "jax-2-5x" (the same workload).
    """
    import jax
    import jax.numpy as jnp
    import torch

    from course_utils import timing
    from course_utils.parity import assert_close

    n = ctx.size(100_000, 2_000)
    x_np = np.linspace(-2.0, 2.0, n, dtype=np.float32)

    def f_torch(x):
        return torch.sin(x**2) + torch.exp(torch.cos(x))

    def f_jax(x):
        return jnp.sin(x**2) + jnp.exp(jnp.cos(x))

    g = torch.func.grad
    third_torch = torch.compile(torch.func.vmap(g(g(g(f_torch)))))
    third_jax = jax.jit(jax.vmap(jax.grad(jax.grad(jax.grad(f_jax)))))
    xt, xj = ctx.torch_put(x_np), ctx.jax_put(x_np)
    assert_close(
        third_jax(xj),
        third_derivative_analytic(x_np),
        rtol=1e-3,
        atol=1e-3,
        name="jax f'''",
    )
    num, den = pairing_names("higher-order", "compiled")
    cmp = timing.compare(  # also checks PyTorch's f''' against JAX's
        {num: lambda: third_torch(xt), den: lambda: third_jax(xj)},
        rtol=1e-4,
        atol=1e-3,
        target_s=ctx.target_s,
    )
    med = medians(cmp)
    return paired(
        cmp,
        "higher-order",
        "compiled",
        f"{n:,} points, compiled against compiled: PyTorch "
        f"{timing.format_seconds(med[num])}, JAX {timing.format_seconds(med[den])}; "
        "both checked against the analytic f''' (lesson 02 also shows the article's "
        "eager-against-jit pairing)",
    )


def vmap_simulation(ctx: Ctx) -> Measured:
    """The registry's "compiled" pairing: hand-batched PyTorch + torch.compile against vmap + jit."""
    import jax
    import torch

    from course_utils import cartpole, timing

    n = ctx.size(10_000, 2_000)
    states, actions = cartpole.initial_states(n, 0), cartpole.random_actions(n, 0)
    s_t, a_t = ctx.torch_put(states), ctx.torch_put(actions)
    s_j, a_j = ctx.jax_put(states), ctx.jax_put(actions)
    torch_batched = torch.compile(cartpole.torch_step_batch)
    jax_vmapped = jax.jit(jax.vmap(cartpole.jax_step))
    num, den = pairing_names("vmap-simulation", "compiled")
    cmp = timing.compare(
        {num: lambda: torch_batched(s_t, a_t), den: lambda: jax_vmapped(s_j, a_j)},
        rtol=1e-5,
        atol=1e-5,
        target_s=ctx.target_s,
    )
    med = medians(cmp)
    return paired(
        cmp,
        "vmap-simulation",
        "compiled",
        f"{n:,} CartPole environments, one step, compiled against compiled",
        {"env_steps_per_s": {k: n / t for k, t in med.items()}},
    )


VMAP_ENVS = 64  # the article's batch of environments, in both modes


def vmap_loop(ctx: Ctx) -> Measured:
    """The registry's "batching" pairing: a loop of jitted one-environment steps against vmap + jit."""
    import jax

    from course_utils import cartpole, timing

    n = VMAP_ENVS
    states, actions = cartpole.initial_states(n, 0), cartpole.random_actions(n, 0)
    rows = [ctx.jax_put(s) for s in states]  # split beforehand: the loop times stepping
    acts = [ctx.jax_put(a) for a in actions]
    s_j, a_j = ctx.jax_put(states), ctx.jax_put(actions)
    vmapped = jax.jit(jax.vmap(cartpole.jax_step))
    loop, batched = pairing_names("vmap-loop", "batching")
    cmp = timing.compare(
        {
            loop: lambda: cartpole.jax_loop(rows, acts),
            batched: lambda: vmapped(s_j, a_j),
        },
        rtol=1e-6,
        atol=1e-7,
        target_s=ctx.target_s,
    )
    med = medians(cmp)
    return paired(
        cmp,
        "vmap-loop",
        "batching",
        f"{n} CartPole environments, one step: the loop "
        f"{timing.format_seconds(med[loop])} ({n} jitted calls), vmap + jit "
        f"{timing.format_seconds(med[batched])} (one call)",
        {"env_steps_per_s": {k: n / t for k, t in med.items()}},
    )
