"""The committed Chinese edition is in step with the English: every edition matches its
source and catalog (what ``course translate --check`` reports), keeps the English code
cells byte for byte, and every catalog keeps the glossary's terms (docs/zh/GLOSSARY.md).
How the command writes an edition is tested in test_command.py."""

from pathlib import Path

import nbformat
import pytest

from course_utils import lessons
from course_utils.tooling.translation import catalog
from course_utils.tooling.translation import command as translate

ROOT = Path(__file__).resolve().parents[3]
EDITIONS = [
    *lessons.files(ROOT, lessons.LESSONS, language=lessons.CHINESE),
    *lessons.files(ROOT, lessons.STUDENTS, language=lessons.CHINESE),
]
CATALOGS = sorted((ROOT / catalog.LOCALE_DIR / "zh" / "LC_MESSAGES").glob("*.po"))


def test_the_repository_editions_match_their_sources_and_catalogs():
    changed, problems = translate.build(ROOT, "zh", check=True)
    assert changed == [], "run `course translate`"
    assert problems == []


@pytest.mark.parametrize("path", EDITIONS, ids=[p.name for p in EDITIONS])
def test_each_edition_has_the_english_code_cells_byte_for_byte(path):
    zh = nbformat.read(path, as_version=4)
    english = ROOT / zh.metadata["translation"]["source"]
    en = nbformat.read(english, as_version=4)
    assert [(c.id, c.cell_type) for c in zh.cells] == [
        (c.id, c.cell_type) for c in en.cells
    ]
    for a, b in zip(zh.cells, en.cells, strict=True):
        assert a.metadata == b.metadata
        if a.cell_type == "code" and a.source != b.source:
            # The one difference allowed: the quiz cell loads the lesson's Chinese quiz.
            found = translate.QUIZ_CALL.match(b.source)
            assert found and a.source == f'{found[1]}, language="zh")', (
                f"{path.name} cell {a.id}"
            )


def test_every_catalog_uses_the_glossary_terms():
    terms = catalog.glossary(ROOT / "docs" / "zh" / "GLOSSARY.md")
    assert terms["data parallelism"] == "数据并行"
    found = []
    for path in CATALOGS:
        found += catalog.terminology(catalog.read(path), terms, path.stem)
    assert found == []


def test_no_catalog_writes_lowering_as_a_downgrade():
    """To lower a traced program is 下降（lower） (docs/zh/GLOSSARY.md); 降级 reads as a
    downgrade, and three catalogs had used it."""
    found = []
    for path in CATALOGS:
        found += [
            f"{path.stem}: {m.id[:60]!r}"
            for m in catalog.read(path)
            if m.id and "降级" in m.string
        ]
    assert found == []


def test_no_catalog_keeps_an_old_english_text_as_a_comment():
    """A revised message drops its previous English (``#|``); a copy of it rewrapped as
    translator comments (``# | msgid ...`` and its wrapped words) is stale text nobody
    reads. Read as text: ``catalog.read`` drops such comments, so it would hide them."""
    found = []
    for path in CATALOGS:
        lines = path.read_text(encoding="utf-8").splitlines()
        header = next(i for i, line in enumerate(lines) if line.startswith("msgid"))
        found += [
            f"{path.name}:{n}: {line[:60]}"
            for n, line in enumerate(lines[header:], header + 1)
            if line.startswith("# ") or line == "#"
        ]
    assert found == []
