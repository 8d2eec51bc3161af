"""Plausible wrong answers to the exercises, one module per exercise master.

Each module ``wNN.py`` (the master's two-digit number) defines ``WRONG``: for each
exercise id, a list of ``(label, code, hint_words)``. ``code`` replaces the
exercise's solution cell; running that exercise's visible test cell must then
fail with :class:`course_utils.exercises.CheckFailed`, and its message must
contain ``hint_words`` (the hint that points at the actual mistake). A fourth item,
``{distribution: version}``, names the first version on which the slip is a bug; on
an older one the answer is right and is not replayed (``replay.applies``).
``tests/notebooks/test_masters.py`` runs them, in the one run of each master
(:mod:`tests.wrong_answers.replay`).
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def run_smoke_module(*args: str) -> Any:
    """``python -m ARGS`` from the repository root in smoke mode, outside the grader;
    the JSON its last line prints. Fails with its stderr when it exits non-zero."""
    env = {**os.environ, "COURSE_SMOKE": "1", "MPLBACKEND": "Agg"}
    env.pop("COURSE_GRADING", None)
    out = subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])
