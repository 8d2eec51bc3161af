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
