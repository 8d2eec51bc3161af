from course_utils import install


def test_keeps_an_installed_torch_everywhere():
    for gpu in (True, False):
        for system in ("Linux", "Darwin", "Windows"):
            assert install.plan(torch_installed=True, gpu=gpu, system=system) is None


def test_cpu_linux_takes_the_cpu_build():
    args = install.plan(torch_installed=False, gpu=False, system="Linux")
    assert args[:2] == ["install", f"torch=={install.TORCH_VERSION}"]
    assert install.CPU_INDEX in args and "--extra-index-url" in args


def test_gpu_takes_the_default_cuda_build():
    args = install.plan(torch_installed=False, gpu=True, system="Linux")
    assert args == ["install", f"torch=={install.TORCH_VERSION}"]


def test_macos_uses_pypi():
    assert install.CPU_INDEX not in install.plan(torch_installed=False, gpu=False, system="Darwin")


def test_nvidia_smi_missing_means_no_gpu(monkeypatch):
    monkeypatch.setattr(install.shutil, "which", lambda name: None)
    assert install.nvidia_gpu_present() is False


def test_nvidia_smi_listing_a_gpu(monkeypatch):
    class Done:
        returncode = 0
        stdout = "GPU 0: NVIDIA H200 (UUID: GPU-1234)"

    monkeypatch.setattr(install.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(install.subprocess, "run", lambda *a, **k: Done())
    assert install.nvidia_gpu_present() is True
    Done.returncode = 9
    assert install.nvidia_gpu_present() is False


def test_this_machine_has_a_cpu_torch():
    import torch

    if not torch.cuda.is_available() and not install.nvidia_gpu_present():
        assert torch.version.cuda is None, "a CUDA build of torch was installed on a CPU-only machine"
