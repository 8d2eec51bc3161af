"""meshes: the accelerators when there are enough, else simulated CPUs; one line says which."""

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

from course_utils import meshes

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class FakeDevice:
    platform: str
    id: int


def fakes(platform: str, n: int) -> list[FakeDevice]:
    return [FakeDevice(platform, i) for i in range(n)]


CPUS = fakes("cpu", 8)


@pytest.mark.parametrize("n_gpus", [1, 2, 7])
def test_too_few_gpus_give_simulated_cpus(n_gpus):
    chosen, line = meshes.choose(8, fakes("gpu", n_gpus), CPUS)
    assert chosen == CPUS
    assert line == (
        f"Meshes use 8 simulated CPU devices: this machine has {n_gpus} GPU device(s), "
        "fewer than 8."
    )


def test_enough_accelerators_are_used_first_ones_first():
    gpus = fakes("gpu", 8)
    chosen, line = meshes.choose(8, gpus, CPUS)
    assert chosen == gpus and "8 GPU device(s) of the 8" in line
    chosen, line = meshes.choose(2, gpus, CPUS)
    assert chosen == gpus[:2] and "2 GPU device(s) of the 8" in line
    chosen, line = meshes.choose(2, fakes("tpu", 4), CPUS)
    assert [d.platform for d in chosen] == ["tpu"] * 2 and "TPU" in line


def test_no_accelerator_says_so():
    chosen, line = meshes.choose(2, [], CPUS)
    assert chosen == CPUS[:2] and "no GPU or TPU" in line


def test_too_few_cpus_name_the_setup_call():
    with pytest.raises(ValueError, match=r"env\.setup\(cpu_devices=8\)"):
        meshes.choose(8, fakes("gpu", 1), CPUS[:1])
    with pytest.raises(ValueError, match="positive int"):
        meshes.choose(0, [], CPUS)


@pytest.mark.parametrize("n_gpus", [1, 2, 8])
def test_devices_sees_fake_accelerators(monkeypatch, capsys, n_gpus):
    jax = pytest.importorskip("jax")
    gpus = fakes("gpu", n_gpus)
    monkeypatch.setattr(
        jax, "devices", lambda backend=None: CPUS if backend == "cpu" else gpus + CPUS
    )
    monkeypatch.delenv(meshes.ACCELERATORS_VAR, raising=False)
    chosen = meshes.devices(8)
    assert chosen == (gpus if n_gpus == 8 else CPUS)
    out = capsys.readouterr().out.strip()
    assert out.startswith("Meshes use 8 ") and out.count("\n") == 0


def test_told_count_stands_cpus_in_for_accelerators(monkeypatch):
    jax = pytest.importorskip("jax")
    monkeypatch.setattr(jax, "devices", lambda backend=None: CPUS)
    monkeypatch.setenv(meshes.ACCELERATORS_VAR, "1")
    assert meshes.accelerators() == CPUS[:1]
    assert meshes.devices(8, verbose=False) == CPUS  # one is fewer than eight
    monkeypatch.setenv(meshes.ACCELERATORS_VAR, "8")
    assert meshes.devices(8, verbose=False) == CPUS  # eight stand-ins: the other branch
    monkeypatch.setenv(meshes.ACCELERATORS_VAR, "9")
    with pytest.raises(ValueError, match="only 8 devices"):
        meshes.accelerators()
    monkeypatch.setenv(meshes.ACCELERATORS_VAR, "one")
    with pytest.raises(ValueError, match="whole number"):
        meshes.accelerators()


def test_told_count_limits_real_accelerators(monkeypatch):
    jax = pytest.importorskip("jax")
    gpus = fakes("gpu", 8)
    monkeypatch.setattr(
        jax, "devices", lambda backend=None: CPUS if backend == "cpu" else gpus
    )
    monkeypatch.setenv(meshes.ACCELERATORS_VAR, "1")
    assert meshes.devices(8, verbose=False) == CPUS  # as on a one-GPU machine
    monkeypatch.delenv(meshes.ACCELERATORS_VAR)
    assert meshes.devices(8, verbose=False) == gpus


# A mesh over a slice of jax.devices() (or over all of it) is what crashed on one GPU.
ALLOWED = {  # every process's devices, in a program launched with JAX_PLATFORMS=cpu
    "course_utils/distributed/jax_multiprocess.py",
}


def _is_default_devices(node: ast.AST) -> bool:
    """``jax.devices()`` with no platform argument."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "devices"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "jax"
        and not node.args
    )


def mesh_problems(source: str) -> list[int]:
    """Lines that slice ``jax.devices()`` or build a mesh not given the helper's devices."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and _is_default_devices(node.value):
            if isinstance(node.slice, ast.Slice):
                bad.append(node.lineno)
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in ("make_mesh", "Mesh"):
                given = {k.arg: k.value for k in node.keywords}
                devices = given.get("devices")
                if devices is None or _is_default_devices(devices):
                    bad.append(node.lineno)
    return sorted(set(bad))


def _sources():
    for folder in ("notebooks", "solutions", "course_utils"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if path.name != "meshes.py" and rel not in ALLOWED:
                yield rel, path


def test_no_mesh_slices_or_spans_jax_devices():
    bad = []
    for rel, path in _sources():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        bad += [f"{rel}:{n}: {lines[n - 1].strip()}" for n in mesh_problems(text)]
    assert not bad, (
        "meshes must take their devices from course_utils.meshes.devices(n) "
        "(or meshes.make / gpt.shard.mesh):\n" + "\n".join(bad)
    )


@pytest.mark.parametrize(
    "line",
    [
        "m = jax.make_mesh(shape, names, auto, devices=jax.devices()[:n])",
        "m = jax.make_mesh((8,), ('data',))",
        "m = jax.make_mesh((2,), ('data',), devices=jax.devices())",
        "d = jax.devices()[2:]",
        "m = Mesh(np.array(devs), ('x',))",
    ],
)
def test_the_scan_catches_meshes_off_the_helper(line):
    assert mesh_problems(line) == [1]


def test_the_scan_passes_the_helper_and_platform_lists():
    ok = "m = jax.make_mesh((8,), ('d',), devices=meshes.devices(8))\nc = jax.devices('cpu')[:2]"
    assert mesh_problems(ok) == []
