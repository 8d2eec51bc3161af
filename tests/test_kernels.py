"""Triton's status and skip message, Pallas's interpret choice, the tile picture, graph counts."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from course_utils import kernels


def test_import_does_not_import_frameworks():
    code = (
        "import sys, course_utils.kernels; "
        "assert not {'jax', 'torch', 'triton'} & set(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_absent_triton_says_why_and_how_to_install(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    status = kernels.setup_triton(find_spec=lambda name: None)
    assert not status.available and status.version is None
    line = status.line()
    assert line.startswith("Triton cells skipped")
    assert 'pip install ".[kernels]"' in line and "not installed" in line
    assert "TRITON_INTERPRET" not in __import__("os").environ
    assert status.skipped() == "Triton absent: skipped (see the setup cell)"


def test_present_triton_line_names_the_mode():
    status = kernels.TritonStatus(True, True, "9.9", "no CUDA GPU: the interpreter")
    assert "interpreted" in status.line() and "9.9" in status.line()
    gpu = kernels.TritonStatus(True, False, "9.9", "a CUDA GPU")
    assert "compiled" in gpu.line()


def test_pallas_interprets_on_cpu():
    pytest.importorskip("jax")
    import jax

    if jax.default_backend() == "cpu":
        assert kernels.pallas_interpret()
        assert kernels.pallas_interpret((4, 8))


def test_plot_tiles_draws_one_box_per_program():
    import matplotlib

    matplotlib.use("Agg")
    ids = np.arange(6).repeat(2).reshape(3, 4)  # any 2-D id map
    ax = kernels.plot_tiles(ids, (2, 3), title="t")
    assert len(ax.patches) == 2 * 2  # cdiv(3, 2) x cdiv(4, 3) blocks
    assert ax.get_title() == "t"
    assert {t.get_text() for t in ax.texts} == {"(0,0)", "(0,1)", "(1,0)", "(1,1)"}
    dashed = [p for p in ax.patches if p.get_linestyle() == "--"]
    assert len(dashed) == 3  # every block but the first overhangs an edge


def test_count_graphs_sees_a_break_and_fullgraph_refuses_it():
    torch = pytest.importorskip("torch")

    @torch.compiler.disable
    def host(x):
        return x + 1

    def smooth(x):
        return (x.sin() * 2).cos()

    def broken(x):
        return host(x.sin()).cos()

    x = torch.ones(3)
    assert kernels.count_graphs(smooth, x, fullgraph=True) == 1
    assert kernels.count_graphs(broken, x) == 2
    with pytest.raises(Exception, match="(?i)skip|disable|graph"):
        kernels.count_graphs(broken, x, fullgraph=True)


@pytest.mark.parametrize("cuda", [False, True])
def test_present_triton_is_interpreted_only_without_cuda(monkeypatch, cuda):
    import types

    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setattr(kernels, "_cuda_present", lambda: cuda)
    fake = types.SimpleNamespace(__version__="9.9")
    monkeypatch.setattr(kernels.importlib, "import_module", lambda name: fake)
    status = kernels.setup_triton(find_spec=lambda name: object())
    assert status.available and status.version == "9.9"
    assert status.interpreted is not cuda
    assert ("TRITON_INTERPRET" in __import__("os").environ) is not cuda
