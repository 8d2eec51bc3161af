"""distributed.torch_check: an exercise's function run on real ranks and checked against DDP."""

import sys

import pytest

from course_utils.distributed import launch, problem
from course_utils.parity import assert_close

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(sys.platform != "linux", reason="uses Linux's /proc"),
]


def good_average(model):
    world = dist.get_world_size()  # noqa: F821 - the harness provides dist
    for p in model.parameters():
        dist.all_reduce(p.grad)  # noqa: F821
        p.grad /= world


def forgets_to_divide(model):
    for p in model.parameters():
        dist.all_reduce(p.grad)  # noqa: F821


def stub(model):
    raise NotImplementedError()


def test_torchrun_function_checks_real_gradient_averaging(no_orphans):
    prob = problem.make_problem(2, batch=12, d_in=4, d_hidden=6, d_out=2)
    _, grads = problem.loss_and_grads_numpy(
        problem.params_of(prob), prob["X"], prob["y"]
    )
    good = launch.torchrun_function(
        good_average,
        "course_utils.distributed.torch_check",
        2,
        timeout=180,
        problem=prob,
    )
    no_orphans.append(good.tag)
    for report in good.ranks:
        assert_close(
            problem.take(report, "yours_"),
            problem.take(report, "ddp_"),
            rtol=1e-5,
            atol=1e-6,
        )
        assert_close(problem.take(report, "yours_"), grads, rtol=1e-4, atol=1e-6)
    bad = launch.torchrun_function(
        forgets_to_divide,
        "course_utils.distributed.torch_check",
        2,
        timeout=180,
        problem=prob,
    )
    no_orphans.append(bad.tag)
    with pytest.raises(AssertionError):
        assert_close(
            problem.take(bad.ranks[0], "yours_"), problem.take(bad.ranks[0], "ddp_")
        )
    # A stub raises on every rank alike: one rank shows it (a rank is a PyTorch process).
    with pytest.raises(NotImplementedError, match="stub is not implemented yet"):
        launch.torchrun_function(
            stub, "course_utils.distributed.torch_check", 1, timeout=180
        )
