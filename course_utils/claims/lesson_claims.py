"""The claims lessons judge that ``course claims`` does not run (no benchmark of their own).

Lessons 09, 10 and 11 each add theirs above their own comment line.
This module imports only :mod:`course_utils.claims.sources` and
:mod:`course_utils.claims.verdict_rule`.
"""

from __future__ import annotations

from course_utils.claims.sources import SOURCES
from course_utils.claims.verdict_rule import Claim, Pairing

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
