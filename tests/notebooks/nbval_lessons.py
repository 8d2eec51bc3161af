"""How the lessons run under nbval: which notebooks, and the lowering check after each.

``make test`` passes ``notebooks/`` to pytest with ``--nbval-lax``: each code cell of a
lesson is a test item, run in one kernel per lesson. The root ``conftest.py`` loads this
plugin and gives every kernel smoke mode, strict warnings and the lowering recorder. Here:

- of the Chinese edition, only lesson 00 runs (:data:`TRANSLATED_RUN`), and it stands
  for the English lesson 00, which runs in JupyterLab instead (:data:`IN_JUPYTERLAB`):
  each notebook runs once per suite;
- after each lesson's last cell, a ``lowering`` item (:class:`LoweringCheck`) asks the
  kernel whether every program its cells ran lowers for a GPU and a TPU.

``test_lesson_collection.py`` beside it checks what the suite collects.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# A translated lesson has its English lesson's code cells byte for byte
# (tests/tooling/translation/test_editions.py), so the English runs stand for it; this one runs under
# nbval too, to prove that an edition executes.
TRANSLATED_RUN = "00_welcome_and_setup.ipynb"
# Its English lesson runs in a real JupyterLab, by Run All (tests/tooling/test_lab_browser.py),
# and the Chinese twin's run above gives it the lowering check and strict warnings. Named on
# the command line, it runs under nbval like any lesson.
IN_JUPYTERLAB = TRANSLATED_RUN


def pytest_ignore_collect(collection_path, config):
    if collection_path.suffix != ".ipynb":
        return None
    if collection_path.parent == ROOT / "notebooks" / "zh":
        return collection_path.name != TRANSLATED_RUN
    if collection_path.parent == ROOT / "notebooks":
        return collection_path.name == IN_JUPYTERLAB or None
    return None


class LoweringFailed(Exception):
    """Programs of a notebook that do not lower for a GPU or a TPU."""


class LoweringCheck(pytest.Item):
    """After a notebook's last cell: every program its cells ran, lowered for cuda and tpu.

    Asks the notebook's kernel (``course_utils.tooling.lowering.record``) for its
    report, also kept in build/lowering/, and fails naming the cell and the function.
    """

    def runtest(self):
        import json

        from course_utils.tooling.lowering import record as lowering_record

        nb = self.parent
        if nb.kernel is None or not nb.kernel.is_alive() or nb.timed_out:
            pytest.skip("the notebook's kernel is gone: nothing to ask")
        path = ROOT / "build" / "lowering" / f"{Path(nb.path).stem}.json"
        path.unlink(missing_ok=True)
        module = lowering_record.__name__
        code = f"__import__('importlib').import_module({module!r}).write_report({str(path)!r})"
        msg_id = nb.kernel.execute_cell_input(code, allow_stdin=False)
        nb.kernel.await_reply(msg_id, timeout=600)
        nb.kernel.await_idle(msg_id, 60)
        if not path.exists():
            raise LoweringFailed(f"{nb.path}: the kernel wrote no report ({path})")
        report = json.loads(path.read_text(encoding="utf-8"))
        if report.get("disabled"):
            pytest.skip(report["disabled"])
        sources = [c.source for c in nb.nb.cells if c.cell_type == "code"]
        failures, skips = lowering_record.findings(report, sources)
        for entry, label in zip(
            report["cells"], lowering_record.cell_labels(report, sources), strict=True
        ):
            entry["cell"] = label  # nbval's name for it, kept in the report file
        path.write_text(json.dumps(report, indent=1), encoding="utf-8")
        self.add_report_section("call", "lowering skipped", "\n".join(skips))
        if failures:
            raise LoweringFailed(
                f"{nb.path}: {len(failures)} lowering(s) failed "
                f"(report: {path.relative_to(ROOT)})\n" + "\n".join(failures)
            )

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, LoweringFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{self.parent.name}::{self.name}"


def add_lowering_checks(items):
    """One :class:`LoweringCheck` right after each notebook's last cell (same kernel)."""
    try:
        from nbval.plugin import IPyNbCell
    except ImportError:
        return
    last = {}
    for i, item in enumerate(items):
        if isinstance(item, IPyNbCell) and "tests/fixtures" not in str(item.path):
            last[item.parent] = i
    for parent, i in sorted(last.items(), key=lambda pair: -pair[1]):
        items.insert(i + 1, LoweringCheck.from_parent(parent, name="lowering"))
