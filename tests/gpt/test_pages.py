"""Lessons 11 and 12 write the GPT's code on the page; ``course_utils.gpt`` keeps the same code.

A class or function defined at the top of a lesson's cells under a name that one of
the package's GPT modules also defines at its top level must be the same code: the
same statements, once docstrings, annotations, comments, layout and the imports
inside a function are set aside. Each lesson must also keep showing the pieces it
teaches (``TAUGHT``). Nothing is imported: both sides are parsed.
"""

from __future__ import annotations

import ast
import copy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "course_utils" / "gpt"
MODULES = ("data", "model", "convert", "sample", "shard", "checkpoint", "export")

TAUGHT = {
    "11_capstone_gpt": {
        "data": [
            "batch_order",
            "windows",
            "numpy_batches",
            "WindowDataset",
            "torch_loader",
        ],
        "model": [
            "nnx_linear",
            "TorchCausalSelfAttention",
            "NNXCausalSelfAttention",
            "TorchGPTBlock",
            "NNXGPTBlock",
            "TorchGPT",
            "NNXGPT",
        ],
        "convert": ["gpt_torch_tensors_to_nnx", "gpt_nnx_tensors_to_torch"],
        "sample": [
            "uniforms",
            "torch_pick",
            "jax_pick",
            "torch_generate",
            "right_padded",
            "nnx_decode",
            "nnx_logits",
            "nnx_generate",
        ],
    },
    "12_gpt_at_scale": {
        "shard": ["param_specs", "state_shardings", "jit_step"],
        "checkpoint": [
            "orbax_save",
            "abstract_like",
            "orbax_load",
            "dcp_save",
            "dcp_load",
        ],
        "export": ["jax_export", "jax_load", "torch_export", "torch_load"],
        "sample": ["teacher_forced"],
    },
}

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _top_level(path: Path) -> dict[str, ast.AST]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name: n for n in tree.body if isinstance(n, Definition)}


class _Normal(ast.NodeTransformer):
    """Drop what does not change what the code does: docstrings, annotations, imports."""

    def _body(self, node):
        body = [s for s in node.body if not isinstance(s, ast.Import | ast.ImportFrom)]
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body = body[1:]
        node.body = body or [ast.Pass()]
        return node

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        node.returns = None
        return self._body(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self.generic_visit(node)
        return self._body(node)

    def visit_arg(self, node):
        node.annotation = None
        return node


def normal(node: ast.AST) -> str:
    """The code of a definition, docstrings, annotations, imports and layout set aside."""
    return ast.dump(_Normal().visit(copy.deepcopy(node)), include_attributes=False)


def _package() -> dict[str, tuple[str, ast.AST]]:
    found = {}
    for module in MODULES:
        for name, node in _top_level(PACKAGE / f"{module}.py").items():
            found.setdefault(name, (module, node))
    return found


@pytest.mark.parametrize("lesson", sorted(TAUGHT))
def test_the_page_and_the_package_hold_the_same_code(lesson):
    page = _top_level(ROOT / "notebooks" / f"{lesson}.py")
    package = _package()
    missing = [
        f"{module}.{name}"
        for module, names in TAUGHT[lesson].items()
        for name in names
        if name not in page or package.get(name, (None,))[0] != module
    ]
    assert not missing, f"notebooks/{lesson}.py no longer shows {missing}"
    drifted = [
        f"{name} (course_utils/gpt/{package[name][0]}.py)"
        for name, node in page.items()
        if name in package and normal(node) != normal(package[name][1])
    ]
    assert not drifted, (
        f"notebooks/{lesson}.py and course_utils/gpt differ in {drifted}: change both, "
        "or neither (comments, docstrings, annotations and layout may differ)"
    )


def test_a_changed_statement_is_drift_and_a_comment_is_not():
    a = ast.parse(
        'def f(x: int) -> int:\n    """Doc."""\n    import os\n    return x + 1\n'
    )
    b = ast.parse("def f(x):  # a comment\n    return x + 1\n")
    c = ast.parse("def f(x):\n    return x + 2\n")
    assert normal(a.body[0]) == normal(b.body[0])
    assert normal(a.body[0]) != normal(c.body[0])
