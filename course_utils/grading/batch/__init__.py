"""Orchestration: one grading run over many submissions, its worker processes, regrades.

Imports every layer below (``policy``, ``records``, ``inputs``, ``sandbox``); the outside
systems and the commands import it.

- ``grader``: one grading run over many submissions (limits, shards, ``grade``, ``check``)
- ``pool``: the worker processes of a run (job files, backstop, orphan sweep)
- ``worker``: one worker process: one submission's cells in order (restarts, replay, canary)
- ``regrade``: ``--only EXERCISE`` and ``--student ID``: regrading, and what changed
"""
