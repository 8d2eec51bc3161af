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
    with memory._quiet_profiler_banner():
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
