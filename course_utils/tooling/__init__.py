"""What the ``course`` command (:mod:`course_utils.cli`) drives: notebook pairs,
exercise generation, the notebook runner, the device check, the lowering check, the
forward check, the website and the translation.

Lessons and exercises never import this package, and it never imports
``course_utils.grading`` (the grader may use it). A concept of several modules is a
sub-package; its ``__init__`` lists its modules:

- ``execution/``: running notebooks: ``runner`` (papermill, each notebook in its own process group) and ``ipc_kernel`` (a Jupyter kernel over Unix sockets)
- ``device_check/``: ``course check-device``, the whole course on a GPU or TPU within a time budget (``command``, ``run``, ``budget``, ``schedule``, ``estimates``, ``items``, ``children``, ``probe``, ``install``, ``steps``, ``wheels``, ``report``)
- ``lowering/``: the lowering check: ``export`` lowers a jitted program for GPUs and TPUs on a CPU, ``record`` records each program a notebook's kernel compiles
- ``forward_check/``: ``course forward-check``, the course against the newest releases, read from their wheels (``command``, ``records``, ``uses``)
- ``site/``: ``course site``, the course as a website (``build``, ``pages``, ``side_by_side``, ``extension``, ``assets``, ``pdf``, ``languages``)
- ``translation/``: ``course translate``, the Chinese edition from gettext catalogs (``command``, ``catalog``)

Modules:

- ``args``: the argument types the commands share
- ``errors``: ``CourseError``, the one error type every command reports
- ``notebooks``: the ``.py``/``.ipynb`` pairs, badges, the setup cell, student builds
- ``cheatsheet``: ``docs/CHEATSHEET.md``, every lesson's Summary table on one page, which ``course sync`` writes
- ``points_page``: ``docs/POINTS.md``, each assignment's exercises and their points, which ``course build-exercises`` writes
- ``prose``: the ``course prose`` command: words, sentence lengths and parentheses of each lesson, against its budget
- ``cli``: the command's old address (``course_utils.tooling.cli``), which installed ``course`` scripts and the student notebooks' check line name
- ``lowering_record``: the lowering recorder's old IPython-extension address, which IPython startup files name
"""
