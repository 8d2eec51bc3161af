"""The instructor's grader: ``course grade`` and ``course check``.

Students never import this package. Modules, in the order a grading run uses them:

- ``cli``: the ``grade`` and ``check`` commands' arguments and entry points
- ``load``: masters (exercises, tests, points) and submissions matched to them
- ``batch``: one grading run over many submissions (limits, kernels, shards)
- ``session``: one Jupyter kernel: start, run a cell, interrupt, kill
- ``worker``: the grading policy for one submission (order, restarts, replay, canary)
- ``kernel``: the kernel process's entry point (limits applied before IPython starts)
- ``procs``: the grader's own process tree (subreaper, memory watchdog)
- ``report``, ``store``: per-student reports and the gradebook
"""
