"""The device check, ``course check-device``: the whole course on this machine's GPU or
TPU, each item side by side within a time budget, one JSON report (docs/DEVICE_CHECK.md).

- ``command``: the ``course check-device`` command and its ``--plan``
- ``run``: the check itself: install, then every item side by side, within its budget
- ``budget``: the time budget and each item's share of it
- ``schedule``: which items run when and side by side (cores, GPU memory, budget), or one at a time on a TPU
- ``estimates``: the shipped seconds, cores and GPU memory of each item, and their sources
- ``items``: the check's items (lessons, masters, student notebooks, tests) and their report entries
- ``children``: each item's child process, pinned to its cores, sharing the GPU
- ``probe``: the machine's facts and the installed versions, probed in a child
- ``install``: the install step, the machine's framework builds kept
- ``steps``: what the steps share (a child in its own group, an output's tail, JUnit counts)
- ``wheels``: the wheels a prepared GPU machine without network needs
- ``report``: the JSON report, written after every step
"""
