"""The benchmarks behind ``course claims``: one compact measurement per popular claim.

Both frameworks run on the CPU (JAX's default device is pinned to it while a
benchmark runs), so every ratio compares the same hardware; only the memory
claim needs, and uses, a GPU.

Every benchmark first checks that the variants it compares compute the same
result (``timing.compare`` does it, or an explicit ``assert_close``), then
returns ratio samples oriented so that a larger ratio favours the claim:
paired per-round ratios from ``timing.compare``'s interleaved rounds, or
repeated first-call measurements. Sizes come in ``(full, smoke)`` pairs.

Models are the course's own: the transformer encoder of
:mod:`course_utils.migration`, the CNN of :mod:`course_utils.models`, the
CartPole step of :mod:`course_utils.cartpole`.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from course_utils.claims import (
    SOURCES,
    Claim,
    Measured,
    NotTestable,
    SkippedInSmoke,
    paired_ratios,
)

CLAIMS: tuple[Claim, ...] = (
    Claim(
        "higher-order",
        "JAX computes batched higher-order derivatives faster than PyTorch "
        "(third derivative of sin(x²)+exp(cos x))",
        SOURCES["004"], "8x (1 ms vs 8 ms)",
        "PyTorch eager autograd time / JAX jit(vmap(grad³)) time", 1.0,
    ),
    Claim(
        "vmap-simulation",
        "jax.vmap makes batched RL environment simulation faster than PyTorch",
        SOURCES["004"], "2.3x (3200 vs 1400 FPS)",
        "fastest PyTorch batched CartPole step / JAX vmap + jit step", 1.0,
    ),
    Claim(
        "first-call",
        "A jitted model's first call costs far more than later calls (compile warm-up)",
        SOURCES["004"] + "; " + SOURCES["001"], "~80x (~800 ms then ~10 ms)",
        "first call / steady-state call, jax.jit encoder at batch 1 (≥10x counts)", 10.0,
    ),
    Claim(
        "compile-matmul",
        "torch.compile speeds models up 1.5–2x: a matmul-bound MLP",
        SOURCES["004"], "1.5–2x",
        "eager time / torch.compile time", 1.5,
    ),
    Claim(
        "compile-fusion",
        "torch.compile speeds models up 1.5–2x: a fusion-bound elementwise chain",
        SOURCES["004"], "1.5–2x",
        "eager time / torch.compile time", 1.5,
    ),
    Claim(
        "compile-training",
        "torch.compile speeds up training by 20–30% (the articles' small CNN)",
        SOURCES["000"], "1.2–1.3x",
        "eager train step / train step with torch.compile(model)", 1.2,
    ),
    Claim(
        "batch1-latency",
        "After warm-up, JAX beats PyTorch at batch-1 inference on CPU (small encoder)",
        SOURCES["004"], "1.5x (15 ms vs 10 ms)",
        "PyTorch eager latency / JAX jit latency, CPU", 1.0,
    ),
    Claim(
        "dynamic-shapes",
        "When input shapes keep changing, recompilation makes JAX slower than eager PyTorch",
        SOURCES["004"], "JAX slower (qualitative)",
        "JAX jit time / PyTorch eager time over a stream of new sequence lengths", 1.0,
    ),
    Claim(
        "train-throughput",
        "JAX trains a transformer faster than PyTorch (tokens/s)",
        SOURCES["004"], "1.23x (+23% tokens/s, GPT-2 on 4×A100)",
        "PyTorch eager train step / JAX jit train step, small encoder", 1.0,
    ),
    Claim(
        "train-memory",
        "JAX needs less memory than PyTorch for a training step",
        SOURCES["004"], "1.22x (−18% memory, GPT-2 on 4×A100)",
        "PyTorch peak step memory / JAX step temporaries, on a GPU", 1.0,
    ),
    Claim(
        "tpu-llm",
        "JAX trains large transformers 5–15% faster on TPU clusters",
        SOURCES["000"], "1.05–1.15x",
        "tokens/s JAX / tokens/s PyTorch on a TPU pod", 1.05,
    ),
    Claim(
        "huge-scale",
        "At >1000 accelerators JAX saves about 20% of training time",
        SOURCES["001"], "1.25x (−20% time)",
        "PyTorch training time / JAX training time at >1000 accelerators", 1.2,
    ),
)


class _Ctx:
    """Sizes and timing targets for one mode."""

    def __init__(self, smoke: bool) -> None:
        self.smoke = smoke
        self.target_s = 0.2 if smoke else 1.0

    def size(self, full: Any, smoke: Any) -> Any:
        return smoke if self.smoke else full


def measure(claim_id: str, *, smoke: bool) -> Measured:
    """Run the benchmark for ``claim_id`` (raises NotTestable / SkippedInSmoke where due)."""
    fn = _BENCHMARKS.get(claim_id)
    if fn is None:
        raise KeyError(f"no benchmark for claim {claim_id!r}; claims: {[c.id for c in CLAIMS]}")
    import jax

    # Same hardware for both frameworks: PyTorch's tensors here live on the CPU, so JAX's
    # do too, even where JAX's default device is an accelerator.
    with jax.default_device(jax.devices("cpu")[0]):
        return fn(_Ctx(smoke))


def _compare_ratios(cmp: Any, numerator: str, denominator: str) -> list[float]:
    return paired_ratios(cmp.measurements[numerator].times, cmp.measurements[denominator].times)


def _medians(cmp: Any) -> dict[str, float]:
    return {name: m.median for name, m in cmp.measurements.items()}


# ------------------------------------------------------- higher-order derivatives


def third_derivative_analytic(x: np.ndarray) -> np.ndarray:
    """d³/dx³ [sin(x²) + exp(cos x)] in float64, the oracle."""
    x = np.asarray(x, dtype=np.float64)
    s2, c2 = np.sin(x**2), np.cos(x**2)
    return -12 * x * s2 - 8 * x**3 * c2 + np.exp(np.cos(x)) * np.sin(x) * (
        3 * np.cos(x) + 1 - np.sin(x) ** 2
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
        (g1,) = torch.autograd.grad(y, x, create_graph=True)  # gradient of the sum is f'
        (g2,) = torch.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = torch.autograd.grad(g2.sum(), x)
        return g3

    def f(x):
        return jnp.sin(x**2) + jnp.exp(jnp.cos(x))

    third_jax = jax.jit(jax.vmap(jax.grad(jax.grad(jax.grad(f)))))
    xt, xj = torch.from_numpy(x_np), jnp.asarray(x_np)
    assert_close(third_jax(xj), third_derivative_analytic(x_np), rtol=1e-3, atol=1e-3, name="jax f'''")
    cmp = timing.compare(
        {"PyTorch eager": lambda: third_torch(xt), "JAX jit": lambda: third_jax(xj)},
        rtol=1e-4, atol=1e-3, target_s=ctx.target_s,
    )
    return Measured(
        _compare_ratios(cmp, "PyTorch eager", "JAX jit"),
        f"{n:,} points; PyTorch eager autograd vs jax.jit, the article's pairing "
        "(lesson 02 also times compiled vs compiled, where the answer can differ); "
        "both checked against the analytic f'''",
        {"median_s": _medians(cmp), "jax_first_call_s": cmp.measurements["JAX jit"].first_call_s},
    )


# ------------------------------------------------------------ vmap simulation


def _vmap_simulation(ctx: _Ctx) -> Measured:
    from course_utils import cartpole, timing

    n = ctx.size(10_000, 2_000)
    v = cartpole.fps_variants(n, seed=0)
    names = ["JAX vmap + jit", "PyTorch torch.func.vmap", "PyTorch hand-batched"]
    cmp = timing.compare({k: v[k] for k in names}, rtol=1e-5, atol=1e-5, target_s=ctx.target_s)
    med = _medians(cmp)
    best = min(names[1:], key=med.get)
    return Measured(
        _compare_ratios(cmp, best, "JAX vmap + jit"),
        f"{n:,} CartPole environments, one step; PyTorch's fastest: {best}",
        {"median_s": med, "env_steps_per_s": {k: n / t for k, t in med.items()}},
    )


# ------------------------------------------------------------- the encoder


_ENCODERS: dict[bool, Any] = {}


def _encoder_setup(ctx: _Ctx):
    """A TorchEncoder/NNXEncoder pair with equal weights on the CPU, and its sizes."""
    if ctx.smoke not in _ENCODERS:
        from course_utils.migration import BlockConfig, make_pair

        sizes = ctx.size(
            {"d_model": 128, "n_heads": 4, "d_ff": 512, "n_layers": 4, "seq": 64},
            {"d_model": 32, "n_heads": 2, "d_ff": 64, "n_layers": 1, "seq": 16},
        )
        cfg = BlockConfig(sizes["d_model"], sizes["n_heads"], sizes["d_ff"], dropout=0.0)
        tm, jm = make_pair(cfg, seed=0, encoder=True, vocab=1000, max_len=128,
                           n_layers=sizes["n_layers"], num_classes=2)
        _ENCODERS[ctx.smoke] = (tm, jm, sizes)
    return _ENCODERS[ctx.smoke]


def _cpu_forward(nnx_model: Any):
    """``(jitted forward(state, x), state)`` with the state on JAX's CPU device."""
    import jax

    from course_utils.checklist import jit_forward

    forward, state = jit_forward(nnx_model)
    return forward, jax.device_put(state, jax.devices("cpu")[0])


def _tokens(batch: int, seq: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 1000, (batch, seq)).astype(np.int32)


def _first_call(ctx: _Ctx) -> Measured:
    import jax

    from course_utils import timing

    tm, jm, sizes = _encoder_setup(ctx)
    tokens = jax.device_put(_tokens(1, sizes["seq"]), jax.devices("cpu")[0])
    jax.clear_caches()  # nothing compiled before may serve this first call
    forward, state = _cpu_forward(jm)
    report = timing.compile_report(forward, state, tokens, eager=False, target_s=ctx.target_s)
    steady = report.steady.median
    firsts = [report.first_call_s]
    for _ in range(ctx.size(4, 1)):  # more cold first calls, for a spread
        jax.clear_caches()
        fresh, _ = _cpu_forward(jm)
        start = time.perf_counter()
        fresh(state, tokens).block_until_ready()
        firsts.append(time.perf_counter() - start)
    return Measured(
        [f / steady for f in firsts],
        f"{sizes['n_layers']}-layer encoder, d_model {sizes['d_model']}, "
        f"first call {timing.format_seconds(float(np.median(firsts)))}, "
        f"steady {timing.format_seconds(steady)}",
        {"first_calls_s": firsts, "steady_s": steady, "trace_s": report.trace_s,
         "lower_s": report.lower_s, "compile_s": report.compile_s},
    )


def _batch1_latency(ctx: _Ctx) -> Measured:
    import jax
    import torch

    from course_utils import timing

    tm, jm, sizes = _encoder_setup(ctx)
    tok_np = _tokens(1, sizes["seq"], seed=1)
    tok_t = torch.from_numpy(tok_np)
    tok_j = jax.device_put(tok_np, jax.devices("cpu")[0])
    forward, state = _cpu_forward(jm)

    def torch_forward():
        with torch.inference_mode():
            return tm(tok_t)

    cmp = timing.compare(
        {"PyTorch eager": torch_forward, "JAX jit": lambda: forward(state, tok_j)},
        rtol=1e-4, atol=1e-5, target_s=ctx.target_s,
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
    cpu = jax.devices("cpu")[0]
    stream = [_tokens(1, n, seed=n) for n in lengths]
    stream_t = [torch.from_numpy(t) for t in stream]
    stream_j = [jax.device_put(t, cpu) for t in stream]
    _, state = _cpu_forward(jm)

    def torch_stream():
        with torch.inference_mode():
            return [tm(t) for t in stream_t]

    def jax_stream():
        jax.clear_caches()  # a fresh process meeting these lengths for the first time
        forward, _ = _cpu_forward(jm)
        return [forward(state, t) for t in stream_j]

    cmp = timing.compare(
        {"JAX jit, new shapes": jax_stream, "PyTorch eager": torch_stream},
        rtol=1e-4, atol=1e-5, rounds=3, target_s=ctx.target_s,
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
        rtol=1e-4, atol=1e-4, target_s=ctx.target_s,
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
    ws = [torch.randn(d, d, generator=g) / d**0.5 for _ in range(3)]
    x = torch.randn(batch, d, generator=g)

    def mlp(x):
        for w in ws:
            x = torch.relu(x @ w)
        return x

    return _compile_pair(ctx, mlp, x, f"3 layers of {d}x{d} matmul + ReLU, batch {batch}")


def _compile_fusion(ctx: _Ctx) -> Measured:
    import torch

    n = ctx.size(4_000_000, 1_000_000)
    x = torch.randn(n, generator=torch.Generator().manual_seed(0))

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
    eager_model = TorchCNN()
    compiled_source = copy.deepcopy(eager_model)
    compiled_model = torch.compile(compiled_source)
    batch = 256
    g = torch.Generator().manual_seed(1)
    X, y = torch.rand(batch, 1, 8, 8, generator=g), torch.randint(0, 10, (batch,), generator=g)

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
            "torch.compile(model)": make_step(compiled_model, compiled_source.parameters()),
        },
        rtol=1e-4, atol=1e-5, target_s=ctx.target_s,
    )
    med = _medians(cmp)
    first = cmp.measurements["torch.compile(model)"].first_call_s
    return Measured(
        _compare_ratios(cmp, "eager", "torch.compile(model)"),
        f"course CNN, batch {batch}, AdamW; first compiled step {timing.format_seconds(first)}",
        {"median_s": med, "compiled_first_call_s": first},
    )


# ------------------------------------------------------------- training step


def _train_steps(ctx: _Ctx, batch: int):
    """Equal-start train steps (AdamW, cross-entropy) of the encoder in both frameworks."""
    import jax
    import optax
    import torch
    from flax import nnx

    tm, jm, sizes = _encoder_setup(ctx)
    tm, jm = copy.deepcopy(tm), nnx.clone(jm)
    tok = _tokens(batch, sizes["seq"], seed=2)
    labels = np.random.default_rng(3).integers(0, 2, batch)
    lr, wd = 1e-3, 0.01

    tok_t, lab_t = torch.from_numpy(tok), torch.from_numpy(labels)
    opt = torch.optim.AdamW(tm.parameters(), lr=lr, weight_decay=wd)

    def torch_step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(tm(tok_t), lab_t)
        loss.backward()
        opt.step()
        return loss.detach()

    graphdef, params, rest = nnx.split(jm, nnx.Param, ...)
    tx = optax.adamw(lr, weight_decay=wd)

    @jax.jit
    def jax_train_step(params, opt_state, tok, labels):
        def loss_fn(p):
            logits = nnx.merge(graphdef, p, rest)(tok)
            return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    box = {"params": params, "opt": tx.init(params)}
    tok_j, lab_j = jax.numpy.asarray(tok), jax.numpy.asarray(labels)

    def jax_step():
        box["params"], box["opt"], loss = jax_train_step(box["params"], box["opt"], tok_j, lab_j)
        return loss

    return torch_step, jax_step, jax_train_step, box, (tok_j, lab_j), sizes


def _train_throughput(ctx: _Ctx) -> Measured:
    from course_utils import timing

    batch = ctx.size(32, 8)
    torch_step, jax_step, *_, sizes = _train_steps(ctx, batch)
    cmp = timing.compare(
        {"PyTorch eager": torch_step, "JAX jit": jax_step},
        rtol=1e-4, atol=1e-5, target_s=ctx.target_s,
    )
    med = _medians(cmp)
    tokens = batch * sizes["seq"]
    return Measured(
        _compare_ratios(cmp, "PyTorch eager", "JAX jit"),
        f"AdamW step, batch {batch} x {sizes['seq']} tokens: PyTorch "
        f"{tokens / med['PyTorch eager']:,.0f} tokens/s, JAX {tokens / med['JAX jit']:,.0f} tokens/s",
        {"median_s": med},
    )


def _train_memory(ctx: _Ctx) -> Measured:
    import jax
    import torch

    if not torch.cuda.is_available() or jax.default_backend() != "gpu":
        raise NotTestable(
            "needs a CUDA GPU for both frameworks: PyTorch keeps no peak-allocation counter "
            "for CPU tensors, so the two cannot be compared on this machine"
        )
    try:  # pragma: no cover - needs a GPU
        return _train_memory_gpu(ctx)
    except Exception as err:  # pragma: no cover - report, do not crash the table
        raise NotTestable(f"the GPU measurement failed: {type(err).__name__}: {err}"[:200]) from err


def _train_memory_gpu(ctx: _Ctx) -> Measured:  # pragma: no cover - needs a GPU
    """Bytes a training step allocates beyond the model and optimizer state, on the GPU."""
    import jax
    import torch

    batch = ctx.size(32, 8)
    _, _, jax_train_step, box, (tok_j, lab_j), sizes = _train_steps(ctx, batch)
    tm, _, _ = _encoder_setup(ctx)
    tm = copy.deepcopy(tm).cuda()
    opt = torch.optim.AdamW(tm.parameters(), lr=1e-3, weight_decay=0.01)
    tok_t = torch.from_numpy(_tokens(batch, sizes["seq"], seed=2)).cuda()
    lab_t = torch.from_numpy(np.random.default_rng(3).integers(0, 2, batch)).cuda()

    def step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(tm(tok_t), lab_t).backward()
        opt.step()

    step()  # creates the optimizer state
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    step()
    torch.cuda.synchronize()
    torch_bytes = torch.cuda.max_memory_allocated() - base
    gpu = jax.devices("gpu")[0]
    args = jax.device_put((box["params"], box["opt"], tok_j, lab_j), gpu)
    analysis = jax_train_step.lower(*args).compile().memory_analysis()
    jax_bytes = analysis.temp_size_in_bytes + analysis.output_size_in_bytes - analysis.alias_size_in_bytes
    return Measured(
        [torch_bytes / jax_bytes],
        f"encoder AdamW step, batch {batch}: PyTorch peak {torch_bytes / 2**20:.1f} MiB above "
        f"the model and optimizer state, JAX {jax_bytes / 2**20:.1f} MiB (temporaries + outputs)",
        {"torch_bytes": torch_bytes, "jax_bytes": jax_bytes},
    )


# ------------------------------------------------------------- not testable


def _tpu_llm(ctx: _Ctx) -> Measured:
    raise NotTestable("needs a TPU pod and a large language model; this command runs on one machine in minutes")


def _huge_scale(ctx: _Ctx) -> Measured:
    raise NotTestable("needs more than 1000 accelerators; lesson 05 measures data parallelism on simulated devices")


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
