"""course_utils.claims.registry: every claim has a source, frameworks, and known device kinds."""

from course_utils.claims import registry


def test_every_claim_has_a_source_and_its_frameworks():
    ids = [c.id for c in registry.CLAIMS]
    assert len(ids) == len(set(ids))
    assert set(ids) == set(registry.FRAMEWORKS)
    assert set(registry.ONLY_ON) <= set(ids)
    for frameworks in registry.FRAMEWORKS.values():
        assert frameworks and set(frameworks) <= {"jax", "torch"}
    for c in registry.CLAIMS:
        assert any(s in c.source for s in registry.SOURCES.values()), c.id


def test_every_claim_cites_a_known_source():
    for c in registry.CLAIMS + registry.LESSON_CLAIMS:
        assert c.source in registry.SOURCES.values(), c.id


def test_the_four_articles_and_the_course():
    assert set(registry.SOURCES) == {"000", "001", "003", "004", "course"}


def test_ids_are_unique_and_reachable_through_get():
    ids = [c.id for c in registry.LESSON_CLAIMS]
    assert len(ids) == len(set(ids))
    for c in registry.LESSON_CLAIMS:
        assert registry.get(c.id) is c


def test_no_lesson_claim_is_also_a_benchmarked_claim():
    benchmarked = {c.id for c in registry.CLAIMS}
    assert not benchmarked & {c.id for c in registry.LESSON_CLAIMS}


def test_the_claims_of_jax_alone_state_their_reading_and_run_on_any_device_kind():
    alone = [
        c
        for c in registry.CLAIMS
        if registry.FRAMEWORKS[c.id] == ("jax",) and c.id not in registry.ONLY_ON
    ]
    assert {c.id for c in alone} == {
        "vmap-loop",
        "jit-speedup",
        "jit-fusion",
        "warm-up",
        "scan-compile",
    }
    for c in alone:
        assert c.workload and c.here and c.claimed, c.id
        assert len(c.pairings) == 1 and c.pairings[0].fair, c.id
        if c.threshold in (1.0, 2.0):  # no number in the article: the reading is stated
            assert "no number stated" in c.claimed, c.id
    assert registry.get("jit-speedup").threshold == 2.0  # "very significant"
    scan = registry.get("scan-compile")
    assert scan.threshold == 1.2 and "no baseline" in scan.ratio
