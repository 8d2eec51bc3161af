"""What every benchmark runs inside: its :class:`Ctx`, matched precision, and ratio helpers.

A benchmark is a function ``Ctx -> Measured``. :class:`Ctx` gives it the sizes
(``(full, smoke)`` pairs), the timing target and the device kind, and puts
arrays on that kind in either framework. :func:`matched_precision` runs float32
matmuls at full precision in both frameworks (the course's
``env.set_precision("float32")``, no TF32 on CUDA) and restores what was set
before. :func:`compare_ratios` turns ``timing.compare``'s interleaved rounds
into the per-round ratios a verdict is judged from, and :func:`paired` builds
a benchmark's :class:`~course_utils.claims.verdict_rule.Measured` from a
``timing.compare`` result for one of the claim's registered pairings.
:func:`require_cuda` refuses a claim measured on a CUDA GPU only anywhere else.
jax and torch are imported only when a benchmark runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from course_utils.claims import registry
from course_utils.claims.devices import DeviceTarget
from course_utils.claims.verdict_rule import Measured, NotTestable, paired_ratios

DTYPE = "float32"
PRECISION = "float32"  # the course's name for it (course_utils.env.PRECISIONS)


class Ctx:
    """Sizes, timing targets and the device kind for one measurement."""

    def __init__(self, smoke: bool, target: DeviceTarget | None = None) -> None:
        self.smoke = smoke
        self.target_s = 0.2 if smoke else 1.0
        self.target = target or DeviceTarget("cpu")

    def size(self, full: Any, smoke: Any) -> Any:
        return smoke if self.smoke else full

    @property
    def jax_device(self) -> Any:
        """JAX's device of the target's kind (the CPU for a PyTorch-only target)."""
        import jax

        return jax.devices(self.target.kind if self.target.jax else "cpu")[0]

    @property
    def torch_device(self) -> Any:
        import torch

        return torch.device(self.target.torch or "cpu")

    def jax_put(self, x: Any) -> Any:
        import jax

        return jax.device_put(x, self.jax_device)

    def torch_put(self, x: Any) -> Any:
        import torch

        t = x if isinstance(x, torch.Tensor) else torch.from_numpy(np.asarray(x))
        return t.to(self.torch_device)


@contextlib.contextmanager
def matched_precision(torch_cuda: bool = False) -> Iterator[dict[str, Any]]:
    """Full float32 matmuls in both frameworks, via ``env.set_precision``; restored on exit.

    JAX ``highest`` (its default is TF32 on recent NVIDIA GPUs and bfloat16
    passes on TPU); PyTorch ``highest`` matmuls (so no TF32 in CUDA matmuls) and
    no TF32 in cuDNN convolutions. Yields what is in force, for the record: the
    matmul precisions, and on CUDA both TF32 switches. What was set before comes
    back through ``env.restore_precision``: ``env`` alone writes these flags.
    """
    import jax
    import torch

    from course_utils import env

    cuda, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
    saved = env.precision_flags()
    try:
        env.set_precision(PRECISION)
        record: dict[str, Any] = {
            "jax_matmul": jax.config.jax_default_matmul_precision,
            "torch_matmul": torch.get_float32_matmul_precision(),
        }
        if torch_cuda:
            record["torch_cuda_tf32"] = cuda.allow_tf32
            record["torch_cudnn_tf32"] = cudnn.allow_tf32
        yield record
    finally:
        env.restore_precision(saved)


def compare_ratios(cmp: Any, numerator: str, denominator: str) -> list[float]:
    """Per-round ratios of two variants of a ``timing.compare`` result."""
    return paired_ratios(
        cmp.measurements[numerator].times, cmp.measurements[denominator].times
    )


def medians(cmp: Any) -> dict[str, float]:
    """Each variant's median seconds in a ``timing.compare`` result."""
    return {name: m.median for name, m in cmp.measurements.items()}


def pairing_names(claim_id: str, pairing_id: str) -> tuple[str, str]:
    """The registered pairing's two variants, ``(numerator, denominator)``: name them so."""
    p = registry.get(claim_id).pairing(pairing_id)
    return p.numerator, p.denominator


def paired(
    cmp: Any,
    claim_id: str,
    pairing_id: str,
    what: str,
    details: dict[str, Any] | None = None,
    *,
    names: tuple[str, str] | None = None,
) -> Measured:
    """A benchmark's result from a ``timing.compare`` of one registered pairing.

    The compared variants carry the pairing's names (:func:`pairing_names`);
    the samples are the per-round ratios ``names[0] / names[1]``, by default
    the pairing's numerator over its denominator; give ``names`` in the other
    order where the claim's ratio divides them the other way. ``details`` gain
    each variant's median and first call; the comparison's contention record
    comes along, for the verdict.
    """
    registered = pairing_names(claim_id, pairing_id)
    names = names or registered
    if sorted(names) != sorted(registered):
        raise ValueError(
            f"paired: {claim_id!r} pairing {pairing_id!r} compares {registered}, "
            f"not {names}"
        )
    firsts = {name: m.first_call_s for name, m in cmp.measurements.items()}
    return Measured(
        compare_ratios(cmp, *names),
        what,
        {"median_s": medians(cmp), "first_call_s": firsts, **(details or {})},
        contention=cmp.contention,
        pairing=pairing_id,
        names=names,
    )


def require_cuda(ctx: Ctx, claim_id: str, *, both: bool = False) -> None:
    """NotTestable unless PyTorch (and, with ``both``, JAX) runs on a CUDA GPU here."""
    t = ctx.target
    if t.kind != "gpu" or t.torch != "cuda" or (both and not t.jax):
        with_both = ", with both frameworks on it" if both else ""
        raise NotTestable(
            f"measured on a CUDA GPU only{with_both}: {registry.ONLY_ON[claim_id][1]}"
        )
