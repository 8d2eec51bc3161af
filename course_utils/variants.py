"""Per-student variants: the seed an exercise draws its data from.

A course that gives every student their own numbers releases one copy of an exercise
notebook per student (``course release OUT --variants ROSTER``), whose ``parameters``
cell holds ``VARIANT = {"student": "ada", "seed": "…"}``. The notebook calls
:func:`use` with it once, shows the line it returns (``your variant: ada (seed …)``)
and draws its arrays from :meth:`Variant.rng`; the tests draw theirs again from
:func:`current`. A copy whose ``VARIANT`` is ``None`` (the course's own, a lesson run,
CI) gets the default variant, whose streams are plain ``numpy.random.default_rng(stream)``.

Inside the instructor's grader the variant comes from the environment
(``COURSE_VARIANT``, read when this module is first imported, before any student code
runs): the seed the grader computed from the roster id it grades, whatever the
notebook's ``VARIANT`` line says. ``course check`` passes the notebook's own line the
same way. The seeds themselves are no secret; the instructor's key that derives them
is (``course_utils.grading.inputs.seeds``).
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass
from typing import Any

ENV = "COURSE_VARIANT"  # JSON {"student": ..., "seed": ...}: set by the grader and course check
NAME = "VARIANT"  # the parameters cell's variable
_SEED = re.compile(r"[0-9a-f]{16}")


class VariantError(ValueError):
    """A ``VARIANT`` value that is not one ``course release`` writes."""


@dataclass(frozen=True)
class Variant:
    """One student's variant (``student`` and ``seed`` None: the default one)."""

    student: str | None = None
    seed: str | None = None  # 16 hex digits

    def rng(self, stream: int = 0):
        """A NumPy generator for ``stream`` (an exercise's own number): the variant's own,
        or ``default_rng(stream)`` for the default variant."""
        import numpy as np

        if self.seed is None:
            return np.random.default_rng(stream)
        return np.random.default_rng([stream, int(self.seed, 16)])

    def normal(self, *shapes: tuple[int, ...], stream: int = 0) -> list:
        """float32 standard normal arrays of ``shapes``, drawn in order from one stream."""
        import numpy as np

        rng = self.rng(stream)
        return [rng.standard_normal(shape, dtype=np.float32) for shape in shapes]

    def as_dict(self) -> dict[str, str] | None:
        if self.seed is None:
            return None
        return {"student": self.student or "", "seed": self.seed}

    def __str__(self) -> str:
        if self.seed is None:
            return "the default variant (this copy of the notebook names no student)"
        return f"your variant: {self.student} (seed {self.seed})"

    def _repr_pretty_(
        self, printer, cycle
    ) -> None:  # the line a cell ending in it shows
        printer.text(str(self))


DEFAULT = Variant()


def parse(value: Any, where: str = f"{NAME} in the parameters cell") -> Variant:
    """The variant ``value`` (``None`` or ``{"student": str, "seed": 16 hex digits}``) names."""
    if value is None:
        return DEFAULT
    if not isinstance(value, dict) or set(value) != {"student", "seed"}:
        raise VariantError(
            f"{where}: {value!r} is not a variant: expected None or "
            '{"student": ..., "seed": ...} as your copy of the notebook came with it'
        )
    student, seed = value["student"], value["seed"]
    if not isinstance(student, str) or not student.strip():
        raise VariantError(f"{where}: the student must be a non-empty string")
    if not isinstance(seed, str) or not _SEED.fullmatch(seed):
        raise VariantError(f"{where}: the seed must be 16 hex digits, not {seed!r}")
    return Variant(student, seed)


def _from_env() -> Variant | None:
    text = os.environ.get(ENV)
    if not text:
        return None
    try:
        return parse(json.loads(text), f"${ENV}")
    except ValueError as err:  # a broken value must not fall back to the default
        raise VariantError(f"${ENV}: {err}") from None


# Read at the first import: the grader's kernel imports this module in the master's setup,
# before a student's cell runs, so changing the environment later changes nothing.
_GIVEN = _from_env()
_used: Variant | None = None


def use(claimed: Any = None) -> Variant:
    """The variant this notebook runs with: the grader's (or ``course check``'s) when it
    set one, else the ``parameters`` cell's ``VARIANT`` (``claimed``). Show what it
    returns: ``your variant: ada (seed …)``."""
    global _used
    _used = _GIVEN if _GIVEN is not None else parse(claimed)
    return _used


def current() -> Variant:
    """The variant in force: the grader's, else the last :func:`use`'s, else the default."""
    if _GIVEN is not None:
        return _GIVEN
    return _used or DEFAULT


def claimed(cells: list[dict]) -> Variant | None:
    """The variant a notebook's own ``VARIANT = …`` line names (the last code cell that
    assigns it a literal), None when no cell does; :class:`VariantError` when the value
    is not one. Read as Python literals, never run. It is the student's text: a cell or
    a value that cannot be read at all (not Python, ``{[1]: 2}``, an expression nested
    too deep for the parser, one too big for memory) is no claim."""
    found = None
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if NAME not in source:
            continue
        try:
            tree = ast.parse(source)
        except Exception:  # noqa: BLE001 - SyntaxError, RecursionError, MemoryError: no claim
            continue
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == NAME
            ):
                try:
                    value = ast.literal_eval(node.value)
                except ValueError:
                    raise VariantError(
                        f"cell {index}: {NAME} is not a literal value"
                    ) from None
                except Exception:  # noqa: BLE001 - TypeError ({[1]: 2}), RecursionError
                    continue  # a literal that cannot be built: no claim
                found = parse(value, f"cell {index}: {NAME}")
    return found


def kernel_env(variant: Variant | None) -> dict[str, str]:
    """The kernel environment that makes ``variant`` the one in force ({} for none)."""
    data = variant.as_dict() if variant is not None else None
    return {ENV: json.dumps(data)} if data else {}
