"""``python -m course_utils.grading.classroom``, the path that workflows copied from
earlier releases run: the same check and the same result as the module's own path."""

from __future__ import annotations

from tests.grading.integrations.test_classroom import _run


def test_the_old_path_checks_as_the_module_does(tmp_path):
    missing = tmp_path / "missing.ipynb"
    old = _run(missing, tmp_path, module="course_utils.grading.classroom")
    new = _run(missing, tmp_path)
    assert old == new
    rc, res, stdout = old
    assert rc == 1 and res["status"] == "error" and "visible tests: 0" in stdout
