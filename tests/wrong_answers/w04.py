"""Wrong answers to solutions/04_training_loop_exercises.py."""

INVERSE_PERM = """
def flatten_permutation(C, H, W):
    # numbers the NHWC positions and moves them to NCHW: the inverse permutation
    return np.arange(C * H * W).reshape(H, W, C).transpose(2, 0, 1).reshape(-1)
"""

WHC_PERM = """
def flatten_permutation(C, H, W):
    # reverses all three axes (W, H, C) instead of moving C last
    return np.arange(C * H * W).reshape(C, H, W).transpose(2, 1, 0).reshape(-1)
"""

_PORT = """
def port_torch_to_nnx(torch_model, nnx_model):
    def np_(t):
        return t.detach().cpu().numpy()

    for name in ("conv1", "conv2"):
        src, dst = getattr(torch_model, name), getattr(nnx_model, name)
        compat.set_value(dst.kernel, jnp.asarray(CONV))
        compat.set_value(dst.bias, jnp.asarray(np_(src.bias)))
    perm = flatten_permutation(*torch_model.feature_chw)
    compat.set_value(nnx_model.fc1.kernel, jnp.asarray(FC1))
    compat.set_value(nnx_model.fc1.bias, jnp.asarray(np_(torch_model.fc1.bias)))
    compat.set_value(nnx_model.fc2.kernel, jnp.asarray(np_(torch_model.fc2.weight).T))
    compat.set_value(nnx_model.fc2.bias, jnp.asarray(np_(torch_model.fc2.bias)))
    return nnx_model
"""
RIGHT_CONV = "np_(src.weight).transpose(2, 3, 1, 0)"
RIGHT_FC1 = "np_(torch_model.fc1.weight)[:, perm].T"

CONV_DOT_T = _PORT.replace("CONV", "np_(src.weight).T").replace("FC1", RIGHT_FC1)
FC1_NO_PERM = _PORT.replace("CONV", RIGHT_CONV).replace(
    "FC1", "np_(torch_model.fc1.weight).T"
)

RIGHT_JAX_STEP = """
def train_step_jax(model, optimizer, x, y):
    def loss_fn(model):
        return optax.softmax_cross_entropy_with_integer_labels(model(x), y).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss
"""

RIGHT_TORCH_STEP = """
def train_step_torch(model, optimizer, x, y):
    optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.detach()
"""

NO_ZERO_GRAD = (
    RIGHT_JAX_STEP
    + """
def train_step_torch(model, optimizer, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.detach()
"""
)

TORCH_LOSS_AFTER = (
    RIGHT_JAX_STEP
    + """
def train_step_torch(model, optimizer, x, y):
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
    with torch.no_grad():
        return F.cross_entropy(model(x), y)
"""
)

JAX_LOSS_AFTER = (
    RIGHT_TORCH_STEP
    + """
def train_step_jax(model, optimizer, x, y):
    def loss_fn(model):
        return optax.softmax_cross_entropy_with_integer_labels(model(x), y).mean()

    grads = nnx.grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss_fn(model)
"""
)

PYTHON_LOOP = """
def train_epoch_scan(graphdef, state, Xs, ys):
    losses = []
    for k in range(Xs.shape[0]):
        state, loss = pure_step(graphdef, state, Xs[k], ys[k])
        losses.append(loss)
    return state, jnp.stack(losses)
"""

BODY_SWAPPED = """
def train_epoch_scan(graphdef, state, Xs, ys):
    def body(state, batch):
        new_state, loss = pure_step(graphdef, state, *batch)
        return loss, new_state  # carry and output swapped

    return jax.lax.scan(body, state, (Xs, ys))
"""

FIRST_LABELS_ONLY = """
def train_epoch_scan(graphdef, state, Xs, ys):
    def body(state, x):
        return pure_step(graphdef, state, x, ys[0])  # scans the images, not the labels

    return jax.lax.scan(body, state, Xs)
"""

RIGHT_ACC_JAX = """
def accuracy_jax(model, X, y, batch_size):
    correct = 0
    for start in range(0, len(y), batch_size):
        logits = forward(model, X[start : start + batch_size])
        correct += int((logits.argmax(axis=-1) == y[start : start + batch_size]).sum())
    return correct / len(y)
"""

RIGHT_ACC_TORCH = """
def accuracy_torch(model, X, y, batch_size):
    correct = 0
    with torch.no_grad():
        for start in range(0, len(y), batch_size):
            logits = model(X[start : start + batch_size])
            correct += (logits.argmax(dim=1) == y[start : start + batch_size]).sum().item()
    return correct / len(y)
"""

DROPS_LAST = (
    RIGHT_ACC_TORCH
    + """
def accuracy_jax(model, X, y, batch_size):
    correct = seen = 0
    for k in range(len(y) // batch_size):  # full batches only, like drop_last=True
        batch = slice(k * batch_size, (k + 1) * batch_size)
        correct += int((forward(model, X[batch]).argmax(axis=-1) == y[batch]).sum())
        seen += batch_size
    return correct / seen
"""
)

MEAN_OF_BATCH_MEANS = (
    RIGHT_ACC_JAX
    + """
def accuracy_torch(model, X, y, batch_size):
    accs = []
    with torch.no_grad():
        for start in range(0, len(y), batch_size):
            logits = model(X[start : start + batch_size])
            accs.append((logits.argmax(dim=1) == y[start : start + batch_size]).float().mean().item())
    return sum(accs) / len(accs)
"""
)

NO_NO_GRAD = (
    RIGHT_ACC_JAX
    + """
def accuracy_torch(model, X, y, batch_size):
    model.eval()
    correct = 0
    for start in range(0, len(y), batch_size):
        logits = model(X[start : start + batch_size])
        correct += (logits.argmax(dim=1) == y[start : start + batch_size]).sum().item()
    return correct / len(y)
"""
)

NOT_DETACHED = (
    RIGHT_JAX_STEP
    + """
def train_step_torch(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss  # still attached to the graph
"""
)

INITIAL_STATE = """
def train_epoch_scan(graphdef, state, Xs, ys):
    def body(carry, batch):
        return pure_step(graphdef, carry, *batch)

    final_state, losses = jax.lax.scan(body, state, (Xs, ys))
    return state, losses
"""

JAX_ONE_HOT_LOSS = (
    RIGHT_TORCH_STEP
    + """
def train_step_jax(model, optimizer, x, y):
    def loss_fn(model):  # integer labels given to the one-hot loss (F.cross_entropy takes both)
        return optax.softmax_cross_entropy(model(x), y).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss
"""
)

JAX_SUM_LOSS = (
    RIGHT_TORCH_STEP
    + """
def train_step_jax(model, optimizer, x, y):
    def loss_fn(model):
        return optax.softmax_cross_entropy_with_integer_labels(model(x), y).sum()  # not the mean

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss
"""
)

WRONG = {
    "flatten-order": [
        ("the inverse permutation", INVERSE_PERM, "number the NCHW positions"),
        ("reverses all axes (W, H, C)", WHC_PERM, "transpose to (H, W, C)"),
    ],
    "port-weights": [
        ("conv weights with .T (kw, kh swapped)", CONV_DOT_T, "the conv permutation"),
        ("fc1 without the column permutation", FC1_NO_PERM, "fc1's column order"),
    ],
    "train-step": [
        ("PyTorch forgets zero_grad", NO_ZERO_GRAD, "clear the old"),
        (
            "JAX: integer labels to the one-hot loss",
            JAX_ONE_HOT_LOSS,
            "with_integer_labels",
        ),
        ("JAX: the summed loss", JAX_SUM_LOSS, "mean over the batch"),
        (
            "PyTorch returns the loss after step()",
            TORCH_LOSS_AFTER,
            "before optimizer.step()",
        ),
        (
            "JAX returns the loss after update",
            JAX_LOSS_AFTER,
            "before optimizer.step()",
        ),
        (
            "PyTorch returns the loss undetached",
            NOT_DETACHED,
            "detached from the autograd graph",
        ),
    ],
    "scan-epoch": [
        ("returns the initial state", INITIAL_STATE, "the final carry"),
        ("a Python loop", PYTHON_LOOP, "a Python for loop in JAX unrolls"),
        (
            "body returns (loss, state)",
            BODY_SWAPPED,
            "body(state, (x, y)) -> (new_state, loss)",
        ),
        (
            "scans the images only, labels of batch 0",
            FIRST_LABELS_ONLY,
            "jax.lax.scan(body, state, (Xs, ys))",
        ),
    ],
    "evaluate": [
        ("drops the last, smaller batch", DROPS_LAST, "do not drop the last"),
        ("averages the batch accuracies", MEAN_OF_BATCH_MEANS, "not of batches"),
        ("no torch.no_grad()", NO_NO_GRAD, "outside torch.no_grad()"),
    ],
}

ACC_JAX_BATCH_AXIS = RIGHT_ACC_TORCH + RIGHT_ACC_JAX.replace(
    "logits.argmax(axis=-1)", "logits.argmax(axis=0)"
)

WRONG["evaluate"] += [
    ("JAX: argmax over the batch axis", ACC_JAX_BATCH_AXIS, "over the classes"),
]
