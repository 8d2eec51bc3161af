"""distributed.jax_multiprocess: its flags, and two real processes whose gradient is the oracle's."""

import sys

import pytest

from course_utils.distributed import launch, problem
from course_utils.parity import assert_close

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(sys.platform != "linux", reason="uses Linux's /proc"),
]


def test_flags_parse():
    from course_utils.distributed import jax_multiprocess

    args = jax_multiprocess.parse_args(
        ["--coordinator", "h:1", "--num-processes", "2", "--process-id", "1"]
    )
    assert (args.coordinator, args.num_processes, args.process_id) == ("h:1", 2, 1)
    assert args.local_devices == 0


def test_real_jax_multiprocess_gradients_equal_the_oracle(tmp_path, no_orphans):
    prob = problem.make_problem(4, batch=16, d_in=5, d_hidden=8, d_out=3)
    problem.save(tmp_path / "problem.npz", prob)
    result = launch.jax_processes(
        "course_utils.distributed.jax_multiprocess", 2, 2, workdir=tmp_path, timeout=180
    )
    no_orphans.append(result.tag)
    _, grads = problem.loss_and_grads_numpy(
        problem.params_of(prob), prob["X"], prob["y"]
    )
    assert [r["process_index"] for r in result.ranks] == [0, 1]
    for report in result.ranks:
        assert report["device_count"] == 4 and report["local_device_count"] == 2
        assert report["local_rows"] == 8
        assert_close(problem.take(report, "grad_"), grads, rtol=1e-4, atol=1e-6)
