"""Reading a notebook after ``import course_utils`` skips jsonschema's optional IRI checker."""

import subprocess
import sys

PROBE = (
    "import course_utils, sys, nbformat\n"
    "nbformat.validate(nbformat.v4.new_notebook())\n"
    "print('lark' in sys.modules, sys.modules.get('rfc3987_syntax', 'absent'))\n"
)


def test_nbformat_after_course_utils_builds_no_lark_grammar():
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "None"]


def test_pytest_loads_course_utils_before_its_plugins(pytestconfig):
    # nbval imports nbformat when pytest loads it: course_utils must come first.
    names = [name for name, _ in pytestconfig.pluginmanager.list_name_plugin()]
    assert "course_utils" in names
    assert sys.modules.get("rfc3987_syntax", "absent") is None
