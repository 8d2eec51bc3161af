"""course_utils.dist without launching anything: ports, commands, excerpts, the oracle, cost formulas."""

import socket
import subprocess
import sys

import numpy as np
import pytest

from course_utils.dist import cost, launch, problem

# ------------------------------------------------------------------ imports


def test_importing_the_package_imports_no_framework():
    code = (
        "import sys\n"
        "import course_utils.dist, course_utils.dist.launch, course_utils.dist.problem\n"
        "import course_utils.dist.cost, course_utils.dist.worker\n"
        "print([f for f in ('jax', 'torch', 'flax', 'optax') if f in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


# -------------------------------------------------------------------- ports


def test_free_port_is_free_and_a_listening_port_is_not():
    port = launch.free_port()
    assert 0 < port < 65536 and not launch.port_in_use(port)
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
        s.listen()
        assert launch.port_in_use(port)


def test_pick_port_replaces_a_busy_port_and_says_so(capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        busy = s.getsockname()[1]
        chosen = launch.pick_port(busy)
    assert chosen != busy
    assert (
        f"port {busy} is already in use; using port {chosen}" in capsys.readouterr().err
    )


def test_pick_port_keeps_a_free_port():
    port = launch.free_port()
    assert launch.pick_port(port) == port


@pytest.mark.parametrize("bad", [0, 70000, "29500", None])
def test_port_in_use_rejects_bad_ports(bad):
    with pytest.raises(ValueError, match="port"):
        launch.port_in_use(bad)


# ----------------------------------------------------------------- commands


def test_torchrun_command_module_and_script():
    cmd = launch.torchrun_command("pkg.mod", 3, 1234, ["--x", 1])
    assert cmd[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert cmd[cmd.index("--nproc-per-node") + 1] == "3"
    assert cmd[cmd.index("--master-port") + 1] == "1234"
    assert cmd[-4:] == ["-m", "pkg.mod", "--x", "1"]
    script = launch.torchrun_command("/tmp/a.py", 2, 1)
    assert "-m" not in script[3:] and script[-1] == "/tmp/a.py"
    assert launch.display_command(cmd).startswith(
        "torchrun --nnodes 1 --nproc-per-node 3"
    )


def test_jax_command_flags():
    cmd = launch.jax_command("pkg.mod", "127.0.0.1:5", 2, 1, 4)
    assert cmd[:3] == [sys.executable, "-m", "pkg.mod"]
    flags = dict(zip(cmd[3::2], cmd[4::2], strict=True))
    assert flags == {
        "--coordinator": "127.0.0.1:5",
        "--num-processes": "2",
        "--process-id": "1",
        "--local-devices": "4",
    }
    assert launch.jax_command("/x/s.py", "h:1", 1, 0, 1)[:2] == [
        sys.executable,
        "/x/s.py",
    ]
    assert launch.display_command(cmd).startswith("python -m pkg.mod")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: launch.torchrun("m", 0), "nproc"),
        (lambda: launch.torchrun("m", True), "nproc"),
        (lambda: launch.torchrun("", 2), "target"),
        (lambda: launch.torchrun("m", 2, timeout=0), "timeout"),
        (lambda: launch.torchrun("m", 2, retries=-1), "retries"),
        (lambda: launch.jax_processes("m", 2, 0), "local_devices"),
        (lambda: launch.jax_processes("m", -1, 4), "num_processes"),
    ],
)
def test_bad_launch_arguments_name_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_excerpt_reads_a_marked_region_without_importing():
    code = launch.excerpt("course_utils.dist.torch_ddp", "average_gradients")
    assert code.startswith("def average_gradients(")
    assert "dist.all_reduce" in code and "# [" not in code
    assert code._repr_markdown_().startswith("```python\n")
    with pytest.raises(ValueError, match="no region"):
        launch.excerpt("course_utils.dist.torch_ddp", "nope")
    with pytest.raises(ValueError, match="no Python file"):
        launch.excerpt("course_utils.dist.no_such_module", "x")


def test_every_region_the_lesson_shows_exists():
    for module, region in [
        ("course_utils.dist.torch_ddp", "ddp"),
        ("course_utils.dist.torch_ddp", "by_hand"),
        ("course_utils.dist.torch_ddp", "ddp_sum"),
        ("course_utils.dist.torch_tp", "tp"),
        ("course_utils.dist.torch_fsdp", "fsdp"),
        ("course_utils.dist.jax_multiprocess", "initialize"),
        ("course_utils.dist.jax_multiprocess", "global_batch"),
    ]:
        assert launch.excerpt(module, region).strip()


def test_function_source_of_a_function_and_errors():
    def inner(x):
        return x + 1

    assert launch.function_source(inner).startswith("def inner(x):")
    with pytest.raises(TypeError, match="function"):
        launch.function_source(len)
    namespace = {}
    exec("def made(x):\n    return x\n", namespace)  # noqa: S102 - no source file on purpose
    with pytest.raises(ValueError, match="cannot be found"):
        launch.function_source(namespace["made"])


def test_launch_result_sections_split_a_combined_report():
    result = launch.LaunchResult(
        [["x"]],
        [0],
        "",
        0.1,
        1,
        ranks=[{"ddp.a": 1, "tp.a": 2, "tp.b": 3}, {"ddp.a": 4}],
    )
    assert result.section("tp") == [{"a": 2, "b": 3}, {}]
    assert result.section("ddp") == [{"a": 1}, {"a": 4}]
    with pytest.raises(KeyError, match="fsdp"):
        result.section("fsdp")


def test_torch_all_rejects_unknown_demos_before_starting():
    from course_utils.dist import torch_all

    assert set(torch_all.DEMOS) == {"ddp", "tp", "fsdp"}
    with pytest.raises(SystemExit, match="unknown demo"):
        torch_all.main(["ddp", "pipeline"])


def test_launch_result_summary():
    result = launch.LaunchResult([["python", "x"]], [0, 1], "a\nb\nc", 1.5, 1234)
    assert not result.ok and "failed [0, 1]" in str(result)
    assert result.tail(2) == "b\nc"
    assert launch.LaunchResult([], [0], "", 0.1, 1, timed_out=True).ok is False


# ------------------------------------------------------------------ problem


def test_oracle_gradients_match_finite_differences():
    prob = problem.make_problem(3, batch=6, d_in=3, d_hidden=5, d_out=2)
    params = {k: v.astype(np.float64) for k, v in problem.params_of(prob).items()}
    _, grads = problem.loss_and_grads_numpy(params, prob["X"], prob["y"])
    eps = 1e-6
    for name, value in params.items():
        for index in np.ndindex(value.shape):
            plus = {k: v.copy() for k, v in params.items()}
            minus = {k: v.copy() for k, v in params.items()}
            plus[name][index] += eps
            minus[name][index] -= eps
            numeric = (
                problem.loss_and_grads_numpy(plus, prob["X"], prob["y"])[0]
                - problem.loss_and_grads_numpy(minus, prob["X"], prob["y"])[0]
            ) / (2 * eps)
            assert abs(numeric - grads[name][index]) < 1e-6, (name, index)


def test_mean_of_slice_gradients_is_the_full_batch_gradient():
    prob = problem.make_problem(0, batch=12)
    params = problem.params_of(prob)
    _, full = problem.loss_and_grads_numpy(params, prob["X"], prob["y"])
    parts = [
        problem.loss_and_grads_numpy(
            params,
            problem.shard_rows(prob["X"], r, 3),
            problem.shard_rows(prob["y"], r, 3),
        )[1]
        for r in range(3)
    ]
    for k in full:
        np.testing.assert_allclose(
            np.mean([p[k] for p in parts], axis=0), full[k], rtol=1e-12
        )


def test_problem_layout_order_and_round_trip(tmp_path):
    prob = problem.make_problem(0, 8, 3, 4, 2)
    assert list(problem.params_of(prob)) == ["W1", "W2", "b1", "b2"]  # JAX's dict order
    assert (
        prob["W1"].shape == (3, 4)
        and prob["W2"].shape == (4, 2)
        and prob["X"].dtype == np.float32
    )
    assert problem.n_params(prob) == 3 * 4 + 4 * 2 + 4 + 2
    back = problem.load(problem.save(tmp_path / "p.npz", prob))
    assert set(back) == set(prob) and all(
        np.array_equal(back[k], prob[k]) for k in prob
    )
    np.testing.assert_allclose(
        problem.forward_numpy(problem.params_of(prob), prob["X"]).shape, (8, 2)
    )
    report = {"ddp_" + k: v for k, v in problem.params_of(prob).items()}
    assert list(problem.take(report, "ddp_")) == ["W1", "W2", "b1", "b2"]


def test_problem_errors_name_the_argument():
    with pytest.raises(ValueError, match="batch"):
        problem.make_problem(0, batch=0)
    with pytest.raises(ValueError, match="divisible"):
        problem.shard_rows(np.zeros((5, 2)), 0, 2)
    with pytest.raises(ValueError, match="rank"):
        problem.shard_rows(np.zeros((4, 2)), 2, 2)
    with pytest.raises(KeyError, match="ddp_W1"):
        problem.take({}, "ddp_")
    with pytest.raises(ValueError, match="X must be"):
        prob = problem.make_problem(0, 4, 3, 4, 2)
        problem.loss_and_grads_numpy(
            problem.params_of(prob), np.zeros((4, 5)), prob["y"]
        )


# --------------------------------------------------------------------- cost


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
    assert cost.format_bytes(1536) == "1.5 KiB" and cost.format_bytes(12) == "12 B"


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
        "from course_utils.dist import cost\n"
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
