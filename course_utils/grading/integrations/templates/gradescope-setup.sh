#!/usr/bin/env bash
# Gradescope's setup.sh for `course gradescope build`: runs once, when Gradescope builds
# the autograder's image (Ubuntu, as root). Installs Python, bubblewrap, and the course
# (its grader, JAX and PyTorch's CPU build) into /autograder/venv, with the versions the
# course's tests last passed with.
set -euo pipefail
cd /autograder/source
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq python3 python3-venv bubblewrap >/dev/null
py3=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  apt-get install -y -qq python3.11 python3.11-venv >/dev/null  # Ubuntu 22.04's is 3.10
  py3=python3.11
fi
"$py3" -m venv /autograder/venv
py=/autograder/venv/bin/python
"$py" -m pip install -q --upgrade pip
"$py" course/course_utils/install/frameworks.py torch
"$py" -m pip install -q ./course -c course/constraints/known-good.txt
"$py" course/course_utils/install/frameworks.py jax -c course/constraints/known-good.txt
"$py" -c "import course_utils.grading.batch.grader, jax, torch; print('course installed: jax', jax.__version__, 'torch', torch.__version__)"
