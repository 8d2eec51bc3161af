"""The benchmarks behind ``course claims``: one compact measurement per popular claim.

:func:`measure` runs a benchmark on one device kind (a
:class:`~course_utils.claims.core.DeviceTarget` from :func:`detect_devices`): JAX's
default device and PyTorch's tensors are both on that kind, so a ratio always
compares the same hardware, and a claim whose frameworks cannot both reach it
is "not testable here", with the reason. Float32 matmuls run at "highest"
precision in both frameworks (:func:`matched_precision`, no TF32 on CUDA), and
the measurement records the precision, dtype and threads it ran with. The
memory claim needs a CUDA GPU: it compares the two allocators' peaks, with JAX
donating its parameters and optimizer state as an in-place PyTorch step does.

Every benchmark first checks that the variants it compares compute the same
result (``timing.compare`` does it, or an explicit ``assert_close``), then
returns ratio samples oriented so that a larger ratio favours the claim:
paired per-round ratios from ``timing.compare``'s interleaved rounds, or
repeated first-call measurements. Sizes come in ``(full, smoke)`` pairs.

Models are the course's own: the transformer encoder of
:mod:`course_utils.models.transformer`, the CNN of :mod:`course_utils.models`, the
CartPole step of :mod:`course_utils.cartpole`.
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from course_utils.claims.core import (
    SOURCES,
    Claim,
    DevicePlan,
    DeviceTarget,
    Measured,
    NotTestable,
    SkippedInSmoke,
    paired_ratios,
    plan_devices,
    why_not_testable,
)

CLAIMS: tuple[Claim, ...] = (
    Claim(
        "higher-order",
        "JAX computes batched higher-order derivatives faster than PyTorch "
        "(third derivative of sin(x²)+exp(cos x))",
        SOURCES["004"],
        "8x (1 ms vs 8 ms)",
        "PyTorch eager autograd time / JAX jit(vmap(grad³)) time",
        1.0,
    ),
    Claim(
        "vmap-simulation",
        "jax.vmap makes batched RL environment simulation faster than PyTorch",
        SOURCES["004"],
        "2.3x (3200 vs 1400 FPS)",
        "fastest PyTorch batched CartPole step / JAX vmap + jit step",
        1.0,
    ),
    Claim(
        "first-call",
        "A jitted model's first call costs far more than later calls (compile warm-up)",
        SOURCES["004"] + "; " + SOURCES["001"],
        "~80x (~800 ms then ~10 ms)",
        "first call / steady-state call, jax.jit encoder at batch 1 (≥10x counts)",
        10.0,
    ),
    Claim(
        "compile-matmul",
        "torch.compile speeds models up 1.5–2x: a matmul-bound MLP",
        SOURCES["004"],
        "1.5–2x",
        "eager time / torch.compile time",
        1.5,
    ),
    Claim(
        "compile-fusion",
        "torch.compile speeds models up 1.5–2x: a fusion-bound elementwise chain",
        SOURCES["004"],
        "1.5–2x",
        "eager time / torch.compile time",
        1.5,
    ),
    Claim(
        "compile-training",
        "torch.compile speeds up training by 20–30% (the articles' small CNN)",
        SOURCES["000"],
        "1.2–1.3x",
        "eager train step / train step with torch.compile(model)",
        1.2,
    ),
    Claim(
        "batch1-latency",
        "After warm-up, JAX beats PyTorch at batch-1 inference on CPU (small encoder)",
        SOURCES["004"],
        "1.5x (15 ms vs 10 ms)",
        "PyTorch eager latency / JAX jit latency, CPU",
        1.0,
    ),
    Claim(
        "dynamic-shapes",
        "When input shapes keep changing, recompilation makes JAX slower than eager PyTorch",
        SOURCES["004"],
        "JAX slower (qualitative)",
        "JAX jit time / PyTorch eager time over a stream of new sequence lengths",
        1.0,
    ),
    Claim(
        "train-throughput",
        "JAX trains a transformer faster than PyTorch (tokens/s)",
        SOURCES["004"],
        "1.23x (+23% tokens/s, GPT-2 on 4×A100)",
        "PyTorch eager train step / JAX jit train step, small encoder",
        1.0,
    ),
    Claim(
        "train-memory",
        "JAX needs less memory than PyTorch for a training step",
        SOURCES["004"],
        "1.22x (−18% memory, GPT-2 on 4×A100)",
        "PyTorch / JAX step peak (resident params, Adam state and batch + the allocator's "
        "peak above them), on a GPU, JAX donating its state",
        1.0,
    ),
    Claim(
        "tpu-llm",
        "JAX trains large transformers 5–15% faster on TPU clusters",
        SOURCES["000"],
        "1.05–1.15x",
        "tokens/s JAX / tokens/s PyTorch on a TPU pod",
        1.05,
    ),
    Claim(
        "huge-scale",
        "At >1000 accelerators JAX saves about 20% of training time",
        SOURCES["001"],
        "1.25x (−20% time)",
        "PyTorch training time / JAX training time at >1000 accelerators",
        1.2,
    ),
)


# Which frameworks each benchmark runs: both must reach a device kind for a paired claim.
BOTH = ("torch", "jax")
FRAMEWORKS: dict[str, tuple[str, ...]] = {
    "higher-order": BOTH,
    "vmap-simulation": BOTH,
    "first-call": ("jax",),
    "compile-matmul": ("torch",),
    "compile-fusion": ("torch",),
    "compile-training": ("torch",),
    "batch1-latency": BOTH,
    "dynamic-shapes": BOTH,
    "train-throughput": BOTH,
    "train-memory": BOTH,
    "tpu-llm": BOTH,
    "huge-scale": BOTH,
}

# Claims measured on some device kinds only: (kinds, why).
ONLY_ON: dict[str, tuple[tuple[str, ...], str]] = {
    "batch1-latency": (
        ("cpu",),
        "the article's claim is about batch-1 inference on a CPU",
    ),
    "train-memory": (
        ("gpu",),
        "it compares the two allocators' peak counters, and "
        "PyTorch keeps none for CPU tensors and has no TPU device without torch_xla",
    ),
}

DTYPE = "float32"
PRECISION = "highest"


class _Ctx:
    """Sizes, timing targets and the device kind for one measurement."""

    def __init__(self, smoke: bool, target: DeviceTarget | None = None) -> None:
        self.smoke = smoke
        self.target_s = 0.2 if smoke else 1.0
        self.target = target or DeviceTarget("cpu")

    def size(self, full: Any, smoke: Any) -> Any:
        return smoke if self.smoke else full

    @property
    def jax_device(self) -> Any:
        """JAX's device of the target's kind (the CPU for a PyTorch-only target)."""
        import jax

        return jax.devices(self.target.kind if self.target.jax else "cpu")[0]

    @property
    def torch_device(self) -> Any:
        import torch

        return torch.device(self.target.torch or "cpu")

    def jax_put(self, x: Any) -> Any:
        import jax

        return jax.device_put(x, self.jax_device)

    def torch_put(self, x: Any) -> Any:
        import torch

        t = x if isinstance(x, torch.Tensor) else torch.from_numpy(np.asarray(x))
        return t.to(self.torch_device)


def detect_devices(requested: str = "all") -> DevicePlan:
    """The device kinds to measure on: ``jax.devices()`` and ``torch.cuda.is_available()``."""
    import importlib.util

    import jax

    from course_utils.env import accelerator_kind

    jax_kinds: set[str] = set()
    names: dict[str, str] = {}
    with contextlib.suppress(RuntimeError):  # JAX_PLATFORMS may leave the CPU out
        jax.devices("cpu")
        jax_kinds.add("cpu")
    default = jax.devices()[0]
    kind = accelerator_kind(default.platform)
    if kind != "cpu":
        jax_kinds.add(kind)
        names[kind] = str(default.device_kind)
    torch_kinds: set[str] = set()
    try:
        import torch
    except ImportError:  # pragma: no cover - the course installs torch
        pass
    else:
        torch_kinds.add("cpu")
        if torch.cuda.is_available():
            torch_kinds.add("gpu")
            if "gpu" not in names:
                names["gpu"] = torch.cuda.get_device_name(0)
    return plan_devices(
        requested,
        jax_kinds=jax_kinds,
        torch_kinds=torch_kinds,
        names=names,
        torch_xla=importlib.util.find_spec("torch_xla") is not None,
    )


@contextlib.contextmanager
def matched_precision(torch_cuda: bool = False) -> Iterator[dict[str, Any]]:
    """Float32 matmuls at "highest" precision in both frameworks; restored on exit.

    JAX: ``jax.default_matmul_precision("highest")`` (its default is TF32 on
    recent NVIDIA GPUs and bfloat16 passes on TPU). PyTorch:
    ``torch.set_float32_matmul_precision("highest")``, and on CUDA no TF32 in
    matmuls or cuDNN convolutions. Yields what is in force, for the record.
    """
    import jax
    import torch

    saved = torch.get_float32_matmul_precision()
    cuda, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
    saved_tf32 = (cuda.allow_tf32, cudnn.allow_tf32) if torch_cuda else None
    with jax.default_matmul_precision(PRECISION):
        try:
            torch.set_float32_matmul_precision(PRECISION)
            if torch_cuda:
                cuda.allow_tf32 = False
                cudnn.allow_tf32 = False
            record: dict[str, Any] = {
                "jax_matmul": jax.config.jax_default_matmul_precision,
                "torch_matmul": torch.get_float32_matmul_precision(),
            }
            if torch_cuda:
                record["torch_cuda_tf32"] = cuda.allow_tf32
                record["torch_cudnn_tf32"] = cudnn.allow_tf32
            yield record
        finally:
            torch.set_float32_matmul_precision(saved)
            if saved_tf32 is not None:
                cuda.allow_tf32, cudnn.allow_tf32 = saved_tf32


def measure(
    claim_id: str, *, smoke: bool, target: DeviceTarget | None = None
) -> Measured:
    """Run the benchmark for ``claim_id`` on ``target`` (default: the CPU).

    Raises NotTestable when the claim's frameworks cannot both run on the
    target's device kind, or the benchmark needs what is absent; SkippedInSmoke
    where due.
    """
    fn = _BENCHMARKS.get(claim_id)
    if fn is None:
        raise KeyError(
            f"no benchmark for claim {claim_id!r}; claims: {[c.id for c in CLAIMS]}"
        )
    target = target or DeviceTarget("cpu")
    kinds, kinds_why = ONLY_ON.get(claim_id, ((), ""))
    why = why_not_testable(target, FRAMEWORKS[claim_id], kinds, kinds_why)
    if why:
        raise NotTestable(why)
    import jax

    from course_utils import timing

    ctx = _Ctx(smoke, target)
    # Same device kind for both frameworks: JAX's default device is the target's,
    # and the benchmarks put PyTorch's tensors on ctx.torch_device.
    with (
        jax.default_device(ctx.jax_device),
        matched_precision(target.torch == "cuda") as prec,
    ):
        m = fn(ctx)
        m.conditions = {
            "device": target.kind,
            "device_name": target.name,
            "frameworks": list(FRAMEWORKS[claim_id]),
            "precision": prec,
            "dtype": DTYPE,
            "threads": timing.thread_settings(),
        }
    return m


def _compare_ratios(cmp: Any, numerator: str, denominator: str) -> list[float]:
    return paired_ratios(
        cmp.measurements[numerator].times, cmp.measurements[denominator].times
    )


def _medians(cmp: Any) -> dict[str, float]:
    return {name: m.median for name, m in cmp.measurements.items()}


# ------------------------------------------------------- higher-order derivatives


def third_derivative_analytic(x: np.ndarray) -> np.ndarray:
    """d³/dx³ [sin(x²) + exp(cos x)] in float64, the oracle."""
    x = np.asarray(x, dtype=np.float64)
    s2, c2 = np.sin(x**2), np.cos(x**2)
    return (
        -12 * x * s2
        - 8 * x**3 * c2
        + np.exp(np.cos(x)) * np.sin(x) * (3 * np.cos(x) + 1 - np.sin(x) ** 2)
    )


def _higher_order(ctx: _Ctx) -> Measured:
    import jax
    import jax.numpy as jnp
    import torch

    from course_utils import timing
    from course_utils.parity import assert_close

    n = ctx.size(100_000, 2_000)
    x_np = np.linspace(-2.0, 2.0, n, dtype=np.float32)

    def third_torch(x):
        x = x.detach().requires_grad_(True)
        y = (torch.sin(x**2) + torch.exp(torch.cos(x))).sum()  # elementwise f, so the
        (g1,) = torch.autograd.grad(
            y, x, create_graph=True
        )  # gradient of the sum is f'
        (g2,) = torch.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = torch.autograd.grad(g2.sum(), x)
        return g3

    def f(x):
        return jnp.sin(x**2) + jnp.exp(jnp.cos(x))

    third_jax = jax.jit(jax.vmap(jax.grad(jax.grad(jax.grad(f)))))
    xt, xj = ctx.torch_put(x_np), ctx.jax_put(x_np)
    assert_close(
        third_jax(xj),
        third_derivative_analytic(x_np),
        rtol=1e-3,
        atol=1e-3,
        name="jax f'''",
    )
    cmp = timing.compare(
        {"PyTorch eager": lambda: third_torch(xt), "JAX jit": lambda: third_jax(xj)},
        rtol=1e-4,
        atol=1e-3,
        target_s=ctx.target_s,
    )
    return Measured(
        _compare_ratios(cmp, "PyTorch eager", "JAX jit"),
        f"{n:,} points; PyTorch eager autograd vs jax.jit, the article's pairing "
        "(lesson 02 also times compiled vs compiled, where the answer can differ); "
        "both checked against the analytic f'''",
        {
            "median_s": _medians(cmp),
            "jax_first_call_s": cmp.measurements["JAX jit"].first_call_s,
        },
    )


# ------------------------------------------------------------ vmap simulation


def _vmap_simulation(ctx: _Ctx) -> Measured:
    from course_utils import cartpole, timing

    n = ctx.size(10_000, 2_000)
    v = cartpole.fps_variants(
        n, seed=0, torch_device=ctx.torch_device
    )  # JAX: default device
    names = ["JAX vmap + jit", "PyTorch torch.func.vmap", "PyTorch hand-batched"]
    cmp = timing.compare(
        {k: v[k] for k in names}, rtol=1e-5, atol=1e-5, target_s=ctx.target_s
    )
    med = _medians(cmp)
    best = min(names[1:], key=med.get)
    return Measured(
        _compare_ratios(cmp, best, "JAX vmap + jit"),
        f"{n:,} CartPole environments, one step; PyTorch's fastest: {best}",
        {"median_s": med, "env_steps_per_s": {k: n / t for k, t in med.items()}},
    )


# ------------------------------------------------------------- the encoder


_ENCODERS: dict[Any, Any] = {}


def _encoder_setup(ctx: _Ctx):
    """A TorchEncoder/NNXEncoder pair with equal weights, and its sizes.

    The PyTorch model lives on ``ctx.torch_device``; the NNX model's state is put
    on ``ctx.jax_device`` by :func:`_jax_forward` and :func:`_train_steps`.
    """
    if ctx.smoke not in _ENCODERS:
        from course_utils.convert import make_pair
        from course_utils.models import BlockConfig

        sizes = ctx.size(
            {"d_model": 128, "n_heads": 4, "d_ff": 512, "n_layers": 4, "seq": 64},
            {"d_model": 32, "n_heads": 2, "d_ff": 64, "n_layers": 1, "seq": 16},
        )
        cfg = BlockConfig(
            sizes["d_model"], sizes["n_heads"], sizes["d_ff"], dropout=0.0
        )
        tm, jm = make_pair(
            cfg,
            seed=0,
            encoder=True,
            vocab=1000,
            max_len=128,
            n_layers=sizes["n_layers"],
            num_classes=2,
        )
        _ENCODERS[ctx.smoke] = (tm, jm, sizes)
    tm, jm, sizes = _ENCODERS[ctx.smoke]
    key = (ctx.smoke, str(ctx.torch_device))
    if key not in _ENCODERS:
        _ENCODERS[key] = copy.deepcopy(tm).to(ctx.torch_device)
    return _ENCODERS[key], jm, sizes


def _jax_forward(ctx: _Ctx, nnx_model: Any):
    """``(jitted forward(state, x), state)`` with the state on ``ctx.jax_device``."""
    from course_utils.checklist import jit_forward

    forward, state = jit_forward(nnx_model)
    return forward, ctx.jax_put(state)


def _tokens(batch: int, seq: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 1000, (batch, seq)).astype(np.int32)


def _first_call(ctx: _Ctx) -> Measured:
    import jax

    from course_utils import timing

    tm, jm, sizes = _encoder_setup(ctx)
    tokens = ctx.jax_put(_tokens(1, sizes["seq"]))
    jax.clear_caches()  # nothing compiled before may serve this first call
    forward, state = _jax_forward(ctx, jm)
    report = timing.compile_report(
        forward, state, tokens, eager=False, target_s=ctx.target_s
    )
    steady = report.steady.median
    firsts = [report.first_call_s]
    for _ in range(ctx.size(4, 1)):  # more cold first calls, for a spread
        jax.clear_caches()
        fresh, _ = _jax_forward(ctx, jm)
        start = time.perf_counter()
        fresh(state, tokens).block_until_ready()
        firsts.append(time.perf_counter() - start)
    return Measured(
        [f / steady for f in firsts],
        f"{sizes['n_layers']}-layer encoder, d_model {sizes['d_model']}, "
        f"first call {timing.format_seconds(float(np.median(firsts)))}, "
        f"steady {timing.format_seconds(steady)}",
        {
            "first_calls_s": firsts,
            "steady_s": steady,
            "trace_s": report.trace_s,
            "lower_s": report.lower_s,
            "compile_s": report.compile_s,
        },
    )


def _batch1_latency(ctx: _Ctx) -> Measured:
    import torch

    from course_utils import timing

    tm, jm, sizes = _encoder_setup(ctx)
    tok_np = _tokens(1, sizes["seq"], seed=1)
    tok_t, tok_j = ctx.torch_put(tok_np), ctx.jax_put(tok_np)
    forward, state = _jax_forward(ctx, jm)

    def torch_forward():
        with torch.inference_mode():
            return tm(tok_t)

    cmp = timing.compare(
        {"PyTorch eager": torch_forward, "JAX jit": lambda: forward(state, tok_j)},
        rtol=1e-4,
        atol=1e-5,
        target_s=ctx.target_s,
    )
    med = _medians(cmp)
    return Measured(
        _compare_ratios(cmp, "PyTorch eager", "JAX jit"),
        f"PyTorch {timing.format_seconds(med['PyTorch eager'])}, "
        f"JAX {timing.format_seconds(med['JAX jit'])} per sequence of {sizes['seq']} tokens",
        {"median_s": med},
    )


def _dynamic_shapes(ctx: _Ctx) -> Measured:
    import jax
    import torch

    from course_utils import timing

    tm, jm, sizes = _encoder_setup(ctx)
    lengths = ctx.size([16, 24, 40, 64], [8, 16])
    stream = [_tokens(1, n, seed=n) for n in lengths]
    stream_t = [ctx.torch_put(t) for t in stream]
    stream_j = [ctx.jax_put(t) for t in stream]
    _, state = _jax_forward(ctx, jm)

    def torch_stream():
        with torch.inference_mode():
            return [tm(t) for t in stream_t]

    def jax_stream():
        jax.clear_caches()  # a fresh process meeting these lengths for the first time
        forward, _ = _jax_forward(ctx, jm)
        return [forward(state, t) for t in stream_j]

    cmp = timing.compare(
        {"JAX jit, new shapes": jax_stream, "PyTorch eager": torch_stream},
        rtol=1e-4,
        atol=1e-5,
        rounds=3,
        target_s=ctx.target_s,
    )
    med = _medians(cmp)
    return Measured(
        _compare_ratios(cmp, "JAX jit, new shapes", "PyTorch eager"),
        f"{len(lengths)} sequence lengths, each seen once: JAX "
        f"{timing.format_seconds(med['JAX jit, new shapes'])}, PyTorch "
        f"{timing.format_seconds(med['PyTorch eager'])}",
        {"median_s": med, "lengths": lengths},
    )


# ------------------------------------------------------------- torch.compile


def _compile_pair(ctx: _Ctx, fn: Callable, x: Any, what: str) -> Measured:
    import torch

    from course_utils import timing

    compiled = torch.compile(fn)
    cmp = timing.compare(
        {"eager": lambda: fn(x), "torch.compile": lambda: compiled(x)},
        rtol=1e-4,
        atol=1e-4,
        target_s=ctx.target_s,
    )
    med = _medians(cmp)
    first = cmp.measurements["torch.compile"].first_call_s
    return Measured(
        _compare_ratios(cmp, "eager", "torch.compile"),
        f"{what}; first compiled call {timing.format_seconds(first)}",
        {"median_s": med, "compiled_first_call_s": first},
    )


def _compile_matmul(ctx: _Ctx) -> Measured:
    import torch

    d, batch = ctx.size((1024, 256), (512, 128))
    g = torch.Generator().manual_seed(0)
    ws = [ctx.torch_put(torch.randn(d, d, generator=g) / d**0.5) for _ in range(3)]
    x = ctx.torch_put(torch.randn(batch, d, generator=g))

    def mlp(x):
        for w in ws:
            x = torch.relu(x @ w)
        return x

    return _compile_pair(
        ctx, mlp, x, f"3 layers of {d}x{d} matmul + ReLU, batch {batch}"
    )


def _compile_fusion(ctx: _Ctx) -> Measured:
    import torch

    n = ctx.size(4_000_000, 1_000_000)
    x = ctx.torch_put(torch.randn(n, generator=torch.Generator().manual_seed(0)))

    def chain(x):  # eight elementwise passes in eager mode; one fused loop compiled
        y = torch.sin(x) * torch.cos(x) + torch.tanh(x) * torch.sigmoid(x)
        return torch.relu(y - 0.5 * x * x + torch.exp(-x.abs()))

    return _compile_pair(ctx, chain, x, f"elementwise chain over {n:,} floats")


def _compile_training(ctx: _Ctx) -> Measured:
    if ctx.smoke:
        raise SkippedInSmoke(
            "compiling a forward and backward pass costs tens of seconds on a small CPU; "
            "run `course claims` without --smoke"
        )
    import torch

    from course_utils import timing
    from course_utils.models import TorchCNN

    torch.manual_seed(0)
    eager_model = TorchCNN().to(ctx.torch_device)
    compiled_source = copy.deepcopy(eager_model)
    compiled_model = torch.compile(compiled_source)
    batch = 256
    g = torch.Generator().manual_seed(1)
    X = ctx.torch_put(torch.rand(batch, 1, 8, 8, generator=g))
    y = ctx.torch_put(torch.randint(0, 10, (batch,), generator=g))

    def make_step(model, params):
        opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01)

        def step():
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(X), y)
            loss.backward()
            opt.step()
            return loss.detach()

        return step

    cmp = timing.compare(
        {
            "eager": make_step(eager_model, eager_model.parameters()),
            "torch.compile(model)": make_step(
                compiled_model, compiled_source.parameters()
            ),
        },
        rtol=1e-4,
        atol=1e-5,
        target_s=ctx.target_s,
    )
    med = _medians(cmp)
    first = cmp.measurements["torch.compile(model)"].first_call_s
    return Measured(
        _compare_ratios(cmp, "eager", "torch.compile(model)"),
        f"course CNN, batch {batch}, AdamW; first compiled step {timing.format_seconds(first)}",
        {"median_s": med, "compiled_first_call_s": first},
    )


# ------------------------------------------------------------- training step


# Arguments of the JAX train step (params, opt_state, tokens, labels) it donates for
# the memory claim: the state a PyTorch step updates in place.
DONATED_ARGNUMS = (0, 1)


@dataclass
class _TrainPair:
    """Equal-start AdamW train steps of the encoder, PyTorch and JAX, on one device kind."""

    torch_step: Callable[[], Any]
    torch_model: Any
    torch_opt: Any
    torch_batch: tuple[Any, Any]
    jax_step: Callable[[], Any]
    jax_train_step: Any  # the jitted (params, opt_state, tokens, labels) -> (params, opt_state, loss)
    box: dict[str, Any]  # the JAX state: "params", "opt"
    jax_batch: tuple[Any, Any]
    sizes: dict[str, int]


def _train_steps(ctx: _Ctx, batch: int, *, donate: bool = False) -> _TrainPair:
    """Equal-start train steps (AdamW, cross-entropy) of the encoder in both frameworks.

    With ``donate``, the JAX step donates its parameters and optimizer state
    (:data:`DONATED_ARGNUMS`), so XLA writes the new ones into their buffers, as
    PyTorch's optimizer updates its tensors in place.
    """
    import jax
    import optax
    import torch
    from flax import nnx

    tm, jm, sizes = _encoder_setup(ctx)
    tm, jm = copy.deepcopy(tm), nnx.clone(jm)
    tok = _tokens(batch, sizes["seq"], seed=2)
    labels = np.random.default_rng(3).integers(0, 2, batch)
    lr, wd = 1e-3, 0.01

    tok_t, lab_t = ctx.torch_put(tok), ctx.torch_put(labels)
    opt = torch.optim.AdamW(tm.parameters(), lr=lr, weight_decay=wd)

    def torch_step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(tm(tok_t), lab_t)
        loss.backward()
        opt.step()
        return loss.detach()

    graphdef, params, rest = nnx.split(jm, nnx.Param, ...)
    params, rest = ctx.jax_put(params), ctx.jax_put(rest)
    tx = optax.adamw(lr, weight_decay=wd)

    def train_step(params, opt_state, tok, labels):
        def loss_fn(p):
            logits = nnx.merge(graphdef, p, rest)(tok)
            return optax.softmax_cross_entropy_with_integer_labels(
                logits, labels
            ).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    jax_train_step = jax.jit(
        train_step, donate_argnums=DONATED_ARGNUMS if donate else ()
    )
    box = {"params": params, "opt": ctx.jax_put(tx.init(params))}
    tok_j, lab_j = ctx.jax_put(tok), ctx.jax_put(labels.astype(np.int32))

    def jax_step():
        box["params"], box["opt"], loss = jax_train_step(
            box["params"], box["opt"], tok_j, lab_j
        )
        return loss

    return _TrainPair(
        torch_step,
        tm,
        opt,
        (tok_t, lab_t),
        jax_step,
        jax_train_step,
        box,
        (tok_j, lab_j),
        sizes,
    )


def _train_throughput(ctx: _Ctx) -> Measured:
    from course_utils import timing

    batch = ctx.size(32, 8)
    pair = _train_steps(ctx, batch)
    cmp = timing.compare(
        {"PyTorch eager": pair.torch_step, "JAX jit": pair.jax_step},
        rtol=1e-4,
        atol=1e-5,
        target_s=ctx.target_s,
    )
    med = _medians(cmp)
    tokens = batch * pair.sizes["seq"]
    return Measured(
        _compare_ratios(cmp, "PyTorch eager", "JAX jit"),
        f"AdamW step, batch {batch} x {pair.sizes['seq']} tokens: PyTorch "
        f"{tokens / med['PyTorch eager']:,.0f} tokens/s, JAX {tokens / med['JAX jit']:,.0f} tokens/s",
        {"median_s": med},
    )


# ---------------------------------------------------------------- memory


def step_memory_measured(
    *,
    torch_resident: int,
    torch_above: Sequence[int],
    jax_resident: int,
    jax_above: Sequence[int],
    donated_bytes: int,
    batch: int,
    tolerance: float = 0.05,
) -> Measured:
    """The memory claim's samples from what each framework's allocator reported.

    ``*_resident``: bytes of the parameters, Adam state and batch, counted from
    the arrays (:func:`course_utils.memory.tree_bytes`), alive before and after
    a step; ``*_above``: per round, how far the allocator's peak rose above what
    was live when the step began (gradients, activations, optimizer
    temporaries, and on the JAX side any output not written into a donated
    buffer). A framework's step peak is resident + above; each sample is
    PyTorch's over JAX's, round by round. The two resident sets must agree
    within ``tolerance``, or the comparison would not be like with like.
    """
    if len(torch_above) != len(jax_above) or not torch_above:
        raise ValueError(
            f"step_memory_measured: need equally many rounds, got "
            f"{len(torch_above)} and {len(jax_above)}"
        )
    if min(torch_resident, jax_resident) <= 0:
        raise ValueError("step_memory_measured: resident bytes must be positive")
    if min(*torch_above, *jax_above) < 0:
        raise ValueError(
            "step_memory_measured: a peak below the live bytes is a measuring error"
        )
    gap = abs(torch_resident - jax_resident) / max(torch_resident, jax_resident)
    if gap > tolerance:
        raise NotTestable(
            f"not like with like: the resident state differs by {gap:.0%} (PyTorch "
            f"{torch_resident:,} B, JAX {jax_resident:,} B)"
        )
    from course_utils.memory import format_bytes

    torch_peaks = [torch_resident + a for a in torch_above]
    jax_peaks = [jax_resident + a for a in jax_above]
    mid = len(torch_peaks) // 2
    return Measured(
        paired_ratios(torch_peaks, jax_peaks),
        f"encoder AdamW step, batch {batch}, float32: peak PyTorch "
        f"{format_bytes(sorted(torch_peaks)[mid])}, JAX {format_bytes(sorted(jax_peaks)[mid])} "
        f"(resident {format_bytes(torch_resident)} vs {format_bytes(jax_resident)}; JAX donates "
        f"{format_bytes(donated_bytes)} of parameters and Adam state)",
        {
            "torch_resident_bytes": torch_resident,
            "jax_resident_bytes": jax_resident,
            "torch_above_bytes": list(torch_above),
            "jax_above_bytes": list(jax_above),
            "jax_donated_bytes": donated_bytes,
            "method": "torch.cuda.max_memory_allocated after reset_peak_memory_stats; JAX "
            "peak_bytes_in_use with the live bytes first lifted to the earlier peak "
            "(memory.jax_peak_above)",
        },
    )


def _train_memory(ctx: _Ctx) -> Measured:
    if ctx.target.kind != "gpu" or ctx.target.torch != "cuda" or not ctx.target.jax:
        raise NotTestable(
            "measured on a CUDA GPU only, with both frameworks on it: "
            f"{ONLY_ON['train-memory'][1]}"
        )
    try:  # pragma: no cover - needs a GPU
        return _train_memory_gpu(ctx)
    except NotTestable:  # pragma: no cover
        raise
    except Exception as err:  # pragma: no cover - report, do not crash the table
        raise NotTestable(
            f"the GPU measurement failed: {type(err).__name__}: {err}"[:200]
        ) from err


def _train_memory_gpu(ctx: _Ctx) -> Measured:
    """Each allocator's peak over one encoder step, same batch and precision, on the GPU."""
    from course_utils import memory

    batch = ctx.size(32, 8)
    pair = _train_steps(ctx, batch, donate=True)
    pair.torch_step()  # creates the Adam state
    pair.jax_step()  # compiles, and replaces the state by the donated step's outputs
    pair.jax_step()

    def no_grads():  # PyTorch's step starts without gradients, as JAX's does
        pair.torch_opt.zero_grad(set_to_none=True)

    no_grads()
    torch_resident = memory.tree_bytes(
        (pair.torch_model, pair.torch_opt, pair.torch_batch)
    )
    jax_resident = memory.tree_bytes(
        (pair.box["params"], pair.box["opt"], pair.jax_batch)
    )
    torch_above, jax_above = [], []
    for _ in range(ctx.size(5, 3)):  # interleaved rounds
        torch_above.append(
            memory.torch_peak_above(
                pair.torch_step, before=no_grads, device=ctx.torch_device
            )
        )
        jax_above.append(memory.jax_peak_above(pair.jax_step, ctx.jax_device))
    donated = memory.tree_bytes([pair.box[k] for k in ("params", "opt")])
    return step_memory_measured(
        torch_resident=torch_resident,
        torch_above=torch_above,
        jax_resident=jax_resident,
        jax_above=jax_above,
        donated_bytes=donated,
        batch=batch,
    )


# ------------------------------------------------------------- not testable


def _tpu_llm(ctx: _Ctx) -> Measured:
    raise NotTestable(
        "needs a TPU pod and a large language model; this command runs on one machine in minutes"
    )


def _huge_scale(ctx: _Ctx) -> Measured:
    raise NotTestable(
        "needs more than 1000 accelerators; lesson 05 measures data parallelism on simulated devices"
    )


_BENCHMARKS: dict[str, Callable[[_Ctx], Measured]] = {
    "higher-order": _higher_order,
    "vmap-simulation": _vmap_simulation,
    "first-call": _first_call,
    "compile-matmul": _compile_matmul,
    "compile-fusion": _compile_fusion,
    "compile-training": _compile_training,
    "batch1-latency": _batch1_latency,
    "dynamic-shapes": _dynamic_shapes,
    "train-throughput": _train_throughput,
    "train-memory": _train_memory,
    "tpu-llm": _tpu_llm,
    "huge-scale": _huge_scale,
}
