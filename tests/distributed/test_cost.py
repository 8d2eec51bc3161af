"""distributed.cost: ring formulas, bytes per step, and collectives read from XLA's HLO."""

import subprocess
import sys

import pytest

from course_utils.distributed import cost


def test_ring_formulas():
    assert cost.ring_bytes("all-reduce", 800, 8) == pytest.approx(2 * 7 / 8 * 800)
    assert cost.ring_bytes("all-gather", 800, 8) == pytest.approx(700)
    assert cost.ring_bytes("reduce-scatter", 800, 1) == 0
    with pytest.raises(ValueError, match="op"):
        cost.ring_bytes("broadcast", 1, 2)
    with pytest.raises(ValueError, match="n_devices"):
        cost.ring_bytes("all-reduce", 1, 0)


def test_step_bytes_and_table():
    P_, N = 1_000_000, 4
    dp = cost.step_bytes("data parallel", P_, N)
    assert dp == pytest.approx(2 * 3 / 4 * P_ * 4)
    assert cost.step_bytes("fully sharded", P_, N) == pytest.approx(1.5 * dp)
    tp = cost.step_bytes(
        "tensor parallel", P_, N, activation_elems=1000, n_layer_pairs=3
    )
    assert tp == pytest.approx(3 * 2 * 2 * 3 / 4 * 1000 * 4)
    rows = {r["strategy"]: r for r in cost.table(P_, N, bytes_per_elem=2)}
    assert rows["fully sharded"]["vs data parallel"] == pytest.approx(1.5)
    assert rows["data parallel"]["bytes"] == pytest.approx(dp / 2)
    with pytest.raises(ValueError, match="strategy"):
        cost.step_bytes("pipeline", P_, N)
    with pytest.raises(ValueError, match="n_params"):
        cost.step_bytes("data parallel", -1, N)


HLO = """
HloModule jit_f
ENTRY %main {
  %p = f32[16,32]{1,0} parameter(0)
  %all-reduce.4 = (f32[32,16]{1,0}, f32[4,32]{1,0}, f32[32]{0}, f32[4]{0}) all-reduce(%a, %b, %c, %d), channel_id=1, replica_groups=[1,8]<=[8]
  %all-gather = f32[16,32]{1,0} all-gather(%param.1), channel_id=2, dimensions={0}
  %ags = (bf16[2,32]{1,0}, bf16[16,32]{1,0}) all-gather-start(%x), dimensions={0}
  %agd = bf16[16,32]{1,0} all-gather-done(%ags)
  ROOT %rs = f32[2,32]{1,0} reduce-scatter(%g), dimensions={0}, to_apply=%add
  %not = f32[4]{0} add(%all-reduce.4, %all-reduce.4)
}
"""


def test_hlo_collectives_reads_kinds_and_sizes():
    found = cost.hlo_collectives(HLO)
    assert [c.op for c in found] == [
        "all-reduce",
        "all-gather",
        "all-gather",
        "reduce-scatter",
    ]
    assert found[0].result_bytes == 4 * (32 * 16 + 4 * 32 + 32 + 4)
    assert found[1].result_bytes == 16 * 32 * 4
    assert found[2].result_bytes == 16 * 32 * 2 and found[2].shapes == ("bf16[16,32]",)
    assert found[3].full_bytes(8) == 8 * 2 * 32 * 4
    summary = cost.summarize(found, 8)
    assert summary["all-gather"]["count"] == 2
    assert summary["all-reduce"]["sent_bytes"] == pytest.approx(
        2 * 7 / 8 * found[0].result_bytes
    )
    assert summary["reduce-scatter"]["sent_bytes"] == pytest.approx(7 * 2 * 32 * 4)
    assert cost.hlo_collectives("ENTRY %m { ROOT %x = f32[2]{0} add(%a, %b) }") == []
    with pytest.raises(TypeError, match="HLO text"):
        cost.hlo_collectives(b"bytes")


def test_hlo_collectives_on_a_real_compiled_program():
    script = (
        "import jax\n"
        "jax.config.update('jax_num_cpu_devices', 4)\n"
        "import jax.numpy as jnp\n"
        "from jax.sharding import PartitionSpec as P\n"
        "from course_utils.distributed import cost\n"
        "mesh = jax.make_mesh((4,), ('data',))\n"
        "with jax.set_mesh(mesh):\n"
        "    x = jax.device_put(jnp.ones((8, 3)), P('data'))\n"
        "    text = jax.jit(lambda x: x.sum(0)).lower(x).compile().as_text()\n"
        "c = cost.hlo_collectives(text)\n"
        "print([k.op for k in c], [k.result_bytes for k in c])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "['all-reduce'] [12]"
