"""course_utils.profiles: reading Chrome traces back into top-ops tables."""

import gzip
import json

import pytest

from course_utils import profiles


def _x(name, ts, dur, tid=1, **extra):
    return {
        "ph": "X",
        "pid": 1,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "name": name,
        **extra,
    }


def test_load_events_reads_plain_and_gzipped_files_dicts_and_lists(tmp_path):
    events = [_x("a", 0, 1)]
    (tmp_path / "t.json").write_text(json.dumps({"traceEvents": events}))
    with gzip.open(tmp_path / "t.json.gz", "wt") as f:
        json.dump(events, f)
    assert profiles.load_events(tmp_path / "t.json") == events
    assert profiles.load_events(tmp_path / "t.json.gz") == events


def test_load_events_names_a_file_without_events(tmp_path):
    (tmp_path / "bad.json").write_text(json.dumps({"traceEvents": 3}))
    with pytest.raises(ValueError, match="bad.json"):
        profiles.load_events(tmp_path / "bad.json")


def test_self_time_subtracts_direct_children_only():
    evs = [
        _x("parent", 0, 10),
        _x("child", 1, 6),
        _x("grandchild", 2, 2),
        _x("other", 0, 5, tid=2),
    ]
    got = {e["name"]: s for e, s in profiles.self_times(evs)}
    assert got == {"parent": 4.0, "child": 4.0, "grandchild": 2.0, "other": 5.0}


def test_self_times_skip_metadata_and_instant_events():
    evs = [
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1},
        {"ph": "i", "name": "x", "ts": 0},
    ]
    assert profiles.self_times(evs) == []


def test_top_ops_ranks_by_self_time_with_calls_and_shares():
    evs = [
        _x("aten::linear", 0, 10, cat="cpu_op"),
        _x("aten::addmm", 1, 8, cat="cpu_op"),
        _x("aten::relu", 20, 3, cat="cpu_op"),
        _x("aten::relu", 30, 3, cat="cpu_op"),
        _x("python", 40, 100),
    ]
    rows = profiles.top_ops(evs, profiles.is_torch_op, n=2)
    assert [(r.name, r.calls, r.self_us) for r in rows] == [
        ("aten::addmm", 1, 8.0),
        ("aten::relu", 2, 6.0),
    ]
    assert rows[0].share == pytest.approx(8 / 16)


def test_top_ops_keeps_device_kernels_when_a_trace_has_them():
    evs = [
        _x("aten::mm", 0, 50, cat="cpu_op"),
        _x("sgemm_kernel", 5, 20, tid=7, cat="kernel"),
    ]
    assert [r.name for r in profiles.top_ops(evs, profiles.is_torch_op)] == [
        "sgemm_kernel"
    ]


def test_xla_ops_are_the_events_tagged_with_an_hlo_op():
    evs = [_x("dot", 0, 5, args={"hlo_op": "dot"}), _x("PjitFunction(step)", 0, 9)]
    assert [r.name for r in profiles.top_ops(evs, profiles.is_xla_op)] == ["dot"]
    assert profiles.op_calls(evs, profiles.is_xla_op) == 1


def test_jax_trace_file_finds_the_newest_perfetto_trace(tmp_path):
    with pytest.raises(FileNotFoundError, match="create_perfetto_trace=True"):
        profiles.jax_trace_file(tmp_path)
    run = tmp_path / "plugins" / "profile" / "2026_01_01"
    run.mkdir(parents=True)
    (run / "perfetto_trace.json.gz").write_bytes(b"")
    assert profiles.jax_trace_file(tmp_path) == run / "perfetto_trace.json.gz"


def test_markdown_shows_per_step_numbers_and_shortens_long_names():
    rows = [profiles.OpRow("x" * 60, 4, 40.0, 1.0)]
    text = profiles.markdown(rows, "op", steps=2)
    assert "| 2 | 20.0 | 100 % |" in text
    assert "x" * 45 + "..." in text


def test_real_traces_from_both_frameworks(tmp_path):
    jax = pytest.importorskip("jax")
    torch = pytest.importorskip("torch")
    f = jax.jit(lambda a: jax.numpy.tanh(a @ a).sum())
    a = jax.numpy.ones((32, 32))
    f(a).block_until_ready()
    with jax.profiler.trace(str(tmp_path / "jax"), create_perfetto_trace=True):
        f(a).block_until_ready()
    jax_rows = profiles.top_ops(
        profiles.load_events(profiles.jax_trace_file(tmp_path / "jax")),
        profiles.is_xla_op,
    )
    assert jax_rows and all(r.self_us >= 0 for r in jax_rows)
    x = torch.ones(32, 32)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU]
    ) as prof:
        torch.tanh(x @ x).sum()
    prof.export_chrome_trace(str(tmp_path / "torch.json"))
    names = [
        r.name
        for r in profiles.top_ops(
            profiles.load_events(tmp_path / "torch.json"), profiles.is_torch_op
        )
    ]
    assert "aten::mm" in names and "aten::tanh" in names


def test_short_warning_keeps_the_first_line_and_the_users_frames():
    text = "\n".join(
        [
            "Error detected in PowBackward0. Traceback of forward call:",
            '  File "<frozen runpy>", line 198, in _run_module_as_main',
            '  File "/x/site-packages/ipykernel/kernelapp.py", line 768, in start',
            "    self.io_loop.start()",
            '  File "/tmp/ipykernel_1/2.py", line 3, in <module>',
            "    loss(w, x).backward()",
            '  File "/tmp/ipykernel_1/3.py", line 2, in loss',
            "    return (x @ w) ** 2",
        ]
    )
    short = profiles.short_warning(text)
    assert short.splitlines()[0].startswith("Error detected in PowBackward0")
    assert "ipykernel/kernelapp" not in short and "runpy" not in short
    assert "loss(w, x).backward()" in short and "return (x @ w) ** 2" in short
    assert (
        profiles.short_warning(text, keep=2).splitlines()[1:] == text.splitlines()[-2:]
    )


def test_torch_profile_records_ops_and_drops_the_kineto_banner(capfd):
    torch = pytest.importorskip("torch")
    with profiles.torch_profile(
        activities=[torch.profiler.ProfilerActivity.CPU]
    ) as prof:
        torch.ones(3).sum()
    assert any("sum" in e.name for e in prof.events())
    assert "USDT:" not in capfd.readouterr().err
