"""distributed.torch_all: the three demos in one launch, each section checked against the oracle."""

import sys

import pytest

from course_utils.distributed import launch, problem
from course_utils.parity import assert_close


def test_torch_all_rejects_unknown_demos_before_starting():
    from course_utils.distributed import torch_all

    assert set(torch_all.DEMOS) == {"ddp", "tp", "fsdp"}
    with pytest.raises(SystemExit, match="unknown demo"):
        torch_all.main(["ddp", "pipeline"])


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.skipif(sys.platform != "linux", reason="uses Linux's /proc")
def test_two_ranks_run_every_demo_and_agree_with_the_oracle(tmp_path, no_orphans):
    prob = problem.make_problem(5, batch=8, d_in=4, d_hidden=6, d_out=2)
    problem.save(tmp_path / "problem.npz", prob)
    result = launch.torchrun("course_utils.distributed.torch_all", 2, workdir=tmp_path)
    no_orphans.append(result.tag)
    _, oracle = problem.loss_and_grads_numpy(
        problem.params_of(prob), prob["X"], prob["y"]
    )
    for name in ("ddp", "tp", "fsdp"):
        reports = result.section(name)
        assert [r["world"] for r in reports] == [2, 2], name
        for report in reports:
            grads = problem.take(report, f"{name}_")
            assert_close(grads, oracle, rtol=1e-4, atol=1e-6, name=name)
    assert [r["local_batch"] for r in result.section("ddp")] == [4, 4]
