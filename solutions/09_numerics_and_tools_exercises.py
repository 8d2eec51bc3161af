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
# an MLP counted by hand, the first step whose gradient is not finite, per-rank random keys,
# and a top-ops summary of a profiler trace. Replace each `raise NotImplementedError()` with
# your code, then run the check cell below it. It prints "passed", says what is wrong, or
# says "not implemented yet".

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


def log_softmax_f64(logits, axis=1):
    """log-softmax in float64 NumPy along ``axis``."""
    z = np.asarray(jnp.asarray(logits, jnp.float32), np.float64)
    z = z - z.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def cross_entropy_f64(logits, labels):
    """The oracle: mean cross-entropy in float64 NumPy."""
    return float(-log_softmax_f64(logits)[np.arange(len(labels)), np.asarray(labels)].mean())


def torch_mlp_flops(widths, batch, training):
    """FlopCounterMode's count for a bias-free PyTorch MLP with these widths."""
    layers = [torch.nn.Linear(a, b, bias=False) for a, b in pairwise(widths)]
    model = torch.nn.Sequential(*[m for layer in layers for m in (layer, torch.nn.ReLU())][:-1])
    with FlopCounterMode(display=False) as counter:
        out = model(torch.randn(batch, widths[0]))
        if training:
            out.sum().backward()
    return counter.get_total_flops()


def diagnose(got, expected, causes=(), general="", same=lambda a, b: a == b):
    """Pass when ``got`` equals ``expected``; else fail showing both, with one likely cause.

    ``causes`` holds ``(wrong, hint)`` pairs: ``wrong`` is the value a slip gives, or a test
    of ``got``. The hint of the first pair that matches is shown, else ``general``.
    """
    if same(got, expected):
        return

    def matches(wrong):
        try:
            return bool(wrong(got)) if callable(wrong) else bool(same(got, wrong))
        except Exception:  # a test that cannot read this answer does not match it
            return False

    hint = next((h for wrong, h in causes if matches(wrong)), general)
    raise AssertionError(f"wrong value\n  expected {expected!r}\n  but got  {got!r}" + (f"\nHint: {hint}" if hint else ""))


def close(a, b):
    return abs(a - b) <= 1e-5 * abs(b) + 1e-6


# %% [markdown]
# ## Exercise 1 · A cross-entropy that is safe on bfloat16 logits
#
# A model computing in bfloat16 hands its logits to the loss in bfloat16. Write the mean
# cross-entropy of `logits`, shape `(batch, classes)` and any float dtype, against integer
# `labels`. Compute it in **float32** whatever the input dtype, and keep it stable for large
# logits:
#
# $$ \ell = \frac{1}{B}\sum_b \Big(\log\sum_c e^{z_{bc} - m_b} - (z_{b,y_b} - m_b)\Big),
# \qquad m_b = \max_c z_{bc}. $$
#
# Return a float32 scalar, a JAX array. About 4 lines of `jax.numpy`, without Optax.

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


def _ce_crash(err):
    """One likely cause for each kind of error."""
    text = f"{type(err).__name__}: {err}"
    for words, hint in [
        (("'dim'", "'keepdim'"), "dim= and keepdim= are PyTorch's spelling: jax.numpy takes axis= and keepdims="),
        (("Tracer", "Concretization"), "under jax.jit the logits are tracers: NumPy (np.exp, np.asarray) and Python's "
         "float() cannot take them; write every step with jax.numpy"),
        (("'float' object",), "return a JAX array, a float32 scalar: float() or .item() makes a Python float, which "
         "has no dtype and which jax.jit cannot trace"),
        (("'float'", "'to'"), ".float() and .to() are PyTorch's casts: a JAX array casts with .astype"),
        (("same number of dimensions",), "jnp.take_along_axis takes an index array with as many dimensions as the "
         "array it reads, as torch.gather does: the (batch,) labels need a second axis"),
        (("broadcast", "shapes"), "the reduction dropped the axis it reduced: (batch, classes) minus a (batch,) "
         "maximum does not broadcast (keepdims defaults to False, as PyTorch's keepdim does)"),
        (("converting", "scalar", "size-1"), "the loss is not one number: the per-example losses still need their "
         "mean over the batch"),
    ]:
        if any(w in text for w in words):
            return hint
    return ""


def _ce_float32_logits():
    """float32 logits first: no precision to lose, so a wrong value is a wrong formula."""
    z, y = logits_bf16.astype(jnp.float32), labels_ce
    lp, rows, v = log_softmax_f64(z), np.arange(len(y)), cross_entropy_f64(z, y)
    diagnose(float(cross_entropy_f32(z, y)), v, [
        (-v, "the loss is minus the label's log-probability, so it is positive: a negative loss has lost the minus sign"),
        (len(y) * v, "the loss is the mean over the batch, not the sum"),
        (v / z.shape[1], "one entry per row, averaged over the batch: not a mean over every (row, class) entry"),
        (len(y) / z.shape[1] * v, "sum each row's one-hot product over its classes, axis 1, then take the mean "
         "over the batch: a sum over axis 0 adds up the batch instead"),
        (float(-log_softmax_f64(z, axis=0)[rows, np.asarray(y)].mean()), "each row's log-softmax normalises over "
         "its classes, axis 1 of (batch, classes), as PyTorch's dim=1"),
        (float(-lp[:, np.asarray(y)].mean()), "each row's loss is its own label's entry: indexing every row with "
         "the whole labels array picks (batch, batch) entries"),
        (lambda g: abs(g - v) < 1e-2 * abs(v), "every step runs in float32: a cast to float16 or bfloat16 first "
         "rounds even float32 logits"),
    ], "the label's logit comes from the same shifted row as the log of the sum: shift both by the row's "
       "maximum, or neither", same=close)


check("bf16-cross-entropy", _ce_float32_logits, crash_hint=_ce_crash)
check(
    "bf16-cross-entropy",
    lambda: str(cross_entropy_f32(logits_bf16, labels_ce).dtype),
    "float32",
    hint="the loss is not float32: a log-softmax that runs in bfloat16 returns bfloat16",
    crash_hint=_ce_crash,
)
check(
    "bf16-cross-entropy",
    lambda: float(cross_entropy_f32(logits_bf16, labels_ce)),
    cross_entropy_f64(logits_bf16, labels_ce),
    rtol=1e-5,
    hint="a log-softmax that runs in bfloat16, the shift by the maximum too, keeps 8 significant bits, and a "
    "cast to float32 afterwards does not bring them back",
    crash_hint=_ce_crash,
)
check(
    "bf16-cross-entropy",
    lambda: float(jax.jit(cross_entropy_f32)(logits_bf16, labels_ce)),
    cross_entropy_f64(logits_bf16, labels_ce),
    rtol=1e-5,
    hint="under jax.jit the loss must not change: write every step with jax.numpy",
    crash_hint=_ce_crash,
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
    "dimension, not a number fixed at 10",
    crash_hint="a shape error between (batch, 10) and (batch, 3) is a number of classes fixed at 10, "
    "the digits' count: take it from the logits' second dimension",
)
far_apart = logits_bf16 + jnp.arange(32, dtype=jnp.bfloat16)[:, None] * 40  # rows 1240 apart
check(
    "bf16-cross-entropy",
    lambda: float(cross_entropy_f32(far_apart, labels_ce)),
    cross_entropy_f64(far_apart, labels_ce),
    rtol=1e-5,
    hint="each row needs its own maximum. Rows far from one shared shift under- or overflow: "
    "shifted by one maximum over the whole array, as jnp's max without an axis gives, or a [0] "
    "after jnp's max, which returns the maxima alone, not torch's (values, indices) pair, and so "
    "keeps row 0's maximum",
)
gaps = jnp.array([120.0, 150.0, 200.0, 300.0])  # each label's logit this far below its row's maximum
confident_wrong = jnp.zeros((4, 10)).at[:, 0].set(gaps).astype(jnp.bfloat16)
labels_wrong = jnp.array([1, 2, 3, 4])
confident_right = jnp.zeros((1, 10)).at[0, 0].set(300.0)  # its label is its largest logit


def _ce_confident_wrong():
    diagnose(float(cross_entropy_f32(confident_wrong, labels_wrong)), cross_entropy_f64(confident_wrong, labels_wrong), [
        (lambda g: not np.isfinite(float(cross_entropy_f32(confident_right, jnp.array([0])))),
         "the shift is the row's maximum: shifted by a smaller value, the row's mean or minimum, its "
         "largest logit stays far above 0 and its exponential overflows to infinity"),
    ], "a confidently wrong row's label has a probability of about exp(-120), 0 in float32, and the log "
       "of 0 is -inf: the log of a softmax, or of any probability, fails there, while the formula's "
       "shifted logit minus the log of the sum never leaves the log domain", same=close)


check("bf16-cross-entropy", _ce_confident_wrong, crash_hint=_ce_crash)

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
# input by `L` weight matrices. Count its matmul FLOPs the way `FlopCounterMode` and papers
# do: a multiply-add is 2 FLOPs, and activations are free.
#
# - `training=False`: the forward pass;
# - `training=True`: forward plus backward. The backward of each layer computes the gradient
#   of its weight, and of its input **except for the first layer**: nobody needs the gradient
#   of the data.
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
fwd_check = torch_mlp_flops(widths_check, S.batch_size, training=False)
train_check = torch_mlp_flops(widths_check, S.batch_size, training=True)
check("mlp-flops", lambda: diagnose(int(mlp_flops(widths_check, S.batch_size)), fwd_check, [
    (fwd_check // 2, "a multiply-add counts as 2 FLOPs"),
    (fwd_check // S.batch_size, "each layer is a (batch, d_in) @ (d_in, d_out) matmul: the batch multiplies the count"),
    (lambda got: got > fwd_check, "only the matmuls count: the ReLUs between the layers are free, as they are "
     "for FlopCounterMode"),
], "the forward is one (batch, d_in) @ (d_in, d_out) matmul per layer, at 2 FLOPs a multiply-add"))
check("mlp-flops", lambda: diagnose(int(mlp_flops(widths_check, S.batch_size, training=True)), train_check, [
    (3 * fwd_check, "the backward has no input-gradient matmul for the first layer: one per layer except the first"),
    (2 * fwd_check, "besides a weight-gradient matmul per layer, the backward has one input-gradient matmul "
     "per layer except the first"),
    (train_check - fwd_check, "training=True counts the forward as well as the backward"),
], "the backward is one weight-gradient matmul per layer and one input-gradient matmul per layer "
   "except the first"))
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
    hint="return a whole number of FLOPs as an int: `/` or a factor 2.0 makes a float in Python",
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
# A training run diverged. Given a loss `loss_fn(params, batch)`, a JAX function of a pytree
# `params` and a batch, fixed `params`, and a list of batches, return the index, from 0, of
# the first batch whose gradient `jax.grad(loss_fn)(params, batch)` holds a NaN or an
# infinity in **any** leaf. Return `-1` if none does. About 5 lines, with `jax.tree.leaves`
# and `jnp.isfinite`.

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
def _crash_nonfinite(err):
    """One likely cause for each kind of error."""
    text = f"{type(err).__name__}: {err}"
    for words, hint in [
        (("backward",), "a JAX array has no .backward(): the gradient is what jax.grad(loss_fn) returns"),
        (("must be Tensor",), "torch's functions take tensors: a JAX gradient goes to jnp.isfinite"),
        (("string indexing",), "loss_fn was given the batch where params go: it takes (params, batch), in that order"),
        (("dict",), "a jnp function was given the whole gradient: it is a pytree shaped like params, not one "
         "array; go through its leaves"),
        (("truth value",), "a whole array reached Python's if, all() or any(): reduce each leaf to one bool "
         "first, with .all()"),
    ]:
        if any(w in text for w in words):
            return hint
    return ""


p_two = {"a": jnp.float32(1.0), "b": jnp.float32(1.0)}


def sqrt_loss(p, x):  # finite everywhere; at x = [1, 0], d/da is +inf and d/db is NaN
    return jnp.sqrt(p["a"] - x[0]) + jnp.sqrt((p["b"] * x[1]) ** 2)


bad, good = jnp.array([1.0, 0.0]), jnp.array([0.0, 1.0])
check("first-nonfinite", lambda: diagnose(first_nonfinite_step(sqrt_loss, p_two, [bad, good]), 0, [
    (-1, "batch 0's loss is finite and its gradient is not: check the gradient, not the loss"),
    (1, "count from 0: batch 0 is the first batch, as enumerate counts"),
]), crash_hint=_crash_nonfinite)
check(
    "first-nonfinite",
    lambda: first_nonfinite_step(sqrt_loss, p_two, [good, bad, good]),
    1,
    hint="-1 comes only after every batch was checked: a return -1 inside the loop answers at batch 0",
    crash_hint=_crash_nonfinite,
)


def nan_loss(p, x):  # finite; at x = 0 every leaf's gradient is NaN, with no infinity
    return jnp.sqrt((p["a"] * x) ** 2) + jnp.sqrt((p["b"] * x) ** 2)


def inf_loss(p, x):  # finite; at x = 1 every leaf's gradient is +inf, with no NaN
    return jnp.sqrt(p["a"] - x) + jnp.sqrt(p["b"] - x)


check(
    "first-nonfinite",
    lambda: first_nonfinite_step(nan_loss, p_two, [jnp.float32(1.0), jnp.float32(0.0)]),
    1,
    hint="batch 1's gradient holds NaNs and no infinity, which jnp.isinf misses",
    crash_hint=_crash_nonfinite,
)
check(
    "first-nonfinite",
    lambda: first_nonfinite_step(inf_loss, p_two, [jnp.float32(0.0), jnp.float32(1.0)]),
    1,
    hint="batch 1's gradient holds infinities and no NaN: jnp.isnan misses them",
    crash_hint=_crash_nonfinite,
)


def middle_leaf_loss(p, x):  # at x = 0 only the middle leaf's gradient, p["b"]'s, is NaN
    return p["a"] * 2.0 + jnp.sqrt((p["b"] * x) ** 2) + p["c"] * 3.0


check(
    "first-nonfinite",
    lambda: first_nonfinite_step(middle_leaf_loss, {"a": 1.0, "b": 1.0, "c": 1.0}, [jnp.float32(1.0), jnp.float32(0.0)]),
    1,
    hint="check every leaf of the gradient: one leaf that is not finite is enough, here only params['b']'s, "
    "the middle one",
    crash_hint=_crash_nonfinite,
)
check(
    "first-nonfinite",
    lambda: first_nonfinite_step(lambda p, x: jnp.sum(jnp.log(p["w"] * x)), {"w": jnp.ones(2)}, [jnp.ones(2), jnp.array([1.0, 0.0])]),
    1,
    hint="batch 1's gradient is NaN in one element and finite in the other: one non-finite element "
    "is enough, so every element must be finite (all, not any)",
    crash_hint=_crash_nonfinite,
)
check(
    "first-nonfinite",
    lambda: first_nonfinite_step(sqrt_loss, p_two, [good, bad, good, bad]),
    1,
    hint="batches 1 and 3 both have a gradient that is not finite: return the first, and stop there",
    crash_hint=_crash_nonfinite,
)
check(
    "first-nonfinite",
    lambda: first_nonfinite_step(sqrt_loss, p_two, [good, good]),
    -1,
    hint="no batch here has a non-finite gradient: the answer is then -1 (not None, not len(batches))",
    crash_hint=_crash_nonfinite,
)
check(
    "first-nonfinite",
    lambda: first_nonfinite_step(lambda p, x: p["w"] * jnp.sum(jnp.sqrt(x)), {"w": jnp.float32(1.0)}, [jnp.ones(2), jnp.zeros(2)]),
    -1,
    hint="the gradient is the one with respect to params, jax.grad's default argnums=0, not to the batch: "
    "here only the batch's gradient is infinite",
    crash_hint=_crash_nonfinite,
)
check(
    "first-nonfinite",
    lambda: first_nonfinite_step(lambda p, x: jnp.sum(p["w"] * x) + jnp.log(x[0]), {"w": jnp.ones(2)}, [jnp.ones(2), jnp.array([0.0, 1.0])]),
    -1,
    hint="batch 1's loss is -inf, the log of its own 0, while its gradient with respect to params is "
    "finite: the question is the gradient's, so a non-finite loss does not count",
    crash_hint=_crash_nonfinite,
)
check(
    "first-nonfinite",
    lambda: first_nonfinite_step(lambda p, x: jnp.sum(p * x), jnp.ones(2), [jnp.full(2, 3e38)]),
    -1,
    hint="batch 0's gradient is finite: two entries of 3e38, below float32's largest, about 3.4e38. Their "
    "sum overflows to infinity: check each leaf's entries, not whether their sum is finite",
    crash_hint=_crash_nonfinite,
)


# %%
# HIDDEN TESTS: first-nonfinite points=3
### BEGIN HIDDEN TESTS
def two_part_loss(params, x):
    return jnp.sum(params["a"] * x) + jnp.sqrt(jnp.sum((params["b"] * x) ** 2))


params_nan = {"a": jnp.ones(3), "b": jnp.ones(3)}
batches_nan = [jnp.array([1.0, 2.0, 3.0]), jnp.array([0.5, 0.0, 1.0]), jnp.zeros(3), jnp.ones(3), jnp.array([jnp.inf, 1.0, 1.0])]
assert first_nonfinite_step(two_part_loss, params_nan, batches_nan) == 2
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
# In data-parallel training every rank needs its own random stream, its own dropout masks,
# the same in every rerun. Write `rank_key(seed, rank)` returning a **typed** JAX key, from
# `jax.random.key` and not the legacy `PRNGKey`, such that
#
# - different ranks of one seed get different keys;
# - no two (seed, rank) pairs share a key: seed 0's rank 1 is not seed 1's rank 0;
# - the same (seed, rank) always gives the same key.
#
# Any one number made from the two, such as `seed * K + rank`, collides somewhere however
# large `K` is: seed 0's rank `K` is seed 1's rank 0. One line.

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


def _keys_crash(err):
    """One likely cause for each kind of error."""
    text = f"{type(err).__name__}: {err}"
    if "OverflowError" in text:
        return ("an OverflowError means an arithmetic mix seed * K + rank grew past what a key's seed, 64 bits, "
                "or fold_in's data, 32 bits, holds, for a seed up to 2**31")
    if "invalid PRNG key data" in text:
        return "jax.random's functions, fold_in, split and uniform, take a key, not a seed"
    if "accept dtypes key" in text:
        return "typed keys take no arithmetic: a seed or a rank cannot be added to a key"
    if "with size 0" in text:
        return "a split into rank keys is empty for rank 0: split(key, n) makes n keys"
    return ""


check(
    "rank-keys",
    lambda: jnp.issubdtype(rank_key(0, 0).dtype, jax.dtypes.prng_key),
    True,
    hint="return a typed key, built from jax.random.key, not a raw uint32 array from PRNGKey",
    crash_hint=_keys_crash,
)


def _ranks_of_one_seed():
    keys = [key_bytes(rank_key(0, r)) for r in range(8)]
    diagnose(len(set(keys)), 8, [
        (lambda got: keys[0] != keys[1] == keys[7], "a split into fewer keys than ranks: JAX clamps the index "
         "to the last key, so every rank from there on shares it"),
    ], "the ranks share a key: 8 ranks of one seed got fewer than 8 distinct keys, as a key that ignores the "
       "rank does")


check("rank-keys", _ranks_of_one_seed, crash_hint=_keys_crash)
check(
    "rank-keys",
    lambda: key_bytes(rank_key(0, 1)) == key_bytes(rank_key(1, 0)),
    False,
    hint="seed + rank collides: seed 0's rank 1 equals seed 1's rank 0, since one number made from both, "
    "a sum or an xor, cannot say which part was the seed",
)
# Ranks up to 2**20: past the K of a seed * K + rank with K up to a million, and small
# enough that any correct answer runs in moments.
_ranks = (0, 1, 10, 100, 1000, 1024, 10_000, 65_536, 100_000, 10**6, 2**20)
_many_ranks = [(s, r) for s in range(3) for r in _ranks]


def _many_pairs():
    diagnose(len({key_bytes(rank_key(s, r)) for s, r in _many_ranks}), len(_many_ranks), [
        (lambda got: key_bytes(rank_key(0, 10**6)) == key_bytes(rank_key(0, 2**20)),
         "a split into K keys clamps every rank from K on to the last key"),
        (lambda got: key_bytes(rank_key(0, 0)) == key_bytes(rank_key(1, 0)),
         "jax.random.key keeps only a seed's low 32 bits, as 64-bit mode is off by default, so "
         "seed * 2**32 + rank gives every seed the same keys"),
    ], "two (seed, rank) pairs with ranks up to 2**20 share a key: an arithmetic mix of seed and rank, "
       "seed * K + rank, collides once a rank reaches K, as seed 0's rank K is seed 1's rank 0")


check("rank-keys", _many_pairs, crash_hint=_keys_crash)
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
    crash_hint=_keys_crash,
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
    hint="your keys are the key of one number made from the seed and the rank, seed * K + rank with K read off "
    "your keys, and any such number collides, however large K is: seed 0's rank K is seed 1's rank 0. A "
    "key keeps only the number's low 32 bits, so a K past 2**32 is no escape; build the rank's key from "
    "the seed's key instead of from one number",
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
# Both profilers write Chrome-trace events: dicts with a `name` and a phase `ph`. Complete
# events, `"ph": "X"`, also carry a duration `dur` in microseconds. Metadata (`"M"`) and
# instant (`"i"`) events carry none. Return the `n` names with the largest **total** duration
# over their complete events, as `(name, total_us)` pairs, largest first. Leave the events
# you are given as they are. About 6 lines.

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
def a_trace():  # a fresh list each time: the first op to appear is not the largest, nor the most called
    return [
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "python"}},
        {"ph": "X", "name": "copy", "ts": 0, "dur": 1.0},
        {"ph": "X", "name": "dot", "ts": 1, "dur": 19.0},
        {"ph": "X", "name": "fusion", "ts": 20, "dur": 2.0},
        {"ph": "X", "name": "fusion", "ts": 22, "dur": 2.0},
        {"ph": "X", "name": "fusion", "ts": 24, "dur": 2.0},
        {"ph": "i", "name": "marker", "ts": 26},
        {"ph": "X", "name": "dot", "ts": 30, "dur": 11.0},
    ]


def _top_ops_crash(err):
    if isinstance(err, KeyError):
        return "an event without a duration was read: metadata ('M') and instant ('i') events have no 'dur'"
    return "return a list of (name, total_us) pairs, not a dict or the names alone"


def top_ops_of(events, n):
    return [(name, float(t)) for name, t in top_ops(events, n)]


check("top-ops", lambda: diagnose(top_ops_of(a_trace(), 2), [("dot", 30.0), ("fusion", 6.0)], [
    (lambda got: [round(t * 1000, 6) for _, t in got] == [30.0, 6.0], "the totals stay in microseconds, the unit of 'dur'"),
    ([("fusion", 3.0), ("dot", 2.0)], "rank by total duration, do not count calls"),
    ([("copy", 1.0), ("fusion", 6.0)], "largest first: a plain sort puts the smallest first"),
    ([("copy", 1.0), ("dot", 30.0)], "sort every name by its total: the order in which names first appear "
     "in the trace is not a ranking"),
    ([("dot", 30.0), ("copy", 1.0)], "sort every name by its total before taking the first n"),
    ([("dot", 19.0), ("fusion", 2.0)], "sum all of a name's events: the longest call is not the total duration"),
    ([("dot", 11.0), ("fusion", 2.0)], "add each event's 'dur' to its name's total: an assignment keeps the "
     "last event's alone"),
    ([("dot", 15.0), ("fusion", 2.0)], "the total duration, not the mean per call"),
    (lambda got: [name for name, _ in got] == ["fusion", "dot"], "rank by total: sorted() and heapq.nlargest "
     "without a key compare the (name, total) pairs by their names"),
], "rank the names by the total 'dur' of their complete ('X') events, largest first"), crash_hint=_top_ops_crash)
check(
    "top-ops",
    lambda: top_ops_of(a_trace(), 5),
    [("dot", 30.0), ("fusion", 6.0), ("copy", 1.0)],
    hint="asked for more names than there are complete ops: only names of complete ('X') events "
    "belong in the answer, not metadata or instant events at 0 µs",
    crash_hint=_top_ops_crash,
)
many_short = [{"ph": "X", "name": "add", "ts": i, "dur": 2.5} for i in range(12)] + [
    {"ph": "X", "name": "dot", "ts": 20, "dur": 20.25}, {"ph": "X", "name": "copy", "ts": 41, "dur": 0.375},
    {"ph": "X", "name": "copy", "ts": 42, "dur": 0.375}]
check("top-ops", lambda: diagnose(top_ops_of(many_short, 3), [("add", 30.0), ("dot", 20.25), ("copy", 0.75)], [
    ([("add", 24.0), ("dot", 20.0), ("copy", 0.0)], "'dur' holds fractional microseconds: int() or round() "
     "on each duration drops them"),
    (lambda got: got[0][0] == "dot", "an op called many times can take more time than one long call: "
     "rank each name by its total, not by its longest event"),
], "rank the names by the total 'dur' of their complete ('X') events, largest first"), crash_hint=_top_ops_crash)
check(
    "top-ops",
    lambda: top_ops_of(a_trace(), 0),
    [],
    hint="asked for no names, n = 0, the answer is an empty list: a slice [-n:] is the whole list when n is 0",
    crash_hint=_top_ops_crash,
)


def _events_left_as_given():
    events = a_trace()
    top_ops(events, 2)
    return events == a_trace()


check(
    "top-ops",
    _events_left_as_given,
    True,
    hint="your function changed the events it was given, with a sort or a pop in place: the caller still "
    "needs them, so sort a copy with sorted(...)",
    crash_hint=_top_ops_crash,
)

# %%
# HIDDEN TESTS: top-ops points=3
### BEGIN HIDDEN TESTS
assert top_ops([], 3) == []
assert [(k, float(v)) for k, v in top_ops(a_trace(), 10)] == [("dot", 30.0), ("fusion", 6.0), ("copy", 1.0)]
many = [{"ph": "X", "name": f"op{i % 7}", "ts": i, "dur": float(i) + 0.5} for i in range(100)]
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
# summarised a trace. Lesson 10 writes a kernel of its own, in Triton and in Pallas.
