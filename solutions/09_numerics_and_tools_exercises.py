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
# # 09 · Exercises: numerics and tools
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/09_numerics_and_tools_exercises.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/09_numerics_and_tools_exercises.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=solutions/09_numerics_and_tools_exercises.ipynb)
#
# Five exercises on lesson 09: a cross-entropy that is safe on bfloat16 logits, the FLOPs of
# an MLP counted by hand (checked against `FlopCounterMode`), the first step whose gradient
# is not finite, per-rank random keys, and a top-ops summary of a profiler trace.
# Replace each `raise NotImplementedError()` with your code, then run the check cell below it:
# it prints "passed", explains what is wrong, or says "not implemented yet".

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
    "batch_size": (64, 16),  # examples in the FLOP-count checks
}

# %%
from course_utils import env

SETUP = env.setup(one_kind=True)  # first: JAX's memory policy, JAX first, float32 in both,
# and one device kind for both (PyTorch stays on the CPU on a TPU: so does JAX, to compare)

from itertools import pairwise

import jax
import jax.numpy as jnp
import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from course_utils import config
from course_utils.exercises import check
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)


def cross_entropy_f64(logits, labels):
    """The oracle: mean cross-entropy in float64 NumPy."""
    z = np.asarray(jnp.asarray(logits, jnp.float32), np.float64)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-log_p[np.arange(len(labels)), np.asarray(labels)].mean())


def torch_mlp_flops(widths, batch, training):
    """FlopCounterMode's count for a bias-free PyTorch MLP with these widths."""
    layers = [torch.nn.Linear(a, b, bias=False) for a, b in pairwise(widths)]
    model = torch.nn.Sequential(*[m for layer in layers for m in (layer, torch.nn.ReLU())][:-1])
    with FlopCounterMode(display=False) as counter:
        out = model(torch.randn(batch, widths[0]))
        if training:
            out.sum().backward()
    return counter.get_total_flops()


# %% [markdown]
# ## Exercise 1 · A cross-entropy that is safe on bfloat16 logits
#
# A model computing in bfloat16 (Flax NNX `dtype=jnp.bfloat16`) hands its logits to the loss in
# bfloat16. Write the mean cross-entropy of `logits` (shape `(batch, classes)`, any float
# dtype) against integer `labels`, computed in **float32** whatever the input dtype, and
# stable for large logits:
#
# $$ \ell = \frac{1}{B}\sum_b \Big(\log\sum_c e^{z_{bc} - m_b} - (z_{b,y_b} - m_b)\Big),
# \qquad m_b = \max_c z_{bc}. $$
#
# Return a float32 scalar. About 4 lines of `jax.numpy` (no Optax).

# %%
# EXERCISE: bf16-cross-entropy
def cross_entropy_f32(logits: jax.Array, labels: jax.Array) -> jax.Array:
    """Mean cross-entropy in float32 of (batch, classes) logits of any float dtype."""
    ### BEGIN SOLUTION
    z = logits.astype(jnp.float32)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).mean()
    ### END SOLUTION


# %%
# TESTS: bf16-cross-entropy points=2
logits_bf16 = (jax.random.normal(jax.random.key(0), (32, 10)) * 3).astype(jnp.bfloat16)
labels_ce = jax.random.randint(jax.random.key(1), (32,), 0, 10)
ce_crash_hint = (
    "an unexpected keyword 'dim' or 'keepdim' is PyTorch's spelling: jax.numpy takes axis= "
    "and keepdims=; a shape error is (batch, classes) minus a (batch,) maximum, which does not "
    "broadcast: the reduction dropped the axis it reduced (keepdims defaults to False, as "
    "PyTorch's keepdim does); a TypeError about converting an array that is not a scalar means "
    "the loss is not one number: the per-example losses still need their mean over the batch; "
    "'indices and arr must have the same number of dimensions' is jnp.take_along_axis given the "
    "(batch,) labels for (batch, classes) log-probabilities: like torch.gather, it takes an index "
    "array with as many dimensions as the array it reads; an array with no attribute 'float' "
    "(or 'to') is PyTorch's cast: a jax array casts with .astype"
)
check(  # float32 logits first: no precision to lose, so a wrong value is a wrong formula
    "bf16-cross-entropy",
    lambda: float(cross_entropy_f32(logits_bf16.astype(jnp.float32), labels_ce)),
    cross_entropy_f64(logits_bf16.astype(jnp.float32), labels_ce),
    rtol=1e-5,
    hint="each row's log-softmax normalises over its classes (axis 1 of (batch, classes), as "
    "PyTorch's dim=1); each row's loss is its own label's entry, while indexing every row with "
    "the whole labels array picks (batch, batch) entries; the loss is minus that "
    "log-probability, so it is positive (a negative loss has lost the minus sign); and it is the "
    "mean over the batch of one entry per row, not the sum, and not a mean over every (row, "
    "class) entry; the label's logit comes from the same shifted row as the log of the sum "
    "(shift both by the row's maximum, or neither); and every step runs in float32: a cast to "
    "float16 (or bfloat16) first rounds even float32 logits, and the loss is off by that rounding",
    crash_hint=ce_crash_hint,
)
check(
    "bf16-cross-entropy",
    lambda: (cross_entropy_f32(logits_bf16, labels_ce).dtype == jnp.float32, float(cross_entropy_f32(logits_bf16, labels_ce))),
    (True, cross_entropy_f64(logits_bf16, labels_ce)),
    rtol=1e-5,
    hint="the loss is not float32, or lost precision: a log-softmax that runs in bfloat16 (any step "
    "of it, the shift by the maximum too) keeps 8 significant bits (2 to 3 decimal digits), and a cast to float32 "
    "afterwards does not bring them back",
    crash_hint=ce_crash_hint,
)
check(
    "bf16-cross-entropy",
    lambda: float(cross_entropy_f32(logits_bf16 + 200, labels_ce)),
    cross_entropy_f64(logits_bf16 + 200, labels_ce),
    rtol=1e-5,
    hint="logits near 200 give a loss that is not finite: exp of a float32 above about 88.7 is "
    "infinity, so these rows' sums of exponentials overflow",
)
few_classes = jax.random.normal(jax.random.key(5), (6, 3)) * 3  # 3 classes, not the digits' 10
labels_few = jnp.array([0, 1, 2, 2, 1, 0])
check(
    "bf16-cross-entropy",
    lambda: float(cross_entropy_f32(few_classes, labels_few)),
    cross_entropy_f64(few_classes, labels_few),
    rtol=1e-5,
    hint="logits with 3 classes gave a wrong loss: the number of classes is the logits' second "
    "dimension (logits.shape[1]), not a number fixed at 10",
    crash_hint="a shape error between (batch, 10) and (batch, 3) is a number of classes fixed at 10 "
    "(a one-hot of 10 columns, the digits' count): take it from the logits, logits.shape[1]",
)
far_apart = logits_bf16 + jnp.arange(32, dtype=jnp.bfloat16)[:, None] * 40  # rows 1240 apart
check(
    "bf16-cross-entropy",
    lambda: float(cross_entropy_f32(far_apart, labels_ce)),
    cross_entropy_f64(far_apart, labels_ce),
    rtol=1e-5,
    hint="rows far below the batch's largest logit underflow: shifted by one maximum over the "
    "whole array (jnp's max without an axis, like torch's max without dim), all their "
    "exponentials are 0 and their log of the sum is -inf; and rows far above the first row "
    "overflow when every row is shifted by the first row's maximum: jnp's max with an axis "
    "returns the maxima alone, not torch's (values, indices) pair, so a [0] after it keeps row "
    "0's maximum only",
)
gaps = jnp.array([120.0, 150.0, 200.0, 300.0])  # each label's logit this far below its row's maximum
confident_wrong = jnp.zeros((4, 10)).at[:, 0].set(gaps).astype(jnp.bfloat16)
labels_wrong = jnp.array([1, 2, 3, 4])
check(
    "bf16-cross-entropy",
    lambda: float(cross_entropy_f32(confident_wrong, labels_wrong)),
    cross_entropy_f64(confident_wrong, labels_wrong),
    rtol=1e-5,
    hint="a confidently wrong row (its label's logit 120 or more below the row's maximum) gives a "
    "loss that is not finite: that label's probability, about exp(-120), is 0 in float32, and "
    "the log of 0 is -inf; the log of a softmax, or of any probability, fails there, while the "
    "formula's shifted logit minus the log of the sum never leaves the log domain; and the shift "
    "is the row's maximum: shifted by a smaller value (the row's mean or minimum), the row's "
    "largest logit stays far above 0 and its exponential overflows to infinity",
)

# %%
# HIDDEN TESTS: bf16-cross-entropy points=3
### BEGIN HIDDEN TESTS
for seed, shape, shift, dtype in [(2, (5, 3), 0, jnp.float32), (3, (64, 100), -500, jnp.bfloat16), (4, (1, 2), 1000, jnp.float16)]:
    z = (jax.random.normal(jax.random.key(seed), shape) * 4 + shift).astype(dtype)
    y = jax.random.randint(jax.random.key(seed + 10), shape[:1], 0, shape[1])
    got = cross_entropy_f32(z, y)
    assert got.dtype == jnp.float32 and got.shape == (), (got.dtype, got.shape)
    assert_close(float(got), cross_entropy_f64(z, y), rtol=1e-5, atol=1e-6, name=f"shape {shape}, shift {shift}")
assert_close(float(jax.jit(cross_entropy_f32)(logits_bf16, labels_ce)), cross_entropy_f64(logits_bf16, labels_ce), rtol=1e-5)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2 · The FLOPs of an MLP, by hand
#
# A bias-free MLP with layer widths `widths = [d_0, d_1, ..., d_L]` multiplies a `(batch, d_0)`
# input by `L` weight matrices. Count its matmul FLOPs the way `FlopCounterMode` and papers do
# (a multiply-add is 2 FLOPs; activations are free):
#
# - `training=False`: the forward pass;
# - `training=True`: forward plus backward, where the backward of each layer computes the
#   gradient of its weight, and of its input **except for the first layer** (nobody needs the
#   gradient of the data).
#
# Return an `int`. About 5 lines.

# %%
# EXERCISE: mlp-flops
def mlp_flops(widths: list[int], batch: int, training: bool = False) -> int:
    """Matmul FLOPs of a bias-free MLP's forward (and backward when training)."""
    ### BEGIN SOLUTION
    pairs = list(pairwise(widths))
    forward = sum(2 * batch * a * b for a, b in pairs)
    if not training:
        return forward
    weight_grads = forward
    input_grads = sum(2 * batch * a * b for a, b in pairs[1:])
    return forward + weight_grads + input_grads
    ### END SOLUTION


# %%
# TESTS: mlp-flops points=2
widths_check = [64, 128, 10]
check(
    "mlp-flops",
    lambda: mlp_flops(widths_check, S.batch_size),
    torch_mlp_flops(widths_check, S.batch_size, training=False),
    rtol=0,
    atol=0,
    hint="forward: each layer is a (batch, d_in) @ (d_in, d_out) matmul, and a multiply-add counts as 2 FLOPs; "
    "nothing else counts: the ReLUs between the layers are free, as they are for FlopCounterMode",
)
check(
    "mlp-flops",
    lambda: mlp_flops(widths_check, S.batch_size, training=True),
    torch_mlp_flops(widths_check, S.batch_size, training=True),
    rtol=0,
    atol=0,
    hint="training=True counts the forward as well as the backward, and the backward is one "
    "weight-gradient matmul per layer and one input-gradient matmul per layer except the first",
)
deeper_check = [64, 128, 32, 10]  # three layers: two of them need the gradient of their input
check(
    "mlp-flops",
    lambda: mlp_flops(deeper_check, S.batch_size, training=True),
    torch_mlp_flops(deeper_check, S.batch_size, training=True),
    rtol=0,
    atol=0,
    hint="with three layers the backward has an input-gradient matmul for the second and the third "
    "layer: every layer's but the first, not the last layer's alone",
)
check(
    "mlp-flops",
    lambda: isinstance(mlp_flops(widths_check, S.batch_size, training=True), int | np.integer),
    True,
    hint="return a whole number of FLOPs as an int: `/` makes a float in Python, `//` does not",
)

# %%
# HIDDEN TESTS: mlp-flops points=3
### BEGIN HIDDEN TESTS
for widths_h, batch_h in [([3, 5], 7), ([16, 32, 32, 8], 4), ([10, 1, 10, 1], 1)]:
    for training_h in (False, True):
        got = mlp_flops(widths_h, batch_h, training_h)
        assert isinstance(got, int | np.integer), type(got)
        assert got == torch_mlp_flops(widths_h, batch_h, training_h), (widths_h, batch_h, training_h, got)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 3 · The first step with a non-finite gradient
#
# A training run diverged. Given a loss `loss_fn(params, batch)` (a JAX function of a pytree
# `params` and a batch), fixed `params`, and a list of batches, return the index (from 0) of
# the first batch whose gradient `jax.grad(loss_fn)(params, batch)` holds a NaN or an infinity
# in **any** leaf, or `-1` if none does. About 5 lines (`jax.tree.leaves`, `jnp.isfinite`).

# %%
# EXERCISE: first-nonfinite
def first_nonfinite_step(loss_fn, params, batches) -> int:
    """Index of the first batch whose gradient is not finite everywhere, or -1."""
    ### BEGIN SOLUTION
    grad_fn = jax.jit(jax.grad(loss_fn))
    for i, batch in enumerate(batches):
        leaves = jax.tree.leaves(grad_fn(params, batch))
        if not all(bool(jnp.isfinite(g).all()) for g in leaves):
            return i
    return -1
    ### END SOLUTION


# %%
# TESTS: first-nonfinite points=2
def two_part_loss(params, x):
    # finite at x = 0, where the norm's gradient is 0/0 = NaN (only params["b"]'s)
    return jnp.sum(params["a"] * x) + jnp.sqrt(jnp.sum((params["b"] * x) ** 2))


params_nan = {"a": jnp.ones(3), "b": jnp.ones(3)}
batches_nan = [jnp.array([1.0, 2.0, 3.0]), jnp.array([0.5, 0.0, 1.0]), jnp.zeros(3), jnp.ones(3), jnp.array([jnp.inf, 1.0, 1.0])]
check(
    "first-nonfinite",
    lambda: first_nonfinite_step(two_part_loss, params_nan, batches_nan),
    2,
    rtol=0,
    atol=0,
    hint="batch 2's loss is finite and its gradient is not: check every leaf of the gradient (not "
    "the loss), and count from 0; one leaf that is not finite is enough (here only params['b']'s "
    "is), not every leaf at once; that gradient holds NaNs and no infinity, which jnp.isinf "
    "misses; it is the first such batch (batch 4's gradient is not finite either: a loop that "
    "keeps going returns a later one), and -1 comes only after every batch was checked (a "
    "return -1 inside the loop answers at batch 0)",
    crash_hint="a TypeError naming a dict means a jnp function was given the whole gradient: it is "
    "a pytree shaped like params, not one array; a ValueError about the truth value of an array "
    "means a whole array reached Python's if, all() or any(): reduce each leaf to one bool "
    "first, with .all(); 'JAX does not support string indexing' means loss_fn was given the "
    "batch where params go: it takes (params, batch), in that order",
)
check(
    "first-nonfinite",
    lambda: first_nonfinite_step(two_part_loss, params_nan, batches_nan[:2]),
    -1,
    rtol=0,
    atol=0,
    hint="no batch here has a non-finite gradient: the answer is then -1 (not None, not len(batches))",
)
check(
    "first-nonfinite",
    lambda: first_nonfinite_step(lambda p, x: jnp.sum(jnp.log(p["w"] * x)), {"w": jnp.ones(2)}, [jnp.ones(2), jnp.array([1.0, 0.0])]),
    1,
    rtol=0,
    atol=0,
    hint="batch 1's gradient is NaN in one element and finite in the other: one non-finite element "
    "is enough, so every element must be finite (all, not any)",
)


def _inf_in_first_leaf(params, x):
    return jnp.sum(params["a"] * x) + jnp.sum(params["b"] ** 2)  # d/da = x: inf, never NaN


check(
    "first-nonfinite",
    lambda: first_nonfinite_step(_inf_in_first_leaf, params_nan, [jnp.ones(3), jnp.array([1.0, jnp.inf, 1.0])]),
    1,
    rtol=0,
    atol=0,
    hint="batch 1's gradient holds an infinity and no NaN, in its first leaf only: jnp.isnan misses "
    "infinities, and every leaf counts; the gradient is the one with respect to params (jax.grad's "
    "default, argnums=0), not to the batch",
)
check(
    "first-nonfinite",
    lambda: first_nonfinite_step(lambda p, x: jnp.sum(p["w"] * x) + jnp.log(x[0]), {"w": jnp.ones(2)}, [jnp.ones(2), jnp.array([0.0, 1.0])]),
    -1,
    rtol=0,
    atol=0,
    hint="batch 1's loss is -inf (the log of its own 0) while its gradient with respect to params, "
    "the batch itself, is finite: the question is the gradient's, so a non-finite loss does not "
    "count",
)
check(
    "first-nonfinite",
    lambda: first_nonfinite_step(lambda p, x: jnp.sum(p * x), jnp.ones(2), [jnp.full(2, 3e38)]),
    -1,
    rtol=0,
    atol=0,
    hint="batch 0's gradient is finite (two entries of 3e38; float32's largest finite number is "
    "about 3.4e38), but their sum overflows to infinity: check each leaf's entries, "
    "jnp.isfinite(g).all(), not whether their sum is finite",
)

# %%
# HIDDEN TESTS: first-nonfinite points=3
### BEGIN HIDDEN TESTS
assert first_nonfinite_step(two_part_loss, params_nan, batches_nan[:2]) == -1
assert first_nonfinite_step(two_part_loss, params_nan, batches_nan[2:]) == 0
assert first_nonfinite_step(two_part_loss, params_nan, [batches_nan[0], batches_nan[4]]) == 1
log_loss = lambda p, x: jnp.sum(jnp.log(p["w"] * x))  # noqa: E731
assert first_nonfinite_step(log_loss, {"w": jnp.ones(2)}, [jnp.ones(2), jnp.array([1.0, 0.0])]) == 1
assert first_nonfinite_step(log_loss, {"w": jnp.ones(2)}, []) == -1
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 4 · One random key per rank
#
# In data-parallel training every rank needs its own random stream (its own dropout masks),
# the same in every rerun. Write `rank_key(seed, rank)` returning a **typed** JAX key
# (`jax.random.key`, not the legacy `PRNGKey`) such that
#
# - different ranks of one seed get different keys;
# - no two (seed, rank) pairs share a key: seed 0's rank 1 is not seed 1's rank 0;
# - the same (seed, rank) always gives the same key.
#
# Any one number made from the two, such as `seed * K + rank`, collides somewhere however large
# `K` is: seed 0's rank `K` is seed 1's rank 0. One line.

# %%
# EXERCISE: rank-keys
def rank_key(seed: int, rank: int) -> jax.Array:
    """A typed key for this rank: distinct per rank and per seed, reproducible."""
    ### BEGIN SOLUTION
    return jax.random.fold_in(jax.random.key(seed), rank)
    ### END SOLUTION


# %%
# TESTS: rank-keys points=2
def key_bytes(key):
    return np.asarray(jax.random.key_data(key)).tobytes()


check(
    "rank-keys",
    lambda: jnp.issubdtype(rank_key(0, 0).dtype, jax.dtypes.prng_key),
    True,
    hint="return a typed key (built from jax.random.key), not a raw uint32 array from PRNGKey",
    crash_hint="typed keys take no arithmetic (a seed or a rank cannot be added to a key), and a "
    "split into rank keys is empty for rank 0; 'invalid PRNG key data' means a plain int went "
    "where a key goes: jax.random's functions (fold_in, split, uniform) take a key, not a seed",
)
check(
    "rank-keys",
    lambda: len({key_bytes(rank_key(0, r)) for r in range(8)}),
    8,
    hint="the ranks share a key: 8 ranks of one seed got fewer than 8 distinct keys (a key "
    "that ignores the rank repeats one, and so does a split into fewer keys than ranks, whose "
    "index JAX clamps to the last key)",
)
check(
    "rank-keys",
    lambda: key_bytes(rank_key(0, 1)) == key_bytes(rank_key(1, 0)),
    False,
    hint="seed + rank collides: seed 0's rank 1 equals seed 1's rank 0, since one sum cannot say "
    "which part was the seed",
)
# Ranks up to 2**20: past the K of a seed * K + rank with K up to a million, and small
# enough that any correct answer runs in moments.
_ranks = (0, 1, 10, 100, 1000, 1024, 10_000, 65_536, 100_000, 10**6, 2**20)
_many_ranks = [(s, r) for s in range(3) for r in _ranks]
check(
    "rank-keys",
    lambda: len({key_bytes(rank_key(s, r)) for s, r in _many_ranks}),
    len(_many_ranks),
    hint="two (seed, rank) pairs with ranks up to 2**20 share a key: an arithmetic mix of seed "
    "and rank (seed * K + rank) collides once a rank reaches K (seed 0's rank K is seed 1's rank 0), and a split into K "
    "keys clamps every rank from K on to the last key; jax.random.key keeps only a seed's low "
    "32 bits (64-bit mode is off by default), so seed * 2**32 + rank gives every seed the same keys",
)
# Seeds that are powers of two up to 2**31: seed * K + rank keeps only its low 32 bits in
# a key, so for an even K some such seed wraps onto seed 0's keys (2**25 for K = 10**7).
_big_seeds = [(0, 0), (0, 1)] + [(2**p, r) for p in range(1, 32) for r in (0, 1)]
check(
    "rank-keys",
    lambda: len({key_bytes(rank_key(s, r)) for s, r in _big_seeds}),
    len(_big_seeds),
    hint="two (seed, rank) pairs with seeds up to 2**31 share a key: an arithmetic mix "
    "seed * K + rank wraps around, since a key keeps only the low 32 bits of its seed, so for an "
    "even K some seed lands on seed 0's keys (seed 2**25 for K = 10**7, 2**8 for K = 2**24), "
    "however large K is",
    crash_hint="an OverflowError means an arithmetic mix seed * K + rank grew past what a key's "
    "seed (64 bits) or fold_in's data (32 bits) holds, for a seed up to 2**31",
)


def _one_number_collision():
    """Where your keys read as the key of one number a + seed * K + rank * J (jax.random.key(n) holds n's
    low 32 bits in its last word), K and J read off your keys: the two pairs that number cannot tell apart,
    seed J's rank 0 and seed 0's rank K (each divided by their common factor), must not share a key."""
    def number(seed, rank):
        return int(np.asarray(jax.random.key_data(rank_key(seed, rank))).reshape(-1)[-1])

    a, m = number(0, 0), 2**32
    rank_step, seed_step = (number(0, 1) - a) % m, (number(1, 0) - a) % m
    probes = ((1, 1), (2, 0), (0, 2), (3, 5))
    if not rank_step or not seed_step or any(
            (number(s, r) - a - s * seed_step - r * rank_step) % m for s, r in probes):
        return  # not one number mixed linearly from seed and rank
    common = int(np.gcd(rank_step, seed_step))
    seed, rank = rank_step // common, seed_step // common
    if key_bytes(rank_key(seed, 0)) == key_bytes(rank_key(0, rank)):
        raise AssertionError(f"seed {seed}'s rank 0 and seed 0's rank {rank} share a key")


check(
    "rank-keys",
    _one_number_collision,
    hint="your keys are the key of one number made from the seed and the rank, seed * K + rank (K read off "
    "your keys), and any such number collides, however large K is: seed 0's rank K is seed 1's rank 0, and a "
    "key keeps only the number's low 32 bits, so a K past 2**32 is no escape; build the rank's key from the "
    "seed's key instead of from one number",
)

# %%
# HIDDEN TESTS: rank-keys points=3
### BEGIN HIDDEN TESTS
pairs = [(s, r) for s in range(4) for r in range(6)]
assert len({key_bytes(rank_key(s, r)) for s, r in pairs}) == len(pairs)
assert all(key_bytes(rank_key(s, r)) == key_bytes(rank_key(s, r)) for s, r in pairs)
draws = [np.asarray(jax.random.uniform(rank_key(7, r), (4,))) for r in range(3)]
assert len({d.tobytes() for d in draws}) == 3
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 5 · A top-ops summary of a trace
#
# Both profilers write Chrome-trace events: dicts with a `name`, a phase `ph` and, for
# complete events (`"ph": "X"`), a duration `dur` in microseconds; metadata (`"M"`) and
# instant (`"i"`) events carry no duration. Return the `n` names with the largest **total**
# duration over their complete events, as `(name, total_us)` pairs, largest first. About 6
# lines.

# %%
# EXERCISE: top-ops
def top_ops(events: list[dict], n: int) -> list[tuple[str, float]]:
    """The n op names with the most total time among complete ("X") events, largest first."""
    ### BEGIN SOLUTION
    totals: dict[str, float] = {}
    for e in events:
        if e.get("ph") == "X":
            totals[e["name"]] = totals.get(e["name"], 0.0) + float(e["dur"])
    return sorted(totals.items(), key=lambda kv: kv[1], reverse=True)[:n]
    ### END SOLUTION


# %%
# TESTS: top-ops points=2
trace_events = [  # the first op to appear is not the largest, nor the most called
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "python"}},
    {"ph": "X", "name": "copy", "ts": 0, "dur": 1.0},
    {"ph": "X", "name": "dot", "ts": 1, "dur": 19.0},
    {"ph": "X", "name": "fusion", "ts": 20, "dur": 2.0},
    {"ph": "X", "name": "fusion", "ts": 22, "dur": 2.0},
    {"ph": "X", "name": "fusion", "ts": 24, "dur": 2.0},
    {"ph": "i", "name": "marker", "ts": 26},
    {"ph": "X", "name": "dot", "ts": 30, "dur": 11.0},
]
check(
    "top-ops",
    lambda: [(name, float(t)) for name, t in top_ops(trace_events, 2)],
    [("dot", 30.0), ("fusion", 6.0)],
    hint="rank by total duration of the complete ('X') events, largest first; skip events without "
    "a duration, and do not count calls; sort every name by its total before taking the first n "
    "(the order in which names first appear in the trace is not a ranking); the totals stay in "
    "microseconds, the unit of 'dur'",
    crash_hint="a KeyError 'dur' means an event without a duration was read: metadata ('M') and "
    "instant ('i') events have no 'dur'; an error unpacking your answer means it is not a list "
    "of (name, total_us) pairs",
)
check(
    "top-ops",
    lambda: [(name, float(t)) for name, t in top_ops(trace_events, 5)],
    [("dot", 30.0), ("fusion", 6.0), ("copy", 1.0)],
    hint="asked for more names than there are complete ops: only names of complete ('X') events "
    "belong in the answer, not metadata or instant events at 0 us",
)

# %%
# HIDDEN TESTS: top-ops points=3
### BEGIN HIDDEN TESTS
assert top_ops([], 3) == []
assert [(k, float(v)) for k, v in top_ops(trace_events, 10)] == [("dot", 30.0), ("fusion", 6.0), ("copy", 1.0)]
many = [{"ph": "X", "name": f"op{i % 7}", "ts": i, "dur": float(i)} for i in range(100)]
oracle = {}
for e in many:
    oracle[e["name"]] = oracle.get(e["name"], 0.0) + e["dur"]
assert [k for k, _ in top_ops(many, 3)] == sorted(oracle, key=oracle.get, reverse=True)[:3]
### END HIDDEN TESTS

# %% [markdown]
# ## Done
#
# You kept a bfloat16 loss in float32, counted a model's matmul FLOPs as `FlopCounterMode` and
# papers do, found a NaN gradient behind a finite loss, seeded ranks without collisions, and
# summarised a trace.
# Lesson 10 writes a kernel of its own, in Triton and in Pallas.
