"""The names the course uses from jax, flax, optax, orbax and torch, resolved with :mod:`ast`.

Each :class:`Use` is a dotted name as Python resolves it where it is written, from the
imports and assignments in scope: after ``import jax.experimental.pallas as pl``,
``pl.dot(x, y)`` uses ``jax.experimental.pallas.dot``; after ``from jax import sharding``
and ``s = sharding``, ``s.SingleDeviceSharding`` uses ``jax.sharding.SingleDeviceSharding``.
A name is never matched by its text alone. What the resolution sees:

- ``import``, ``from ... import`` (also relative ones inside ``course_utils``) at any
  depth, each in its function's scope, the module's imports visible everywhere;
- assignments of a name or attribute chain (``cudnn = torch.backends.cudnn``, tuples
  too), which bind; any other assignment, and parameters, shadow;
- ``getattr(x, "name")`` and ``hasattr(x, "name")``, as uses (``hasattr`` and a
  ``getattr`` with a default are probes: a missing name is what they test for);
- calls, with the keyword arguments they pass;
- jax options named in ``jax.config.update(...)`` (a string, or a module constant
  holding one) and read as ``jax.config.<option>``;
- a course helper that returns a module (:data:`RETURNS`), so ``pl = compat.pallas()``
  is followed too.

A use is *guarded* when its code cannot fail on a missing name: a probe, or a line
inside a ``try`` whose handler catches ``AttributeError``/``ImportError``. A use is
*older-only* when it sits in the branch that runs only where a probed name is absent
(``f = getattr(jax, "new", None)``, ``if f is None: ...``, or what follows an
``if f is not None: return ...``); :attr:`Use.absent` names that probed name.

Lessons and masters are jupytext ``.py`` files (line numbers are the file's); student
notebooks are ``.ipynb`` (each use names its cell and the line in it).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from course_utils import lessons

# Course helpers that return a module: the call is followed as that module.
RETURNS = {"course_utils.compat.pallas": "jax.pallas"}
# Where an older release keeps a module a newer one moved (jax.pallas is jax 0.12's).
OLDER_PATHS = {"jax.pallas": "jax.experimental.pallas"}
# Exceptions whose handler makes a use inside ``try`` safe from a missing name.
SAFE = {
    "AttributeError",
    "ImportError",
    "ModuleNotFoundError",
    "Exception",
    "BaseException",
}
OPTION = re.compile(r"jax_[a-z0-9_]+$")


@dataclass(frozen=True)
class Use:
    """One name the course uses, where, and how."""

    name: str
    path: str
    line: int
    cell: int | None = None
    keywords: tuple[str, ...] = ()
    guarded: bool = False
    absent: str = ""  # the probed name whose absence this branch needs
    option: bool = False  # a jax configuration option, not an attribute
    call: bool = False  # the name is called here

    @property
    def place(self) -> str:
        """``notebooks/06_ecosystem.py:412`` or ``exercises/x.ipynb, cell 12, line 3``."""
        if self.cell is None:
            return f"{self.path}:{self.line}"
        return f"{self.path}, cell {self.cell}, line {self.line}"


def course_files(root: Path) -> list[Path]:
    """The lessons, the masters, the student notebooks and ``course_utils``."""
    return sorted(
        [
            *lessons.files(root, lessons.LESSONS, ".py"),
            *lessons.files(root, lessons.MASTERS, ".py"),
            *lessons.files(root, lessons.STUDENTS),
            *(
                p
                for p in (root / "course_utils").rglob("*.py")
                if "__pycache__" not in p.parts
            ),
        ]
    )


def module_of(path: Path, root: Path) -> str:
    """``course_utils/cli.py`` -> ``course_utils.cli``; a notebook -> ``""``."""
    try:
        parts = list(path.resolve().relative_to(root.resolve()).with_suffix("").parts)
    except ValueError:
        return ""
    if not parts or parts[0] != "course_utils":
        return ""
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def uses(
    path: Path,
    root: Path,
    tops: frozenset[str],
    constants: dict[str, str] | None = None,
) -> tuple[list[Use], list[str]]:
    """Every use of the packages ``tops`` in one file, and the places that did not parse.

    ``constants`` maps ``course_utils`` module constants (``course_utils.kernels.FLAG``)
    to their string values, for options named through a constant.
    """
    label = _label(path, root)
    module = module_of(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    visitor = _Visitor(label, module, package, tops | {"course_utils"}, constants or {})
    if path.suffix == ".ipynb":
        cells = _cells(path)
    else:
        cells = [(None, path.read_text("utf-8"))]
    trees, unparsed = [], []
    for cell, source in cells:
        try:
            trees.append((cell, ast.parse(source)))
        except SyntaxError as err:
            where = f"{label}:{err.lineno}" if cell is None else f"{label}, cell {cell}"
            unparsed.append(f"{where}: {err.msg}")
    for _, tree in trees:
        visitor.declare(tree.body)
    for cell, tree in trees:
        visitor.cell = cell
        visitor.block(tree.body)
    found = [u for u in visitor.found if u.option or u.name.split(".")[0] in tops]
    return found, unparsed


def module_constants(root: Path) -> dict[str, str]:
    """``course_utils.x.NAME`` -> its string, for every module-level string constant."""
    out = {}
    for path in (root / "course_utils").rglob("*.py"):
        try:
            tree = ast.parse(path.read_text("utf-8"))
        except SyntaxError:
            continue
        module = module_of(path, root)
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        out[f"{module}.{target.id}"] = node.value.value
    return out


def _label(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _cells(path: Path) -> list[tuple[int, str]]:
    """A notebook's code cells (numbered from 1 as JupyterLab shows them), magics blanked."""
    notebook = json.loads(path.read_text("utf-8"))
    out = []
    for number, cell in enumerate(notebook.get("cells", []), start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        lines = [
            "" if line.lstrip().startswith(("%", "!")) else line
            for line in source.split("\n")
        ]
        out.append((number, "\n".join(lines)))
    return out


def _dotted(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


class _Scope:
    def __init__(self, parent: _Scope | None, is_class: bool = False) -> None:
        self.parent = parent
        self.is_class = is_class
        self.names: dict[str, str | None] = {}
        self.probes: dict[str, str] = {}  # local name -> the dotted name it probed


class _Visitor:
    """Walks a file in order, resolving names through the scopes Python would use."""

    def __init__(
        self,
        label: str,
        module: str,
        package: str,
        tops: frozenset[str],
        constants: dict,
    ) -> None:
        self.label = label
        self.module_name = module
        self.package = package
        self.tops = tops
        self.constants = constants
        self.module = _Scope(None)
        self.scope = self.module
        self.cell: int | None = None
        self.found: list[Use] = []
        self.guard_depth = 0
        self.absent: list[str] = []

    # ------------------------------------------------------------ bindings

    def declare(self, body: list[ast.stmt]) -> None:
        """Module-level imports first: a function may use an import written below it."""
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._bind_import(node, self.module)
            for part in _bodies(node):
                self.declare(part)

    def _bind_import(self, node: ast.Import | ast.ImportFrom, scope: _Scope) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    scope.names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    scope.names[top] = top
            return
        base = self._absolute(node.module, node.level)
        for alias in node.names:
            if alias.name != "*":
                scope.names[alias.asname or alias.name] = f"{base}.{alias.name}"

    def _absolute(self, module: str | None, level: int) -> str:
        if not level:
            return module or ""
        base = self.package.split(".") if self.package else []
        base = base[: len(base) - level + 1]
        return ".".join(base + ([module] if module else []))

    def lookup(self, name: str) -> str | None:
        scope: _Scope | None = self.scope
        first = True
        while scope is not None:
            if (first or not scope.is_class) and name in scope.names:
                return scope.names[name]
            first = False
            scope = scope.parent
        return None

    def resolve(self, node: ast.AST) -> str | None:
        """The dotted name an expression stands for, or None."""
        if isinstance(node, ast.Call):
            callee = self.resolve(node.func)
            if callee in RETURNS:
                return RETURNS[callee]
            builtin = isinstance(node.func, ast.Name) and node.func.id == "getattr"
            if builtin and self.lookup("getattr") is None and len(node.args) >= 2:
                base = self.resolve(node.args[0])
                attr = node.args[1]
                if (
                    base
                    and isinstance(attr, ast.Constant)
                    and isinstance(attr.value, str)
                ):
                    return f"{base}.{attr.value}"
            return None
        parts = _dotted(node)
        if parts is None:
            if isinstance(node, ast.Attribute):
                base = self.resolve(node.value)
                return f"{base}.{node.attr}" if base else None
            return None
        head = self.lookup(parts[0])
        if head is None:
            return None
        return ".".join([head, *parts[1:]])

    def _assign(self, targets: list[ast.AST], value: ast.AST | None) -> None:
        for target in targets:
            if isinstance(target, ast.Name):
                self.scope.names[target.id] = (
                    self.resolve(value) if value is not None else None
                )
                probe = _probe(value)
                if probe is not None:
                    base = self.resolve(probe[0])
                    if base:
                        self.scope.probes[target.id] = f"{base}.{probe[1]}"
            elif isinstance(target, (ast.Tuple, ast.List)):
                values = (
                    value.elts
                    if isinstance(value, (ast.Tuple, ast.List))
                    and len(value.elts) == len(target.elts)
                    else [None] * len(target.elts)
                )
                self._assign(list(target.elts), None)
                for sub, val in zip(target.elts, values, strict=True):
                    self._assign([sub], val)
            else:
                self.expression(target)

    # ------------------------------------------------------------ walking

    def block(self, body: list[ast.stmt]) -> None:
        absent_after: list[str] = []
        for node in body:
            self.statement(node)
            fallthrough = self._absent_after(node)
            if fallthrough:
                absent_after.append(fallthrough)
                self.absent.append(fallthrough)
        for _ in absent_after:
            self.absent.pop()

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self._bind_import(node, self.scope)
            self._import_uses(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                self.expression(dec)
            for default in node.args.defaults + node.args.kw_defaults:
                if default is not None:
                    self.expression(default)
            self.scope.names[node.name] = None
            self._function(node)
        elif isinstance(node, ast.ClassDef):
            for expr in [*node.decorator_list, *node.bases]:
                self.expression(expr)
            self.scope.names[node.name] = None
            outer, self.scope = self.scope, _Scope(self.scope, is_class=True)
            self.block(node.body)
            self.scope = outer
        elif isinstance(node, ast.Assign):
            self.expression(node.value)
            self._assign(node.targets, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            if node.value is not None:
                self.expression(node.value)
            if isinstance(node, ast.AnnAssign) and node.value is not None:
                self._assign([node.target], node.value)
        elif isinstance(node, ast.If):
            self.expression(node.test)
            present, absent = self._guard(node.test)
            self._branch(node.body, absent=present)
            self._branch(node.orelse, absent=absent)
        elif isinstance(node, ast.Try):
            safe = any(_catches(h) for h in node.handlers)
            self.guard_depth += safe
            self.block(node.body)
            self.guard_depth -= safe
            for handler in node.handlers:
                if handler.type is not None:
                    self.expression(handler.type)
                self.block(handler.body)
            self.block(node.orelse)
            self.block(node.finalbody)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.expression(node.iter)
            self._assign([node.target], None)
            self.block(node.body)
            self.block(node.orelse)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self.expression(item.context_expr)
                if item.optional_vars is not None:
                    self._assign([item.optional_vars], None)
            self.block(node.body)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    self.statement(child)
                elif isinstance(child, ast.expr):
                    self.expression(child)

    def _branch(self, body: list[ast.stmt], absent: str | None) -> None:
        """A branch; one for releases without ``absent`` binds nothing past its end, as
        on a release that has the name it does not run."""
        if not absent:
            self.block(body)
            return
        before = dict(self.scope.names)
        self.absent.append(absent)
        self.block(body)
        self.absent.pop()
        self.scope.names = before

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer, self.scope = self.scope, _Scope(self.scope)
        args = node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            self.scope.names[arg.arg] = None
        for arg in (args.vararg, args.kwarg):
            if arg is not None:
                self.scope.names[arg.arg] = None
        saved_absent, self.absent = self.absent, list(self.absent)
        self.block(node.body)
        self.absent = saved_absent
        self.scope = outer

    def _import_uses(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = self._absolute(node.module, node.level)
            names = [f"{base}.{a.name}" for a in node.names if a.name != "*"]
            names = names or [base]
        for name in names:
            self._record(name, node.lineno)

    # ---------------------------------------------------------- expressions

    def expression(self, node: ast.AST) -> None:
        """Record the uses inside an expression, outermost attribute chains first."""
        if isinstance(node, ast.Lambda):
            outer, self.scope = self.scope, _Scope(self.scope)
            for arg in node.args.args:
                self.scope.names[arg.arg] = None
            self.expression(node.body)
            self.scope = outer
            return
        if isinstance(
            node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
        ):
            outer, self.scope = self.scope, _Scope(self.scope)
            for gen in node.generators:
                self.expression(gen.iter)
                self._assign([gen.target], None)
                for cond in gen.ifs:
                    self.expression(cond)
            for child in ("elt", "key", "value"):
                if hasattr(node, child):
                    self.expression(getattr(node, child))
            self.scope = outer
            return
        if isinstance(node, ast.Call):
            self._call(node)
            return
        if isinstance(node, (ast.Attribute, ast.Name)):
            name = self.resolve(node)
            if name is not None:
                self._record(name, node.lineno)
                if isinstance(node, ast.Attribute):
                    self._option_attribute(name, node.lineno)
                return
            if isinstance(node, ast.Attribute):
                self.expression(node.value)
            return
        for child in ast.iter_child_nodes(node):
            self.expression(child)

    def _call(self, node: ast.Call) -> None:
        callee = self.resolve(node.func)
        keywords = tuple(k.arg for k in node.keywords if k.arg)
        probe = _probe(node)
        if probe is not None:
            base = self.resolve(probe[0])
            if base is not None:
                guarded = _is_probe_with_default(node)
                self._record(f"{base}.{probe[1]}", node.lineno, guarded=guarded)
            else:
                self.expression(probe[0])
            for arg in node.args[2:]:
                self.expression(arg)
            return
        if callee is not None:
            self._record(callee, node.lineno, keywords=keywords, call=True)
            if callee in ("jax.config.update", "jax.config.config.update"):
                self._option_call(node)
        else:
            self.expression(node.func)
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            self.expression(arg)

    def _option_call(self, node: ast.Call) -> None:
        arg = node.args[0] if node.args else None
        value = None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            value = arg.value
        elif arg is not None:
            name = self.resolve(arg)
            if name is None and isinstance(arg, ast.Name):
                name = f"{self.module_name}.{arg.id}"
            value = self.constants.get(name or "")
        if value and OPTION.match(value):
            self._record(value, node.lineno, option=True)

    def _option_attribute(self, name: str, line: int) -> None:
        prefix = "jax.config."
        if name.startswith(prefix) and OPTION.match(name[len(prefix) :]):
            self._record(name[len(prefix) :], line, option=True)

    def _record(
        self,
        name: str,
        line: int,
        keywords: tuple[str, ...] = (),
        guarded: bool = False,
        option: bool = False,
        call: bool = False,
    ) -> None:
        top = name.split(".")[0]
        if not option and top not in self.tops:
            return
        self.found.append(
            Use(
                name,
                self.label,
                line,
                self.cell,
                keywords,
                guarded or self.guard_depth > 0,
                self.absent[-1] if self.absent else "",
                option,
                call,
            )
        )

    # ------------------------------------------------------------ guards

    def _guard(self, test: ast.AST) -> tuple[str | None, str | None]:
        """The probed name an ``if`` needs absent in its body, and in its ``else``."""
        negate = False
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negate = test.operand, True
        name, present_in_body = None, True
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            right = test.comparators[0]
            if isinstance(right, ast.Constant) and right.value is None:
                name = self._probed(test.left)
                present_in_body = isinstance(test.ops[0], ast.IsNot)
        elif isinstance(test, (ast.Name, ast.Call)):
            name = self._probed(test)
        if name is None:
            return None, None
        if negate:
            present_in_body = not present_in_body
        return (None, name) if present_in_body else (name, None)

    def _probed(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            scope: _Scope | None = self.scope
            while scope is not None:
                if node.id in scope.probes:
                    return scope.probes[node.id]
                scope = scope.parent
            return None
        probe = _probe(node)
        if probe is not None:
            base = self.resolve(probe[0])
            return f"{base}.{probe[1]}" if base else None
        return None

    def _absent_after(self, node: ast.stmt) -> str | None:
        """After ``if <present>: ... return``, the rest of the block needs the name absent."""
        if not isinstance(node, ast.If) or node.orelse or not node.body:
            return None
        if not isinstance(node.body[-1], (ast.Return, ast.Raise)):
            return None
        present, absent = self._guard(node.test)
        return absent if present is None else None


def _probe(node: ast.AST | None) -> tuple[ast.AST, str] | None:
    """``getattr(x, "n"[, d])`` or ``hasattr(x, "n")``: ``(x, "n")``."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    if node.func.id not in ("getattr", "hasattr") or len(node.args) < 2:
        return None
    attr = node.args[1]
    if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
        return node.args[0], attr.value
    return None


def _is_probe_with_default(node: ast.Call) -> bool:
    return node.func.id == "hasattr" or len(node.args) >= 3


def _catches(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((_dotted(t) or [""])[-1] in SAFE for t in types)


def _bodies(node: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists at module level that an import may hide in."""
    if isinstance(node, ast.If):
        yield node.body
        yield node.orelse
    elif isinstance(node, ast.Try):
        yield node.body
        yield node.orelse
        yield node.finalbody
        for handler in node.handlers:
            yield handler.body
    elif isinstance(node, (ast.With, ast.For)):
        yield node.body
