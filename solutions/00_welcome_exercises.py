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
# # 00 · Exercises: welcome and timing discipline
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/00_welcome_exercises.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/00_welcome_exercises.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=solutions/00_welcome_exercises.ipynb)
#
# Three short exercises on what lesson 00 showed. Replace each
# `raise NotImplementedError()` with your code, then run the check cell below it.
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
SIZES = {"n": (1500, 400)}  # name: (full, smoke)
VARIANT = None  # exercise 2's arrays: None is the default; your own copy names yours

# %%
from course_utils import env

SETUP = env.setup(one_kind=True)  # first: JAX's memory policy, JAX first, float32 in both,
# and one device kind for both (PyTorch stays on the CPU on a TPU: so does JAX, to compare)

import math
import time

import jax
import jax.numpy as jnp
import numpy as np
import torch

from course_utils import config, timing, variants
from course_utils.exercises import check

S = config.sizes(SIZES, SMOKE)
MY = variants.use(VARIANT)  # when the instructor grades: the variant of your id, whatever VARIANT says
MY


# %% [markdown]
# ## Exercise 1 · A timer that waits (JAX)
#
# `time_call(fn, *args)` must return the seconds one call of `fn(*args)` takes, **including
# the computation**, not just its dispatch. `fn` may return one array or any pytree of
# arrays, such as a tuple or a dict: wait for every leaf. Use `time.perf_counter()`. About 4
# lines.

# %%
# EXERCISE: sync-timer
def time_call(fn, *args) -> float:
    """Seconds for one call of fn(*args), waiting until every output leaf is computed."""
    ### BEGIN SOLUTION
    start = time.perf_counter()
    out = fn(*args)
    jax.block_until_ready(out)
    return time.perf_counter() - start
    ### END SOLUTION


# %%
# TESTS: sync-timer points=2
rng = np.random.default_rng(0)
a = jnp.asarray(rng.standard_normal((S.n, S.n), dtype=np.float32))
chain = jax.jit(lambda a: a @ a @ a @ a)
chain(a).block_until_ready()  # compile first


def _seconds(t) -> float:
    assert isinstance(t, float | int) and not isinstance(t, bool), (
        f"time_call must return seconds as a float, not a {type(t).__name__}"
    )
    return float(t)


def _timed(fn, *args) -> float:
    """Your timer's reading; an assertion a library raised inside it is your code's error."""
    try:
        t = time_call(fn, *args)
    except AssertionError as err:  # e.g. torch.cuda on a machine without CUDA
        raise RuntimeError(f"{type(err).__name__}: {err}") from err
    return _seconds(t)


def _nap(seconds):
    time.sleep(seconds)  # a known duration, immune to CPU load (it can only run longer)
    return jnp.zeros(())


def _synchronised(fn, *args) -> float:
    """The fastest of three calls, each timed until every leaf of its output is ready."""
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        best = min(best, time.perf_counter() - start)
    return best


def _timer_is_plausible():
    short = min(_timed(_nap, 0.005) for _ in range(3))
    long = _timed(_nap, 0.08)  # one is enough: a sleep can only run longer
    assert 0.08 <= long < 10 and long - short > 0.04, (
        f"your timer says {short!r} s for a 5 ms sleep and {long!r} s for an 80 ms one"
    )


def _fastest_pair(fn, rounds=6):
    """The synchronised time and the student's timer, fastest of each, in turns.

    A busy machine only lengthens calls, but not evenly: the reference's three calls can
    all land in a busy spell. So while the student's timer reads under 0.3 of the
    reference, both are timed again, taking turns, up to ``rounds`` times; each minimum
    can only fall towards the work's real time. A timer that does not wait reads the
    dispatch, a small fraction of the work, however often it is retimed.
    """
    reference = _synchronised(fn, a)
    yours = min(_timed(fn, a) for _ in range(3))
    for _ in range(rounds):
        if yours >= 0.3 * reference:
            break
        reference = min(reference, _synchronised(fn, a))
        yours = min(yours, _timed(fn, a))
    return reference, yours


def _ratio_to_synchronised(fn, what):
    reference, yours = _fastest_pair(fn)
    assert yours >= 0.3 * reference, (
        f"for {what}, your timer says {timing.format_seconds(yours)} but the synchronised "
        f"time is {timing.format_seconds(reference)}"
    )


def cheap_first(a):
    """A tuple whose first leaf is ready at once (the input itself) and whose second is the real work."""
    return a, chain(a)


jax.block_until_ready(cheap_first(a))  # compile first


def _timer_crash(err) -> str:
    if "cuda" in str(err).lower():
        return "PyTorch's synchronize waits for PyTorch's own GPU work, never for JAX's: wait for JAX's output"
    if isinstance(err, AttributeError):
        return "JAX: a tuple or dict output has no method of its own to wait with; wait for every leaf of the pytree"
    return ""


check("sync-timer", _timer_is_plausible, crash_hint=_timer_crash,
      hint="return the wall-clock seconds of one call as a float, as time.perf_counter() differences are")
check("sync-timer", lambda: _ratio_to_synchronised(chain, "one array"), crash_hint=_timer_crash,
      hint="JAX: a call returns once its work is queued, before its arrays are computed; "
      "stop the clock only after waiting for the output")
check("sync-timer", lambda: _ratio_to_synchronised(cheap_first, "a tuple output"), crash_hint=_timer_crash,
      hint="JAX: this output is a tuple whose first leaf is ready at once; wait for every leaf, not one")

# %%
# HIDDEN TESTS: sync-timer points=3
### BEGIN HIDDEN TESTS
pair = jax.jit(lambda a: (a[0, 0], a @ a @ a @ a))
pair(a)[1].block_until_ready()
reference, yours = _fastest_pair(pair)
assert yours >= 0.3 * reference, "time_call must wait for every leaf of a tuple output"
assert isinstance(time_call(chain, a), float)
naps = {s: min(_seconds(time_call(lambda t: {"z": _nap(t)}, s)) for _ in range(n)) for s, n in ((0.005, 2), (0.06, 1))}
assert 0.06 <= naps[0.06] < 10 and naps[0.06] - naps[0.005] > 0.03, f"implausible timings: {naps}"
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2 · Port a layer from PyTorch to JAX
#
# Here is a two-layer MLP in PyTorch. Write `mlp_jax` so that it computes **the same**
# function for the same arrays. `X` is `(batch, d_in)`, `W1` is `(d_in, d_hidden)`, `b1` is
# `(d_hidden,)` and `W2` is `(d_hidden, d_out)`. Two to three lines. Watch the defaults: the
# check compares with PyTorch to 1e-5, and runs your function under `jax.jit`, so stay in
# `jax.numpy`.
#
# The arrays are your own. A copy of this notebook your instructor made for you draws them
# from your variant, named in the line `your variant: …` under the setup cell. So your
# classmates' expected outputs are not yours. The tests draw them again, from the variant of
# the id you hand the notebook in under.

# %%
def mlp_torch(X, W1, b1, W2):
    return torch.nn.functional.gelu(X @ W1 + b1) @ W2


SHAPES = [(8, 16), (16, 32), (32,), (32, 4)]  # X, W1, b1, W2
X_np, W1_np, b1_np, W2_np = MY.normal(*SHAPES)  # your variant's arrays
expected = mlp_torch(*(torch.from_numpy(v) for v in (X_np, W1_np, b1_np, W2_np)))


# %%
# EXERCISE: port-mlp
def mlp_jax(X, W1, b1, W2):
    """The same two-layer GELU MLP as mlp_torch, in jax.numpy."""
    ### BEGIN SOLUTION
    return jax.nn.gelu(X @ W1 + b1, approximate=False) @ W2
    ### END SOLUTION


# %%
# TESTS: port-mlp points=2
arrays = variants.current().normal(*SHAPES)  # your variant's, drawn again
check(
    "port-mlp",
    lambda: jax.jit(mlp_jax)(*(jnp.asarray(v) for v in arrays)),  # one compile, not one per op
    mlp_torch(*(torch.from_numpy(v) for v in arrays)),
    rtol=1e-5,
    atol=1e-5,
    hint="jax.nn.gelu and PyTorch's gelu are not the same function by default: read both "
    "docstrings. Then check that the bias is added inside the activation",
    crash_hint=lambda err: "a NumPy or SciPy function was given a traced array: under jax.jit, use "
    "jax.numpy's and jax.nn's functions" if isinstance(err, jax.errors.TracerArrayConversionError)
    else "the shapes do not line up: W1 is already (d_in, d_hidden) here, unlike the (out, in) "
    "weight of PyTorch's nn.Linear",
)

# %%
# HIDDEN TESTS: port-mlp points=3
### BEGIN HIDDEN TESTS
from course_utils.parity import assert_close

args = [v * 3 for v in variants.current().normal((5, 16), (16, 32), (32,), (32, 2), stream=42)]
assert_close(
    jax.jit(mlp_jax)(*(jnp.asarray(v) for v in args)),
    mlp_torch(*(torch.from_numpy(v) for v in args)),
    rtol=1e-5,
    atol=1e-4,
    name="mlp",
)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 3 · When does compiling pay off?
#
# A compiled function costs `first_call_s` the first time and `steady_s` per call after. The
# eager version costs `eager_s` every call. Return the smallest number of calls `n ≥ 1` for
# which compiling is no slower in total:
#
# $$ \text{first} + (n - 1)\,\text{steady} \le n \cdot \text{eager}
#    \iff n \ge \frac{\text{first} - \text{steady}}{\text{eager} - \text{steady}} $$
#
# Return `math.inf` when the compiled steady state is not faster than eager. About 4 lines.

# %%
# EXERCISE: break-even
def break_even_calls(first_call_s: float, steady_s: float, eager_s: float) -> float:
    """Smallest n >= 1 with first + (n-1)*steady <= n*eager, or math.inf if never."""
    ### BEGIN SOLUTION
    gain = eager_s - steady_s
    if gain <= 0:
        return math.inf
    return max(1, math.ceil((first_call_s - steady_s) / gain))
    ### END SOLUTION


# %%
# TESTS: break-even points=2
hint = ("compiled, n calls cost first + (n - 1) * steady (the first call also computes); "
        "eager, n * eager; and when steady is not below eager, compiling never pays: math.inf")
check("break-even", lambda: break_even_calls(0.8, 0.01, 0.02), 79, hint=hint)
check("break-even", lambda: break_even_calls(1.0, 0.5, 0.4), math.inf, hint=hint)
check("break-even", lambda: break_even_calls(1.0, 0.125, 0.5), 3,
      hint="n is a whole number of calls, the smallest that satisfies the inequality: "
      "round up, never to the nearest or down")
check("break-even", lambda: break_even_calls(0.125, 0.25, 0.5), 1,
      hint="n >= 1: when the first compiled call already costs less than an eager one, "
      "one call is enough (your formula gave fewer)")
hint = "when steady equals eager, compiling never pays: math.inf, without dividing by zero"
check("break-even", lambda: break_even_calls(0.5, 0.25, 0.25), math.inf, hint=hint, crash_hint=hint)

# %%
# HIDDEN TESTS: break-even points=3
### BEGIN HIDDEN TESTS
for first, steady, eager in [(0.5, 0.001, 0.002), (0.01, 0.01, 0.02), (2.0, 0.1, 1.0), (0.3, 0.2, 0.2)]:
    n = break_even_calls(first, steady, eager)
    assert isinstance(n, int | float), f"return a number, not a {type(n).__name__}"
    n = float(n)  # a plain number: its own == and < are not trusted
    if eager <= steady:
        assert n == math.inf
        continue
    assert first + (n - 1) * steady <= n * eager + 1e-12, (first, steady, eager, n)
    assert n == 1 or first + (n - 2) * steady > (n - 1) * eager, (first, steady, eager, n)
### END HIDDEN TESTS

# %% [markdown]
# ## Done
#
# Compare your `break_even_calls(first, steady, steady * speed)` with the break-even that
# `timing.compile_report` prints in lesson 00, *speed* being its *per call* factor. Then move
# on to lesson 01, design philosophy.
