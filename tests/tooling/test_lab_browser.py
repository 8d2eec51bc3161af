"""A student's path in a real JupyterLab, driven through its page by Debian's chromium.

``jupyter lab`` starts on 127.0.0.1 with a random token, on copies of lesson 00 and its
exercise notebook (the repository's own files are never opened, so nothing is saved into
them), with settings that keep JupyterLab's news pop-up and kernel dialog away. Lesson 00
runs through the Run menu in smoke mode: every cell executed, no error output at all (its
sharp bits print their errors through ``expect_error``), its figures drawn, and its review
quiz, whose script JupyterLab runs in an output it trusts, answered wrong and then right. The exercise
notebook runs all: every check says "not implemented yet". Then one exercise is solved in
the browser and its check says "passed". Afterwards the server and its kernels are gone.

These are the suite's one run of the English lesson 00 and student notebook 00: nbval
runs the Chinese lesson 00 (the same code cells; tests/notebooks/nbval_lessons.py) and plain
papermill the Chinese student notebook 00 (tests/notebooks/test_plain_papermill.py).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import warnings

import nbformat
import pytest

from tests import load
from tests.tooling.site.fixture import ROOT, launch, need_browser, only, screenshot

pytestmark = pytest.mark.browser

LESSON = "notebooks/00_welcome_and_setup.ipynb"
EXERCISES = "exercises/00_welcome_exercises.ipynb"
SOLVED = "port-mlp"  # the exercise the test solves in the browser
# The project's own defaults (no news pop-up, no kernel dialog), as `make install` and
# Binder install them; the test's server reads them from its app settings folder.
OVERRIDES = ROOT / "binder" / "overrides.json"
SETTINGS = {  # the test's own user settings, on top of the project's
    "@jupyterlab/notebook-extension/tracker": {
        "windowingMode": "none",  # every cell in the page, so all can be read
    },
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
}
# Read from the page's notebook model: each code cell's prompt, tags and outputs.
CELLS = """() => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  return nb.widgets.filter(w => w.model.type === 'code').map(w => ({
    source: w.model.sharedModel.getSource(),
    count: w.model.executionCount,
    tags: w.model.getMetadata('tags') || [],
    outputs: w.model.outputs.toJSON(),
    images: w.node.querySelectorAll('.jp-OutputArea-output img').length}));
}"""
ALL_RUN = """() => window.jupyterapp.shell.currentWidget.content.widgets
  .filter(w => w.model.type === 'code').every(w => w.model.executionCount !== null)"""
# Run All has begun: a code cell has a count or is queued ('*'). Run All marks every cell
# it queues at once, in the page; the kernel's status says nothing here (a kernel that has
# just started is busy for a moment without any cell queued).
STARTED = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  return w.content.widgets.some(c =>
    c.model.type === 'code' && (c.model.executionCount !== null ||
    (c.node.querySelector('.jp-InputPrompt') || {}).textContent === '[*]:'));
}"""
# What a stalled run looks like: the kernel's status, the cells not run yet and how many
# of them are queued or running ('*').
STATE = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  const code = w.content.widgets.filter(c => c.model.type === 'code');
  const left = code.filter(c => c.model.executionCount === null).map(c => ({
    prompt: (c.node.querySelector('.jp-InputPrompt') || {}).textContent,
    first: c.model.sharedModel.getSource().split('\\n')[0]}));
  return {kernel: k && k.status, cells: code.length, not_run: left.length,
          queued: left.filter(c => c.prompt === '[*]:').length,
          first_not_run: left.slice(0, 3)};
}"""
# Finished: every cell ran, or the kernel is idle after an error stopped Run All.
FINISHED = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  const code = w.content.widgets.filter(c => c.model.type === 'code');
  if (code.every(c => c.model.executionCount !== null)) return true;
  const failed = code.some(c =>
    c.model.outputs.toJSON().some(o => o.output_type === 'error'));
  return failed && k && k.status === 'idle';
}"""
# The notebook at the argument's path is the current widget, its cells in the page.
OPENED = """path => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  return !!(w && w.context && w.context.path === path && w.content &&
            w.content.widgets && w.content.widgets.length > 0 &&
            w.node.querySelector('.jp-Cell'));
}"""
IDLE = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session &&
            w.sessionContext.session.kernel;
  return k && k.status === 'idle';
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _workdir(tmp) -> None:
    for rel in (LESSON, EXERCISES):
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp / rel)
    for name, values in SETTINGS.items():
        path = tmp / "settings" / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    (tmp / "app-settings").mkdir()
    shutil.copy(OVERRIDES, tmp / "app-settings" / "overrides.json")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    need_browser()
    from course_utils._procs import kill_process_group

    work = tmp_path_factory.mktemp("lab")
    _workdir(work)
    port, token = _free_port(), secrets.token_hex(16)
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1"]
    cmd += [f"--port={port}", f"--IdentityProvider.token={token}"]
    cmd += [f"--ServerApp.root_dir={work}", "--LabApp.expose_app_in_browser=True"]
    cmd += [f"--LabApp.app_settings_dir={work / 'app-settings'}"]
    cmd += ["--allow-root"] if os.geteuid() == 0 else []
    env = dict(os.environ, COURSE_SMOKE="1", JUPYTER_RUNTIME_DIR=str(work / "rt"))
    env["JUPYTERLAB_SETTINGS_DIR"] = str(work / "settings")
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(work / "workspaces")
    log = open(work / "lab.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        cmd,
        cwd=work,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            urllib.request.urlopen(
                f"{base}/api/status?token={token}", timeout=5
            ).close()
            break
        except OSError:
            time.sleep(0.5)
    else:
        kill_process_group(proc)
        pytest.fail(
            "jupyter lab did not start:\n" + (work / "lab.log").read_text()[-3000:]
        )
    state = {"proc": proc, "base": base, "token": token, "work": work}
    state["stop"] = lambda: _stop(proc)
    yield state
    state["stop"]()
    log.close()


def _stop(proc) -> list[int]:
    """Stop the server and every process under it; the pids still alive after."""
    import psutil

    from course_utils._procs import kill_process_group

    try:
        pids = {p.pid for p in psutil.Process(proc.pid).children(recursive=True)}
    except psutil.Error:
        pids = set()
    kill_process_group(proc)
    alive = []
    for pid in pids | {proc.pid}:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.Error:
            pass
    return alive


@pytest.fixture(scope="module")
def page(lab):
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    browser = launch(pw)
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, proxy=only(lab["base"])
    )
    context.set_default_timeout(120_000)  # a busy machine is slow, not broken
    yield context.new_page()
    browser.close()
    pw.stop()


def _open(page, lab, rel: str):
    """``rel`` as the current notebook, its kernel idle. The first notebook loads
    JupyterLab at its URL; a later one opens in the running app, as a double click in
    its file browser does (``docmanager:open``), instead of loading the app again."""
    if page.evaluate("() => !!window.jupyterapp"):
        page.evaluate(
            "path => window.jupyterapp.commands"
            ".execute('docmanager:open', {path}).then(() => true)",
            rel,
        )
    else:
        page.goto(f"{lab['base']}/lab/tree/{rel}?token={lab['token']}")
    page.wait_for_function(OPENED, arg=rel, timeout=120_000)
    page.wait_for_function(IDLE, timeout=120_000)


def _click_run_all(page) -> None:
    """Run > Run All Cells from the menu; clicked again (three times at most) when a
    busy machine's page did not take the click."""
    from playwright.sync_api import TimeoutError as PageTimeout

    for _ in range(3):
        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
        try:
            page.wait_for_function(STARTED, timeout=30_000)
            return
        except PageTimeout:
            page.keyboard.press("Escape")  # close the menu if it is still open


def _finished(page, timeout_s: float, stall_s: float = 120) -> bool:
    """Wait for Run All to finish; False when no cell completed for ``stall_s``, or when
    the kernel has sat idle with cells left to run and none of them queued (Run All is
    not running at all) for 15 s on an idle machine."""
    idle_s = load.stretched(15)
    deadline, last, since = time.monotonic() + timeout_s, None, time.monotonic()
    idle_since = None
    while time.monotonic() < deadline:
        if page.evaluate(FINISHED):
            return True
        state = page.evaluate(STATE)
        if state["not_run"] != last:
            last, since = state["not_run"], time.monotonic()
        elif time.monotonic() - since > stall_s:
            return False
        if state["kernel"] == "idle" and state["queued"] == 0:
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since > idle_s:
                return False
        else:
            idle_since = None
        time.sleep(1)
    return False


def _run_all(page, timeout_s: float) -> list[dict]:
    """Run All from the menu, as a student would. A run that stalls (no cell completes
    for two minutes, or nothing is queued while the kernel sits idle; seen only on a
    heavily loaded machine) is reported and restarted once from the Kernel menu, as a
    student would; a second stall fails."""
    _click_run_all(page)
    if not _finished(page, timeout_s):
        warnings.warn(
            f"Run All stalled, restarting once: {page.evaluate(STATE)}", stacklevel=2
        )
        _shot(page, "run-all-stalled", always=True)
        page.locator(".lm-MenuBar-item", has_text="Kernel").first.click()
        page.locator(
            ".lm-Menu-item", has_text="Restart Kernel and Run All"
        ).first.click()
        page.locator(".jp-Dialog button.jp-mod-accept").first.click()
        assert _finished(page, timeout_s), (
            f"Run All did not finish: {page.evaluate(STATE)}"
        )
    page.wait_for_function(IDLE, timeout=60_000)
    cells = page.evaluate(CELLS)
    assert page.evaluate(ALL_RUN) or _errors(cells), "Run All did not finish"
    return cells


def _errors(cells: list[dict]) -> list[str]:
    return [
        f"{c['source'][:60]!r}: {o.get('ename')}: {o.get('evalue')}"
        for c in cells
        for o in c["outputs"]
        if o["output_type"] == "error"
    ]


def _shot(page, name: str, always: bool = False) -> None:
    screenshot(page, f"jupyterlab-{name}.png", always=always)


def test_the_projects_settings_reach_the_server(lab):
    """binder/overrides.json (installed by `make install` and Binder) is what the server uses."""
    wanted = {
        "@jupyterlab/apputils-extension:notification": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
        "@jupyterlab/notebook-extension:tracker": {"autoStartDefaultKernel": True},
    }
    assert json.loads(OVERRIDES.read_text()) == wanted
    for plugin, values in wanted.items():
        url = f"{lab['base']}/lab/api/settings/{plugin}?token={lab['token']}"
        with urllib.request.urlopen(url, timeout=30) as reply:
            answer = json.load(reply)
        # overrides.json replaces the schema's defaults; user settings would come on top
        defaults = answer["schema"]["properties"]
        for key, value in values.items():
            got = answer["settings"].get(key, defaults[key].get("default"))
            assert got == value, (plugin, key, got)


def test_lesson_00_runs_all_in_jupyterlab(lab, page):
    _open(page, lab, LESSON)
    cells = _run_all(page, timeout_s=480)
    _shot(page, "00_welcome_and_setup")
    assert cells and all(c["count"] is not None for c in cells)
    assert not _errors(cells), "\n".join(_errors(cells))
    assert sum(c["images"] for c in cells) >= 1, "no figure in lesson 00"
    sharp = [c for c in cells if "with expect_error(" in c["source"]]
    assert sharp and all("Error: " in _output_text(c) for c in sharp), sharp


def test_lesson_00s_quiz_says_wrong_then_right_in_jupyterlab(lab, page):
    """JupyterLab runs the script of an output its session made: the quiz answers."""
    from course_utils import quiz

    _open(page, lab, LESSON)
    panel = page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
    notebook = page.locator(f'[id="{panel}"]')
    box = notebook.locator(".jp-OutputArea-output .course-quiz")
    if not box.count():  # run alone: run the quiz cell, which imports what it needs
        cells = page.evaluate(CELLS)
        index = next(i for i, c in enumerate(cells) if "quiz.load(" in c["source"])
        notebook.locator(".jp-CodeCell").nth(index).locator(".cm-content").click()
        page.keyboard.press("Shift+Enter")
        box.wait_for(timeout=120_000)
    box.scroll_into_view_if_needed()
    expected = quiz.load("00_welcome_and_setup")
    first, second = (
        box.locator(".course-quiz-q").nth(0),
        box.locator(".course-quiz-q").nth(1),
    )
    for question, answers in ((first, (0, 1)), (second, ("499", "500"))):
        index = 0 if question is first else 1
        for answer in answers:
            if question is first:
                question.get_by_role("radio").nth(answer).check()
            else:
                question.get_by_label("Your answer:").fill(answer)
            question.locator("button", has_text="Check").click()
            feedback = question.locator(".course-quiz-feedback")
            assert feedback.inner_text().strip() == expected.feedback(index, answer)[1]
    _shot(page, "00_quiz")
    assert first.locator(".course-quiz-feedback").inner_text().startswith("Right.")
    assert second.locator(".course-quiz-feedback").inner_text().startswith("Right.")


def _solution(exercise: str) -> str:
    master = nbformat.read(
        ROOT / "solutions" / "00_welcome_exercises.ipynb", as_version=4
    )
    cell = next(
        c for c in master.cells if c.source.startswith(f"# EXERCISE: {exercise}")
    )
    lines = cell.source.split("\n")
    return "\n".join(line for line in lines if "### " not in line)


def _output_text(cell: dict) -> str:
    return "".join(
        "".join(o.get("text", "")) + json.dumps(o.get("data", {}))
        for o in cell["outputs"]
    )


def test_exercises_say_not_implemented_then_pass_once_solved(lab, page):
    _open(page, lab, EXERCISES)
    cells = _run_all(page, timeout_s=240)
    assert not _errors(cells), "\n".join(_errors(cells))
    checks = [c for c in cells if c["source"].startswith("# TESTS:")]
    assert checks and all("not implemented yet" in _output_text(c) for c in checks)
    index = next(
        i
        for i, c in enumerate(cells)
        if c["source"].startswith(f"# EXERCISE: {SOLVED}")
    )
    panel = page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
    editor = (
        page.locator(f'[id="{panel}"] .jp-CodeCell').nth(index).locator(".cm-content")
    )
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(_solution(SOLVED))
    assert page.evaluate(CELLS)[index]["source"] == _solution(SOLVED)
    page.keyboard.press("Shift+Enter")  # the solution, then its check
    page.keyboard.press("Shift+Enter")
    page.wait_for_function(
        f"() => ({CELLS})()[{index + 1}].outputs.length > 0", timeout=120_000
    )
    page.wait_for_function(IDLE, timeout=60_000)
    _shot(page, "00_exercises_solved")
    check = page.evaluate(CELLS)[index + 1]
    assert "passed" in _output_text(check) and not _errors([check]), check


def test_the_server_and_its_kernels_leave_no_process_behind(lab):
    assert lab["stop"]() == []
