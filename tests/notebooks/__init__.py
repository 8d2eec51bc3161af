"""The tests that execute notebooks, beside the lessons that nbval runs.

- ``test_masters.py``: every exercise master, once, in a kernel, with each wrong answer of
  ``tests/wrong_answers/`` replayed at its visible test.
- ``test_student_notebooks.py``: every student notebook of ``exercises/``, top to bottom,
  each exercise saying "not implemented yet".
- ``test_plain_papermill.py``: master 00 under plain papermill, nothing of the course
  patched in.
- ``test_lessons.py``: the lessons' own run, checked. ``make test`` passes ``notebooks/``
  to pytest with ``--nbval-lax``, and the root ``conftest.py`` gives their kernels smoke
  mode, strict warnings and the lowering check; this file checks what the suite collects.
"""
