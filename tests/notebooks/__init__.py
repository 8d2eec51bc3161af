"""The tests that execute notebooks, and how the lessons run under nbval.

- ``test_masters.py``: every exercise master, once, in a kernel, with each wrong answer of
  ``tests/wrong_answers/`` replayed at its visible test.
- ``test_student_notebooks.py``: every student notebook of ``exercises/``, top to bottom,
  each exercise saying "not implemented yet" (00 runs in JupyterLab and, in Chinese,
  under plain papermill).
- ``test_plain_papermill.py``: the Chinese student notebook 00 under plain papermill,
  nothing of the course patched in.
- ``nbval_lessons.py``: how the lessons run under nbval, a plugin the root ``conftest.py``
  loads: ``make test`` passes ``notebooks/`` to pytest with ``--nbval-lax``; this adds the
  lowering check after each lesson and picks the one Chinese twin that runs, in place of
  its English lesson, which runs in JupyterLab (``tests/tooling/test_lab_browser.py``).
  Each notebook runs once per suite.
  ``test_lesson_collection.py`` checks what the suite collects.
- ``select_lesson.py``: ``make test-lesson N=03``, the lesson, its master and its student
  notebook, with the quick checks that keep them in step.
"""
