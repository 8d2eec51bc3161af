"""course_utils.timing.caches: an empty Inductor directory for the block, the old one after."""

from __future__ import annotations

import os

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
