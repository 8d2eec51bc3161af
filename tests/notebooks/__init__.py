"""The tests that execute notebooks, and how the lessons run under nbval.

- ``test_masters.py``: every exercise master, once, in a kernel, with each wrong answer of
  ``tests/wrong_answers/`` replayed at its visible test.
- ``test_student_notebooks.py``: every student notebook of ``exercises/``, top to bottom,
  each exercise saying "not implemented yet".
- ``test_plain_papermill.py``: master 00 under plain papermill, nothing of the course
  patched in.
- ``lessons.py``: how the lessons run under nbval, a plugin the root ``conftest.py``
  loads: ``make test`` passes ``notebooks/`` to pytest with ``--nbval-lax``; this adds the
  lowering check after each lesson and picks the one Chinese twin that runs.
  ``test_lesson_collection.py`` checks what the suite collects.
"""
