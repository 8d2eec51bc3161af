"""Fixtures shared by test modules in more than one folder.

Nothing here imports a framework when pytest loads it: the fixtures import
``tests.blocks`` (JAX, Flax and PyTorch) when a test asks for them. The
controller of ``pytest -n 2`` loads this file too and runs no test.
"""

import sys

import numpy as np
import pytest


@pytest.fixture(scope="module")
def block_pair():
    """``(TorchBlock, NNXBlock)`` built from ``tests.blocks.CFG`` with the same weights."""
    from course_utils import convert
    from tests.blocks import CFG

    return convert.make_pair(CFG, seed=0)


@pytest.fixture(scope="module")
def x_block():
    """A batch ``(4, 6, d_model)`` of float32 inputs."""
    from tests.blocks import CFG

    rng = np.random.default_rng(0)
    return rng.standard_normal((4, 6, CFG.d_model)).astype(np.float32)


@pytest.fixture
def python_recursion_limit():
    """Python's default recursion limit for the test: another test in the same worker,
    or a library it imported, may have raised it, and then nothing is too deep."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(before)


def pytest_collection_modifyitems(items):
    # A test that reads the generated class graded end to end (tests/grading/conftest.py's
    # graded_class: one `course grade` run over a whole class) is an integration test.
    for item in items:
        if "graded_class" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
