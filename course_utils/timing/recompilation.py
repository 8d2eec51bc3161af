"""A block that must not compile: :func:`no_recompile`.

After a warm-up, anything that compiles inside the block raises
:class:`RecompilationError` naming the function and, for JAX, the reason of the
cache miss; the frameworks' compile logs stay out of the reader's output.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
from collections.abc import Iterator
from typing import Any


class RecompilationError(RuntimeError):
    """A jitted or compiled function compiled again where it should not have."""


class _CompileLogHandler(logging.Handler):
    _pattern = re.compile(r"Compiling (\S+)")

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.names: list[str] = []
        self.reasons: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if "TRACING CACHE MISS" in msg:
            self.reasons.append(msg.strip())
            return
        match = self._pattern.match(msg)
        if match:
            self.names.append(match.group(1))


# dispatch logs "Finished tracing/compilation ..." at WARNING under jax_log_compiles;
# the cache-miss explanation comes from partial_eval (jax 0.10) or pjit (jax 0.7).
_JAX_LOGGERS = (
    "jax._src.interpreters.pxla",
    "jax._src.interpreters.partial_eval",
    "jax._src.dispatch",
    "jax._src.pjit",
)


@contextlib.contextmanager
def no_recompile(what: str = "this block") -> Iterator[None]:
    """Raise :class:`RecompilationError` if anything compiles inside the block.

    Enter it after a warm-up call. For ``jax.jit`` every compilation inside
    the block is collected (with JAX's explanation of the cache miss) and
    reported on exit, naming the function. For ``torch.compile`` Dynamo's
    ``error_on_recompile`` is switched on, so a recompile raises at once with
    Dynamo's reason; it is re-raised as :class:`RecompilationError`.
    """
    handler = None
    jax = sys.modules.get("jax")
    saved_jax: dict[str, Any] = {}
    loggers: list[tuple[logging.Logger, int, bool]] = []
    if jax is not None:
        handler = _CompileLogHandler()
        for flag in ("jax_log_compiles", "jax_explain_cache_misses"):
            saved_jax[flag] = getattr(jax.config, flag)
            jax.config.update(flag, True)
        for name in _JAX_LOGGERS:
            lg = logging.getLogger(name)
            loggers.append((lg, lg.level, lg.propagate))
            lg.addHandler(handler)
            lg.setLevel(logging.DEBUG)
            lg.propagate = False  # keep the compile logs out of the reader's output
    dynamo_config = None
    saved_torch = None
    if "torch" in sys.modules:
        import torch._dynamo

        dynamo_config = torch._dynamo.config
        saved_torch = dynamo_config.error_on_recompile
        dynamo_config.error_on_recompile = True
    try:
        try:
            yield
        except Exception as err:
            if type(err).__name__ == "RecompileError":
                raise RecompilationError(
                    f"torch.compile recompiled inside {what}: {err}"
                ) from err
            raise
    finally:
        if dynamo_config is not None:
            dynamo_config.error_on_recompile = saved_torch
        for lg, level, propagate in loggers:
            lg.removeHandler(handler)
            lg.setLevel(level)
            lg.propagate = propagate
        for flag, value in saved_jax.items():
            jax.config.update(flag, value)
    if handler is not None and handler.names:
        names = ", ".join(dict.fromkeys(handler.names))
        why = ("\n" + "\n".join(handler.reasons[:3])) if handler.reasons else ""
        raise RecompilationError(
            f"jax compiled {len(handler.names)} time(s) inside {what}: {names}{why}"
        )
