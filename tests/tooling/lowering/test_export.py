"""Real exports for cuda and tpu on this CPU: what passes, what fails, what is skipped and why."""

from __future__ import annotations

import functools
import importlib
import warnings
from contextlib import contextmanager, nullcontext

import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
pl = pytest.importorskip("jax.experimental.pallas")

from course_utils import compat, kernels  # noqa: E402
from course_utils.tooling.lowering import export as lowering  # noqa: E402

# What pallas_call lowers through for cuda with no compiler parameters: Mosaic GPU on
# jax 0.9 to 0.11.1 (the flag's default, a route it deprecates from 0.10), Triton on
# jax 0.7 and from 0.11.2, which removed the flag.
MOSAIC_GPU_FLAG = lowering.setting(kernels.MOSAIC_GPU_FLAG)
MOSAIC_GPU_BY_DEFAULT = bool(MOSAIC_GPU_FLAG is not None and MOSAIC_GPU_FLAG.value)
DEFAULT_GPU_TARGET = "mosaic_gpu" if MOSAIC_GPU_BY_DEFAULT else "__gpu$xla.gpu.triton"
# jax 0.11.2 and newer deprecate the Triton backend itself ("jax-pallas-triton").
TRITON_DEPRECATED = "jax-pallas-triton" in getattr(
    importlib.import_module("jax._src.deprecations"), "_registered_deprecations", {}
)
needs_the_flag = pytest.mark.skipif(
    MOSAIC_GPU_FLAG is None,
    reason=f"jax {jax.__version__} has no {kernels.MOSAIC_GPU_FLAG}: "
    "a pallas_call without compiler parameters lowers through Triton",
)


def double_kernel(x_ref, y_ref):
    y_ref[...] = x_ref[...] * 2


def masked_softmax_kernel(x_ref, y_ref, *, n_cols):
    x = x_ref[...]
    cols = jax.lax.broadcasted_iota(jnp.int32, x.shape, 1)
    e = jnp.exp(jnp.where(cols < n_cols, x, -jnp.inf))
    y_ref[...] = e / jnp.sum(e, axis=1, keepdims=True)


def launch(kernel, x, block):
    """A ``pallas_call`` over row blocks, interpreted (as the course runs it on a CPU)."""
    spec = pl.BlockSpec(block_shape=block, index_map=lambda i: (i, 0))
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(x.shape[0] // block[0],),
        in_specs=[spec],
        out_specs=spec,
        interpret=True,
    )(x)


def double_rows(x):
    return launch(double_kernel, x, (8, 128))


def softmax_rows(x):
    # Two rows of 8 float32 per block: 64 bytes, less than one Mosaic GPU warpgroup copy.
    return launch(functools.partial(masked_softmax_kernel, n_cols=5), x, (2, 8))


def by_platform(outcomes):
    return {o.platform: o for o in outcomes}


def mosaic_gpu():
    """pallas_call lowers for cuda with Mosaic GPU (jax 0.10's default; 0.7's is Triton)."""
    return MOSAIC_GPU_FLAG(True)


@contextmanager
def triton():
    """pallas_call lowers for cuda with Triton: the flag off, or a jax without it.

    Its deprecation, where jax has one, is ignored as lesson 10 ignores it.
    """
    flag = MOSAIC_GPU_FLAG(False) if MOSAIC_GPU_FLAG is not None else nullcontext()
    with flag, warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore",
            message=kernels.PALLAS_TRITON_DEPRECATION,
            category=DeprecationWarning,
        )
        yield


def test_a_plain_jitted_function_lowers_everywhere():
    def mlp(w, x):
        return jnp.tanh(x @ w).sum()

    program = lowering.trace(jax.grad(mlp), jnp.ones((4, 3)), jnp.ones((2, 4)))
    outcomes = by_platform(lowering.check(program))
    assert set(outcomes) == {"cuda", "tpu"}
    assert all(o.status == lowering.PASS for o in outcomes.values()), outcomes


@needs_the_flag
def test_a_kernel_mosaic_gpu_cannot_lower_fails_for_cuda_and_names_the_function():
    with mosaic_gpu():
        program = lowering.trace(softmax_rows, jnp.ones((4, 8)))
    cuda = by_platform(lowering.check(program))["cuda"]  # lowered as it was traced
    assert cuda.status == lowering.FAIL
    assert cuda.function == "softmax_rows (kernel masked_softmax_kernel)"
    assert cuda.reason.split(":")[0].endswith("Error"), cuda.reason


def test_an_interpreted_kernel_is_lowered_compiled():
    program = lowering.trace(double_rows, jnp.ones((16, 128)))
    (pallas,) = [
        e for e in lowering.eqns(program.jaxpr) if e.primitive.name == "pallas_call"
    ]
    assert pallas.params["interpret"] is True
    compiled = [
        e
        for e in lowering.eqns(lowering.interpret_off(program.jaxpr))
        if e.primitive.name == "pallas_call"
    ]
    assert compiled[0].params["interpret"] is False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert DEFAULT_GPU_TARGET in lowering.export(program, "cuda").mlir_module()
    assert "tpu_custom_call" in lowering.export(program, "tpu").mlir_module()
    # As the notebook ran it, the kernel is plain HLO: no custom call at all.
    cpu = lowering.export(program, "cpu", kernels_compiled=False).mlir_module()
    assert "custom_call" not in cpu


def test_a_deprecated_gpu_lowering_fails_as_the_strict_warnings_would():
    # jax 0.10 lowers pallas_call for cuda with Mosaic GPU by default, and deprecates it;
    # jax 0.7 lowers it with Triton, which it does not deprecate; jax 0.12 does.
    cuda, tpu = lowering.check(lowering.trace(double_rows, jnp.ones((16, 128))))
    assert tpu.status == lowering.PASS
    if not (MOSAIC_GPU_BY_DEFAULT or TRITON_DEPRECATED):
        assert cuda.status == lowering.PASS, cuda
        return
    assert cuda.status == lowering.FAIL and "strict warnings" in cuda.reason, cuda
    assert cuda.reason.startswith("DeprecationWarning: ")


def test_a_deprecation_warned_while_lowering_is_a_failure_on_any_jax(monkeypatch):
    from jax import export as jax_export

    original = jax_export.export

    def deprecated_export(*args, platforms, **kwargs):
        if platforms != ["cpu"]:
            warnings.warn(
                "this lowering is deprecated", DeprecationWarning, stacklevel=2
            )
        return original(*args, platforms=platforms, **kwargs)

    monkeypatch.setattr(jax_export, "export", deprecated_export)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # course_utils.strict's rule
        outcomes = lowering.check(lowering.trace(jnp.sin, jnp.ones(3)))
    for o in outcomes:
        assert o.status == lowering.FAIL, o
        assert o.reason == (
            "DeprecationWarning: this lowering is deprecated "
            "(a deprecation is an error under the course's strict warnings)"
        )


def test_a_kernel_for_triton_lowers_for_cuda():
    with triton():
        program = lowering.trace(double_rows, jnp.ones((16, 128)))
        cuda = lowering.check(program, platforms=["cuda"])[0]
    assert cuda.status == lowering.PASS, cuda


def test_a_host_callback_is_skipped_with_its_reason():
    def noisy(x):
        jax.debug.print("x = {}", x)
        return jnp.sin(x)

    for o in lowering.check(lowering.trace(noisy, jnp.ones(3))):
        assert o.status == lowering.SKIP
        assert "debug_print" in o.reason and "the rest lowers" in o.reason


@needs_the_flag
def test_a_host_callback_does_not_hide_a_failing_kernel():
    def noisy_softmax(x):
        jax.debug.print("x = {}", x)
        return softmax_rows(x)

    with mosaic_gpu():
        program = lowering.trace(noisy_softmax, jnp.ones((4, 8)))
    cuda = by_platform(lowering.check(program))
    assert cuda["cuda"].status == lowering.FAIL
    assert cuda["cuda"].reason.endswith("(host callbacks stubbed)")


def test_a_failure_on_every_platform_is_skipped_not_blamed_on_the_platform(monkeypatch):
    program = lowering.trace(jnp.sin, jnp.ones(3))

    def broken(program, platform, kernels_compiled=True):
        raise NotImplementedError("serialization of this is not implemented")

    monkeypatch.setattr(lowering, "export", broken)
    for o in lowering.check(program):
        assert o.status == lowering.SKIP
        assert o.reason.startswith("not exportable for cpu either: NotImplementedError")


def test_constants_become_inputs_so_no_array_is_copied_into_the_module():
    weights = jnp.arange(4096.0)
    program = lowering.trace(lambda x: x * weights, jnp.ones(4096))
    assert program.jaxpr.consts
    exported = lowering.export(program, "cuda")
    assert len(exported.in_avals) == 2  # the weights, then x
    assert len(exported.mlir_module()) < 12_000, (
        "the weights were copied into the module"
    )


def test_an_eager_scatter_keeps_its_dimension_numbers():
    # `.at[].set` binds scatter, whose params hold a jaxpr next to a NamedTuple.
    program = lowering.trace(lambda x: x.at[1].set(5.0), jnp.ones(3))
    assert all(o.status == lowering.PASS for o in lowering.check(program))


def test_a_program_traced_in_float64_is_lowered_in_float64():
    with compat.enable_x64(True):
        program = lowering.trace(lambda x: jnp.where(x > 0.5, x, 0.0), jnp.ones(3))
    assert program.jaxpr.in_avals[0].dtype == jnp.float64
    # checked after the `with` block, as the recorder checks a cell's programs
    assert all(o.status == lowering.PASS for o in lowering.check(program))


def test_a_warning_the_notebook_ignores_is_not_a_failure():
    program = lowering.trace(double_rows, jnp.ones((16, 128)))
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore",
            message="Using ``pl.pallas_call`` for Mosaic GPU",
            category=DeprecationWarning,
        )
        warnings.filterwarnings(
            "ignore",
            message=kernels.PALLAS_TRITON_DEPRECATION,
            category=DeprecationWarning,
        )
        cuda = lowering.check(program, platforms=["cuda"])[0]
    assert cuda.status == lowering.PASS, cuda
