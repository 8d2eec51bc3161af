"""The claims: what each source article said, and where each claim can be measured.

:data:`CLAIMS` lists every claim in the order the report shows them.
:data:`FRAMEWORKS` says which frameworks each claim's benchmark runs (both must
reach a device kind for a paired claim), and :data:`ONLY_ON` which claims are
measured on some device kinds only, and why. This module imports only
:mod:`course_utils.claims.verdicts`.
"""

from __future__ import annotations

from course_utils.claims.verdicts import Claim

SOURCES = {
    "000": "000 (2026 selection guide)",
    "001": "001 (PyTorch 2.0 vs JAX for decision makers)",
    "004": "004 (is JAX autodiff faster?)",
}

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
