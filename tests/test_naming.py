"""The naming rule of CONTRIBUTING.md: a framework is a prefix, never a suffix.

The same idea carries the same name in both frameworks with the framework in front
(``torch_step`` / ``jax_step``); converters read ``<thing>_<from>_to_<to>``
(``cnn_torch_to_nnx``). A public name of ``course_utils`` ending in a framework
(``generate_torch``) breaks it; ``to_jax``-style converters end in ``to_<framework>``
and keep it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "course_utils"
FRAMEWORKS = "torch|jax|nnx|flax|keras"
SUFFIXED = re.compile(rf"^[a-z][a-z0-9_]*_({FRAMEWORKS})$")
CONVERTER = re.compile(rf"(^|_)to_({FRAMEWORKS})$")

# Names a published notebook needs under their old spelling, each with its reason.
# Empty: every suffixed name was renamed together with its call sites.
ALLOWED: dict[str, str] = {}


def suffixed_names(source: str) -> list[str]:
    """Public module-level functions and classes, and their public methods, that end
    in a framework name (converters ``..._to_<framework>`` excepted)."""
    found = []
    for node in ast.parse(source).body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        names = [node.name]
        if isinstance(node, ast.ClassDef):
            names += [
                f"{node.name}.{m.name}"
                for m in node.body
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
        for name in names:
            last = name.rsplit(".", 1)[-1]
            if SUFFIXED.match(last) and not CONVERTER.search(last):
                found.append(name)
    return found


def test_the_finder_tells_suffixes_from_prefixes_and_converters():
    source = (
        "def generate_torch(): ...\n"
        "def torch_generate(): ...\n"
        "def to_jax(): ...\n"
        "def cnn_torch_to_nnx(): ...\n"
        "def _helper_jax(): ...\n"
        "class Model:\n"
        "    def step_nnx(self): ...\n"
        "    def _grads_torch(self): ...\n"
    )
    assert suffixed_names(source) == ["generate_torch", "Model.step_nnx"]


def test_no_public_name_ends_in_a_framework():
    found = [
        f"{path.relative_to(PKG.parent)}: {name}"
        for path in sorted(PKG.rglob("*.py"))
        for name in suffixed_names(path.read_text(encoding="utf-8"))
        if name not in ALLOWED
    ]
    assert not found, (
        "the framework goes first (torch_x / jax_x; converters <thing>_<from>_to_<to>), "
        f"CONTRIBUTING.md 'Names': rename {found}"
    )


def test_every_allowed_name_still_exists_and_has_a_reason():
    names = {
        name
        for path in PKG.rglob("*.py")
        for name in suffixed_names(path.read_text(encoding="utf-8"))
    }
    assert all(reason.strip() for reason in ALLOWED.values())
    assert set(ALLOWED) <= names, f"stale allow-list entries: {set(ALLOWED) - names}"
