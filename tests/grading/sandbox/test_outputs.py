"""A cell's outputs and record from the kernel's messages: nbformat shapes and caps."""

from __future__ import annotations

from course_utils.grading.sandbox import outputs


def _msg(kind: str, **content) -> dict:
    return {"msg_type": kind, "content": content}


def test_traceback_lines_are_capped_in_all():
    lines = outputs.capped_lines(["a" * 30, "b" * 30, "c" * 30], limit=50)
    assert "".join(lines[:2]) == "a" * 30 + "b" * 20
    assert lines[-1] == "[traceback truncated by the grader]"
    assert outputs.capped_lines("not a list") == []


def test_a_huge_error_is_cut_and_always_kept():
    held: list = []
    cell = outputs.Outputs(held, limit=100)
    cell.add(_msg("stream", name="stdout", text="x" * 150))
    cell.add(
        _msg("error", ename="E" * 500, evalue="v" * 10**6, traceback=["t" * 10**6])
    )
    assert held[0]["output_type"] == "stream" and "truncated" in held[0]["text"]
    error = held[-1]
    assert len(error["ename"]) == 200 and len(error["evalue"]) == outputs.FIELD_CHARS
    assert sum(map(len, error["traceback"])) <= outputs.FIELD_CHARS + 40


def test_the_record_of_an_error_reply_is_short_and_colourless():
    reply = {
        "status": "error",
        "ename": "ValueError",
        "evalue": "\x1b[31mbad\x1b[0m" + "v" * 10**6,
        "traceback": ["\x1b[31mline\x1b[0m"] * 3,
    }
    rec = outputs.finish({}, reply, started=0.0)
    assert rec["status"] == "error" and rec["evalue"].startswith("badvvv")
    assert len(rec["evalue"]) == 2000 and "\x1b" not in rec["traceback"]
    assert outputs.finish({}, {"status": "ok"}, 0.0)["status"] == "ok"
