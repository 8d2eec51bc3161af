"""course_utils.timing.caches: an empty Inductor directory for the block, the old one after."""

from __future__ import annotations

import os

import pytest
import torch._inductor.config as inductor_config

from course_utils import timing
from course_utils.timing import caches


def test_cold_inductor_cache_is_empty_inside_and_gone_after(monkeypatch, tmp_path):
    # Which vector instructions the CPU has is settled before the block; not its subject.
    monkeypatch.setattr(caches, "_probe_vector_isa", lambda: None)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    with timing.cold_inductor_cache() as path:
        assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == path != str(tmp_path)
        assert os.environ["TRITON_CACHE_DIR"] == os.path.join(path, "triton")
        assert os.listdir(path) == []
        assert inductor_config.fx_graph_remote_cache is False
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path)
    assert "TRITON_CACHE_DIR" not in os.environ
    assert not os.path.exists(path)


def test_jax_persistent_cache_off_serves_nothing_from_disk_then_restores_it(tmp_path):
    import jax
    import jax.numpy as jnp
    from jax.experimental.compilation_cache import compilation_cache

    from course_utils.timing.counters import _JaxEvents

    settings = {
        "jax_compilation_cache_dir": str(tmp_path),
        "jax_enable_compilation_cache": True,
        "jax_persistent_cache_min_compile_time_secs": 0.0,
        "jax_persistent_cache_min_entry_size_bytes": 0,
    }
    saved = {k: getattr(jax.config, k) for k in settings}

    def call():  # a new function each time: nothing in memory serves it
        jax.clear_caches()
        jax.jit(lambda x: jnp.tanh(x) * 3.0 - 1.0)(jnp.ones(7)).block_until_ready()

    try:
        for k, v in settings.items():
            jax.config.update(k, v)
        compilation_cache.reset_cache()
        call()  # writes the program to the cache on disk
        with timing.jax_persistent_cache_off(), _JaxEvents() as off:
            assert not caches.jax_persistent_cache_on()
            call()
        assert caches.jax_persistent_cache_on()
        with _JaxEvents() as on:
            call()
        assert off.hits == 0 and on.hits >= 1
    finally:
        for k, v in saved.items():
            jax.config.update(k, v)
        compilation_cache.reset_cache()


@pytest.mark.slow  # two new processes, each importing both frameworks and compiling
def test_new_process_first_calls_reads_the_cache_the_first_process_filled():
    jax_call, torch_call = timing.new_process_first_calls()
    assert (jax_call.framework, torch_call.framework) == ("jax.jit", "torch.compile")
    assert jax_call.empty_hits == 0 < jax_call.filled_hits
    assert torch_call.empty_hits == 0 < torch_call.filled_hits
    assert str(torch_call).startswith(
        "torch.compile, new process on the CPU: first call"
    )
