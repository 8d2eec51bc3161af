"""Deprecations from the frameworks are errors in the tests and in executed notebooks."""

from __future__ import annotations

import warnings

# Warnings attributed to these modules (the frameworks themselves, or notebook
# code that called a deprecated framework API) fail the run.
MODULES = r"(jax|jaxlib|flax|optax|orbax|torch|course_utils|__main__)(\.|$)"
CATEGORIES = (DeprecationWarning, FutureWarning)

# Warnings a framework raises about *its own* internal calls, which no course code
# can avoid: (message regex, module regex, why). Keep this list short and explained.
KNOWN_INTERNAL = (
    (
        r"`torch\.jit\.script_method` is deprecated",
        r"torch\.jit\._script",
        "torch.compile imports torch.utils.mkldnn, which still calls script_method (torch 2.13)",
    ),
    (
        r"`torch\.jit\.script` is deprecated",
        r"torch\.jit\._script",
        "the first torch.func.jvp/jacfwd/hessian imports torch._decomp.decompositions_for_jvp, "
        "which still calls torch.jit.script (torch 2.13)",
    ),
)


def install() -> None:
    """Turn framework deprecation and future warnings into errors in this process."""
    for category in CATEGORIES:
        warnings.filterwarnings("error", category=category, module=MODULES)
    for message, module, _why in KNOWN_INTERNAL:
        warnings.filterwarnings("ignore", message=message, module=module)


STARTUP_SCRIPT = (
    "# Written by course_utils.strict: framework deprecations fail the notebook.\n"
    "import course_utils.strict\n"
    "course_utils.strict.install()\n"
)


def ipython_dir(root: str) -> str:
    """Create an IPython directory whose startup script installs the filters.

    Kernels started with ``IPYTHONDIR`` pointing here (papermill, nbval, the
    grader) run :func:`install` before the first cell.
    """
    import os

    startup = os.path.join(root, "profile_default", "startup")
    os.makedirs(startup, exist_ok=True)
    path = os.path.join(startup, "00-course-strict-warnings.py")
    current = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            current = fh.read()
    if current != STARTUP_SCRIPT:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(STARTUP_SCRIPT)
    return root
