"""The instructor's grader: ``course grade``, ``course check``, ``course release`` and
``course gradescope``.

Students never import this package. Its modules stand in layers, lowest first; a module
imports only its own layer and the layers below it (``tests/grading/test_layers.py``):

- ``sandbox/``: the kernel protocol and its isolation: one Jupyter kernel (``session``,
  ``outputs``), the kernel process (``kernel_process``), its environment, the bubblewrap
  sandbox (``isolation``) and the grader's process tree (``process_tree``)
- ``inputs/``: what the grader reads: ``.ipynb`` files read defensively (``ipynb``), names
  from outside (``names``), the master (``master``), the submissions matched to it
  (``submissions``) and the variant secret's per-student seeds (``seeds``)
- ``records/``: what a run leaves behind: sealed ``grade.json`` records (``keyed``), the
  report folder and class tables (``store``), what they say (``analytics``), the class
  report (``classreport``), the similarity report (``similarity``) and the written
  answers gathered for graders (``answers``)
- ``policy/``: points from the kernel's replies (``scoring``), the flags column
  (``flags``), the files handed back with hidden tests redacted (``feedback``), the late
  policy (``late``) and late and manual grades applied to records (``adjust``)
- ``batch/``: orchestration: one grading run over many submissions (``grader``), its worker
  processes (``pool``), one submission's worker (``worker``) and regrades (``regrade``)
- ``integrations/``: the outside systems: Slurm (``slurm``, ``grade-array.sh``), Gradescope
  (``gradescope``), GitHub Classroom (``classroom``), an LMS gradebook (``gradebook``),
  the student-facing release (``release``), and the files they run (``templates/``)
- ``commands/``: the commands' arguments and entry points: ``grade`` (``grade``,
  ``grade merge``, ``check``), ``grade``'s class-level verbs (``verbs``, ``similarity``,
  ``answers``) and ``deploy`` (``grade slurm``, ``release``, ``gradescope build``)

At the root, ``classroom`` is the old path of ``integrations/classroom``, which workflows
copied from earlier releases run as ``python -m course_utils.grading.classroom``.

A grading run, in order: ``commands.grade`` parses the arguments; ``batch.grader`` reads
the master and the submissions (``inputs``), starts a worker per submission
(``batch.pool``), each of which runs the cells in a sandboxed kernel
(``batch.worker`` on ``sandbox``); the replies become a record (``policy.scoring``) and
the files handed back (``policy.feedback``), sealed into the report folder
(``records.store``).
"""
