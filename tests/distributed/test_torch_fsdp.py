"""distributed.torch_fsdp: FSDP2's gradient and optimizer step equal the reference's."""

from course_utils.distributed import problem
from course_utils.parity import assert_close

PROB = problem.make_problem(3, batch=8, d_in=4, d_hidden=6, d_out=2)


def test_fully_sharded_matches_the_reference(one_rank):
    from course_utils.distributed import torch_fsdp

    report = torch_fsdp.run(0, 1, one_rank, PROB)
    ref = problem.take(report, "ref_")
    assert_close(problem.take(report, "fsdp_"), ref, rtol=1e-5, atol=1e-6)
    assert_close(
        problem.take(report, "fsdp_step_"),
        problem.take(report, "ref_step_"),
        rtol=1e-5,
        atol=1e-6,
    )
    assert "Shard(dim=0)" in report["fc1_weight_placements"]
    assert report["fc1_local_shape"] == report["fc1_global_shape"]  # one rank: all
