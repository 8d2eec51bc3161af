"""distributed.excerpts: the marked regions the lesson shows, and a cell's function source."""

import pytest

from course_utils.distributed import excerpts


def test_excerpt_reads_a_marked_region_without_importing():
    code = excerpts.excerpt("course_utils.distributed.torch_ddp", "average_gradients")
    assert code.startswith("def average_gradients(")
    assert "dist.all_reduce" in code and "# [" not in code
    assert code._repr_markdown_().startswith("```python\n")
    with pytest.raises(ValueError, match="no region"):
        excerpts.excerpt("course_utils.distributed.torch_ddp", "nope")
    with pytest.raises(ValueError, match="no Python file"):
        excerpts.excerpt("course_utils.distributed.no_such_module", "x")


def test_every_region_the_lesson_shows_exists():
    for module, region in [
        ("course_utils.distributed.torch_ddp", "ddp"),
        ("course_utils.distributed.torch_ddp", "by_hand"),
        ("course_utils.distributed.torch_ddp", "ddp_sum"),
        ("course_utils.distributed.torch_tp", "tp"),
        ("course_utils.distributed.torch_fsdp", "fsdp"),
        ("course_utils.distributed.jax_multiprocess", "initialize"),
        ("course_utils.distributed.jax_multiprocess", "global_batch"),
    ]:
        assert excerpts.excerpt(module, region).strip()


def test_function_source_of_a_function_and_errors():
    def inner(x):
        return x + 1

    assert excerpts.function_source(inner).startswith("def inner(x):")
    with pytest.raises(TypeError, match="function"):
        excerpts.function_source(len)
    namespace = {}
    exec("def made(x):\n    return x\n", namespace)  # noqa: S102 - no source file on purpose
    with pytest.raises(ValueError, match="cannot be found"):
        excerpts.function_source(namespace["made"])
