import pytest

from course_utils.tooling.execution.kernel_start import retrying


def test_a_kernel_that_dies_once_is_started_again():
    calls = []

    def start(name, stderr):
        calls.append(name)
        if len(calls) == 1:
            stderr.write(b"zmq: address in use\n")
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "km", "kc"

    assert retrying(start)("python3", stderr=None) == ("km", "kc")
    assert calls == ["python3", "python3"]


def test_a_kernel_that_always_dies_shows_its_stderr():
    def start(stderr):
        stderr.write(b"Traceback: ImportError: no module named ipykernel\n")
        raise RuntimeError("Kernel died before replying to kernel_info")

    with pytest.raises(RuntimeError) as caught:
        retrying(start, tries=2)()
    assert "Kernel died" in str(caught.value)
    assert "2 starts" in str(caught.value)
    assert "no module named ipykernel" in str(caught.value)


def test_other_errors_are_not_retried():
    calls = []

    def start(stderr):
        calls.append(1)
        raise ValueError("no such kernel")

    with pytest.raises(ValueError):
        retrying(start)()
    assert calls == [1]
