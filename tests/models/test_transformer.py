"""course_utils.models.transformer: the block's sizes are validated."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("flax")

from course_utils import models  # noqa: E402


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"d_model": 10, "n_heads": 4}, "divisible by n_heads"),
        ({"d_ff": 0}, "d_ff must be a positive int"),
        ({"dropout": 1.0}, "dropout must be in"),
        ({"n_heads": 2.5}, "n_heads must be a positive int"),
    ],
)
def test_block_config_validates(kwargs, message):
    with pytest.raises(ValueError, match=message):
        models.BlockConfig(**kwargs)
