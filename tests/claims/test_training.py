"""course_utils.claims.training: train steps, donation, and the memory claim."""

import pytest

from course_utils.claims import devices, encoder, harness, training, verdict_rule
from tests.claims.fakes import GPU_JAX_ONLY, fake_cuda_ctx, fake_jax_gpu


def test_step_memory_compares_resident_plus_each_allocators_peak():
    m = training.step_memory_measured(
        torch_resident=1000,
        torch_above=[500, 600],
        jax_resident=1010,
        jax_above=[290, 190],
        donated_bytes=900,
        batch=8,
    )
    assert m.samples == [1500 / 1300, 1600 / 1200]
    assert m.details["jax_donated_bytes"] == 900 and m.details["torch_above_bytes"] == [
        500,
        600,
    ]
    assert "batch 8" in m.what and "donates 900 B" in m.what
    with pytest.raises(verdict_rule.NotTestable, match="not like with like"):
        training.step_memory_measured(
            torch_resident=1000,
            torch_above=[1],
            jax_resident=2000,
            jax_above=[1],
            donated_bytes=0,
            batch=1,
        )
    with pytest.raises(ValueError, match="equally many"):
        training.step_memory_measured(
            torch_resident=1,
            torch_above=[1, 2],
            jax_resident=1,
            jax_above=[1],
            donated_bytes=0,
            batch=1,
        )
    with pytest.raises(ValueError, match="measuring error"):
        training.step_memory_measured(
            torch_resident=1,
            torch_above=[-1],
            jax_resident=1,
            jax_above=[1],
            donated_bytes=0,
            batch=1,
        )


def _main_signature(lowered) -> str:
    return next(
        line
        for line in lowered.as_text().splitlines()
        if "func.func public @main" in line
    )


@pytest.mark.slow
def test_jax_train_step_donates_exactly_the_parameters_and_adam_state():
    import jax

    ctx = harness.Ctx(smoke=True)
    for donate in (False, True):
        pair = training.train_steps(ctx, 2, donate=donate)
        state = (pair.box["params"], pair.box["opt"])
        main = _main_signature(pair.jax_train_step.lower(*state, *pair.jax_batch))
        # Every parameter and Adam-state array is written back into its own buffer
        # (one alias per leaf); the batch (two more arguments) is not donated.
        n_state = len(jax.tree_util.tree_leaves(state))
        assert main.count("%arg") == n_state + 2
        assert main.count("tf.aliasing_output") == (n_state if donate else 0)


@pytest.mark.slow
def test_a_donated_step_owns_its_buffers_and_leaves_the_shared_encoder_usable():
    # The encoder pair is built once and cached; donation deletes the step's inputs,
    # so the step must own copies, or a later benchmark meets deleted arrays.
    import jax
    from flax import nnx

    from course_utils.claims import encoder

    ctx = harness.Ctx(smoke=True)
    _, jm, sizes = encoder.encoder_setup(ctx)
    pair = training.train_steps(ctx, 2, donate=True)
    cached = {
        a.unsafe_buffer_pointer() for a in jax.tree.leaves(nnx.state(jm, nnx.Param))
    }
    donated = {a.unsafe_buffer_pointer() for a in jax.tree.leaves(pair.box["params"])}
    assert not cached & donated, (
        "the donated step would delete the cached model's arrays"
    )
    pair.jax_step()
    forward, state = encoder.jax_forward(ctx, jm)
    tokens = ctx.jax_put(encoder.random_tokens(2, sizes["seq"]))
    assert forward(state, tokens).shape == (2, 2)


@pytest.mark.parametrize(
    "benchmark", [training.train_memory, training.train_throughput]
)
def test_gpu_training_claims_without_both_frameworks_on_a_gpu_are_not_testable(
    benchmark,
):
    gpu = devices.plan_devices("accelerator", **GPU_JAX_ONLY).targets[0]
    for target in (gpu, devices.DeviceTarget("cpu")):
        with pytest.raises(verdict_rule.NotTestable, match="CUDA GPU only"):
            benchmark(harness.Ctx(True, target))


def test_train_throughput_times_a_gpt2_small_shape_in_full_mode():
    (full, full_batch), (smoke, _) = training.THROUGHPUT
    assert full_batch == 8 and smoke == "smoke"
    assert encoder.describe(full).startswith("12 layers, width 768, 12 heads")
    assert encoder.SHAPES[full]["seq"] == 128 and encoder.SHAPES[full]["vocab"] == 50257


@pytest.mark.slow
def test_train_throughput_on_a_gpu_divides_pytorch_eager_by_jax_jit(monkeypatch):
    ctx, _ = fake_cuda_ctx(monkeypatch)
    m = training.train_throughput(ctx)
    assert m.pairing == "article" and m.names == ("PyTorch eager", "JAX jit")
    assert len(m.samples) >= verdict_rule.MIN_RATIOS and min(m.samples) > 0
    tokens = m.details["tokens_per_s"]
    assert set(tokens) == set(m.names) and "batch 8" in m.what


@pytest.mark.slow
def test_gpu_memory_benchmark_wiring_with_fake_allocator_readers(monkeypatch):

    from course_utils import memory

    cpu0 = fake_jax_gpu(monkeypatch)
    rounds = []

    def torch_peak_above(step, *, before, device):
        before()
        step()
        rounds.append("torch")
        return 3_000

    def jax_peak_above(step, device):
        assert device == cpu0  # the target's device kind ("gpu", faked by the CPU here)
        step()
        rounds.append("jax")
        return 2_000

    monkeypatch.setattr(memory, "torch_peak_above", torch_peak_above)
    monkeypatch.setattr(memory, "jax_peak_above", jax_peak_above)
    target = devices.DeviceTarget("gpu", "fake", jax=True, torch="cpu")
    m = training.train_memory_gpu(harness.Ctx(True, target))
    assert rounds == ["torch", "jax"] * 3  # interleaved
    d = m.details
    # Params + Adam moments (+ step counters) + batch: the same state on both sides.
    assert (
        abs(d["torch_resident_bytes"] - d["jax_resident_bytes"])
        < 0.01 * d["jax_resident_bytes"]
    )
    assert d["jax_donated_bytes"] > 0.9 * d["jax_resident_bytes"]
    expected = (d["torch_resident_bytes"] + 3_000) / (d["jax_resident_bytes"] + 2_000)
    assert m.samples == pytest.approx([expected] * 3)
