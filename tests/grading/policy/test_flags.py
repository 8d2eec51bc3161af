"""The flags column: tampering constructs are named under any alias; honest solutions raise none."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from course_utils import student_version
from course_utils.grading.policy import flags

ROOT = Path(__file__).resolve().parents[3]
PROC, CODE, IMPORT = (
    "process control",
    "dynamic code (exec/eval/compile)",
    "dynamic import",
)
BUILTINS, ENCODED = "sys.modules / builtins", "encoded payload"
REFLECT = "reflection (getattr/globals/dunders)"

EVASIONS = {
    "import os as _o\n_o._exit(0)": PROC,
    "from os import system as s\ns('ls')": PROC,
    "import os.path as p, subprocess as q\nq.run(['ls'])": PROC,
    "__import__('os').system('ls')": PROC,
    "m = __import__('o' + 's')": IMPORT,
    "import importlib\nimportlib.import_module('subprocess').run('ls')": PROC,
    "from importlib import import_module as im\nim('x')": IMPORT,
    "exec('x = 1')": CODE,
    "y = eval('1 + 1')": CODE,
    "c = compile('1', 'f', 'eval')": CODE,
    "import builtins as b\ngetattr(b, 'ex' + 'ec')('x = 1')": BUILTINS,
    "getattr(__builtins__, 'exec')('x = 1')": CODE,
    "f = vars(__builtins__)['ev' + 'al']": REFLECT,
    "import base64\nexec(base64.b64decode(b'eD0x'))": ENCODED,
    "from base64 import b64decode as d\nrun = d(b'eD0x')": ENCODED,
    "import codecs\np = codecs.decode('rkrp', 'rot13')": ENCODED,
    "timing.os.system('ls')": PROC,
    "().__class__.__base__.__subclasses__()": REFLECT,
    "globals()['check'] = lambda *a, **k: True": REFLECT,
    "timing.bench = lambda *a, **k: None": flags.PATCH,
    "check = lambda *a, **k: True": flags.REBIND,
    "def assert_close(*a, **k):\n    pass": flags.REBIND,
    "def f():\n    global float\n    float = int": flags.REBIND,
    "import os\nos.environ['COURSE_GRADING'] = '0'": "environment variables",
    "!kill -9 $PPID": "get_ipython",
    "%sx ls": "get_ipython",
    "files = !ls": "get_ipython",
    "import sys\nframe = sys._getframe(1).f_back": "frame inspection",
    "print(_ih[-1])": "input history",
    "text = open('/proc/self/status').read()": "file access",
}


@pytest.mark.parametrize("code, flag", EVASIONS.items(), ids=range(len(EVASIONS)))
def test_each_evasion_is_flagged(code, flag):
    assert flag in flags.flags_for({"ex": ["# EXERCISE: ex\n" + code]})


def test_honest_code_and_markdown_raise_no_flag():
    honest = (
        "def port(torch_model, nnx_model, name, max_iter=3):\n"
        "    self = torch_model\n"
        "    src = getattr(torch_model, name)\n"
        "    self.weight = src\n"
        "    torch_model.eval()\n"
        "    return [input for input in range(max_iter)]\n"
    )
    assert (
        flags.flags_for({"a": [honest], "b": ["Not Python: exec(this) is prose."]})
        == []
    )
    shown = (
        "from IPython.display import display, HTML\ndisplay(HTML('<b>x</b>'))\n"
        "import IPython.display as d\nd.display(1)\nfrom IPython import display"
    )
    assert flags.flags_for({"a": [shown]}) == []  # showing an output, not the kernel
    sneaky = "from IPython.display import get_ipython"
    assert flags.flags_for({"a": [sneaky]}) == ["get_ipython"]


def test_honest_solutions_of_every_master_raise_no_flag():
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for ex in student_version.parse(nb, str(path)).values():
            code = {ex.id: [nb.cells[i].source for i in ex.solution_cells]}
            assert flags.flags_for(code) == [], (path.name, ex.id)
