"""course_utils.migration (block, encoder, converters) and course_utils.checklist."""

import copy
import subprocess
import sys

import numpy as np
import pytest

from course_utils import checklist, migration
from course_utils.parity import assert_close

CFG = migration.BlockConfig(d_model=16, n_heads=4, d_ff=32, dropout=0.1)


def test_importing_does_not_import_the_frameworks():
    code = (
        "import sys, course_utils.migration, course_utils.checklist, course_utils.claims; "
        "print(any(m in sys.modules for m in ('jax', 'torch', 'flax')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"d_model": 10, "n_heads": 4}, "divisible by n_heads"),
        ({"d_ff": 0}, "d_ff must be a positive int"),
        ({"dropout": 1.0}, "dropout must be in"),
        ({"n_heads": 2.5}, "n_heads must be a positive int"),
    ],
)
def test_block_config_validates(kwargs, message):
    with pytest.raises(ValueError, match=message):
        migration.BlockConfig(**kwargs)


@pytest.fixture(scope="module")
def block_pair():
    return migration.make_pair(CFG, seed=0)


@pytest.fixture(scope="module")
def x_block():
    return (
        np.random.default_rng(0).standard_normal((4, 6, CFG.d_model)).astype(np.float32)
    )


def test_block_outputs_and_gradients_agree(block_pair, x_block):
    import jax.numpy as jnp
    import torch
    from flax import nnx

    torch_block, nnx_block = block_pair
    tb = copy.deepcopy(torch_block)
    out = tb(torch.from_numpy(x_block))
    (out**2).mean().backward()
    grads = nnx.jit(nnx.grad(lambda m, x: (m(x) ** 2).mean()))(
        nnx_block, jnp.asarray(x_block)
    )
    assert_close(
        nnx.jit(lambda m, x: m(x))(nnx_block, jnp.asarray(x_block)),
        out,
        rtol=1e-5,
        atol=1e-5,
        name="output",
    )
    converted = migration.nnx_grads_to_torch(nnx_block, grads, tb)
    assert set(converted) == {n for n, _ in tb.named_parameters()}
    assert_close(
        converted, {n: p.grad for n, p in tb.named_parameters()}, rtol=1e-4, atol=1e-6
    )


def test_block_round_trip_is_exact(block_pair):
    from flax import nnx

    torch_block, nnx_block = block_pair
    back = migration.block_nnx_to_torch(nnx_block, migration.TorchBlock(CFG))
    assert_close(
        dict(back.named_parameters()),
        dict(torch_block.named_parameters()),
        rtol=0,
        atol=0,
    )
    again = migration.block_torch_to_nnx(
        back, migration.NNXBlock(CFG, rngs=nnx.Rngs(5))
    )
    assert_close(
        nnx.state(again, nnx.Param), nnx.state(nnx_block, nnx.Param), rtol=0, atol=0
    )


def test_attention_layout(block_pair):
    torch_block, nnx_block = block_pair
    d, h = CFG.d_model, CFG.n_heads
    w_q = torch_block.attn.in_proj_weight.detach().numpy()[:d]  # (out, in)
    k_q = np.asarray(nnx_block.attn.query.kernel[...])  # (in, heads, head_dim)
    assert k_q.shape == (d, h, d // h)
    # output feature j of head i is row i * head_dim + j of PyTorch's query weight
    np.testing.assert_array_equal(k_q[:, 1, 2], w_q[1 * (d // h) + 2])


def test_converters_name_the_mismatch():
    from flax import nnx

    other = migration.BlockConfig(d_model=16, n_heads=4, d_ff=48)
    with pytest.raises(ValueError, match="different sizes"):
        migration.block_torch_to_nnx(
            migration.TorchBlock(CFG), migration.NNXBlock(other, rngs=nnx.Rngs(0))
        )
    with pytest.raises(TypeError, match="nnx_block must be a NNXBlock"):
        migration.block_torch_to_nnx(
            migration.TorchBlock(CFG), migration.TorchBlock(CFG)
        )
    with pytest.raises(TypeError, match="only apply with encoder=True"):
        migration.make_pair(CFG, vocab=10)


def test_encoder_mask_equals_unpadded_and_converts_both_ways():
    import jax.numpy as jnp
    import torch
    from flax import nnx

    cfg = migration.BlockConfig(16, 2, 32, dropout=0.0)
    te, je = migration.make_pair(
        cfg, seed=1, encoder=True, vocab=30, max_len=12, n_layers=2, num_classes=3
    )
    tokens = np.random.default_rng(1).integers(0, 30, (2, 9))
    mask = np.ones((2, 9), bool)
    mask[0, 5:] = False
    with torch.no_grad():
        masked = te(torch.from_numpy(tokens), torch.from_numpy(mask))
        short = te(torch.from_numpy(tokens[:1, :5]))
    assert_close(masked[0], short[0], rtol=1e-5, atol=1e-6, name="masked vs unpadded")
    assert_close(
        nnx.jit(lambda m, t, k: m(t, k))(je, jnp.asarray(tokens), jnp.asarray(mask)),
        masked,
        rtol=1e-5,
        atol=1e-5,
        name="nnx masked",
    )
    back = migration.encoder_nnx_to_torch(
        je, migration.TorchEncoder(cfg, vocab=30, max_len=12, n_layers=2, num_classes=3)
    )
    assert_close(
        dict(back.named_parameters()), dict(te.named_parameters()), rtol=0, atol=0
    )
    with pytest.raises(ValueError, match="2 torch blocks vs 1 NNX blocks"):
        migration.encoder_torch_to_nnx(
            te,
            migration.NNXEncoder(
                cfg, vocab=30, max_len=12, n_layers=1, rngs=nnx.Rngs(0)
            ),
        )


def test_nnx_grads_to_torch_handles_the_course_cnn():
    import jax.numpy as jnp
    import torch
    from flax import nnx

    from course_utils import convert, models

    torch.manual_seed(0)
    tc, nc = (
        models.TorchCNN(channels=(4, 8), hidden=16),
        models.NNXCNN(channels=(4, 8), hidden=16, rngs=nnx.Rngs(0)),
    )
    convert.torch_cnn_to_nnx(tc, nc)
    x = np.random.default_rng(2).standard_normal((3, 1, 8, 8)).astype(np.float32)
    tc(torch.from_numpy(x)).pow(2).sum().backward()
    grads = nnx.jit(nnx.grad(lambda m, x: (m(x) ** 2).sum()))(
        nc, jnp.asarray(x.transpose(0, 2, 3, 1))
    )
    assert_close(
        migration.nnx_grads_to_torch(nc, grads, tc),
        {n: p.grad for n, p in tc.named_parameters()},
        rtol=1e-4,
        atol=1e-5,
    )
    with pytest.raises(TypeError, match="no converter for Linear"):
        migration.nnx_grads_to_torch(nnx.Linear(2, 2, rngs=nnx.Rngs(0)), None, tc)


# ---------------------------------------------------------------- checklist


def test_stepwise_port_passes_on_a_good_pair(block_pair, x_block, capsys):
    report = checklist.stepwise_port(*block_pair, x_block)
    assert report.ok and [i.status for i in report.items] == ["pass"] * 4
    assert "stepwise port" in capsys.readouterr().out


def test_stepwise_port_stops_at_the_first_broken_step(block_pair, x_block):
    torch_block, nnx_block = block_pair
    broken = copy.deepcopy(torch_block)
    with __import__("torch").no_grad():
        broken.ln2.bias.add_(0.1)
    report = checklist.stepwise_port(broken, nnx_block, x_block, verbose=False)
    assert not report.ok
    assert [i.status for i in report.items] == ["pass", "fail", "skip", "skip"]
    assert "elements differ" in report.items[1].detail


def test_mvp_checklist_reports_every_check(block_pair, x_block):
    shapes = [np.zeros((2, n, CFG.d_model), np.float32) for n in (3, 5)]
    report = checklist.mvp_checklist(
        *block_pair,
        x_block,
        shapes=shapes,
        target_s=0.05,
        verbose=False,
        dependencies={"JAX side": ["optax", "no_such_package_xyz"]},
    )
    names = [i.name for i in report.items]
    assert names == [
        "outputs agree",
        "same-hardware benchmark",
        "operator coverage",
        "dynamic shapes",
        "ecosystem dependencies",
    ]
    assert report.status("outputs agree") == "pass"
    assert (
        "1 graph(s), 0 break(s)" in report.items[2].detail
        and "traced" in report.items[2].detail
    )
    assert (
        report.status("dynamic shapes") == "warn"
        and "compiled 2 time(s)" in report.items[3].detail
    )
    assert report.status("ecosystem dependencies") == "warn"
    assert (
        "no_such_package_xyz missing" in report.items[4].detail
        and "optax 0." in report.items[4].detail
    )
    assert "\\|" in report.table() or "|diff|" not in report.table()


def test_mvp_checklist_skips_timing_when_outputs_differ(block_pair, x_block):
    torch_block, nnx_block = block_pair
    broken = copy.deepcopy(torch_block)
    with __import__("torch").no_grad():
        broken.fc2.bias.add_(1.0)
    report = checklist.mvp_checklist(broken, nnx_block, x_block, verbose=False)
    assert report.status("outputs agree") == "fail"
    assert (
        report.status("same-hardware benchmark") == "skip"
        and report.status("dynamic shapes") == "skip"
    )
    with pytest.raises(TypeError, match="example must be a numpy array"):
        checklist.mvp_checklist(torch_block, nnx_block, [1, 2], verbose=False)


def test_check_items_validate_and_report_lookups():
    with pytest.raises(ValueError, match="status must be one of"):
        checklist.CheckItem("x", "ok", "")
    report = checklist.ChecklistReport("t")
    report.add("a", "warn", "x | y")
    assert report.ok and "x \\| y" in report.table()
    with pytest.raises(KeyError, match="no check named 'b'"):
        report.status("b")
