"""distributed.torch_ddp: DDP's gradient, the hand-written average and the summed loss."""

import numpy as np

from course_utils.distributed import problem
from course_utils.parity import assert_close

PROB = problem.make_problem(1, batch=8, d_in=4, d_hidden=6, d_out=2)


def test_ddp_and_the_hand_average_give_the_full_batch_gradient(one_rank):
    from course_utils.distributed import torch_ddp

    report = torch_ddp.run(0, 1, one_rank, PROB)
    ref = problem.take(report, "ref_")
    _, oracle = problem.loss_and_grads_numpy(
        problem.params_of(PROB), PROB["X"], PROB["y"]
    )
    assert_close(ref, oracle, rtol=1e-4, atol=1e-6)
    assert_close(problem.take(report, "ddp_"), ref, rtol=1e-5, atol=1e-6)
    assert_close(problem.take(report, "hand_"), ref, rtol=1e-5, atol=1e-6)
    summed = problem.take(report, "ddp_sum_")  # a sum over rows and outputs, not a mean
    scale = PROB["y"].size
    assert_close({k: v / scale for k, v in summed.items()}, ref, rtol=1e-4, atol=1e-6)
    assert report["backend"] == "gloo" and report["local_batch"] == 8
    assert report["n_params"] == problem.n_params(PROB)
    assert report["ddp_allreduced_elements"] == problem.n_params(PROB)


def test_average_gradients_divides_by_the_world(one_rank):
    import torch

    from course_utils.distributed import torch_ddp

    model = torch.nn.Linear(2, 1)
    model(torch.ones(3, 2)).sum().backward()
    before = model.weight.grad.clone()
    torch_ddp.average_gradients(model)
    np.testing.assert_allclose(model.weight.grad.numpy(), before.numpy())
