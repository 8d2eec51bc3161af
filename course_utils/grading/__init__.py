"""The instructor's grader: ``course grade`` and ``course check``.

Students never import this package. Modules, in the order a grading run uses them:

- ``cli``: the ``grade`` and ``check`` commands' arguments and entry points
- ``batch``: one grading run over many submissions (limits, shards, ``grade``, ``check``)
- ``notebook``: reading a ``.ipynb`` file defensively (one-line reasons for bad ones)
- ``master``: the master's exercises, tests, points and setup cells
- ``submissions``: finding submissions in a folder and matching their cells to the master
- ``environment``: the kernel's environment, IPython profile and kernelspec
- ``launch``: the worker processes of a run (job files, backstop, orphan sweep)
- ``sandbox``: the bubblewrap sandbox a submission's kernel runs in, and whether it works
- ``worker``: the grading policy for one submission (order, restarts, replay, canary)
- ``session``: one Jupyter kernel: start, run a cell, interrupt, kill
- ``outputs``: a cell's outputs and record from the kernel's messages, capped as they arrive
- ``kernel``: the kernel process's entry point (limits applied before IPython starts)
- ``procs``: the grader's own process tree (subreaper, memory watchdog, killing it)
- ``scoring``: a student's record from the kernel's replies, and hidden-test redaction
- ``flags``: the flags column: constructs in a student's code worth a human look
- ``report``: the report files (Gradescope ``results.json``, feedback and executed notebooks)
- ``store``: the report folder, the class tables and shard merging
- ``records``: keyed ``grade.json`` records (the report folder's key, seals, shape checks)
- ``names``: file names as safe text, report folder names, spreadsheet-safe CSV cells
- ``verbs``: ``grade``'s class-level verbs (``report``, ``export``, ``manual``) and options
- ``analytics``: what a class's records say: pass shares, failure groups, flags, resources
- ``classreport``: ``grade report``: the class report (HTML, Markdown, PNG figures)
- ``adjust``: the late policy and manual grades applied to graded records
- ``regrade``: ``--only EXERCISE`` and ``--student ID``: regrading, and what changed
- ``export``: ``grade export``: the roster, and the gradebook file Canvas or Moodle imports
- ``late``: the late policy: deadline, extensions, submission times, penalty or cut-off
- ``deploy``: the arguments of ``grade slurm``, ``release`` and ``gradescope build``
- ``slurm``: ``grade slurm``: the job array of ``grade-array.sh``, one shard per task
- ``release``: ``course release``: the student-facing tree, scanned for answers
- ``gradescope``: ``course gradescope build`` and the bundle's ``run_autograder``
- ``classroom``: GitHub Classroom: ``course check``'s points as the autograding reporter reads them
"""
