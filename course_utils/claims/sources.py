"""Where the claims come from: the source articles (and the course's own questions)."""

from __future__ import annotations

SOURCES = {
    "000": "000 (2026 selection guide)",
    "001": "001 (PyTorch 2.0 vs JAX for decision makers)",
    "003": "003 (design philosophy to migration)",
    "004": "004 (is JAX autodiff faster?)",
    "course": "this course — a question the lessons ask, not an article's claim",
}
