"""What the grader reads: the master, the submissions, and the files and names they come in.

Above ``sandbox`` in the layers (it imports nothing of it, nor of any layer above).

- ``ipynb``: reading a ``.ipynb`` file defensively (one-line reasons for bad ones)
- ``names``: file names as safe text, report folder names, spreadsheet-safe CSV cells
- ``master``: the master's exercises, tests, points and setup cells
- ``seeds``: the instructor's variant secret and the seed of each roster id (per-student variants)
- ``assignment``: which assignment a notebook belongs to (another lesson's notebook is named)
- ``submissions``: finding submissions in a folder and matching their cells to the master
"""
