"""The source articles the claims cite."""

from course_utils.claims import registry, sources


def test_every_claim_cites_a_known_source():
    for c in registry.CLAIMS + registry.LESSON_CLAIMS:
        assert c.source in sources.SOURCES.values(), c.id


def test_the_four_articles_and_the_course():
    assert set(sources.SOURCES) == {"000", "001", "003", "004", "course"}
