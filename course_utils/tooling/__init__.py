"""The ``course`` command and what it drives: notebook pairs, exercise generation,
the notebook runner, the install plan and the device check.

Lessons and exercises never import this package. Modules:

- ``cli``: the ``course`` command (one parser, built explicitly)
- ``errors``: ``CourseError``, the one error type every command reports
- ``notebooks``: the ``.py``/``.ipynb`` pairs, badges, the setup cell, student builds
- ``markers``: the exercise marker grammar (solutions, stubs, visible and hidden tests)
- ``runner``: executes notebooks with papermill, each in its own process group
- ``install``: which torch and jax builds a machine gets (stdlib only; runs as a script)
- ``device_check``, ``device_steps``: ``course check-device`` on a GPU or TPU machine
"""
