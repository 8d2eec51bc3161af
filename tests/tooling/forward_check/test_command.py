"""forward: the course against the newest releases, read, not installed.

The unit tests build small fake wheels and stand in for pip and PyPI; the last test
reads the real newest releases and needs the network (it is slow, and skips without it).
"""

from __future__ import annotations

import gc
import io
import json
import random
import re
import subprocess
import textwrap
import zipfile

import pytest

from course_utils import cli
from course_utils.tooling.forward_check import command as forward
from course_utils.tooling.forward_check.records import Release
from tests.tooling.forward_check.fakes import JAXLIKE, make_wheel

LESSON = """
import jaxlike
from jaxlike import kernels as kl

s = jaxlike.sharding.OldSharding()
y = kl.dot(1, 2)
z = jaxlike.sharding.make_sharding(0)
w = jaxlike.sharding.vanished
make = getattr(jaxlike.sharding, "make_sharding", None)
if make is None:
    old = jaxlike.sharding.OldSharding()
probe = getattr(jaxlike, "vanished", None)
"""


@pytest.fixture
def releases(tmp_path):
    """The newest jaxlike (2.0) and the installed one (1.0, which still has ``vanished``)."""
    newest = Release.from_wheel(make_wheel(tmp_path / "new", "jaxlike", "2.0", JAXLIKE))
    older = dict(JAXLIKE)
    for module in ("jaxlike/sharding.py", "jaxlike/__init__.py"):
        older[module] = textwrap.dedent(JAXLIKE[module]) + "vanished = 1\n"
    installed = Release.from_wheel(
        make_wheel(tmp_path / "old", "jaxlike", "1.0", older)
    )
    return newest, {"jaxlike": installed}


def _check(tmp_path, releases, source, name="notebooks/01_lesson.py"):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    newest, installed = releases
    return forward.run([path], tmp_path, [newest], installed)


def test_each_deprecated_or_removed_use_is_a_hit_naming_file_and_line(
    tmp_path, releases
):
    hits, facts = _check(tmp_path, releases, LESSON)
    lines = [h.line() for h in hits]
    assert len(lines) == 3, "\n".join(lines)
    assert lines[0].startswith("notebooks/01_lesson.py:5: jaxlike.sharding.OldSharding")
    assert "deprecated in jaxlike 2.0" in lines[0]
    assert '"jaxlike.sharding.OldSharding is deprecated."' in lines[0]
    assert lines[1].startswith("notebooks/01_lesson.py:6: jaxlike.kernels.dot")
    assert "removed in jaxlike 2.0" in lines[1] and "kernels.dot is gone." in lines[1]
    # gone without a record: the installed release has it, the newest does not
    assert lines[2].startswith("notebooks/01_lesson.py:8: jaxlike.sharding.vanished")
    assert "present in jaxlike 1.0" in lines[2]
    assert facts["files"] == 1 and facts["uses"] > 5


def test_the_branch_for_older_releases_and_a_probe_are_no_hits(tmp_path, releases):
    hits, _ = _check(
        tmp_path,
        releases,
        """
        import jaxlike
        make = getattr(jaxlike.sharding, "make_sharding", None)
        if make is None:
            old = jaxlike.sharding.OldSharding()
        probe = getattr(jaxlike, "vanished", None)
        try:
            v = jaxlike.sharding.vanished
        except AttributeError:
            v = None
        """,
    )
    assert hits == []


def test_a_deprecated_name_is_a_hit_even_when_probed(tmp_path, releases):
    hits, _ = _check(
        tmp_path,
        releases,
        """
        import jaxlike
        old = getattr(jaxlike.sharding, "OldSharding", None)
        """,
    )
    assert [h.record.status for h in hits] == ["deprecated"]


def test_the_check_runs_without_the_cycle_collector_and_restores_it(
    tmp_path, releases, monkeypatch
):
    inside = []
    check = forward.check
    monkeypatch.setattr(
        forward, "check", lambda *a: inside.append(gc.isenabled()) or check(*a)
    )
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            if enabled:
                gc.enable()
            else:
                gc.disable()
            hits, _ = _check(tmp_path, releases, LESSON)
            assert len(hits) == 3 and gc.isenabled() == enabled
    finally:
        if was:
            gc.enable()
    assert inside == [False, False]


def test_the_report_lists_hits_and_ends_with_the_verdict(tmp_path, releases):
    hits, facts = _check(tmp_path, releases, LESSON)
    newest, installed = releases
    text = forward.report(hits, facts, [newest], installed, ["a note"])
    lines = text.splitlines()
    assert lines[0].startswith("forward check: jaxlike 2.0 (wheels for Python 3.13")
    assert "against the installed jaxlike 1.0" in lines[0] and lines[1] == "a note"
    assert lines[-1] == "3 use(s) of deprecated or removed names in 1 file(s)"
    clean = forward.report([], facts, [newest], installed, [])
    assert clean.splitlines()[-1] == "no use of a deprecated or removed name"


def test_a_keyword_and_a_construction_are_matched_only_where_used(tmp_path):
    newest = Release.from_wheel(
        make_wheel(
            tmp_path / "new",
            "pkg",
            "2.0",
            {
                "pkg/__init__.py": """
                    import warnings

                    def fork(key, split=None):
                        if split is not None:
                            warnings.warn("split=", DeprecationWarning)

                    class Function:
                        def __init__(self):
                            warnings.warn("do not build", DeprecationWarning)
                """
            },
        )
    )
    path = tmp_path / "lesson.py"
    path.write_text(
        "import pkg\n"
        "pkg.fork(1)\n"
        "pkg.fork(1, split=2)\n"
        "class Mine(pkg.Function):\n    pass\n"
        "pkg.Function()\n"
    )
    hits, _ = forward.run([path], tmp_path, [newest], {})
    assert [(h.use.line, h.record.keyword) for h in hits] == [(3, "split"), (6, "")]


def test_an_option_the_newest_jax_lacks_is_a_hit_unless_guarded(tmp_path):
    def jax_wheel(folder, version, names):
        options = "\n".join(
            f'x{i} = bool_state(name="{n}")' for i, n in enumerate(names)
        )
        return Release.from_wheel(
            make_wheel(
                tmp_path / folder,
                "jax",
                version,
                {"jax/__init__.py": "", "jax/_src/config.py": options},
            )
        )

    newest = jax_wheel("new", "2.0", ["jax_enable_x64"])
    installed = {"jax": jax_wheel("old", "1.0", ["jax_enable_x64", "jax_old_route"])}
    path = tmp_path / "lesson.py"
    path.write_text(
        "import jax\n"
        'jax.config.update("jax_old_route", False)\n'
        'jax.config.update("jax_enable_x64", True)\n'
        "try:\n"
        '    jax.config.update("jax_old_route", False)\n'
        "except AttributeError:\n"
        "    pass\n"
    )
    hits, _ = forward.run([path], tmp_path, [newest], installed)
    assert [h.use.line for h in hits] == [2]
    assert "the jax option 'jax_old_route' is removed in jax 2.0" in hits[0].line()


# ------------------------------------------------------------------ downloads


def test_pip_download_is_for_python_313_without_dependencies(tmp_path, monkeypatch):
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        cache = tmp_path / "cache"
        for name in ("jax-0.12.1", "flax-0.12.12"):
            (cache / f"{name}-py3-none-any.whl").write_bytes(b"")
        out = "Saved ./jax-0.12.1-py3-none-any.whl\nFile was already downloaded "
        out += f"{cache}/flax-0.12.12-py3-none-any.whl\n"
        return subprocess.CompletedProcess(cmd, 0, out, "")

    monkeypatch.setattr(forward.subprocess, "run", fake_run)
    wheels, notes = forward.download_wheels(
        ["jax", "flax"], tmp_path / "cache", {"jax": "jax==0.12.1"}, offline=False
    )
    assert [w.name for w in wheels] == [
        "jax-0.12.1-py3-none-any.whl",
        "flax-0.12.12-py3-none-any.whl",
    ]
    (cmd,) = calls
    assert cmd[3:7] == [
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
    ]
    assert cmd[7] == "3.13" and cmd[-2:] == ["jax==0.12.1", "flax"] and notes == []


def test_without_network_the_newest_cached_wheel_stands_in(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    make_wheel(cache, "orbax-checkpoint", "0.12.4", {"orbax/__init__.py": ""})
    make_wheel(cache, "orbax-checkpoint", "0.12.10", {"orbax/__init__.py": ""})

    def no_network(cmd, **kwargs):
        return subprocess.CompletedProcess(
            cmd, 1, "", "ERROR: No matching distribution"
        )

    monkeypatch.setattr(forward.subprocess, "run", no_network)
    (wheel,), notes = forward.download_wheels(
        ["orbax-checkpoint"], cache, {}, offline=False
    )
    assert wheel.name == "orbax_checkpoint-0.12.10-py3-none-any.whl"
    assert notes and "pip download failed" in notes[0]
    with pytest.raises(forward.Unreachable, match="run once with network"):
        forward.download_wheels(["jax"], cache, {}, offline=False)
    monkeypatch.setattr(forward.subprocess, "run", None)  # offline never calls pip
    assert forward.download_wheels(["orbax-checkpoint"], cache, {}, offline=True)[0]


def _fake_pypi(monkeypatch, wheel_bytes, status=206):
    """PyPI's JSON for torch 2.15.0 and range requests served from ``wheel_bytes``."""
    name = "torch-2.15.0-cp313-cp313-macosx_14_0_arm64.whl"
    index = {
        "info": {"version": "2.15.0"},
        "urls": [
            {"filename": "torch-2.15.0-cp313-cp313-manylinux_2_28_x86_64.whl"},
            {
                "filename": name,
                "url": f"../../packages/{name}",
                "size": len(wheel_bytes),
            },
        ],
    }
    seen = []

    class Response(io.BytesIO):
        def __init__(self, data):
            super().__init__(data)
            self.status = status

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def urlopen(request, timeout):
        start, end = map(int, re.findall(r"\d+", request.headers["Range"]))
        seen.append((request.full_url, start, end))
        return Response(wheel_bytes[start : end + 1])

    monkeypatch.setattr(forward, "_get_json", lambda url: index)
    monkeypatch.setattr(forward.urllib.request, "urlopen", urlopen)
    return seen


def _torch_like_wheel() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("torch/__init__.py", "from torch import nn\n")
        library = random.Random(0).randbytes(1 << 20)  # not fetched
        archive.writestr("torch/lib/libtorch.dylib", library, zipfile.ZIP_STORED)
        archive.writestr("torch/nn/__init__.py", "def relu(x):\n    return x\n")
        archive.writestr("torch-2.15.0.dist-info/METADATA", "Name: torch\n")
    return buffer.getvalue()


def test_torch_sources_are_the_py_members_of_the_cpu_wheel_fetched_by_range(
    tmp_path, monkeypatch
):
    wheel = _torch_like_wheel()
    seen = _fake_pypi(monkeypatch, wheel)
    path, notes = forward.torch_sources(tmp_path, "", offline=False)
    assert path.name == "torch-2.15.0-sources.zip"
    assert zipfile.ZipFile(path).namelist() == [
        "torch/__init__.py",
        "torch/nn/__init__.py",
    ]
    assert all(url.endswith("macosx_14_0_arm64.whl") for url, _, _ in seen)
    fetched = sum(end - start + 1 for _, start, end in seen)
    assert fetched < len(wheel) / 2, "the library was fetched too"
    assert json.loads(path.with_suffix(".json").read_text())["fetched"] == fetched
    assert "range requests" in notes[0]
    assert Release.from_wheel(path).resolve("torch.nn.relu").found
    # a second run finds the sources in the cache, offline too
    assert forward.torch_sources(tmp_path, "", offline=True)[0] == path


def test_torch_without_network_or_range_requests_reads_the_cache(tmp_path, monkeypatch):
    _fake_pypi(monkeypatch, _torch_like_wheel(), status=200)
    with pytest.raises(forward.Unreachable, match="run once with network"):
        forward.torch_sources(tmp_path, "", offline=False)
    (tmp_path / "torch-2.14.0-sources.zip").write_bytes(b"")
    path, notes = forward.torch_sources(tmp_path, "", offline=False)
    assert path.name == "torch-2.14.0-sources.zip"
    assert "does not answer range requests" in notes[0]


# ------------------------------------------------------------------- command


def test_course_forward_check_fails_on_a_hit_and_passes_without(
    tmp_path, monkeypatch, capsys, releases
):
    newest, installed = releases
    wheel = tmp_path / "new" / "jaxlike-2.0-py3-none-any.whl"
    monkeypatch.setattr(forward, "installed_releases", lambda projects: installed)
    bad, good = tmp_path / "bad.py", tmp_path / "good.py"
    bad.write_text(textwrap.dedent(LESSON))
    good.write_text("import jaxlike\njaxlike.sharding.make_sharding(0)\n")
    assert cli.main(["forward-check", "--wheel", str(wheel), str(bad)]) == 1
    out = capsys.readouterr().out
    assert "bad.py:5: jaxlike.sharding.OldSharding is deprecated" in out
    assert cli.main(["forward-check", "--wheel", str(wheel), str(good)]) == 0
    assert cli.main(["forward-check", "--pin", "jax-0.12"]) == 2
    assert "NAME==VERSION" in capsys.readouterr().err


# ------------------------------------------------------ the newest releases

# Uses the lesson owners are changing, with the reason; a hit listed here is reported
# but does not fail, and an entry that no longer hits fails (remove it).
PENDING: dict[tuple[str, str], str] = {}


@pytest.mark.slow
def test_the_course_against_the_newest_releases():
    """What PyPI serves today (build/forward/ caches it); skips without network."""
    from course_utils.tooling.notebooks import course_root

    root = course_root()
    cache = root / "build" / "forward"
    try:
        sources, notes = forward.download_wheels(forward.PROJECTS, cache, {}, False)
    except forward.Unreachable as err:
        pytest.skip(f"no network and nothing cached: {err}")
    try:
        torch, torch_notes = forward.torch_sources(cache, "", offline=False)
        sources, notes = [*sources, torch], notes + torch_notes
    except forward.Unreachable as err:
        notes.append(f"torch left out: {err}")
    releases = [Release.from_wheel(p) for p in sources]
    installed = forward.installed_releases([*forward.PROJECTS, "torch"])
    hits, facts = forward.run(forward.course_files(root), root, releases, installed)
    print(forward.report(hits, facts, releases, installed, notes))
    found = {(h.use.path, h.record.name) for h in hits}
    new = [h.line() for h in hits if (h.use.path, h.record.name) not in PENDING]
    stale = [key for key in PENDING if key not in found]
    assert not new, "the newest releases deprecate or removed these:\n" + "\n".join(new)
    assert not stale, f"no longer found, remove from PENDING: {stale}"
