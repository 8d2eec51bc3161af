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
# # 04 · Exercises: the training loop
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/04_training_loop_exercises.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/04_training_loop_exercises.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=solutions/04_training_loop_exercises.ipynb)
#
# Five exercises on lesson 04's CNN: the flatten order, porting weights by hand, one
# training step in both frameworks, an epoch fused with `lax.scan`, and an evaluation loop.
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
SIZES = {  # name: (full, smoke)
    "batch_size": (64, 32),  # images per training step
    "k_steps": (8, 3),  # steps fused into one lax.scan call
}

# %%
from course_utils import env

SETUP = env.setup(one_kind=True)  # first: JAX's memory policy, JAX first, float32 in both,
# and one device kind for both (PyTorch stays on the CPU on a TPU: so does JAX, to compare)

import copy

import jax
import jax.numpy as jnp
import numpy as np
import optax
import torch
import torch.nn.functional as F
from flax import nnx

from course_utils import config, convert, data, timing
from course_utils.exercises import check
from course_utils.models import NNXCNN, TorchCNN
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
lr = 1e-3  # Adam's learning rate in exercises 3 and 4

split = data.load_digits(seed=0)
X_np, y_np = next(data.batches(split.X_train, split.y_train, S.batch_size, seed=0))
torch.manual_seed(0)
model_torch = TorchCNN()  # NCHW, PyTorch's initialisation
x_torch, y_torch = torch.from_numpy(X_np), torch.from_numpy(y_np)  # (batch, 1, 8, 8)
x_jax, y_jax = jnp.asarray(data.nchw_to_nhwc(X_np)), jnp.asarray(y_np)  # (batch, 8, 8, 1)


def abstract_nnx_cnn(**sizes):
    """An NNXCNN whose parameters are shapes only, ready to receive weights."""
    return nnx.eval_shape(lambda: NNXCNN(**sizes, rngs=nnx.Rngs(0)))


def nnx_params(model):
    return nnx.to_pure_dict(nnx.state(model, nnx.Param))


# %% [markdown]
# ## Exercise 1 · The flatten order
#
# PyTorch flattens a `(C, H, W)` feature map channel first. Flax flattens the same map,
# stored as `(H, W, C)`, channel last. Return the integer array `perm` of length `C·H·W`
# such that, for a batch `x` of shape `(n, C, H, W)`,
#
# $$ \texttt{x.reshape(n, -1)[:, perm]} = \texttt{x.transpose(0, 2, 3, 1).reshape(n, -1)}, $$
#
# that is, position `i` of the NHWC flattening holds the NCHW position `perm[i]`. One or two
# lines of NumPy: number the NCHW positions, then move the axes.

# %%
# EXERCISE: flatten-order
def flatten_permutation(C: int, H: int, W: int) -> np.ndarray:
    """Indices into the NCHW flattening, in NHWC flattening order."""
    ### BEGIN SOLUTION
    return np.arange(C * H * W).reshape(C, H, W).transpose(1, 2, 0).reshape(-1)
    ### END SOLUTION


# %%
# TESTS: flatten-order points=2
fmap = np.random.default_rng(0).standard_normal((3, 2, 3, 4))  # (n, C, H, W)
check(
    "flatten-order",
    lambda: fmap.reshape(3, -1)[:, flatten_permutation(2, 3, 4)],
    fmap.transpose(0, 2, 3, 1).reshape(3, -1),
    hint="number the NCHW positions with np.arange(C*H*W).reshape(C, H, W), then transpose to (H, W, C)",
)

# %%
# HIDDEN TESTS: flatten-order points=3
### BEGIN HIDDEN TESTS
for C_, H_, W_ in [(1, 1, 1), (5, 1, 7), (32, 4, 4), (3, 5, 2)]:
    perm = np.asarray(flatten_permutation(C_, H_, W_))
    assert perm.shape == (C_ * H_ * W_,), perm.shape
    assert sorted(perm.tolist()) == list(range(C_ * H_ * W_)), "perm must be a permutation"
    grid = np.arange(C_ * H_ * W_).reshape(1, C_, H_, W_)
    np.testing.assert_array_equal(grid.reshape(1, -1)[:, perm], grid.transpose(0, 2, 3, 1).reshape(1, -1))
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2 · Port the PyTorch CNN's weights by hand
#
# Copy every parameter of a `TorchCNN` into an `NNXCNN` of the same sizes, **without**
# `course_utils.convert`:
#
# - conv weights: PyTorch OIHW `(out, in, kh, kw)` → Flax HWIO `(kh, kw, in, out)`;
# - `fc2`: PyTorch `(out, in)` → Flax `(in, out)`;
# - `fc1` reads the flattened feature map, whose `(C, H, W)` is `torch_model.feature_chw`:
#   reorder its input columns with exercise 1's permutation, then transpose;
# - biases are the same in both.
#
# The model you receive comes from `nnx.eval_shape`: its variables hold shapes, not arrays.
# Give each `nnx.Param` its new value and keep the `Param` itself, since the optimiser
# trains only what is an `nnx.Param`. Current Flax writes `variable.set_value(...)`, and
# flax 0.11, on Colab, `variable.value = ...`. `compat.set_value(variable, jnp.asarray(...))`
# calls whichever exists, e.g. `compat.set_value(nnx_model.conv1.kernel, ...)`. Return
# `nnx_model`. About 8 lines.

# %%
# EXERCISE: port-weights
from course_utils import compat


def port_torch_to_nnx(torch_model: TorchCNN, nnx_model: NNXCNN) -> NNXCNN:
    """Copy torch_model's parameters into nnx_model (in place) with Flax's layouts."""
    ### BEGIN SOLUTION
    def np_(t):
        return t.detach().cpu().numpy()

    for name in ("conv1", "conv2"):
        src, dst = getattr(torch_model, name), getattr(nnx_model, name)
        compat.set_value(dst.kernel, jnp.asarray(np_(src.weight).transpose(2, 3, 1, 0)))
        compat.set_value(dst.bias, jnp.asarray(np_(src.bias)))
    perm = flatten_permutation(*torch_model.feature_chw)
    compat.set_value(nnx_model.fc1.kernel, jnp.asarray(np_(torch_model.fc1.weight)[:, perm].T))
    compat.set_value(nnx_model.fc1.bias, jnp.asarray(np_(torch_model.fc1.bias)))
    compat.set_value(nnx_model.fc2.kernel, jnp.asarray(np_(torch_model.fc2.weight).T))
    compat.set_value(nnx_model.fc2.bias, jnp.asarray(np_(torch_model.fc2.bias)))
    return nnx_model
    ### END SOLUTION


# %%
# TESTS: port-weights points=2
forward = nnx.jit(lambda model, x: model(x))


def port_crash(err):
    """The likely cause of a crash while porting or running the ported model."""
    text = str(err)
    if "requires grad" in text:
        return "PyTorch: a parameter that requires grad has no .numpy(); detach it first"
    if isinstance(err, IndexError):
        return "fc1's permutation reorders its input features, the columns of PyTorch's (out, in) weight"
    if "ShapeDtypeStruct" in text:
        return "a parameter still holds a shape, not an array: copy every weight and every bias"
    return "a kernel has the wrong shape: Flax's conv kernel is (kh, kw, in, out) and its Linear kernel (in, out)"


WHERE = {  # what puts a layer's numbers in the right places
    "conv": "the conv permutation maps PyTorch's (out, in, kh, kw) to Flax's (kh, kw, in, out)",
    "fc1": "fc1's column order: PyTorch flattened the features as (c, h, w), Flax as (h, w, c)",
    "fc2": "a Linear weight is (out, in) in PyTorch and (in, out) in Flax",
}


def numbers(variable):  # a parameter's values, or None while it holds a shape only
    try:
        return np.asarray(variable[...])
    except TypeError:
        return None


def assert_params_kept(model):
    for layer in ("conv1", "conv2", "fc1", "fc2"):
        for name in ("kernel", "bias"):
            value = getattr(getattr(model, layer), name)
            assert isinstance(value, nnx.Param), (
                f"JAX: {layer}.{name} is a plain {type(value).__name__}, not an nnx.Param. Assigning "
                f"`module.{name} = array` (PyTorch's `module.weight = nn.Parameter(...)` habit) replaced "
                "the Param, so the optimiser no longer sees it. Give the existing Param its new value"
            )


def ported_logits():
    model = port_torch_to_nnx(model_torch, abstract_nnx_cnn())
    oracle = convert.cnn_torch_to_nnx(model_torch, abstract_nnx_cnn())
    for layer in ("conv1", "conv2", "fc1", "fc2"):
        for name in ("kernel", "bias"):
            got, want = numbers(getattr(getattr(model, layer), name)), nnx_params(oracle)[layer][name]
            if got is not None and got.shape == want.shape and not np.array_equal(got, want):
                fix = WHERE[layer[:4]] if name == "kernel" else "a bias is the same vector in both frameworks"
                raise AssertionError(f"{layer}.{name} holds the wrong numbers, or the right ones in the wrong places: {fix}")
    assert_params_kept(model)  # before the forward pass, which a plain array may crash
    return forward(model, x_jax)


check(
    "port-weights",
    ported_logits,
    model_torch(x_torch),
    rtol=1e-5,
    atol=1e-5,
    crash_hint=port_crash,
)

# %%
# HIDDEN TESTS: port-weights points=3
### BEGIN HIDDEN TESTS
sizes = {"channels": (3, 5), "hidden": 7, "num_classes": 4, "image_size": 6}
torch.manual_seed(3)
small_torch = TorchCNN(**sizes)
ported = port_torch_to_nnx(small_torch, abstract_nnx_cnn(**sizes))
oracle = convert.cnn_torch_to_nnx(small_torch, abstract_nnx_cnn(**sizes))
assert_close(nnx_params(ported), nnx_params(oracle), rtol=0, atol=0, name="ported parameters")
x_small = np.random.default_rng(5).random((4, 1, 6, 6), dtype=np.float32)
assert_close(
    forward(ported, jnp.asarray(data.nchw_to_nhwc(x_small))), small_torch(torch.from_numpy(x_small)),
    rtol=1e-5, atol=1e-5, name="logits of a smaller CNN",
)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 3 · One training step in both frameworks
#
# Write one step of training with cross-entropy loss on integer labels. Return the loss
# **before** the update, as a scalar:
#
# - `train_step_torch(model, optimizer, x, y)`: clear the old gradients, forward,
#   `backward()`, `optimizer.step()`; return the loss detached from the graph. About 5 lines.
# - `train_step_jax(model, optimizer, x, y)` for an `nnx.Optimizer`: compute loss and
#   gradients with `nnx.value_and_grad`, then `optimizer.update(model, grads)`. The check
#   compiles it with `nnx.jit`. About 6 lines.

# %%
# EXERCISE: train-step
def train_step_torch(model, optimizer, x, y) -> torch.Tensor:
    """One optimiser step on (x, y); returns the loss before the update."""
    ### BEGIN SOLUTION
    optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.detach()
    ### END SOLUTION


def train_step_jax(model, optimizer, x, y) -> jax.Array:
    """One optimiser step on (x, y); returns the loss before the update."""
    ### BEGIN SOLUTION
    def loss_fn(model):
        return optax.softmax_cross_entropy_with_integer_labels(model(x), y).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss
    ### END SOLUTION


# %% [markdown]
# The checks start both frameworks from the same weights, ported with `course_utils.convert`.
# They compare each first loss with the loss before the update. Then they compare each
# framework's parameters after two Adam steps with the check's own two steps, written with
# `jax.grad` and `optax`.

# %%
# TESTS: train-step points=2
def train_step_crash(err):
    """The likely cause of a crash in a training step."""
    text = str(err)
    if "scalar" in text:  # JAX: "only defined for scalar-output functions"; PyTorch: "for scalar outputs"
        return "the loss must be one number: take its mean over the batch, as F.cross_entropy does"
    if "Incompatible shapes" in text:
        return ("JAX: optax.softmax_cross_entropy wants one-hot targets; integer labels go to "
                "optax.softmax_cross_entropy_with_integer_labels")
    if "Missing required argument" in text or "positional argument" in text:
        return "flax: nnx.Optimizer.update(model, grads) takes the model first, then the gradients"
    if "not callable" in text:
        return "flax: an nnx.Optimizer has no step() method (optimizer.step is its step counter); call update"
    if isinstance(err, jax.errors.ConcretizationTypeError):
        return ("JAX: the check compiles train_step_jax with nnx.jit, where the loss is a tracer: "
                "return the array, not float(loss) or loss.item()")
    return ""


def fresh_pair():
    m_torch = copy.deepcopy(model_torch)
    m_jax = convert.cnn_torch_to_nnx(m_torch, abstract_nnx_cnn())
    opt_torch = torch.optim.Adam(m_torch.parameters(), lr=lr)
    opt_jax = nnx.Optimizer(m_jax, optax.adam(lr), wrt=nnx.Param)
    return m_torch, m_jax, opt_torch, opt_jax


def first_losses():
    m_torch, m_jax, opt_torch, opt_jax = fresh_pair()
    with torch.no_grad():
        logits = m_torch(x_torch)
        before = F.cross_entropy(logits, y_torch).item()  # the loss each step must return
        of_logits = F.nll_loss(logits, y_torch).item()  # a negative log-likelihood of raw logits
    got = {"train_step_torch": train_step_torch(m_torch, opt_torch, x_torch, y_torch),
           "train_step_jax": nnx.jit(train_step_jax)(m_jax, opt_jax, x_jax, y_jax)}
    with torch.no_grad():
        after = F.cross_entropy(m_torch(x_torch), y_torch).item()  # Adam's first step, in PyTorch
    for name, loss in got.items():
        value = float(loss)
        if np.isclose(value, before * len(y_np), rtol=1e-4):
            raise AssertionError(f"{name} returned the loss summed over the batch ({value:.4g}); "
                                 f"the check wants the mean over the batch, as F.cross_entropy's ({before:.4g})")
        if np.isclose(value, of_logits, rtol=1e-4, atol=1e-6):
            raise AssertionError(f"{name} returned {value:.4g}, minus the mean logit of each true label: a "
                                 "negative log-likelihood such as F.nll_loss wants log-probabilities, and the "
                                 "model returns logits. Take log_softmax first, or use a loss that does")
        if np.isclose(value, before, rtol=1e-6, atol=0):  # the frameworks agree to ~1e-7
            continue
        if np.isclose(value, after, rtol=1e-4):
            raise AssertionError(f"{name} returned {value:.6g}, the loss after the update; return the loss "
                                 f"computed before optimizer.step() / optimizer.update(), here {before:.6g}")
        raise AssertionError(f"{name} returned {value:.7g}, not the mean cross-entropy of the first "
                             f"batch, {before:.7g}: each image's loss must use its own label "
                             "(an index [:, y] takes every label for every image)")


check("train-step", first_losses, crash_hint=train_step_crash)


def reference_two_steps():
    """The check's own two Adam steps on the first batch, from the same weights."""
    graphdef, params = nnx.split(convert.cnn_torch_to_nnx(model_torch, abstract_nnx_cnn()))
    tx = optax.adam(lr)
    opt_state = tx.init(params)

    def loss(params):  # the mean cross-entropy, with one-hot targets
        logits = nnx.merge(graphdef, params)(x_jax)
        return optax.softmax_cross_entropy(logits, jax.nn.one_hot(y_jax, logits.shape[-1])).mean()

    for _ in range(2):
        updates, opt_state = tx.update(jax.grad(loss)(params), opt_state, params)
        params = optax.apply_updates(params, updates)
    return nnx.to_pure_dict(params)


after_two = reference_two_steps()


def torch_two_steps():
    m_torch, _, opt_torch, _ = fresh_pair()
    start = {name: p.detach().clone() for name, p in m_torch.named_parameters()}
    for _ in range(2):
        train_step_torch(m_torch, opt_torch, x_torch, y_torch)
    assert any(not torch.equal(p, start[name]) for name, p in m_torch.named_parameters()), (
        "PyTorch's parameters did not move in two steps: optimizer.step() found no gradients. "
        "Clear the old gradients before backward(), not between backward() and step()"
    )
    return convert.cnn_torch_tensors_to_jax(dict(m_torch.named_parameters()), m_torch.feature_chw)


def jax_two_steps():
    _, m_jax, _, opt_jax = fresh_pair()
    step_jax = nnx.jit(train_step_jax)
    for _ in range(2):
        step_jax(m_jax, opt_jax, x_jax, y_jax)
    return nnx_params(m_jax)


# Adam's first steps move each weight by about lr, even where the gradient is ~eps,
# so rounding differences can show up as a small fraction of lr.
check(
    "train-step",
    torch_two_steps,
    after_two,
    rtol=0,
    atol=0.01 * lr,
    hint="in PyTorch, call optimizer.zero_grad() once per step, before backward()",
    crash_hint=train_step_crash,
)
check(
    "train-step",
    jax_two_steps,
    after_two,
    rtol=0,
    atol=0.01 * lr,
    hint="JAX: the first loss was right, but two steps did not make Adam's updates: let the "
    "nnx.Optimizer apply the gradients, optimizer.update(model, grads), once per step",
    crash_hint=train_step_crash,
)


def torch_loss_detached():
    m_torch = copy.deepcopy(model_torch)
    loss = train_step_torch(m_torch, torch.optim.Adam(m_torch.parameters(), lr=lr), x_torch, y_torch)
    assert isinstance(loss, torch.Tensor), (
        f"train_step_torch returned a {type(loss).__name__}; return a tensor: .item() waits for the "
        "device at every step"
    )
    assert not loss.requires_grad, "train_step_torch returned a loss that still requires grad"


check(
    "train-step",
    torch_loss_detached,
    hint="in PyTorch, return the loss detached from the autograd graph (an attached loss keeps the graph alive)",
)

# %%
# HIDDEN TESTS: train-step points=3
### BEGIN HIDDEN TESTS
m_torch = copy.deepcopy(model_torch)
m_jax = convert.cnn_torch_to_nnx(m_torch, abstract_nnx_cnn())
opt_torch = torch.optim.SGD(m_torch.parameters(), lr=0.05, momentum=0.9)
opt_jax = nnx.Optimizer(m_jax, optax.sgd(0.05, momentum=0.9), wrt=nnx.Param)
step_jax = nnx.jit(train_step_jax)
for X_b, y_b in list(data.batches(split.X_train, split.y_train, S.batch_size, seed=1))[:3]:
    with torch.no_grad():
        before = F.cross_entropy(m_torch(torch.from_numpy(X_b)), torch.from_numpy(y_b))
    loss_torch = train_step_torch(m_torch, opt_torch, torch.from_numpy(X_b), torch.from_numpy(y_b))
    assert not loss_torch.requires_grad, "return loss.detach()"
    assert_close(loss_torch, before, rtol=1e-6, atol=1e-7, name="the loss before the update")
    loss_jax = step_jax(m_jax, opt_jax, jnp.asarray(data.nchw_to_nhwc(X_b)), jnp.asarray(y_b))
    assert jnp.shape(loss_jax) == (), "return a scalar loss"
    assert_close(loss_jax, loss_torch, rtol=1e-5, atol=1e-6, name="loss")
assert_close(
    nnx_params(m_jax),
    convert.cnn_torch_tensors_to_jax(dict(m_torch.named_parameters()), m_torch.feature_chw),
    rtol=1e-4, atol=1e-6, name="parameters after 3 SGD-momentum steps",
)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 4 · Fuse an epoch with `lax.scan`
#
# Below is the pure training step of the lesson: it takes the model and optimiser as one
# state pytree from `nnx.split` and returns the new state and the loss. Its `nnx.merge`
# reuses the Variables of the state it receives, so the update also lands in that state.
# Carry the returned state all the same, as with any pure function. Write
# `train_epoch_scan(graphdef, state, Xs, ys)` that runs it over `K` stacked batches
# (`Xs`: `(K, batch, 8, 8, 1)`, `ys`: `(K, batch)`) with `jax.lax.scan` and returns
# `(final_state, losses)` with `losses` of shape `(K,)`. The check jits it with `graphdef`
# static. About 3 lines.

# %%
def pure_step(graphdef, state, x, y):
    model, optimizer = nnx.merge(graphdef, state)

    def loss_fn(model):
        return optax.softmax_cross_entropy_with_integer_labels(model(x), y).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return nnx.state((model, optimizer)), loss


step_jit = jax.jit(pure_step, static_argnums=0)


def fresh_state():
    model = convert.cnn_torch_to_nnx(model_torch, abstract_nnx_cnn())
    return nnx.split((model, nnx.Optimizer(model, optax.adam(lr), wrt=nnx.Param)))


first_k = list(data.batches(data.nchw_to_nhwc(split.X_train), split.y_train, S.batch_size, seed=0))[: S.k_steps]
Xs = jnp.stack([jnp.asarray(X) for X, _ in first_k])  # (K, batch, 8, 8, 1)
ys = jnp.stack([jnp.asarray(y) for _, y in first_k])  # (K, batch)


# %%
# EXERCISE: scan-epoch
def train_epoch_scan(graphdef, state, Xs, ys):
    """K training steps fused with lax.scan; returns (final_state, losses of shape (K,))."""
    ### BEGIN SOLUTION
    def body(state, batch):
        return pure_step(graphdef, state, *batch)

    return jax.lax.scan(body, state, (Xs, ys))
    ### END SOLUTION


# %% [markdown]
# The check compares one fused call with `K` calls of the jitted step in a Python loop.

# %%
# TESTS: scan-epoch points=2
graphdef, state0 = fresh_state()


def loop_reference(state):
    losses = []
    for k in range(S.k_steps):
        state, loss = step_jit(graphdef, state, Xs[k], ys[k])
        losses.append(loss)
    return state, jnp.stack(losses)


state_loop, losses_loop = loop_reference(state0)
epoch_jit = jax.jit(train_epoch_scan, static_argnums=0)
losses_at_start = jnp.stack([step_jit(graphdef, state0, Xs[k], ys[k])[1] for k in range(S.k_steps)])


def scan_crash(err):
    """The likely cause of a crash in a scanned epoch."""
    text = str(err)
    if "carry" in text:
        return ("JAX: the scan body returns (new carry, output), its carry first and with the "
                "structure it went in with")
    if "different trace level" in text:
        return ("JAX: the body uses a state from outside the scan; it must train the carry it "
                "receives, the state after the previous step")
    if "scalar arrays can be converted" in text:
        return "JAX: lax.scan takes one xs pytree, so pack the images and labels together; its 4th argument is the length"
    if any(words in text for words in ("positional argument", "values to unpack", "not a valid JAX type")):
        return ("JAX: lax.scan slices the leading axis of every array in xs: pass the stacked arrays "
                "as (Xs, ys), not a list of (x, y) pairs")
    return ""


def scanned_losses():
    losses = epoch_jit(graphdef, state0, Xs, ys)[1]
    assert jnp.shape(losses) == (S.k_steps,), f"losses should have shape ({S.k_steps},), got {jnp.shape(losses)}"
    assert not np.allclose(losses, losses_at_start, rtol=1e-5, atol=1e-6), (
        "every step started from the initial state: the body must train the carry it receives "
        "(the state after the previous step), not a state closed over from outside"
    )
    return losses


check(
    "scan-epoch",
    scanned_losses,
    losses_loop,
    rtol=1e-5,
    atol=1e-6,
    hint="step k must train on batch k, images and labels: scan over both, together",
    crash_hint=scan_crash,
)
check(
    "scan-epoch",
    lambda: nnx.to_pure_dict(epoch_jit(graphdef, state0, Xs, ys)[0]),
    nnx.to_pure_dict(state_loop),
    rtol=1e-4,
    atol=1e-6,
    hint="return the final carry of jax.lax.scan (the state after K steps), not the state passed in",
)


def traced_once():
    # A Python loop over the batches unrolls K copies of the step into the program;
    # lax.scan traces the step once and puts one scan (a loop) in the jaxpr.
    jaxpr = str(jax.make_jaxpr(train_epoch_scan, static_argnums=0)(graphdef, state0, Xs, ys))
    assert "scan[" in jaxpr or "while[" in jaxpr, "the jaxpr of the epoch has no scan or while loop"


check(
    "scan-epoch",
    traced_once,
    hint="use jax.lax.scan: a Python for loop in JAX unrolls K copies of the step into one long program",
)

# %%
# HIDDEN TESTS: scan-epoch points=3
### BEGIN HIDDEN TESTS
fused = jax.jit(train_epoch_scan, static_argnums=0)
state_scan, losses_scan = fused(graphdef, state0, Xs, ys)
assert losses_scan.shape == (S.k_steps,), losses_scan.shape
assert_close(
    nnx.to_pure_dict(state_scan), nnx.to_pure_dict(state_loop), rtol=1e-4, atol=1e-6,
    name="state after the fused epoch",
)
jaxpr = str(jax.make_jaxpr(train_epoch_scan, static_argnums=0)(graphdef, state0, Xs, ys))
assert "scan[" in jaxpr, "use jax.lax.scan (a Python loop unrolls K copies of the step)"
# A second call with the same shapes reuses the compiled program.
with timing.no_recompile("a second fused epoch"):
    jax.block_until_ready(fused(graphdef, state_scan, Xs, ys))
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 5 · An evaluation loop that agrees
#
# Write `accuracy_torch(model, X, y, batch_size)` and `accuracy_jax(model, X, y, batch_size)`:
# the fraction of correct predictions, the `argmax` of the logits, evaluated in batches of
# `batch_size` **including the last, smaller batch**, returned as a Python `float`. Compute no
# gradients in PyTorch. `X` is NCHW for PyTorch and NHWC for JAX, and `y` holds integer
# labels. About 5 lines each.

# %%
# EXERCISE: evaluate
def accuracy_torch(model, X: torch.Tensor, y: torch.Tensor, batch_size: int) -> float:
    """Accuracy over all of X, evaluated batch_size images at a time."""
    ### BEGIN SOLUTION
    correct = 0
    with torch.no_grad():
        for start in range(0, len(y), batch_size):
            logits = model(X[start : start + batch_size])
            correct += (logits.argmax(dim=1) == y[start : start + batch_size]).sum().item()
    return correct / len(y)
    ### END SOLUTION


def accuracy_jax(model, X: jax.Array, y: jax.Array, batch_size: int) -> float:
    """Accuracy over all of X, evaluated batch_size images at a time."""
    ### BEGIN SOLUTION
    correct = 0
    for start in range(0, len(y), batch_size):
        logits = forward(model, X[start : start + batch_size])
        correct += int((logits.argmax(axis=-1) == y[start : start + batch_size]).sum())
    return correct / len(y)
    ### END SOLUTION


# %%
# TESTS: evaluate points=2
model_eval = convert.cnn_torch_to_nnx(model_torch, abstract_nnx_cnn())
X_test_torch, y_test_torch = torch.from_numpy(split.X_test), torch.from_numpy(split.y_test)
X_test_jax, y_test_jax = jnp.asarray(data.nchw_to_nhwc(split.X_test)), jnp.asarray(split.y_test)
with torch.no_grad():
    expected_acc = float((model_torch(X_test_torch).argmax(dim=1).numpy() == split.y_test).mean())


def batchwise(batch_size, drop_last=False):
    """The test accuracy as two wrong loops would compute it, for naming their slips."""
    with torch.no_grad():
        right = (model_torch(X_test_torch).argmax(dim=1) == y_test_torch).double()
    stop = len(right) - len(right) % batch_size if drop_last else len(right)
    chunks = [right[i : min(i + batch_size, stop)] for i in range(0, stop, batch_size)]
    return float(torch.cat(chunks).mean()) if drop_last else float(np.mean([c.mean() for c in chunks]))


def both_accuracies():
    got = {"accuracy_torch": accuracy_torch(model_torch, X_test_torch, y_test_torch, 100),  # last batch: 59
           "accuracy_jax": accuracy_jax(model_eval, X_test_jax, y_test_jax, 100)}
    for name, acc in got.items():
        assert isinstance(acc, float), (
            f"{name} returned a {type(acc).__module__}.{type(acc).__name__}, not a Python float: "
            "convert the result with float(...)"
        )
        if abs(acc - expected_acc) <= 1e-12:
            continue
        if abs(acc - batchwise(100, drop_last=True)) <= 1e-6:
            raise AssertionError(f"{name} left out the last, smaller batch (59 of the 359 images): "
                                 "do not drop the last batch, count all its images")
        if abs(acc - batchwise(100)) <= 1e-6:
            raise AssertionError(f"{name} averaged the batches' accuracies, but the last batch holds 59 "
                                 "images, not 100: divide the correct count by the number of images, not of batches")
        raise AssertionError(f"{name} returned {acc:.6f}; the test accuracy is {expected_acc:.6f}")
    return tuple(got.values())


def builds_no_graph():
    # A forward hook records whether each PyTorch forward pass built an autograd graph.
    graph_built = []
    hook = model_torch.register_forward_hook(lambda m, inp, out: graph_built.append(out.requires_grad))
    try:
        accuracy_torch(model_torch, X_test_torch[:10], y_test_torch[:10], 4)
    finally:
        hook.remove()
    assert graph_built, "accuracy_torch never called the model"
    assert not any(graph_built), "accuracy_torch's forward passes built an autograd graph (outputs require grad)"


check("evaluate", both_accuracies, (expected_acc, expected_acc), rtol=0, atol=1e-12,
      crash_hint="the logits are (batch, classes): a prediction is the largest logit over the classes "
                 "(the last axis), one per image, not over the batch")
check(
    "evaluate",
    builds_no_graph,
    hint="PyTorch records an autograd graph for every forward pass outside torch.no_grad(): evaluate without one",
)

# %%
# HIDDEN TESTS: evaluate points=3
### BEGIN HIDDEN TESTS
params_before = copy.deepcopy(dict(model_torch.named_parameters()))
graph_built = []
hook = model_torch.register_forward_hook(lambda m, inp, out: graph_built.append(out.requires_grad))
for n, bs in [(359, 64), (17, 5), (10, 32), (1, 1)]:
    Xt, yt = X_test_torch[:n], y_test_torch[:n]
    with torch.no_grad():
        oracle_acc = float((model_torch(Xt).argmax(dim=1) == yt).double().mean())
    got_t = accuracy_torch(model_torch, Xt, yt, bs)
    got_j = accuracy_jax(model_eval, X_test_jax[:n], y_test_jax[:n], bs)
    assert_close((got_t, got_j), (oracle_acc, oracle_acc), rtol=0, atol=1e-12, name=f"n={n}, bs={bs}")
hook.remove()
assert graph_built and not any(graph_built), "compute no gradients: evaluate under torch.no_grad()"
assert all(p.grad is None for p in model_torch.parameters()), "compute no gradients"
for name, p in model_torch.named_parameters():
    assert torch.equal(p, params_before[name]), f"{name} changed during evaluation"
### END HIDDEN TESTS

# %% [markdown]
# ## Done
#
# You ported a CNN's weights, proved two training steps equal, fused an epoch into one
# program, and evaluated both models identically. Lesson 05 distributes the same training step
# over several devices.
