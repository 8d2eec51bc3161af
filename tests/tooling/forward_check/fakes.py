"""Small fake wheels for the forward check's tests: a few modules each, no network."""

from __future__ import annotations

import textwrap
import zipfile
from pathlib import Path


def make_wheel(folder: Path, project: str, version: str, files: dict[str, str]) -> Path:
    """``folder/project-version-py3-none-any.whl`` holding ``files`` (path -> source)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{project.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, source in files.items():
            archive.writestr(name, textwrap.dedent(source))
        archive.writestr(
            f"{project.replace('-', '_')}-{version}.dist-info/METADATA",
            f"Name: {project}\nVersion: {version}\n",
        )
    return path


# A jax-like package: a _deprecations table (an entry served and one removed, the
# served name deleted after the table is built, as jax does), a re-export, a module
# that spreads another's table in, and an option.
JAXLIKE = {
    "jaxlike/__init__.py": """
        from jaxlike import sharding as sharding
        from jaxlike._src.api import jit as jit
    """,
    "jaxlike/_src/__init__.py": "",
    "jaxlike/_src/api.py": """
        def jit(f, *, donate=None):
            return f
    """,
    "jaxlike/_src/impl.py": """
        class OldSharding:
            pass

        class NewSharding:
            pass

        def make_sharding(device):
            return NewSharding()
    """,
    "jaxlike/_src/config.py": """
        def bool_state(name, default, help=""):
            return name

        use_new_route = bool_state(name="jaxlike_use_new_route", default=True)
    """,
    "jaxlike/sharding.py": """
        from jaxlike._src.impl import NewSharding as NewSharding
        from jaxlike._src.impl import make_sharding as make_sharding
        from jaxlike._src.impl import OldSharding as _deprecated_OldSharding

        _deprecations = {
            "OldSharding": ("jaxlike.sharding.OldSharding is deprecated.", _deprecated_OldSharding),
            "gone": ("jaxlike.sharding.gone was removed.", None),
        }

        import typing as _typing
        if _typing.TYPE_CHECKING:
            OldSharding = _deprecated_OldSharding
        else:
            from jaxlike._src.deprecations import deprecation_getattr as _deprecation_getattr
            __getattr__ = _deprecation_getattr(__name__, _deprecations)
        del _deprecated_OldSharding
    """,
    "jaxlike/kernels/__init__.py": """
        from jaxlike.kernels.core import call as call
        import jaxlike.kernels.core as _core
        _deprecations = {
            **_core._deprecations,
            "dot": ("kernels.dot is gone.", None),
        }
        del _core
        from jaxlike._src.deprecations import deprecation_getattr as _deprecation_getattr
        __getattr__ = _deprecation_getattr(__name__, _deprecations)
    """,
    "jaxlike/kernels/core.py": """
        def call(f):
            return f

        def GridSpec(*args):
            return args

        _deprecations = {"GridSpec": ("GridSpec is deprecated.", GridSpec)}
    """,
}
