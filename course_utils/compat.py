"""The few calls that differ across the supported jax and flax versions.

The course runs on the newest releases and on what Colab ships (jax 0.7,
flax 0.11). Lessons teach the current API; where a call has no spelling that
works on every supported version, they call the helper here instead, and the
helper picks the call by looking for it, not by comparing version numbers.

Where a version-neutral spelling exists, lessons use it and need nothing from
here: ``from jax import export`` (jax 0.7 does not load ``jax.export`` on
``import jax``), ``jax.sharding.reshard`` (also ``jax.reshard`` on newer jax),
``jax.make_mesh(..., axis_types=...)`` (the default axis types changed from
``Auto`` to ``Explicit``), ``variable[...] = array`` for a concrete
``nnx.Variable`` and ``nnx.data([...])`` for a list of submodules.

Importing this module does not import jax or flax.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "cost_flops",
    "enable_x64",
    "eval_view",
    "get_value",
    "pallas",
    "set_value",
    "single_device_sharding",
    "to_varying",
]


@contextmanager
def enable_x64(enabled: bool = True) -> Iterator[None]:
    """64-bit JAX inside the block: ``jax.enable_x64`` (newer jax) or ``jax.experimental``'s."""
    import jax

    context = getattr(jax, "enable_x64", None)
    if context is None:  # jax 0.7
        from jax.experimental import enable_x64 as context
    with context(enabled):
        yield


def single_device_sharding(device: Any) -> Any:
    """A sharding that puts a whole array on ``device``.

    ``jax.sharding.make_single_device_sharding`` where it exists (jax >= 0.8; jax 0.12
    deprecates ``SingleDeviceSharding``, and the function is documented to return a
    ``NamedSharding`` later), else a ``NamedSharding`` over a mesh of that one device
    (jax 0.7), the same placement.
    """
    import jax

    make = getattr(jax.sharding, "make_single_device_sharding", None)
    if make is not None:
        return make(device)
    import numpy as np  # jax 0.7

    mesh = jax.sharding.Mesh(devices=np.array([device]), axis_names=("device",))
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())


def pallas() -> Any:
    """Pallas: ``jax.pallas`` where it exists (jax >= 0.12, its preferred import path),
    else ``jax.experimental.pallas``, which every supported jax has."""
    try:
        from jax import pallas as module
    except ImportError:  # jax < 0.12
        from jax.experimental import pallas as module
    return module


def get_value(variable: Any) -> Any:
    """The value inside an ``nnx.Variable``, concrete or abstract (``ShapeDtypeStruct``)."""
    if hasattr(type(variable), "get_value"):  # flax >= 0.12
        return variable.get_value()
    return variable.value


def set_value(variable: Any, value: Any) -> None:
    """Replace an ``nnx.Variable``'s whole value, even an abstract one from ``nnx.eval_shape``.

    ``variable[...] = value`` works on every flax version for a concrete array;
    on flax >= 0.12 it writes into the existing array, which an abstract model
    (``nnx.eval_shape``) does not have, so loading weights needs this.
    """
    if hasattr(type(variable), "set_value"):  # flax >= 0.12
        variable.set_value(value)
    else:
        variable.value = value


def to_varying(x: Any, axis_name: str) -> Any:
    """Inside ``jax.shard_map``: mark ``x`` as differing per device along ``axis_name``.

    ``jax.lax.pcast(x, axis, to="varying")`` on newer jax; ``jax.lax.pvary`` (its
    name until jax 0.8, removed in 0.10) on jax 0.7. Gradients with respect to a
    value so marked stay per device; with respect to an unmarked replicated
    value they come back already summed over the axis.
    """
    import jax

    pcast = getattr(jax.lax, "pcast", None)
    if pcast is not None:
        return pcast(x, axis_name, to="varying")
    return jax.lax.pvary(x, axis_name)  # jax 0.7


def eval_view(module: Any) -> Any:
    """An evaluation-mode NNX module sharing ``module``'s arrays; ``module`` keeps its mode.

    ``nnx.view(module, deterministic=True, use_running_average=True,
    raise_if_not_found=False)`` on flax 0.12.4 and newer (without the last argument
    it raises on a module that lacks Dropout or BatchNorm); on older flax (0.11 to 0.12.3),
    which has no ``nnx.view``, a module merged from
    ``nnx.split(module)`` (the same arrays in new variables), switched with ``.eval()``.
    """
    from flax import nnx

    view = getattr(nnx, "view", None)
    if view is not None:
        return view(
            module,
            deterministic=True,
            use_running_average=True,
            raise_if_not_found=False,
        )
    copy = nnx.merge(*nnx.split(module))  # flax < 0.12.4
    copy.eval()
    return copy


def cost_flops(compiled: Any) -> float:
    """The FLOPs XLA's cost analysis counts for a compiled function (``jit(f).lower(...).compile()``).

    ``cost_analysis()`` returns a dict on current jax and a list holding one dict
    per program on older releases; a missing ``"flops"`` entry counts as 0.
    """
    costs = compiled.cost_analysis()
    if isinstance(costs, dict):
        costs = [costs]
    return float(sum((c or {}).get("flops", 0.0) for c in costs or ()))
