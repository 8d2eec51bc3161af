"""The recorder in a notebook kernel: what it records, what it leaves out, what pytest reads."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from course_utils.tooling.lowering import record as lowering_record

# Run in a fresh process: the recorder must be installed before jax is imported, and
# the sharded program needs 8 simulated CPU devices.
SCRIPT = textwrap.dedent(
    """
    import json, sys
    from course_utils.tooling.lowering import record as rec
    rec.install()
    assert "jax" not in sys.modules  # installing imports nothing
    import jax, jax.numpy as jnp
    jax.config.update("jax_num_cpu_devices", 8)
    from jax.sharding import NamedSharding, PartitionSpec as P

    @jax.jit
    def step(w, x):
        return jnp.tanh(x @ w).sum()

    step(jnp.ones((4, 3)), jnp.ones((2, 4)))
    step(jnp.ones((4, 3)), jnp.ones((2, 4)))  # a cache hit: nothing new
    jax.jit(lambda w, x: jnp.tanh(x @ w).sum())(jnp.ones((4, 3)), jnp.ones((2, 4)))
    jnp.sin(jnp.ones(3))  # an eager operation
    jax.jit(lambda x, s: x * s)(jnp.ones(3), 2.0)  # a Python scalar argument
    rec.RECORDER.flush(1, "cell one")

    mesh = jax.make_mesh((8,), ("data",), (jax.sharding.AxisType.Explicit,))
    x = jax.device_put(jnp.ones((16, 4)), NamedSharding(mesh, P("data")))

    @jax.jit
    def sharded_mean(x):
        return jax.sharding.reshard(x * 2, P()).mean(0)

    with jax.set_mesh(mesh):  # as lesson 05 does
        sharded_mean(x)
    # in and out shardings given to jit, as course_utils.gpt.shard.jit_step does
    auto = jax.make_mesh((2, 4), ("data", "model"), (jax.sharding.AxisType.Auto,) * 2)
    w_sh, x_sh = NamedSharding(auto, P(None, "model")), NamedSharding(auto, P("data"))
    sgd = jax.jit(
        lambda w, x: (w - (x @ w).sum(), (x @ w).mean()),
        in_shardings=(w_sh, x_sh),
        out_shardings=(w_sh, NamedSharding(auto, P())),
    )
    sgd(jnp.ones((4, 8)), jnp.ones((6, 4)))
    rec.RECORDER.flush(2, "cell two")
    print(json.dumps(rec.RECORDER.report()))
    """
)


def test_a_kernel_records_jitted_programs_and_leaves_eager_ones_out():
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.splitlines()[-1])
    assert report["errors"] == []
    assert report["eager"].get("sin") == 1
    one, two = report["cells"]
    assert [o["function"] for o in one["outcomes"]] == [
        "step",
        "step",
        "<lambda>",
        "<lambda>",
        "<lambda>",
        "<lambda>",
    ]
    assert {o["status"] for o in one["outcomes"] + two["outcomes"]} == {"pass"}
    # device_put's own slicing program (jax's), then the sharded step on the mesh
    for name in ("sharded_mean", "<lambda>"):
        found = [o["platform"] for o in two["outcomes"] if o["function"] == name]
        assert found == ["cuda", "tpu"], name
    assert report["programs"] == 3 + len(two["outcomes"]) // 2


def _report(*cells):
    return {"platforms": ["cuda", "tpu"], "errors": [], "cells": list(cells)}


def _cell(source, *outcomes):
    keys = ("function", "platform", "status", "reason")
    return {
        "execution_count": None,
        "source": source,
        "outcomes": [dict(zip(keys, o, strict=True)) for o in outcomes],
    }


def test_findings_name_the_notebook_cell_the_function_and_the_platform():
    sources = ["import jax", "y = f(x)", "z = g(x)", "y = f(x)"]
    report = _report(
        _cell(
            "y = f(x)",
            ("f", "cuda", "pass", ""),
            ("f", "tpu", "fail", "ValueError: no"),
        ),
        _cell("z = g(x)", ("g", "cuda", "skip", "host callback")),
        _cell("y = f(x)", ("f", "cuda", "fail", "ValueError: again")),
    )
    failures, skips = lowering_record.findings(report, sources)
    assert failures == [
        "Cell 1, f, tpu: ValueError: no",
        "Cell 3, f, cuda: ValueError: again",
    ]
    assert skips == ["Cell 2, g, cuda: host callback"]
    assert lowering_record.counts(report)["cuda"] == {"pass": 1, "skip": 1, "fail": 1}


def test_a_crash_of_the_checker_is_a_failure():
    report = dict(_report(), errors=["cell 3: KeyError: 'x'"])
    assert lowering_record.findings(report, []) == (
        ["the checker itself: cell 3: KeyError: 'x'"],
        [],
    )


def test_the_startup_script_loads_the_extension_only_when_asked(tmp_path):
    lowering_record.ipython_startup(str(tmp_path))
    lowering_record.ipython_startup(str(tmp_path))  # idempotent
    (script,) = (tmp_path / "profile_default" / "startup").iterdir()
    assert script.name == lowering_record.STARTUP_NAME
    text = script.read_text()
    assert f"os.environ.get({lowering_record.ENV!r}) == '1'" in text
    assert "load_extension" in text


def test_on_an_accelerator_nothing_is_checked():
    recorder = lowering_record.Recorder()
    recorder.backend = "gpu"  # as jax.default_backend() says on a GPU machine
    recorder.pending.append(object())
    recorder.flush(1, "y = f(x)")
    assert recorder.pending == [] and recorder.cells == []
    assert recorder.report()["disabled"].startswith("JAX runs on gpu here")
