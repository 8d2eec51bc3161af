"""Wrong answers to solutions/03_jit_compilation_exercises.py."""

UNCOMPILED = """
def train_torch(w, X, y, lrs):
    for lr in lrs:
        w = train_step(w, X, y, torch.tensor(lr, dtype=w.dtype))  # the uncompiled step
    return w
"""

PYTHON_FLOAT = """
def train_torch(w, X, y, lrs):
    for lr in lrs:
        w = train_step_c(w, X, y, lr)  # a Python float is a constant Dynamo guards on
    return w
"""

WRONG = {
    "torch-schedule": [
        ("calls the uncompiled step", UNCOMPILED, "train_step_c (the compiled step)"),
        ("passes the rate as a Python float", PYTHON_FLOAT, "0-d tensor"),
    ],
}
