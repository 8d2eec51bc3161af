"""The small transformer block the porting tests share (fixtures in tests/conftest.py)."""

from course_utils import models

CFG = models.BlockConfig(d_model=16, n_heads=4, d_ff=32, dropout=0.1)
