"""course_utils.memory: peak memory of a step, each number with its method."""

import os
import subprocess
import sys

import numpy as np
import pytest

from course_utils import memory

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def test_importing_memory_imports_no_framework():
    code = "import sys, course_utils.memory; print('torch' in sys.modules, 'jax' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize(
    "n, text",
    [
        (0, "0 B"),
        (512, "512 B"),
        (1536, "1.5 KiB"),
        (3 * 2**20, "3 MiB"),
        (-2048, "-2 KiB"),
        (1.234 * 2**20, "1.23 MiB"),
        (1023.7 * 2**10, "1024 KiB"),
        (3 * 2**40, "3 TiB"),
        (5000 * 2**40, "5000 TiB"),
    ],
)
def test_format_bytes(n, text):
    assert memory.format_bytes(n) == text


def test_tree_bytes_counts_modules_optimizers_and_arrays_once():
    lin = torch.nn.Linear(10, 4)  # 44 float32 parameters
    assert memory.tree_bytes(lin) == 44 * 4
    opt = torch.optim.Adam(lin.parameters())
    lin(torch.ones(2, 10)).sum().backward()
    opt.step()
    assert memory.tree_bytes(lin) == 2 * 44 * 4  # parameters + gradients
    # Adam keeps two moments per parameter and a step counter per tensor.
    step_bytes = sum(
        s["step"].numel() * s["step"].element_size() for s in opt.state.values()
    )
    assert memory.tree_bytes(opt) == 2 * 44 * 4 + step_bytes
    t = torch.zeros(100)
    assert memory.tree_bytes((t, t, t[:10])) == 400  # one storage
    assert (
        memory.tree_bytes(
            {"a": jnp.zeros((5, 5)), "b": np.zeros(3, np.float64), "c": 7}
        )
        == 100 + 24
    )


def test_xla_memory_reports_arguments_and_donation():
    x = jnp.ones((256, 256))
    f = jax.jit(lambda a: jnp.tanh(a @ a) * 2.0)
    plain = memory.xla_memory(f.lower(x).compile(), "plain")
    assert plain.parts["arguments"] == x.nbytes
    assert plain.parts["outputs"] == x.nbytes
    assert plain.parts["donated (aliased)"] == 0
    assert plain.peak_bytes >= 2 * x.nbytes
    donated = memory.xla_memory(
        jax.jit(lambda a: a * 2.0 + 1.0, donate_argnums=0).lower(x).compile()
    )
    assert donated.parts["donated (aliased)"] == x.nbytes
    assert "memory_analysis" in donated.method
    with pytest.raises(TypeError, match="compiled must be"):
        memory.xla_memory(f)


def test_torch_profiler_sees_a_temporary():
    size = 2**20  # one MiB of float32 made and dropped inside the step
    keep = torch.ones(1000)

    def step():
        tmp = torch.ones(size // 4)
        return (tmp * 2).sum()  # a second MiB while tmp is alive

    report = memory.torch_profiler_memory(step, resident=keep, label="toy")
    assert report.parts["live before (params, grads, optimizer state, batch)"] == 4000
    high = report.parts["highest net allocation during the step"]
    assert 2 * size <= high < 3 * size
    assert report.peak_bytes == 4000 + high
    assert report.parts["allocated in total"] >= 2 * size
    assert "profiler" in report.method and "| toy |" in report.row()


def test_torch_profiler_device_is_checked():
    with pytest.raises(ValueError, match="device must be"):
        memory.torch_profiler_memory(lambda: None, resident=(), device="tpu")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            memory.torch_profiler_memory(lambda: None, resident=(), device="cuda")


def test_profiler_banner_is_dropped_and_other_stderr_kept(capfd):
    with memory.quiet_profiler_banner():
        os.write(2, b"USDT:2026 profiler_start\nsomething else\n")
        os.write(2, f"[W] CPUAllocator.cpp:245] {memory._UNKNOWN_BLOCK}\n".encode())
    err = capfd.readouterr().err
    assert "USDT" not in err and "something else" in err and "unknown size" not in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only behaviour")
def test_gpu_only_paths_say_so_on_cpu():
    assert memory.cuda_available() is False
    with pytest.raises(RuntimeError, match="CUDA GPU"):
        memory.torch_cuda_memory(lambda: None)
    with pytest.raises(RuntimeError, match="CUDA GPU"):
        memory.save_memory_snapshots(lambda: None, lambda: None, "unused")
    if jax.default_backend() == "cpu":
        assert memory.jax_device_memory(lambda: jnp.ones(3)) is None


def test_table_lists_every_report():
    reports = [
        memory.MemoryReport("a", "m1", 10, {"x": 10}),
        memory.MemoryReport("b", "m2", 2048),
    ]
    text = memory.table(reports)
    assert text.splitlines()[0].startswith("| step | peak |")
    assert "| a | 10 B | m1 | x 10 B |" in text and "| b | 2 KiB | m2 |  |" in text


# ------------------------------------------- a step's own peak, fake allocators


class FakeAllocator:
    """Live bytes and a high-water mark, as a GPU allocator keeps them."""

    def __init__(self, live: int, peak: int) -> None:
        self.live, self.peak, self.calls = live, peak, []

    def alloc(self, n: int) -> int:
        self.live += n
        self.peak = max(self.peak, self.live)
        return n

    def free(self, n: int) -> None:
        self.live -= n

    # torch.cuda's names
    def synchronize(self, device=None):
        self.calls.append("synchronize")

    def reset_peak_memory_stats(self, device=None):
        self.calls.append("reset")
        self.peak = self.live

    def memory_allocated(self, device=None):
        return self.live

    def max_memory_allocated(self, device=None):
        return self.peak

    # a jax Device's name
    def memory_stats(self):
        return {"bytes_in_use": self.live, "peak_bytes_in_use": self.peak}


def _step(fake: FakeAllocator, transient: int, kept: int):
    """Allocate ``transient`` bytes (activations, gradients), free all but ``kept``."""

    def step():
        fake.alloc(transient)
        fake.free(transient - kept)
        return 0.5

    return step


def test_torch_peak_above_resets_the_counter_and_counts_from_the_live_bytes():
    fake = FakeAllocator(
        live=1_000, peak=50_000
    )  # an earlier benchmark peaked at 50 kB
    fake.alloc(100)  # last step's gradients

    above = memory.torch_peak_above(
        _step(fake, 300, 100), before=lambda: fake.free(100), cuda=fake
    )
    assert above == 300  # not 50_000 - 1_000: the earlier peak was reset away
    assert fake.calls == ["synchronize", "reset", "synchronize"]


def test_ballast_lifts_the_live_bytes_over_an_earlier_peak():
    assert (
        memory.ballast_bytes(
            {"bytes_in_use": 1_000, "peak_bytes_in_use": 9_000}, margin=10
        )
        == 8_010
    )
    assert (
        memory.ballast_bytes(
            {"bytes_in_use": 9_000, "peak_bytes_in_use": 9_000}, margin=0
        )
        == 0
    )
    assert (
        memory.peak_above(
            {"bytes_in_use": 9_000, "peak_bytes_in_use": 9_000},
            {"bytes_in_use": 9_000, "peak_bytes_in_use": 9_700},
        )
        == 700
    )
    with pytest.raises(ValueError, match="below the allocator's earlier peak"):
        memory.peak_above(
            {"bytes_in_use": 1_000, "peak_bytes_in_use": 9_000},
            {"bytes_in_use": 1_000, "peak_bytes_in_use": 9_000},
        )


@pytest.mark.parametrize(
    "transient", [300, 20_000]
)  # below and above the earlier peak's gap
def test_jax_peak_above_is_the_steps_own_peak_despite_an_unresettable_counter(
    transient,
):
    fake = FakeAllocator(
        live=1_000, peak=10_000
    )  # compilation peaked earlier; no reset in JAX
    ballasts = []

    def allocate(n):
        ballasts.append(n)
        return fake.alloc(n)

    above = memory.jax_peak_above(_step(fake, transient, 0), fake, allocate=allocate)
    assert above == transient
    assert ballasts == [9_000 + 2**20]  # the gap to the earlier peak, and a margin
    naive = FakeAllocator(live=1_000, peak=10_000)
    _step(naive, transient, 0)()
    if (
        transient < 9_000
    ):  # without the ballast, the counter shows the earlier peak instead
        assert naive.peak - 1_000 == 9_000


def test_jax_peak_above_needs_allocator_statistics():
    class NoStats:
        def memory_stats(self):
            return None

    with pytest.raises(RuntimeError, match="keeps no allocator statistics"):
        memory.jax_peak_above(lambda: None, NoStats(), allocate=lambda n: n)
    jax = pytest.importorskip("jax")
    with pytest.raises(RuntimeError, match="keeps no allocator statistics"):
        memory.jax_peak_above(lambda: None, jax.devices("cpu")[0])  # the CPU keeps none
