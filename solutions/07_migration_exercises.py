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
# # 07 · Exercises: migration
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/07_migration_exercises.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/07_migration_exercises.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=solutions/07_migration_exercises.ipynb)
#
# Four exercises on porting models between PyTorch and JAX: a weight converter for a layer
# lesson 07 did not cover, the silent difference between two "identical" models, a BatchNorm
# port that keeps its running statistics right, and PyTorch's cross-entropy options in JAX.
# Replace each `raise NotImplementedError()` with your code, then run the check cell below
# it. The check prints "passed", says what is wrong, or says "not implemented yet".

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
SIZES = {"batch": (32, 8), "length": (64, 16)}  # name: (full, smoke)

# %%
from course_utils import env

SETUP = env.setup(one_kind=True)  # first: JAX's memory policy, JAX first, float32 in both,
# and one device kind for both (PyTorch stays on the CPU on a TPU: so does JAX, to compare)

import jax
import jax.numpy as jnp
import numpy as np
import optax
import torch
from flax import nnx

from course_utils import config
from course_utils.exercises import check
from course_utils.parity import assert_close, max_abs_diff

S = config.sizes(SIZES, SMOKE)


# %% [markdown]
# ## Exercise 1 · A converter for `Conv1d`, both ways
#
# PyTorch's `nn.Conv1d` stores its weight as `(out_channels, in_channels, kernel)` and reads
# inputs as `(batch, channels, length)`. Flax's `nnx.Conv` with a one-element `kernel_size`
# stores `(kernel, in_channels, out_channels)` and reads `(batch, length, channels)`. Write
# both converters on NumPy arrays. A missing bias, `None`, stays `None`. About 2 lines each.

# %%
# EXERCISE: conv1d-converter
def conv1d_torch_to_jax(weight: np.ndarray, bias: np.ndarray | None):
    """PyTorch Conv1d (weight (out, in, k), bias (out,)) -> Flax (kernel (k, in, out), bias)."""
    ### BEGIN SOLUTION
    return weight.transpose(2, 1, 0), bias
    ### END SOLUTION


def conv1d_jax_to_torch(kernel: np.ndarray, bias: np.ndarray | None):
    """Flax Conv (kernel (k, in, out), bias (out,)) -> PyTorch Conv1d (weight (out, in, k), bias)."""
    ### BEGIN SOLUTION
    return kernel.transpose(2, 1, 0), bias
    ### END SOLUTION


# %%
def torch_conv1d(c_in, c_out, k, stride=1, pad=1, bias=True, seed=0):
    torch.manual_seed(seed)
    return torch.nn.Conv1d(c_in, c_out, k, stride=stride, padding=pad, bias=bias)


def flax_conv1d_from(conv_t):
    """A Flax Conv given conv_t's weights through your converter."""
    c_out, c_in, k = conv_t.weight.shape
    bias = conv_t.bias is not None
    kernel, b = conv1d_torch_to_jax(conv_t.weight.detach().numpy(),
                                    conv_t.bias.detach().numpy() if bias else None)
    conv_j = nnx.Conv(c_in, c_out, (k,), strides=conv_t.stride[0],
                      padding=((conv_t.padding[0], conv_t.padding[0]),), use_bias=bias, rngs=nnx.Rngs(0))
    conv_j.kernel[...] = jnp.asarray(kernel)
    if bias:
        conv_j.bias[...] = jnp.asarray(b)
    return conv_j


x_ncl = np.random.default_rng(0).standard_normal((S.batch, 4, S.length)).astype(np.float32)  # (batch, channels, length)
conv_t = torch_conv1d(4, 6, 3)
with torch.no_grad():
    expected_conv = conv_t(torch.from_numpy(x_ncl))


# %%
# TESTS: conv1d-converter points=2
def conv_crash(err):
    """The likely cause of a crash in a converter."""
    if isinstance(err, AttributeError) and "permute" in str(err):
        return "NumPy: an ndarray has no .permute, torch's name; NumPy's is .transpose(axes)"
    if isinstance(err, ValueError) and "axes don't match" in str(err):
        return "NumPy's .transpose takes the new order of every axis, not two axes to swap as torch's does"
    return "PyTorch is (out, in, k); Flax is (k, in, out): reverse the axes"


def _layout_then_taps():
    weight = conv_t.weight.detach().numpy()
    kernel = np.asarray(conv1d_torch_to_jax(weight, conv_t.bias.detach().numpy())[0])
    c_out, c_in, k = weight.shape
    assert kernel.shape == (k, c_in, c_out), (
        f"the kernel has shape {kernel.shape}; PyTorch is (out, in, k), Flax is (k, in, out) = "
        f"{(k, c_in, c_out)}: reverse the axes")
    if np.array_equal(kernel[::-1], weight.transpose(2, 1, 0)):
        raise AssertionError("the kernel's taps are in reverse order: PyTorch and Flax both compute a "
                             "cross-correlation, so the taps keep their order")


def _conv_outputs():
    out_j = flax_conv1d_from(conv_t)(jnp.asarray(x_ncl.transpose(0, 2, 1)))  # (batch, length, channels)
    return np.asarray(out_j).transpose(0, 2, 1)  # back to (batch, channels, length)


check("conv1d-converter", _layout_then_taps, crash_hint=conv_crash)  # the layout first, then the taps
check("conv1d-converter", _conv_outputs, expected_conv, rtol=1e-5, atol=1e-5,
      hint="PyTorch is (out, in, k); Flax is (k, in, out): reverse the axes", crash_hint=conv_crash)


def _round_trip():
    weight, bias = conv_t.weight.detach().numpy(), conv_t.bias.detach().numpy()
    return conv1d_jax_to_torch(*conv1d_torch_to_jax(weight, bias))


check("conv1d-converter", _round_trip, (conv_t.weight, conv_t.bias), rtol=0, atol=0,
      hint="conv1d_jax_to_torch must undo conv1d_torch_to_jax: Flax's (k, in, out) back to PyTorch's (out, in, k)")


def _missing_bias():
    weight = conv_t.weight.detach().numpy()
    assert conv1d_torch_to_jax(weight, None)[1] is None, "conv1d_torch_to_jax turned a missing bias into something"
    assert conv1d_jax_to_torch(weight.transpose(2, 1, 0), None)[1] is None, (
        "conv1d_jax_to_torch turned a missing bias into something")


check("conv1d-converter", _missing_bias,
      hint="a layer built with bias=False has no bias: pass None through as None in both converters")

# %%
# HIDDEN TESTS: conv1d-converter points=3
### BEGIN HIDDEN TESTS
for c_in, c_out, k, stride, pad, bias in [(3, 5, 5, 2, 2, True), (4, 2, 1, 1, 0, False), (2, 7, 3, 3, 1, True)]:
    conv_h = torch_conv1d(c_in, c_out, k, stride, pad, bias, seed=k)
    conv_j = flax_conv1d_from(conv_h)
    x = np.random.default_rng(k).standard_normal((3, c_in, 20)).astype(np.float32)
    with torch.no_grad():
        ref = conv_h(torch.from_numpy(x)).numpy()
    assert_close(np.asarray(conv_j(jnp.asarray(x.transpose(0, 2, 1)))).transpose(0, 2, 1), ref,
                 rtol=1e-5, atol=1e-5, name=f"conv1d {c_in}->{c_out} k={k}")
    weight, b = conv1d_jax_to_torch(np.asarray(conv_j.kernel[...]), np.asarray(conv_j.bias[...]) if bias else None)
    assert_close(weight, conv_h.weight, rtol=0, atol=0, name="round trip weight")
    assert (b is None) == (not bias), "a missing bias must stay None"
    if bias:
        assert_close(b, conv_h.bias, rtol=0, atol=0, name="round trip bias")
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2 · Two "identical" models that disagree
#
# `TorchNet` is Linear → LayerNorm → GELU → Linear. `port_forward` is a JAX port of it that
# someone checked by eye. The weights in `params` are converted correctly and every shape
# fits, yet the outputs differ. Find the **two** defaults that differ and write
# `fixed_forward(params, x)`, the port done right, in `jax.numpy`. About 5 lines.

# %%
class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.ln, self.fc2 = torch.nn.Linear(16, 32), torch.nn.LayerNorm(32), torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.ln(self.fc1(x))))


def layer_norm(h, scale, bias, eps=1e-6):
    mean = h.mean(-1, keepdims=True)
    var = ((h - mean) ** 2).mean(-1, keepdims=True)
    return (h - mean) / jnp.sqrt(var + eps) * scale + bias


def port_forward(params, x):
    h = x @ params["fc1"]["kernel"] + params["fc1"]["bias"]
    h = jax.nn.gelu(layer_norm(h, params["ln"]["scale"], params["ln"]["bias"]))
    return h @ params["fc2"]["kernel"] + params["fc2"]["bias"]


torch.manual_seed(0)
net = TorchNet()
with torch.no_grad():
    net.fc1.bias.zero_()  # so that the LayerNorm sees small activations below
params = {
    "fc1": {"kernel": jnp.asarray(net.fc1.weight.detach().numpy().T), "bias": jnp.asarray(net.fc1.bias.detach().numpy())},
    "ln": {"scale": jnp.asarray(net.ln.weight.detach().numpy()), "bias": jnp.asarray(net.ln.bias.detach().numpy())},
    "fc2": {"kernel": jnp.asarray(net.fc2.weight.detach().numpy().T), "bias": jnp.asarray(net.fc2.bias.detach().numpy())},
}
x_small = np.random.default_rng(1).standard_normal((S.batch, 16)).astype(np.float32) * 3e-3
x_large = np.random.default_rng(2).standard_normal((S.batch, 16)).astype(np.float32) * 10
with torch.no_grad():
    expected_net = net(torch.from_numpy(x_small))
    expected_large = net(torch.from_numpy(x_large))
print(f"the port is off by up to {max_abs_diff(port_forward(params, jnp.asarray(x_small)), expected_net):.3f}")


# %%
# EXERCISE: silent-difference
def fixed_forward(params, x):
    """TorchNet's forward pass in jax.numpy, with PyTorch's defaults."""
    ### BEGIN SOLUTION
    h = x @ params["fc1"]["kernel"] + params["fc1"]["bias"]
    h = layer_norm(h, params["ln"]["scale"], params["ln"]["bias"], eps=1e-5)
    h = jax.nn.gelu(h, approximate=False)
    return h @ params["fc2"]["kernel"] + params["fc2"]["bias"]
    ### END SOLUTION


# %%
# TESTS: silent-difference points=2
check("silent-difference", lambda: fixed_forward(params, jnp.asarray(x_large)), expected_large,
      rtol=1e-5, atol=1e-5,
      hint="at this scale eps does not matter, so the activation differs: torch's F.gelu is the exact "
           "erf form, and jax.nn.gelu's approximate= is a bool whose default is the tanh form")
check("silent-difference", lambda: fixed_forward(params, jnp.asarray(x_small)), expected_net,
      rtol=1e-5, atol=1e-5,
      hint="on small inputs the LayerNorm differs: compare nn.LayerNorm's eps with the 1e-6 "
           "that layer_norm adds unless told")

# %%
# HIDDEN TESTS: silent-difference points=3
### BEGIN HIDDEN TESTS
for scale in (1e-3, 1.0, 30.0):
    x = np.random.default_rng(int(scale * 1000)).standard_normal((5, 16)).astype(np.float32) * scale
    with torch.no_grad():
        ref = net(torch.from_numpy(x))
    assert_close(jax.jit(fixed_forward)(params, jnp.asarray(x)), ref, rtol=1e-5, atol=2e-5,
                 name=f"fixed_forward at scale {scale}")
### END HIDDEN TESTS

# %% [markdown]
# <!-- EXERCISE: silent-why -->
# In one or two sentences: which two defaults differed, and which of them showed only on small
# inputs, and why?
#
# <!-- BEGIN SOLUTION -->
# `nn.LayerNorm` adds eps = 1e-5 to the variance while the port used 1e-6, and PyTorch's GELU is
# the exact erf form while `jax.nn.gelu` defaults to the tanh approximation. The epsilon only matters
# when the variance it is added to is comparable to it, which happens for small activations.
# <!-- END SOLUTION -->

# %% [markdown]
# ## Exercise 3 · A BatchNorm port that keeps its statistics right
#
# Write `bn_torch_to_nnx(bn)`: an `nnx.BatchNorm` that behaves like the given
# `torch.nn.BatchNorm1d` in **both** modes, with its scale, bias and running statistics
# copied. Mind the momentum convention: PyTorch's weighs the new batch, Flax's the old
# average. Mind the epsilon too. PyTorch updates `running_mean` in place at every training
# step, and JAX may read a tensor's memory after your function has returned, even through a
# copy JAX makes itself (lessons 01, §3.1, and 06, §6.1). So give JAX copies made on the
# host. About 8 lines. After a training step the running variance still differs by the
# unbiased and biased conventions; the tests allow for that.

# %%
# EXERCISE: batchnorm-port
def bn_torch_to_nnx(bn: torch.nn.BatchNorm1d) -> nnx.BatchNorm:
    """An nnx.BatchNorm equivalent to `bn` (momentum, epsilon, scale, bias, running stats)."""
    ### BEGIN SOLUTION
    def copy_of(t):  # a host copy that no later in-place update of `t` can reach
        return jnp.asarray(t.detach().numpy().copy())

    out = nnx.BatchNorm(bn.num_features, momentum=1.0 - bn.momentum, epsilon=bn.eps, rngs=nnx.Rngs(0))
    out.scale[...] = copy_of(bn.weight)
    out.bias[...] = copy_of(bn.bias)
    out.mean[...] = copy_of(bn.running_mean)
    out.var[...] = copy_of(bn.running_var)
    return out
    ### END SOLUTION


# %%
def trained_bn(momentum=0.1, eps=1e-5, features=3, seed=0):
    """A BatchNorm1d with non-trivial weights and running statistics."""
    torch.manual_seed(seed)
    bn = torch.nn.BatchNorm1d(features, momentum=momentum, eps=eps)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 2.0)
        bn.bias.uniform_(-1, 1)
    for _ in range(3):
        bn(torch.randn(16, features) * 3 + 1)
    return bn


xb = np.random.default_rng(2).standard_normal((S.batch, 3)).astype(np.float32) * 2 - 1


# %%
# TESTS: batchnorm-port points=2
def _eval_outputs():
    bn = trained_bn()
    ported = bn_torch_to_nnx(bn)
    ported.eval()
    return ported(jnp.asarray(xb))


def bn_crash(err):
    """The likely cause of a crash while porting or running the BatchNorm."""
    text = str(err)
    if "requires grad" in text:
        return "PyTorch: a parameter that requires grad has no .numpy(); detach it first"
    if isinstance(err, AttributeError) and "BatchNorm1d" in text:
        return "torch's BatchNorm1d names them weight, bias, running_mean and running_var"
    if isinstance(err, AttributeError) and any(n in text for n in ("'weight'", "'running_")):
        return "nnx.BatchNorm names them scale, bias, mean and var"
    if "_can_update" in text:
        return ("a running statistic is a plain array now, not an nnx.BatchStat, so training cannot "
                "update it: write into the variable instead of replacing it")
    return ""


def _still_variables():
    ported = bn_torch_to_nnx(trained_bn())
    for name, kind, why in (("scale", nnx.Param, "an optimiser trains only nnx.Params"),
                            ("bias", nnx.Param, "an optimiser trains only nnx.Params"),
                            ("mean", nnx.BatchStat, "training updates only nnx.BatchStats"),
                            ("var", nnx.BatchStat, "training updates only nnx.BatchStats")):
        found = getattr(ported, name)
        assert isinstance(found, kind), (
            f"ported.{name} holds a plain {type(found).__name__}, no longer an nnx.{kind.__name__}, "
            f"and {why}: write into the variable instead of replacing it")


# before the outputs: flax 0.11 crashes running a module that holds a plain array where a variable was
check("batchnorm-port", _still_variables, crash_hint=bn_crash)


_bn = trained_bn().eval()
with torch.no_grad():
    _expected_bn = _bn(torch.from_numpy(xb))
check("batchnorm-port", _eval_outputs, _expected_bn, rtol=1e-5, atol=1e-5,
      hint="copy weight->scale, bias, running_mean->mean, running_var->var; eval() uses the running stats",
      crash_hint=bn_crash)


_busy = jnp.ones((800, 800))
_queue_work = jax.jit(lambda a: a @ a @ a)
_queue_work(_busy).block_until_ready()  # compiled outside the check


def _stats_after_torch_updates_its_own(tries=5):
    for _ in range(tries):
        bn = trained_bn()
        _queue_work(_busy)  # JAX is busy: a copy it defers would happen after the update below
        ported = bn_torch_to_nnx(bn)
        with torch.no_grad():  # what a PyTorch training step does to its statistics: in place
            bn.running_mean.add_(1.0)
            bn.running_var.mul_(2.0)
        mean, var = np.asarray(ported.mean[...]), np.asarray(ported.var[...])
        if not (np.array_equal(mean, _stats_before[0]) and np.array_equal(var, _stats_before[1])):
            break  # one try that saw PyTorch's update is enough
    return mean, var


_bn_before = trained_bn()
_stats_before = (_bn_before.running_mean.numpy().copy(), _bn_before.running_var.numpy().copy())
check("batchnorm-port", _stats_after_torch_updates_its_own, _stats_before, rtol=0, atol=0,
      hint="the ported statistics changed when PyTorch changed its own in place: JAX read the tensor's "
           "memory after bn_torch_to_nnx returned, and a copy JAX makes itself can come that late too; "
           "make the copy on the host first",
      crash_hint=bn_crash)


def _stats_after_training_steps(steps=3):
    bn = trained_bn()
    ported = bn_torch_to_nnx(bn)
    ported.train()
    for i in range(steps):
        ported(jnp.asarray(xb * (i + 1)))
    return ported.mean[...]


_bn_step = trained_bn().train()
with torch.no_grad():
    for i in range(3):
        _bn_step(torch.from_numpy(xb * (i + 1)))
check("batchnorm-port", _stats_after_training_steps, _bn_step.running_mean, rtol=1e-5, atol=1e-6,
      hint="after training steps the running mean differs: PyTorch's momentum weighs the new batch, "
           "Flax's momentum weighs the old average, so Flax's momentum is 1 - PyTorch's",
      crash_hint=bn_crash)


def _stats_other_momentum(steps=3):
    ported = bn_torch_to_nnx(trained_bn(momentum=0.3))
    ported.train()
    for i in range(steps):
        ported(jnp.asarray(xb * (i + 1)))
    return ported.mean[...]


_bn_m3 = trained_bn(momentum=0.3).train()
with torch.no_grad():
    for i in range(3):
        _bn_m3(torch.from_numpy(xb * (i + 1)))
check("batchnorm-port", _stats_other_momentum, _bn_m3.running_mean, rtol=1e-5, atol=1e-6,
      hint="a BatchNorm1d built with momentum=0.3 ported to another running mean: derive Flax's "
           "momentum from bn.momentum, not from a number",
      crash_hint=bn_crash)


def _eval_outputs_other_eps():
    ported = bn_torch_to_nnx(trained_bn(eps=0.1))
    ported.eval()
    return ported(jnp.asarray(xb))


_bn_eps = trained_bn(eps=0.1).eval()
with torch.no_grad():
    _expected_bn_eps = _bn_eps(torch.from_numpy(xb))
check("batchnorm-port", _eval_outputs_other_eps, _expected_bn_eps, rtol=1e-5, atol=1e-5,
      hint="a BatchNorm1d built with eps=0.1 ported to different outputs: pass PyTorch's eps to Flax's epsilon",
      crash_hint=bn_crash)

# %%
# HIDDEN TESTS: batchnorm-port points=3
### BEGIN HIDDEN TESTS
for momentum, eps in [(0.1, 1e-5), (0.3, 1e-3), (0.01, 0.1)]:
    bn = trained_bn(momentum, eps, features=4, seed=int(momentum * 100))
    ported = bn_torch_to_nnx(bn)
    old_var = np.asarray(ported.var[...]).copy()
    x = np.random.default_rng(3).standard_normal((10, 4)).astype(np.float32) * 2
    bn.train()
    ported.train()
    out_t = bn(torch.from_numpy(x)).detach()
    out_j = ported(jnp.asarray(x))
    assert_close(out_j, out_t, rtol=1e-4, atol=1e-4, name=f"train-mode output (momentum={momentum}, eps={eps})")
    assert_close(ported.mean[...], bn.running_mean, rtol=1e-5, atol=1e-6, name="running mean after a step")
    assert_close(ported.var[...], (1 - momentum) * old_var + momentum * x.var(0), rtol=1e-4, atol=1e-5,
                 name="running var (Flax's biased convention)")
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 4 · PyTorch's cross-entropy options in JAX
#
# `F.cross_entropy(logits, labels, label_smoothing=s, ignore_index=i)` mixes the one-hot
# target with a uniform distribution, `(1 − s)·onehot + s / C`. It averages the loss over the
# examples whose label is not `ignore_index`. Write the same in JAX; `optax.smooth_labels`
# and `optax.softmax_cross_entropy` help. It must work under `jax.jit`, so mask values
# instead of using Python `if` or boolean indexing. About 6 lines.

# %%
# EXERCISE: cross-entropy
def cross_entropy_like_torch(logits: jax.Array, labels: jax.Array, *, label_smoothing: float = 0.0,
                             ignore_index: int = -100) -> jax.Array:
    """Mean smoothed cross-entropy over the examples whose label is not ignore_index."""
    ### BEGIN SOLUTION
    valid = labels != ignore_index
    safe = jnp.where(valid, labels, 0)  # any class: these rows are masked out below
    target = optax.smooth_labels(jax.nn.one_hot(safe, logits.shape[-1]), label_smoothing)
    per_example = optax.softmax_cross_entropy(logits, target)
    return jnp.sum(jnp.where(valid, per_example, 0.0)) / jnp.sum(valid)
    ### END SOLUTION


# %%
logits_np = np.random.default_rng(4).standard_normal((S.batch, 5)).astype(np.float32) * 2
labels_np = np.random.default_rng(5).integers(0, 5, S.batch)
labels_np[1] = -100  # one example to ignore


# %%
# TESTS: cross-entropy points=2
def ce_crash(err):
    """The likely cause of a crash under jax.jit."""
    name = type(err).__name__
    if "BooleanIndex" in name:
        return ("JAX: under jax.jit an array's shape cannot depend on values, so boolean indexing "
                "fails: keep every example and mask with jnp.where")
    if "TracerBool" in name or "Concretization" in name:
        return "JAX: under jax.jit a Python if cannot read a traced value: mask with jnp.where instead"
    return ""


_ce_jit = jax.jit(lambda a, b, s, i: cross_entropy_like_torch(a, b, label_smoothing=s, ignore_index=i),
                  static_argnums=(2, 3))


def _ce(labels, smoothing=0.0, ignore=-100):  # yours, under jax.jit
    return _ce_jit(jnp.asarray(logits_np), jnp.asarray(labels), smoothing, ignore)


def _torch_ce(labels, smoothing=0.0, ignore=-100):  # PyTorch's
    return torch.nn.functional.cross_entropy(torch.from_numpy(logits_np), torch.from_numpy(labels),
                                             label_smoothing=smoothing, ignore_index=ignore)


_labels_kept = np.where(labels_np < 0, 0, labels_np)  # no example ignored
check("cross-entropy", lambda: _ce(_labels_kept), _torch_ce(_labels_kept), rtol=1e-5, atol=1e-6,
      hint="F.cross_entropy returns one number: the mean of the examples' losses", crash_hint=ce_crash)
check("cross-entropy", lambda: _ce(labels_np), _torch_ce(labels_np), rtol=1e-5, atol=1e-6,
      hint="an example labelled ignore_index, -100 here, must drop out: average only over labels "
           "!= ignore_index", crash_hint=ce_crash)
check("cross-entropy", lambda: _ce(_labels_kept, 0.1), _torch_ce(_labels_kept, 0.1), rtol=1e-5, atol=1e-6,
      hint="smooth the one-hot target as PyTorch does: every class, the true one included, gets s / C",
      crash_hint=ce_crash)
_labels_3 = _labels_kept.copy()
_labels_3[::4] = 3  # class 3 is the one ignored this time
check("cross-entropy", lambda: _ce(_labels_3, ignore=3), _torch_ce(_labels_3, ignore=3), rtol=1e-5, atol=1e-6,
      hint="with ignore_index=3 the examples labelled 3 must drop out of the mean: use the argument, not -100",
      crash_hint=ce_crash)

# %%
# HIDDEN TESTS: cross-entropy points=3
### BEGIN HIDDEN TESTS
for smoothing, ignore in [(0.0, -100), (0.25, 3), (0.05, -1)]:
    rng = np.random.default_rng(int(smoothing * 100) + 7)
    lg = rng.standard_normal((12, 7)).astype(np.float32) * 3
    lb = rng.integers(0, 7, 12)
    lb[[0, 5]] = ignore
    lt = torch.from_numpy(lg).requires_grad_(True)
    ref = torch.nn.functional.cross_entropy(lt, torch.from_numpy(lb), label_smoothing=smoothing, ignore_index=ignore)
    ref.backward()
    fn = jax.jit(lambda a, b, s=smoothing, i=ignore: cross_entropy_like_torch(a, b, label_smoothing=s, ignore_index=i))
    assert_close(fn(jnp.asarray(lg), jnp.asarray(lb)), ref, rtol=1e-5, atol=1e-6, name=f"loss s={smoothing}")
    grad = jax.grad(fn)(jnp.asarray(lg), jnp.asarray(lb))
    assert_close(grad, lt.grad, rtol=1e-4, atol=1e-6, name=f"gradient s={smoothing}")
### END HIDDEN TESTS

# %% [markdown]
# ## Done
#
# You wrote a converter proven by outputs, found two silent defaults, ported BatchNorm's
# conventions, and matched PyTorch's loss options in JAX. Lesson 08 puts the frameworks'
# claims to the test on your machine.
