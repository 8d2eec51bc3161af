# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-nbgrader
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 03 · Exercises: JIT compilation
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/03_jit_compilation_exercises.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/03_jit_compilation_exercises.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=solutions/03_jit_compilation_exercises.ipynb)
#
# Five exercises on lesson 03: control flow that compiles, a recompilation removed in each
# framework, a batched simulation with `vmap` in both, and a K-means step that never loses a
# cluster. Replace each `raise NotImplementedError()` with your code, then run the check cell
# below it. It prints "passed", names what is wrong, or says "not implemented yet".

# %%
# Setup: where the course helpers are missing (Colab, Kaggle, a bare Jupyter),
# install them, keeping the runtime's own torch and jax. Elsewhere: nothing to do.
import importlib
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("course_utils") is None:
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "jax-pytorch-side-by-side @ git+https://github.com/jax-pytorch-side-by-side/course@v0.1.0"],
        check=True,
    )
    importlib.invalidate_caches()
    from course_utils import hosted

    hosted.install_dependencies()

# %% tags=["parameters"]
SMOKE = None  # None: follow COURSE_SMOKE; papermill: -p SMOKE True
SIZES = {  # name: (full, smoke)
    "n_envs": (256, 64),  # environments in the vmap exercise
    "horizon": (100, 50),  # steps per rollout
    "n_points": (2000, 400),  # K-means points
}

# %%
from course_utils import env

SETUP = env.setup(one_kind=True)  # first: JAX's memory policy, JAX first, float32 in both,
# and one device kind for both frameworks

import re
import types

import jax
import jax.numpy as jnp
import numpy as np
import torch

from course_utils import cartpole, config, kmeans, timing
from course_utils.exercises import check
from course_utils.expect import expect_error
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)


def by_error(*rules):
    """A crash hint chosen by the error: the first (pattern, hint) whose pattern is found in
    "ErrorType: message" ('' matches any error)."""

    def hint(err):
        text = f"{type(err).__name__}: {err}"
        return next((h for pattern, h in rules if re.search(pattern, text)), "")

    return hint


def naming_slips(fn, *slips):
    """fn, whose answer is first read for known slips: the first (shows, text) whose
    shows(answer) is true fails the check with that text."""

    def run():
        got = fn()
        for shows, text in slips:
            if shows(got):
                raise AssertionError(text)
        return got

    return run


# %% [markdown]
# ## Exercise 1 · Control flow that compiles: `lax.while_loop` and `lax.cond`
#
# The Collatz map sends `n` to `n / 2` when `n` is even and to `3n + 1` when it is odd.
# `collatz_steps(n)` counts the steps until `n` reaches 1 (`collatz_steps(1) == 0`,
# `collatz_steps(6) == 8`). The Python version below loops and branches on the value of `n`,
# so `jax.jit` cannot trace it. Write a version that works under `jax.jit` **and** `jax.vmap`:
# a `lax.while_loop` whose carry is `(n, steps)`, with `lax.cond` (or `jnp.where`) choosing the
# update. About 8 lines.

# %%
def collatz_steps_python(n: int) -> int:
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


# %%
# EXERCISE: collatz
def collatz_steps(n: jax.Array) -> jax.Array:
    """Steps (an integer) for the Collatz sequence from the int32 scalar n >= 1 to reach 1."""
    ### BEGIN SOLUTION
    def cond(carry):
        n, _ = carry
        return n != 1

    def body(carry):
        n, steps = carry
        n = jax.lax.cond(n % 2 == 0, lambda n: n // 2, lambda n: 3 * n + 1, n)
        return n, steps + 1

    return jax.lax.while_loop(cond, body, (n, jnp.zeros_like(n)))[1]
    ### END SOLUTION


# %%
# TESTS: collatz points=2
collatz_jit = jax.jit(collatz_steps)
collatz_crash = by_error(
    ("TracerBoolConversionError", "JAX: a Python `while` or `if` tests n. Under jit n is a tracer, "
     "with a shape and a dtype but no value, so Python has nothing to decide with"),
    ("ConcretizationTypeError", "JAX: int(n) or float(n) asks a tracer for its number, which it does "
     "not have under jit"),
    (r"carry\[1\]", "JAX: the count changes dtype in the loop: it starts as an integer and grows "
     "by a float (1.0), or the reverse"),
    ("equal output types|carry input and carry output", "JAX: `n / 2` is true division: it turns "
     "the int32 n into a float32, so the two branches, or n before and after a step, disagree in dtype"),
    ("should be callable", "JAX: lax.cond was given the two results, as jnp.where takes them; "
     "lax.cond takes two functions and the operand to call the chosen one with"),
    ("", "JAX: under jit n is a tracer; the error names the operation that needed its value"),
)


def _counts(got):
    return [int(np.asarray(g).item()) if np.size(g) == 1 else None for g in got]


check(
    "collatz",
    naming_slips(
        lambda: [collatz_jit(jnp.int32(n)) for n in (1, 2)],
        (lambda got: _counts(got) == [1, 1], "collatz_steps returns the final n, which is always 1, "
         "not the count of steps"),
        (lambda got: _counts(got) == [1, 2], "each count is one too high: n = 1 is already the end "
         "(0 steps)"),
        (lambda got: _counts(got) == [1, 0], "the loop's test is the wrong way round: lax.while_loop "
         "runs its body while cond returns True, so cond says when to go on, not when to stop"),
        (lambda got: _counts(got)[0] == 0 and (_counts(got)[1] or 0) > 1, "n = 2 took more than one "
         "step: lax.cond runs its first function when the predicate is true. Which one runs for an "
         "even n?"),
    ),
    [0, 1],
    hint="n = 1 is already the end (0 steps), and n = 2 is one halving away (1 step)",
    crash_hint=collatz_crash,
)
check(
    "collatz",
    lambda: [collatz_jit(jnp.int32(n)) for n in (1, 6, 27)],
    [collatz_steps_python(n) for n in (1, 6, 27)],
    hint="n = 1 and 2 are right, longer sequences are not: the steps your loop takes are not those "
    "of the Collatz map. Compare each update with collatz_steps_python's",
)


def _count_is_an_integer():
    steps = collatz_jit(jnp.int32(6))
    assert jnp.issubdtype(steps.dtype, jnp.integer), (
        f"collatz_steps returned its count as {steps.dtype}, not as an integer")


check("collatz", _count_is_an_integer,
      hint="a count of steps is a whole number, like n: your count started from a float (0.0) "
           "or grew by a float (1.0)")

# %%
# HIDDEN TESTS: collatz points=3
### BEGIN HIDDEN TESTS
ns = np.arange(1, 200, dtype=np.int32)
expected = np.array([collatz_steps_python(int(n)) for n in ns])
np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(collatz_steps))(jnp.asarray(ns))), expected)
one, other = jnp.int32(97), jnp.int32(871)
collatz_hidden = jax.jit(collatz_steps)
collatz_hidden(one)
with timing.no_recompile("collatz for a new n"):  # the value of n must not be static
    assert int(collatz_hidden(other)) == collatz_steps_python(871)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2 · Remove a recompilation in JAX: pad and mask
#
# Batches of a data set rarely divide evenly; the last one is short. Padding every batch to the
# same size fixes the shapes, but the loss must ignore the padding. The version below takes the
# number of real rows as a **static** argument, so each new count compiles again, as the cell
# below shows. Write `masked_mse(w, X, y, n_valid)` with `n_valid` traced: the mean of
# `(X @ w - y)²` over the first `n_valid` rows only, using a mask built from
# `jnp.arange(len(y)) < n_valid`. About 3 lines.

# %%
from functools import partial


@partial(jax.jit, static_argnames="n_valid")
def sliced_mse(w, X, y, n_valid):
    Xv, yv = X[:n_valid], y[:n_valid]  # a slice needs a static length
    return jnp.mean((Xv @ w - yv) ** 2)


rng = np.random.default_rng(0)
X_pad = rng.standard_normal((32, 5), dtype=np.float32)
y_pad = rng.standard_normal(32, dtype=np.float32)
w_lin = rng.standard_normal(5, dtype=np.float32)
counts = [32, 32, 17, 9]  # rows that are real in each (padded) batch


def numpy_mse(n_valid):
    err = X_pad[:n_valid].astype(np.float64) @ w_lin - y_pad[:n_valid]
    return np.mean(err**2)


sliced_mse(w_lin, X_pad, y_pad, n_valid=32)
with expect_error(timing.RecompilationError), timing.no_recompile("the batches"):
    for n in counts:
        sliced_mse(w_lin, X_pad, y_pad, n_valid=n)


# %%
# EXERCISE: masked-mse
@jax.jit
def masked_mse(w: jax.Array, X: jax.Array, y: jax.Array, n_valid: jax.Array) -> jax.Array:
    """Mean squared error of X @ w against y over the first n_valid rows (n_valid is traced)."""
    ### BEGIN SOLUTION
    mask = jnp.arange(y.shape[0]) < n_valid
    err = jnp.where(mask, X @ w - y, 0.0)
    return jnp.sum(err**2) / n_valid
    ### END SOLUTION


# %%
# TESTS: masked-mse points=2
Xj, yj, wj = jnp.asarray(X_pad), jnp.asarray(y_pad), jnp.asarray(w_lin)
n_arrays = [jnp.int32(n) for n in counts]


def _masked_mse_check():
    masked_mse(wj, Xj, yj, n_arrays[0])  # warm-up: the only compilation allowed
    with timing.no_recompile("the batches"):
        return [masked_mse(wj, Xj, yj, n) for n in n_arrays]


def _squared(n):
    """The sum of the first n rows' squared errors, in float64."""
    return np.sum((X_pad[:n].astype(np.float64) @ w_lin - y_pad[:n]) ** 2)


def _like(values):
    """Whether an answer equals these values (one per batch)."""

    def shows(got):
        try:
            got = np.asarray(got, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            return False
        return got.shape == (len(values),) and np.allclose(got, values, rtol=1e-4)

    return shows


check(
    "masked-mse",
    naming_slips(
        _masked_mse_check,
        (_like([_squared(n) / len(y_pad) for n in counts]), "the sum is divided by len(y), not by "
         "n_valid: padding rows must not count in the mean"),
        (_like([_squared(n) for n in counts]), "the squared errors are summed, not averaged over the "
         "n_valid real rows"),
        (_like([_squared(min(n + 1, len(y_pad))) / n for n in counts]), "the mask keeps one padding row "
         "too many: rows 0 to n_valid - 1 are real, row n_valid is padding"),
    ),
    [numpy_mse(n) for n in counts],
    rtol=1e-5,
    atol=1e-6,
    hint="the mean runs over the first n_valid rows only; padding rows count for nothing",
    crash_hint=by_error(
        ("RecompilationError", "JAX: every new n_valid compiled again. Removing @jax.jit to read "
         "int(n_valid) trades the error for what the exercise removes: eagerly, each new length "
         "compiles its own slice"),
        # jax 0.7 words it "Array slice indices must have static start/stop/step"
        ("Slice entries must be static|slice indices must have static", "JAX: under jit a slice's "
         "length must be static, and n_valid is traced"),
        ("NonConcreteBooleanIndexError", "JAX: a boolean mask as an index (X[mask], PyTorch's way) "
         "keeps as many rows as the data says, a shape one compiled program cannot hold"),
        ("immutable", "JAX: an item assignment (`err[...] = 0.0`, PyTorch's way) fails: JAX arrays "
         "are immutable, so the masked errors must be a new array"),
        ("Incompatible shapes for broadcasting", "JAX: the mask's shape does not match the errors': "
         "it needs one entry per row of X, not one per column"),
        ("ConcretizationTypeError", "JAX: float() or int() asks a traced value for its number, which "
         "it does not have under jit: return the array"),
        ("", "JAX: under jit n_valid is a tracer; every shape must stay the same whatever its value"),
    ),
)

# %%
# HIDDEN TESTS: masked-mse points=3
### BEGIN HIDDEN TESTS
for n in (1, 5, 31):
    assert_close(masked_mse(wj, Xj, yj, jnp.int32(n)), numpy_mse(n), rtol=1e-5, atol=1e-6, name=f"n_valid={n}")
# Padding rows hold garbage: they must not leak into the loss.
X_garbage = Xj.at[20:].set(1e6)
assert_close(masked_mse(wj, X_garbage, yj, jnp.int32(20)), numpy_mse(20), rtol=1e-5, atol=1e-6)
# The gradient, too, comes from the real rows only.
Xv, yv = X_pad[:20].astype(np.float64), y_pad[:20].astype(np.float64)
expected_grad = 2 * Xv.T @ (Xv @ w_lin - yv) / 20
assert_close(jax.grad(masked_mse)(wj, X_garbage, yj, jnp.int32(20)), expected_grad, rtol=1e-4, atol=1e-5, name="gradient")
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 3 · Remove a recompilation in PyTorch: the learning-rate schedule
#
# `train_step_c` is a compiled SGD step for linear regression. Dynamo specialises on a Python
# float, so a learning rate that changes every epoch makes it recompile. Write
# `train_torch(w, X, y, lrs)`: one call of `train_step_c` per learning rate in `lrs` (a list of
# Python floats), returning the final weights, **without any recompilation** after the warm-up
# call the check makes, whose learning rate is a 0-d float32 tensor. About 3 lines.
#
# The step is compiled with `backend="eager"`. Dynamo's guards decide recompilation before any
# backend runs, so the rules are the default backend's, only quicker to show.

# %%
def train_step(w, X, y, lr):
    grad = 2 * X.T @ (X @ w - y) / len(y)
    return w - lr * grad


train_step_c = torch.compile(train_step, backend="eager")
lrs = [0.1, 0.1, 0.05, 0.025]


def numpy_train(lrs):
    w = np.zeros(5)
    X, y = X_pad.astype(np.float64), y_pad.astype(np.float64)
    for lr in lrs:
        w = w - lr * 2 * X.T @ (X @ w - y) / len(y)
    return w


# %%
# EXERCISE: torch-schedule
def train_torch(w: torch.Tensor, X: torch.Tensor, y: torch.Tensor, lrs: list[float]) -> torch.Tensor:
    """Apply train_step_c once per learning rate; never recompile when the rate changes."""
    ### BEGIN SOLUTION
    for lr in lrs:
        w = train_step_c(w, X, y, torch.tensor(lr, dtype=w.dtype))
    return w
    ### END SOLUTION


# %%
# TESTS: torch-schedule points=2
import inspect

Xt, yt = torch.from_numpy(X_pad), torch.from_numpy(y_pad)


def _schedule_check():
    torch._dynamo.reset()  # forget earlier runs (Dynamo remembers what it made dynamic)
    compiled = globals()["train_step_c"]
    compiled(torch.zeros(5), Xt, yt, torch.tensor(0.3))  # warm-up with a tensor rate
    calls = []  # copies of the weights each call was given and of those it returned

    def counted(*args, **kwargs):  # as train_step_c takes them: w, X, y, lr by position or by name
        w_in = inspect.signature(train_step).bind(*args, **kwargs).arguments["w"]
        given = torch.as_tensor(w_in).clone()  # values: an answer may update its w in place later
        out = compiled(*args, **kwargs)
        calls.append((given, torch.as_tensor(out).clone()))
        return out

    globals()["train_step_c"] = counted
    try:
        with timing.no_recompile("the schedule"):
            w = train_torch(torch.zeros(5), Xt, yt, lrs)
    finally:
        globals()["train_step_c"] = compiled
    assert len(calls) == len(lrs), (
        f"train_torch called the compiled step train_step_c {len(calls)} times for {len(lrs)} rates")
    for i in range(1, len(calls)):
        assert torch.equal(calls[i][0], calls[i - 1][1]), (
            f"call {i + 1} of train_step_c was given weights {calls[i][0].tolist()}, not the weights call {i} "
            "returned: each step must start from the weights the step before returned")
    return w


check(
    "torch-schedule",
    _schedule_check,
    numpy_train(lrs),
    rtol=1e-5,
    atol=1e-6,
    hint="train_step_c, the compiled step, runs once per rate, each call on the weights the call "
    "before returned",
    crash_hint=by_error(
        (r"'lr' to be a tensor type.*'float'>", "PyTorch: the rate is a Python float, but the step was "
         "warmed up with a 0-d tensor rate, so Dynamo's guard on the argument's type fails and it "
         "compiles again"),
        (r"'lr' to be a tensor type", "PyTorch: the rate is a NumPy number, but the step was warmed up "
         "with a 0-d tensor rate, so Dynamo's guard on the argument's type fails and it compiles again"),
        ("dtype mismatch", "PyTorch: the rate's dtype differs from the warm-up rate's, a 0-d float32 "
         "tensor, which fails Dynamo's guard on the dtype"),
        ("rank mismatch|size mismatch", "PyTorch: the rate's shape differs from the warm-up rate's, a "
         "0-d tensor, which fails Dynamo's guard on the shape"),
        ("", "PyTorch: a rate differs from the warm-up's 0-d float32 tensor in type, shape or dtype, "
         "which fails Dynamo's guards"),
    ),
)

# %%
# HIDDEN TESTS: torch-schedule points=2
### BEGIN HIDDEN TESTS
other = [0.2, 0.01, 0.07, 0.13, 0.05]
torch._dynamo.reset()
train_step_c(torch.zeros(5), Xt, yt, torch.tensor(0.3))
with timing.no_recompile("another schedule"):
    got = train_torch(torch.zeros(5), Xt, yt, other)
assert_close(got, numpy_train(other), rtol=1e-5, atol=1e-6, name="weights")
assert got.dtype == torch.float32
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 4 · Batched simulation with `vmap`, in both frameworks
#
# Write a rollout of **one** CartPole environment over a sequence of actions, with
# `cartpole.jax_step` and `cartpole.torch_step` from lesson 03, section 8. Then batch it over
# many environments with `vmap`:
#
# - `rollout_jax(state, actions)`: `state` is `(4,)`, `actions` is `(T,)` int32. Step `T` times
#   with `lax.scan`. Return `(final_state, total_reward)`. The total sums the rewards **while
#   the episode is running**: the step that reports `done` still counts its reward, later steps
#   do not. The physics keeps going after `done`; there is no reset. `cartpole` pays 0 on the
#   step that ends an episode, but Gymnasium's CartPole pays 1 there. The check tries that too,
#   with a copy of `cartpole` whose steps pay 1. About 8 lines.
# - `rollout_torch(state, actions)`: the same in PyTorch, a Python loop over the actions with
#   `torch.where` instead of `if`, so that `torch.func.vmap` can batch it. About 7 lines.
# - `rollout_all_jax` / `rollout_all_torch`: `(n, 4)` states and `(n, T)` actions, by `vmap`.
#   One line each.

# %%
# EXERCISE: vmap-rollout
def rollout_jax(state: jax.Array, actions: jax.Array) -> tuple[jax.Array, jax.Array]:
    """One environment, T steps with lax.scan: (final_state (4,), total reward while running ())."""
    ### BEGIN SOLUTION
    def body(carry, action):
        s, alive, total = carry
        s, reward, done = cartpole.jax_step(s, action)
        total = total + jnp.where(alive, reward, 0.0)
        return (s, alive & ~done, total), None

    init = (state, jnp.asarray(True), jnp.zeros((), state.dtype))
    (s, _, total), _ = jax.lax.scan(body, init, actions)
    return s, total
    ### END SOLUTION


def rollout_torch(state: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same rollout in PyTorch: a Python loop over actions, torch.where instead of if."""
    ### BEGIN SOLUTION
    s, alive, total = state, torch.tensor(True), torch.zeros((), dtype=state.dtype)
    for action in actions:
        s, reward, done = cartpole.torch_step(s, action)
        total = total + torch.where(alive, reward, 0.0)
        alive = alive & ~done
    return s, total
    ### END SOLUTION


def rollout_all_jax(states: jax.Array, actions: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(n, 4) states, (n, T) actions -> ((n, 4) final states, (n,) totals), via jax.vmap."""
    ### BEGIN SOLUTION
    return jax.vmap(rollout_jax)(states, actions)
    ### END SOLUTION


def rollout_all_torch(states: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(n, 4) states, (n, T) actions -> ((n, 4) final states, (n,) totals), via torch.func.vmap."""
    ### BEGIN SOLUTION
    return torch.func.vmap(rollout_torch)(states, actions)
    ### END SOLUTION


# %%
# TESTS: vmap-rollout points=3
states_np = cartpole.initial_states(S.n_envs, seed=1)
actions_np = cartpole.random_actions(S.n_envs, seed=1, steps=S.horizon).T.copy()  # (n, T)


def numpy_rollouts(states, actions, paid_on_done=False):
    """Float64 reference, all environments at once; paid_on_done: every step pays 1."""
    s, alive, total = states.astype(np.float64), np.ones(len(states), bool), np.zeros(len(states))
    for a in actions.T:
        s, reward, done = cartpole.numpy_step(s, a)
        total += np.where(alive, np.ones_like(reward) if paid_on_done else reward, 0.0)
        alive &= ~done
    return s, total


def _paying_on_done(rollout):
    """rollout's totals with `cartpole` swapped for a copy whose every step pays 1, done or not."""
    real = globals()["cartpole"]

    def pay(step):
        return lambda s, a: (lambda nxt, reward, done: (nxt, reward * 0 + 1, done))(*step(s, a))

    globals()["cartpole"] = types.SimpleNamespace(jax_step=pay(real.jax_step), torch_step=pay(real.torch_step))
    jax.clear_caches()  # traces made with the real cartpole must not be reused
    try:
        return rollout()[1]
    finally:
        globals()["cartpole"] = real
        jax.clear_caches()


expected_states, expected_totals = numpy_rollouts(states_np, actions_np)
_, paid_totals = numpy_rollouts(states_np, actions_np, paid_on_done=True)
assert (paid_totals < S.horizon).sum() > S.n_envs // 2  # most episodes end within the horizon


def _jax_rollouts():  # a new function to jit each time: no trace is reused
    return jax.jit(lambda s, a: rollout_all_jax(s, a))(jnp.asarray(states_np), jnp.asarray(actions_np))


def _torch_rollouts():
    return rollout_all_torch(torch.from_numpy(states_np), torch.from_numpy(actions_np))


_jax_crash = by_error(
    ("TracerBoolConversionError", "JAX: a Python `if`, `and`, `or` or `not` tests a traced value, "
     "which has no True or False under jit and vmap: it stands for every environment at once"),
    ("unexpected keyword argument 'in_dims'", "JAX: jax.vmap was given torch.func.vmap's keyword "
     "`in_dims`, which JAX spells in_axes"),
    ("scan body output must be a pair", "JAX: the lax.scan body returned the new carry alone, where "
     "scan needs a pair: the carry and this step's output (None when there is none)"),
    ("values to unpack", "JAX: lax.scan's result was unpacked as if it were the carry: scan returns "
     "a pair too, the final carry and the stacked outputs"),
    ("does not accept dtype float", "JAX: alive started as a number (jnp.ones(()), 1.0) where `&` and "
     "jnp.where need a boolean"),
    ("inconsistent sizes for array axes", "JAX: vmap maps the actions along another axis than the "
     "states (in_axes=(0, 1), or the actions transposed): states (n, 4) and actions (n, T) both hold "
     "the environments on axis 0"),
    ("", "JAX: under jit and vmap each value is a tracer that stands for every environment at once"),
)
_torch_crash = by_error(
    ("data-dependent control flow", "PyTorch: torch.func.vmap cannot batch a Python `if`, `break`, "
     "`and`, `or` or `not` on a tensor: each environment in the batch could take another branch"),
    ("doesn't match the broadcast shape", "PyTorch: an in-place update (`+=`, `&=`, `add_`) writes a "
     "batched value into a tensor the function made itself, which vmap leaves unbatched: one value "
     "cannot hold every environment's"),
    (r"where\(\) received an invalid combination", "PyTorch: torch.where got a Python bool as its "
     "condition: jnp.where takes one, torch.where needs a tensor"),
    ("condition to be a boolean tensor", "PyTorch: alive started as torch.ones(()) or 1.0, and "
     "torch.where's condition must be a boolean tensor"),
    ("same size in the mapped dimension", "PyTorch: torch.func.vmap maps the actions along another "
     "dimension than the states (in_dims=(0, 1), or the actions transposed): states (n, 4) and "
     "actions (n, T) both hold the environments on dimension 0"),
    ("", "PyTorch: under torch.func.vmap each tensor stands for every environment at once"),
)
_state_hint = ("return the state after all T steps, each step taken from the state the step before "
               "returned, not from the initial one: the environment keeps stepping after done")
check("vmap-rollout", lambda: jax.jit(rollout_all_jax)(jnp.asarray(states_np), jnp.asarray(actions_np))[0],
      expected_states, rtol=1e-4, atol=1e-5, hint="JAX: " + _state_hint, crash_hint=_jax_crash)
check("vmap-rollout", lambda: rollout_all_torch(torch.from_numpy(states_np), torch.from_numpy(actions_np))[0],
      expected_states, rtol=1e-4, atol=1e-5, hint="PyTorch: " + _state_hint, crash_hint=_torch_crash)


def _totals_shape(rollouts, framework, zeros, carry=""):
    """The batch of totals is (n,) numbers: one 0-d total per environment."""
    totals = rollouts()[1]
    assert np.ndim(totals) == 1, (
        f"{framework}: each environment's total is one 0-d number ({zeros}(()), not {zeros}(1)), "
        "so the batch of totals is (n,)")
    assert np.asarray(totals).dtype != bool, (
        f"{framework}: the rollout returns two things, the final state and the total{carry}")


check("vmap-rollout", lambda: _totals_shape(_jax_rollouts, "JAX", "jnp.zeros", ", not lax.scan's whole carry"),
      crash_hint=_jax_crash)
check("vmap-rollout", lambda: _totals_shape(_torch_rollouts, "PyTorch", "torch.zeros"), crash_hint=_torch_crash)
_alive_hint = ("a reward counts only while the environment is alive: once a step reports done, later "
               "rewards count for nothing, even where a later step's done is False again, so alive must "
               "remember every earlier done")
check("vmap-rollout", lambda: _jax_rollouts()[1], expected_totals, hint="JAX: " + _alive_hint, crash_hint=_jax_crash)
check("vmap-rollout", lambda: _torch_rollouts()[1], expected_totals, hint="PyTorch: " + _alive_hint,
      crash_hint=_torch_crash)
_order_hint = ("with a reward paid on the step that reports done, that step's reward is lost: alive turns off "
               "before the step that ended the episode has added its reward, not after")
check("vmap-rollout", lambda: _paying_on_done(_jax_rollouts), paid_totals, hint="JAX: " + _order_hint)
check("vmap-rollout", lambda: _paying_on_done(_torch_rollouts), paid_totals, hint="PyTorch: " + _order_hint)


def _jaxpr_growth():
    """How many equations rollout_jax's jaxpr gains from 5 actions to 10 (0: the loop is not unrolled)."""
    state = jnp.asarray(states_np[0])
    sizes = [len(jax.make_jaxpr(rollout_jax)(state, jnp.asarray(actions_np[0, :t])).eqns) for t in (5, 10)]
    return sizes[1] - sizes[0]


check("vmap-rollout", _jaxpr_growth, 0,
      hint="JAX: rollout_jax's program grows with the number of actions: a Python loop over them is unrolled "
           "while tracing, one copy of the step per action (Dynamo does the same, lesson 03, 5.3), where "
           "lax.scan traces the step once for any T")

# %%
# HIDDEN TESTS: vmap-rollout points=4
### BEGIN HIDDEN TESTS
S_j, A_j = jnp.asarray(states_np), jnp.asarray(actions_np)
S_t, A_t = torch.from_numpy(states_np), torch.from_numpy(actions_np)
batched_j = jax.jit(rollout_all_jax)(S_j, A_j)
batched_t = rollout_all_torch(S_t, A_t)
assert batched_j[0].shape == (S.n_envs, 4) and batched_j[1].shape == (S.n_envs,)
assert_close(batched_j, (expected_states, expected_totals), rtol=1e-3, atol=1e-3, name="JAX vs float64")
assert_close(batched_t, (expected_states, expected_totals), rtol=1e-3, atol=1e-3, name="PyTorch vs float64")
# vmap equals the loop over environments, in each framework.
few = range(0, S.n_envs, max(1, S.n_envs // 8))
single_jit = jax.jit(rollout_jax)
loop_j = [single_jit(S_j[i], A_j[i]) for i in few]
loop_t = [rollout_torch(S_t[i], A_t[i]) for i in few]
assert_close([(batched_j[0][i], batched_j[1][i]) for i in few], loop_j, rtol=1e-5, atol=1e-5, name="JAX vmap vs loop")
assert_close([(batched_t[0][i], batched_t[1][i]) for i in few], loop_t, rtol=1e-5, atol=1e-5, name="PyTorch vmap vs loop")
assert_close(batched_j[1], batched_t[1], name="totals across frameworks")
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 5 · A K-means step that never loses a cluster, compiled in both frameworks
#
# The lesson's step leaves a centroid that wins no point where it is: it never wins one
# again, and the run ends with fewer clusters than it was asked for. The usual repair moves
# each empty centroid to a point that the current centroids serve worst. Write that step,
# `kmeans_step_jax(X, C)` and `kmeans_step_torch(X, C)`, for points `X` `(n, d)` and
# centroids `C` `(k, d)`:
#
# 1. label each point with its nearest centroid (squared Euclidean distance, `argmin`), and
#    keep that smallest distance, `d_near` `(n,)`;
# 2. move each centroid that has points to their mean;
# 3. move the empty centroids, in the order of their index, to the points with the largest
#    `d_near`: the first empty centroid to the farthest point, the second to the next
#    farthest, and so on (`jax.lax.top_k` / `torch.topk` give the farthest points in order; a
#    running count of the empty centroids, `cumsum`, says which one each empty centroid takes);
# 4. return `(new_C, labels)`.
#
# The check runs `jax.jit(kmeans_step_jax)` to convergence on one compiled program, so in JAX
# no shape may depend on the data. `torch.compile(kmeans_step_torch, fullgraph=True)` must
# capture the whole step as one graph: a Python `if` on a tensor's value is a graph break, and
# `fullgraph=True` turns it into an error. About 10 lines each.
#
# <details><summary>Which PyTorch versions break the graph at <code>nonzero</code></summary>
# An operation whose output shape depends on the data, such as <code>nonzero</code>, is a graph
# break up to torch 2.9. Since torch 2.10, <code>fullgraph=True</code> lets Dynamo record it.
# </details>

# %%
# EXERCISE: kmeans-step
def kmeans_step_jax(X: jax.Array, C: jax.Array) -> tuple[jax.Array, jax.Array]:
    """One K-means iteration in which empty centroids take the farthest points: (new C (k, d), labels (n,))."""
    ### BEGIN SOLUTION
    d2 = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)  # (n, k)
    labels = jnp.argmin(d2, axis=1)
    k = C.shape[0]
    counts = jax.ops.segment_sum(jnp.ones(X.shape[0], X.dtype), labels, num_segments=k)
    sums = jax.ops.segment_sum(X, labels, num_segments=k)  # (k, d)
    means = sums / jnp.maximum(counts, 1)[:, None]
    empty = counts == 0
    farthest = jax.lax.top_k(d2.min(axis=1), k)[1]  # (k,) point indices, farthest first
    rank = jnp.maximum(jnp.cumsum(empty) - 1, 0)  # the j-th empty centroid takes the j-th farthest
    return jnp.where(empty[:, None], X[farthest[rank]], means), labels
    ### END SOLUTION


def kmeans_step_torch(X: torch.Tensor, C: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same step in PyTorch, one graph under torch.compile(fullgraph=True)."""
    ### BEGIN SOLUTION
    d2 = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)  # (n, k)
    labels = d2.argmin(dim=1)
    counts = torch.zeros_like(C[:, 0]).index_add_(0, labels, torch.ones_like(X[:, 0]))
    sums = torch.zeros_like(C).index_add_(0, labels, X)
    means = sums / counts.clamp(min=1)[:, None]
    empty = counts == 0
    farthest = d2.min(dim=1).values.topk(C.shape[0]).indices
    rank = (empty.cumsum(0) - 1).clamp(min=0)
    return torch.where(empty[:, None], X[farthest[rank]], means), labels
    ### END SOLUTION


# %%
# TESTS: kmeans-step points=3
import torch._dynamo  # its errors: what fullgraph=True raises at a graph break

X_km, _ = kmeans.make_blobs(S.n_points, 4, seed=3)
C0_km = kmeans.initial_centroids(X_km, 4, seed=3)
reference = kmeans.numpy_kmeans(X_km, C0_km, tol=1e-5, max_iter=50)
C_empty = np.vstack([C0_km, [[40.0, 40.0], [-40.0, 40.0]]]).astype(np.float32)  # two far centroids: empty
d_near = ((X_km[:, None, :].astype(np.float64) - C_empty[None]) ** 2).sum(-1).min(axis=1)
farthest_two = np.argsort(-d_near)[:2]


def run_compiled(step, X, C, tol=1e-5, max_iter=50):
    new, labels = step(X, C)  # the one compilation
    shift, C, iterations = float(abs(new - C).max()), new, 1
    with timing.no_recompile("the K-means loop"):
        while shift > tol and iterations < max_iter:
            new, labels = step(X, C)
            shift, C, iterations = float(abs(new - C).max()), new, iterations + 1
    return C, labels, iterations


def _empty_centroids_move(step, framework, to):
    new, labels = step(to(X_km), to(C_empty))
    new = np.asarray(new)
    for j, point, which in ((4, farthest_two[0], "farthest"), (5, farthest_two[1], "second farthest")):
        assert np.array_equal(new[j], X_km[point]), (
            f"{framework}: centroid {j} had no points: it should move to point {point} (the {which} from "
            f"its nearest centroid), not to {new[j]}")
    ref_new, ref_labels = kmeans.numpy_step(X_km, C_empty)
    assert_close((new[:4], labels), (ref_new[:4], ref_labels), rtol=1e-5, atol=1e-5,
                 name=f"{framework}: labels, and centroids that have points")


def _jax_step():
    step = jax.jit(kmeans_step_jax)
    _empty_centroids_move(step, "JAX", jnp.asarray)
    return run_compiled(step, jnp.asarray(X_km), jnp.asarray(C0_km))


def _torch_step():
    kmeans_step_torch(torch.from_numpy(X_km), torch.from_numpy(C0_km))  # eager once: errors read plainly
    step = torch.compile(kmeans_step_torch, fullgraph=True, dynamic=False, backend="eager")
    try:
        _empty_centroids_move(step, "PyTorch", torch.from_numpy)
    except (torch._dynamo.exc.Unsupported, torch._dynamo.exc.UserError) as err:
        raise AssertionError(f"PyTorch: torch.compile(fullgraph=True) found a graph break in kmeans_step_torch: "
                             f"{str(err).strip().splitlines()[0]}") from None
    return run_compiled(step, torch.from_numpy(X_km), torch.from_numpy(C0_km))


expected_run = (reference.centroids, reference.labels, reference.n_iter)
_wrong_axis = ("the labels have one entry per centroid, not one per point: the argmin ran along the "
               "points' axis of the (n, k) distances")
check("kmeans-step", _jax_step, expected_run, rtol=1e-5, atol=1e-5,
      hint="JAX: the j-th empty centroid takes the j-th farthest point from its nearest centroid",
      crash_hint=by_error(
          ("TracerBoolConversionError", "JAX: a Python `if` on a traced value cannot choose a branch: "
           "under jit it has a shape and a dtype, no value"),
          ("nonzero", "JAX: jnp.nonzero gives a shape that depends on the data, which one compiled "
           "program cannot hold"),
          ("bincount", "JAX: jnp.bincount without a static `length` gives a shape that depends on the data"),
          ("NonConcreteBooleanIndexError", "JAX: a boolean mask as an index (X[labels == j]) keeps as "
           "many points as the data says: boolean indices must be concrete under jit"),
          ("immutable", "JAX: an in-place update (`counts[labels] += 1`, PyTorch's index_add_) fails "
           "because JAX arrays are immutable: an .at[] update or jax.ops.segment_sum returns a new array"),
          ("Indexer must have integer", "JAX: an index is a float array. jax.lax.top_k returns "
           "(values, indices), in that order, and the running count of empty centroids must stay "
           "an integer"),
          # segment_sum broadcasts the labels to one per point; jax 0.7 words it "Incompatible shapes
          # for broadcasting: (n,) and requested shape (k,)", which the rule below must not take
          (r"Incompatible types for broadcasting|Incompatible shapes for broadcasting: \(\d+,\) and "
           r"requested shape \(\d+,\)", "JAX: " + _wrong_axis),
          ("Incompatible shapes for broadcasting", "JAX: a (k,) condition in jnp.where against (k, d) "
           "arrays fails to broadcast: broadcasting lines up the last axes, so the condition's k meets d"),
          ("", "JAX: under jit every value is a tracer, and no shape may depend on the data"),
      ))
check("kmeans-step", _torch_step, expected_run, rtol=1e-5, atol=1e-5,
      hint="PyTorch: the j-th empty centroid takes the j-th farthest point from its nearest centroid",
      crash_hint=by_error(
          ("return_types|single element can be converted to an index", "PyTorch: a reduction along a "
           "dimension (d2.min(dim=1)) and topk return a (values, indices) pair, not a tensor as "
           "jnp.min does"),
          ("Number of indices", "PyTorch: " + _wrong_axis),
          ("must match the size of tensor", "PyTorch: a (k,) condition in torch.where against (k, d) "
           "tensors fails to broadcast: broadcasting lines up the last axes, so the condition's k meets d"),
          ("tensors used as indices must be", "PyTorch: an index is a float tensor, not an integer one: "
           "the running count of empty centroids must stay an integer"),
          ("", "PyTorch: the error's last line names the operation that failed and the shapes it got"),
      ))


# %%
# HIDDEN TESTS: kmeans-step points=4
### BEGIN HIDDEN TESTS
def numpy_reseed_step(X, C):
    """The float64 oracle: numpy_step, then the j-th empty centroid at the j-th farthest point."""
    X, C = X.astype(np.float64), C.astype(np.float64)
    new, labels = kmeans.numpy_step(X, C)
    empty = np.flatnonzero(np.bincount(labels, minlength=len(C)) == 0)
    d_near = ((X[:, None, :] - C[None]) ** 2).sum(-1).min(axis=1)
    new[empty] = X[np.argsort(-d_near, kind="stable")[: len(empty)]]
    return new, labels


step_j = jax.jit(kmeans_step_jax)
step_t = torch.compile(kmeans_step_torch, fullgraph=True, dynamic=False, backend="eager")
# Empty centroids at the front, in the middle and at the end; seven clusters.
X3, _ = kmeans.make_blobs(500, 4, seed=5)
C3 = np.vstack([[[50.0, 0.0]], kmeans.initial_centroids(X3, 3, seed=5)[:2], [[0.0, 60.0]],
                kmeans.initial_centroids(X3, 3, seed=5)[2:], [[-70.0, 0.0], [0.0, -80.0]]]).astype(np.float32)
want = numpy_reseed_step(X3, C3)
assert_close(step_j(jnp.asarray(X3), jnp.asarray(C3)), want, rtol=1e-5, atol=1e-5, name="JAX, four empty centroids")
assert_close(step_t(torch.from_numpy(X3), torch.from_numpy(C3)), want, rtol=1e-5, atol=1e-5,
             name="PyTorch, four empty centroids")
# Two centroids on the same point: the second never wins a point, until it moves. Both frameworks
# run to the oracle's answer, with every cluster in use at the end.
X2, _ = kmeans.make_blobs(300, 5, seed=11)
C2 = kmeans.initial_centroids(X2, 5, seed=11)
C2[4] = C2[0]
C_ref, iterations = C2.astype(np.float64), 0
while iterations < 50:
    new, labels_ref = numpy_reseed_step(X2, C_ref)
    shift, C_ref, iterations = np.abs(new - C_ref).max(), new, iterations + 1
    if shift <= 1e-5:
        break
assert len(np.unique(labels_ref)) == 5
ran_j = run_compiled(step_j, jnp.asarray(X2), jnp.asarray(C2))
ran_t = run_compiled(step_t, torch.from_numpy(X2), torch.from_numpy(C2))
assert_close(ran_j, (C_ref, labels_ref, iterations), rtol=1e-5, atol=1e-5, name="JAX, second data set")
assert_close(ran_t, (C_ref, labels_ref, iterations), rtol=1e-5, atol=1e-5, name="PyTorch, second data set")
### END HIDDEN TESTS

# %% [markdown]
# ## Done
#
# Lesson 04 puts these pieces together: a whole training step compiled in both frameworks,
# with identical initial weights and data order, and its throughput measured eager vs compiled.
