"""course_utils.claims.torch_compile: the torch.compile benchmarks."""

import pytest

from course_utils.claims import benchmarks, verdicts


def test_compile_training_is_skipped_in_smoke_mode():
    with pytest.raises(verdicts.SkippedInSmoke, match="without --smoke"):
        benchmarks.measure("compile-training", smoke=True)
