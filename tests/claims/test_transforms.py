"""course_utils.claims.transforms: the third-derivative oracle."""

import numpy as np
import pytest

from course_utils.claims import transforms


def test_third_derivative_oracle_matches_finite_differences():
    x = np.linspace(-2, 2, 41)
    h = 1e-3

    def f(x):
        return np.sin(x**2) + np.exp(np.cos(x))

    fd = (f(x + 2 * h) - 2 * f(x + h) + 2 * f(x - h) - f(x - 2 * h)) / (2 * h**3)
    np.testing.assert_allclose(
        transforms.third_derivative_analytic(x), fd, rtol=1e-4, atol=1e-4
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "benchmark, claim_id",
    [
        (transforms.higher_order, "higher-order"),
        (transforms.vmap_simulation, "vmap-simulation"),
    ],
)
def test_transforms_time_the_compiled_pairing(benchmark, claim_id):
    from course_utils.claims import harness, verdict_rule

    m = benchmark(harness.Ctx(True))
    names = harness.pairing_names(claim_id, "compiled")
    assert m.pairing == "compiled" and m.names == names
    assert "torch.compile" in names[0] and "jit" in names[1]  # compiled on both sides
    assert len(m.samples) >= verdict_rule.MIN_RATIOS and min(m.samples) > 0
    assert set(m.details["median_s"]) == set(names)
    assert m.contention is not None


@pytest.mark.slow
def test_vmap_loop_times_a_loop_of_jitted_steps_against_vmap_and_jit():
    from course_utils.claims import harness, verdict_rule

    m = transforms.vmap_loop(harness.Ctx(True))
    assert m.pairing == "batching"
    assert m.names == ("JAX loop (jit step)", "JAX vmap + jit")
    assert len(m.samples) >= verdict_rule.MIN_RATIOS and min(m.samples) > 0
    assert set(m.details["env_steps_per_s"]) == set(m.names)
    assert f"{transforms.VMAP_ENVS} CartPole environments" in m.what
