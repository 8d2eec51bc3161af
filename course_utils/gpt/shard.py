"""The GPT training step on many JAX devices: data parallel and tensor parallel (lesson 12).

One pure step (:func:`course_utils.gpt.train.jax_step`) runs everywhere; only
the shardings ``jax.jit`` is given change:

- data parallel: a mesh ``("data",)`` over every device, the batch split on its
  first axis, parameters and optimizer state replicated. XLA inserts the
  all-reduce of the gradients;
- tensor parallel: a mesh ``("data", "model")``; each parameter whose path
  matches a rule in :data:`TP_RULES` is split on the ``"model"`` axis (the
  attention's query/key/value and the MLP's first layer by output columns, the
  attention's output projection and the MLP's second layer by input rows, the
  Megatron layout), everything else replicated. The optimizer state follows its
  parameter. XLA inserts the collectives the layout needs.

jax is imported inside the functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "COLLECTIVES",
    "FSDP_RULES",
    "TP_RULES",
    "count_collectives",
    "jit_step",
    "mesh",
    "param_specs",
    "place",
    "state_shardings",
]

# (regex on the parameter's path, e.g. "blocks/attn/qkv/kernel"; the spec of its LAST axes).
# Axes before those (the stacked layer axis of a scanned model) stay unsplit.
TP_RULES: tuple[tuple[str, tuple], ...] = (
    (r"attn/qkv/kernel$", (None, "model")),  # by output columns
    (r"attn/qkv/bias$", ("model",)),
    (r"fc1/kernel$", (None, "model")),
    (r"fc1/bias$", ("model",)),
    (r"attn/proj/kernel$", ("model", None)),  # by input rows
    (r"fc2/kernel$", ("model", None)),
)

# FSDP (ZeRO-3) on a ("data",) mesh: every Linear kernel split by its first own axis over the
# devices that also split the batch; XLA gathers each kernel before its use.
FSDP_RULES: tuple[tuple[str, tuple], ...] = ((r"kernel$", ("data", None)),)

# The collective operations of XLA's HLO, as its text names them.
COLLECTIVES = (
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "all-to-all",
    "collective-permute",
)


def count_collectives(jitted: Callable[..., Any], *args: Any) -> dict[str, int]:
    """How many of each collective the compiled program of ``jitted(*args)`` holds.

    Read from the optimised HLO text (``lower(...).compile().as_text()``); an
    asynchronous pair (``all-gather-start`` / ``-done``) counts once. Only the
    collectives that occur are keys. ``jitted`` may also be a program compiled
    already (``jax.jit(f).lower(...).compile()``, no ``args``): its text is read
    as it is, so a step compiled once can be both counted and run.
    """
    if hasattr(jitted, "as_text"):  # a jax.stages.Compiled
        if args:
            raise TypeError(
                "count_collectives: a compiled program takes no args (they were fixed when it was lowered)"
            )
        text = jitted.as_text()
    else:
        text = jitted.lower(*args).compile().as_text()
    counts = {}
    for op in COLLECTIVES:
        n = len(re.findall(rf"\s{op}(?:-start)?\(", text))
        if n:
            counts[op] = n
    return counts


def mesh(shape: Sequence[int], names: Sequence[str]) -> Any:
    """``jax.make_mesh(shape, names)`` over :func:`course_utils.meshes.devices`.

    The devices are the first ``prod(shape)`` accelerators when there are that many,
    else as many simulated CPU devices (``env.setup(cpu_devices=...)``).

    The axes are ``Auto``: the shardings given to ``jax.jit`` fix the inputs and
    outputs, and XLA chooses everything in between (newer jax makes ``Explicit``
    axes the default, where every sharded contraction needs its output named).
    """
    import jax

    from course_utils import meshes

    auto = (jax.sharding.AxisType.Auto,) * len(shape)
    return meshes.make(shape, names, auto)


def param_specs(params: Any, rules: Sequence[tuple[str, tuple]] = ()) -> Any:
    """A ``PartitionSpec`` per parameter: the first rule matching its path, else replicated."""
    import jax
    from jax.sharding import PartitionSpec as P

    def spec(path, leaf):
        name = jax.tree_util.keystr(path, simple=True, separator="/")
        name = name.removesuffix(
            "/value"
        )  # an nnx.State's leaf: blocks/attn/qkv/kernel
        for pattern, last in rules:  # the first rule whose pattern matches
            if re.search(pattern, name):
                return P(
                    *(None,) * (leaf.ndim - len(last)), *last
                )  # the layer axis whole
        return P()  # no rule: replicated

    return jax.tree_util.tree_map_with_path(spec, params)


def place(tree: Any, shardings: Any) -> Any:
    """``jax.device_put`` every leaf onto its sharding."""
    import jax

    return jax.tree.map(jax.device_put, tree, shardings)


def state_shardings(
    the_mesh: Any, tx: Any, params: Any, rules: Sequence[tuple[str, tuple]] = ()
) -> tuple[Any, Any]:
    """``(param_shardings, opt_state_shardings)`` on ``the_mesh``.

    Parameters follow ``rules`` (none: replicated). The optimizer state is what
    ``tx.init`` makes from parameters so placed: ``mu`` and ``nu`` inherit each
    parameter's sharding (XLA propagates it through ``zeros_like``), and the
    scalars (the step count) are replicated.
    """
    import jax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    p_sh = jax.tree.map(
        lambda s: NamedSharding(the_mesh, s), param_specs(params, rules)
    )
    abstract = jax.eval_shape(jax.jit(tx.init, in_shardings=(p_sh,)), params)
    replicated = NamedSharding(the_mesh, P())

    def named(a):
        s = getattr(a, "sharding", None)
        return s if isinstance(s, NamedSharding) else replicated

    return p_sh, jax.tree.map(named, abstract)


def jit_step(
    step: Callable[..., Any],
    shardings: tuple[Any, Any],
    batch_axis: str | None = "data",
    donate: bool = False,
) -> Callable[..., Any]:
    """``jax.jit(step)`` with in/out shardings: ``shardings`` from :func:`state_shardings`.

    The batch ``(x, y)`` is split over ``batch_axis`` (None: replicated); the loss
    comes back replicated. ``donate=True`` lets XLA reuse the old state's buffers.
    """
    import jax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    p_sh, o_sh = shardings
    the_mesh = jax.tree.leaves(p_sh)[0].mesh
    x_sh = NamedSharding(the_mesh, P(batch_axis, None))
    return jax.jit(
        step,
        in_shardings=(p_sh, o_sh, x_sh, x_sh),
        out_shardings=(p_sh, o_sh, NamedSharding(the_mesh, P())),
        donate_argnums=(0, 1) if donate else (),
    )
