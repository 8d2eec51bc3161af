"""A CartPole-like environment step with identical physics in NumPy, JAX and PyTorch.

The classic cart-pole (Barto, Sutton & Anderson 1983; the constants of Gymnasium's
``CartPole-v1``): a cart moves on a track, a pole is hinged on it, each step pushes
the cart left or right and integrates the equations of motion with one explicit
Euler step of ``TAU`` seconds. There is no randomness inside a step and no
automatic reset: ``done`` is reported and the caller decides what to do.

State layout, in every framework: ``(x, x_dot, theta, theta_dot)`` as float32;
an action is an integer, ``1`` pushes right and anything else pushes left.

API (lesson 03 and ``course claims`` use it):

- ``initial_states(n, seed)``: ``(n, 4)`` float32 NumPy array, uniform in ±0.05.
- ``random_actions(n, seed, steps=None)``: int32 NumPy actions, ``(n,)`` or ``(steps, n)``.
- ``physics(x, x_dot, theta, theta_dot, force, sin, cos)``: one Euler step of the four
  components, and ``terminated(x, theta)``: whether the cart or the pole left its bounds;
  every step below is written around these two (lesson 03 writes its own on the page).
- ``numpy_step(states, actions)``: float64 oracle for any batch shape ``(..., 4)``.
- ``jax_step(state, action)`` / ``torch_step(state, action)``: **one** environment,
  ``state`` of shape ``(4,)`` and a scalar action, returning
  ``(next_state, reward, done)`` of shapes ``(4,)``, ``()``, ``()``. Written with
  ``where`` instead of Python ``if`` so ``jax.vmap`` and ``torch.func.vmap`` batch them.
- ``jax_step_batch(states, actions)`` / ``torch_step_batch(states, actions)``: the
  same physics hand-batched over ``(n, 4)`` states and ``(n,)`` actions.
- ``jax_loop(states, actions)`` / ``torch_loop(states, actions)``: a Python loop
  calling the single-environment step once per environment (``jax_loop`` jits it).
- ``fps_variants(n, seed, torch_device=None)``: zero-argument callables stepping ``n`` environments
  once, each way (loop, vmap, hand-batched) in both frameworks, for benchmarks;
  every one returns ``(next_states, rewards, dones)`` with the same values.

Importing this module does not import jax or torch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

GRAVITY = 9.8
MASS_CART = 1.0
MASS_POLE = 0.1
TOTAL_MASS = MASS_CART + MASS_POLE
HALF_LENGTH = 0.5  # half the pole's length
POLE_MASS_LENGTH = MASS_POLE * HALF_LENGTH
FORCE_MAG = 10.0
TAU = 0.02  # seconds per step
X_THRESHOLD = 2.4
THETA_THRESHOLD = 12 * 2 * math.pi / 360  # 12 degrees, in radians
STATE_SIZE = 4


# ------------------------------------------------------------------ inputs


def initial_states(n: int, seed: int = 0) -> np.ndarray:
    """``n`` start states, uniform in [-0.05, 0.05) per component, float32 ``(n, 4)``."""
    _check_n(n)
    rng = np.random.default_rng(seed)
    return rng.uniform(-0.05, 0.05, size=(n, STATE_SIZE)).astype(np.float32)


def random_actions(n: int, seed: int = 0, steps: int | None = None) -> np.ndarray:
    """Random 0/1 actions, int32: ``(n,)``, or ``(steps, n)`` when ``steps`` is given."""
    _check_n(n)
    shape: tuple[int, ...] = (n,)
    if steps is not None:
        if not isinstance(steps, int) or steps < 1:
            raise ValueError(
                f"random_actions: steps must be a positive int, got {steps!r}"
            )
        shape = (steps, n)
    return np.random.default_rng([seed, 1]).integers(0, 2, size=shape).astype(np.int32)


def _check_n(n: int) -> None:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(
            f"n (the number of environments) must be a positive int, got {n!r}"
        )


def _check_single(state: Any, fn: str) -> None:
    if tuple(state.shape) != (STATE_SIZE,):
        raise ValueError(
            f"{fn}: state must have shape (4,) for one environment, got {tuple(state.shape)}; "
            f"batch with vmap or use {fn}_batch for (n, 4) states"
        )


def _check_batch(states: Any, actions: Any, fn: str) -> None:
    if len(states.shape) != 2 or states.shape[1] != STATE_SIZE:
        raise ValueError(
            f"{fn}: states must have shape (n, 4), got {tuple(states.shape)}"
        )
    if tuple(actions.shape) != (states.shape[0],):
        raise ValueError(
            f"{fn}: actions must have shape ({states.shape[0]},) to match states, "
            f"got {tuple(actions.shape)}"
        )


# ------------------------------------------------------------------ physics


def physics(x, x_dot, theta, theta_dot, force, sin, cos):
    """One Euler step of the four components, shared by every framework (one arithmetic order)."""
    costheta = cos(theta)
    sintheta = sin(theta)
    temp = (force + POLE_MASS_LENGTH * theta_dot * theta_dot * sintheta) / TOTAL_MASS
    thetaacc = (GRAVITY * sintheta - costheta * temp) / (
        HALF_LENGTH * (4.0 / 3.0 - MASS_POLE * costheta * costheta / TOTAL_MASS)
    )
    xacc = temp - POLE_MASS_LENGTH * thetaacc * costheta / TOTAL_MASS
    return (
        x + TAU * x_dot,
        x_dot + TAU * xacc,
        theta + TAU * theta_dot,
        theta_dot + TAU * thetaacc,
    )


def terminated(x, theta):
    """Whether the cart left the track or the pole fell past 12 degrees (elementwise)."""
    return (
        (x < -X_THRESHOLD)
        | (x > X_THRESHOLD)
        | (theta < -THETA_THRESHOLD)
        | (theta > THETA_THRESHOLD)
    )


def numpy_step(
    states: np.ndarray, actions: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Float64 reference step for states ``(..., 4)`` and actions ``(...)``."""
    states = np.asarray(states, dtype=np.float64)
    actions = np.asarray(actions)
    if states.shape[-1:] != (STATE_SIZE,) or actions.shape != states.shape[:-1]:
        raise ValueError(
            f"numpy_step: states must be (..., 4) and actions (...); got states "
            f"{states.shape} and actions {actions.shape}"
        )
    force = np.where(actions == 1, FORCE_MAG, -FORCE_MAG)
    parts = physics(*np.moveaxis(states, -1, 0), force, np.sin, np.cos)
    nxt = np.stack(parts, axis=-1)
    done = terminated(nxt[..., 0], nxt[..., 2])
    return nxt, np.where(done, 0.0, 1.0), done


# ------------------------------------------------------------------ JAX


def jax_step(state, action):
    """One environment: ``state`` (4,), scalar ``action`` -> (next_state, reward, done)."""
    import jax.numpy as jnp

    _check_single(state, "jax_step")
    x, x_dot, theta, theta_dot = state
    force = jnp.where(action == 1, FORCE_MAG, -FORCE_MAG)
    nxt = jnp.stack(physics(x, x_dot, theta, theta_dot, force, jnp.sin, jnp.cos))
    done = terminated(nxt[0], nxt[2])
    return nxt, jnp.where(done, 0.0, 1.0), done


def jax_step_batch(states, actions):
    """Hand-batched: ``states`` (n, 4), ``actions`` (n,) -> (next_states, rewards, dones)."""
    import jax.numpy as jnp

    _check_batch(states, actions, "jax_step_batch")
    force = jnp.where(actions == 1, FORCE_MAG, -FORCE_MAG)  # (n,)
    cols = (states[:, 0], states[:, 1], states[:, 2], states[:, 3])
    nxt = jnp.stack(physics(*cols, force, jnp.sin, jnp.cos), axis=1)  # (n, 4)
    done = terminated(nxt[:, 0], nxt[:, 2])
    return nxt, jnp.where(done, 0.0, 1.0), done


def jax_loop(states, actions):
    """A Python loop over environments, each stepped by ``jax.jit(jax_step)``.

    ``states`` and ``actions`` are arrays (iterated row by row) or lists of rows.
    The per-environment results are gathered on the host into NumPy arrays, as
    vectorised-environment wrappers do: ``jnp.stack`` of a thousand arrays
    would compile a thousand-input concatenation first (about a second on a CPU).
    """
    import jax

    step = _jax_jitted_step()
    outs = [step(s, a) for s, a in zip(states, actions, strict=True)]
    if not outs:
        raise ValueError("jax_loop: states is empty")
    host = jax.device_get(outs)
    return tuple(np.stack(parts) for parts in zip(*host, strict=True))


_JAX_STEP: Callable | None = None


def _jax_jitted_step() -> Callable:
    """``jax.jit(jax_step)``, made once so the loop reuses one compiled program."""
    global _JAX_STEP
    if _JAX_STEP is None:
        import jax

        _JAX_STEP = jax.jit(jax_step)
    return _JAX_STEP


# ------------------------------------------------------------------ PyTorch


def torch_step(state, action):
    """One environment: ``state`` (4,), scalar ``action`` -> (next_state, reward, done)."""
    import torch

    _check_single(state, "torch_step")
    x, x_dot, theta, theta_dot = state.unbind(0)
    force = torch.where(action == 1, FORCE_MAG, -FORCE_MAG)
    nxt = torch.stack(physics(x, x_dot, theta, theta_dot, force, torch.sin, torch.cos))
    done = terminated(nxt[0], nxt[2])
    return nxt, torch.where(done, 0.0, 1.0), done


def torch_step_batch(states, actions):
    """Hand-batched: ``states`` (n, 4), ``actions`` (n,) -> (next_states, rewards, dones)."""
    import torch

    _check_batch(states, actions, "torch_step_batch")
    force = torch.where(actions == 1, FORCE_MAG, -FORCE_MAG)  # (n,)
    nxt = torch.stack(physics(*states.unbind(1), force, torch.sin, torch.cos), dim=1)
    done = terminated(nxt[:, 0], nxt[:, 2])
    return nxt, torch.where(done, 0.0, 1.0), done


def torch_loop(states, actions):
    """A Python loop over environments, each stepped by ``torch_step``; stacked.

    ``states`` and ``actions`` are tensors (iterated row by row) or lists of rows.
    """
    import torch

    outs = [torch_step(s, a) for s, a in zip(states, actions, strict=True)]
    if not outs:
        raise ValueError("torch_loop: states is empty")
    return tuple(torch.stack(parts) for parts in zip(*outs, strict=True))


# ------------------------------------------------------------------ benchmarks


def fps_variants(
    n: int, seed: int = 0, torch_device: Any = None
) -> dict[str, Callable[[], tuple]]:
    """Zero-argument callables that each step the same ``n`` environments once.

    Keys: ``"PyTorch loop"``, ``"PyTorch torch.func.vmap"``, ``"PyTorch hand-batched"``,
    ``"JAX loop (jit step)"``, ``"JAX vmap + jit"``, ``"JAX hand-batched + jit"``.
    Loops receive their inputs already split into per-environment rows, so the
    timing measures stepping, not slicing. Environment steps per second is
    ``n / seconds per call``. PyTorch's tensors live on ``torch_device``
    (default: the CPU); JAX uses its default device.
    """
    import jax
    import jax.numpy as jnp
    import torch

    states = initial_states(n, seed)
    actions = random_actions(n, seed)
    S_t = torch.from_numpy(states).to(torch_device or "cpu")
    A_t = torch.from_numpy(actions).to(torch_device or "cpu")
    S_j, A_j = jnp.asarray(states), jnp.asarray(actions)
    rows_t, acts_t = list(S_t.unbind(0)), list(A_t.unbind(0))
    rows_j = [jnp.asarray(s) for s in states]
    acts_j = [jnp.asarray(a) for a in actions]
    torch_vmap = torch.func.vmap(torch_step)
    jax_vmap = jax.jit(jax.vmap(jax_step))
    jax_batch = jax.jit(jax_step_batch)
    return {
        "PyTorch loop": lambda: torch_loop(rows_t, acts_t),
        "PyTorch torch.func.vmap": lambda: torch_vmap(S_t, A_t),
        "PyTorch hand-batched": lambda: torch_step_batch(S_t, A_t),
        "JAX loop (jit step)": lambda: jax_loop(rows_j, acts_j),
        "JAX vmap + jit": lambda: jax_vmap(S_j, A_j),
        "JAX hand-batched + jit": lambda: jax_batch(S_j, A_j),
    }
