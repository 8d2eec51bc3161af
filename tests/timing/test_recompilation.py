"""course_utils.timing.recompilation: no_recompile: names what compiled, restores the flags, keeps the logs quiet."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from course_utils import timing


def test_no_recompile_names_the_jax_function():
    @jax.jit
    def scale_rows(x):
        return x * 2

    scale_rows(jnp.ones(3)).block_until_ready()
    small, big = jnp.ones(3), jnp.ones(5)
    with timing.no_recompile():
        scale_rows(small).block_until_ready()  # cached: fine
    with pytest.raises(timing.RecompilationError, match="scale_rows"):
        with timing.no_recompile("the loop"):
            scale_rows(big).block_until_ready()
    assert not jax.config.jax_log_compiles  # flags restored


def test_no_recompile_catches_torch_recompiles():
    import torch._dynamo

    # Dynamo guards and recompiles, whatever the backend: "eager" compiles nothing.
    f = torch.compile(lambda x: x * 3, dynamic=False, backend="eager")
    f(torch.ones(3))
    with timing.no_recompile():
        f(torch.ones(3))
    with pytest.raises(timing.RecompilationError, match="torch.compile recompiled"):
        with timing.no_recompile():
            f(torch.ones(4))
    assert torch._dynamo.config.error_on_recompile is False


def test_no_recompile_keeps_jax_compile_logs_out_of_the_output(caplog):
    f = jax.jit(lambda x: x * 2)
    caplog.set_level("WARNING")
    small, large = jnp.ones(3), jnp.ones(5)
    f(small).block_until_ready()
    caplog.clear()
    with pytest.raises(timing.RecompilationError, match="compiled 1 time"):
        with timing.no_recompile("the loop"):
            f(large).block_until_ready()
    shown = caplog.text  # what reached the root logger, i.e. the reader's output
    assert "Finished tracing" not in shown
    assert "Finished XLA compilation" not in shown


@pytest.mark.parametrize(
    "logger", ["jax._src.interpreters.partial_eval", "jax._src.pjit"]
)
def test_the_cache_miss_explanation_is_quoted_from_either_logger(logger):
    # jax 0.10 explains a cache miss from partial_eval, jax 0.7 from pjit.
    import logging

    f = jax.jit(lambda x: x * 2)
    f(jnp.ones(3)).block_until_ready()
    with pytest.raises(timing.RecompilationError) as err:
        with timing.no_recompile("the loop"):
            logging.getLogger(logger).warning(f"TRACING CACHE MISS logged by {logger}")
            f(jnp.ones(5)).block_until_ready()
    assert f"TRACING CACHE MISS logged by {logger}" in str(err.value)
