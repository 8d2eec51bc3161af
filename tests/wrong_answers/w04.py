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

IDENTITY_PERM = """
def flatten_permutation(C, H, W):
    # numbers the positions but never moves the channel axis
    return np.arange(C * H * W)
"""

# PyTorch's habit `module.weight = nn.Parameter(...)`: in NNX it replaces the Param
PLAIN_ARRAYS = """
def port_torch_to_nnx(torch_model, nnx_model):
    def np_(t):
        return t.detach().cpu().numpy()

    for name in ("conv1", "conv2"):
        src, dst = getattr(torch_model, name), getattr(nnx_model, name)
        dst.kernel = jnp.asarray(np_(src.weight).transpose(2, 3, 1, 0))
        dst.bias = jnp.asarray(np_(src.bias))
    perm = flatten_permutation(*torch_model.feature_chw)
    nnx_model.fc1.kernel = jnp.asarray(np_(torch_model.fc1.weight)[:, perm].T)
    nnx_model.fc1.bias = jnp.asarray(np_(torch_model.fc1.bias))
    nnx_model.fc2.kernel = jnp.asarray(np_(torch_model.fc2.weight).T)
    nnx_model.fc2.bias = jnp.asarray(np_(torch_model.fc2.bias))
    return nnx_model
"""

NO_DETACH = (
    _PORT.replace("t.detach().cpu().numpy()", "t.numpy()")
    .replace("CONV", RIGHT_CONV)
    .replace("FC1", RIGHT_FC1)
)
CONV_OUT_IN = _PORT.replace("CONV", "np_(src.weight).transpose(2, 3, 0, 1)").replace(
    "FC1", RIGHT_FC1
)
FC1_ROWS_PERMUTED = _PORT.replace("CONV", RIGHT_CONV).replace(
    "FC1", "np_(torch_model.fc1.weight)[perm].T"
)
FC1_INVERSE_PERM = _PORT.replace("CONV", RIGHT_CONV).replace(
    "FC1", "np_(torch_model.fc1.weight)[:, np.argsort(perm)].T"
)
FC2_NOT_TRANSPOSED = (
    _PORT.replace("CONV", RIGHT_CONV)
    .replace("FC1", RIGHT_FC1)
    .replace("np_(torch_model.fc2.weight).T", "np_(torch_model.fc2.weight)")
)
NO_BIASES = "\n".join(
    line
    for line in _PORT.replace("CONV", RIGHT_CONV).replace("FC1", RIGHT_FC1).splitlines()
    if ".bias" not in line
)


def _jax_step(body):
    return RIGHT_TORCH_STEP + (
        """
def train_step_jax(model, optimizer, x, y):
    def loss_fn(model):
        return optax.softmax_cross_entropy_with_integer_labels(model(x), y)LOSS

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    UPDATE
    return RETURN
"""
    ).replace("LOSS", body.get("loss", ".mean()")).replace(
        "UPDATE", body.get("update", "optimizer.update(model, grads)")
    ).replace("RETURN", body.get("ret", "loss"))


def _torch_step(body):
    return RIGHT_JAX_STEP + body


JAX_NO_MEAN = _jax_step({"loss": "  # per-example losses: no .mean()"})
JAX_UPDATE_GRADS_ONLY = _jax_step(
    {"update": "optimizer.update(grads)  # optax's order"}
)
JAX_OPTIMIZER_STEP = _jax_step({"update": "optimizer.step()  # PyTorch's habit"})
JAX_FLOAT_LOSS = _jax_step({"ret": "float(loss)  # PyTorch's loss.item() habit"})
TORCH_ZERO_GRAD_LATE = _torch_step(
    """
def train_step_torch(model, optimizer, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.zero_grad()  # between backward() and step(): the gradients are gone
    optimizer.step()
    return loss.detach()
"""
)
TORCH_ITEM = _torch_step(
    """
def train_step_torch(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
"""
)

OUTER_STATE = """
def train_epoch_scan(graphdef, state, Xs, ys):
    def body(carry, batch):
        return pure_step(graphdef, state, *batch)  # the initial state, not the carry

    return jax.lax.scan(body, state, (Xs, ys))
"""

XS_YS_APART = """
def train_epoch_scan(graphdef, state, Xs, ys):
    def body(state, batch):
        return pure_step(graphdef, state, *batch)

    return jax.lax.scan(body, state, Xs, ys)  # ys lands in scan's length argument
"""

ACC_JAX_ARRAY = RIGHT_ACC_TORCH + RIGHT_ACC_JAX.replace(
    "correct += int((logits.argmax(axis=-1) == y[start : start + batch_size]).sum())",
    "correct += (logits.argmax(axis=-1) == y[start : start + batch_size]).sum()",
)
ACC_TORCH_TENSOR = RIGHT_ACC_JAX + RIGHT_ACC_TORCH.replace(
    "(logits.argmax(dim=1) == y[start : start + batch_size]).sum().item()",
    "(logits.argmax(dim=1) == y[start : start + batch_size]).sum()",
)
ACC_TORCH_BATCH_AXIS = RIGHT_ACC_JAX + RIGHT_ACC_TORCH.replace(
    "logits.argmax(dim=1)", "logits.argmax(dim=0)"
)

WRONG = {
    "flatten-order": [
        ("the inverse permutation", INVERSE_PERM, "number the NCHW positions"),
        ("reverses all axes (W, H, C)", WHC_PERM, "transpose to (H, W, C)"),
        ("no transpose at all", IDENTITY_PERM, "number the NCHW positions"),
    ],
    "port-weights": [
        ("conv weights with .T (kw, kh swapped)", CONV_DOT_T, "the conv permutation"),
        ("fc1 without the column permutation", FC1_NO_PERM, "fc1's column order"),
        ("module.kernel = array replaces the Param", PLAIN_ARRAYS, "not an nnx.Param"),
        ("PyTorch parameters without detach()", NO_DETACH, "detach it first"),
        ("conv kernels as (kh, kw, out, in)", CONV_OUT_IN, "(kh, kw, in, out)"),
        (
            "fc1's rows permuted",
            FC1_ROWS_PERMUTED,
            "the columns of PyTorch's (out, in)",
        ),
        ("fc1 with the inverse permutation", FC1_INVERSE_PERM, "fc1's column order"),
        ("fc2 not transposed", FC2_NOT_TRANSPOSED, "Linear kernel (in, out)"),
        ("the biases not copied", NO_BIASES, "every weight and every bias"),
    ],
    "train-step": [
        ("PyTorch forgets zero_grad", NO_ZERO_GRAD, "once per step, before backward()"),
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
        ("JAX: no .mean() of the loss", JAX_NO_MEAN, "mean over the batch"),
        (
            "JAX: optimizer.update(grads)",
            JAX_UPDATE_GRADS_ONLY,
            "takes the model first",
        ),
        ("JAX: optimizer.step()", JAX_OPTIMIZER_STEP, "no step() method"),
        ("JAX: returns float(loss)", JAX_FLOAT_LOSS, "not float(loss)"),
        (
            "PyTorch: zero_grad between backward and step",
            TORCH_ZERO_GRAD_LATE,
            "not between backward() and step()",
        ),
        ("PyTorch: returns loss.item()", TORCH_ITEM, "return a tensor"),
    ],
    "scan-epoch": [
        ("returns the initial state", INITIAL_STATE, "the final carry"),
        ("a Python loop", PYTHON_LOOP, "a Python for loop in JAX unrolls"),
        ("body returns (loss, state)", BODY_SWAPPED, "its carry first"),
        (
            "scans the images only, labels of batch 0",
            FIRST_LABELS_ONLY,
            "images and labels",
        ),
        ("the body trains the initial state", OUTER_STATE, "the carry it receives"),
        ("Xs and ys as two arguments", XS_YS_APART, "one xs pytree"),
    ],
    "evaluate": [
        ("drops the last, smaller batch", DROPS_LAST, "do not drop the last"),
        ("averages the batch accuracies", MEAN_OF_BATCH_MEANS, "not of batches"),
        ("no torch.no_grad()", NO_NO_GRAD, "outside torch.no_grad()"),
        ("JAX: returns a jax.Array", ACC_JAX_ARRAY, "not a Python float"),
        ("PyTorch: returns a tensor", ACC_TORCH_TENSOR, "not a Python float"),
        (
            "PyTorch: argmax over the batch axis",
            ACC_TORCH_BATCH_AXIS,
            "over the classes",
        ),
    ],
}

ACC_JAX_BATCH_AXIS = RIGHT_ACC_TORCH + RIGHT_ACC_JAX.replace(
    "logits.argmax(axis=-1)", "logits.argmax(axis=0)"
)

WRONG["evaluate"] += [
    ("JAX: argmax over the batch axis", ACC_JAX_BATCH_AXIS, "over the classes"),
]

# F.nll_loss is PyTorch's loss for log-probabilities; the model returns logits
TORCH_NLL_ON_LOGITS = _torch_step(
    """
def train_step_torch(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.nll_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.detach()
"""
)
# indexing [:, y] takes every label for every image, a (batch, batch) matrix
JAX_WRONG_GATHER = _jax_step({"loss": ""}).replace(
    "optax.softmax_cross_entropy_with_integer_labels(model(x), y)",
    "-jax.nn.log_softmax(model(x))[:, y].mean()",
)
# the update written by hand, PyTorch's `p -= lr * p.grad` habit: SGD, not Adam
JAX_MANUAL_SGD = _jax_step(
    {
        "update": "nnx.update(model, jax.tree.map(lambda p, g: p - 1e-3 * g, "
        "nnx.state(model, nnx.Param), grads))"
    }
)
# a DataLoader habit: a list of (x, y) pairs instead of the stacked arrays
LIST_OF_PAIRS = """
def train_epoch_scan(graphdef, state, Xs, ys):
    def body(state, batch):
        return pure_step(graphdef, state, *batch)

    return jax.lax.scan(body, state, list(zip(Xs, ys)))
"""
LIST_OF_PAIRS_UNPACKED = """
def train_epoch_scan(graphdef, state, Xs, ys):
    def body(state, batch):
        x, y = batch
        return pure_step(graphdef, state, x, y)

    return jax.lax.scan(body, state, list(zip(Xs, ys)))
"""

WRONG["train-step"] += [
    ("PyTorch: F.nll_loss on logits", TORCH_NLL_ON_LOGITS, "wants log-probabilities"),
    ("JAX: log-probabilities indexed [:, y]", JAX_WRONG_GATHER, "its own label"),
    ("JAX: a hand-written SGD update", JAX_MANUAL_SGD, "JAX: the first loss was right"),
]
WRONG["scan-epoch"] += [
    ("a list of (x, y) pairs", LIST_OF_PAIRS, "not a list of (x, y) pairs"),
    ("a list of pairs, unpacked", LIST_OF_PAIRS_UNPACKED, "not a list of (x, y) pairs"),
]
