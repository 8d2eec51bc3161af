"""The outside systems: Gradescope, GitHub Classroom, Slurm, an LMS gradebook, the release.

Imports ``batch`` and the layers below; only ``commands`` imports it. The files these
systems run ship next to the modules: ``grade-array.sh`` (Slurm) and ``templates/``
(Gradescope's ``setup.sh`` and ``run_autograder``, Classroom's workflow).

- ``slurm``: ``grade slurm``: the job array of ``grade-array.sh``, one shard per task
- ``gradescope``: ``course gradescope build`` and the bundle's ``run_autograder``
- ``classroom``: GitHub Classroom: ``course check``'s points as the autograding reporter
  reads them
- ``gradebook``: ``grade export``: the roster, and the gradebook file Canvas or Moodle
  imports
- ``release``: ``course release``: the student-facing tree (an assignment's template
  repository), scanned for answers
"""
