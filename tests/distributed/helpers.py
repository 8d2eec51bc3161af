"""What the launch tests share: tiny scripts to launch, written into a folder."""

import textwrap
from pathlib import Path


def write_script(folder: Path, name: str, body: str) -> str:
    """Write ``body`` (dedented) to ``folder/name``; return its path."""
    path = folder / name
    path.write_text(textwrap.dedent(body))
    return str(path)


SLEEPER = """
    import time
    time.sleep(600)
"""

RANK_ONE_CRASHES = """
    import os, sys, time
    if int(os.environ["RANK"]) == 1:
        sys.exit(3)
    time.sleep(600)
"""

REPORT_PORT = """
    import os
    from course_utils.distributed import worker
    worker.save_report(int(os.environ["RANK"]), {"port": int(os.environ["MASTER_PORT"]),
                                                 "world": int(os.environ["WORLD_SIZE"])})
"""

JAX_FLAGS = """
    import argparse, sys, time
    ap = argparse.ArgumentParser()
    ap.add_argument("--coordinator"); ap.add_argument("--num-processes", type=int)
    ap.add_argument("--process-id", type=int); ap.add_argument("--local-devices", type=int)
    args = ap.parse_args()
"""
