"""distributed.torch_gpt: FSDP2 and tensor-parallel GPT training lose what one process loses."""

import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from course_utils import gpt  # noqa: E402
from course_utils.distributed import launch, torch_gpt  # noqa: E402
from course_utils.gpt.model import GPTConfig, TorchGPT  # noqa: E402

CFG = GPTConfig(vocab_size=11, block_size=8, d_model=8, n_heads=2, n_layers=2, d_ff=16)


def _inputs(tmp_path):
    torch.manual_seed(0)
    model = TorchGPT(CFG)
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 11, (2, 3, 4, 8))
    torch_gpt.save_inputs(tmp_path, CFG, model, x, y)
    ref = gpt.train.torch_run(
        model, gpt.train.torch_adamw(model), zip(x, y, strict=True)
    )
    return x, y, ref


def test_heads_first_gives_each_rank_its_heads_query_key_value():
    w = torch.arange(12.0)  # q = 0..3, k = 4..7, v = 8..11; two heads of 2 each
    assert torch_gpt.heads_first(w, 2).tolist() == [
        0,
        1,
        4,
        5,
        8,
        9,
        2,
        3,
        6,
        7,
        10,
        11,
    ]


def test_unknown_demos_are_refused():
    with pytest.raises(SystemExit, match="unknown demo"):
        torch_gpt.main(["fsdp", "pipeline"])


def test_one_rank_runs_match_one_process(tmp_path, one_rank):
    x, y, ref = _inputs(tmp_path)
    cfg, weights, x2, y2 = torch_gpt.load_inputs(tmp_path)
    assert cfg == CFG and (x2 == x).all()
    for run in (torch_gpt.run_fsdp, torch_gpt.run_tp):
        report = run(0, 1, one_rank, cfg, weights, x, y)
        np.testing.assert_allclose(report["losses"], ref, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.skipif(sys.platform != "linux", reason="uses Linux's /proc")
def test_two_ranks_fsdp_and_tp_match_one_process(tmp_path, no_orphans):
    _, _, ref = _inputs(tmp_path)
    result = launch.torchrun("course_utils.distributed.torch_gpt", 2, workdir=tmp_path)
    no_orphans.append(result.tag)
    for name in ("fsdp", "tp"):
        reports = result.section(name)
        assert len(reports) == 2, name
        for report in reports:
            np.testing.assert_allclose(report["losses"], ref, rtol=1e-5, atol=1e-6)
    assert (
        result.section("fsdp")[0]["local_shape"][0] * 2
        == result.section("fsdp")[0]["global_shape"][0]
    )
    assert result.section("tp")[0]["local_shape"] == [12, 8]  # half of qkv's 24 rows
