"""A cell's outputs and record from the kernel's messages, capped as they arrive.

IOPub messages become nbformat 4 outputs (without nbformat's slow import); a
cell's outputs stop after a number of characters (a note says so), an error's
``evalue`` and traceback are cut, and the execute reply becomes the cell's
record: status, error name, message and traceback without colour codes.
"""

from __future__ import annotations

import json
import re
import time

from course_utils.exercises import clip

CELL_OUTPUT_CHARS = 100_000
FIELD_CHARS = 20_000  # an error's evalue, its traceback text
OUTPUT_TYPES = ("stream", "display_data", "execute_result", "error")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def capped_lines(lines, limit: int = FIELD_CHARS) -> list[str]:
    """The first lines of a traceback, ``limit`` characters in all."""
    out, left = [], limit
    for line in lines if isinstance(lines, list) else []:
        if left <= 0:
            out.append("[traceback truncated by the grader]")
            break
        out.append(str(line)[:left])
        left -= len(out[-1])
    return out


def clean_text(text: str) -> str:
    """``text`` without ANSI colour codes (tracebacks come coloured)."""
    return _ANSI.sub("", text)


def output_from_msg(msg: dict) -> dict:
    """A notebook output from an IOPub message (nbformat 4, without nbformat's slow import)."""
    kind, content = msg["msg_type"], msg["content"]
    if kind == "stream":
        return {
            "output_type": "stream",
            "name": content.get("name", "stdout"),
            "text": content.get("text", ""),
        }
    if kind == "error":
        return {
            "output_type": "error",
            "ename": str(content.get("ename", ""))[:200],
            "evalue": str(content.get("evalue", ""))[:FIELD_CHARS],
            "traceback": capped_lines(content.get("traceback", [])),
        }
    out = {
        "output_type": kind,
        "data": content.get("data", {}),
        "metadata": content.get("metadata", {}),
    }
    if kind == "execute_result":
        out["execution_count"] = content.get("execution_count")
    return out


class Outputs:
    """A cell's outputs as they arrive, cut off after ``limit`` characters (errors always kept)."""

    def __init__(self, outputs: list, limit: int):
        self.outputs, self.limit = outputs, limit
        self.size = 0
        self.truncated = False

    def add(self, msg: dict) -> None:
        kind = msg["msg_type"]
        if kind == "clear_output":
            self.outputs.clear()
            return
        out = output_from_msg(msg)
        n = len(json.dumps(out.get("text", out.get("data", ""))))
        if kind == "error" or self.size + n <= self.limit:
            self.outputs.append(out)
            self.size += n
        elif not self.truncated:
            self.truncated = True
            note = f"\n[output truncated by the grader after {self.limit} characters]\n"
            self.outputs.append(
                {"output_type": "stream", "name": "stderr", "text": note}
            )


def finish(record: dict, reply: dict | None, started: float) -> dict:
    content = reply or {}
    record["seconds"] = time.monotonic() - started
    record["status"] = "ok" if content.get("status") == "ok" else "error"
    if record["status"] == "error":
        record["ename"] = str(content.get("ename", "Error"))
        # A failed check's hint is its last line: the cut keeps it and the first lines.
        evalue = clip(str(content.get("evalue", "")), 8000)
        record["evalue"] = clip(clean_text(evalue), 2000)
        traceback = "\n".join(capped_lines(content.get("traceback", [])))
        record["traceback"] = clean_text(traceback)[-6000:]
    if any(p.get("source") == "ask_exit" for p in content.get("payload", []) or []):
        record["exit_requested"] = True
    return record
