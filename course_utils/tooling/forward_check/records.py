"""What a release deprecates or removes, read from its Python sources without importing it.

A :class:`Release` is one distribution's ``.py`` files, from a wheel (a zip, never
installed) or from the installed distribution. Reading them with :mod:`ast`, it finds:

- the ``_deprecations`` tables jax keeps in its modules: each name's message, and
  whether the name still works behind the warning or is gone (``None``);
- ``typing_extensions.deprecated`` / ``warnings.deprecated`` decorators, and a package's
  own deprecation wrappers (a function whose inner function always warns, as flax's
  ``deprecated(new_fn)``), on functions, classes, methods and assigned names;
- ``warnings.warn(..., DeprecationWarning | FutureWarning)`` sites (and calls of a
  package's helper that passes its message on to one, as jax's ``deprecations.warn``),
  and the name each guards: the function or class it sits in when it always warns there,
  the module when it warns on import, a keyword argument when a test of that parameter
  alone guards it. A warning under any other condition depends on values only a run
  sees: it is counted (:attr:`Release.conditional`), never matched;
- jax's configuration options (``name="jax_..."`` in its ``*_state`` and ``*_flag`` calls).

:meth:`Release.resolve` follows a dotted name as Python would at run time (``from x import
y as z``, star imports, submodules, classes, the deprecation tables) and says where it
ends: a definition, a module, a value it cannot follow, outside the release, missing, or
unknown where a module builds its namespace at run time (``globals()``, a module
``__getattr__``, a module object swapped into ``sys.modules``).
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

# The warning categories the course's tests turn into errors (pyproject.toml).
CATEGORIES = ("DeprecationWarning", "FutureWarning")
# Decorators and wrappers that deprecate what they wrap, outside any release.
DEPRECATORS = (
    "typing_extensions.deprecated",
    "warnings.deprecated",
    "typing.deprecated",
)
# Text without which a file holds no deprecation record, read before parsing it (a
# release's own helpers and wrappers add their names).
HINTS = (
    r"DeprecationWarning",
    r"FutureWarning",
    r"\bdeprecated\s*\(",
    r"@[\w.]*deprecated\b",
)
# Words each of HINTS holds: a file without any holds no hint. Looking for words is
# quick; a pattern that starts with ``\b`` is slow on megabytes of source.
HINT_WORDS = ("DeprecationWarning", "FutureWarning", "deprecated")
# Calls that define a jax configuration option (``bool_state(name="jax_...")``).
OPTION_CALL = re.compile(r"(_state|_flag)$|^define_")
# How deep an alias chain may go before it is taken for a cycle.
MAX_DEPTH = 40

# Where a resolution ends (:attr:`Resolution.state`).
DEFINITION, MODULE, VALUE, EXTERNAL, MISSING, UNKNOWN = (
    "definition",
    "module",
    "value",
    "external",
    "missing",
    "unknown",
)
FOUND = frozenset({DEFINITION, MODULE, VALUE, EXTERNAL})


@dataclass(frozen=True)
class Record:
    """One deprecation or removal a release records for a name.

    ``name`` is the name as accessed (``jax.sharding.SingleDeviceSharding``, for a
    ``_deprecations`` entry) or the definition's qualified name; ``keyword`` a deprecated
    keyword argument of it; ``where`` the file and line in the release. ``on_call``: a
    class that warns when constructed (``torch.autograd.Function``), not when named or
    subclassed.
    """

    name: str
    status: str  # "deprecated" or "removed"
    how: str
    message: str
    where: str
    keyword: str = ""
    on_call: bool = False  # only calling it warns (a class whose construction does)


@dataclass(frozen=True)
class Resolution:
    """Where a dotted name ends in a release, and the records met on the way."""

    state: str
    target: str
    records: tuple[Record, ...] = ()
    where: str = ""

    @property
    def found(self) -> bool:
        return self.state in FOUND


@dataclass
class _Binding:
    kind: str  # "def", "class", "alias" (absolute), "ref" (in this module), "value"
    target: str
    line: int
    node: ast.AST | None = None


@dataclass
class _Namespace:
    """What a module's top level binds, as far as its source says."""

    name: str
    path: str
    bindings: dict[str, _Binding] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)
    all_names: list[str] | None = None
    dynamic: str = ""
    table: dict[str, tuple[str, _Binding | None, int]] = field(default_factory=dict)
    spreads: list[str] = field(default_factory=list)


def module_name(path: str) -> str | None:
    """``jax/_src/core.py`` -> ``jax._src.core``; ``jax/__init__.py`` -> ``jax``."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


# Python 3.12's type parameters (``def f[T](x: T)``, ``class C[T]:``, ``type A[T] = ...``):
# the parser of an older Python reads the line once they are cut out.
_TYPE_PARAMS = re.compile(r"^(\s*(?:async\s+)?(?:def|class)\s+\w+)\[")
_TYPE_ALIAS = re.compile(r"^(\s*)type\s+(\w+)\s*(\[.*\])?\s*=")


def parse_newer(source: str) -> ast.Module | None:
    """:func:`ast.parse` of code written for a newer Python, on this one.

    Type parameters are cut out of their lines and ``type X = ...`` becomes
    ``X = ...``; a one-line statement that still fails (an f-string reusing its quotes,
    Python 3.12's PEP 701) becomes an assignment of ``None`` to the same names, so
    every line keeps its number. None when the module still does not parse.
    """
    lines = source.splitlines()
    for i in range(len(lines)):
        _older_line(lines, i)
    for _ in range(20):
        try:
            return ast.parse("\n".join(lines))
        except (SyntaxError, ValueError) as err:
            number = getattr(err, "lineno", None)
            if not number or not _blank_statement(lines, number - 1):
                return None
    return None


def _older_line(lines: list[str], i: int) -> None:
    """Cut type parameters out of line ``i`` (and the lines they span after it)."""
    line = lines[i]
    match = _TYPE_PARAMS.match(line)
    if match:
        depth, start = 0, match.end() - 1
        for j in range(i, min(i + 20, len(lines))):
            text = lines[j]
            for k in range(start if j == i else 0, len(text)):
                depth += {"[": 1, "]": -1}.get(text[k], 0)
                if depth == 0:
                    lines[i] = line[:start] + text[k + 1 :]
                    for blank in range(i + 1, j + 1):
                        lines[blank] = ""
                    return
        return
    match = _TYPE_ALIAS.match(line)
    if match:
        lines[i] = f"{match.group(1)}{match.group(2)} =" + line[match.end() :]


def _blank_statement(lines: list[str], index: int) -> bool:
    """Replace the one-line statement at ``index`` by ``<targets> = None``; False when
    it is not a statement of one line (the next line is indented deeper)."""
    line = lines[index]
    indent = line[: len(line) - len(line.lstrip())]
    following = next((x for x in lines[index + 1 :] if x.strip()), "")
    if len(following) - len(following.lstrip()) > len(indent) or not line.strip():
        return False
    target = re.match(r"\s*([\w.,\s]+?)\s*=[^=]", line)
    names = target.group(1) if target and "." not in target.group(1) else "_"
    blank = f"{indent}{names} = None"
    if lines[index] == blank:
        return False
    lines[index] = blank
    return True


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _text(node: ast.AST | None) -> str:
    """A warning's message where the source spells it out (f-strings in part), one line."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = "".join(
            v.value if isinstance(v, ast.Constant) else "{...}" for v in node.values
        )
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        text = _text(node.left) + _text(node.right)
    else:
        return ""
    return " ".join(text.split())


def _is_type_checking(test: ast.AST) -> bool:
    name = _dotted(test) or ""
    return name.split(".")[-1] == "TYPE_CHECKING"


# Stands for the records a resolution without the scan did not look up.
_UNSCANNED = Record("", "", "", "", "")


class _NeedsRecords(Exception):
    """Raised where a resolution without records would take another path than one with."""


class Release:
    """One distribution's Python sources, by module name, and what they record."""

    def __init__(
        self, project: str, version: str, files: dict[str, str], read: Callable
    ) -> None:
        self.project = project
        self.version = version
        self.label = f"{project} {version}"
        # module name -> path in the release
        self.files = files
        self._read = read
        self._trees: dict[str, ast.Module | None] = {}
        self._spaces: dict[str, _Namespace] = {}
        self._records: dict[str, list[Record]] | None = None
        self._keywords: dict[tuple[str, str], Record] = {}
        self.conditional = 0  # warnings under a condition only a run decides
        self.unreadable: list[str] = []  # files whose syntax this Python cannot parse
        self.tops = frozenset(m.split(".")[0] for m in files)
        # every package holding a module, with or without an ``__init__``
        self._packages = frozenset(
            m.rsplit(".", i)[0] for m in files for i in range(1, m.count(".") + 1)
        )

    # ------------------------------------------------------------------ reading

    @classmethod
    def from_wheel(cls, path: Path) -> Release:
        """The ``.py`` members of a wheel (or of a zip holding only those)."""
        archive = zipfile.ZipFile(path)
        files = {}
        for member in archive.namelist():
            name = module_name(member)
            if name is not None and ".dist-info" not in member:
                files[name] = member
        project, version = _wheel_name(path.name)

        def read(member: str) -> str:
            return archive.read(member).decode("utf-8", "replace")

        return cls(project, version, files, read)

    @classmethod
    def from_installed(cls, project: str) -> Release | None:
        """The installed distribution's ``.py`` files; None when it is not installed."""
        try:
            dist = importlib.metadata.distribution(project)
        except importlib.metadata.PackageNotFoundError:
            return None
        files = {}
        for entry in dist.files or ():
            name = module_name(entry.as_posix())
            if name is not None:
                files[name] = entry.as_posix()

        def read(member: str) -> str:
            return Path(dist.locate_file(member)).read_text("utf-8", "replace")

        return cls(dist.metadata["Name"], dist.version, files, read)

    def source(self, module: str) -> str:
        return self._read(self.files[module])

    def tree(self, module: str) -> ast.Module | None:
        """The module's syntax tree (cached); None for a file this Python cannot read."""
        if module not in self._trees:
            self._trees[module] = parse_newer(self.source(module))
            if self._trees[module] is None:
                self.unreadable.append(self.files[module])
        return self._trees[module]

    def where(self, module: str, line: int) -> str:
        return f"{self.files[module]}:{line}"

    def is_module(self, name: str) -> bool:
        """A module or package of the release (a folder without ``__init__`` too)."""
        return name in self.files or name in self._packages

    # -------------------------------------------------------------- namespaces

    def namespace(self, module: str) -> _Namespace:
        if module not in self._spaces:
            space = _Namespace(module, self.files.get(module, ""))
            tree = self.tree(module) if module in self.files else None
            if module in self.files and tree is None:
                space.dynamic = "syntax this Python cannot read"
            if tree is not None:
                package = module if self.files[module].endswith("__init__.py") else ""
                _Collector(space, package or module.rpartition(".")[0]).block(tree.body)
            self._spaces[module] = space
        return self._spaces[module]

    def _table(self, module: str, seen: frozenset[str] = frozenset()) -> dict:
        """A module's ``_deprecations``, with the tables it spreads in (``**m._deprecations``)."""
        space = self.namespace(module)
        table = {}
        for spread in space.spreads:
            if self.is_module(spread) and spread not in seen | {module}:
                table.update(self._table(spread, seen | {module}))
        table.update(space.table)
        return table

    def resolve(self, dotted: str, records: bool = True) -> Resolution:
        """Follow ``dotted`` from its top-level package, collecting the records met.

        With ``records=False`` it says only where the name ends, with no records. The
        release is then not scanned for them, the costly part on a first call.
        """
        parts = dotted.split(".")
        if parts[0] not in self.tops:
            return Resolution(EXTERNAL, dotted)
        if not self.is_module(parts[0]):
            return Resolution(MISSING, dotted)
        if records:
            return self._walk(parts[0], parts[1:], 0, True, scan=True)
        try:
            found = self._walk(parts[0], parts[1:], 0, True, scan=False)
        except _NeedsRecords:
            found = self._walk(parts[0], parts[1:], 0, True, scan=True)
        return Resolution(found.state, found.target, (), found.where)

    def _walk(
        self,
        module: str,
        parts: list[str],
        depth: int,
        start_module: bool = False,
        scan: bool = True,
    ) -> Resolution:
        """Attribute ``parts`` of ``module`` (or of the ref ``parts`` inside it).

        ``scan``: look up the records of the release's scan (:meth:`records`); without
        it, :data:`_UNSCANNED` stands in for them.
        """
        if start_module:
            state = Resolution(MODULE, module, self._scanned(module, scan))
        else:
            state = self._lookup(module, parts[0], depth, scan)
            parts = parts[1:]
        for part in parts:
            if state.state == MODULE:
                step = self._lookup(state.target, part, depth, scan)
            elif state.state == DEFINITION:
                step = self._member(state, part, scan)
            elif state.state in (VALUE, EXTERNAL):
                step = Resolution(UNKNOWN, f"{state.target}.{part}")
            else:
                return state
            # Constructing a class warns; reaching through it to an attribute does not.
            passed = tuple(r for r in state.records if not r.on_call)
            state = Resolution(
                step.state, step.target, passed + step.records, step.where
            )
        return state

    def _lookup(
        self, module: str, attr: str, depth: int, scan: bool = True
    ) -> Resolution:
        """``module.attr``: its binding, its deprecation entry, a star import, a submodule."""
        if depth > MAX_DEPTH:
            return Resolution(UNKNOWN, f"{module}.{attr}")
        space = self.namespace(module)
        binding = space.bindings.get(attr)
        if binding is not None:
            return self._follow(module, binding, depth, scan)
        table = self._table(module)
        if attr in table:
            message, ref, line = table[attr]
            status = "removed" if ref is None else "deprecated"
            record = Record(
                f"{module}.{attr}",
                status,
                "_deprecations",
                message,
                self.where(module, line),
            )
            if ref is None:
                return Resolution(MISSING, f"{module}.{attr}", (record,))
            inner = self._follow(module, ref, depth + 1, scan)
            return Resolution(
                inner.state, inner.target, (record, *inner.records), inner.where
            )
        opaque = bool(space.dynamic)
        for star in space.stars:
            exported = self.namespace(star).all_names
            if exported is None and attr.startswith("_"):
                continue
            if exported is not None and attr not in exported:
                continue
            if not self.is_module(star):  # a C extension, another distribution
                opaque = True
                continue
            found = self._lookup(star, attr, depth + 1, scan)
            known = tuple(r for r in found.records if r is not _UNSCANNED)
            if found.state == MISSING and not known and found.records:
                raise _NeedsRecords  # records the scan finds would decide here
            if found.state != MISSING or known:
                return found
        sub = f"{module}.{attr}"
        if self.is_module(sub):
            return Resolution(MODULE, sub, self._scanned(sub, scan))
        if opaque:
            return Resolution(UNKNOWN, sub)
        return Resolution(MISSING, sub)

    def _follow(
        self, module: str, binding: _Binding, depth: int, scan: bool = True
    ) -> Resolution:
        where = self.where(module, binding.line)
        if binding.kind in ("def", "class"):
            records = self._scanned(binding.target, scan)
            return Resolution(DEFINITION, binding.target, records, where)
        if binding.kind == "value":
            records = self._scanned(binding.target, scan)
            return Resolution(VALUE, binding.target, records, where)
        parts = binding.target.split(".")
        if binding.kind == "ref":
            return self._walk(module, parts, depth + 1, scan=scan)
        if parts[0] not in self.tops:
            return Resolution(EXTERNAL, binding.target, (), where)
        for i in range(len(parts), 0, -1):
            head = ".".join(parts[:i])
            if self.is_module(head):
                return self._walk(head, parts[i:], depth + 1, True, scan)
        return Resolution(MISSING, binding.target, (), where)

    def _member(self, state: Resolution, attr: str, scan: bool = True) -> Resolution:
        """An attribute of a class the release defines: its body, else unknown."""
        module, _, qual = state.target.rpartition(".")
        node = self._class_node(state.target)
        if node is None:
            return Resolution(UNKNOWN, f"{state.target}.{attr}")
        for stmt in node.body:
            names = _bound_names(stmt)
            if attr in names:
                target = f"{state.target}.{attr}"
                return Resolution(DEFINITION, target, self._scanned(target, scan))
        return Resolution(UNKNOWN, f"{state.target}.{attr}")

    def _class_node(self, qualname: str) -> ast.ClassDef | None:
        for i in range(1, qualname.count(".") + 1):  # the longest module first
            module = qualname.rsplit(".", i)[0]
            if module in self.files:
                rest = qualname[len(module) + 1 :].split(".")
                body = self.tree(module).body if self.tree(module) else []
                node = None
                for part in rest:
                    node = next(
                        (
                            n
                            for n in body
                            if isinstance(n, ast.ClassDef) and n.name == part
                        ),
                        None,
                    )
                    if node is None:
                        return None
                    body = node.body
                return node
        return None

    def _scanned(self, name: str, scan: bool = True) -> tuple[Record, ...]:
        """The records the release's scan finds for ``name``; without ``scan``, a
        stand-in for those it might find (:data:`_UNSCANNED`)."""
        return tuple(self.records().get(name, ())) if scan else (_UNSCANNED,)

    # ----------------------------------------------------------------- records

    def records(self) -> dict[str, list[Record]]:
        """Deprecation records of definitions and modules, by qualified name."""
        if self._records is None:
            self._records = {}
            helpers, wrappers = self._helpers()
            hint = re.compile(
                "|".join([*HINTS, *map(_call_hint, sorted(helpers | wrappers))])
            )
            words = HINT_WORDS + tuple(q.rsplit(".", 1)[1] for q in helpers | wrappers)
            for module in sorted(self.files):
                text = self.source(module)
                if not any(w in text for w in words) or not hint.search(text):
                    continue
                tree = self.tree(module)
                if tree is None:
                    continue
                _Scanner(self, module, helpers, wrappers).scan(tree)
        return self._records

    def keyword_record(self, qualname: str, keyword: str) -> Record | None:
        self.records()
        return self._keywords.get((qualname, keyword))

    def _add(self, record: Record) -> None:
        if record.keyword:
            self._keywords.setdefault((record.name, record.keyword), record)
        else:
            self._records.setdefault(record.name, []).append(record)

    def _helpers(self) -> tuple[set[str], set[str]]:
        """The release's own deprecation helpers and wrappers, by qualified name.

        A helper passes one of its parameters as the message of a deprecation warning
        (jax's ``deprecations.warn(id, message, ...)``); a wrapper holds an inner
        function that always warns (flax's ``deprecated(new_fn)``).
        """
        helpers, wrappers = set(), set()
        for module in self.files:
            text = self.source(module)
            if "DeprecationWarning" not in text and "FutureWarning" not in text:
                continue
            tree = self.tree(module)
            for node in tree.body if tree else ():
                if not isinstance(node, ast.FunctionDef):
                    continue
                params = {a.arg for a in node.args.args + node.args.kwonlyargs}
                for call in _warn_calls(node):
                    first = call.args[0] if call.args else None
                    if isinstance(first, ast.Name) and first.id in params:
                        helpers.add(f"{module}.{node.name}")
                for inner in node.body:
                    if isinstance(inner, ast.FunctionDef) and any(
                        _is_dep_warn(call) and not tests
                        for call, tests in _calls_with_conditions(inner.body, [])
                    ):
                        wrappers.add(f"{module}.{node.name}")
        return helpers, wrappers

    # ----------------------------------------------------------------- options

    def options(self) -> set[str]:
        """jax's configuration option names (``name="jax_..."`` of its option calls)."""
        names = set()
        for module in self.files:
            text = self.source(module)
            if "jax_" not in text or not re.search(r"_(state|flag)\(", text):
                continue
            for node in ast.walk(self.tree(module) or ast.Module(body=[])):
                if not isinstance(node, ast.Call):
                    continue
                func = (_dotted(node.func) or "").split(".")[-1]
                if not OPTION_CALL.search(func):
                    continue
                args = [k.value for k in node.keywords if k.arg == "name"]
                args += node.args[:1]
                for arg in args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        if arg.value.startswith("jax_"):
                            names.add(arg.value)
        return names


def _call_hint(qualname: str) -> str:
    """Text a call of a helper leaves: ``deprecations.warn(`` or an import of ``warn``.

    Either holds the helper's own name (``warn``): :meth:`Release.records` looks for
    that word before this pattern.
    """
    module, func = qualname.rsplit(".", 1)
    short = re.escape(module.rsplit(".", 1)[-1])
    return rf"\b{short}\.{re.escape(func)}\s*\(|import [^\n]*\b{re.escape(func)}\b"


def _wheel_name(filename: str) -> tuple[str, str]:
    """``jax-0.12.1-py3-none-any.whl`` -> ``("jax", "0.12.1")``."""
    project, version = filename.split("-")[:2]
    return project.replace("_", "-"), version


def _bound_names(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, ast.Assign):
        return {
            n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)
        }
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return {stmt.target.id}
    return set()


def _warn_calls(node: ast.AST) -> list[ast.Call]:
    """``warnings.warn(...)`` calls with a deprecation category, anywhere under ``node``."""
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and _is_dep_warn(n)]


def _is_dep_warn(call: ast.Call) -> bool:
    func = _dotted(call.func) or ""
    if func not in ("warn", "warn_explicit") and not func.endswith(
        ("warnings.warn", "warnings.warn_explicit")
    ):
        return False
    category = call.args[1] if len(call.args) > 1 else None
    for kw in call.keywords:
        if kw.arg == "category":
            category = kw.value
    name = (_dotted(category) or "") if category is not None else ""
    return name.split(".")[-1] in CATEGORIES


class _Collector:
    """Fills a :class:`_Namespace` from a module's top-level statements."""

    def __init__(self, space: _Namespace, package: str) -> None:
        self.space = space
        self.package = package

    def block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.stmt(stmt)

    def stmt(self, node: ast.stmt) -> None:
        space = self.space
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    space.bindings[alias.asname] = _Binding(
                        "alias", alias.name, node.lineno
                    )
                else:
                    top = alias.name.split(".")[0]
                    space.bindings[top] = _Binding("alias", top, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = self._absolute(node.module, node.level)
            for alias in node.names:
                if alias.name == "*":
                    space.stars.append(base)
                else:
                    space.bindings[alias.asname or alias.name] = _Binding(
                        "alias", f"{base}.{alias.name}", node.lineno
                    )
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qual = f"{space.name}.{node.name}"
            space.bindings[node.name] = _Binding("def", qual, node.lineno, node)
            if node.name == "__getattr__":
                space.dynamic = "a module __getattr__"
        elif isinstance(node, ast.ClassDef):
            qual = f"{space.name}.{node.name}"
            space.bindings[node.name] = _Binding("class", qual, node.lineno, node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            self.assign(node)
        elif isinstance(node, ast.AugAssign):
            if getattr(node.target, "id", "") == "__all__":
                self._all(node.value, extend=True)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    space.bindings.pop(target.id, None)
        elif isinstance(node, ast.If):
            if _is_type_checking(node.test):
                self.block(node.orelse)
            else:
                self.block(node.body)
                self.block(node.orelse)
        elif isinstance(node, ast.Try):
            for part in (node.body, node.orelse, node.finalbody):
                self.block(part)
            for handler in node.handlers:
                self.block(handler.body)
        elif isinstance(node, (ast.For, ast.While, ast.With)):
            for target in _targets(node):
                space.bindings[target] = _Binding(
                    "value", f"{space.name}.{target}", node.lineno
                )
            self.block(node.body)
            self.block(getattr(node, "orelse", []))
        elif isinstance(node, ast.Expr):
            self._expression(node.value)
        self._runtime_namespace(node)

    def assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        space = self.space
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            name = target.id
            if name == "__all__":
                self._all(value)
                continue
            if name == "_deprecations" and isinstance(value, ast.Dict):
                self._deprecations(value)
            if name == "__getattr__":
                callee = (
                    _dotted(value.func) if isinstance(value, ast.Call) else ""
                ) or ""
                if not callee.endswith("deprecation_getattr"):
                    space.dynamic = "a module __getattr__"
                continue
            chain = _dotted(value) if value is not None else None
            if chain is not None:
                space.bindings[name] = _Binding("ref", chain, node.lineno)
            else:
                space.bindings[name] = _Binding(
                    "value", f"{space.name}.{name}", node.lineno, value
                )
        for target in targets:
            if isinstance(target, (ast.Tuple, ast.List)):
                for elt in ast.walk(target):
                    if isinstance(elt, ast.Name):
                        space.bindings[elt.id] = _Binding(
                            "value", f"{space.name}.{elt.id}", node.lineno
                        )

    def _deprecations(self, table: ast.Dict) -> None:
        """Each entry's message and what it serves, as bound when the table is built
        (jax deletes the ``_deprecated_*`` names after building it)."""
        for key, value in zip(table.keys, table.values, strict=True):
            if key is None:
                ref = _dotted(value) or ""
                if ref.endswith("._deprecations"):
                    head = self._now(ref.rsplit(".", 1)[0], value.lineno)
                    if head.kind == "alias":
                        self.space.spreads.append(head.target)
                continue
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            message, target = "", self._now("?", key.lineno)
            if isinstance(value, ast.Tuple) and len(value.elts) == 2:
                message = _text(value.elts[0])
                second = value.elts[1]
                if isinstance(second, ast.Constant) and second.value is None:
                    target = None
                else:
                    target = self._now(_dotted(second) or "?", key.lineno)
            self.space.table[key.value] = (message, target, key.lineno)

    def _now(self, chain: str, line: int) -> _Binding:
        """What ``chain`` names at this point of the module, as a binding."""
        head, _, rest = chain.partition(".")
        binding = self.space.bindings.get(head)
        if binding is None:
            return _Binding("ref", chain, line)
        if binding.kind in ("alias", "ref"):
            return _Binding(
                binding.kind, binding.target + (f".{rest}" if rest else ""), line
            )
        if rest:
            return _Binding("ref", chain, line)
        return binding

    def _all(self, value: ast.AST | None, extend: bool = False) -> None:
        if isinstance(value, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
        ):
            names = [e.value for e in value.elts]
            if extend and self.space.all_names is not None:
                self.space.all_names += names
            else:
                self.space.all_names = names
        elif not extend:
            self.space.all_names = None

    def _expression(self, value: ast.AST) -> None:
        """``__all__.extend([...])`` and ``__all__ += [...]``."""
        if isinstance(value, ast.Call) and _dotted(value.func) in (
            "__all__.extend",
            "__all__.append",
        ):
            arg = value.args[0] if value.args else None
            if isinstance(arg, ast.Constant):
                arg = ast.List(elts=[arg])
            self._all(arg, extend=True)

    def _runtime_namespace(self, node: ast.stmt) -> None:
        """``globals()[...] = ``, ``globals().update``, ``sys.modules[__name__] = ``."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call) and _dotted(sub.func) in (
                "globals",
                "vars",
            ):
                self.space.dynamic = "globals()"
            if isinstance(sub, ast.Subscript) and _dotted(sub.value) == "sys.modules":
                if isinstance(sub.ctx, ast.Store):
                    self.space.dynamic = "a module object in sys.modules"

    def _absolute(self, module: str | None, level: int) -> str:
        if not level:
            return module or ""
        base = self.package.split(".")
        base = base[: len(base) - level + 1]
        return ".".join(base + ([module] if module else []))


def _targets(node: ast.stmt) -> Iterator[str]:
    if isinstance(node, ast.For):
        yield from (n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    if isinstance(node, ast.With):
        for item in node.items:
            if item.optional_vars is not None:
                yield from (
                    n.id
                    for n in ast.walk(item.optional_vars)
                    if isinstance(n, ast.Name)
                )


class _Scanner:
    """Finds one module's deprecation decorators, wrappers and warning sites."""

    def __init__(
        self, release: Release, module: str, helpers: set[str], wrappers: set[str]
    ) -> None:
        self.release = release
        self.module = module
        self.helpers = helpers
        self.wrappers = wrappers
        self.space = release.namespace(module)

    def _resolved(self, node: ast.AST) -> str:
        """A callee's qualified name as this module's imports spell it."""
        chain = _dotted(node)
        if chain is None:
            return ""
        head, _, rest = chain.partition(".")
        binding = self.space.bindings.get(head)
        if binding is None:
            return chain
        if binding.kind in ("alias", "def", "class"):
            return binding.target + (f".{rest}" if rest else "")
        if binding.kind == "ref":
            return binding.target + (f".{rest}" if rest else "")
        return chain

    def _deprecator(self, node: ast.AST) -> tuple[bool, str, str]:
        """Whether a decorator (or a called wrapper) deprecates; its message and category."""
        call = node if isinstance(node, ast.Call) else None
        name = self._resolved(call.func if call else node)
        if name in DEPRECATORS or name in self.wrappers:
            message = _text(call.args[0]) if call and call.args else ""
            category = "DeprecationWarning"
            for kw in call.keywords if call else ():
                if kw.arg == "category":
                    category = _dotted(kw.value) or "None"
            return True, message, category
        return False, "", ""

    def scan(self, tree: ast.Module) -> None:
        for stmt in tree.body:
            self._statement(stmt, prefix=self.module, function=None)
        self._module_warnings(tree)

    def _statement(self, stmt: ast.stmt, prefix: str, function: ast.AST | None) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            qual = f"{prefix}.{stmt.name}"
            for decorator in stmt.decorator_list:
                deprecates, message, category = self._deprecator(decorator)
                if deprecates:
                    self._add(qual, f"@deprecated ({category})", message, stmt.lineno)
            if isinstance(stmt, ast.ClassDef):
                for inner in stmt.body:
                    self._statement(inner, qual, None)
            else:
                self._function(stmt, qual)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(
            stmt.value, ast.Call
        ):
            self._assigned(stmt, prefix)
        elif isinstance(stmt, (ast.If, ast.Try)) and function is None:
            for part in _bodies(stmt):
                for inner in part:
                    self._statement(inner, prefix, None)

    def _assigned(self, stmt: ast.Assign | ast.AnnAssign, prefix: str) -> None:
        """``old = wrapper(new)`` (flax's ``deprecated``) or ``old = deprecated("...")(new)``."""
        value = stmt.value
        if self._resolved(value.func) in self.wrappers:
            how, message = f"{self._resolved(value.func)}(...)", ""
        elif isinstance(value.func, ast.Call) and self._deprecator(value.func)[0]:
            how, message = "deprecated(...)(...)", self._deprecator(value.func)[1]
        else:
            return
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            if isinstance(target, ast.Name):
                self._add(f"{prefix}.{target.id}", how, message, stmt.lineno)

    def _function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, qual: str
    ) -> None:
        """Warning sites of one function: unconditional, or guarded by one parameter."""
        params = {a.arg for a in node.args.args + node.args.kwonlyargs}
        params |= {a.arg for a in node.args.posonlyargs}
        kwargs = node.args.kwarg.arg if node.args.kwarg else ""
        owner, on_call = qual, False
        if node.name in ("__init__", "__new__"):
            owner, on_call = qual.rsplit(".", 1)[0], True  # on construction: the class
        for call, tests in _calls_with_conditions(node.body, []):
            message = ""
            if _is_dep_warn(call):
                message = _text(call.args[0] if call.args else None)
            elif self._resolved(call.func) in self.helpers:
                message = _text(call.args[1] if len(call.args) > 1 else None)
                message = message or _text(call.args[0] if call.args else None)
            else:
                continue
            if not tests:
                how = "warnings.warn on construction" if on_call else "warnings.warn"
                self._add(owner, how, message, call.lineno, on_call=on_call)
                continue
            keyword = _guarding_parameter(tests, params, kwargs)
            if keyword:
                self._add(qual, "warnings.warn", message, call.lineno, keyword)
            else:
                self.release.conditional += 1

    def _module_warnings(self, tree: ast.Module) -> None:
        """A deprecation warning on import, at the module's top level."""
        for call, tests in _calls_with_conditions(tree.body, []):
            if not tests and _is_dep_warn(call):
                self._add(
                    self.module,
                    "warnings.warn on import",
                    _text(call.args[0] if call.args else None),
                    call.lineno,
                )

    def _add(
        self,
        name: str,
        how: str,
        message: str,
        line: int,
        keyword: str = "",
        on_call: bool = False,
    ) -> None:
        where = self.release.where(self.module, line)
        self.release._add(
            Record(name, "deprecated", how, message, where, keyword, on_call)
        )


def _bodies(stmt: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(stmt, ast.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, ast.Try):
        return [stmt.body, stmt.orelse, stmt.finalbody] + [
            h.body for h in stmt.handlers
        ]
    return []


def _calls_with_conditions(
    body: list[ast.stmt], tests: list[ast.AST]
) -> Iterator[tuple[ast.Call, list[ast.AST]]]:
    """Every call in ``body`` (not in nested functions or classes), with the tests
    (``if``, ``while``, loops, ``except``) it sits under."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.If):
            yield from _expr_calls(stmt.test, tests)
            yield from _calls_with_conditions(stmt.body, [*tests, stmt.test])
            yield from _calls_with_conditions(stmt.orelse, [*tests, stmt.test])
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            test = stmt.test if isinstance(stmt, ast.While) else stmt.iter
            yield from _calls_with_conditions(stmt.body, [*tests, test])
            yield from _calls_with_conditions(stmt.orelse, [*tests, test])
        elif isinstance(stmt, ast.Try):
            yield from _calls_with_conditions(stmt.body, tests)
            yield from _calls_with_conditions(stmt.finalbody, tests)
            yield from _calls_with_conditions(stmt.orelse, [*tests, stmt])
            for handler in stmt.handlers:
                yield from _calls_with_conditions(handler.body, [*tests, handler])
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            yield from _calls_with_conditions(stmt.body, tests)
        elif isinstance(stmt, ast.Match):
            for case in stmt.cases:
                yield from _calls_with_conditions(case.body, [*tests, case.pattern])
        else:
            yield from _expr_calls(stmt, tests)


def _expr_calls(
    node: ast.AST, tests: list[ast.AST]
) -> Iterator[tuple[ast.Call, list[ast.AST]]]:
    """Calls inside one statement; a call in a conditional expression is conditional."""
    stack = [(node, tests)]
    while stack:
        current, under = stack.pop()
        if isinstance(current, (ast.Lambda, ast.FunctionDef, ast.ClassDef)):
            continue
        if isinstance(current, ast.Call):
            yield current, under
        if isinstance(current, ast.IfExp):
            stack.append((current.test, under))
            stack.append((current.body, [*under, current.test]))
            stack.append((current.orelse, [*under, current.test]))
            continue
        if isinstance(current, ast.BoolOp):
            stack.append((current.values[0], under))
            stack.extend((v, [*under, current]) for v in current.values[1:])
            continue
        stack.extend((child, under) for child in ast.iter_child_nodes(current))


def _guarding_parameter(tests: list[ast.AST], params: set[str], kwargs: str) -> str:
    """The one parameter every test asks only whether it was given (``if x is not None``,
    ``if x``, ``if "x" in kwargs``), or ``""`` (a test of its value, ``if x > 2``)."""
    found = set()
    for test in tests:
        name = _given(test, params, kwargs)
        if not name:
            return ""
        found.add(name)
    return found.pop() if len(found) == 1 else ""


def _given(test: ast.AST, params: set[str], kwargs: str) -> str:
    """The parameter whose presence ``test`` checks, or ``""``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Name):
        return test.id if test.id in params - {"self", "cls"} else ""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return ""
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, ast.Name):
        if right.id == kwargs and isinstance(left, ast.Constant):
            return left.value if isinstance(left.value, str) else ""
        return ""
    if not isinstance(op, (ast.Is, ast.IsNot)) or not isinstance(left, ast.Name):
        return ""
    sentinel = (isinstance(right, ast.Constant) and right.value is None) or (
        isinstance(right, ast.Name) and right.id not in params
    )
    return left.id if sentinel and left.id in params - {"self", "cls"} else ""
