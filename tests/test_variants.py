"""course_utils.variants: a notebook's variant, from its parameters cell or the grader."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from course_utils import variants
from course_utils.variants import Variant, VariantError

ROOT = Path(__file__).resolve().parents[1]
ADA = {"student": "ada", "seed": "3a5fbe9e9eea3538"}


def test_the_default_variant_draws_what_default_rng_draws():
    assert variants.parse(None) is variants.DEFAULT
    a, b = variants.DEFAULT.normal((2, 3), (4,), stream=5)
    rng = np.random.default_rng(5)
    np.testing.assert_array_equal(a, rng.standard_normal((2, 3), dtype=np.float32))
    np.testing.assert_array_equal(b, rng.standard_normal(4, dtype=np.float32))
    assert a.dtype == np.float32
    assert str(variants.DEFAULT).startswith("the default variant")


def test_a_student_variant_has_its_own_streams():
    ada, bob = variants.parse(ADA), Variant("bob", "0123456789abcdef")
    assert str(ada) == "your variant: ada (seed 3a5fbe9e9eea3538)"
    assert ada.as_dict() == ADA and variants.DEFAULT.as_dict() is None
    draws = {
        v: v.rng(0).integers(0, 2**31, size=4).tolist()
        for v in (ada, bob, variants.DEFAULT)
    }
    assert len({tuple(d) for d in draws.values()}) == 3
    assert ada.rng(0).integers(0, 2**31, size=4).tolist() == draws[ada]  # repeatable
    assert ada.rng(1).integers(0, 2**31, size=4).tolist() != draws[ada]  # per stream


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("ada", "is not a variant"),
        ({"student": "ada"}, "is not a variant"),
        ({"student": "", "seed": "3a5fbe9e9eea3538"}, "non-empty"),
        ({"student": "ada", "seed": 12}, "16 hex digits"),
        ({"student": "ada", "seed": "3A5FBE9E9EEA3538"}, "16 hex digits"),
    ],
)
def test_a_value_that_is_not_a_variant_is_named(value, words):
    with pytest.raises(VariantError, match=words) as err:
        variants.parse(value)
    assert str(err.value).startswith("VARIANT in the parameters cell: ")


def test_use_takes_the_parameters_cell_outside_the_grader(monkeypatch):
    monkeypatch.setattr(variants, "_GIVEN", None)
    monkeypatch.setattr(variants, "_used", None)
    assert variants.current() is variants.DEFAULT
    assert variants.use(ADA) == Variant("ada", ADA["seed"])
    assert variants.current() == Variant("ada", ADA["seed"])
    assert variants.use(None) is variants.DEFAULT


def _in_kernel(env_value: str | None, code: str) -> str:
    env = {"PATH": "/usr/bin:/bin"}
    if env_value is not None:
        env[variants.ENV] = env_value
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    )
    return done.stdout.strip() or done.stderr.strip().splitlines()[-1]


def test_the_graders_variant_is_read_at_import_and_wins():
    given = json.dumps({"student": "bob", "seed": "0123456789abcdef"})
    code = (
        "import os\nfrom course_utils import variants\n"
        f"os.environ[{variants.ENV!r}] = 'changed after the import'\n"
        f"print(variants.use({ADA!r}), '|', variants.current())"
    )
    bob = "your variant: bob (seed 0123456789abcdef)"
    assert _in_kernel(given, code) == f"{bob} | {bob}"
    assert _in_kernel("{not json", "import course_utils.variants").endswith(
        f"${variants.ENV}: Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)"
    )


def test_a_notebooks_own_line_is_read_without_running_it():
    cells = [
        {"cell_type": "markdown", "source": "VARIANT = 'prose'"},
        {"cell_type": "code", "source": "SMOKE = None\nVARIANT = None  # default"},
        {"cell_type": "code", "source": f"VARIANT = {ADA!r}  # yours"},
        {"cell_type": "code", "source": "x = VARIANT  # a use, not a claim"},
    ]
    assert variants.claimed(cells) == Variant("ada", ADA["seed"])
    assert variants.claimed(cells[:2]) is variants.DEFAULT
    assert variants.claimed(cells[:1]) is None
    with pytest.raises(VariantError, match="cell 0: VARIANT is not a literal"):
        variants.claimed([{"cell_type": "code", "source": "VARIANT = open('f')"}])
    with pytest.raises(VariantError, match="cell 0: VARIANT: .*16 hex digits"):
        variants.claimed(
            [{"cell_type": "code", "source": "VARIANT = {'student': 'a', 'seed': 'x'}"}]
        )


@pytest.mark.parametrize(
    "value",
    [
        "{[1]: 2}",  # a literal that cannot be built: TypeError
        " + ".join(["1"] * 5000),  # too deep for the parser: RecursionError
        "[" * 150 + "{[1]: 2}" + "]" * 150,
    ],
    ids=["unhashable", "deep", "nested-unhashable"],
)
def test_a_line_that_cannot_be_read_is_no_claim(value, python_recursion_limit):
    mine = {"cell_type": "code", "source": f"VARIANT = {ADA!r}"}
    line = {"cell_type": "code", "source": f"VARIANT = {value}"}
    assert variants.claimed([line]) is None
    assert variants.claimed([mine, line]) == Variant("ada", ADA["seed"])


def test_the_kernel_environment_names_a_variant_or_nothing():
    assert variants.kernel_env(None) == {} == variants.kernel_env(variants.DEFAULT)
    env = variants.kernel_env(Variant("ada", ADA["seed"]))
    assert json.loads(env[variants.ENV]) == ADA


def _lesson_00_port_mlp() -> dict[str, str]:
    """Lesson 00's master cells of port-mlp: its arrays, solution, visible and hidden tests."""
    import nbformat

    from course_utils import student_version

    master = ROOT / "solutions" / "00_welcome_exercises.ipynb"
    cells = nbformat.read(master, as_version=4).cells
    found = {}
    for cell in cells:
        header = student_version.test_header(cell)
        if "def mlp_torch" in cell.source:
            found["arrays"] = cell.source
        elif student_version.exercise_id(cell) == "port-mlp":
            found["solution"] = cell.source
        elif header and header[0] == "port-mlp":
            found["hidden" if header[2] else "visible"] = cell.source
    assert set(found) == {"arrays", "solution", "visible", "hidden"}, set(found)
    return found


def test_lesson_00s_port_mlp_tests_the_students_own_variant(monkeypatch):
    import jax
    import jax.numpy as jnp
    import torch

    from course_utils.exercises import CheckFailed, check

    cells = _lesson_00_port_mlp()
    monkeypatch.setattr(variants, "_GIVEN", None)
    monkeypatch.setattr(variants, "_used", None)
    ns: dict = {"jax": jax, "jnp": jnp, "np": np, "torch": torch, "check": check}
    ns["variants"] = variants

    def run(variant, solution: str, *names: str) -> None:
        ns["MY"] = variants.use(variant)  # the setup cell
        exec(cells["arrays"], ns)  # noqa: S102 - the course's own master
        exec(solution, ns)  # noqa: S102
        for name in names:
            exec(cells[name], ns)  # noqa: S102

    run(None, cells["solution"], "visible", "hidden")
    old = np.random.default_rng(0)  # the arrays before variants: the default's
    assert np.array_equal(ns["X_np"], old.standard_normal((8, 16), dtype=np.float32))
    run(ADA, cells["solution"], "visible", "hidden")
    ada_out = ns["expected"].numpy()
    bob = {"student": "bob", "seed": "0123456789abcdef"}
    run(bob, cells["solution"], "visible", "hidden")  # the solution passes any variant
    assert not np.allclose(ns["expected"].numpy(), ada_out)
    # ada's output typed in: passes ada's visible test, fails bob's, and both hidden ones
    typed = f"def mlp_jax(X, W1, b1, W2):\n    return jnp.asarray({ada_out.tolist()!r})"
    run(ADA, typed, "visible")
    for variant, name in ((bob, "visible"), (bob, "hidden"), (ADA, "hidden")):
        with pytest.raises((CheckFailed, AssertionError)):
            run(variant, typed, name)
