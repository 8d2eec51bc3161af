"""distributed.worker: a rank's inputs and reports, and the problem's MLP in PyTorch."""

import json

import numpy as np
import pytest

from course_utils.distributed import launch, problem, worker


def test_without_a_run_folder_the_report_is_printed(monkeypatch, capsys):
    monkeypatch.delenv(launch.OUT_ENV, raising=False)
    assert worker.out_dir() is None
    worker.save_report(1, {"loss": 0.5, "g": np.zeros((2, 3))})
    assert (
        capsys.readouterr().out.strip() == "rank 1: {'loss': 0.5, 'g': 'array(2, 3)'}"
    )
    fresh = worker.load_problem(seed=4)
    np.testing.assert_array_equal(fresh["X"], problem.make_problem(4)["X"])


def test_in_a_run_folder_reports_and_problem_are_files(tmp_path, monkeypatch):
    monkeypatch.setenv(launch.OUT_ENV, str(tmp_path))
    prob = problem.make_problem(7, batch=4, d_in=3, d_hidden=5, d_out=2)
    problem.save(tmp_path / worker.PROBLEM_FILE, prob)
    np.testing.assert_array_equal(worker.load_problem()["W1"], prob["W1"])
    worker.save_report(0, {"rank": 0, "g": np.arange(3.0)})
    assert json.loads((tmp_path / "rank0.json").read_text()) == {"rank": 0}
    with np.load(tmp_path / "rank0.npz") as arrays:
        np.testing.assert_array_equal(arrays["g"], np.arange(3.0))


def test_prefixed_names_every_array():
    assert worker.prefixed("ddp_", {"W1": 1, "b1": 2}) == {"ddp_W1": 1, "ddp_b1": 2}


def test_torch_mlp_holds_the_problems_weights_and_its_gradient():
    torch = pytest.importorskip("torch")
    prob = problem.make_problem(8, batch=6, d_in=3, d_hidden=5, d_out=2)
    model = worker.torch_mlp(prob)
    for name, value in worker.params_of(model).items():
        np.testing.assert_allclose(value, prob[name], rtol=0, atol=0)
    X, y = torch.from_numpy(prob["X"]), torch.from_numpy(prob["y"])
    torch.nn.functional.mse_loss(model(X), y).backward()
    _, oracle = problem.loss_and_grads_numpy(
        problem.params_of(prob), prob["X"], prob["y"]
    )
    for name, value in worker.grads_of(model).items():
        np.testing.assert_allclose(value, oracle[name], rtol=1e-4, atol=1e-6)


def test_comm_counts_uses_one_name_per_collective():
    class Op:
        def __init__(self, name):
            self.__name__ = name

    class FakeMode:
        def get_comm_counts(self):
            return {Op("c10d.allreduce_"): 2, Op("all_gather_into_tensor"): 1,
                    Op("allgather_base"): 1, "reduce_scatter_tensor": 3}  # fmt: skip

    assert worker.comm_counts(FakeMode()) == {
        "all_reduce": 2,
        "all_gather": 2,
        "reduce_scatter": 3,
    }
