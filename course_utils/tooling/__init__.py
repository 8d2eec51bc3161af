"""The ``course`` command and what it drives: notebook pairs, exercise generation,
the notebook runner, the install plan, the device check and the website.

Lessons and exercises never import this package. Modules:

- ``cli``: the ``course`` command (one parser, built explicitly from every room's verbs)
- ``args``: the argument types the commands share
- ``errors``: ``CourseError``, the one error type every command reports
- ``notebooks``: the ``.py``/``.ipynb`` pairs, badges, the setup cell, student builds
- ``prose``: the ``course prose`` command: words, sentence lengths and parentheses of each lesson, against its budget
- ``student_version``: the exercise marker grammar (solutions, stubs, visible and hidden tests) and the student notebook made from a master
- ``runner``: executes notebooks with papermill, each in its own process group
- ``ipc_kernel``: a Jupyter kernel over Unix sockets for machines that refuse internet sockets
- ``install``: which torch and jax builds a machine gets (stdlib only; runs as a script)
- ``device_check``: the ``course check-device`` command and its ``--plan``
- ``device_run``: the check itself: install, then every item side by side, within its budget
- ``device_budget``: the time budget and each item's share of it
- ``device_schedule``: which items run when and side by side (cores, GPU memory, budget), or one at a time on a TPU
- ``device_estimates``: the shipped seconds, cores and GPU memory of each item, and their sources
- ``device_lessons``: the check's items (lessons, masters, student notebooks, tests) and their report entries
- ``device_children``: each item's child process, pinned to its cores, sharing the GPU
- ``device_steps``: the machine's facts (the probe) and the install step
- ``device_wheels``: the wheels a prepared GPU machine without network needs
- ``forward``: the ``course forward-check`` command: the course against the newest jax, flax, optax, orbax and torch, read from their wheels, never installed
- ``forward_records``: what a release deprecates or removes, read from its Python sources without importing it
- ``forward_uses``: the names the course uses from those packages, resolved from imports and attribute chains
- ``lowering``: lowers a jitted JAX program for GPUs and TPUs on a CPU (``jax.export``)
- ``lowering_record``: records each program a notebook's kernel compiles, and checks it
- ``device_report``: the JSON report, written after every step
- ``site``: the ``course site`` command: the course as a website, from executed notebooks
- ``site_pages``: the site's Sphinx source tree, staged from the course's files
- ``site_pairs``: finds the side-by-side pairs (``# PyTorch`` / ``# JAX`` / parity cells)
- ``site_ext``: the site's Sphinx extension (JupyterLab's heading anchors, the pairs' blocks)
- ``site_assets``: mermaid, MathJax and the stylesheet, served from the site itself
- ``site_pdf``: the whole course as one PDF, printed by chromium from the built pages
- ``site_zh``: the site's Chinese half: which editions it takes, their pages with the English outputs, the language switch
- ``translate``: the ``course translate`` command: translated notebooks and README from catalogs
- ``catalog``: markdown cut into messages, the gettext catalogs, what a translation must keep
"""
