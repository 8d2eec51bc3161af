"""The kernel protocol and its isolation: one student's notebook kernel, started and fenced in.

The lowest layer of the grader: it knows Jupyter kernels and processes, not masters,
points or records, and imports nothing else of ``course_utils.grading``.

- ``session``: one Jupyter kernel: start, run a cell, interrupt, kill
- ``outputs``: a cell's outputs and record from the kernel's messages, capped as they arrive
- ``kernel_process``: the kernel process's entry point (limits applied before IPython starts)
- ``environment``: the kernel's environment, IPython profile and kernelspec
- ``isolation``: the bubblewrap sandbox a submission's kernel runs in, and whether it works
- ``process_tree``: the grader's own process tree (subreaper, memory watchdog, killing it)
"""
