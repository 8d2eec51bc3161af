"""course_utils.torch_logs: Dynamo's log messages collected for a block, shortened."""

from __future__ import annotations

import subprocess
import sys

import pytest

from course_utils import torch_logs

torch = pytest.importorskip("torch")


def _scale(x, s):
    return x * s


def test_collect_keeps_a_recompile_message_and_prints_nothing(capsys):
    torch.compiler.reset()
    compiled = torch.compile(_scale, backend="eager")
    compiled(torch.ones(3), 2.0)
    with torch_logs.collect(recompiles=True) as log:
        compiled(torch.ones(3), 3.0)  # the guard on s == 2.0 fails
    assert len(log) == 1 and "Recompiling function _scale" in log[0]
    assert "2.0" in torch_logs.short(log)
    assert capsys.readouterr().err == ""
    with torch_logs.collect(recompiles=True) as quiet:
        compiled(torch.ones(3), 3.0)  # compiled for 3.0 now: nothing to log
    assert quiet == []


def test_short_keeps_the_first_lines_without_source_comments():
    message = "Recompiling f\n  - 0/0: s == 2.0   # y = x * s  # f.py:2\n  - more\n  - dropped"
    assert torch_logs.short([message], lines=2) == "Recompiling f\n  - 0/0: s == 2.0"


def test_break_reason_reads_the_reason_line_or_falls_back_to_the_first():
    message = "Graph break in user code at f.py:3\nGraph Break Reason: Data-dependent branching\n  Hint: ..."
    assert torch_logs.break_reason(message) == "Data-dependent branching"
    wrapped = "Graph Break Reason: Unsupported call:\n  print()\n"
    assert torch_logs.break_reason(wrapped) == "Unsupported call: print()"
    assert torch_logs.break_reason("Another wording\nsecond line") == "Another wording"
    assert torch_logs.break_reason("") == ""


def test_importing_the_module_imports_no_framework():
    code = "import sys, course_utils.torch_logs; print('torch' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
