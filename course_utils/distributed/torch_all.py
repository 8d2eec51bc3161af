"""The lesson's three PyTorch demos in one launch: DDP, tensor parallel, FSDP2.

    torchrun --nproc-per-node 2 -m course_utils.distributed.torch_all [ddp] [tp] [fsdp]

Each demo also runs alone (``-m course_utils.distributed.torch_ddp``, ...). Running them
in the same processes pays the start-up once: importing torch and joining the
process group cost far more than the demos themselves. The report holds each
demo's keys prefixed with its name (``ddp.ref_W1``); see ``LaunchResult.section``.
"""

from __future__ import annotations

import sys

from course_utils.distributed import torch_ddp, torch_fsdp, torch_tp, worker

DEMOS = {"ddp": torch_ddp.run, "tp": torch_tp.run, "fsdp": torch_fsdp.run}


def main(argv=None) -> None:
    names = list(argv if argv is not None else sys.argv[1:]) or list(DEMOS)
    unknown = [n for n in names if n not in DEMOS]
    if unknown:
        raise SystemExit(
            f"torch_all: unknown demo(s) {unknown}; choose from {sorted(DEMOS)}"
        )
    rank, world, device = worker.torch_setup()
    prob = worker.load_problem()
    report = {}
    for name in names:
        report.update(
            {
                f"{name}.{k}": v
                for k, v in DEMOS[name](rank, world, device, prob).items()
            }
        )
    worker.save_report(rank, report)
    worker.torch_teardown()


if __name__ == "__main__":
    main()
