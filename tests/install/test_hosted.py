"""course_utils.install.hosted: the install on hosted runtimes, with fakes of their `pip list` output."""

import subprocess
import sys
from pathlib import Path

import pytest

from course_utils.install import hosted

ROOT = Path(__file__).resolve().parents[2]
RUNTIMES = ROOT / "tests" / "fixtures" / "runtimes"
REQUIREMENTS = [
    "jax>=0.7.2",
    "flax>=0.11.2",
    "torch>=2.6",
    "numpy>=1.26",
    "jupyterlab>=4",
    "ipykernel>=6",
    "ruff>=0.6; extra == 'dev'",
]


def _freeze(name: str) -> str:
    return (RUNTIMES / name).read_text()


class FakePip:
    """Records pip calls instead of running them."""

    def __init__(self):
        self.calls = []

    def __call__(self, cmd, **kwargs):
        self.calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, stdout="", stderr="")


def _pins_of(cmd: list[str]) -> list[str]:
    return Path(cmd[cmd.index("--constraint") + 1]).read_text().split()


@pytest.mark.parametrize(
    "image, kept",
    [
        (
            "colab-gpu.txt",
            {
                "torch==2.11.0+cu128",
                "jax==0.7.2",
                "jax-cuda12-plugin==0.7.2",
                "jax-cuda12-pjrt==0.7.2",
                "nvidia-cudnn-cu12==9.19.0.56",
            },
        ),
        (
            "colab-tpu.txt",
            {
                "torch==2.9.0+cpu",
                "torch-xla==2.9.0",
                "libtpu==0.0.21.1",
                "jax==0.7.2",
                "jaxlib==0.7.2",
            },
        ),
    ],
)
def test_colab_images_install_around_their_own_frameworks(image, kept, capsys):
    pip = FakePip()
    cmd = hosted.install_dependencies(
        freeze=_freeze(image),
        requirements=REQUIREMENTS,
        run=pip,
        environ={"COLAB_RELEASE_TAG": "x"},
    )
    assert pip.calls == [cmd]
    assert cmd[1:4] == ["-m", "pip", "install"]
    assert "jax>=0.7.2" in cmd and "flax>=0.11.2" in cmd
    assert not any("ruff" in c for c in cmd)  # dev extras are not for students
    # the runtime's own Jupyter stays: no jupyterlab, no other ipykernel
    assert not any(c.startswith(("jupyterlab", "ipykernel")) for c in cmd)
    pins = set(_pins_of(cmd))
    assert kept <= pins
    assert not any(
        p.startswith(("flax", "optax", "numpy")) for p in pins
    )  # may upgrade
    assert "on colab, keeping torch" in capsys.readouterr().out


def test_an_old_runtime_gets_one_sentence_per_framework_and_no_pip_run():
    pip = FakePip()
    with pytest.raises(hosted.UnsupportedRuntime) as err:
        hosted.install_dependencies(
            freeze=_freeze("old-gpu-image.txt"),
            requirements=REQUIREMENTS,
            run=pip,
            environ={"KAGGLE_KERNEL_RUN_TYPE": "Interactive"},
        )
    assert pip.calls == []
    lines = str(err.value.code).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(
        "This runtime has jax 0.4.30, but the course needs jax>=0.7.2"
    )
    assert 'pip install -U "jax[cuda12]>=0.7.2"' in lines[0]
    assert "Run > Restart" in lines[0]  # Kaggle's menu
    assert lines[1].startswith("This runtime has torch 2.3.1+cu121")
    # a SystemExit: a notebook shows the message without a traceback
    assert isinstance(err.value, SystemExit)


def test_colab_torch_too_old_points_at_the_runtime_version_menu():
    found = hosted.problems({"torch": "2.5.1+cu121"}, {"torch": "2.6"}, "colab")
    assert found == [
        "This runtime has torch 2.5.1+cu121, but the course needs torch>=2.6: choose a "
        "newer runtime version (Colab: Runtime > Change runtime type)."
    ]


def test_versions_compare_by_release_not_by_text():
    assert hosted._release("2.11.0+cu128") == (2, 11, 0)
    assert hosted._release("0.10.2") > hosted._release("0.7.2")
    assert hosted._release("2.13.0rc1") == (2, 13, 0)
    assert hosted.problems({"jax": "0.10.2"}, {"jax": "0.7.2"}, "other") == []


def test_runtime_detection():
    assert hosted.runtime_name({"COLAB_RELEASE_TAG": "r"}) == "colab"
    assert hosted.runtime_name({"KAGGLE_KERNEL_RUN_TYPE": "Batch"}) == "kaggle"
    assert hosted.runtime_name({}) == "other"


def test_floors_read_from_requirements():
    assert hosted.floors(REQUIREMENTS) == {
        "jax": "0.7.2",
        "flax": "0.11.2",
        "torch": "2.6",
        "numpy": "1.26",
        "jupyterlab": "4",
        "ipykernel": "6",
    }


def test_hosted_imports_only_the_standard_library():
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; import course_utils.install.hosted; "
            "print(sorted(m for m in ('jax', 'torch', 'numpy') if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "[]"


def test_a_failed_install_shows_pips_own_words():
    def failing(cmd, **kwargs):
        if "list" in cmd:
            return subprocess.CompletedProcess(cmd, 0, stdout=_freeze("colab-gpu.txt"))
        return subprocess.CompletedProcess(
            cmd, 1, stdout="", stderr="ERROR: no flax 9\n"
        )

    with pytest.raises(RuntimeError, match="no flax 9"):
        hosted.install_dependencies(requirements=REQUIREMENTS, run=failing, environ={})
