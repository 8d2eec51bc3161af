"""Wrong answers to solutions/00_welcome_exercises.py."""

SYNC_ONLY_OUT = """
def time_call(fn, *args) -> float:
    start = time.perf_counter()
    out = fn(*args)
    out.block_until_ready()  # a tuple or dict has no block_until_ready
    return time.perf_counter() - start
"""

MILLISECONDS = """
def time_call(fn, *args) -> float:
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    return (time.perf_counter() - start) * 1000  # milliseconds, not seconds
"""

NO_SYNC = """
def time_call(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)  # measures the dispatch only
    return time.perf_counter() - start
"""

BREAK_EVEN_NO_FIRST = """
def break_even_calls(first_call_s: float, steady_s: float, eager_s: float) -> float:
    if eager_s <= steady_s:
        return math.inf
    return math.ceil(first_call_s / (eager_s - steady_s))  # forgets the first call also computes
"""

BREAK_EVEN_NEVER_ZERO = """
def break_even_calls(first_call_s: float, steady_s: float, eager_s: float) -> float:
    return math.ceil((first_call_s - steady_s) / (eager_s - steady_s))  # no "never"
"""

GELU_DEFAULT = """
def mlp_jax(X, W1, b1, W2):
    return jax.nn.gelu(X @ W1 + b1) @ W2  # JAX's default is the tanh approximation
"""

GELU_SIGMOID = """
def mlp_jax(X, W1, b1, W2):
    h = X @ W1 + b1
    return (h * jax.nn.sigmoid(1.702 * h)) @ W2  # the sigmoid approximation of GELU
"""

BREAK_EVEN_ROUND = """
def break_even_calls(first_call_s: float, steady_s: float, eager_s: float) -> float:
    gain = eager_s - steady_s
    if gain <= 0:
        return math.inf
    return max(1, round((first_call_s - steady_s) / gain))  # to the nearest, not up
"""

BREAK_EVEN_NO_MAX = """
def break_even_calls(first_call_s: float, steady_s: float, eager_s: float) -> float:
    gain = eager_s - steady_s
    if gain <= 0:
        return math.inf
    return math.ceil((first_call_s - steady_s) / gain)  # 0 when the first call is cheap
"""

BREAK_EVEN_STRICT = """
def break_even_calls(first_call_s: float, steady_s: float, eager_s: float) -> float:
    gain = eager_s - steady_s
    if gain < 0:  # equal costs divide by zero
        return math.inf
    return max(1, math.ceil((first_call_s - steady_s) / gain))
"""

PROCESS_TIME = """
def time_call(fn, *args) -> float:
    start = time.process_time()  # CPU time of this process: a sleep or a device wait is free
    jax.block_until_ready(fn(*args))
    return time.process_time() - start
"""

TRANSPOSED_W1 = """
def mlp_jax(X, W1, b1, W2):
    return jax.nn.gelu(X @ W1.T + b1, approximate=False) @ W2  # nn.Linear's (out, in) habit
"""

HUGE_CONSTANT = """
def time_call(fn, *args) -> float:
    return 1e9  # measures nothing
"""

PLAUSIBLE_CONSTANT = """
def time_call(fn, *args) -> float:
    return 0.05  # a plausible number, measured nowhere
"""

LYING_FLOAT = """
def time_call(fn, *args) -> float:
    class F(float):  # compares as whatever a check wants
        __ge__ = __le__ = __lt__ = __gt__ = lambda s, o: True

    return F(0.0)
"""

WRONG = {
    "sync-timer": [
        ("syncs only a single-array output", SYNC_ONLY_OUT, "every leaf"),
        ("returns milliseconds", MILLISECONDS, "for an 80 ms one"),
        ("does not synchronise", NO_SYNC, "after waiting for the output"),
        ("CPU time (time.process_time)", PROCESS_TIME, "for an 80 ms one"),
        ("a huge constant", HUGE_CONSTANT, "for an 80 ms one"),
        ("a plausible constant", PLAUSIBLE_CONSTANT, "for an 80 ms one"),
        (
            "a float subclass whose comparisons all hold",
            LYING_FLOAT,
            "for an 80 ms one",
        ),
    ],
    "break-even": [
        (
            "forgets that the first call also computes",
            BREAK_EVEN_NO_FIRST,
            "first call",
        ),
        ("never answers 'never'", BREAK_EVEN_NEVER_ZERO, "math.inf"),
        ("rounds to the nearest call", BREAK_EVEN_ROUND, "round up"),
        ("no n >= 1 floor", BREAK_EVEN_NO_MAX, "one call is enough"),
        (
            "divides by zero when steady equals eager",
            BREAK_EVEN_STRICT,
            "without dividing",
        ),
    ],
    "port-mlp": [
        (
            "jax.nn.gelu's default (tanh) approximation",
            GELU_DEFAULT,
            "gelu are not the same",
        ),
        ("the sigmoid approximation of GELU", GELU_SIGMOID, "gelu are not the same"),
        ("transposes W1 as for nn.Linear", TRANSPOSED_W1, "(d_in, d_hidden)"),
    ],
}

BIAS_AFTER_GELU = """
def mlp_jax(X, W1, b1, W2):
    return (jax.nn.gelu(X @ W1, approximate=False) + b1) @ W2  # the bias outside the activation
"""

WRONG["port-mlp"] += [
    (
        "the bias added after the GELU",
        BIAS_AFTER_GELU,
        "bias is added inside the activation",
    ),
]

SCIPY_ERF = """
def mlp_jax(X, W1, b1, W2):
    from scipy.special import erf  # NumPy's world: works eagerly, not under jax.jit

    h = X @ W1 + b1
    return (0.5 * h * (1 + erf(h / math.sqrt(2)))) @ W2
"""

WRONG["port-mlp"] += [
    ("an exact GELU from SciPy's erf", SCIPY_ERF, "under jax.jit"),
]

FIRST_LEAF_ONLY = """
def time_call(fn, *args) -> float:
    start = time.perf_counter()
    out = fn(*args)
    jax.tree.leaves(out)[0].block_until_ready()  # the first leaf only
    return time.perf_counter() - start
"""

TORCH_SYNC = """
def time_call(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    torch.cuda.synchronize()  # PyTorch's habit: waits for PyTorch's GPU work, not JAX's
    return time.perf_counter() - start
"""

NANOSECONDS = """
def time_call(fn, *args) -> float:
    start = time.perf_counter_ns()
    jax.block_until_ready(fn(*args))
    return time.perf_counter_ns() - start  # nanoseconds, not seconds
"""

BREAK_EVEN_NO_CEIL = """
def break_even_calls(first_call_s: float, steady_s: float, eager_s: float) -> float:
    gain = eager_s - steady_s
    if gain <= 0:
        return math.inf
    return max(1, (first_call_s - steady_s) / gain)  # a fraction of a call
"""

WRONG["sync-timer"] += [
    ("waits for the first leaf only", FIRST_LEAF_ONLY, "wait for every leaf, not one"),
    (
        "torch.cuda.synchronize for a JAX output",
        TORCH_SYNC,
        "PyTorch's synchronize waits",
    ),
    ("returns nanoseconds", NANOSECONDS, "for an 80 ms one"),
]
WRONG["break-even"] += [
    ("no rounding: a fraction of a call", BREAK_EVEN_NO_CEIL, "round up"),
]
