"""Wrong answers to solutions/07_migration_exercises.py."""

CONV_RESHAPED = """
def conv1d_torch_to_jax(weight, bias):
    out_c, in_c, k = weight.shape
    return weight.reshape(k, in_c, out_c), bias  # right shape, scrambled values


def conv1d_jax_to_torch(kernel, bias):
    k, in_c, out_c = kernel.shape
    return kernel.reshape(out_c, in_c, k), bias
"""

CONV_BACK_WRONG_AXES = """
def conv1d_torch_to_jax(weight, bias):
    return weight.transpose(2, 1, 0), bias


def conv1d_jax_to_torch(kernel, bias):
    return kernel.transpose(2, 0, 1), bias  # (out, k, in): not the inverse
"""

CONV_BIAS_NOT_NONE = """
def conv1d_torch_to_jax(weight, bias):
    return weight.transpose(2, 1, 0), np.asarray(bias)  # None becomes array(None)


def conv1d_jax_to_torch(kernel, bias):
    return kernel.transpose(2, 1, 0), np.asarray(bias)
"""

LN_BODY = """
def fixed_forward(params, x):
    h = x @ params["fc1"]["kernel"] + params["fc1"]["bias"]
    h = layer_norm(h, params["ln"]["scale"], params["ln"]["bias"]{eps})
    h = jax.nn.gelu(h{gelu})
    return h @ params["fc2"]["kernel"] + params["fc2"]["bias"]
"""

ONLY_GELU_FIXED = LN_BODY.format(eps="", gelu=", approximate=False")
ONLY_EPS_FIXED = LN_BODY.format(eps=", eps=1e-5", gelu="")
NOTHING_FIXED = LN_BODY.format(eps="", gelu="")

BN_BODY = """
def bn_torch_to_nnx(bn):
    def copy_of(t):
        return jnp.asarray(t.detach().numpy(){copy})

    out = nnx.BatchNorm(bn.num_features, momentum={momentum}, {eps}rngs=nnx.Rngs(0))
    out.scale[...] = copy_of(bn.weight)
    out.bias[...] = copy_of(bn.bias)
    {stats}
    return out
"""
STATS = "out.mean[...] = copy_of(bn.running_mean)\n    out.var[...] = copy_of(bn.running_var)"
RIGHT_BN = {
    "copy": ".copy()",
    "momentum": "1.0 - bn.momentum",
    "eps": "epsilon=bn.eps, ",
    "stats": STATS,
}

BN_TORCH_MOMENTUM = BN_BODY.format(**{**RIGHT_BN, "momentum": "bn.momentum"})
BN_NO_EPS = BN_BODY.format(**{**RIGHT_BN, "eps": ""})
BN_NO_STATS = BN_BODY.format(
    **{**RIGHT_BN, "stats": "pass  # running stats left at 0 and 1"}
)

BN_NO_COPY = BN_BODY.format(**{**RIGHT_BN, "copy": ""})
BN_DLPACK = BN_BODY.format(**RIGHT_BN).replace(
    "jnp.asarray(t.detach().numpy().copy())",
    "jax.dlpack.from_dlpack(t.detach())  # zero-copy: the tensor's own memory",
)
BN_ONLY_MEAN = BN_BODY.format(
    **{**RIGHT_BN, "stats": "out.mean[...] = copy_of(bn.running_mean)  # var left at 1"}
)

CE_BOOLEAN_INDEXING = """
def cross_entropy_like_torch(logits, labels, *, label_smoothing=0.0, ignore_index=-100):
    keep = labels != ignore_index
    logits, labels = logits[keep], labels[keep]  # shape depends on the values
    target = optax.smooth_labels(jax.nn.one_hot(labels, logits.shape[-1]), label_smoothing)
    return optax.softmax_cross_entropy(logits, target).mean()
"""

CE_PYTHON_IF = """
def cross_entropy_like_torch(logits, labels, *, label_smoothing=0.0, ignore_index=-100):
    target = optax.smooth_labels(jax.nn.one_hot(labels, logits.shape[-1]), label_smoothing)
    per_example = optax.softmax_cross_entropy(logits, target)
    if jnp.any(labels == ignore_index):  # a traced bool under jit
        valid = labels != ignore_index
        return jnp.sum(jnp.where(valid, per_example, 0.0)) / jnp.sum(valid)
    return per_example.mean()
"""

CE_MEAN_OVER_ALL = """
def cross_entropy_like_torch(logits, labels, *, label_smoothing=0.0, ignore_index=-100):
    valid = labels != ignore_index
    safe = jnp.where(valid, labels, 0)
    target = optax.smooth_labels(jax.nn.one_hot(safe, logits.shape[-1]), label_smoothing)
    per_example = optax.softmax_cross_entropy(logits, target)
    return jnp.where(valid, per_example, 0.0).mean()  # divides by the ignored ones too
"""

CE_NO_SMOOTHING = """
def cross_entropy_like_torch(logits, labels, *, label_smoothing=0.0, ignore_index=-100):
    valid = labels != ignore_index
    safe = jnp.where(valid, labels, 0)
    per_example = optax.softmax_cross_entropy_with_integer_labels(logits, safe)
    return jnp.sum(jnp.where(valid, per_example, 0.0)) / jnp.sum(valid)
"""

CE_HARDCODED_MINUS_100 = """
def cross_entropy_like_torch(logits, labels, *, label_smoothing=0.0, ignore_index=-100):
    valid = labels != -100  # PyTorch's default, not the argument
    safe = jnp.where(valid, labels, 0)
    target = optax.smooth_labels(jax.nn.one_hot(safe, logits.shape[-1]), label_smoothing)
    per_example = optax.softmax_cross_entropy(logits, target)
    return jnp.sum(jnp.where(valid, per_example, 0.0)) / jnp.sum(valid)
"""

CE_MEAN_OVER_ALL = """
def cross_entropy_like_torch(logits, labels, *, label_smoothing=0.0, ignore_index=-100):
    valid = labels != ignore_index
    safe = jnp.where(valid, labels, 0)
    target = optax.smooth_labels(jax.nn.one_hot(safe, logits.shape[-1]), label_smoothing)
    per_example = optax.softmax_cross_entropy(logits, target)
    return jnp.mean(jnp.where(valid, per_example, 0.0))  # the ignored rows still count in the mean
"""

CE_SMOOTHING_OVER_OTHERS = """
def cross_entropy_like_torch(logits, labels, *, label_smoothing=0.0, ignore_index=-100):
    valid = labels != ignore_index
    safe = jnp.where(valid, labels, 0)
    n = logits.shape[-1]
    onehot = jax.nn.one_hot(safe, n)
    target = (1 - label_smoothing) * onehot + label_smoothing / (n - 1) * (1 - onehot)  # s over the others
    per_example = optax.softmax_cross_entropy(logits, target)
    return jnp.sum(jnp.where(valid, per_example, 0.0)) / jnp.sum(valid)
"""

GELU_STRING = LN_BODY.format(eps=", eps=1e-5", gelu=', approximate="none"')

BN_JAX_COPY = BN_BODY.format(**RIGHT_BN).replace(
    "jnp.asarray(t.detach().numpy().copy())",
    "jnp.array(t.detach().numpy(), copy=True)  # JAX's copy, made when JAX gets to it",
)
BN_TENSOR_DIRECT = BN_BODY.format(**RIGHT_BN).replace(
    "jnp.asarray(t.detach().numpy().copy())", "jnp.asarray(t.detach())"
)
BN_DEVICE_PUT = BN_BODY.format(**RIGHT_BN).replace(
    "jnp.asarray(t.detach().numpy().copy())", "jax.device_put(t.detach().numpy())"
)
BN_MOMENTUM_09 = BN_BODY.format(**{**RIGHT_BN, "momentum": "0.9"})
BN_EPS_1E5 = BN_BODY.format(**{**RIGHT_BN, "eps": "epsilon=1e-5, "})
BN_NO_DETACH = BN_BODY.format(**RIGHT_BN).replace("t.detach().numpy()", "t.numpy()")
BN_STATS_REPLACED = BN_BODY.format(
    **{
        **RIGHT_BN,
        "stats": "out.mean = copy_of(bn.running_mean)  # the BatchStat replaced\n"
        "    out.var = copy_of(bn.running_var)",
    }
)
BN_PARAMS_REPLACED = BN_BODY.format(**RIGHT_BN).replace(
    "out.scale[...] = copy_of(bn.weight)\n    out.bias[...] = copy_of(bn.bias)",
    "out.scale = copy_of(bn.weight)  # module.weight = ..., PyTorch's habit\n"
    "    out.bias = copy_of(bn.bias)",
)
BN_TORCH_NAMES = BN_BODY.format(**RIGHT_BN).replace("out.scale[...]", "out.weight[...]")

CE_MEAN_OF_KEPT = """
def cross_entropy_like_torch(logits, labels, *, label_smoothing=0.0, ignore_index=-100):
    valid = labels != ignore_index
    safe = jnp.where(valid, labels, 0)
    target = optax.smooth_labels(jax.nn.one_hot(safe, logits.shape[-1]), label_smoothing)
    return optax.softmax_cross_entropy(logits, target)[valid].mean()  # a value-dependent shape
"""

CE_PER_EXAMPLE = """
def cross_entropy_like_torch(logits, labels, *, label_smoothing=0.0, ignore_index=-100):
    valid = labels != ignore_index
    safe = jnp.where(valid, labels, 0)
    target = optax.smooth_labels(jax.nn.one_hot(safe, logits.shape[-1]), label_smoothing)
    return jnp.where(valid, optax.softmax_cross_entropy(logits, target), 0.0)  # optax's shape
"""

CE_NONNEGATIVE_MASK = """
def cross_entropy_like_torch(logits, labels, *, label_smoothing=0.0, ignore_index=-100):
    valid = labels >= 0  # right for -100 only
    safe = jnp.where(valid, labels, 0)
    target = optax.smooth_labels(jax.nn.one_hot(safe, logits.shape[-1]), label_smoothing)
    per_example = optax.softmax_cross_entropy(logits, target)
    return jnp.sum(jnp.where(valid, per_example, 0.0)) / jnp.sum(valid)
"""

WRONG = {
    "conv1d-converter": [
        ("reshape instead of transpose", CONV_RESHAPED, "reverse the axes"),
        (
            "the way back is not the inverse",
            CONV_BACK_WRONG_AXES,
            "must undo conv1d_torch_to_jax",
        ),
        (
            "a missing bias becomes array(None)",
            CONV_BIAS_NOT_NONE,
            "pass None through as None",
        ),
    ],
    "silent-difference": [
        ("only the gelu fixed", ONLY_GELU_FIXED, "nn.LayerNorm's eps"),
        ("only the eps fixed", ONLY_EPS_FIXED, "approximate= is a bool"),
        ("the port as it was", NOTHING_FIXED, "approximate= is a bool"),
        (
            "PyTorch's string approximate='none', truthy in JAX",
            GELU_STRING,
            "approximate= is a bool",
        ),
    ],
    "batchnorm-port": [
        (
            "PyTorch's momentum copied unchanged",
            BN_TORCH_MOMENTUM,
            "Flax's momentum is 1 - PyTorch's",
        ),
        ("Flax's default epsilon", BN_NO_EPS, "pass PyTorch's eps to Flax's epsilon"),
        ("running statistics not copied", BN_NO_STATS, "running_mean->mean"),
        ("only the running mean copied", BN_ONLY_MEAN, "running_var->var"),
        (
            "jnp.asarray of the tensor's memory, no copy",
            BN_NO_COPY,
            "make the copy on the host first",
        ),
        (
            "DLPack shares the tensor's memory",
            BN_DLPACK,
            "make the copy on the host first",
        ),
        # Before jax 0.8, jnp.array copied a NumPy array on the host at once (an
        # .astype in lax._convert_element_type), and a tensor goes through NumPy: these
        # two were right there; from 0.8 on, JAX may read the tensor's memory later.
        (
            "jnp.array(..., copy=True): a copy JAX makes, possibly late",
            BN_JAX_COPY,
            "make the copy on the host first",
            {"jax": "0.8"},
        ),
        (
            "jnp.asarray of the tensor itself",
            BN_TENSOR_DIRECT,
            "make the copy on the host first",
            {"jax": "0.8"},
        ),
        (
            "jax.device_put of the tensor's memory",
            BN_DEVICE_PUT,
            "make the copy on the host first",
        ),
        ("momentum hard-coded as 0.9", BN_MOMENTUM_09, "not from a number"),
        ("epsilon hard-coded as 1e-5", BN_EPS_1E5, "pass PyTorch's eps"),
        ("a parameter's .numpy() without detach", BN_NO_DETACH, "detach it first"),
        (
            "statistics replaced by plain arrays",
            BN_STATS_REPLACED,
            "no longer an nnx.BatchStat",
        ),
        (
            "scale and bias replaced by plain arrays",
            BN_PARAMS_REPLACED,
            "no longer an nnx.Param",
        ),
        (
            "PyTorch's names on the Flax module",
            BN_TORCH_NAMES,
            "names them scale, bias, mean and var",
        ),
    ],
    "cross-entropy": [
        ("boolean indexing", CE_BOOLEAN_INDEXING, "boolean indexing fails"),
        (
            "a Python if on a traced value",
            CE_PYTHON_IF,
            "a Python if cannot read a traced value",
        ),
        (
            "the mean of the kept rows, by boolean indexing",
            CE_MEAN_OF_KEPT,
            "boolean indexing fails",
        ),
        ("per-example losses, no mean", CE_PER_EXAMPLE, "returns one number"),
        (
            "labels >= 0 as the mask, not ignore_index",
            CE_NONNEGATIVE_MASK,
            "use the argument, not -100",
        ),
        (
            "mean over all examples",
            CE_MEAN_OVER_ALL,
            "average only over labels != ignore_index",
        ),
        ("label smoothing left out", CE_NO_SMOOTHING, "smooth the one-hot target"),
        (
            "the mean over every example",
            CE_MEAN_OVER_ALL,
            "average only over labels != ignore_index",
        ),
        (
            "s spread over the other classes",
            CE_SMOOTHING_OVER_OTHERS,
            "the true one included",
        ),
        (
            "ignore_index hard-coded to -100",
            CE_HARDCODED_MINUS_100,
            "use the argument, not -100",
        ),
    ],
}

CE_SUM_NOT_MEAN = """
def cross_entropy_like_torch(logits, labels, *, label_smoothing=0.0, ignore_index=-100):
    valid = labels != ignore_index
    safe = jnp.where(valid, labels, 0)
    target = optax.smooth_labels(jax.nn.one_hot(safe, logits.shape[-1]), label_smoothing)
    per_example = optax.softmax_cross_entropy(logits, target)
    return jnp.sum(jnp.where(valid, per_example, 0.0))  # reduction="sum", not PyTorch's mean
"""

CONV_OUT_IN_SWAPPED = """
def conv1d_torch_to_jax(weight, bias):
    return weight.transpose(2, 0, 1), bias  # (k, out, in): the channel axes left in torch's order


def conv1d_jax_to_torch(kernel, bias):
    return kernel.transpose(1, 2, 0), bias
"""

CONV_IN_K_OUT = """
def conv1d_torch_to_jax(weight, bias):
    return weight.transpose(1, 2, 0), bias  # (in, k, out)


def conv1d_jax_to_torch(kernel, bias):
    return kernel.transpose(2, 0, 1), bias
"""

CONV_FLIPPED = """
def conv1d_torch_to_jax(weight, bias):
    return weight[:, :, ::-1].transpose(2, 1, 0), bias  # flipped, as a textbook convolution


def conv1d_jax_to_torch(kernel, bias):
    return kernel.transpose(2, 1, 0)[:, :, ::-1], bias
"""

CONV_PERMUTE = """
def conv1d_torch_to_jax(weight, bias):
    return weight.permute(2, 1, 0), bias  # torch's method, on a NumPy array


def conv1d_jax_to_torch(kernel, bias):
    return kernel.permute(2, 1, 0), bias
"""

CONV_TORCH_TRANSPOSE = """
def conv1d_torch_to_jax(weight, bias):
    return weight.transpose(0, 2), bias  # torch's transpose(dim0, dim1), on a NumPy array


def conv1d_jax_to_torch(kernel, bias):
    return kernel.transpose(0, 2), bias
"""

CONV_LAST_TWO_SWAPPED = """
def conv1d_torch_to_jax(weight, bias):
    return weight.transpose(0, 2, 1), bias  # (out, k, in): only in and k swapped


def conv1d_jax_to_torch(kernel, bias):
    return kernel.transpose(0, 2, 1), bias
"""

WRONG["cross-entropy"] += [
    ("the sum, not the mean", CE_SUM_NOT_MEAN, "returns one number"),
]
WRONG["conv1d-converter"] += [
    (
        "(k, out, in): channels in torch's order",
        CONV_OUT_IN_SWAPPED,
        "reverse the axes",
    ),
    ("(in, k, out): only two axes moved", CONV_IN_K_OUT, "reverse the axes"),
    (
        "taps flipped, as for a true convolution",
        CONV_FLIPPED,
        "taps are in reverse order",
    ),
    ("torch's .permute on a NumPy array", CONV_PERMUTE, "no .permute"),
    (
        "torch's two-axis transpose on a NumPy array",
        CONV_TORCH_TRANSPOSE,
        "not two axes to swap",
    ),
    ("(out, k, in): in and k swapped", CONV_LAST_TWO_SWAPPED, "reverse the axes"),
]
