"""strict: framework deprecations become errors, other warnings stay warnings."""

import warnings

import pytest

from course_utils import strict


def _warn(category, module, message="old API"):
    warnings.warn_explicit(message, category, "somefile.py", 1, module=module)


@pytest.mark.parametrize(
    "module", ["jax", "jax.numpy", "flax.nnx", "torch.nn", "course_utils.timing"]
)
def test_a_deprecation_from_a_framework_or_the_course_is_an_error(module):
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        strict.install()
        with pytest.raises(DeprecationWarning, match="old API"):
            _warn(DeprecationWarning, module)
        with pytest.raises(FutureWarning):
            _warn(FutureWarning, module)


@pytest.mark.parametrize("module", ["requests", "jaxtyping", "numpy", "torchvisionx"])
def test_other_modules_and_other_categories_only_warn(module):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        strict.install()
        _warn(DeprecationWarning, module)
        _warn(UserWarning, "jax")
    assert [w.category for w in caught] == [DeprecationWarning, UserWarning]


def test_known_internal_warnings_are_ignored():
    message, module, why = strict.KNOWN_INTERNAL[0]
    assert why
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        strict.install()
        _warn(
            DeprecationWarning,
            "torch.jit._script",
            "`torch.jit.script_method` is deprecated",
        )
    assert caught == []


def test_ipython_dir_writes_the_startup_script_once(tmp_path):
    assert strict.ipython_dir(str(tmp_path)) == str(tmp_path)
    script = tmp_path / "profile_default" / "startup" / "00-course-strict-warnings.py"
    assert script.read_text(encoding="utf-8") == strict.STARTUP_SCRIPT
    mtime = script.stat().st_mtime_ns
    strict.ipython_dir(str(tmp_path))
    assert script.stat().st_mtime_ns == mtime  # unchanged, not rewritten
    script.write_text("stale")
    strict.ipython_dir(str(tmp_path))
    assert script.read_text(encoding="utf-8") == strict.STARTUP_SCRIPT
