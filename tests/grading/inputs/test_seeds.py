"""The variant secret and the seeds it derives from roster ids."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from course_utils.errors import CourseError
from course_utils.grading.inputs import seeds

SECRET = b"0123456789abcdef0123456789abcdef"


def test_a_seed_is_the_hmac_of_the_id_under_the_secret():
    mac = hmac.new(SECRET, b"course-variant:ada", hashlib.sha256).hexdigest()
    assert seeds.seed(SECRET, "ada") == mac[:16]
    assert seeds.variant(SECRET, "ada").seed == mac[:16]
    assert seeds.variant(SECRET, "ada").student == "ada"
    assert seeds.seed(SECRET, "bob") != seeds.seed(SECRET, "ada")
    assert seeds.seed(SECRET[::-1], "ada") != seeds.seed(SECRET, "ada")
    assert len(seeds.seed(SECRET, "caf\\xe9")) == 16  # an escaped file name too


def test_the_fingerprint_names_the_secret_and_is_no_seed():
    assert seeds.fingerprint(SECRET) == seeds.fingerprint(SECRET)
    assert seeds.fingerprint(SECRET) != seeds.fingerprint(SECRET[::-1])
    assert seeds.fingerprint(SECRET) not in {seeds.seed(SECRET, "ada")}
    assert len(seeds.fingerprint(SECRET)) == 12


def test_the_secret_comes_from_the_option_else_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(seeds.SECRET_ENV, raising=False)
    assert seeds.load_secret(None) is None  # variants off
    path = tmp_path / "secret"
    path.write_bytes(SECRET + b"\n")
    assert seeds.load_secret(path) == (SECRET, path.resolve())
    monkeypatch.setenv(seeds.SECRET_ENV, str(path))
    assert seeds.load_secret(None) == (SECRET, path.resolve())


def test_a_bad_secret_file_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv(seeds.SECRET_ENV, raising=False)
    missing = tmp_path / "none"
    with pytest.raises(CourseError, match=f"--variant-secret {missing}: cannot read"):
        seeds.load_secret(missing)
    short = tmp_path / "short"
    short.write_bytes(b"password\n")
    with pytest.raises(CourseError, match="8 bytes; a secret needs at least 16"):
        seeds.load_secret(short)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 5000)
    with pytest.raises(CourseError, match="more than 4096 bytes"):
        seeds.load_secret(big)
    monkeypatch.setenv(seeds.SECRET_ENV, str(short))
    with pytest.raises(CourseError, match=rf"^\${seeds.SECRET_ENV} \({short}\): 8"):
        seeds.load_secret(None)
