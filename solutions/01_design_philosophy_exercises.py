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
# # 01 · Exercises: design philosophy
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/01_design_philosophy_exercises.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/01_design_philosophy_exercises.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=solutions/01_design_philosophy_exercises.ipynb)
#
# Five exercises on lesson 01, each in both frameworks or as a port from one to the other.
# Replace each `raise NotImplementedError()` with your code, then run the check cell below it.
# It prints "passed", explains what is wrong, or says "not implemented yet".

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
    "n_samples": (512, 128),  # rows of the toy regression
    "num_steps": (20, 5),  # optimizer steps compared with torch.optim
    "mask_size": (20_000, 4_000),  # dropout mask entries for the statistics checks
}

# %%
from course_utils import env

SETUP = env.setup(one_kind=True)  # first: JAX's memory policy, JAX first, float32 in both,
# and one device kind for both (PyTorch stays on the CPU on a TPU: so does JAX, to compare)

import copy
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
import torch
from flax import nnx

from course_utils import config, numpy_mlp
from course_utils.exercises import check
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)


# %% [markdown]
# ## Exercise 1 · SGD with momentum as a pure function over a pytree
#
# `torch.optim.SGD(params, lr, momentum=mu)` keeps a *velocity* buffer per parameter, starting
# at zero, and updates both in place:
#
# $$ v \leftarrow \mu\, v + g, \qquad p \leftarrow p - \text{lr}\cdot v $$
#
# Write the functional version: `sgd_momentum(params, velocity, grads, lr, momentum)` returns
# `(new_params, new_velocity)` for **any** pytree of dicts, lists and tuples, changing none of
# its inputs. Use `jax.tree.map`. About 3 lines.

# %%
# EXERCISE: pure-sgd
def sgd_momentum(params, velocity, grads, lr: float, momentum: float):
    """One SGD-with-momentum step; returns (new_params, new_velocity) with the same structure."""
    ### BEGIN SOLUTION
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - lr * v, params, new_velocity)
    return new_params, new_velocity
    ### END SOLUTION


# %% [markdown]
# The checks take one step on a small pytree, then train lesson 01's MLP for a few steps with
# your function and with `torch.optim` from the same initial weights.

# %%
# TESTS: pure-sgd points=2
X_np, y_np = numpy_mlp.toy_regression(S.n_samples, 4, 1, seed=0)
init = numpy_mlp.init_params(4, 16, 1, seed=0)


def mlp_jax(params, X):
    return jax.nn.relu(X @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def loss_jax(params, X, y):
    return 0.5 * ((mlp_jax(params, X) - y) ** 2).sum(axis=1).mean()


def torch_momentum_reference(lr, momentum, num_steps):
    tparams = {k: torch.tensor(v, requires_grad=True) for k, v in init.items()}
    opt = torch.optim.SGD(tparams.values(), lr=lr, momentum=momentum)
    X, y = torch.from_numpy(X_np), torch.from_numpy(y_np)
    for _ in range(num_steps):
        opt.zero_grad()
        pred = torch.relu(X @ tparams["w1"] + tparams["b1"]) @ tparams["w2"] + tparams["b2"]
        (0.5 * ((pred - y) ** 2).sum(dim=1).mean()).backward()
        opt.step()
    return tparams


grad_jax = jax.jit(jax.grad(loss_jax))
p1 = {"b": (jnp.array([0.5]),), "w": jnp.array([1.0, 2.0])}  # a dict holding a tuple
v1 = {"b": (jnp.array([1.0]),), "w": jnp.array([0.5, -1.0])}
g1 = {"b": (jnp.array([-2.0]),), "w": jnp.array([2.0, 4.0])}


def _one_step():
    before = jax.tree.leaves((p1, v1, g1))
    out = sgd_momentum(p1, v1, g1, 0.1, 0.9)
    assert all(a is b for a, b in zip(before, jax.tree.leaves((p1, v1, g1)), strict=True)), (
        "sgd_momentum wrote into the dicts it was given: build new ones and leave the inputs as they were")
    assert isinstance(out, tuple) and len(out) == 2, (
        f"sgd_momentum returned a {type(out).__name__}: return the pair (new_params, new_velocity)")
    return out


crash = "params may be any pytree, here a dict holding a tuple: map over its leaves with jax.tree.map"
check("pure-sgd", lambda: _one_step()[1], {"b": (np.array([-1.1]),), "w": np.array([2.45, 3.1])}, crash_hint=crash,
      hint="the new velocity, the second item, is momentum times the old velocity plus the gradient, "
      "with no (1 - momentum) on the gradient: torch.optim.SGD has no dampening by default")
check("pure-sgd", lambda: _one_step()[0], {"b": (np.array([0.61]),), "w": np.array([0.755, 1.69])},
      crash_hint=crash,
      hint="the parameters step along the new velocity, scaled by lr: not along the old velocity or the gradient")


def yours(lr, momentum, num_steps, step=sgd_momentum):
    params = jax.tree.map(jnp.asarray, init)
    velocity = jax.tree.map(jnp.zeros_like, params)
    for _ in range(num_steps):
        grads = grad_jax(params, jnp.asarray(X_np), jnp.asarray(y_np))
        params, velocity = step(params, velocity, grads, lr, momentum)
    return params


check("pure-sgd", lambda: yours(0.1, 0.9, S.num_steps), torch_momentum_reference(0.1, 0.9, S.num_steps),
      rtol=1e-4, atol=1e-5, hint="over several steps your parameters drift from torch.optim.SGD's: "
      "each step must start from the velocity the step before returned")

# %%
# HIDDEN TESTS: pure-sgd points=3
### BEGIN HIDDEN TESTS
assert_close(yours(0.05, 0.5, 3, step=jax.jit(sgd_momentum)), torch_momentum_reference(0.05, 0.5, 3),
             rtol=1e-4, atol=1e-5, name="jitted, other hyperparameters")
# NumPy leaves are mutable: an in-place update (p -= ...) would show here.
tree = {"a": [np.ones(2), (np.arange(3.0),)], "b": np.float64(2.0)}
vel = jax.tree.map(lambda x: np.full(np.shape(x), 0.5), tree)
grads = jax.tree.map(lambda x: np.full(np.shape(x), 2.0), tree)
before = jax.tree.map(np.copy, (tree, vel, grads))
new_p, new_v = sgd_momentum(tree, vel, grads, 0.1, 0.9)
assert jax.tree.structure(new_p) == jax.tree.structure(tree), "keep the pytree structure"
assert_close(new_v, jax.tree.map(lambda x: np.full(np.shape(x), 0.9 * 0.5 + 2.0), tree), name="velocity")
assert_close(new_p, jax.tree.map(lambda x: x - 0.1 * 2.45, tree), rtol=1e-6, name="params")
assert_close((tree, vel, grads), before, rtol=0, atol=0, name="inputs")  # nothing was changed
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2 · Scatter-add in both frameworks
#
# `bin_sums(idx, weights, n_bins)` returns an array of length `n_bins` whose entry `b` is the
# sum of `weights[i]` over all `i` with `idx[i] == b`: a weighted histogram, where indices
# repeat. Write it for PyTorch **and** for JAX. The natural `out[idx] += weights` is wrong in
# PyTorch, as lesson 01's section 3 showed. In JAX, remember that arrays are immutable. The JAX
# version must work under `jax.jit` with `n_bins` static. One line each.

# %%
# EXERCISE: scatter-add
def bin_sums_torch(idx: torch.Tensor, weights: torch.Tensor, n_bins: int) -> torch.Tensor:
    """Sum of weights per bin, repeated indices accumulated (PyTorch)."""
    ### BEGIN SOLUTION
    return torch.zeros(n_bins, dtype=weights.dtype).index_add_(0, idx, weights)
    ### END SOLUTION


def bin_sums_jax(idx: jax.Array, weights: jax.Array, n_bins: int) -> jax.Array:
    """Sum of weights per bin, repeated indices accumulated (JAX)."""
    ### BEGIN SOLUTION
    return jnp.zeros(n_bins, dtype=weights.dtype).at[idx].add(weights)
    ### END SOLUTION


# %%
# TESTS: scatter-add points=2
idx_np = np.array([0, 3, 3, 1, 3, 0])
w_np = np.array([1.5, 2.25, 3.0, 4.5, 5.25, 6.0], np.float32)
expected = np.zeros(5)
np.add.at(expected, idx_np, w_np.astype(np.float64))  # float64 oracle: [7.5, 4.5, 0, 10.5, 0]
check("scatter-add", lambda: bin_sums_torch(torch.from_numpy(idx_np), torch.from_numpy(w_np), 5), expected,
      hint="PyTorch: an indexed in-place add (t[idx] += w) or a scatter writes a repeated index once, the "
      "last write wins: every weight of a repeated bin must be added",
      crash_hint="PyTorch: the sums must have the weights' dtype (an integer zeros tensor cannot "
      "take float weights: PyTorch does not cast in an in-place op)")
check("scatter-add", lambda: bin_sums_jax(jnp.asarray([2, 0]), jnp.asarray([1.5, 2.5]), 3), np.array([2.5, 0.0, 1.5]),
      hint="JAX: an indexed update returns a new array and leaves the one it was called on as it was: "
      "keep what it returns, in the weights' dtype",
      crash_hint=lambda err: "JAX: the sums must have the weights' dtype; integer zeros cannot take "
      "float weights" if "cast" in str(err) else "JAX: arrays are immutable, so item assignment raises: "
      "build the sums with an indexed update that returns a new array")
check("scatter-add", lambda: jax.jit(bin_sums_jax, static_argnums=2)(jnp.asarray(idx_np), jnp.asarray(w_np), 5),
      expected, hint="JAX: a repeated index must add up, not overwrite",
      crash_hint="JAX: under jax.jit the indices and weights are tracers without values, so NumPy cannot "
      "read them and no shape may depend on them: stay in jnp, with the length from n_bins")

# %%
# HIDDEN TESTS: scatter-add points=3
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(7)
idx_np = rng.integers(0, 50, size=2000)
w_np = rng.standard_normal(2000).astype(np.float32)
expected = np.zeros(50)
np.add.at(expected, idx_np, w_np.astype(np.float64))
got_torch = bin_sums_torch(torch.from_numpy(idx_np), torch.from_numpy(w_np), 50)
got_jax = jax.jit(bin_sums_jax, static_argnums=2)(jnp.asarray(idx_np), jnp.asarray(w_np), 50)
assert_close(got_torch, expected, rtol=1e-4, atol=1e-4, name="torch bins")
assert_close(got_jax, expected, rtol=1e-4, atol=1e-4, name="jax bins")
assert got_torch.shape == (50,) and got_jax.shape == (50,)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 3 · Dropout masks over several steps, with the right randomness
#
# Inverted dropout keeps each entry with probability `1 - rate`. Write, in both frameworks,
# a function that returns the keep-masks for `num_steps` training steps, stacked into a
# boolean array of shape `(num_steps, *shape)`:
#
# - **JAX** `dropout_masks_jax(key, num_steps, shape, rate)`: derive one key per step from
#   `key` with `jax.random.fold_in` or `jax.random.split`; never reuse a key.
# - **PyTorch** `dropout_masks_torch(seed, num_steps, shape, rate)`: seed one private
#   `torch.Generator` once with `seed` and draw every step from it. The global generator
#   stays untouched, and no two seeds share a mask.
#
# Both must be reproducible, the same seed or key giving the same masks, and give a different
# mask each step. About 3 lines each.

# %%
# EXERCISE: dropout-keys
def dropout_masks_jax(key: jax.Array, num_steps: int, shape: tuple, rate: float) -> jax.Array:
    """(num_steps, *shape) boolean keep-masks, one fresh key per step."""
    ### BEGIN SOLUTION
    step_keys = [jax.random.fold_in(key, step) for step in range(num_steps)]
    return jnp.stack([jax.random.bernoulli(k, 1.0 - rate, shape) for k in step_keys])
    ### END SOLUTION


def dropout_masks_torch(seed: int, num_steps: int, shape: tuple, rate: float) -> torch.Tensor:
    """(num_steps, *shape) boolean keep-masks from a private torch.Generator."""
    ### BEGIN SOLUTION
    gen = torch.Generator().manual_seed(seed)
    return torch.rand((num_steps, *shape), generator=gen) >= rate
    ### END SOLUTION


# %%
# TESTS: dropout-keys points=2
def _masks(fw, seed, num_steps=4, shape=(64,), rate=0.5):
    if fw == "JAX":
        return np.asarray(dropout_masks_jax(jax.random.key(seed), num_steps, shape, rate))
    return dropout_masks_torch(seed, num_steps, shape, rate).numpy()


def _boolean(fw):
    m = _masks(fw, 42)
    assert m.shape == (4, 64) and m.dtype == bool, f"{fw}: shape {m.shape}, dtype {m.dtype}"


def _from_the_argument(fw):
    assert np.array_equal(_masks(fw, 42), _masks(fw, 42)), f"{fw}: the same key/seed gave other masks"
    assert not np.array_equal(_masks(fw, 42), _masks(fw, 43)), f"{fw}: key/seed 42 and 43 gave the same masks"


def _new_each_step(fw):
    m = _masks(fw, 42)
    assert not any(np.array_equal(m[0], m[s]) for s in range(1, 4)), f"{fw}: a later step got step 0's mask"


def _seeds_apart(fw):
    first = _masks(fw, 43)[0]
    assert not any(np.array_equal(first, m) for m in _masks(fw, 42)), f"{fw}: seed 43's first mask is one of seed 42's"


def _keeps_one_minus_rate(fw):
    kept = _masks(fw, 7, 2, (4000,), 0.2).mean()
    assert abs(kept - 0.8) < 0.05, f"{fw}: at rate 0.2 the masks keep {kept:.2f} of the entries, not 0.8"


def _global_untouched():
    before = torch.get_rng_state()
    _masks("PyTorch", 7)
    assert torch.equal(before, torch.get_rng_state()), "PyTorch: the global torch generator moved"


for fw in ("JAX", "PyTorch"):
    check("dropout-keys", lambda fw=fw: _boolean(fw), hint="a mask is a boolean array of shape (num_steps, *shape)")
    check("dropout-keys", lambda fw=fw: _from_the_argument(fw),
          hint=f"the masks must come from the {'key' if fw == 'JAX' else 'seed'} passed in, nothing else")
    check("dropout-keys", lambda fw=fw: _new_each_step(fw),
          hint="JAX: each step needs a key of its own, derived from the key passed in; one key reused "
          "repeats its numbers" if fw == "JAX" else
          "PyTorch: seed one generator once, then draw every step from it; seeding it again repeats the numbers")
    check("dropout-keys", lambda fw=fw: _seeds_apart(fw),
          hint="JAX: derive every step's key from the key passed in" if fw == "JAX" else
          "PyTorch: a generator seeded seed + step gives seed 43 the masks of seed 42 one step later: "
          "seed one generator once")
    check("dropout-keys", lambda fw=fw: _keeps_one_minus_rate(fw), hint="a mask is True where the entry is KEPT, with probability 1 - rate")
check("dropout-keys", _global_untouched,
      hint="PyTorch: draw from a generator of your own, seeded with the seed passed in: the global one is shared "
      "with every other caller")

# %%
# HIDDEN TESTS: dropout-keys points=3
### BEGIN HIDDEN TESTS
n = S.mask_size
global_state = torch.get_rng_state()
m_torch = dropout_masks_torch(3, 3, (n,), 0.3).numpy()
assert torch.equal(global_state, torch.get_rng_state()), "the global torch generator was used"
m_jax = np.asarray(dropout_masks_jax(jax.random.key(3), 3, (n,), 0.3))
tol = 5 * np.sqrt(0.3 * 0.7 / n)
for name, m in (("torch", m_torch), ("jax", m_jax)):
    assert abs(m.mean() - 0.7) < tol, f"{name}: kept fraction {m.mean():.3f}, expected 0.7"
    agree = (m[0] == m[1]).mean()  # independent masks agree on 0.7^2 + 0.3^2 = 0.58 of entries
    assert abs(agree - 0.58) < 5 * np.sqrt(0.58 * 0.42 / n), f"{name}: steps look correlated ({agree:.3f})"
other = np.asarray(dropout_masks_jax(jax.random.key(4), 3, (n,), 0.3))
assert not np.array_equal(other, m_jax), "a different key must give different masks"
m_torch_4 = dropout_masks_torch(4, 3, (n,), 0.3).numpy()
assert not np.array_equal(m_torch_4, m_torch), "seed ignored"
assert not any(np.array_equal(m_torch_4[0], m) for m in m_torch), "seed 4's first mask is one of seed 3's"
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 4 · A running statistic that survives `jax.jit`
#
# Here is an imperative running mean and variance (Welford's algorithm, batched), the way one
# writes it in PyTorch: the object updates its own fields.

# %%
class RunningStats:
    """Imperative: count, mean and M2 (sum of squared deviations) live on the object."""

    def __init__(self, dim: int):
        self.count, self.mean, self.m2 = 0, torch.zeros(dim), torch.zeros(dim)

    def update(self, batch: torch.Tensor) -> None:  # batch: (n, dim)
        n, batch_mean = batch.shape[0], batch.mean(dim=0)
        delta, total = batch_mean - self.mean, self.count + n
        self.mean += delta * n / total
        self.m2 += ((batch - batch_mean) ** 2).sum(dim=0) + delta**2 * self.count * n / total
        self.count = total

    def variance(self) -> torch.Tensor:
        return self.m2 / self.count


# %% [markdown]
# Port it to a pure function for JAX. `update_stats(state, batch)` takes a `Stats` tuple of JAX
# arrays, `count`, `mean` and `m2`, and returns a **new** `Stats`. It must give the right answer
# when jitted and called many times, where a Python-side counter would be frozen at trace time.
# `init_stats(dim)` returns the starting state. About 6 lines.

# %%
class Stats(NamedTuple):
    count: jax.Array  # scalar, float32
    mean: jax.Array  # (dim,)
    m2: jax.Array  # (dim,)


# %%
# EXERCISE: jit-stats
def init_stats(dim: int) -> Stats:
    """Zero count, zero mean, zero M2."""
    ### BEGIN SOLUTION
    return Stats(jnp.zeros(()), jnp.zeros(dim), jnp.zeros(dim))
    ### END SOLUTION


def update_stats(state: Stats, batch: jax.Array) -> Stats:
    """The RunningStats.update step as a pure function: returns the new Stats."""
    ### BEGIN SOLUTION
    n, batch_mean = batch.shape[0], batch.mean(axis=0)
    delta, total = batch_mean - state.mean, state.count + n
    mean = state.mean + delta * n / total
    m2 = state.m2 + ((batch - batch_mean) ** 2).sum(axis=0) + delta**2 * state.count * n / total
    return Stats(total, mean, m2)
    ### END SOLUTION


# %%
# TESTS: jit-stats points=2
batches = [np.random.default_rng(i).normal(i, 1 + i, size=(32, 3)).astype(np.float32) for i in range(4)]
stacked = np.concatenate(batches).astype(np.float64)  # float64 NumPy oracle


def _run(update):
    state = init_stats(3)
    for b in batches:
        state = update(state, jnp.asarray(b))
    return state.count, state.mean, state.m2 / state.count


expected_stats = (len(stacked), stacked.mean(0), stacked.var(0))
check("jit-stats", lambda: _run(update_stats), expected_stats, rtol=1e-4, atol=1e-4,
      hint="called eagerly, the statistics are off: the m2 update follows RunningStats.update term for term",
      crash_hint="a Stats is an immutable NamedTuple: return a new Stats instead of assigning to its fields")
check("jit-stats", lambda: _run(jax.jit(update_stats)), expected_stats, rtol=1e-4, atol=1e-4,
      hint="right eagerly, wrong under jax.jit: a Python counter freezes under jit, so every value that "
      "changes must travel in the Stats you return")

# %%
# HIDDEN TESTS: jit-stats points=3
### BEGIN HIDDEN TESTS
imperative = RunningStats(3)
for b in batches:
    imperative.update(torch.from_numpy(b))
count, mean, var = _run(update_stats)  # eager
assert_close((count, mean, var), (imperative.count, imperative.mean, imperative.variance()),
             rtol=1e-4, atol=1e-4, name="eager vs the PyTorch class")
s0 = init_stats(3)
s1 = jax.jit(update_stats)(s0, jnp.asarray(batches[0]))
assert isinstance(s1, Stats) and float(s0.count) == 0.0, "update_stats must return a new Stats"
uneven = [np.random.default_rng(9).normal(size=(k, 3)).astype(np.float32) for k in (5, 17, 2)]
state = init_stats(3)
for b in uneven:
    state = update_stats(state, jnp.asarray(b))
allrows = np.concatenate(uneven).astype(np.float64)
assert_close((state.mean, state.m2 / state.count), (allrows.mean(0), allrows.var(0)), rtol=1e-4, atol=1e-5,
             name="uneven batches")
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 5 · Port a PyTorch module to Flax NNX
#
# Write `MLPNNX`, the Flax NNX twin of the PyTorch `TorchMLP` below, and `from_torch(model)`,
# which builds an `MLPNNX` holding the **same weights**. Remember the layouts: `nn.Linear`
# stores `weight` as `(out, in)`, and `nnx.Linear` stores `kernel` as `(in, out)`. Set a
# parameter with `layer.kernel[...] = value`. About 12 lines.

# %%
class TorchMLP(torch.nn.Module):
    def __init__(self, d_in: int, d_hidden: int, d_out: int):
        super().__init__()
        self.linear1 = torch.nn.Linear(d_in, d_hidden)
        self.linear2 = torch.nn.Linear(d_hidden, d_out)

    def forward(self, X):
        return self.linear2(torch.tanh(self.linear1(X)))


# %%
# EXERCISE: port-nnx
class MLPNNX(nnx.Module):
    """linear1 -> tanh -> linear2, like TorchMLP."""

    def __init__(self, d_in: int, d_hidden: int, d_out: int, *, rngs: nnx.Rngs):
        ### BEGIN SOLUTION
        self.linear1 = nnx.Linear(d_in, d_hidden, rngs=rngs)
        self.linear2 = nnx.Linear(d_hidden, d_out, rngs=rngs)
        ### END SOLUTION

    def __call__(self, X: jax.Array) -> jax.Array:
        ### BEGIN SOLUTION
        return self.linear2(jnp.tanh(self.linear1(X)))
        ### END SOLUTION


def from_torch(model: TorchMLP) -> MLPNNX:
    """An MLPNNX with the PyTorch model's weights."""
    ### BEGIN SOLUTION
    d_hidden, d_in = model.linear1.weight.shape
    out = MLPNNX(d_in, d_hidden, model.linear2.weight.shape[0], rngs=nnx.Rngs(0))
    for mine, theirs in ((out.linear1, model.linear1), (out.linear2, model.linear2)):
        mine.kernel[...] = jnp.asarray(theirs.weight.detach().numpy().T)
        mine.bias[...] = jnp.asarray(theirs.bias.detach().numpy())
    return out
    ### END SOLUTION


# %% [markdown]
# The check compares outputs, then one SGD step: `torch.optim.SGD` on the PyTorch model,
# `nnx.Optimizer` on yours, the same loss.

# %%
# TESTS: port-nnx points=2
torch.manual_seed(0)
torch_model = TorchMLP(6, 12, 3)
X_np = np.random.default_rng(1).standard_normal((10, 6)).astype(np.float32)
y_np = np.random.default_rng(2).standard_normal((10, 3)).astype(np.float32)


def _step_both(torch_model, X_np, y_np, lr=0.1):
    # from_torch gets a copy: JAX may read host memory later (or, on the CPU, keep using
    # it), so the in-place torch step below must not touch memory JAX still reads.
    nnx_model = from_torch(copy.deepcopy(torch_model))
    out_nnx = nnx_model(jnp.asarray(X_np))
    opt = torch.optim.SGD(torch_model.parameters(), lr=lr)
    ((torch_model(torch.from_numpy(X_np)) - torch.from_numpy(y_np)) ** 2).mean().backward()
    opt.step()
    opt_nnx = nnx.Optimizer(nnx_model, optax.sgd(lr), wrt=nnx.Param)
    _nnx_step(nnx_model, opt_nnx, jnp.asarray(X_np), jnp.asarray(y_np))
    return out_nnx, nnx_model(jnp.asarray(X_np))


@nnx.jit
def _nnx_step(model, optimizer, X, y):
    loss = lambda m: ((m(X) - y) ** 2).mean()  # noqa: E731
    optimizer.update(model, nnx.grad(loss)(model))


def _port_crash(err):
    if "requires grad" in str(err):
        return "PyTorch: a parameter that requires grad must be detached before .numpy()"
    return "Flax NNX: a kernel is (in, out) while nn.Linear's weight is (out, in): kernel = weight.T"


def _params_stay_params():
    m = from_torch(torch_model)
    held = {f"{i}.{n}": type(getattr(layer, n)).__name__ for i, layer in ((1, m.linear1), (2, m.linear2))
            for n in ("kernel", "bias")}
    assert all(kind == "Param" for kind in held.values()), f"the layers hold {held}"


# before the outputs: flax 0.11 crashes running a layer that holds a plain array where its Param was
check("port-nnx", _params_stay_params,
      hint="Flax NNX: assigning an array to layer.kernel replaces its nnx.Param with a plain array, which no "
      "optimizer trains: write into the Param instead",
      crash_hint=_port_crash)
check("port-nnx", lambda: from_torch(torch_model)(jnp.asarray(X_np)),
      torch_model(torch.from_numpy(X_np)).detach(), rtol=1e-5, atol=1e-5,
      hint="Flax NNX: kernel = weight.T (nn.Linear keeps (out, in)), the biases copied too; tanh between the layers",
      crash_hint=_port_crash)


def _after_one_step():
    torch.manual_seed(0)
    model = TorchMLP(6, 12, 3)
    _, after = _step_both(model, X_np, y_np)
    assert_close(after, model(torch.from_numpy(X_np)).detach(), rtol=1e-5, atol=1e-5, name="after one step")


check("port-nnx", _after_one_step, hint="after one SGD step the models disagree: are the biases copied?")

# %%
# HIDDEN TESTS: port-nnx points=3
### BEGIN HIDDEN TESTS
torch.manual_seed(5)
other = TorchMLP(6, 12, 3)  # new weights and data; same sizes keep the check fast
with torch.no_grad():
    other.linear2.bias.uniform_(-3, 3)  # biases that matter
Xh = 2 * np.random.default_rng(3).standard_normal((10, 6)).astype(np.float32)
yh = np.random.default_rng(4).standard_normal((10, 3)).astype(np.float32)
reference_before = other(torch.from_numpy(Xh)).detach()
first, after = _step_both(other, Xh, yh, lr=0.05)
assert_close(first, reference_before, rtol=1e-5, atol=1e-5, name="output before the step")
assert_close(after, other(torch.from_numpy(Xh)).detach(), rtol=1e-5, atol=1e-5, name="output after the step")
m = from_torch(other)
assert m.linear1.kernel.shape == (6, 12) and m.linear2.kernel.shape == (12, 3), "kernels are (in, out)"
assert len(jax.tree.leaves(nnx.state(m, nnx.Param))) == 4, "two kernels and two biases"
### END HIDDEN TESTS

# %% [markdown]
# ## Done
#
# You wrote an optimizer as a pure function, scatter-adds that count every index, randomness
# that never repeats by accident, state that survives `jit`, and an NNX twin of a PyTorch
# module. Lesson 02 differentiates all of these.
