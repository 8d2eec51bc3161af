"""The claims lessons judge without a benchmark of their own."""

from course_utils.claims import lesson_claims, registry


def test_ids_are_unique_and_reachable_through_get():
    ids = [c.id for c in lesson_claims.LESSON_CLAIMS]
    assert len(ids) == len(set(ids))
    for c in lesson_claims.LESSON_CLAIMS:
        assert registry.get(c.id) is c


def test_no_lesson_claim_is_also_a_benchmarked_claim():
    benchmarked = {c.id for c in registry.CLAIMS}
    assert not benchmarked & {c.id for c in lesson_claims.LESSON_CLAIMS}
