"""The ``flags`` column: constructs in a student's code worth a human look.

The code is read as Python (IPython magics such as ``!cmd`` become the
``get_ipython()`` calls the kernel runs), not as text, so an alias (``import os
as _o``, ``from os import system as s``), ``__import__``/``importlib``,
``exec``/``eval``/``compile``, ``getattr(builtins, "exec")``, a decoder of a
hidden payload (``base64``) or a rebound test helper (``check = ...``) is named
whatever it is called. A flag is no verdict: it asks a human to read the code.
"""

from __future__ import annotations

import ast
import builtins
import re

# flag: dotted names, matched once import aliases are resolved ("os.exec*": a prefix).
_FLAG_TABLE = """
get_ipython: IPython ipykernel jupyter_client get_ipython
input history: _ih _oh _dh In Out _i _ii _iii .history_manager
frame inspection: inspect gc traceback pdb bdb sys._getframe sys.settrace sys.setprofile
  .f_back .f_globals .f_locals .f_builtins .gi_frame .tb_frame .cr_frame
sys.modules / builtins: builtins __builtins__ sys.modules sys.meta_path sys.path_hooks
  sys.addaudithook .__builtins__
process control: subprocess multiprocessing signal pty pexpect concurrent os._exit os.fork*
  os.setsid os.kill* os.system os.popen os.exec* os.spawn* os.posix_spawn* os.abort os.wait*
ctypes: ctypes _ctypes cffi
file access: open io pathlib shutil tempfile glob fileinput os.open os.remove os.unlink
  os.rename os.replace os.listdir os.scandir os.walk os.fdopen os.write os.read os.chdir
  os.mkdir os.makedirs os.rmdir os.path .read_text .write_text .read_bytes .write_bytes
environment variables: os.environ os.putenv os.unsetenv os.getenv
dynamic import: importlib imp runpy pkgutil zipimport __import__ .__import__ .__loader__
dynamic code (exec/eval/compile): exec eval compile code codeop breakpoint types.FunctionType
  types.CodeType
encoded payload: base64 codecs zlib marshal pickle dill cloudpickle bz2 lzma binascii
  .fromhex .b64decode
reflection (getattr/globals/dunders): globals locals vars setattr delattr operator.attrgetter
  operator.methodcaller .__globals__ .__code__ .__closure__ .__subclasses__ .__bases__
  .__base__ .__mro__ .__dict__ .__getattribute__ .__getattr__ .__spec__ .__reduce__
  .__reduce_ex__ .__self__ .__func__ .__wrapped__ .__defaults__ .__kwdefaults__
"""
_FLAG_OF: dict[str, str] = {}
for _flag, _names in re.findall(r"(?ms)^(\S[^:]*): (.*?)(?=^\S|\Z)", _FLAG_TABLE):
    _FLAG_OF |= dict.fromkeys(_names.split(), _flag)
_PREFIXES = {k[:-1]: f for k, f in _FLAG_OF.items() if k.endswith("*")}
# Also matched after any attribute (timing.os.system): module names no honest attribute has.
_ANYWHERE = set(
    "os sys subprocess builtins importlib ctypes inspect multiprocessing shutil".split()
)
_ANYWHERE |= {"pickle", "marshal", "base64", "IPython", "__builtins__"}
PATCH = "patches a name it did not define"
REBIND = "rebinds a builtin or a test helper"
# Names the master's test cells rely on: a solution cell that binds one changes the tests.
_HELPERS = set(dir(builtins)) | {
    "check",
    "assert_close",
    "to_numpy",
    "CheckFailed",
    "exercises",
    "variants",
}
_HELPERS |= {
    "parity",
    "timing",
    "claims",
    "config",
    "np",
    "jnp",
    "jax",
    "torch",
    "math",
    "time",
}
_IMPORTERS = {"__import__", "importlib.import_module", "importlib.__import__"}


def _code_of(text: str) -> ast.AST | None:
    """The cell as Python, its IPython magics (``!cmd``, ``%%bash``) as ``get_ipython()`` calls."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        text = TransformerManager().transform_cell(text)
    except ImportError:  # pragma: no cover - IPython comes with the grader's kernel
        text = re.sub(r"(?m)^\s*[!%].*$", "get_ipython()", text)
    try:
        return ast.parse(text)
    except (
        SyntaxError,
        ValueError,
    ):  # the kernel cannot run it either (a markdown answer)
        return None


def _own_names(tree: ast.AST) -> set[str]:
    """Names the cell binds itself (assignments, parameters, defs), imports aside."""
    own = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            own.add(n.id)
        elif isinstance(n, ast.arg):
            own.add(n.arg)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(n.name)
    return own


def _module_level_names(tree: ast.AST) -> set[str]:
    """Names the cell binds in the notebook's namespace (function bodies aside, ``global`` in)."""
    found, todo = set(), list(ast.iter_child_nodes(tree))
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Global):
            found |= set(n.names)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
            found.add(n.id)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(n.name)
            todo += [b for b in ast.walk(n) if isinstance(b, ast.Global)]
        elif not isinstance(n, ast.Lambda | ast.comprehension):
            todo += list(ast.iter_child_nodes(n))
    return found


def _shows_only(rest: list[str]) -> bool:
    """``IPython.display`` or a public name of it (``display``, ``HTML``, ``Image``)."""
    return (
        rest[:1] == ["display"]
        and len(rest) <= 2
        and not any(p.startswith("_") or p == "get_ipython" for p in rest[1:])
    )


class _Finder(ast.NodeVisitor):
    """The flags of one cell: its imports, names, attributes and strings, aliases resolved."""

    def __init__(self, tree: ast.AST):
        self.flags: set[str] = set()
        self.alias: dict[str, str] = {}
        self.own = _own_names(tree)
        if _module_level_names(tree) & _HELPERS:
            self.flags.add(REBIND)
        self.visit(tree)

    def dotted(self, name: str) -> None:
        parts = name.split(".")
        for i, part in enumerate(parts):
            if i and part not in _ANYWHERE:
                continue
            if part == "IPython" and _shows_only(parts[i + 1 :]):
                continue  # IPython.display.display: an output, not the kernel
            for j in range(i + 1, len(parts) + 1):
                key = ".".join(parts[i:j])
                flag = _FLAG_OF.get(key) or next(
                    (f for k, f in _PREFIXES.items() if key.startswith(k)), None
                )
                self.flags |= {flag} if flag else set()

    def name_of(self, node: ast.AST) -> str | None:
        """``a.b.c`` with ``a`` resolved through the cell's imports; calls are looked through."""
        if isinstance(node, ast.Name):
            return self.alias.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.name_of(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):  # get_ipython().kernel; __import__("os") is os
            func = self.name_of(node.func)
            arg = node.args[0] if node.args else None
            if (
                func in _IMPORTERS
                and isinstance(arg, ast.Constant)
                and isinstance(arg.value, str)
            ):
                return arg.value
            return func
        return None

    def _is_own(self, node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Name)
            and node.id in self.own
            and node.id not in self.alias
        )

    def visit_Import(self, node: ast.Import) -> None:
        self.flags |= {REBIND} if {a.asname for a in node.names} & _HELPERS else set()
        for a in node.names:
            top = a.name.split(".")[0]
            self.alias[a.asname or top] = a.name if a.asname else top
            self.dotted(a.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if {a.asname or a.name for a in node.names} & _HELPERS:
            self.flags.add(REBIND)
        for a in node.names:
            full = f"{node.module}.{a.name}"
            self.dotted(str(node.module) if a.name == "*" else full)
            self.alias[a.asname or a.name] = full
            self.flags |= {"dynamic import"} if a.name == "*" else set()

    def visit_Name(self, node: ast.Name) -> None:
        if not self._is_own(node):
            self.dotted(self.name_of(node) or node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if flag := _FLAG_OF.get("." + node.attr):
            self.flags.add(flag)
        if (name := self.name_of(node)) and not self._is_own(node.value):
            self.dotted(name)
        if isinstance(node.ctx, ast.Store | ast.Del):
            root = node.value
            while isinstance(root, ast.Attribute | ast.Subscript):
                root = root.value
            if not self._is_own(root):
                self.flags.add(PATCH)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        """``getattr(x, "name")`` is ``x.name``; a computed name is fine (ports use it)."""
        func, args = node.func, node.args
        if (
            isinstance(func, ast.Name)
            and func.id in ("getattr", "hasattr")
            and len(args) > 1
        ):
            if isinstance(args[1], ast.Constant) and isinstance(args[1].value, str):
                self.flags |= {_FLAG_OF.get("." + args[1].value)} - {None}
                if not self._is_own(args[0]):
                    self.dotted(f"{self.name_of(args[0]) or '?'}.{args[1].value}")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        """Strings that name a flagged module or builtin (``"exec"``, ``"os"``), or /proc."""
        if isinstance(node.value, str | bytes):
            text = (
                str(node.value)[2:-1] if isinstance(node.value, bytes) else node.value
            )
            if len(text.strip()) > 1 and "*" not in text:
                self.dotted(text.strip())
            if re.search(r"/proc/|/dev/|/sys/", text):
                self.flags.add("file access")


def flags_for(code: dict[str, list[str]]) -> list[str]:
    """Names of constructs worth a human look (they can tamper with the kernel or the tests).

    Read from the parsed code, so ``import os as _o``, ``from os import system as s``,
    ``__import__``/``importlib``, ``exec``/``eval``/``compile``, ``getattr(builtins,
    ...)`` and decoders of hidden payloads (``base64``) are found under any alias.
    """
    found: set[str] = set()
    for sources in code.values():
        for src in sources:
            if (tree := _code_of(src)) is not None:
                found |= _Finder(tree).flags
    return sorted(found)
