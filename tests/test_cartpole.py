"""course_utils.cartpole: the same physics in NumPy, JAX and PyTorch; vmap equals the loop."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from course_utils import cartpole as cp
from course_utils.parity import assert_close

jax = pytest.importorskip("jax")
torch = pytest.importorskip("torch")
jnp = jax.numpy

N = 64


@pytest.fixture(scope="module")
def batch():
    return cp.initial_states(N, seed=3), cp.random_actions(N, seed=3)


def test_initial_states_and_actions_are_seeded_and_in_range():
    s = cp.initial_states(100, seed=7)
    assert s.shape == (100, 4) and s.dtype == np.float32
    assert np.all(np.abs(s) <= 0.05)
    np.testing.assert_array_equal(s, cp.initial_states(100, seed=7))
    assert not np.array_equal(s, cp.initial_states(100, seed=8))
    a = cp.random_actions(100, seed=7, steps=3)
    assert a.shape == (3, 100) and a.dtype == np.int32
    assert set(np.unique(a)) == {0, 1}


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bad_number_of_environments_names_the_argument(bad):
    with pytest.raises(ValueError, match="n .*positive int"):
        cp.initial_states(bad)


def test_numpy_step_matches_hand_computed_physics():
    # From rest, pushing right: temp = F / M, the pole tips back, the cart speeds up.
    F, M, mp, half, tau = 10.0, 1.1, 0.1, 0.5, 0.02
    temp = F / M
    thetaacc = -temp / (half * (4 / 3 - mp / M))
    xacc = temp - mp * half * thetaacc / M
    nxt, reward, done = cp.numpy_step(np.zeros(4), np.array(1))
    np.testing.assert_allclose(nxt, [0.0, tau * xacc, 0.0, tau * thetaacc], rtol=1e-12)
    assert reward == 1.0 and not done
    left, _, _ = cp.numpy_step(np.zeros(4), np.array(0))
    np.testing.assert_allclose(left, -nxt, rtol=1e-12)


def test_done_when_the_cart_leaves_the_track_or_the_pole_falls():
    states = np.array(
        [[2.39, 1.0, 0, 0], [0, 0, 0.2, 1.0], [0, 0, 0, 0], [-2.39, -1.0, 0, 0]],
        dtype=np.float32,
    )
    actions = np.array([1, 1, 1, 0], dtype=np.int32)
    _, reward, done = cp.numpy_step(states, actions)
    np.testing.assert_array_equal(done, [True, True, False, True])
    np.testing.assert_array_equal(reward, [0.0, 0.0, 1.0, 0.0])
    _, rj, dj = cp.jax_step_batch(jnp.asarray(states), jnp.asarray(actions))
    _, rt, dt = cp.torch_step_batch(torch.from_numpy(states), torch.from_numpy(actions))
    np.testing.assert_array_equal(np.asarray(dj), done)
    np.testing.assert_array_equal(dt.numpy(), done)
    np.testing.assert_array_equal(np.asarray(rj), reward)
    np.testing.assert_array_equal(rt.numpy(), reward)


def test_single_steps_agree_across_frameworks_and_with_float64(batch):
    states, actions = batch
    ref = cp.numpy_step(states, actions)
    for i in range(0, N, 7):
        out_j = cp.jax_step(jnp.asarray(states[i]), jnp.asarray(actions[i]))
        out_t = cp.torch_step(torch.from_numpy(states[i]), torch.tensor(actions[i]))
        assert out_j[0].shape == (4,) and out_j[1].shape == () and out_j[2].shape == ()
        assert out_t[0].shape == (4,) and out_t[1].shape == () and out_t[2].shape == ()
        assert_close(out_j, out_t, rtol=1e-6, atol=1e-7, name=f"env {i}")
        assert_close(
            out_j[0], ref[0][i], rtol=1e-5, atol=1e-6, name=f"env {i} vs float64"
        )
        assert bool(out_j[2]) == bool(ref[2][i])


@pytest.mark.slow
def test_jax_vmap_equals_the_loop_and_the_hand_batched_step(batch):
    states, actions = batch
    S, A = jnp.asarray(states), jnp.asarray(actions)
    vmapped = jax.jit(jax.vmap(cp.jax_step))(S, A)
    looped = cp.jax_loop(S, A)
    by_hand = jax.jit(cp.jax_step_batch)(S, A)
    assert vmapped[0].shape == (N, 4) and vmapped[2].dtype == jnp.bool_
    assert_close(vmapped, looped, rtol=1e-6, atol=1e-7, name="vmap vs loop")
    assert_close(vmapped, by_hand, rtol=1e-6, atol=1e-7, name="vmap vs hand-batched")
    assert_close(vmapped[0], cp.numpy_step(states, actions)[0], rtol=1e-5, atol=1e-6)


def test_torch_vmap_equals_the_loop_and_the_hand_batched_step(batch):
    states, actions = batch
    S, A = torch.from_numpy(states), torch.from_numpy(actions)
    vmapped = torch.func.vmap(cp.torch_step)(S, A)
    looped = cp.torch_loop(S, A)
    by_hand = cp.torch_step_batch(S, A)
    assert vmapped[0].shape == (N, 4) and vmapped[2].dtype == torch.bool
    assert_close(vmapped, looped, rtol=1e-6, atol=1e-7, name="vmap vs loop")
    assert_close(vmapped, by_hand, rtol=1e-6, atol=1e-7, name="vmap vs hand-batched")


def test_rollouts_stay_together_for_many_steps():
    states = cp.initial_states(32, seed=1)
    actions = cp.random_actions(32, seed=1, steps=50)
    s64, sj, st = (
        states.astype(np.float64),
        jnp.asarray(states),
        torch.from_numpy(states),
    )
    step_j = jax.jit(cp.jax_step_batch)
    for a in actions:
        s64 = cp.numpy_step(s64, a)[0]
        sj = step_j(sj, jnp.asarray(a))[0]
        st = cp.torch_step_batch(st, torch.from_numpy(a))[0]
    assert_close(sj, st, rtol=1e-4, atol=1e-5, name="JAX vs PyTorch after 50 steps")
    assert_close(
        st, s64, rtol=1e-4, atol=1e-5, name="PyTorch vs float64 after 50 steps"
    )
    assert np.abs(s64).max() > 0.1  # the rollout really moved


def test_fps_variants_all_compute_the_same_step():
    variants = cp.fps_variants(16, seed=2, torch_device="cpu")
    assert set(variants) == {
        "PyTorch loop",
        "PyTorch torch.func.vmap",
        "PyTorch hand-batched",
        "JAX loop (jit step)",
        "JAX vmap + jit",
        "JAX hand-batched + jit",
    }
    ref = cp.numpy_step(cp.initial_states(16, 2), cp.random_actions(16, 2))
    for name, fn in variants.items():
        out = fn()
        assert_close(out[0], ref[0], rtol=1e-5, atol=1e-6, name=name)
        np.testing.assert_array_equal(np.asarray(out[2]), ref[2], err_msg=name)


def test_bad_shapes_raise_clear_errors():
    with pytest.raises(ValueError, match=r"jax_step: state must have shape \(4,\)"):
        cp.jax_step(jnp.zeros((2, 4)), jnp.asarray(1))
    with pytest.raises(ValueError, match=r"torch_step: state must have shape \(4,\)"):
        cp.torch_step(torch.zeros(3), torch.tensor(1))
    with pytest.raises(ValueError, match="actions must have shape"):
        cp.torch_step_batch(torch.zeros(5, 4), torch.zeros(4, dtype=torch.int32))
    with pytest.raises(ValueError, match=r"states must have shape \(n, 4\)"):
        cp.jax_step_batch(jnp.zeros((5, 3)), jnp.zeros(5, dtype=jnp.int32))
    with pytest.raises(ValueError, match="numpy_step"):
        cp.numpy_step(np.zeros((5, 4)), np.zeros(3))


def test_importing_the_module_imports_neither_framework():
    code = "import sys, course_utils.cartpole; print('jax' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "False"]


LESSON = Path(__file__).resolve().parents[1] / "notebooks" / "03_jit_compilation.py"
ON_THE_PAGE = (
    "torch_step",
    "jax_step",
    "torch_step_batch",
    "jax_step_batch",
)


def _lesson_functions():
    """Lesson 03's CartPole steps, defined from the lesson's own source."""
    tree = ast.parse(LESSON.read_text(encoding="utf-8"))
    defs = [
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in ON_THE_PAGE
    ]
    missing = set(ON_THE_PAGE) - {n.name for n in defs}
    assert not missing, (
        f"notebooks/03_jit_compilation.py no longer defines {sorted(missing)}"
    )
    ns = {"torch": torch, "jax": jax, "jnp": jnp, "np": np, "cartpole": cp}
    exec(compile(ast.Module(body=defs, type_ignores=[]), str(LESSON), "exec"), ns)
    return ns


def test_the_lessons_steps_equal_the_packages_bit_for_bit(batch):
    page = _lesson_functions()
    states, actions = batch
    S_t, A_t = torch.from_numpy(states), torch.from_numpy(actions)
    S_j, A_j = jnp.asarray(states), jnp.asarray(actions)
    calls = {
        "torch_step": (S_t[0], A_t[0]),
        "jax_step": (S_j[0], A_j[0]),
        "torch_step_batch": (S_t, A_t),
        "jax_step_batch": (S_j, A_j),
    }
    for name, args in calls.items():
        assert_close(
            page[name](*args), getattr(cp, name)(*args), rtol=0, atol=0, name=name
        )
