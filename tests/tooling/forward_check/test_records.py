"""forward_records: what a release deprecates or removed, read from small fake wheels."""

from __future__ import annotations

import ast

import pytest

from course_utils.tooling.forward_check.records import (
    DEFINITION,
    EXTERNAL,
    HINT_WORDS,
    HINTS,
    MISSING,
    MODULE,
    UNKNOWN,
    Release,
    parse_newer,
)
from tests.tooling.forward_check.fakes import JAXLIKE, make_wheel


@pytest.fixture
def jaxlike(tmp_path):
    return Release.from_wheel(make_wheel(tmp_path, "jaxlike", "2.0", JAXLIKE))


def _release(tmp_path, files, project="pkg", version="1.0"):
    return Release.from_wheel(make_wheel(tmp_path, project, version, files))


def test_a_wheel_gives_its_project_version_and_modules(jaxlike):
    assert jaxlike.label == "jaxlike 2.0"
    assert "jaxlike.sharding" in jaxlike.files and "jaxlike" in jaxlike.tops
    assert not any("dist-info" in path for path in jaxlike.files.values())


def test_a_deprecations_entry_is_deprecated_and_still_leads_to_its_definition(jaxlike):
    found = jaxlike.resolve("jaxlike.sharding.OldSharding")
    assert found.state == DEFINITION
    assert found.target == "jaxlike._src.impl.OldSharding"  # deleted after the table
    (record,) = found.records
    assert (record.name, record.status) == (
        "jaxlike.sharding.OldSharding",
        "deprecated",
    )
    assert record.message == "jaxlike.sharding.OldSharding is deprecated."
    assert record.where.startswith("jaxlike/sharding.py:")


def test_an_entry_of_none_is_a_removal_and_plain_names_have_no_record(jaxlike):
    gone = jaxlike.resolve("jaxlike.sharding.gone")
    assert gone.state == MISSING and gone.records[0].status == "removed"
    fine = jaxlike.resolve("jaxlike.sharding.make_sharding")
    assert fine.state == DEFINITION and fine.records == ()
    assert jaxlike.resolve("jaxlike.jit").target == "jaxlike._src.api.jit"


def test_a_table_spread_from_another_module_counts_there_too(jaxlike):
    spread = jaxlike.resolve("jaxlike.kernels.GridSpec")
    assert [r.message for r in spread.records] == ["GridSpec is deprecated."]
    assert jaxlike.resolve("jaxlike.kernels.dot").records[0].status == "removed"
    assert jaxlike.resolve("jaxlike.kernels.call").records == ()


def test_missing_unknown_external_and_submodules(tmp_path):
    release = _release(
        tmp_path,
        {
            "pkg/__init__.py": "import numpy as np\nfrom pkg import sub\n",
            "pkg/sub.py": "x = 1\n",
            "pkg/dyn.py": "for n in ['a']:\n    globals()[n] = 1\n",
            "pkg/lazy.py": "def __getattr__(name):\n    return name\n",
            "pkg/star.py": "from pkg.sub import *\nfrom _ext import *\n",
        },
    )
    assert release.resolve("pkg.nothing").state == MISSING
    assert release.resolve("pkg.sub").state == MODULE
    assert release.resolve("pkg.sub.x").found
    assert release.resolve("pkg.dyn.a").state == UNKNOWN  # built at run time
    assert release.resolve("pkg.lazy.anything").state == UNKNOWN
    assert release.resolve("pkg.star.x").found  # through the star import
    assert release.resolve("pkg.star.y").state == UNKNOWN  # a C extension's star
    assert release.resolve("pkg.np.array").state in (EXTERNAL, UNKNOWN)
    assert release.resolve("numpy.array").state == EXTERNAL


def test_a_folder_without_init_is_a_module_and_a_part_of_a_name_is_not(tmp_path):
    release = _release(
        tmp_path, {"pkg/__init__.py": "", "pkg/ns/deep/mod.py": "x = 1\n"}
    )
    assert release.is_module("pkg.ns") and release.is_module("pkg.ns.deep")
    assert release.is_module("pkg.ns.deep.mod") and release.is_module("pkg")
    for name in ("pkg.n", "pkg.ns.", "pkg.ns.deep.mo", "ns", "pkg.ns.deep.mod.x"):
        assert not release.is_module(name), name
    assert release.resolve("pkg.ns.deep.mod.x").found


def test_a_resolution_without_records_ends_where_one_with_them_does(
    tmp_path, monkeypatch
):
    files = {
        "pkg/__init__.py": """
            from pkg.a import *
            from pkg.b import *
            from pkg.impl import f as f
        """,
        "pkg/impl.py": """
            import warnings
            def f():
                warnings.warn("f is going", DeprecationWarning)
        """,
        # pkg.gone: the first star import serves it from a module that warns on
        # import, and lacks it; the second binds it.
        "pkg/a.py": "from pkg.old import gone\n",
        "pkg/b.py": "gone = 1\n",
        "pkg/old.py": """
            import warnings
            warnings.warn("pkg.old is going", DeprecationWarning)
        """,
    }
    full = _release(tmp_path / "full", files)
    plain = _release(tmp_path / "plain", files)
    monkeypatch.setattr(plain, "records", lambda: pytest.fail("scanned for records"))
    for name in ("pkg.f", "pkg.impl", "pkg.nothing"):
        with_records = full.resolve(name)
        found = plain.resolve(name, records=False)
        assert found.records == ()
        assert (found.state, found.target, found.where) == (
            with_records.state,
            with_records.target,
            with_records.where,
        )
    assert [r.message for r in full.resolve("pkg.f").records] == ["f is going"]
    # Only the records decide pkg.gone: the scan runs, and the answer is the same.
    gone = full.resolve("pkg.gone")
    assert gone.state == MISSING
    assert [r.message for r in gone.records] == ["pkg.old is going"]
    monkeypatch.undo()
    found = plain.resolve("pkg.gone", records=False)
    assert (found.state, found.target, found.records) == (MISSING, gone.target, ())


def test_a_module_whose_only_hint_is_a_call_of_a_helper_is_scanned(tmp_path):
    assert all(any(word in hint for word in HINT_WORDS) for hint in HINTS)
    release = _release(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/_helpers.py": """
                import warnings

                def warn_about(message):
                    warnings.warn(message, DeprecationWarning)
            """,
            "pkg/a.py": """
                from pkg import _helpers

                def old():
                    _helpers.warn_about("old is going")
            """,
            "pkg/b.py": """
                from pkg._helpers import warn_about

                def older():
                    warn_about("older is going")
            """,
        },
    )
    assert [r.message for r in release.resolve("pkg.a.old").records] == ["old is going"]
    assert [r.message for r in release.resolve("pkg.b.older").records] == [
        "older is going"
    ]


def test_decorators_wrappers_and_warnings_are_records(tmp_path):
    release = _release(
        tmp_path,
        {
            "pkg/__init__.py": """
                from pkg._impl import old as old, Klass as Klass, renamed as renamed
                from pkg._impl import fork as fork, calls_helper as calls_helper
            """,
            "pkg/_impl.py": """
                import functools
                import warnings
                from typing_extensions import deprecated as _deprecated
                from pkg import _helpers

                @_deprecated("Use new instead.")
                def old():
                    pass

                def wrapper(new_fn):
                    @functools.wraps(new_fn)
                    def inner(*args):
                        warnings.warn("renamed", DeprecationWarning)
                        return new_fn(*args)
                    return inner

                def new():
                    pass

                renamed = wrapper(new)

                class Klass:
                    def __init__(self):
                        warnings.warn("do not build it", DeprecationWarning)

                    def method(self):
                        warnings.warn("method is going", FutureWarning)

                def fork(key, split=None, value=1):
                    if split is not None:
                        warnings.warn("split= is deprecated", DeprecationWarning)
                    if value > 2:
                        warnings.warn("large values are deprecated", DeprecationWarning)

                def calls_helper():
                    _helpers.warn_about("x", "calls_helper is deprecated")
            """,
            "pkg/_helpers.py": """
                import warnings

                def warn_about(tag, message):
                    if tag == "accelerated":
                        raise ValueError(message)
                    else:
                        warnings.warn(message, category=DeprecationWarning)
            """,
            "pkg/old_module.py": """
                import warnings
                warnings.warn("pkg.old_module is deprecated", DeprecationWarning)
            """,
        },
    )
    assert release.resolve("pkg.old").records[0].how.startswith("@deprecated")
    assert release.resolve("pkg.old").records[0].message == "Use new instead."
    assert release.resolve("pkg.renamed").records[0].how == "pkg._impl.wrapper(...)"
    (build,) = release.resolve("pkg.Klass").records
    assert build.on_call and build.message == "do not build it"
    assert release.resolve("pkg.Klass.method").records[0].message == "method is going"
    assert release.resolve("pkg.fork").records == ()
    split = release.keyword_record("pkg._impl.fork", "split")
    assert split is not None and split.message == "split= is deprecated"
    assert release.keyword_record("pkg._impl.fork", "value") is None
    # value > 2, and the helper's own else branch: only a run decides those
    assert release.conditional == 2
    helper = release.resolve("pkg.calls_helper").records
    assert [r.message for r in helper] == ["calls_helper is deprecated"]
    assert release.resolve("pkg.old_module").records[0].how == "warnings.warn on import"


def test_jax_options_are_their_names(tmp_path):
    release = _release(
        tmp_path,
        {
            "jax/__init__.py": "",
            "jax/_src/config.py": """
                def bool_state(name, default):
                    return name
                a = bool_state(name="jax_enable_x64", default=False)
                b = bool_state("jax_old_route", True)
                c = other("jax_not_an_option")
            """,
        },
        project="jax",
    )
    assert release.options() == {"jax_enable_x64", "jax_old_route"}


@pytest.mark.parametrize(
    "source, name",
    [
        ("def f[T](x: T) -> T:\n    return x\n", "f"),
        ("class Box[T: (int, str)](Base):\n    pass\n", "Box"),
        ("class Pair[\n    A, B: int\n](Base):\n    pass\n", "Pair"),
        ("type Alias[T] = list[T]\n", "Alias"),
        ('x = f"{".a" if y else ""}.b"\n', "x"),
    ],
)
def test_newer_syntax_is_read_with_its_line_numbers(source, name):
    tree = parse_newer(source + "z = 1\n")
    assert tree is not None
    bound = {
        getattr(node, "name", None)
        or (node.targets[0].id if isinstance(node, ast.Assign) else None)
        for node in tree.body
    }
    assert name in bound
    assert tree.body[-1].lineno == source.count("\n") + 1


def test_a_file_no_rewrite_can_read_makes_its_names_unknown_not_missing(tmp_path):
    release = _release(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/odd.py": "x = (\n  1 +\n)\n"},
    )
    assert release.resolve("pkg.odd.x").state == UNKNOWN
    assert release.unreadable == ["pkg/odd.py"]
