"""Installing the course: the frameworks' builds for this machine, and the course on a
hosted runtime. Standard library only, so both run before anything else is installed.

- ``frameworks``: which torch build and which jax accelerator plugin this machine needs
  (NVIDIA driver, TPU, Colab, Kaggle), as a plan and as the script
  ``python course_utils/install/frameworks.py torch|jax|plan`` that ``make`` runs
  before the package is installed; also the one TPU-host rule :mod:`course_utils.env`
  applies
- ``hosted``: the setup cell's install on Colab, Kaggle or a bare Jupyter: the course's
  dependencies around the runtime's own torch and jax
"""
