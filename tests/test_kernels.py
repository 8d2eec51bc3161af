"""Triton's status and skip message, Pallas's interpret choice, the tile picture, graph counts."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from course_utils import kernels


def test_import_does_not_import_frameworks():
    code = (
        "import sys, course_utils.kernels; "
        "assert not {'jax', 'torch', 'triton'} & set(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_absent_triton_says_why_and_how_to_install(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    status = kernels.setup_triton(find_spec=lambda name: None)
    assert not status.available and status.version is None
    line = status.line()
    assert line.startswith("Triton cells skipped")
    assert 'pip install ".[kernels]"' in line and "not installed" in line
    assert "TRITON_INTERPRET" not in __import__("os").environ
    assert status.skipped() == "Triton absent: skipped (see the setup cell)"


def test_present_triton_line_names_the_mode():
    status = kernels.TritonStatus(True, True, "9.9", "no CUDA GPU: the interpreter")
    assert "interpreted" in status.line() and "9.9" in status.line()
    gpu = kernels.TritonStatus(True, False, "9.9", "a CUDA GPU")
    assert "compiled" in gpu.line()


def test_pallas_interprets_on_cpu():
    pytest.importorskip("jax")
    import jax

    if jax.default_backend() == "cpu":
        assert kernels.pallas_interpret()
        assert kernels.pallas_interpret((4, 8))


def test_plot_tiles_labels_each_block_inside_and_hatches_the_overhang():
    import matplotlib

    matplotlib.use("Agg")
    # a (3, 4) array in (2, 3) blocks
    ids = np.add.outer(np.arange(3) // 2 * 2, np.arange(4) // 3)
    ax = kernels.plot_tiles(ids, (2, 3), title="t")
    assert ax.get_title() == "t"
    labels = {t.get_text(): t.get_position() for t in ax.texts}
    assert set(labels) == {f"program {2 * i + j}, block ({i}, {j})"
                           for i in range(2) for j in range(2)}  # fmt: skip
    for text, (x, y) in labels.items():  # each label inside the array, in its own block
        i, j = int(text[-5]), int(text[-2])
        assert 0 <= x <= 4 and 0 <= y <= 3
        assert j * 3 <= x <= (j + 1) * 3 and i * 2 <= y <= (i + 1) * 2
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 2  # the strip right of the array, the strip below it
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["past the array's edge"]  # the one legend entry


def test_count_graphs_sees_a_break_and_fullgraph_refuses_it():
    torch = pytest.importorskip("torch")

    @torch.compiler.disable
    def host(x):
        return x + 1

    def smooth(x):
        return (x.sin() * 2).cos()

    def broken(x):
        return host(x.sin()).cos()

    x = torch.ones(3)
    assert kernels.count_graphs(smooth, x, fullgraph=True) == 1
    assert kernels.count_graphs(broken, x) == 2
    with pytest.raises(Exception, match="(?i)skip|disable|graph"):
        kernels.count_graphs(broken, x, fullgraph=True)


@pytest.mark.parametrize("cuda", [False, True])
def test_present_triton_is_interpreted_only_without_cuda(monkeypatch, cuda):
    import types

    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setattr(kernels, "_cuda_present", lambda: cuda)
    fake = types.SimpleNamespace(__version__="9.9")
    monkeypatch.setattr(kernels.importlib, "import_module", lambda name: fake)
    status = kernels.setup_triton(find_spec=lambda name: object())
    assert status.available and status.version == "9.9"
    assert status.interpreted is not cuda
    assert ("TRITON_INTERPRET" in __import__("os").environ) is not cuda


# --- Pallas: which backend, and every lesson-10 kernel lowered for CUDA and TPU -------

H100, A100, T4 = (9, 0), (8, 0), (7, 5)


@pytest.mark.parametrize(
    ("platform", "cc", "block", "name"),
    [
        ("cpu", None, None, "interpreter"),
        ("gpu", T4, None, "interpreter"),  # Colab's free GPU
        ("gpu", H100, (8, 128), "triton"),
        ("gpu", H100, (4, 8), "triton"),
        ("gpu", A100, (8, 128), "triton"),
        ("tpu", None, (8, 128), "mosaic_tpu"),
        ("tpu", None, (4, 8), "interpreter"),
        ("tpu", None, (8,), "interpreter"),
    ],
)
def test_choose_pallas_backend(platform, cc, block, name):
    backend = kernels.choose_pallas_backend(platform, cc, block)
    assert backend.name == name
    assert backend.interpret is (name == "interpreter")
    assert backend.line().startswith(f"Pallas backend: {name} (") and backend.reason


def test_a_tpu_block_may_span_small_dimensions_whole():
    tiles = kernels.choose_pallas_backend(
        "tpu", None, (None, None, 4, 8), array_shape=(3, 2, 4, 8)
    )
    assert tiles.name == "mosaic_tpu"
    column = kernels.choose_pallas_backend(
        "tpu", block_shape=(8, 1), array_shape=(16, 1)
    )
    assert column.name == "mosaic_tpu"
    ragged = kernels.choose_pallas_backend("tpu", None, (4, 8), array_shape=(12, 16))
    assert ragged.name == "interpreter"


@pytest.mark.parametrize(
    ("platform", "cc", "cuda", "tpu"),
    [
        ("cpu", None, "triton", "mosaic_tpu"),  # compiled elsewhere: an A100, a TPU
        ("gpu", T4, "interpreter", "mosaic_tpu"),
        ("gpu", H100, "triton", "mosaic_tpu"),
        ("tpu", None, "triton", "mosaic_tpu"),
    ],
)
def test_choose_pallas_backends_has_one_per_platform(platform, cc, cuda, tpu):
    backends = kernels.choose_pallas_backends(platform, cc, (8, 128))
    assert {k: b.name for k, b in backends.items()} == {
        "cuda": cuda, "tpu": tpu, "default": "interpreter",
    }  # fmt: skip


def test_pallas_backend_reads_the_device_it_is_given():
    class Device:
        platform, compute_capability = "gpu", "7.5"

    assert kernels.pallas_backend(device=Device()).name == "interpreter"
    Device.compute_capability = "9.0"
    assert kernels.pallas_backend((8, 128), device=Device()).name == "triton"


def test_per_platform_runs_this_platforms_call():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    backends = kernels.choose_pallas_backends("cpu", None, (8, 128))
    calls = {"triton": 1.0, "mosaic_tpu": 2.0, "interpreter": 3.0}
    fn = kernels.per_platform(lambda b: lambda x: x * calls[b.name], backends)
    assert float(jax.jit(fn)(jnp.ones(()))) == 3.0  # the CPU: the default branch


def test_only_the_triton_backend_passes_triton_compiler_params():
    pytest.importorskip("jax")
    from jax.experimental.pallas import triton as pltriton

    triton = kernels.choose_pallas_backend("gpu", A100)
    assert isinstance(triton.compiler_params(), pltriton.CompilerParams)
    for platform, cc in (("tpu", None), ("cpu", None), ("gpu", T4)):
        backend = kernels.choose_pallas_backend(platform, cc, (8, 128))
        assert backend.compiler_params() is None


def test_pallas_backend_is_the_interpreter_on_this_cpu():
    jax = pytest.importorskip("jax")
    if jax.default_backend() == "cpu":
        assert kernels.pallas_backend().name == "interpreter"
        assert kernels.pallas_interpret((8, 128))


def test_triton_deprecation_filter_matches_its_message_only():
    import warnings

    from course_utils import strict

    gpu = kernels.choose_pallas_backend("gpu", A100)
    cpu = kernels.choose_pallas_backend("cpu")
    with warnings.catch_warnings():
        strict.install()
        assert "not used" in kernels.filter_triton_deprecation(cpu)
        with pytest.raises(DeprecationWarning):
            warnings.warn_explicit(
                "The Pallas Triton backend is deprecated and will be removed",
                DeprecationWarning, "x.py", 1, module="jax._src.pallas.pallas_call",
            )  # fmt: skip
        line = kernels.filter_triton_deprecation(cpu, gpu)
        assert "filtered" in line and kernels.PALLAS_TRITON_DEPRECATION in line
        warnings.warn_explicit(
            "The Pallas Triton backend is deprecated and will be removed",
            DeprecationWarning, "x.py", 1, module="jax._src.pallas.pallas_call",
        )  # fmt: skip
        with pytest.raises(DeprecationWarning):
            warnings.warn_explicit(
                "Using pl.pallas_call for Mosaic GPU kernels is deprecated",
                DeprecationWarning, "x.py", 1, module="jax._src.pallas.pallas_call",
            )  # fmt: skip


@pytest.fixture
def triton_on_gpus():
    """kernels.use_triton_on_gpus() for one test: the flag and the filter put back after."""
    import warnings

    jax = pytest.importorskip("jax")
    from jax.experimental import pallas  # noqa: F401 - jax 0.7 defines the flag there

    before = jax.config.values.get(kernels.MOSAIC_GPU_FLAG)
    with warnings.catch_warnings():
        yield kernels.use_triton_on_gpus()
    if before is not None:
        jax.config.update(kernels.MOSAIC_GPU_FLAG, before)


def test_use_triton_on_gpus_turns_the_mosaic_gpu_flag_off_where_it_exists(
    triton_on_gpus,
):
    import jax

    assert triton_on_gpus.startswith("Pallas on a GPU: the Triton backend")
    if kernels.MOSAIC_GPU_FLAG in jax.config.values:  # jax 0.7 to 0.11.1
        assert jax.config.values[kernels.MOSAIC_GPU_FLAG] is False
        assert "set to False" in triton_on_gpus
    else:  # jax 0.11.2 and newer: no flag, Triton by default
        assert "default" in triton_on_gpus


def test_pad_to_blocks_pads_the_ends_with_nan():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.ones((37, 100))
    padded = kernels.pad_to_blocks(x, (8, 128))
    assert padded.shape == (40, 128)
    assert bool(jnp.all(padded[:37, :100] == 1))
    assert bool(jnp.all(jnp.isnan(padded[37:]))) and bool(jnp.isnan(padded[0, 100]))
    assert kernels.pad_to_blocks(jnp.ones((8, 128)), (8, 128)).shape == (8, 128)


ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "notebooks" / "10_custom_kernels.py"
MASTER = ROOT / "solutions" / "10_custom_kernels_exercises.py"
LESSON_NAMES = {
    "softmax_kernel_pallas", "softmax_pallas", "softmax_kernel_unmasked",
    "TILE_SHAPE", "TILE_BLOCK", "tile_grid", "tile_ids_kernel_pallas", "tile_ids_pallas",
    "double_kernel_offsets", "double_pallas",
    "softmax_op_jax", "softmax_fwd_jax", "softmax_bwd_jax", "loss_jax", "MM_BLOCK",
    "matmul_kernel_pallas", "matmul_pallas", "matmul_jax",
}  # fmt: skip
MASTER_NAMES = {
    "launch_on_each_platform", "tiling", "tile_ids_kernel", "tile_ids",
    "logsumexp_kernel", "logsumexp_pallas", "silu_kernel", "silu_pallas", "silu_fwd",
    "silu_bwd", "silu_custom", "silu_loss",
}  # fmt: skip
# The devices a notebook may run on, simulated: (platform, compute capability). "cpu" is
# how the course's tests run it; its programs must lower for CUDA and TPU too.
DEVICES = {"cpu": ("cpu", None), "t4": ("gpu", T4), "a100": ("gpu", A100),
           "h100": ("gpu", H100), "tpu": ("tpu", None)}  # fmt: skip
EXPORTS = ("cuda", "tpu")
TRITON_TARGET = "__gpu$xla.gpu.triton"  # pltriton.CUSTOM_CALL_TARGET_NAME from jax 0.11
TARGETS = {"triton": TRITON_TARGET, "mosaic_tpu": "tpu_custom_call"}


def _defines(node: ast.stmt, names: set[str]) -> bool:
    """A top-level def or assignment of one of ``names``, or a call on one (defvjp)."""
    if isinstance(node, ast.FunctionDef):
        return node.name in names
    if isinstance(node, ast.Assign):
        return any(
            isinstance(n, ast.Name) and n.id in names
            for t in node.targets
            for n in ast.walk(t)
        )
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        return (
            isinstance(func, ast.Attribute) and getattr(func.value, "id", "") in names
        )
    return False


def _notebook_kernels(path: Path, names: set[str], device: str) -> dict:
    """Run the notebook's kernel definitions as if on ``device``: its code, its choices."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    platform, cc = DEVICES[device]
    fake = types.SimpleNamespace(**vars(kernels))
    fake.pallas_backend = lambda block_shape=None, array_shape=None, device=None: (
        kernels.choose_pallas_backend(platform, cc, block_shape, array_shape)
    )
    fake.pallas_backends = lambda block_shape=None, array_shape=None, device=None: (
        kernels.choose_pallas_backends(platform, cc, block_shape, array_shape)
    )
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = [node for node in tree.body if _defines(node, names)]
    # The lesson's backend is the one its setup cell chooses for the device, here device.
    backend = fake.pallas_backend((8, 128))
    ns = {"jax": jax, "jnp": jnp, "np": np, "pl": pl, "kernels": fake,
          "functools": functools, "PALLAS": backend, "INTERPRET": backend.interpret,
          "S": types.SimpleNamespace(block_rows=8, batch=3)}  # fmt: skip
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), ns)
    assert names <= set(ns), f"{path.name} no longer defines {names - set(ns)}"
    return ns


@pytest.fixture
def triton_modules(monkeypatch):
    """(grid mapping, Triton IR) of every kernel lowered through Pallas's Triton backend."""
    lowering = pytest.importorskip("jax._src.pallas.triton.lowering")
    seen = []
    original = lowering.lower_jaxpr_to_triton_module

    def capture(jaxpr, grid_mapping, *args, **kwargs):
        result = original(jaxpr, grid_mapping, *args, **kwargs)
        seen.append((grid_mapping, result.module.operation.get_asm()))
        return result

    monkeypatch.setattr(lowering, "lower_jaxpr_to_triton_module", capture)
    return seen


def _ragged_blocks(grid_mapping) -> list:
    """(array shape, block shape) of each block that does not tile its array exactly."""
    ragged = []
    for bm in grid_mapping.block_mappings:
        block = tuple(d if isinstance(d, int) else getattr(d, "block_size", 1) or 1
                      for d in bm.block_shape)  # fmt: skip
        array = getattr(bm, "array_aval", None) or bm.array_shape_dtype  # or jax 0.7's
        shape = tuple(array.shape)
        if any(n % b for n, b in zip(shape, block, strict=True)):
            ragged.append((shape, block))
    return ragged


def _unmasked_stores(ir: str) -> list[str]:
    """The ``tt.store`` ops of a Triton module that carry no mask operand."""
    stores = re.findall(r"tt\.store (%[^\s,]+), (%[^\s,:]+)(, %[^\s,:]+)?", ir)
    return [s[0] for s in stores if not s[2]]


def _export(fn, args, platform: str) -> str:
    import jax
    from jax import export

    jax.clear_caches()  # lower afresh, so the Triton modules are captured every time
    checks = [export.DisabledSafetyCheck.custom_call(TRITON_TARGET)]
    return export.export(jax.jit(fn), platforms=[platform], disabled_checks=checks)(
        *args
    ).mlir_module()


def _lesson_cases(ns: dict) -> dict:
    """name: (function, arguments)."""
    import jax
    import jax.numpy as jnp

    x, xb = jnp.ones((37, 100)), jnp.ones((3, 18, 100))
    softmax, unmasked = ns["softmax_pallas"], ns["softmax_kernel_unmasked"]
    matmul = ns["matmul_jax"]  # the route the device takes: a loop over K on a GPU
    bf16 = jnp.ones((256, 256), jnp.bfloat16)
    return {
        "softmax": (softmax, (x,)),
        "softmax, full size": (softmax, (jnp.ones((256, 1000)),)),
        "softmax, 64 rows": (functools.partial(softmax, block_rows=64), (x,)),
        "unmasked": (functools.partial(softmax, kernel=unmasked), (x,)),
        "jvp": (lambda x, t: jax.jvp(softmax, (x,), (t,)), (x, x)),
        "custom_vjp grad": (jax.grad(ns["loss_jax"]), (x, x)),
        "vmap of grad": (jax.vmap(jax.grad(ns["loss_jax"])), (xb, xb)),
        "tile ids": (ns["tile_ids_pallas"], ()),
        "offsets read by the interpreters' kernel": (
            functools.partial(ns["double_pallas"], interpret=ns["INTERPRET"]),
            (jnp.ones((24, 128)),),
        ),
        "matmul": (matmul, (jnp.ones((100, 200)), jnp.ones((200, 72)))),
        "matmul, full size": (matmul, (jnp.ones((250, 380)), jnp.ones((380, 200)))),
        "matmul, bfloat16 in 256 blocks": (
            functools.partial(matmul, bm=256, bk=256, bn=256),
            (bf16, bf16),
        ),
    }


def _check_lowering(mlir: str, backend, triton_modules: list) -> None:
    found = {name for name, target in TARGETS.items() if target in mlir}
    if backend.interpret:
        assert not found, "an interpreted kernel lowers as plain HLO"
        return
    assert found == {backend.name}, f"chose {backend.name}, lowered through {found}"
    if backend.name == "triton":
        assert triton_modules, "no Triton module was lowered"
        for grid_mapping, ir in triton_modules:
            ragged = _ragged_blocks(grid_mapping)
            # Pallas's Triton backend stores a block unmasked: only exact tiles are safe.
            assert not (ragged and _unmasked_stores(ir)), (ragged, _unmasked_stores(ir))


def _lesson_exports(device: str) -> dict:
    """The platform(s) a program traced on ``device`` is compiled for, and the backend
    its plain pallas_calls then lower through (the interpreter: plain HLO)."""
    platform, cc = DEVICES[device]
    here = kernels.choose_pallas_backend(platform, cc, (8, 128))
    if here.interpret:  # interpret=True lowers as HLO wherever it is compiled
        return dict.fromkeys(EXPORTS, here)
    if platform == "gpu":
        return {"cuda": here}
    return {"tpu": here}


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_lesson_kernels_lower_for_cuda_and_tpu(device, triton_modules, triton_on_gpus):
    """The lesson's plain pallas_calls as each device runs them: interpreted (plain HLO),
    or compiled for the device's own platform through the backend it chose."""
    ns = _notebook_kernels(LESSON, LESSON_NAMES, device)
    for name, (fn, args) in _lesson_cases(ns).items():
        for export, backend in _lesson_exports(device).items():
            triton_modules.clear()
            try:
                _check_lowering(_export(fn, args, export), backend, triton_modules)
            except AssertionError as err:
                where = f"{name}, traced on {device}, for {export}"
                raise AssertionError(f"{where}: {err}") from None


@pytest.mark.slow
def test_lesson_kernels_compiled_lower_for_both_platforms(triton_on_gpus):
    """What the notebook tests' lowering check does with a program traced on the CPU:
    every pallas_call compiled (interpret=False) lowers for CUDA through Triton and for
    TPU through Mosaic, with the lesson's GPU route set (use_triton_on_gpus)."""
    from course_utils.tooling.lowering import export as lowering

    ns = _notebook_kernels(LESSON, LESSON_NAMES, "cpu")
    for name, (fn, args) in _lesson_cases(ns).items():
        outcomes = lowering.check(lowering.trace(fn, *args))
        failed = [f"{o.platform}: {o.reason}" for o in outcomes if o.status != "pass"]
        assert not failed, f"{name}: {failed}"


@pytest.mark.parametrize("route", ["triton", "mosaic_tpu", "interpreter"])
def test_each_matmul_route_computes_the_product(route):
    """The grid over K (TPU, interpreter) and the GPU's loop over K both equal jnp.dot."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    ns = _notebook_kernels(LESSON, LESSON_NAMES, "cpu")
    ns["INTERPRET"] = True
    matmul = ns["matmul_pallas"]
    if route == "triton":  # the GPU's route, run by the interpreter
        matmul = functools.partial(kernels.matmul_loop_pallas, interpret=True)
    rng = np.random.default_rng(0)
    for m, k, n in ((100, 200, 72), (130, 384, 129)):  # K steps: 2 and 3 (4 on the GPU)
        a = jnp.asarray(rng.normal(size=(m, k)).astype(np.float32))
        b = jnp.asarray(rng.normal(size=(k, n)).astype(np.float32))
        got = matmul(a, b)
        want = jnp.dot(a, b, precision=jax.lax.Precision.HIGHEST)
        np.testing.assert_allclose(
            np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-4
        )


def _master_cases(ns: dict) -> dict:
    import jax
    import jax.numpy as jnp

    x, xb = jnp.ones((13, 100)), jnp.ones((3, 13, 100))
    # value and gradient: the gradient alone needs no forward kernel (the residual is x)
    grad = jax.value_and_grad(functools.partial(ns["silu_loss"], ns["silu_custom"]()))
    silu = ((8, 128), None)
    cases = {
        f"tile ids {s} in {b}": (
            functools.partial(ns["tile_ids"], s, b),
            (),
            ((None, None, *b), (-(-s[0] // b[0]), -(-s[1] // b[1]), *b)),
        )
        for s, b in (((10, 12), (4, 8)), ((5, 3), (2, 2)), ((16, 9), (8, 4)))
    }
    cases["logsumexp"] = (ns["logsumexp_pallas"], (x,), ((8, 1), (16, 1)))
    cases["silu"] = (ns["silu_custom"](), (x,), silu)
    cases["silu grad"] = (grad, (x, x), silu)
    cases["vmap of silu grad"] = (jax.vmap(grad, in_axes=(0, None)), (xb, x), silu)
    return cases


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_exercise_kernels_lower_for_cuda_and_tpu(device, triton_modules):
    """The master's launchers hold each platform's call (kernels.per_platform)."""
    pytest.importorskip("jax")
    ns = _notebook_kernels(MASTER, MASTER_NAMES, device)
    platform, cc = DEVICES[device]
    for name, (fn, args, (block, array_shape)) in _master_cases(ns).items():
        backends = kernels.choose_pallas_backends(platform, cc, block, array_shape)
        for export in EXPORTS:
            triton_modules.clear()
            try:
                _check_lowering(
                    _export(fn, args, export), backends[export], triton_modules
                )
            except AssertionError as err:
                where = f"{name}, traced on {device}, for {export}"
                raise AssertionError(f"{where}: {err}") from None


def test_a_ragged_block_is_stored_unmasked_by_the_triton_backend(triton_modules):
    """Why the launchers pad: a block past the array's edge is loaded and stored as is."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    def double(x_ref, y_ref):
        y_ref[...] = x_ref[...] * 2

    def ragged(x):  # a launcher that does not pad: (8, 128) blocks on (37, 100)
        spec = pl.BlockSpec(block_shape=(8, 128), index_map=lambda i: (i, 0))
        backend = kernels.choose_pallas_backend("gpu", A100)
        return pl.pallas_call(
            double, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(5,),
            in_specs=[spec], out_specs=spec, compiler_params=backend.compiler_params(),
        )(x)  # fmt: skip

    _export(ragged, (jnp.ones((37, 100)),), "cuda")
    [(grid_mapping, ir)] = triton_modules
    assert _ragged_blocks(grid_mapping) == [((37, 100), (8, 128))] * 2
    assert _unmasked_stores(ir), (
        "the Triton backend now masks its stores: update lesson 10"
    )


def test_out_of_bounds_errors_turns_the_tpu_interpreters_error_into_one_line():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    def offsets(x_ref, y_ref):  # Triton's habit: the block read at the array's offset
        y_ref[...] = x_ref[pl.ds(pl.program_id(0) * 8, 8), :]

    def call(x, interpret):
        spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
        return pl.pallas_call(
            offsets, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(2,),
            in_specs=[spec], out_specs=spec, interpret=interpret,
        )(x)  # fmt: skip

    x = jax.device_put(jnp.arange(16.0 * 128).reshape(16, 128), jax.devices("cpu")[0])
    assert bool(jnp.all(call(x, True) == x))  # interpret=True clamps into the block
    with pytest.raises(IndexError, match=r"^Out-of-bounds read") as err:
        with kernels.out_of_bounds_errors():
            call(x, pltpu.InterpretParams()).block_until_ready()
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="other"), kernels.out_of_bounds_errors():
        raise ValueError("other errors pass through")


def test_xla_kernels_lists_the_fusions_xla_launches():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    names = kernels.xla_kernels(lambda x: jax.nn.softmax(x, axis=-1), jnp.ones((8, 16)))
    assert names and all(isinstance(n, str) for n in names)
    assert kernels.xla_kernels(lambda x: jnp.sin(x) * 2 + 1, jnp.ones(8)) != []


@pytest.mark.slow
def test_inductor_kernels_lists_the_kernels_inductor_generates():
    torch = pytest.importorskip("torch")
    names = kernels.inductor_kernels(lambda x: torch.softmax(x, -1), torch.ones(4, 8))
    assert len(names) >= 1 and all(isinstance(n, str) for n in names)


def test_folded_folds_a_table_whose_times_cannot_be_judged():
    class Contention:
        def __init__(self, contended):
            self.contended = contended

    class Table:
        def __init__(self, contended):
            self.contention = Contention(contended)

        def _repr_markdown_(self):
            return "| table |"

    quiet = kernels.folded(Table(False), "a line")._repr_markdown_()
    assert quiet == "| table |\n\na line"
    busy = kernels.folded(Table(True))._repr_markdown_()
    assert busy.startswith("<details><summary>Timing table, folded: other work")
    assert busy.endswith("</details>") and "| table |" in busy
    sim = kernels.folded(Table(False), interpreted=True)._repr_markdown_()
    assert "ran interpreted" in sim and sim.startswith("<details>")
