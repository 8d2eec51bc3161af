"""The claims: what each source article said, and where each claim can be measured.

:data:`SOURCES` names the source articles (and the course's own questions) the
claims cite. :data:`CLAIMS` lists every claim ``course claims`` measures, in the
order the report shows them; :data:`LESSON_CLAIMS` the claims only lessons judge
(no benchmark of their own; lessons 09, 10 and 11 each add theirs above their own
comment line). :data:`FRAMEWORKS` says which frameworks each claim's benchmark
runs (both must reach a device kind for a paired claim; a claim of JAX alone
is measured on any device kind JAX reaches, a TPU included), and
:data:`ONLY_ON` which claims are measured on some device kinds only, and why.
This module imports only :mod:`course_utils.claims.verdict_rule`.
"""

from __future__ import annotations

from course_utils.claims.verdict_rule import (
    DOES_NOT_HOLD,
    Claim,
    Pairing,
)

SOURCES = {
    "000": 'article 000, "2026 selection guide"',
    "001": 'article 001, "PyTorch 2.0 vs JAX for decision makers"',
    "003": 'article 003, "design philosophy to migration"',
    "004": 'article 004, "is JAX autodiff faster?"',
    "course": "this course — a question the lessons ask, not an article's claim",
}

_UNFAIR = (
    "eager PyTorch against compiled JAX: two changes at once, framework and compiling"
)
_GRAD3 = (
    "the third derivative of sin(x²)+exp(cos x) at a batch of points, float32 "
    "(lesson 02, course claims)"
)
_BERT = (
    "a BERT-base-shaped encoder with random weights (12 layers, width 768, 12 heads, "
    "128 tokens), batch 1, on the CPU: the article's workload without the download"
)
_JIT = Pairing("jit", "JAX eager", "JAX jit")  # one change: compiling
_DENSE = (
    "a dense layer's matmul, bias and ReLU, then the mean-squared loss (batch 64, "
    "width 256, float32)"
)
_GRAD3_PAIRINGS = (
    Pairing("article", "PyTorch autograd (create_graph)", "JAX jit", False, _UNFAIR),
    Pairing("eager", "PyTorch torch.func (eager)", "JAX eager"),
    Pairing("compiled", "PyTorch torch.compile(torch.func)", "JAX jit"),
)

CLAIMS: tuple[Claim, ...] = (
    Claim(
        "higher-order",
        "JAX computes batched third derivatives in about 1 ms where PyTorch, differentiating "
        "by hand with autograd, takes 8 ms",
        SOURCES["004"],
        "8x (1 ms vs 8 ms)",
        "PyTorch time / JAX time for the same derivatives",
        8.0,
        workload="third derivatives of sin(x²)+exp(cos x), batched, hardware not stated",
        here=_GRAD3,
        pairings=_GRAD3_PAIRINGS,
    ),
    Claim(
        "jax-2-5x",
        "JAX is 2–5x faster on tasks such as higher-order derivatives",
        SOURCES["004"],
        "2–5x",
        "PyTorch time / JAX time for the same derivatives",
        2.0,
        high=5.0,
        workload="large matmuls, RL policy gradients and higher-order derivatives",
        here=_GRAD3,
        pairings=_GRAD3_PAIRINGS,
    ),
    Claim(
        "vmap-simulation",
        "jax.vmap makes batched RL environment simulation faster than PyTorch",
        SOURCES["004"],
        "2.3x (3200 vs 1400 FPS)",
        "PyTorch batched step time / JAX vmap + jit step time",
        2.3,
        workload="C51 on Atari with 64 environments, GPU",
        here="a CartPole step for a batch of environments, both frameworks (lesson 03, course claims)",
        pairings=(
            Pairing(
                "article",
                "PyTorch batched by hand (eager)",
                "JAX vmap + jit",
                False,
                _UNFAIR,
            ),
            Pairing(
                "compiled", "PyTorch batched by hand + torch.compile", "JAX vmap + jit"
            ),
            Pairing("eager", "PyTorch batched by hand (eager)", "JAX vmap (eager)"),
        ),
    ),
    Claim(
        "vmap-loop",
        "jax.vmap turns a loop over environments into batched array operations that "
        "jax.jit compiles into efficient kernels",
        SOURCES["004"],
        "faster than the loop (no number stated)",
        "JAX loop time / JAX vmap + jit time, same step (above 1: vmap faster)",
        1.0,
        workload="C51 on Atari with 64 environments, GPU",
        here="one CartPole step of the article's 64 environments: a Python loop calling "
        "the jitted one-environment step, against jax.jit(jax.vmap(step)) (lesson 03)",
        pairings=(Pairing("batching", "JAX loop (jit step)", "JAX vmap + jit"),),
    ),
    Claim(
        "eager-launch",
        "Eager PyTorch pays about 5–10 µs for every GPU kernel it launches",
        SOURCES["004"],
        "5–10 µs per kernel",
        "seconds per eager op on a GPU",
        5e-6,
        high=1e-5,
        unit="s",
        workload="one CUDA kernel launch from eager PyTorch",
        here="the time per op of a chain of tiny eager ops on a GPU; on a CPU there is no launch",
    ),
    Claim(
        "jit-speedup",
        "jax.jit's effect is very significant: XLA fuses operations, and compiling "
        "removes the Python interpreter's overhead (its loops, branches and type checks)",
        SOURCES["003"],
        "very significant (no number stated; read as at least 2x)",
        "eager JAX time / jax.jit time, same function (above 1: jit faster)",
        2.0,
        workload="JAX code in general (large-model training, scientific computing); "
        "no size or hardware stated",
        here="an explicit-Euler integration written as a Python loop: 32 steps of "
        "dx/dt = sin(x) - x on 4,096 floats",
        pairings=(_JIT,),
    ),
    Claim(
        "jit-fusion",
        "XLA merges several operations (a matmul, its activation, the loss) in one "
        "compilation, so fewer kernels are launched than eager execution's one per "
        "operation",
        SOURCES["004"],
        "faster than eager (no number stated)",
        "eager JAX time / jax.jit time, same function (above 1: jit faster)",
        1.0,
        workload="a matmul, its activation and the loss on a GPU, size not stated",
        here=f"{_DENSE}; the operations eager JAX dispatches and the kernels of XLA's "
        "optimised program are counted",
        pairings=(_JIT,),
    ),
    Claim(
        "first-call",
        "JAX's first jitted call of a BERT on the CPU takes about 800 ms (compiling)",
        SOURCES["004"],
        "~800 ms",
        "seconds for jax.jit's first call (trace + compile + run)",
        0.8,
        unit="s",
        workload="BERT inference at batch 1 on a CPU",
        here=_BERT,
        pairings=(Pairing("first", "a steady-state call", "JAX's first call"),),
    ),
    Claim(
        "warm-up",
        "Compiling makes the first run slow (compile warm-up), a start-up cost to count",
        SOURCES["001"],
        "the first run slower (no number stated)",
        "time of jax.jit's first call / time of a steady-state call (above 1: the "
        "first call slower)",
        1.0,
        workload="a model moved to a compiling framework (torch.compile or XLA); no "
        "size or hardware stated",
        here=f"{_DENSE} under jax.jit: a first call compiled afresh in every round, "
        "against a steady-state call",
        pairings=(Pairing("first", "JAX's first call", "a steady-state call"),),
    ),
    Claim(
        "batch1-latency",
        "After warm-up, JAX answers a batch-1 BERT query on the CPU faster than PyTorch (10 vs 15 ms)",
        SOURCES["004"],
        "1.5x (15 ms vs 10 ms)",
        "PyTorch latency / JAX jit latency",
        1.5,
        workload="BERT inference at batch 1 on a CPU",
        here=_BERT,
        pairings=(
            Pairing("article", "PyTorch eager", "JAX jit", False, _UNFAIR),
            Pairing("compiled", "torch.compile", "JAX jit"),
        ),
    ),
    Claim(
        "dynamic-shapes",
        "When input shapes keep changing, recompilation makes JAX slower than eager PyTorch",
        SOURCES["004"],
        "JAX slower (no number stated)",
        "JAX jit time / PyTorch eager time over a stream of new sequence lengths",
        1.0,
        workload="a model whose input length changes on every call",
        here="the course's small encoder over a stream of new sequence lengths (lesson 08, course claims)",
        pairings=(
            Pairing(
                "article",
                "JAX jit, new lengths",
                "PyTorch eager",
                False,
                "the claim itself pairs eager PyTorch with compiled JAX",
            ),
        ),
    ),
    Claim(
        "scan-compile",
        "Rewriting a recurrent network's loop as jax.lax.scan increases compile time by "
        "20 %",
        SOURCES["004"],
        "1.2x (+20 % compile time)",
        "time to trace and compile the lax.scan version / the loop it replaces, in "
        "Python, which jax.jit unrolls (the article names no baseline, and its other "
        "side, eager PyTorch, compiles nothing); above 1: lax.scan slower to compile",
        1.2,
        workload="a recurrent network whose hidden size follows its input, rewritten "
        "with static shapes as jax.lax.scan; length, sizes and hardware not stated",
        here="a tanh recurrent cell (batch 8, input 32, hidden 64) over 16 steps "
        "(4 in smoke mode): a fresh jax.jit of each version traced, compiled and run "
        "once in every round",
        pairings=(
            Pairing(
                "rewrite", "compiling the lax.scan version", "compiling the Python loop"
            ),
        ),
    ),
    Claim(
        "compile-matmul",
        "torch.compile speeds models up 1.5–2x (proxy: a matmul-bound MLP)",
        SOURCES["004"],
        "1.5–2x",
        "eager time / torch.compile time",
        1.5,
        high=2.0,
        workload="CNNs and Transformers (Inductor backend), hardware not stated",
        here="a matmul-bound MLP: the part of a model a compiler has least to shorten",
        pairings=(Pairing("compile", "eager", "torch.compile"),),
        notes={
            DOES_NOT_HOLD: "Eager mode already runs each matmul in a tuned library kernel, "
            "and compiling leaves the matmuls to the same kind of kernel, so there is "
            "little to gain; what a compiled call adds (its guards and wrapper) can make "
            "it the slower one when the matmuls are small."
        },
    ),
    Claim(
        "compile-fusion",
        "torch.compile speeds models up 1.5–2x (proxy: a fusion-bound elementwise chain)",
        SOURCES["004"],
        "1.5–2x",
        "eager time / torch.compile time",
        1.5,
        high=2.0,
        workload="CNNs and Transformers (Inductor backend), hardware not stated",
        here="a chain of elementwise ops: the part of a model fusion shortens most",
        pairings=(Pairing("compile", "eager", "torch.compile"),),
    ),
    Claim(
        "compile-training",
        "torch.compile speeds up training by 20–30 % or more",
        SOURCES["000"],
        "1.2–1.3x",
        "eager train step / train step with torch.compile",
        1.2,
        high=1.3,
        workload="the article's small CNN training step, hardware not stated",
        here="the course's small CNN on 8×8 digits, one training step (lesson 04, course claims)",
        pairings=(Pairing("compile", "PyTorch eager", "torch.compile"),),
    ),
    Claim(
        "train-throughput",
        "JAX trains GPT-2 with 23 % more tokens/s than PyTorch",
        SOURCES["004"],
        "1.23x (+23 % tokens/s)",
        "PyTorch train step time / JAX jit train step time",
        1.23,
        workload="GPT-2 (124M) fine-tuning on 4×A100",
        here="a GPT-2-small-shaped encoder training step on one GPU (full mode); not on a CPU",
        pairings=(Pairing("article", "PyTorch eager", "JAX jit", False, _UNFAIR),),
    ),
    Claim(
        "train-memory",
        "JAX needs 18 % less memory than PyTorch for a GPT-2 training step",
        SOURCES["004"],
        "1.22x (−18 % memory)",
        "PyTorch / JAX step peak (resident params, Adam state and batch + the allocator's "
        "peak above them), on a GPU, JAX donating its state",
        1.22,
        workload="GPT-2 (124M) fine-tuning on 4×A100",
        here="the course's encoder training step on one GPU, peaks from each allocator",
    ),
    Claim(
        "tpu-llm",
        "JAX trains large transformers 5–15 % faster on TPU clusters",
        SOURCES["000"],
        "1.05–1.15x",
        "tokens/s JAX / tokens/s PyTorch on a TPU pod",
        1.05,
        high=1.15,
        workload="LLM training on a TPU cluster",
    ),
    Claim(
        "huge-scale",
        "At >1000 accelerators JAX saves about 20 % of training time",
        SOURCES["001"],
        "1.25x (−20 % time)",
        "PyTorch training time / JAX training time at >1000 accelerators",
        1.25,
        workload="training on more than 1000 accelerators",
    ),
)

# Claims lessons judge that ``course claims`` does not run (no benchmark of their own).
LESSON_CLAIMS: tuple[Claim, ...] = (
    Claim(
        "faster",
        "Which of two timed variants is faster",
        SOURCES["course"],
        "either way",
        "time of the first / time of the second (above 1: the second is faster)",
        1.0,
    ),
    Claim(
        "keras-native-speed",
        "Keras 3 runs one model on the JAX or the PyTorch backend without costing speed",
        SOURCES["003"],
        "no slower than the native framework (at least 0.9x its speed, within about 10 %)",
        "native time / Keras time, same model, same backend (above 1: Keras faster)",
        0.9,
        workload="one model written once in Keras 3, run on each backend",
        here="a small MLP, Keras 3 against the same model in the native framework (lesson 06)",
        pairings=(Pairing("same-backend", "native", "Keras"),),
    ),
    Claim(
        "same-cnn",
        "The article's SimpleCNN is the same model in its PyTorch and its Flax version",
        SOURCES["000"],
        "the same model",
        "the two versions' flatten sizes (and so their layers) agree",
        1.0,
        unit="fact",
    ),
    Claim(
        "ddp-full-replica",
        "DDP keeps a full replica on every device and all-reduces every gradient",
        SOURCES["003"],
        "every parameter's gradient all-reduced",
        "elements all-reduced / parameters",
        1.0,
        unit="fact",
    ),
    Claim(
        "sharding-from-specs",
        "JAX's sharding API lets the compiler place the work from PartitionSpecs alone",
        SOURCES["003"],
        "no code change beyond the specs",
        "the step compiles and matches the reference with only the specs changed",
        1.0,
        unit="fact",
    ),
    Claim(
        "pmap-pjit-needed",
        "JAX needs pmap for data parallelism and pjit for model parallelism",
        SOURCES["003"],
        "pmap and pjit required",
        "whether today's jax.jit with shardings does both",
        1.0,
        unit="fact",
    ),
    Claim(
        "dp-cheapest",
        "If the model fits on one device, data parallel is the cheapest strategy",
        SOURCES["003"],
        "least communication of the strategies",
        "bytes communicated per step, data parallel against the others",
        1.0,
        unit="fact",
    ),
    Claim(
        "bf16-tensor-cores",
        "bfloat16 mixed precision makes the matmuls of training several times faster on tensor cores",
        SOURCES["course"],
        "at least 2x on a GPU with tensor cores",
        "float32 time / bfloat16-autocast time, one matmul (above 1: bfloat16 faster)",
        2.0,
        workload="a large matmul on an NVIDIA GPU with tensor cores",
        here="a square matmul, float32 (TF32 off) against bfloat16 autocast, in PyTorch on CUDA (lesson 09)",
    ),
    # lesson 09's claims
    Claim(
        "fused-softmax-kernel",
        "A hand-written fused softmax kernel (Triton, Pallas) is faster than the framework's own softmax",
        SOURCES["course"],
        "faster than the built-in op",
        "built-in softmax time / custom kernel time, same device (above 1: the kernel faster)",
        1.0,
        workload="a row-softmax kernel written in Triton and in Pallas",
        here="lesson 10's softmax kernels on a GPU; on a CPU they run in interpreters",
        pairings=(
            Pairing("triton", "torch.softmax", "Triton kernel"),
            Pairing("pallas", "jax.nn.softmax", "Pallas kernel"),
        ),
    ),
    # lesson 10's claims
    # lesson 11's claims
)

_BY_ID = {c.id: c for c in CLAIMS + LESSON_CLAIMS}


def get(claim_id: str) -> Claim:
    """The registered claim with this id; KeyError lists the ids."""
    try:
        return _BY_ID[claim_id]
    except KeyError:
        raise KeyError(
            f"no claim {claim_id!r} in the registry; claims: {', '.join(_BY_ID)}"
        ) from None


# Which frameworks each benchmark runs: both must reach a device kind for a paired claim.
BOTH = ("torch", "jax")
FRAMEWORKS: dict[str, tuple[str, ...]] = {
    "higher-order": BOTH,
    "jax-2-5x": BOTH,
    "eager-launch": ("torch",),
    "vmap-simulation": BOTH,
    "first-call": ("jax",),
    # JAX alone: measured on any device kind JAX reaches, a TPU included
    "vmap-loop": ("jax",),
    "jit-speedup": ("jax",),
    "jit-fusion": ("jax",),
    "warm-up": ("jax",),
    "scan-compile": ("jax",),
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
    "eager-launch": (
        ("gpu",),
        "the article's 5–10 µs is the cost of launching a GPU kernel; a CPU launches none",
    ),
    "first-call": (
        ("cpu",),
        "the article's ~800 ms is a BERT's first call on a CPU",
    ),
    "batch1-latency": (
        ("cpu",),
        "the article's claim is about batch-1 inference on a CPU",
    ),
    "train-throughput": (
        ("gpu",),
        "the article's +23 % is GPT-2 training on A100 GPUs; a CPU run would judge another workload",
    ),
    "train-memory": (
        ("gpu",),
        "it compares the two allocators' peak counters, and "
        "PyTorch keeps none for CPU tensors and has no TPU device without torch_xla "
        "or TorchTPU",
    ),
}
