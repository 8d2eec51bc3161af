"""distributed.torch_tp: the tensor-parallel MLP computes the reference's output and gradient."""

from course_utils.distributed import problem
from course_utils.parity import assert_close

PROB = problem.make_problem(2, batch=8, d_in=4, d_hidden=6, d_out=2)


def test_tensor_parallel_matches_the_reference(one_rank):
    from course_utils.distributed import torch_tp

    report = torch_tp.run(0, 1, one_rank, PROB)
    assert_close(report["out"], report["out_ref"], rtol=1e-5, atol=1e-6)
    assert_close(
        problem.take(report, "tp_"), problem.take(report, "ref_"), rtol=1e-5, atol=1e-6
    )
    assert "Shard(dim=0)" in report["fc1_weight_placements"]  # column-wise: out rows
    assert "Shard(dim=1)" in report["fc2_weight_placements"]  # row-wise: in columns
    assert report["fc1_local_shape"] == [6, 4]  # one rank holds the whole layer
