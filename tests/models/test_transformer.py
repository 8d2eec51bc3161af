"""course_utils.models.transformer: the block's sizes are validated, and lesson 07 shows
the same TorchBlock and NNXBlock on its page."""

import ast
import copy
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("flax")

from course_utils import models  # noqa: E402


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"d_model": 10, "n_heads": 4}, "divisible by n_heads"),
        ({"d_ff": 0}, "d_ff must be a positive int"),
        ({"dropout": 1.0}, "dropout must be in"),
        ({"n_heads": 2.5}, "n_heads must be a positive int"),
    ],
)
def test_block_config_validates(kwargs, message):
    with pytest.raises(ValueError, match=message):
        models.BlockConfig(**kwargs)


# ------------------------------------------------- lesson 07 shows the same code

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "notebooks" / "07_migration.py"
PACKAGE = ROOT / "course_utils" / "models" / "transformer.py"
ON_THE_PAGE = ("TorchBlock", "NNXBlock")


class _Code(ast.NodeTransformer):
    """Set aside what does not change what a class does: docstrings and annotations."""

    def _body(self, node):
        body = node.body
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

    def visit_ClassDef(self, node):
        self.generic_visit(node)
        return self._body(node)

    def visit_arg(self, node):
        node.annotation = None
        return node


def _classes(source: str) -> dict[str, str]:
    tree = ast.parse(source)
    return {
        n.name: ast.dump(_Code().visit(copy.deepcopy(n)), include_attributes=False)
        for n in tree.body
        if isinstance(n, ast.ClassDef)
    }


def test_lesson_07_shows_the_blocks_the_package_holds():
    page = _classes(LESSON.read_text(encoding="utf-8"))
    package = _classes(PACKAGE.read_text(encoding="utf-8"))
    missing = [name for name in ON_THE_PAGE if name not in page]
    assert not missing, f"notebooks/07_migration.py no longer defines {missing}"
    drifted = [name for name in ON_THE_PAGE if page[name] != package[name]]
    assert not drifted, (
        f"notebooks/07_migration.py and course_utils/models/transformer.py differ in "
        f"{drifted}: change both, or neither (comments, docstrings, annotations and "
        "layout may differ)"
    )


def test_a_changed_statement_is_drift_and_a_comment_is_not():
    a = 'class A:\n    """Doc."""\n    def f(self, x: int) -> int:\n        return x + 1\n'
    b = "class A:\n    def f(self, x):  # a comment\n        return x + 1\n"
    c = "class A:\n    def f(self, x):\n        return x + 2\n"
    assert _classes(a) == _classes(b) != _classes(c)
