"""``course grade report DIR``: the class report, as HTML and Markdown with PNG figures.

It is written to ``DIR/class-report/`` from the data of :func:`.analytics.summarise`
(also kept there as ``report.json``: what the figures draw), each file
atomically. The report names students (two examples per failure group): it is
for the instructor, never for a student.
"""

from __future__ import annotations

import html
import io
import json
from pathlib import Path

from course_utils._files import write_atomic
from course_utils.grading.records import analytics, store

FOLDER = "class-report"
FIGURES = ("scores.png", "tests.png", "resources.png")


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()


def figures(data: dict) -> dict[str, bytes]:
    """The three figures as PNG bytes: score histogram, pass share per test, time and memory."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    out = {}
    fig = Figure(figsize=(6, 3.2))
    ax = fig.subplots()
    bins = data["histogram"]
    ax.bar(
        [b["low"] for b in bins], [b["count"] for b in bins], width=0.8, align="edge"
    )
    ax.set(xlabel="total points", ylabel="students", title="Scores")
    fig.tight_layout()
    out["scores.png"] = _png(fig)
    fig = Figure(figsize=(6, 0.5 + 0.35 * max(1, len(data["tests"]))))
    ax = fig.subplots()
    names = [t["name"] for t in data["tests"]]
    ax.barh(names, [100 * t["share"] for t in data["tests"]])
    ax.invert_yaxis()
    ax.set(xlim=(0, 100), xlabel="% of students passing", title="Test cells")
    fig.tight_layout()
    out["tests.png"] = _png(fig)
    fig = Figure(figsize=(6, 3.2))
    ax = fig.subplots()
    rows = data["resources"]["students"]
    ax.scatter([r["seconds"] for r in rows], [r["peak_memory_mb"] for r in rows])
    ax.set(xlabel="seconds", ylabel="peak memory (MB)", title="Per submission")
    fig.tight_layout()
    out["resources.png"] = _png(fig)
    return out


def _table(head: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [str(c).replace("|", "\\|").replace("\n", " ") for c in row]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def sections(data: dict) -> list[tuple[str, list[str], list[list]]]:
    """(title, header, rows) of each table, shared by the Markdown and HTML versions."""
    exercises = [
        [e["exercise"], f"{e['mean_points']:g} / {e['max_points']:g}", _pct(e["share"]),
         ", ".join(f"{k} {v}" for k, v in e["statuses"].items())]
        for e in data["exercises"]
    ]  # fmt: skip
    tests = [
        [t["name"], "hidden" if t["hidden"] else "visible", f"{t['passed']}/{t['students']}",
         _pct(t["share"]), t["flag"]]
        for t in data["tests"]
    ]  # fmt: skip
    fails = [
        [g["count"], g["test"], g["message"], ", ".join(g["examples"])]
        for g in data["failures"]
    ]
    res = [
        [r["student"], f"{r['seconds']:.1f}", f"{r['peak_memory_mb']:.0f}"]
        for r in data["resources"]["students"]
    ]
    return [
        ("Exercises", ["exercise", "mean points", "passed", "statuses"], exercises),
        ("Test cells", ["test", "kind", "passed", "share", "flag"], tests),
        ("Most common failures", ["students", "test", "message (numbers as N)", "for example"], fails),
        ("Time and memory per submission", ["student", "seconds", "peak MB"], res),
    ]  # fmt: skip


def _intro(data: dict) -> str:
    statuses = ", ".join(f"{k} {v}" for k, v in data["statuses"].items())
    res = data["resources"]
    return (
        f"{data['students']} students ({statuses}); mean score {data['mean_total']:g} of "
        f"{data['max_total']:g}; per submission {res['seconds']['median']:.1f} s median, "
        f"{res['seconds']['max']:.1f} s max, peak memory {res['memory']['max']:.0f} MB max."
    )


def markdown(data: dict) -> str:
    lines = ["# Class report", "", _intro(data), "", "![Scores](scores.png)", ""]
    for title, head, rows in sections(data):
        lines += [f"## {title}", ""] + _table(head, rows) + [""]
        if title == "Test cells":
            lines += ["![Test cells](tests.png)", ""]
    lines += ["![Time and memory](resources.png)", ""]
    return "\n".join(lines)


def page(data: dict) -> str:
    esc = html.escape
    parts = ["<!doctype html><meta charset='utf-8'><title>Class report</title>",
             "<h1>Class report</h1>", f"<p>{esc(_intro(data))}</p>",
             "<img src='scores.png' alt='Scores'>"]  # fmt: skip
    for title, head, rows in sections(data):
        parts.append(f"<h2>{esc(title)}</h2><table border='1'><tr>")
        parts.append("".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>")
        for row in rows:
            parts.append(
                "<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in row) + "</tr>"
            )
        parts.append("</table>")
        if title == "Test cells":
            parts.append("<img src='tests.png' alt='Test cells'>")
    parts.append("<img src='resources.png' alt='Time and memory'>")
    return "\n".join(parts) + "\n"


def write(out: Path) -> tuple[Path, dict]:
    """Write the class report of report folder ``out``; returns its folder and data."""
    data = analytics.summarise(store.records(out))
    folder = out / FOLDER
    folder.mkdir(exist_ok=True)
    for name, png in figures(data).items():
        write_atomic(folder / name, png)
    write_atomic(folder / "report.json", json.dumps(data, indent=1) + "\n")
    write_atomic(folder / "report.md", markdown(data))
    write_atomic(folder / "report.html", page(data))
    return folder, data
