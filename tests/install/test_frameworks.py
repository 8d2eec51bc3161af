"""course_utils.install.frameworks: the install plan for every kind of machine, with fakes."""

import pytest

from course_utils.install import frameworks as install
from course_utils.install.frameworks import Facts

SMI_CUDA13 = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.65.06              Driver Version: 580.65.06      CUDA Version: 13.0     |
|-----------------------------------------+------------------------+----------------------+
|   0  NVIDIA H200                    On  |   00000000:19:00.0 Off |                    0 |
"""
SMI_CUDA12 = """\
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
|   0  Tesla T4                       Off |   00000000:00:04.0 Off |                    0 |
"""


def args_of(p):
    return " ".join(p.torch or [])


# ---- the cases of the issue -------------------------------------------------------


def test_workstation_with_a_cuda13_driver_gets_pypi_torch_and_jax_cuda13():
    p = install.plan(Facts(system="Linux", driver_cuda=13), torch_version="2.13.0")
    assert p.torch == ["install", "torch==2.13.0"]  # PyPI's Linux wheel: CUDA 13
    assert p.jax_extra == "cuda13"
    assert p.jax_args("0.10.2") == ["install", "jax[cuda13]==0.10.2"]
    assert "CUDA 13" in p.summary and not p.warnings


def test_workstation_with_a_cuda12_driver_gets_both_on_cuda12():
    p = install.plan(Facts(system="Linux", driver_cuda=12), torch_version="2.13.0")
    assert p.torch[:2] == ["install", "torch==2.13.0"]
    assert p.torch[p.torch.index("--index-url") + 1] == install.CUDA12_INDEX
    assert install.CUDA12_INDEX.endswith("/cu126")
    assert p.jax_extra == "cuda12"
    assert p.jax_args(None) == ["install", "jax[cuda12]"]


def test_colab_gpu_keeps_its_torch_and_jax():
    colab = Facts(
        torch="2.11.0+cu128",
        torch_cuda="12.8",
        jax="0.7.2",
        jax_plugins=("cuda12",),
        driver_cuda=12,
        colab=True,
    )
    p = install.plan(colab)
    assert p.torch is None and p.jax_extra is None and p.nothing_to_do
    assert "Colab's torch 2.11.0+cu128" in p.summary
    assert "Colab's jax 0.7.2" in p.summary and "cuda12" in p.summary


def test_colab_gpu_without_a_jax_plugin_gets_the_one_of_torchs_cuda_major():
    colab = Facts(
        torch="2.11.0+cu128", torch_cuda="12.8", jax="0.7.2", driver_cuda=13, colab=True
    )
    p = install.plan(colab)
    assert p.torch is None
    # the driver could run CUDA 13, but torch loads CUDA 12 libraries: jax joins them
    assert p.jax_extra == "cuda12"
    assert p.jax_args(colab.jax) == ["install", "jax[cuda12]==0.7.2"]


def test_colab_tpu_keeps_torch_xla_and_jax_and_says_torch_stays_on_cpu():
    colab_tpu = Facts(
        torch="2.9.0+cpu",
        torch_xla=True,
        jax="0.7.2",
        jax_plugins=("tpu",),
        tpu=True,
        colab=True,
    )
    p = install.plan(colab_tpu)
    assert p.torch is None and p.jax_extra is None
    assert "torch-xla" in p.summary and "PyTorch stays on the CPU" in p.summary


def test_tpu_vm_gets_cpu_torch_and_jax_tpu():
    p = install.plan(Facts(system="Linux", tpu=True), torch_version="2.13.0")
    assert p.torch[:2] == ["install", "torch==2.13.0"]
    assert install.CPU_INDEX in p.torch
    assert p.jax_extra == "tpu"
    assert p.jax_args("0.10.2") == ["install", "jax[tpu]==0.10.2"]


def test_kaggle_gpu_keeps_its_torch_and_adds_the_matching_plugin():
    kaggle = Facts(
        torch="2.6.0+cu124", torch_cuda="12.4", jax="0.5.2", driver_cuda=12, kaggle=True
    )
    p = install.plan(kaggle)
    assert p.torch is None
    assert p.jax_extra == "cuda12"
    assert (
        "Kaggle's torch 2.6.0+cu124" in p.summary and "Kaggle's jax 0.5.2" in p.summary
    )


def test_cpu_linux_takes_the_cpu_build_and_jax_cpu():
    p = install.plan(Facts(system="Linux"), torch_version="2.13.0")
    assert p.torch[:2] == ["install", "torch==2.13.0"]
    assert install.CPU_INDEX in p.torch and "--extra-index-url" in p.torch
    assert p.jax_extra is None and p.jax_args("0.10.2") is None


@pytest.mark.parametrize("system", ["Darwin", "Windows"])
def test_macos_and_windows_use_pypi_and_jax_cpu(system):
    p = install.plan(Facts(system=system), torch_version="2.13.0")
    assert p.torch == ["install", "torch==2.13.0"]
    assert p.jax_extra is None


def test_keeps_an_installed_torch_everywhere():
    for driver in (None, 12, 13):
        for system in ("Linux", "Darwin", "Windows"):
            facts = Facts(
                system=system, torch="2.13.0", torch_cuda="13.0", driver_cuda=driver
            )
            assert install.plan(facts).torch is None


def test_installed_cuda_torch_elsewhere_gets_jax_on_its_cuda_major():
    facts = Facts(torch="2.13.0", torch_cuda="13.0", jax="0.10.2", driver_cuda=13)
    assert install.plan(facts).jax_extra == "cuda13"
    facts = Facts(torch="2.13.0+cu126", torch_cuda="12.6", jax="0.10.2", driver_cuda=13)
    assert install.plan(facts).jax_extra == "cuda12"


def test_a_set_up_gpu_environment_needs_nothing():
    facts = Facts(
        torch="2.13.0",
        torch_cuda="13.0",
        jax="0.10.2",
        jax_plugins=("cuda13",),
        driver_cuda=13,
    )
    p = install.plan(facts)
    assert p.nothing_to_do, p


def test_mismatches_are_warned_about_with_the_fix():
    cpu_torch_on_gpu = install.plan(Facts(torch="2.13.0+cpu", driver_cuda=13))
    assert (
        "CPU build" in cpu_torch_on_gpu.warnings[0]
        and "make install" in cpu_torch_on_gpu.warnings[0]
    )
    assert cpu_torch_on_gpu.jax_extra == "cuda13"  # jax still gets the GPU

    too_new = install.plan(Facts(torch="2.13.0", torch_cuda="13.0", driver_cuda=12))
    assert "driver to >= 580" in too_new.warnings[0]
    assert too_new.jax_extra == "cuda12"  # the driver cannot run CUDA 13

    two_cudas = install.plan(
        Facts(
            torch="2.13.0",
            torch_cuda="13.0",
            jax="0.10.2",
            jax_plugins=("cuda12",),
            driver_cuda=13,
        )
    )
    assert "jax[cuda13]" in two_cudas.warnings[0] and not two_cudas.nothing_to_do


def test_an_old_driver_gets_cpu_builds_and_the_fix():
    p = install.plan(Facts(driver_cuda=11), torch_version="2.13.0")
    assert install.CPU_INDEX in p.torch and p.jax_extra is None
    assert ">= 525" in p.warnings[0]


def test_latest_torch_is_unpinned():
    assert install.plan(Facts(driver_cuda=13), torch_version="latest").torch == [
        "install",
        "torch",
    ]


# ---- reading the facts ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "driver", "major"),
    [
        (SMI_CUDA13, "580.65.06", 13),
        (SMI_CUDA12, "550.54.15", 12),
        (
            "580.82.07\n",
            "580.82.07",
            13,
        ),  # --query-gpu=driver_version --format=csv,noheader
        ("535.104.05\n535.104.05\n", "535.104.05", 12),  # two GPUs
        ("470.82.01\n", "470.82.01", 11),
        ("No devices were found\n", None, None),
    ],
)
def test_parse_nvidia_smi(text, driver, major):
    assert install.parse_nvidia_smi(text) == (driver, major)


def test_header_cuda_version_wins_over_the_driver_table():
    # a forward-compatibility package can make a 550 driver run CUDA 13
    assert install.parse_nvidia_smi(SMI_CUDA12.replace("12.4", "13.0"))[1] == 13


def test_driver_cuda_from_nvidia_smi(monkeypatch):
    answers = {("-L",): "GPU 0: NVIDIA H200 (UUID: GPU-1234)\n", (): SMI_CUDA13}
    monkeypatch.setattr(install, "_smi", lambda *a: answers.get(a))
    assert install.nvidia_driver_cuda() == 13
    # no header: the query of the driver version decides
    answers[()] = None
    answers[("--query-gpu=driver_version", "--format=csv,noheader")] = "550.54.15\n"
    assert install.nvidia_driver_cuda() == 12
    answers[("-L",)] = None
    assert install.nvidia_driver_cuda() is None


def test_nvidia_smi_missing_means_no_gpu(monkeypatch):
    monkeypatch.setattr(install.shutil, "which", lambda name: None)
    assert install.nvidia_gpu_present() is False
    assert install.nvidia_driver_cuda() is None


def test_nvidia_smi_listing_a_gpu(monkeypatch):
    class Done:
        returncode = 0
        stdout = "GPU 0: NVIDIA H200 (UUID: GPU-1234)"

    monkeypatch.setattr(install.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(install.subprocess, "run", lambda *a, **k: Done())
    assert install.nvidia_gpu_present() is True
    Done.returncode = 9
    assert install.nvidia_gpu_present() is False


def test_tpu_found_on_the_pci_bus(tmp_path):
    def device(slot, vendor, device):
        d = tmp_path / "sys/bus/pci/devices" / slot
        d.mkdir(parents=True)
        (d / "vendor").write_text(vendor + "\n")
        (d / "device").write_text(device + "\n")

    device("0000:00:04.0", "0x1ae0", "0x0042")  # Google's virtual NIC: not a TPU
    device("0000:00:05.0", "0x10de", "0x2335")  # an NVIDIA GPU
    assert install.tpu_present(env={}, root=str(tmp_path)) is False
    device("0000:00:06.0", "0x1ae0", "0x0063")  # TPU v5e
    assert install.tpu_present(env={}, root=str(tmp_path)) is True


def test_tpu_runtime_variables(tmp_path):
    assert install.tpu_present(
        env={"TPU_ACCELERATOR_TYPE": "v5litepod-1"}, root=str(tmp_path)
    )
    assert not install.tpu_present(env={}, root=str(tmp_path))


@pytest.mark.parametrize(
    ("version", "version_py", "cuda"),
    [
        ("2.13.0", "__version__ = '2.13.0'\ncuda: Optional[str] = '13.0'\n", "13.0"),
        ("2.13.0+cpu", "cuda: Optional[str] = None\n", None),
        ("2.11.0+cu128", None, "12.8"),
        ("2.13.0+cu130", None, "13.0"),
        ("2.9.0+cpu", None, None),
    ],
)
def test_torch_cuda_without_importing_torch(version, version_py, cuda):
    assert install.torch_cuda_of(version, version_py) == cuda


def fake_machine(monkeypatch, *, dists, smi=None, torch_cuda=None, system="Linux"):
    monkeypatch.setattr(install, "installed_version", lambda d: dists.get(d))
    monkeypatch.setattr(
        install, "_torch_facts", lambda: (dists.get("torch"), torch_cuda)
    )
    monkeypatch.setattr(
        install,
        "_smi",
        lambda *a: {("-L",): "GPU 0: X", (): smi}.get(a) if smi else None,
    )
    monkeypatch.setattr(install, "tpu_present", lambda env: "TPU_NAME" in env)
    monkeypatch.setattr(install.platform, "system", lambda: system)


def test_detect_colab_gpu(monkeypatch):
    dists = {"torch": "2.11.0+cu128", "jax": "0.7.2", "jax-cuda12-plugin": "0.7.2"}
    fake_machine(monkeypatch, dists=dists, smi=SMI_CUDA12, torch_cuda="12.8")
    facts = install.detect(env={"COLAB_RELEASE_TAG": "release-colab_20260819"})
    assert facts == Facts(
        system="Linux",
        torch="2.11.0+cu128",
        torch_cuda="12.8",
        jax="0.7.2",
        jax_plugins=("cuda12",),
        driver_cuda=12,
        colab=True,
    )
    assert install.plan(facts).nothing_to_do


def test_detect_colab_tpu_and_kaggle(monkeypatch):
    dists = {
        "torch": "2.9.0+cpu",
        "torch-xla": "2.9.0",
        "jax": "0.7.2",
        "libtpu": "0.0.21.1",
    }
    fake_machine(monkeypatch, dists=dists)
    facts = install.detect(env={"COLAB_GPU": "0", "TPU_NAME": "local"})
    assert (
        facts.tpu and facts.torch_xla and facts.colab and facts.jax_plugins == ("tpu",)
    )
    assert facts.driver_cuda is None and not facts.kaggle

    fake_machine(
        monkeypatch, dists={"torch": "2.6.0+cu124"}, smi=SMI_CUDA12, torch_cuda="12.4"
    )
    facts = install.detect(env={"KAGGLE_KERNEL_RUN_TYPE": "Interactive"})
    assert (
        facts.kaggle
        and not facts.colab
        and facts.driver_cuda == 12
        and facts.jax is None
    )


def test_detect_skips_nvidia_smi_off_linux(monkeypatch):
    fake_machine(monkeypatch, dists={}, smi=SMI_CUDA13, system="Windows")
    assert install.detect(env={}).driver_cuda is None


def test_detect_on_this_machine_is_consistent():
    facts = install.detect()
    from importlib.metadata import version

    assert facts.torch == version("torch") and facts.jax == version("jax")
    assert install.plan(facts).summary.startswith("install plan for ")


# ---- running it -------------------------------------------------------------------


def test_main_runs_the_jax_step_with_the_installed_jax_version(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(
        install,
        "detect",
        lambda: Facts(torch="2.13.0", torch_cuda="13.0", jax="0.10.2", driver_cuda=13),
    )
    monkeypatch.setattr(
        install, "installed_version", lambda d: {"jax": "0.10.2"}.get(d)
    )
    monkeypatch.setattr(install.subprocess, "call", lambda cmd: calls.append(cmd) or 0)
    assert install.main(["torch"]) == 0 and calls == []  # torch is kept
    assert install.main(["jax", "-c", "constraints/known-good.txt"]) == 0
    assert calls[-1][1:] == [
        "-m",
        "pip",
        "install",
        "jax[cuda13]==0.10.2",
        "-c",
        "constraints/known-good.txt",
    ]
    out = capsys.readouterr().out
    assert "install: install plan for NVIDIA GPU (driver runs CUDA 13)" in out


def test_main_plan_installs_nothing(monkeypatch, capsys):
    monkeypatch.setattr(install, "detect", lambda: Facts(system="Linux"))
    monkeypatch.setattr(
        install.subprocess, "call", lambda cmd: pytest.fail(f"ran {cmd}")
    )
    assert install.main(["plan"]) == 0
    assert capsys.readouterr().out.count("\n") == 1  # one line


def test_main_stops_when_torch_fails(monkeypatch):
    calls = []
    monkeypatch.setattr(
        install, "detect", lambda: Facts(system="Linux", driver_cuda=13)
    )
    monkeypatch.setattr(install.subprocess, "call", lambda cmd: calls.append(cmd) or 1)
    assert install.main([]) == 1 and len(calls) == 1


def test_this_machine_has_a_cpu_torch():
    import torch

    if not torch.cuda.is_available() and not install.nvidia_gpu_present():
        assert torch.version.cuda is None, (
            "a CUDA build of torch was installed on a CPU-only machine"
        )
