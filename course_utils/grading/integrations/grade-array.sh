#!/bin/bash
# Grade a class as a Slurm job array: array task K of N grades shard K/N of the
# submissions into OUT/shard-K, with as many submissions at once as it has CPUs.
#
#   sbatch --array=0-3 --cpus-per-task=1 --mem=5G [--partition=P] \
#       grade-array.sh SUBMISSIONS MASTER OUT [course grade options: --memory MB ...]
#
# Tasks:        --array=0-(N-1) makes N shards (N = SLURM_ARRAY_TASK_COUNT; a task
#               resubmitted alone sets COURSE_SHARDS=N). Add %M to run at most M at once.
# CPUs:         --cpus-per-task=C grades C submissions at once in each task (--jobs C).
# Memory:       --mem per task: C kernels of `--memory` MB (course grade's limit, default
#               4096) plus about 1 GB for the grader and its workers.
# The course:   `course` on the PATH the job inherits from the shell that submitted it;
#               COURSE_PYTHON=/path/to/python runs `python -m course_utils.cli`.
# Afterwards:   course grade merge OUT/shard-* --out OUT/all
# `course grade slurm SUBMISSIONS --source MASTER --out OUT --tasks N` submits this
# script with these options and prints the job id and the merge command.
# The #SBATCH lines are defaults; sbatch's command-line options override them.
#SBATCH --job-name=course-grade
#SBATCH --array=0-3
#SBATCH --cpus-per-task=1
#SBATCH --mem=5G
#SBATCH --time=02:00:00
set -euo pipefail
if [ "$#" -lt 3 ]; then
  echo "usage: sbatch --array=0-(N-1) grade-array.sh SUBMISSIONS MASTER OUT [grade options]" >&2
  exit 2
fi
subs=$1 master=$2 out=$3
shift 3
k=${SLURM_ARRAY_TASK_ID:?submit with sbatch --array=0-(N-1)}
n=${COURSE_SHARDS:-${SLURM_ARRAY_TASK_COUNT:?submit with sbatch --array=0-(N-1)}}
if [ -n "${COURSE_PYTHON:-}" ]; then
  course=("$COURSE_PYTHON" -m course_utils.cli)
else
  course=(course)
fi
exec "${course[@]}" grade "$subs" --source "$master" --out "$out/shard-$k" \
  --shard "$k/$n" --jobs "${SLURM_CPUS_PER_TASK:-1}" "$@"
