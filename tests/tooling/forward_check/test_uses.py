"""forward_uses: the names course code uses, resolved from imports and attribute chains."""

from __future__ import annotations

import json
import textwrap

from course_utils.tooling.forward_check.uses import course_files, module_constants, uses

TOPS = frozenset({"jax", "torch", "orbax"})


def _uses(tmp_path, source, name="lesson.py", constants=None):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    found, unparsed = uses(path, tmp_path, TOPS, constants)
    assert not unparsed
    return found


def _names(found):
    return {(u.name, u.line) for u in found}


def test_an_alias_and_an_attribute_chain_resolve_to_the_full_name(tmp_path):
    found = _uses(
        tmp_path,
        """
        import jax.experimental.pallas as pl
        from jax.experimental import pallas
        from jax import sharding as sh

        y = pl.dot(x, x)
        spec = pallas.GridSpec(grid=(1,))
        s = sh.SingleDeviceSharding(d)
        """,
    )
    names = _names(found)
    assert ("jax.experimental.pallas.dot", 6) in names
    assert ("jax.experimental.pallas.GridSpec", 7) in names
    assert ("jax.sharding.SingleDeviceSharding", 8) in names
    dot = next(u for u in found if u.name.endswith(".dot"))
    assert dot.call and dot.place == "lesson.py:6"


def test_assigned_chains_bind_and_anything_else_shadows(tmp_path):
    found = _uses(
        tmp_path,
        """
        import torch
        cudnn, matmul = torch.backends.cudnn, torch.backends.cuda.matmul
        cudnn.allow_tf32 = False
        b = torch.backends
        b.cudnn.deterministic = True
        cudnn = make_something()
        cudnn.allow_tf32 = True

        def f(torch):
            return torch.zeros(3)
        """,
    )
    names = _names(found)
    assert ("torch.backends.cudnn.allow_tf32", 4) in names
    assert ("torch.backends.cudnn.deterministic", 6) in names
    assert not any(line in (8, 11) for _, line in names)  # rebound and shadowed


def test_an_import_inside_a_function_stays_in_that_function(tmp_path):
    found = _uses(
        tmp_path,
        """
        def a():
            import jax
            return jax.jit

        def b():
            return jax.grad
        """,
    )
    assert _names(found) == {("jax", 3), ("jax.jit", 4)}


def test_module_imports_below_a_function_are_seen_inside_it(tmp_path):
    found = _uses(
        tmp_path,
        """
        def a():
            return jax.jit

        import jax
        """,
    )
    assert ("jax.jit", 3) in _names(found)


def test_probes_and_safe_try_blocks_are_guarded(tmp_path):
    found = _uses(
        tmp_path,
        """
        import jax
        a = getattr(jax.sharding, "make_single_device_sharding", None)
        b = hasattr(jax, "enable_x64")
        c = getattr(jax, "jit")
        try:
            d = jax.lax.pvary
        except AttributeError:
            d = None
        e = jax.lax.pcast
        """,
    )
    guarded = {u.name: u.guarded for u in found}
    assert guarded["jax.sharding.make_single_device_sharding"]
    assert guarded["jax.enable_x64"] and guarded["jax.lax.pvary"]
    assert not guarded["jax.jit"] and not guarded["jax.lax.pcast"]


def test_the_branch_for_releases_without_a_probed_name_says_so(tmp_path):
    found = _uses(
        tmp_path,
        """
        import jax

        def place(device):
            make = getattr(jax.sharding, "make_single_device_sharding", None)
            if make is None:
                return jax.sharding.SingleDeviceSharding(device)
            return make(device)

        def vary(x):
            pcast = getattr(jax.lax, "pcast", None)
            if pcast is not None:
                return pcast(x)
            return jax.lax.pvary(x)

        def plain():
            return jax.lax.psum

        def x64():
            context = getattr(jax, "enable_x64", None)
            if context is None:
                from jax.experimental import enable_x64 as context
            with context(True):
                pass
        """,
    )
    absent = {(u.name, u.line): u.absent for u in found}
    assert absent[("jax.experimental.enable_x64", 22)] == "jax.enable_x64"
    # what the branch binds does not reach past it: a newer jax never runs it
    assert absent[("jax.enable_x64", 23)] == ""
    absent = {u.name: u.absent for u in found}
    assert (
        absent["jax.sharding.SingleDeviceSharding"]
        == "jax.sharding.make_single_device_sharding"
    )
    assert absent["jax.lax.pvary"] == "jax.lax.pcast"
    assert absent["jax.lax.psum"] == ""


def test_jax_options_by_string_or_by_a_course_constant(tmp_path):
    (tmp_path / "course_utils").mkdir()
    (tmp_path / "course_utils" / "flags.py").write_text('ROUTE = "jax_old_route"\n')
    constants = module_constants(tmp_path)
    assert constants == {"course_utils.flags.ROUTE": "jax_old_route"}
    found = _uses(
        tmp_path,
        """
        import jax
        from course_utils import flags
        jax.config.update("jax_enable_x64", True)
        jax.config.update(flags.ROUTE, False)
        x = jax.config.jax_default_matmul_precision
        try:
            jax.config.update("jax_gone", 1)
        except AttributeError:
            pass
        """,
        constants=constants,
    )
    options = {u.name: u.guarded for u in found if u.option}
    assert options == {
        "jax_enable_x64": False,
        "jax_old_route": False,
        "jax_default_matmul_precision": False,
        "jax_gone": True,
    }


def test_a_course_helper_that_returns_a_module_is_followed(tmp_path):
    found = _uses(
        tmp_path,
        """
        from course_utils import compat
        pl = compat.pallas()
        pl.dot(a, b)
        """,
    )
    assert ("jax.pallas.dot", 4) in _names(found)


def test_relative_imports_inside_course_utils(tmp_path):
    found = _uses(
        tmp_path,
        """
        from . import compat
        pl = compat.pallas()
        pl.GridSpec()
        """,
        name="course_utils/kernels.py",
    )
    assert ("jax.pallas.GridSpec", 4) in _names(found)


def test_a_notebook_names_the_cell_and_its_line(tmp_path):
    cells = [
        {"cell_type": "markdown", "source": ["import jax"]},
        {"cell_type": "code", "source": ["%matplotlib inline\n", "import jax\n"]},
        {
            "cell_type": "code",
            "source": ["x = 1\n", "s = jax.sharding.PartitionSpec()"],
        },
    ]
    path = tmp_path / "exercises" / "ex.ipynb"
    path.parent.mkdir()
    path.write_text(json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5}))
    found, unparsed = uses(path, tmp_path, TOPS)
    spec = next(u for u in found if u.name.endswith("PartitionSpec"))
    assert spec.place == "exercises/ex.ipynb, cell 3, line 2" and not unparsed


def test_a_file_that_does_not_parse_is_reported(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("def f(:\n")
    found, unparsed = uses(path, tmp_path, TOPS)
    assert found == [] and unparsed == ["broken.py:1: invalid syntax"]


def test_course_files_are_the_lessons_masters_student_notebooks_and_package(tmp_path):
    for name in (
        "notebooks/01_a.py",
        "notebooks/zh/01_a.py",
        "solutions/01_a_exercises.py",
        "exercises/01_a_exercises.ipynb",
        "course_utils/x.py",
        "course_utils/sub/y.py",
        "tests/test_x.py",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    found = {p.relative_to(tmp_path).as_posix() for p in course_files(tmp_path)}
    assert found == {
        "notebooks/01_a.py",
        "solutions/01_a_exercises.py",
        "exercises/01_a_exercises.ipynb",
        "course_utils/x.py",
        "course_utils/sub/y.py",
    }
