"""course_utils.step_peaks: a step's own peak on each allocator, with fake allocators."""

import subprocess
import sys

import pytest

from course_utils import memory, step_peaks


def test_importing_step_peaks_imports_no_framework():
    code = (
        "import sys, course_utils.step_peaks; "
        "print('torch' in sys.modules, 'jax' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.split() == ["False", "False"], out.stderr


def test_memory_offers_the_step_peaks_under_the_same_names():
    for name in ("torch_peak_above", "jax_peak_above", "ballast_bytes", "peak_above"):
        assert getattr(memory, name) is getattr(step_peaks, name), name


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

    above = step_peaks.torch_peak_above(
        _step(fake, 300, 100), before=lambda: fake.free(100), cuda=fake
    )
    assert above == 300  # not 50_000 - 1_000: the earlier peak was reset away
    assert fake.calls == ["synchronize", "reset", "synchronize"]


def test_ballast_lifts_the_live_bytes_over_an_earlier_peak():
    assert (
        step_peaks.ballast_bytes(
            {"bytes_in_use": 1_000, "peak_bytes_in_use": 9_000}, margin=10
        )
        == 8_010
    )
    assert (
        step_peaks.ballast_bytes(
            {"bytes_in_use": 9_000, "peak_bytes_in_use": 9_000}, margin=0
        )
        == 0
    )
    assert (
        step_peaks.peak_above(
            {"bytes_in_use": 9_000, "peak_bytes_in_use": 9_000},
            {"bytes_in_use": 9_000, "peak_bytes_in_use": 9_700},
        )
        == 700
    )
    with pytest.raises(ValueError, match="below the allocator's earlier peak"):
        step_peaks.peak_above(
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

    above = step_peaks.jax_peak_above(
        _step(fake, transient, 0), fake, allocate=allocate
    )
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
        step_peaks.jax_peak_above(lambda: None, NoStats(), allocate=lambda n: n)
    jax = pytest.importorskip("jax")
    with pytest.raises(RuntimeError, match="keeps no allocator statistics"):
        step_peaks.jax_peak_above(
            lambda: None, jax.devices("cpu")[0]
        )  # the CPU keeps none
